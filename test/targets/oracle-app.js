'use strict';
// A real app from npm, which measures itself: the truth test/oracle.test.js
// holds each command's figures to. An Express app and a Fastify app on
// loopback, a piscina pool of 2 worker threads, and their client
// (oracle-client.js, forked), which sends a burst of requests when the app
// says so. Routes, on both apps:
//   /fast   a small JSON answer
//   /mid    answered 50 ms later (a timer)
//   /io     one fs.stat, zlib.gzip, crypto.pbkdf2 and dns.lookup each: 4
//           operations of libuv's pool
//   /task   poolCrunch (oracle-task.js) run in the piscina pool
//   /alloc  20,000 young objects, half of them kept in a cache dropped
//           at 200,000 (scavenges, marking, mark-compacts)
//   /spin   mainCrunch on the loop, some tens of ms (a stall)
//   /fail   a 500; and any other path the framework's own 404
// Prints "ready PID" once both listen and two bursts have warmed it up;
// then it idles. SIGUSR2 opens its window, of WINDOW_MS: from FIRST_MS
// (150) after, bursts one after another, GAP_MS (100) apart, none started
// in the last GUARD_MS (1500) of the window, or twice the longest burst
// yet if more (a burst took 1.4-2.2 s at load 15), nor in the first
// RESUME_MS (150) after it, then on again: nothing the app does falls near the
// window's edges (the signal may come 100 ms late on a loaded host), and
// work goes on past the end (a trace that counts after the end asked for
// counts it).
// Over [SIGUSR2, SIGUSR2 + WINDOW_MS) it measures, with its own instruments:
//   requests   each response's app, route, status, and its times in ms
//              from the server's 'request' event: to the call of res.end()
//              (`ending_ms`: the response not yet written), to its return
//              (`sent_ms`: written), and to res.on('finish') (`ms`); `at`,
//              when it finished (epoch ms); `gc_before_ms`, the GC pauses
//              that ran back to back up to its 'request' event (gcBefore);
//              counted by when they finished
//   pool       the pool operations it started, by kind (fs, zlib, crypto, dns)
//   gc         PerformanceObserver 'gc' entries that started in the
//              window: count, total and longest duration (ms) by kind
//   elu        performance.eventLoopUtilization()'s active ms over it
//   cpu_ms     process.cpuUsage() over it (user + system), and
//   threads_cpu_ms  each thread's, by TID (/proc/self/task/TID/schedstat)
//   stalls     each /spin's mainCrunch: [ms by hrtime around it, when it
//              ended (epoch ms)]
//   main_crunch_cpu_ms  the CPU the main thread spent in them (its
//              schedstat before and after), and pool_crunch_cpu_ms, each
//              pool thread's in poolCrunch (by threadId, as it measured)
//   async      with ORACLE_ASYNC_HOOK=1, async_hooks init counts by type
//              (the main thread's; the pool's threads do no asynchronous
//              work of their own)
//   bursts     each burst begun in the window: [start, end] in ms from its
//              start (end null: not done when it printed)
//   window     its start and end in CLOCK_MONOTONIC µs (process.hrtime,
//              the clock V8's profiler stamps --cpu-prof samples with),
//              and the pool threads' threadIds
// and PRINT_MS (500) after the end prints "oracle JSON". SIGTERM ends
// it: the pool destroyed, then process.exit(), so that --cpu-prof writes
// its profiles (one for the main thread, one per Worker).
// (monitorEventLoopDelay() is left out: its timer wakes the loop every
// resolution ms, turns a trace of the loop would count as the app's.)
const path = require('path');
const fs = require('fs');
const dns = require('dns');
const zlib = require('zlib');
const crypto = require('crypto');
const { fork } = require('child_process');
const { performance, PerformanceObserver, constants } = require('perf_hooks');

const WINDOW_MS = Number(process.env.WINDOW_MS || 5000);
const SPIN_ROUNDS = Number(process.env.SPIN_ROUNDS || 1e6);
const TASK_ROUNDS = Number(process.env.TASK_ROUNDS || 2e6);
const FIRST_MS = 150;
const GAP_MS = 100;
const GUARD_MS = 1500;
const RESUME_MS = 150;
const PRINT_MS = 500;

const now = () => process.hrtime.bigint();
let opened = null;   // hrtime ns of SIGUSR2
let closes = null;   // opened + WINDOW_MS
const inWindow = (t) => opened !== null && t >= opened && t < closes;

const report = {
  requests: [], pool: { fs: 0, zlib: 0, crypto: 0, dns: 0 }, gc: {}, stalls: [], async: null, bursts: [],
  main_crunch_cpu_ms: 0, pool_crunch_cpu_ms: {},
};

