'use strict';
// For test/http-wire.test.js (and test/fixtures/bpftrace-http-wire-attacks.out):
// a remote client that tries to fool a trace off the wire (issue 35, 6 and
// 7), by raw sockets to PORT (with --tls, over TLS, the certificate not
// checked), each attack on its own connection, its body written 100 ms
// after its head (so that the server reads it in a call of its own):
//   long-head   POST /fast/upload, its head longer than the bytes a trace
//               copies of a call (so its Content-Length is past them), its
//               body a request line and head (GET /admin/delete-all); then
//               GET /fast/after on the same connection;
//   early       POST /fast/early, answered before its body is read, the same
//               body; then GET /slow/report (answered after 150 ms);
//   body-101    POST /fast/a whose body is a 101 Switching Protocols head;
//               then GET /fast/later1 and /missing/later2;
//   body-h2     POST /fast/b whose body is HTTP/2's connection preface; then
//               GET /fast/later3 and /missing/later4;
//   huge-head   POST /fast/huge, its head longer than a trace copies of any
//               head (2,500 bytes of one header), the same forged body; then
//               GET /fast/after-huge: a connection a trace cannot follow.
// Prints one JSON line per request sent, as the server answered it (method,
// path, status, and ms from its head's write to its answer's first byte),
// then "done".
// Usage: node http-wire-attacks.js PORT [--tls]
const net = require('net');
const tls = require('tls');
const { takeAnswer } = require('./raw-http');

const port = Number(process.argv[2]);
const secure = process.argv[3] === '--tls';
const PAUSE_MS = 100;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const FORGED = 'GET /admin/delete-all HTTP/1.1\r\nHost: x\r\n\r\n';
const UPGRADE = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
const get = (path) => ({ method: 'GET', path, text: `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n` });
const post = (path, body, extra = '') => [
  { method: 'POST', path, text: `POST ${path} HTTP/1.1\r\nHost: x\r\n${extra}Content-Length: ${body.length}\r\n\r\n` },
  { text: body },
];

const ATTACKS = {
  'long-head': [...post('/fast/upload', FORGED, `X-Pad: ${'a'.repeat(250)}\r\n`), get('/fast/after')],
  early: [...post('/fast/early', FORGED), get('/slow/report')],
  'body-101': [...post('/fast/a', UPGRADE), get('/fast/later1'), get('/missing/later2')],
  'body-h2': [...post('/fast/b', PREFACE), get('/fast/later3'), get('/missing/later4')],
  'huge-head': [...post('/fast/huge', FORGED, `X-Pad: ${'a'.repeat(2500)}\r\n`), get('/fast/after-huge')],
};

// One connection: its parts written PAUSE_MS apart; the answers read as they
// come (each a head with a Content-Length, as the target's are).
async function attack(name, parts) {
  const s = secure ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : net.connect(port, '127.0.0.1');
  await new Promise((resolve) => s.on(secure ? 'secureConnect' : 'connect', resolve));
  const sent = [];   // { method, path, t }: the requests, in order
  const out = [];
  let buf = '';
  s.on('data', (d) => {
    buf += d.toString('latin1');
    for (let answer = takeAnswer(buf); answer; answer = takeAnswer(buf)) {
      const r = sent[out.length];
      out.push({ attack: name, method: r.method, path: r.path, status: answer.status,
        ms: Number(process.hrtime.bigint() - r.t) / 1e6 });
      buf = answer.rest;
    }
  });
  const closed = new Promise((resolve) => s.on('close', resolve));
  for (const [i, part] of parts.entries()) {
    if (i) await sleep(PAUSE_MS);
    if (part.method) sent.push({ method: part.method, path: part.path, t: process.hrtime.bigint() });
    s.write(part.text);
  }
  // The last answer (/slow is 150 ms; 10 s at most), then the connection closed.
  const until = Date.now() + 10000;
  while (out.length < sent.length && Date.now() < until) await sleep(20);
  s.end();
  await closed;
  return out;
}

(async () => {
  for (const [name, parts] of Object.entries(ATTACKS)) {
    for (const r of await attack(name, parts)) process.stdout.write(JSON.stringify(r) + '\n');
  }
  process.stdout.write('done\n');
})();
