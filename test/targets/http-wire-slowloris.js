'use strict';
// For test/http-wire.test.js: a remote client that holds many connections
// with heads never finished (a slowloris), by raw sockets to PORT on
// 127.0.0.1: OPEN connections, each sent a request line and one header,
// then one more header on each every second, ROUNDS times; then REQUESTS
// requests, each on a connection of its own, one after another (/slow/after-0,
// then /fast/after-N). Issue 35 kept this as held: 5,000 such sockets, the
// trace at 163 MB, the later requests still seen.
// Prints one JSON line per request, as the server answered it (method,
// path, status, and ms from its write to its whole answer), then "done".
// Usage: node http-wire-slowloris.js PORT [OPEN [REQUESTS [ROUNDS]]]
const { connect, getWhole } = require('./raw-http');

const port = Number(process.argv[2]);
const OPEN = Number(process.argv[3] || 5000);
const REQUESTS = Number(process.argv[4] || 10);
const ROUNDS = Number(process.argv[5] || 3);
// Connections being opened at once.
const AT_ONCE = 100;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One request on a new connection, its answer read whole.
async function request(path) {
  const s = await connect(port);
  try {
    const { status, ms } = await getWhole(s, path);
    return { method: 'GET', path, status, ms };
  } finally {
    s.destroy();
  }
}

(async () => {
  const held = [];
  for (let i = 0; i < OPEN; i += AT_ONCE) {
    const batch = await Promise.all(Array.from({ length: Math.min(AT_ONCE, OPEN - i) }, () => connect(port)));
    for (const [j, s] of batch.entries()) {
      s.on('error', () => {});
      s.write(`GET /slowloris-${i + j} HTTP/1.1\r\nHost: x\r\n`);
      held.push(s);
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    await sleep(1000);
    for (const s of held) s.write(`X-Slow-${round}: ${'a'.repeat(16)}\r\n`);
  }
  for (let i = 0; i < REQUESTS; i++) {
    process.stdout.write(JSON.stringify(await request(i === 0 ? '/slow/after-0' : `/fast/after-${i}`)) + '\n');
  }
  for (const s of held) s.destroy();
  process.stdout.write('done\n');
})().catch((err) => { process.stderr.write(`${err.message}\n`); process.exit(1); });
