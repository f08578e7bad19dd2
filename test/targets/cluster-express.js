'use strict';
// For test/http-wire-cluster.test.js: an Express app, unprepared (no hook),
// under node's cluster module: the primary forks 2 workers that share one
// server on loopback (HTTPS with `--tls KEY CERT`). Routes:
//   GET /fast/:n   200 at once
//   GET /slow/:n   200 after SLOW_MS
//   POST /items    201
//   anything else  404 (Express's own final handler)
// Prints "ready PRIMARY PORT WORKER WORKER" once both listen. A line
// "client N" on stdin makes the primary send N requests, each on a new
// connection (so the primary deals them out to the workers), then each
// worker reports what it served, as the app measured it, one JSON line:
// {"worker": PID, "served": {"GET /fast 200": COUNT, ...}, "slowMs": [...],
// "sentMs": [...]} (a /slow request timed from Express's first middleware,
// in the tick that read it, to its call of res.send(), and to its return:
// the response is written in between), then
// "client done". A line "respawn" kills worker 1 (SIGKILL) and, as an app
// keeps its workers up, the primary forks another in its place; once that
// one listens it prints "respawned OLD NEW" (their PIDs).
const cluster = require('cluster');
const fs = require('fs');
const http = require('http');
const https = require('https');
const readline = require('readline');

const WORKERS = 2;
const SLOW_MS = 100;
const tls = process.argv[2] === '--tls' ? { key: fs.readFileSync(process.argv[3]), cert: fs.readFileSync(process.argv[4]) } : null;
const lib = tls ? https : http;

if (cluster.isPrimary) {
  const listening = new Map();
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  let port = 0;
  cluster.on('listening', (worker, address) => {
    listening.set(worker.id, worker.process.pid);
    port = address.port;
    if (listening.size === WORKERS) console.log(`ready ${process.pid} ${port} ${[...listening.values()].join(' ')}`);
  });
  // A worker that dies is replaced, as apps under cluster do.
  cluster.on('exit', () => cluster.fork());
  const respawn = () => {
    const old = cluster.workers[Math.min(...Object.keys(cluster.workers).map(Number))];
    cluster.once('listening', (worker) => console.log(`respawned ${old.process.pid} ${worker.process.pid}`));
    old.process.kill('SIGKILL');
  };
  const request = (method, path) => new Promise((resolve) => {
    const agent = new lib.Agent({ keepAlive: false });
    const headers = method === 'POST' ? { 'content-type': 'application/json' } : {};
    const req = lib.request({ host: '127.0.0.1', port, method, path, headers, agent, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => { agent.destroy(); resolve(); });
    });
    req.on('error', () => { agent.destroy(); resolve(); });
    req.end(method === 'POST' ? '{"n":1}' : undefined);
  });
  const reports = () => Promise.all(Object.values(cluster.workers).map((w) => new Promise((resolve) => {
    w.once('message', (m) => resolve(m));
    w.send('report');
  })));
  readline.createInterface({ input: process.stdin }).on('line', async (line) => {
    if (line === 'respawn') { respawn(); return; }
    const m = /^client (\d+)$/.exec(line);
    if (!m) return;
    for (let i = 1; i <= Number(m[1]); i++) {
      const kind = i % 4;
      if (kind === 0) await request('GET', `/slow/${i}`);
      else if (kind === 1) await request('GET', `/fast/${i}`);
      else if (kind === 2) await request('POST', '/items');
      else await request('GET', `/missing/${i}`);
    }
    // A response's 'finish' (where a worker counts it) comes after its
    // client has read it: a moment for the last one's.
    await new Promise((r) => setTimeout(r, 300));
    for (const r of await reports()) console.log(JSON.stringify(r));
    console.log('client done');
  });
} else {
  const express = require('express');
  const app = express();
  const served = {};
  const slowMs = [];
  const sentMs = [];
  app.use((req, res, next) => {
    req.startedAt = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route ? req.route.path.replace(/\/:n$/, '') : '(none)';
      const key = `${req.method} ${route} ${res.statusCode}`;
      served[key] = (served[key] || 0) + 1;
    });
    next();
  });
  app.get('/fast/:n', (req, res) => res.send('ok'));
  // Timed to just before res.send(): its write wakes the client, and on a
  // busy machine the worker may then wait for a CPU before it could read
  // the clock again (measured: 0.8 ms at load 10 on 2 cores).
  // Both ends kept: the write lies between them.
  app.get('/slow/:n', (req, res) => setTimeout(() => {
    slowMs.push(Number(process.hrtime.bigint() - req.startedAt) / 1e6);
    res.send('ok');
    sentMs.push(Number(process.hrtime.bigint() - req.startedAt) / 1e6);
  }, SLOW_MS));
  app.post('/items', express.json(), (req, res) => res.status(201).json({ n: req.body.n }));
  process.on('message', (m) => { if (m === 'report') process.send({ worker: process.pid, served, slowMs, sentMs }); });
  (tls ? https.createServer(tls, app) : http.createServer(app)).listen(0, '127.0.0.1');
}
