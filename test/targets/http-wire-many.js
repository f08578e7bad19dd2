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
const { connect, getWhole } = require('./raw-http');

const port = Number(process.argv[2]);
const OPEN = Number(process.argv[3] || 1200);
const KEEP = Number(process.argv[4] || 10);

(async () => {
  const sockets = [];
  for (let i = 0; i < OPEN; i++) sockets.push(await connect(port));
  const asked = [];
  for (let i = 0; i < KEEP; i++) asked.push([i, i === 0 ? '/slow/kept-0' : `/fast/kept-${i}`]);
  for (let i = OPEN - KEEP; i < OPEN; i++) asked.push([i, `/fast/unkept-${i}`]);
  for (const [i, path] of asked) {
    const { status, ms } = await getWhole(sockets[i], path);
    process.stdout.write(JSON.stringify({ conn: i, method: 'GET', path, status, ms }) + '\n');
  }
  for (const s of sockets) s.destroy();
  process.stdout.write('done\n');
})().catch((err) => { process.stderr.write(`${err.message}\n`); process.exit(1); });
