'use strict';
// `nodetrace async` with the register hook in a worker thread too @tracer:
// test/targets/async-hook-worker.js, started with -r register, makes known
// counts of setTimeout, setImmediate and AsyncResources on its main thread
// and, at the same time, other counts in a worker, whose hook numbers its
// kinds apart (in another order); each thread counts what it did itself.
// The trace (-d, --json) holds each type to the two threads' sum, and the
// worker's own type to the worker's count: no kind number taken for
// another thread's.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { ROOT, requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { nodeBuilds, requireBuild } = require('./support/node-builds');
const { ATTACH_MS, lineFrom, checkCallbacksFitLoop, onlyKind } = require('./support/async-checks');

const MAIN_ROUNDS = 120;
const WORKER_ROUNDS = 200;
// Both threads' rounds take well under a second; the rest is slack for a
// loaded host (timers fire late) and the hook's 100 ms to turn on in each.
const SECONDS = 8;

async function traceWorkerMix(node) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-async-worker-'));
  let target;
  try {
    target = await startTarget('async-hook-worker.js', {
      node,
      env: { NODETRACE_USDT_DIR: path.join(dir, 'lib'), ROUNDS: String(MAIN_ROUNDS), WORKER_ROUNDS: String(WORKER_ROUNDS) },
      args: ['-r', path.join(ROOT, 'register.js')],
    });
    let truth = null;
    const r = await nodetrace(['async', '-p', String(target.pid), '-d', String(SECONDS), '--json'], {
      timeoutMs: ATTACH_MS + 60000,
      onSpawn: (child) => {
        let err = '';
        child.stderr.on('data', (c) => {
          err += c;
          if (!/tracing the asynchronous operations/.test(err) || child.told) return;
          child.told = true;
          const lines = ['state', 'worker-state', 'done', 'worker-done'].map((p) => lineFrom(target, p));
          target.kill('SIGUSR2');
          truth = Promise.all(lines)
            .then(([state, workerState, main, worker]) => ({ state, workerState, main: JSON.parse(main),
              worker: JSON.parse(worker) }));
          truth.catch(() => {});
        });
      },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert(truth, `the trace never said it was tracing: ${r.stderr}`);
    return { json: JSON.parse(r.stdout), truth: await truth, pid: target.pid };
  } finally {
    stopTarget(target);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Issue 36: each thread's own operations (threads[]), held to what that
// thread's own async_hooks init hook counted over its rounds: its fs.stat
// calls (FSREQCALLBACK, on its own loop) exactly, every AsyncWrap type it
// saw at least (the window holds its rounds, and may hold more), and the
// register hook's kinds exactly. The threads together are the kinds.
function checkThreads({ json, truth, pid }) {
  const show = JSON.stringify(json.threads);
  assert(Array.isArray(json.threads), show);
  const main = json.threads.filter((t) => t.role === 'main');
  const worker = json.threads.filter((t) => t.role === 'worker' && t.worker.thread_id === truth.worker.threadId);
  assert.deepStrictEqual([main.length, worker.length], [1, 1], show);
  assert.strictEqual(main[0].tid, pid, show);
  assert.strictEqual(main[0].label, 'main thread', show);
  assert.strictEqual(worker[0].label, `Worker ${truth.worker.threadId}`, show);
  assert.notStrictEqual(worker[0].tid, pid, show);
  for (const [t, own] of [[main[0], truth.main], [worker[0], truth.worker]]) {
    const kind = (name, source) => t.kinds.find((k) => k.name === name && k.source === source)
      || { created: 0, callbacks: 0 };
    const fsKind = kind('FSREQCALLBACK', 'AsyncWrap');
    assert.strictEqual(own.inits.FSREQCALLBACK, own['fs.stat'], JSON.stringify(own));
    assert.deepStrictEqual([fsKind.created, fsKind.callbacks], [own['fs.stat'], own['fs.stat']], `${t.label}: ${show}`);
    for (const [type, n] of Object.entries(own.inits)) {
      assert(kind(type, 'AsyncWrap').created >= n, `${t.label}: ${type} ${n} seen by its own hook: ${show}`);
    }
    for (const name of ['Timeout', 'Immediate', 'NodetraceJob', 'NodetraceWorkerJob']) {
      assert.strictEqual(kind(name, 'async_hooks').created, own[name] || 0, `${t.label} ${name}: ${show}`);
    }
    assert.strictEqual(t.created, t.kinds.reduce((n, k) => n + k.created, 0), show);
  }
  // The kinds are every thread's: each is the sum of its threads' counts.
  for (const k of json.kinds) {
    const of = (field) => json.threads.reduce((n, t) => n + t.kinds
      .filter((x) => x.name === k.name && x.source === k.source).reduce((m, x) => m + x[field], 0), 0);
    assert.deepStrictEqual([of('created'), of('callbacks')], [k.created, k.callbacks], `${k.name}: ${show}`);
  }
}

function checkWorkerCounts({ json, truth, pid }) {
  assert.deepStrictEqual([truth.state, truth.workerState], ['active', 'active'], 'both threads\' hooks turned on');
  assert.strictEqual(truth.main.Timeout, MAIN_ROUNDS);
  assert.strictEqual(truth.worker.Timeout, WORKER_ROUNDS);
  const show = json.kinds.map((k) => `${k.name}(${k.source}, ${k.threads} threads) ${k.created}/${k.callbacks}/${k.destroyed}`).join(', ');
  const kind = (name) => onlyKind(json, name, show);
  assert.strictEqual(json.hook, true, show);
  // Made, called back and destroyed once each, all while traced (each
  // thread began once its own hook was on): exact, no slack, as the main
  // thread's alone are (test/async.test.js).
  for (const name of ['Timeout', 'Immediate', 'NodetraceJob']) {
    const k = kind(name);
    const both = truth.main[name] + truth.worker[name];
    assert.deepStrictEqual([k.source, k.threads], ['async_hooks', 2], `${name}: ${show}`);
    assert.deepStrictEqual([k.created, k.callbacks, k.destroyed], [both, both, both], `${name}: ${show}`);
    assert.strictEqual(k.wait.histogram.reduce((n, b) => n + b.count, 0), both, `${name}: each waited once`);
  }
  const own = kind('NodetraceWorkerJob');
  const n = truth.worker.NodetraceWorkerJob;
  assert.deepStrictEqual([own.threads, own.created, own.callbacks, own.destroyed], [1, n, n, n], show);
  // The worker's callbacks are on its own loop, not the main thread's.
  assert.strictEqual(own.callback.loop_ns, 0, show);
  checkCallbacksFitLoop(json);
  checkThreads({ json, truth, pid });
}

describe('nodetrace async with the register hook in a worker thread @tracer', function () {
  this.timeout(ATTACH_MS + 240000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  // The main cell only (make test's time: README, Set-up): each tier
  // compiles this program (programs-compile) and runs the main thread's
  // hook test (@core); this one passed on 0.23.2 and 0.27.1 when written.
  it('counts the main thread\'s and a worker\'s Timeout, Immediate and AsyncResources by type, exactly', async function () {
    const r = await traceWorkerMix(process.execPath);
    checkWorkerCounts(r);
    console.log(`      ${r.json.kinds.filter((k) => k.source === 'async_hooks').map((k) => `${k.name} ${k.created} (${k.threads} threads)`).join(', ')}`);
  });

  // The oldest and newest official builds of the matrix (Debian's 18 runs
  // in its own mount namespace: traced without its hook).
  for (const build of nodeBuilds(['node18', 'node26'])) {
    it(`on ${build.label}`, async function () {
      requireBuild(this, build);
      checkWorkerCounts(await traceWorkerMix(build.node));
    });
  }
});
