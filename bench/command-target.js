'use strict';
// A bench workload every tracing command has something to report on: an
// HTTP server on loopback answering its own keep-alive client (http; a new
// connection every 20 requests), fs.stat
// and crypto.pbkdf2 on libuv's pool (latency, async), young garbage
// (gc) and a short busy-wait each turn (loop, profile). Paced, about a
// quarter of a core: busy, not saturating a 2-core machine.
// Prints "ready PID".
const fs = require('fs');
const http = require('http');
const crypto = require('crypto');

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const server = http.createServer((req, res) => res.end('ok'));
// A fresh connection every 20 requests (the server closes the one it is
// on): `http -p` off the wire follows connections opened while it traces
// only (where a message starts inside one opened before cannot be known),
// so a single keep-alive connection left it nothing to report.
server.maxRequestsPerSocket = 20;

function spin(ms) {
  const until = Date.now() + ms;
  let x = 0;
  while (Date.now() < until) x++;
  return x;
}

function pool() {
  fs.stat(__filename, () => crypto.pbkdf2('secret', 'salt', 200, 32, 'sha256', () => setTimeout(pool, 5)));
}

server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}/bench`;
  // A request that fails (a connection closed as it was reused) is sent again, not the end of the workload.
  const get = () => http.get(url, { agent }, (res) => { res.resume(); res.on('end', () => setTimeout(get, 10)); })
    .on('error', () => setTimeout(get, 10));
  get();
  pool();
  setInterval(() => {
    for (let i = 0; i < 10000; i++) ({ i, s: 'x' + i });
    spin(1);
  }, 20);
  console.log('ready ' + process.pid);
});
