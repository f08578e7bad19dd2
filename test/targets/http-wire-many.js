'use strict';
// For test/http-wire.test.js: a remote client that opens more connections
// than a trace's map of connections holds (nodetrace http with a small
// NODETRACE_MAP_KEYS), by raw sockets to PORT on 127.0.0.1: OPEN
// connections, each connected before the next (so that the server accepts
// them in that order), all kept open and idle; then one request on each of
// the first KEEP (accepted while the map had room: /slow/kept-0, then
// /fast/kept-1...) and on each of the last KEEP (accepted once it was full:
// /fast/unkept-N), one connection after another.
// Prints one JSON line per request, as the server answered it (conn, method,
// path, status, and ms from its write to its whole answer), then "done".
// Usage: node http-wire-many.js PORT [OPEN [KEEP]]
const net = require('net');

const port = Number(process.argv[2]);
const OPEN = Number(process.argv[3] || 1200);
const KEEP = Number(process.argv[4] || 10);

function connect() {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

// One request on an open connection, its answer read whole (a head with a
// Content-Length, as the target's are).
function request(s, conn, path) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = process.hrtime.bigint();
    const timer = setTimeout(() => reject(new Error(`${path}: no answer in 10 s`)), 10000);
    const onData = (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number((/\r\ncontent-length: *(\d+)/i.exec(buf.slice(0, end + 2)) || [])[1] || 0);
      if (buf.length < end + 4 + length) return;
      clearTimeout(timer);
      s.off('data', onData);
      resolve({ conn, method: 'GET', path, status: Number(buf.slice(9, 12)), ms: Number(process.hrtime.bigint() - t) / 1e6 });
    };
    s.on('data', onData);
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

(async () => {
  const sockets = [];
  for (let i = 0; i < OPEN; i++) sockets.push(await connect());
  const asked = [];
  for (let i = 0; i < KEEP; i++) asked.push([i, i === 0 ? '/slow/kept-0' : `/fast/kept-${i}`]);
  for (let i = OPEN - KEEP; i < OPEN; i++) asked.push([i, `/fast/unkept-${i}`]);
  for (const [i, path] of asked) process.stdout.write(JSON.stringify(await request(sockets[i], i, path)) + '\n');
  for (const s of sockets) s.destroy();
  process.stdout.write('done\n');
})().catch((err) => { process.stderr.write(`${err.message}\n`); process.exit(1); });
