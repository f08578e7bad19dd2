'use strict';
// For test/http.test.js: an HTTP server and its own client on loopback.
// After "ready PID PORT" it waits for a line on stdin, then makes a known
// set of requests (a bounded number) and prints what the client measured,
// one JSON line each, then "done":
//   GET /fast       http.get, answered at once
//   GET /slow       http.get, the server waits 150 ms
//   POST /slow      fetch, the server waits 150 ms
//   GET /missing    fetch, 404
//   GET /reset      http.get, the server destroys the connection
// Run with -r register.js.
const http = require('http');

const SLOW_MS = 150;

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/reset')) { req.socket.destroy(); return; }
  if (req.url.startsWith('/missing')) { res.statusCode = 404; res.end('no'); return; }
  const delay = req.url.startsWith('/slow') ? SLOW_MS : 0;
  req.resume();
  setTimeout(() => res.end('ok'), delay);
});

function viaHttp(base, method, path) {
  return new Promise((resolve) => {
    const t = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t) / 1e6;
    const req = http.request(base + path, { method }, (res) => {
      const out = { via: 'http', method, path, status: res.statusCode, ms: ms() };
      res.resume();
      res.on('end', () => resolve(out));
    });
    req.on('error', (err) => resolve({ via: 'http', method, path, status: 0, error: err.code, ms: ms() }));
    req.end();
  });
}

async function viaFetch(base, method, path) {
  const t = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - t) / 1e6;
  try {
    const res = await fetch(base + path, { method, body: method === 'POST' ? 'x' : undefined });
    const out = { via: 'fetch', method, path, status: res.status, ms: ms() };
    await res.text();
    return out;
  } catch (err) {
    return { via: 'fetch', method, path, status: 0, error: String(err.cause && err.cause.code), ms: ms() };
  }
}

async function run(base) {
  const plan = [[viaHttp, 'GET', '/fast'], [viaHttp, 'GET', '/slow'], [viaFetch, 'POST', '/slow'],
    [viaFetch, 'GET', '/missing'], [viaHttp, 'GET', '/reset']];
  for (const [how, method, path] of plan) process.stdout.write(JSON.stringify(await how(base, method, path)) + '\n');
  process.stdout.write('done\n');
}

server.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`ready ${process.pid} ${server.address().port}\n`);
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', () => { run(base); });
});
