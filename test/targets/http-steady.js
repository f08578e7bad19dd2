'use strict';
// An HTTP service and its own client on loopback, for the tests of
// `nodetrace http` beside a hostile user (test/hostile-usdt.test.js). Run
// with -r register.js (the hook fires the probes). Prints "ready PID", then
// on each line "go N" on stdin makes N requests (GET /checkout/<i>, one at a
// time, keep-alive) and prints "done N" once they have all completed: the
// truth a trace is held to. Extra arguments only name it (a test finds it
// by its command line).
const http = require('http');

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const server = http.createServer((req, res) => {
  req.resume();
  res.end('ok');
});

function get(base, path) {
  return new Promise((resolve) => {
    const req = http.get(base + path, { agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', resolve);
  });
}

server.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  let input = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', async (c) => {
    input += c;
    let i;
    while ((i = input.indexOf('\n')) >= 0) {
      const m = /^go (\d+)$/.exec(input.slice(0, i));
      input = input.slice(i + 1);
      if (!m) continue;
      const n = Number(m[1]);
      for (let k = 0; k < n; k++) await get(base, `/checkout/${k}`);
      process.stdout.write(`done ${n}\n`);
    }
  });
  process.stdout.write(`ready ${process.pid}\n`);
});
