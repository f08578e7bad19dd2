'use strict';
// `nodetrace async` against test/targets/async-mix.js, held to what the
// target counted itself: for test/async.test.js (bpftrace, each Node build)
// and test/dtrace-linux.test.js (async.d).
const assert = require('assert');
const http = require('http');
const net = require('net');
const { spawn } = require('child_process');
const { NODETRACE, startTarget, stopTarget } = require('./harness');

// bpftrace 0.17 takes up to a minute to attach uprobes to node on a loaded host.
const ATTACH_MS = 150000;
const HTTP_REQUESTS = 20;
const ROUNDS = 60;

function get(port) {
  return new Promise((resolve, reject) => {
    // No keep-alive: one connection, one server-side TCPWRAP, per request.
    http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', resolve);
    }).on('error', reject);
  });
}

function lineFrom(target, prefix) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`the target did not print "${prefix}"`)), 120000);
    const onData = (c) => {
      buf += c;
      const m = new RegExp(`^${prefix} (.*)$`, 'm').exec(buf);
      if (!m) return;
      clearTimeout(timer);
      target.stdout.off('data', onData);
      resolve(m[1]);
    };
    target.stdout.on('data', onData);
  });
}

// `nodetrace async -p PID --json [more]` until `work()` is done, then Ctrl-C.
function traceWhile(pid, work, more = [], env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [NODETRACE, 'async', '-p', String(pid), '--json', ...more],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    let started = false;
    const killer = setTimeout(() => child.kill('SIGKILL'), ATTACH_MS + 120000);
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => {
      stderr += c;
      if (!started && /tracing the asynchronous operations/.test(stderr)) {
        started = true;
        work().then((truth) => {
          // EmitDestroy follows the last callbacks: a moment for it.
          setTimeout(() => child.kill('SIGINT'), 1500);
          child.truth = truth;
        }, (err) => { child.kill('SIGINT'); reject(err); });
      }
    });
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, truth: child.truth });
    });
  });
}

// A free loopback port for the target's server.
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// One pbkdf2 callback busy-waits this long on the loop.
const BUSY_MS = 200;

// `more`: nodetrace's options (--backend dtrace), `env` its environment.
async function traceMix(node, { more = [], env = {} } = {}) {
  const port = await freePort();
  const target = await startTarget('async-mix.js', { node, env: { ROUNDS: String(ROUNDS), PORT: String(port), BUSY_MS: String(BUSY_MS), KEEP_ALIVE: '1' } });
  try {
    const r = await traceWhile(target.pid, async () => {
      for (let i = 0; i < HTTP_REQUESTS; i++) await get(port);
      const done = lineFrom(target, 'done');
      target.kill('SIGUSR2');
      return JSON.parse(await done);
    }, more, env);
    assert.strictEqual(r.code, 0, r.stderr);
    return { json: JSON.parse(r.stdout), truth: r.truth, stderr: r.stderr };
  } finally {
    stopTarget(target);
  }
}

