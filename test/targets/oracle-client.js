'use strict';
// The client of test/targets/oracle-app.js, forked by it (argv: the
// Express port, the Fastify port): each "burst" message from the app makes
// one burst of requests to both apps and answers "done" once every
// response has ended. Express is reached through a keep-alive agent,
// Fastify with a new connection each request (Connection: close), so that
// both ends of a connection's life are in every trace. The agent is made
// for each burst and destroyed at its end: the wire reads a connection
// from its start only, and an agent kept across bursts carried sockets
// opened before the trace into it on a quiet machine (the server keeps
// them 5 s; 396 of 792 requests traced, all of Express's missing). A burst: on each
// app, 3 GET /fast, 3 GET /mid, and one each of /io, /task, /alloc, /fail
// and /missing (a 404) at once; then GET /spin on Express, and once it has
// ended on Fastify (one loop stall each, never two in one turn).
const http = require('http');

const [expressPort, fastifyPort] = process.argv.slice(2).map(Number);

function get(port, path, agent) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', resolve);
  });
}

const AT_ONCE = [['/fast', 3], ['/mid', 3], ['/io', 1], ['/task', 1], ['/alloc', 1], ['/fail', 1], ['/missing', 1]];

async function burst() {
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const APPS = [[expressPort, keepAlive], [fastifyPort, false]];
  const all = [];
  for (const [port, agent] of APPS) {
    for (const [path, n] of AT_ONCE) for (let i = 0; i < n; i++) all.push(get(port, path, agent));
  }
  await Promise.all(all);
  for (const [port, agent] of APPS) await get(port, '/spin', agent);
  keepAlive.destroy();
}

process.on('message', (m) => {
  if (m === 'burst') burst().then(() => process.send('done'));
});
process.on('disconnect', () => process.exit(0));
