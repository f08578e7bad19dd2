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
    return { json: JSON.parse(r.stdout), truth: await truth };
  } finally {
    stopTarget(target);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function checkWorkerCounts({ json, truth }) {
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
