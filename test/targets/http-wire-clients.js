'use strict';
// For test/http-wire.test.js (and the capture test/fixtures/bpftrace-http-wire.out):
// requests no HTTP library would make, by raw sockets to PORT, one after
// another, each on its own connection (the last asks to close it):
//   three pipelined requests in one write: /p1, /slow/p2, /missing/p3
//   one request split across three writes 50 ms apart: /split/s1
//   a path holding a literal "\x0d\x0a" (text a tracer escapes that way)
// Prints "done" when the server has answered each.
// Usage: node http-wire-clients.js PORT
const net = require('net');

const port = Number(process.argv[2]);
const PAUSE_MS = 50;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function raw(chunks) {
  const s = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => s.on('connect', resolve));
  const closed = new Promise((resolve) => s.on('close', resolve));
  s.on('data', () => {});
  for (const [i, c] of chunks.entries()) {
    if (i) await sleep(PAUSE_MS);
    s.write(c);
  }
  await closed;
}

(async () => {
  await raw(['GET /p1 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/p2 HTTP/1.1\r\nHost: x\r\n\r\n'
    + 'GET /missing/p3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
  await raw(['GET /spl', 'it/s1 HTTP/1.1\r\nHo', 'st: x\r\nConnection: close\r\n\r\n']);
  await raw(['GET /fake\\x0d\\x0aHTTP/1.1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
  process.stdout.write('done\n');
})();