function checkCounts({ json, truth }) {
  const kind = (name) => json.kinds.find((k) => k.name === name) || { created: 0, callbacks: 0, destroyed: 0 };
  const show = json.kinds.map((k) => `${k.name} ${k.created}/${k.callbacks}/${k.destroyed}`).join(', ');
  // Each of these operations is one AsyncWrap of its kind, created once and
  // called back once: counted exactly (no slack: the trace spans all of them).
  assert.strictEqual(kind('FSREQCALLBACK').created, truth['fs.read'], show);
  assert.strictEqual(kind('FSREQCALLBACK').callbacks, truth['fs.read'], show);
  assert.strictEqual(kind('GETADDRINFOREQWRAP').created, truth['dns.lookup'], show);
  assert.strictEqual(kind('PBKDF2REQUEST').created, truth['crypto.pbkdf2'], show);
  assert.strictEqual(kind('PBKDF2REQUEST').callbacks, truth['crypto.pbkdf2'], show);
  assert.strictEqual(kind('ZLIB').created, truth['zlib.gzip'], show);
  // The server's end of each connection and a parser each (the test's
  // requests: one a connection; the target's own: one kept-alive
  // connection); the target's client end of its connection, made once and
  // given a new async ID at each reuse, whose old one ends there.
  const client = truth['http.client.requests'];
  const reused = client - truth['http.client.sockets'];
  assert(reused > 0, `the target's agent reused no socket: ${JSON.stringify(truth)}`);
  assert.strictEqual(kind('TCPWRAP').created, truth['http.connections'] + client, show);
  assert.strictEqual(kind('HTTPINCOMINGMESSAGE').created, truth['http.connections'], show);
  assert.strictEqual(kind('HTTPCLIENTREQUEST').created, client, show);
  assert(kind('TCPWRAP').destroyed >= reused, `each reuse ends the socket's old operation: ${show}`);
  // Ended with their callbacks: destroyed as many as created.
  assert.strictEqual(kind('FSREQCALLBACK').destroyed, truth['fs.read'], show);
  assert.strictEqual(kind('PBKDF2REQUEST').destroyed, truth['crypto.pbkdf2'], show);
  for (const k of json.kinds) {
    assert.strictEqual(k.growing, false, `${k.name} called growing: ${k.alive_each_second}`);
    if (k.callback.histogram.length) {
      assert(k.callback.p50_us <= k.callback.p99_us, `${k.name}: percentiles in order`);
    }
  }
  // The callback that busy-waited is its kind's max, within its power-of-two
  // bucket (a loaded host may stretch it: less than twice as long).
  const pbkdf2 = kind('PBKDF2REQUEST').callback;
  assert(pbkdf2.max_us >= BUSY_MS * 1000 && pbkdf2.max_us < BUSY_MS * 2000, `pbkdf2 callback max ${pbkdf2.max_us} us`);
  const top = pbkdf2.histogram.filter((b) => b.count > 0).pop();
  assert(top.lo <= pbkdf2.max_us && (top.hi === null || pbkdf2.max_us < top.hi) && top.count === 1,
    JSON.stringify(top));
  // ... and its time is the function the callback called: crypto's own
  // job.ondone (which calls the target's), named as lib/v8 names frames.
  const [first] = pbkdf2.functions;
  assert(first && first.total_ns >= BUSY_MS * 1e6, JSON.stringify(pbkdf2.functions));
  assert.match(first.function || '', /\(node:internal\/crypto\/pbkdf2:\d+:\d+\)$/, JSON.stringify(pbkdf2.functions));
  const fsKind = kind('FSREQCALLBACK');
  assert.strictEqual(fsKind.wait.histogram.reduce((n, b) => n + b.count, 0), truth['fs.read'], 'each read waited once');
  // One thread does all of it (no Worker): by thread, the main one alone,
  // every kind's created and callbacks its own.
  assert.deepStrictEqual(json.threads.map((t) => [t.tid, t.role]), [[json.pid, 'main']], JSON.stringify(json.threads));
  const own = Object.fromEntries(json.threads[0].kinds.map((k) => [k.name, [k.created, k.callbacks]]));
  for (const k of json.kinds) {
    assert.deepStrictEqual(own[k.name] || [0, 0], [k.created, k.callbacks], `${k.name} by thread: ${JSON.stringify(json.threads)}`);
  }
  // The loop's busy time (measured as nodetrace loop does) holds the busy
  // callback, and the callbacks on the main thread fit in it.
  assert(json.loop_busy_ns >= BUSY_MS * 1e6, `loop busy ${json.loop_busy_ns} ns`);
  assert(pbkdf2.loop_ns >= BUSY_MS * 1e6, `pbkdf2 callbacks on the loop ${pbkdf2.loop_ns} ns`);
  checkCallbacksFitLoop(json);
}

// The callbacks on the main thread fit in its loop's busy time.
function checkCallbacksFitLoop(json) {
  const onLoop = json.kinds.reduce((n, k) => n + k.callback.loop_ns, 0);
  assert(onLoop <= json.loop_busy_ns, `callbacks ${onLoop} ns in a loop busy ${json.loop_busy_ns} ns`);
}

// The report's kind of that name, which must be there once (`show`: the
// kinds, for the message).
function onlyKind(json, name, show) {
  const found = json.kinds.filter((k) => k.name === name);
  assert.strictEqual(found.length, 1, `${name} once: ${show}`);
  return found[0];
}

module.exports = { ATTACH_MS, BUSY_MS, lineFrom, traceWhile, traceMix, checkCounts, checkCallbacksFitLoop, onlyKind };
