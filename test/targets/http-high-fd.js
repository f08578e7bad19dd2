'use strict';
// For test/fixtures/dtrace-http-wire-high-fd.out: an unprepared HTTP server
// whose later sockets get descriptors past those http-wire.d follows
// (65,536, where the open-files limit allows; the capture lowers both).
// `node http-high-fd.js [FD]` prints "ready PID PORT". A line "fill" on
// stdin opens /dev/null until the last descriptor is FD (65,540) or more,
// prints "filled FD"; a line "client N" then makes N requests of its own to
// itself, each on a new connection (its socket and the accepted one both
// past the bound), and prints "client done".
const fs = require('fs');
const http = require('http');
const readline = require('readline');

const server = http.createServer((req, res) => res.end('ok\n'));
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(`ready ${process.pid} ${server.address().port}`));

const FILL_TO = Number(process.argv[2] || 65540);
const filler = [];
function fill() {
  for (;;) {
    const fd = fs.openSync('/dev/null', 'r');
    filler.push(fd);
    if (fd >= FILL_TO) return fd;
  }
}

function get(path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: server.address().port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', resolve);
    }).on('error', reject);
  });
}

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'fill') console.log(`filled ${fill()}`);
  const client = /^client (\d+)$/.exec(line);
  if (client) {
    for (let i = 1; i <= Number(client[1]); i++) await get(`/high/c${i}`);
    console.log('client done');
  }
});