if (process.env.ORACLE_ASYNC_HOOK === '1') {
  report.async = {};
  require('async_hooks').createHook({
    init(id, type) {
      if (inWindow(now())) report.async[type] = (report.async[type] || 0) + 1;
    },
  }).enable();
}

// The window in performance.now()'s ms, for the gc entries' startTime.
let openedPerf = null;
const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
// Every GC pause from a second before the window on, [start, end] in
// performance.now() ms: what delayed a request's 'request' event (below).
const gcSpans = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (openedPerf !== null && e.startTime >= openedPerf - 1000) gcSpans.push([e.startTime, e.startTime + e.duration]);
    if (openedPerf === null || e.startTime < openedPerf || e.startTime >= openedPerf + WINDOW_MS) continue;
    const kind = GC_KINDS[(e.detail || e).kind] || String((e.detail || e).kind);
    const k = report.gc[kind] || (report.gc[kind] = { count: 0, ms: 0, max_ms: 0 });
    k.count++;
    k.ms += e.duration;
    k.max_ms = Math.max(k.max_ms, e.duration);
  }
}).observe({ entryTypes: ['gc'] });

// Each thread's CPU time so far, by TID: the kernel's sum_exec_runtime
// (ns), what the first field of /proc/self/task/TID/schedstat says.
function threadsCpuNs() {
  const out = {};
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try { out[tid] = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]); } catch { /* exited */ }
  }
  return out;
}

function pool(kind) {
  if (inWindow(now())) report.pool[kind]++;
}

function mainCrunch(rounds) {
  let s = rounds;
  for (let i = 0; i < rounds; i++) s = (s * 31 + i) % 1000003;
  return s;
}

function threadCpuMs() {
  return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
}

function spin() {
  const cpu = threadCpuMs();
  const t = now();
  const s = mainCrunch(SPIN_ROUNDS);
  const end = now();
  if (inWindow(end)) {
    report.stalls.push([Number(end - t) / 1e6, performance.timeOrigin + performance.now()]);
    report.main_crunch_cpu_ms += threadCpuMs() - cpu;
  }
  return s;
}

// Young objects that die at once (scavenges), and a cache that grows into
// the old generation and is dropped now and then (marking, mark-compacts).
let cache = [];
function alloc() {
  let kept = 0;
  for (let i = 0; i < 20000; i++) {
    const o = { i, s: 'x' + i, a: [i, i + 1, i + 2] };
    kept += o.a.length;
    if (i % 2 === 0) cache.push(o);
  }
  if (cache.length > 200000) cache = [];
  return kept;
}

const payload = Buffer.alloc(1024, 'oracle ');
function io(done) {
  let left = 4;
  const one = (err) => { if (err) throw err; if (--left === 0) done(); };
  pool('fs'); fs.stat(__filename, one);
  pool('zlib'); zlib.gzip(payload, one);
  pool('crypto'); crypto.pbkdf2('secret', 'salt', 1000, 32, 'sha256', one);
  pool('dns'); dns.lookup('localhost', one);
}

const { Piscina } = require('piscina');
const piscina = new Piscina({ filename: path.join(__dirname, 'oracle-task.js'), minThreads: 2, maxThreads: 2, idleTimeout: 3600000 });
const task = () => piscina.run({ rounds: TASK_ROUNDS }).then(({ s, threadId, cpuMs, endedAt }) => {
  if (inWindow(endedAt)) report.pool_crunch_cpu_ms[threadId] = (report.pool_crunch_cpu_ms[threadId] || 0) + cpuMs;
  return s;
});

// Each server's own timing of each response, from its 'request' event
// (before the app's handler): to res.on('finish') (`ms`), and to the
// return of the res.end() that wrote it (`sent_ms`): 'finish' comes from
// the write's callback, a turn of the loop later, after whatever else that
// turn runs (in a burst, the other requests' handlers).
// The GC pauses that ran back to back up to a request's 'request' event
// (ms): the one that ended within 1 ms before it, and the one that ended
// within 1 ms before that one's start, ... A pause there held up the
// parse of the request's bytes, read before it began (llhttp consumes the
// socket in C++; JavaScript first runs at the event).
// `latestFirst`: the spans, latest end first.
function gcBefore(at, latestFirst) {
  let ms = 0;
  let cursor = at;
  for (const [start, end] of latestFirst) {
    if (end > at || end < cursor - 1) continue;
    ms += end - start;
    cursor = start;
  }
  return ms;
}

