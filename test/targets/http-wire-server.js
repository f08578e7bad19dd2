'use strict';
// For test/http-wire.test.js: an unprepared HTTP server (no hook, no flag)
// on loopback with routes of known delay, and a client of its own that
// makes requests on a line on stdin:
//   GET /fast*      answered at once, 200
//   GET /slow*      answered after 150 ms, 200
//   GET /mid*       answered after 50 ms, 200
//   GET /missing*   404
// Prints "ready PID PORT" (with --tls: below). A line "client N" on stdin makes N keep-alive
// http.get requests from this process to itself (/fast/c1...) and prints
// what the client measured, one JSON line each, then "client done". A line
// "closing" starts requests asking the server to close each connection
// (Connection: close, a new connection each), one after another, until a
// line "stop"; then it prints {"closing": N, "statuses": {STATUS: COUNT}}
// and "closing done".
// With `--tls KEY CERT` (files): HTTPS, and its client https.get (the
// certificate not checked: the test makes a self-signed one). With
// `--express`: the same routes in an Express app (express from npm), whose
// own final handler answers what no route takes (/missing*: 404).
// In a container (no stdin, no files of the test's): the key and
// certificate from TLS_KEY_PEM and TLS_CERT_PEM, and SIGUSR2 runs the client
// for CLIENT_ON_SIGNAL requests.
const fs = require('fs');
const http = require('http');
const https = require('https');

const tls = process.argv[2] === '--tls' ? { key: fs.readFileSync(process.argv[3]), cert: fs.readFileSync(process.argv[4]) }
  : process.env.TLS_KEY_PEM ? { key: process.env.TLS_KEY_PEM, cert: process.env.TLS_CERT_PEM } : null;
const lib = tls ? https : http;

const SLOW_MS = 150;
const MID_MS = 50;

const handler = (req, res) => {
  req.resume();
  if (req.url.startsWith('/missing')) { res.statusCode = 404; res.end('no'); return; }
  const delay = req.url.startsWith('/slow') ? SLOW_MS : req.url.startsWith('/mid') ? MID_MS : 0;
  setTimeout(() => res.end('ok'), delay);
};

function expressApp() {
  const app = require('express')();
  app.get('/fast/:name', (req, res) => res.send('ok'));
  app.get('/slow/:name', (req, res) => setTimeout(() => res.send('ok'), SLOW_MS));
  app.get('/mid/:name', (req, res) => setTimeout(() => res.send('ok'), MID_MS));
  app.get('/p1', (req, res) => res.send('ok'));
  app.get('/split/:name', (req, res) => res.send('ok'));
  // A body read by Express's own parser: its bytes counted, never copied.
  app.post('/items', require('express').json(), (req, res) => res.status(201).json({ n: req.body.n }));
  // A body taken whole, whatever it holds, then answered.
  app.post('/upload', (req, res) => { req.resume(); req.on('end', () => res.status(201).send('ok')); });
  return app;
}

const server = tls ? https.createServer(tls, handler)
  : http.createServer(process.argv[2] === '--express' ? expressApp() : handler);

function get(agent, port, path) {
  return new Promise((resolve) => {
    const t = process.hrtime.bigint();
    lib.get({ host: '127.0.0.1', port, path, agent, rejectUnauthorized: false }, (res) => {
      const out = { via: 'http.get', method: 'GET', path, status: res.statusCode, ms: Number(process.hrtime.bigint() - t) / 1e6 };
      res.resume();
      res.on('end', () => resolve(out));
    }).on('error', (err) => resolve({ via: 'http.get', method: 'GET', path, status: 0, error: err.code }));
  });
}

async function client(n) {
  const agent = new lib.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 1; i <= n; i++) {
    const path = i % 2 ? `/fast/c${i}` : `/slow/c${i}`;
    process.stdout.write(JSON.stringify(await get(agent, server.address().port, path)) + '\n');
  }
  agent.destroy();
  process.stdout.write('client done\n');
}

// Requests with Connection: close, one after another, until `closing.stop`.
const closing = { stop: false };
async function closeEach() {
  closing.stop = false;
  const statuses = {};
  let n = 0;
  while (!closing.stop) {
    const path = `/fast/close${++n}`;
    const status = await new Promise((resolve) => {
      lib.get({ host: '127.0.0.1', port: server.address().port, path, agent: false, headers: { connection: 'close' }, rejectUnauthorized: false },
        (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); }).on('error', (err) => resolve(err.code));
    });
    statuses[status] = (statuses[status] || 0) + 1;
  }
  process.stdout.write(JSON.stringify({ closing: n, statuses }) + '\nclosing done\n');
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  input += c;
  let i;
  while ((i = input.indexOf('\n')) >= 0) {
    const line = input.slice(0, i);
    input = input.slice(i + 1);
    const m = /^client (\d{1,3})$/.exec(line);
    if (m) client(Number(m[1]));
    else if (line === 'closing') closeEach();
    else if (line === 'stop') closing.stop = true;
  }
});

if (process.env.CLIENT_ON_SIGNAL) process.on('SIGUSR2', () => client(Number(process.env.CLIENT_ON_SIGNAL)));

server.keepAliveTimeout = 30000;
// With --tls, a plain server beside it (the same routes), so that one
// process, traced once, serves both: "ready PID PORT PLAIN_PORT".
const plain = tls ? http.createServer(handler) : null;
server.listen(0, '127.0.0.1', () => {
  if (!plain) { process.stdout.write(`ready ${process.pid} ${server.address().port}\n`); return; }
  plain.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${process.pid} ${server.address().port} ${plain.address().port}\n`));
});