function timed(server, app) {
  server.prependListener('request', (req, res) => {
    const t = now();
    const perfAt = performance.now();
    let ending = null;
    let sent = null;
    const end = res.end;
    res.end = function (...args) {
      if (ending === null) ending = now();
      const r = end.apply(this, args);
      if (sent === null) sent = now();
      return r;
    };
    res.on('finish', () => {
      const done = now();
      if (inWindow(done)) report.requests.push({ app, route: req.url, status: res.statusCode,
        ms: Number(done - t) / 1e6, ending_ms: Number((ending || done) - t) / 1e6,
        sent_ms: Number((sent || done) - t) / 1e6, at: performance.timeOrigin + performance.now(), perf_at: perfAt });
    });
  });
}

function expressApp() {
  const app = require('express')();
  app.get('/fast', (req, res) => res.json({ ok: true, at: Date.now() }));
  app.get('/mid', (req, res) => setTimeout(() => res.json({ ok: true }), 50));
  app.get('/io', (req, res) => io(() => res.json({ ok: true })));
  app.get('/task', (req, res, next) => task().then((s) => res.json({ s }), next));
  app.get('/alloc', (req, res) => res.json({ kept: alloc() }));
  app.get('/spin', (req, res) => res.json({ s: spin() }));
  app.get('/fail', (req, res) => res.status(500).json({ error: 'failed' }));
  return new Promise((resolve) => {
    const server = require('http').createServer(app);
    timed(server, 'express');
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function fastifyApp() {
  const app = require('fastify')({ logger: false });
  app.get('/fast', async () => ({ ok: true, at: Date.now() }));
  app.get('/mid', () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 50)));
  app.get('/io', () => new Promise((resolve) => io(() => resolve({ ok: true }))));
  app.get('/task', async () => ({ s: await task() }));
  app.get('/alloc', async () => ({ kept: alloc() }));
  app.get('/spin', async () => ({ s: spin() }));
  app.get('/fail', async (req, reply) => reply.code(500).send({ error: 'failed' }));
  timed(app.server, 'fastify');
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address().port;
}

async function main() {
  const ports = [await expressApp(), await fastifyApp()];
  const client = fork(path.join(__dirname, 'oracle-client.js'), ports.map(String), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let pending = null;
  client.on('message', () => { if (pending) { const p = pending; pending = null; p(); } });
  const burst = () => new Promise((resolve) => { pending = resolve; client.send('burst'); });
  await burst();
  await burst();

  let stopped = false;
  let timer = null;
  let longest = 0;   // ms, the longest burst in the window yet
  process.on('SIGUSR2', () => {
    if (opened !== null) return;
    opened = now();
    closes = opened + BigInt(WINDOW_MS) * 1000000n;
    openedPerf = performance.now();
    const elu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const threadsCpu = threadsCpuNs();
    const sinceOpened = () => Number(now() - opened) / 1e6;
    const next = () => {
      if (stopped) return;
      const at = sinceOpened();
      const guard = Math.max(GUARD_MS, 2 * longest);
      if (at >= WINDOW_MS - guard && at < WINDOW_MS + RESUME_MS) {
        timer = setTimeout(next, WINDOW_MS + RESUME_MS - at);
        return;
      }
      const span = [at, null];
      if (at < WINDOW_MS) report.bursts.push(span);
      burst().then(() => {
        span[1] = sinceOpened();
        longest = Math.max(longest, span[1] - span[0]);
        timer = setTimeout(next, GAP_MS);
      });
    };
    timer = setTimeout(next, FIRST_MS);
    setTimeout(() => {
      report.elu = performance.eventLoopUtilization(elu).active;
      const used = process.cpuUsage(cpu);
      report.cpu_ms = (used.user + used.system) / 1000;
      const after = threadsCpuNs();
      report.threads_cpu_ms = Object.fromEntries(Object.entries(after)
        .map(([tid, ns]) => [tid, (ns - (threadsCpu[tid] || 0)) / 1e6]));
    }, WINDOW_MS - sinceOpened());
    setTimeout(() => {
      report.window = {
        start_us: Number(opened / 1000n),
        end_us: Number(closes / 1000n),
        pool_thread_ids: piscina.threads.map((w) => w.threadId),
      };
      const latestFirst = [...gcSpans].sort((a, b) => b[1] - a[1]);
      for (const r of report.requests) {
        r.gc_before_ms = gcBefore(r.perf_at, latestFirst);
        delete r.perf_at;
      }
      process.stdout.write(`oracle ${JSON.stringify(report)}\n`);
    }, WINDOW_MS + PRINT_MS - sinceOpened());
  });
  // The burst under way, if any, is let finish (its task in the pool).
  process.on('SIGTERM', () => {
    stopped = true;
    clearTimeout(timer);
    const end = () => {
      if (pending) { setTimeout(end, 50); return; }
      client.disconnect();
      piscina.destroy().finally(() => process.exit(0));
    };
    end();
  });
  process.stdout.write(`ready ${process.pid}\n`);
}

main().catch((err) => { console.error(err); process.exit(1); });
