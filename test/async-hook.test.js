'use strict';
// lib/async/hook.js (loaded by -r nodetrace/register): async_hooks stays off
// while no tracer is attached, turns on when every probe's semaphore is set
// and off when they are not, and fires only the types that are not
// AsyncWraps. No tracer here: a stand-in provider whose semaphores the test
// sets, and a real process whose async_hooks state node reports itself.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { AsyncResource } = require('async_hooks');
const { install } = require('../lib/async/hook');
const { ASYNC_PROVIDER, POLL_MS } = require('../lib/async/probes');
const { nodeBuilds, requireBuild } = require('./support/node-builds');

const ROOT = path.join(__dirname, '..');

// lib/usdt's provider as the hook uses it, with semaphores the test sets.
function standIn() {
  const state = { traced: false, fired: [] };
  const usdt = {
    createDTraceProvider: (name) => {
      assert.strictEqual(name, ASYNC_PROVIDER.name);
      return {
        addProbe: (probe) => ({ _enabled: () => state.traced, _fireValues: (v) => state.fired.push([probe, ...v]) }),
        enable() {},
      };
    },
  };
  return { state, usdt };
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// A little of everything: a timer, an immediate, a promise, an
// AsyncResource, a tick, a file read (an AsyncWrap).
function work() {
  return new Promise((resolve) => {
    let left = 3;
    const one = () => { if (--left === 0) resolve(); };
    setTimeout(one, 1);
    setImmediate(one);
    process.nextTick(() => {});
    const job = new AsyncResource('HookTestJob');
    job.runInAsyncScope(() => {});
    job.emitDestroy();
    fs.stat(__filename, one);
  });
}

describe('the register hook for nodetrace async (lib/async/hook.js)', function () {
  this.timeout(20000);
  let hook;
  afterEach(() => { if (hook) hook.uninstall(); hook = null; });

  it('fires nothing while untraced; once traced, the kinds that are not AsyncWraps, named; nothing once the tracer leaves', async function () {
    const { state, usdt } = standIn();
    hook = install(usdt, { pollMs: 10 });
    assert(hook, 'installed on the main thread');
    await work();
    await sleep(50);
    assert.deepStrictEqual(state.fired, [], 'untraced: nothing fired');
    assert.strictEqual(hook.active(), false);

    state.traced = true;
    await sleep(50);
    assert.strictEqual(hook.active(), true, `on within ${POLL_MS} ms (10 here)`);
    await work();
    await sleep(50);
    const named = new Map(state.fired.filter(([p]) => p === 'async-kind').map(([, kind, name]) => [kind, name]));
    // Creations and destructions handed over at each poll, by kind.
    const counted = new Map();
    for (const [p, kind, made, ended] of state.fired) {
      if (p !== 'async-count') continue;
      const c = counted.get(named.get(kind)) || { made: 0, ended: 0 };
      counted.set(named.get(kind), { made: c.made + made, ended: c.ended + ended });
    }
    for (const type of ['Timeout', 'Immediate', 'HookTestJob']) assert(counted.get(type) && counted.get(type).made >= 1, `${type} counted: ${[...counted.keys()]}`);
    assert.deepStrictEqual(counted.get('HookTestJob'), { made: 1, ended: 1 }, 'the job made and destroyed');
    assert(!counted.has('FSREQCALLBACK') && !counted.has(undefined), `only named kinds that are not AsyncWraps: ${[...counted.keys()]}`);
    assert(!counted.has('TickObject') && ![...named.values()].includes('TickObject'), 'process.nextTick\'s callbacks are not counted');
    // A callback is fired once, at its end: its kind, its wait (at its
    // first callback), its own time and its whole time.
    assert(!state.fired.some(([p]) => p === 'async-before' || p === 'async-init'), 'nothing fired as a callback starts or a resource is made');
    const jobKind = [...named].find(([, n]) => n === 'HookTestJob')[0];
    const jobAfter = state.fired.filter(([p, kind]) => p === 'async-after' && kind === jobKind);
    assert.strictEqual(jobAfter.length, 1);
    const [, , waitUs, ownNs, allNs] = jobAfter[0];
    assert(waitUs >= 0 && ownNs >= 0 && allNs >= ownNs, `wait ${waitUs} us, ${ownNs} of ${allNs} ns`);

    state.traced = false;
    await sleep(50);
    assert.strictEqual(hook.active(), false, 'off once the tracer left');
    const before = state.fired.length;
    await work();
    await sleep(20);
    assert.strictEqual(state.fired.length, before, 'nothing fired after');

    // A second tracer: the kinds are named to it again.
    state.fired.length = 0;
    state.traced = true;
    await sleep(50);
    assert.deepStrictEqual(state.fired.filter(([p]) => p === 'async-kind').map(([, , n]) => n).sort(), [...named.values()].sort());
  });

  it('takes a callback nested in another out of that one\'s own time', async function () {
    const { state, usdt } = standIn();
    hook = install(usdt, { pollMs: 10 });
    state.traced = true;
    await sleep(50);
    const BUSY_MS = 5;
    await new Promise((resolve) => {
      setTimeout(() => {
        new AsyncResource('HookNested').runInAsyncScope(() => {
          const t0 = process.hrtime.bigint();
          while (process.hrtime.bigint() - t0 < BigInt(BUSY_MS) * 1000000n);
        });
        resolve();
      }, 1);
    });
    await sleep(30);
    const named = new Map(state.fired.filter(([p]) => p === 'async-kind').map(([, kind, name]) => [name, kind]));
    const afterOf = (name) => state.fired.find(([p, kind]) => p === 'async-after' && kind === named.get(name));
    const [, , , innerOwn, innerAll] = afterOf('HookNested');
    const [, , , outerOwn, outerAll] = afterOf('Timeout');
    assert(innerOwn >= BUSY_MS * 1e6 && innerAll >= innerOwn, `nested ${innerOwn} of ${innerAll} ns`);
    assert(outerAll >= innerAll, `the Timeout's whole time ${outerAll} ns holds the nested one's`);
    assert(outerOwn < BUSY_MS * 1e6 / 2 && outerOwn <= outerAll - innerAll + 1, `the Timeout's own ${outerOwn} ns, the nested one's out`);
  });

  it('turns itself off, with one warning, when a probe fails to fire (an exception there would end the process)', async function () {
    const { state, usdt } = standIn();
    const warnings = [];
    const onWarning = (w) => { if (w.code === 'NODETRACE_ASYNC') warnings.push(w.message); };
    process.on('warning', onWarning);
    try {
      hook = install({
        createDTraceProvider: (name) => {
          const p = usdt.createDTraceProvider(name);
          return { ...p, addProbe: (probe) => ({ ...p.addProbe(probe), _fireValues: () => { throw new Error('no site'); } }) };
        },
      }, { pollMs: 10 });
      state.traced = true;
      await sleep(50);
      await work();
      await sleep(50);
      assert.strictEqual(hook.active(), false, 'off for good');
      assert.strictEqual(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0], /the async hook is off: no site/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('hands over what a worker counted since the last poll as the worker ends', function () {
    // In a worker (its own hook, its own counts): a stand-in provider that
    // writes what is fired straight to fd 1, traced; once the hook is on,
    // one AsyncResource made, then the worker ends before the next poll.
    const inWorker = `
      const fs = require('fs');
      const { AsyncResource } = require('async_hooks');
      const { install } = require(${JSON.stringify(path.join(ROOT, 'lib', 'async', 'hook.js'))});
      const usdt = { createDTraceProvider: () => ({
        addProbe: (probe) => ({ _enabled: () => true, _fireValues: (v) => fs.writeSync(1, JSON.stringify([probe, ...v]) + '\\n') }),
        enable() {},
      }) };
      const hook = install(usdt, { pollMs: 50 });
      const wait = () => { if (!hook.active()) return setTimeout(wait, 5); new AsyncResource('WorkerEndJob'); };
      wait();`;
    const script = `new (require('worker_threads').Worker)(${JSON.stringify(inWorker)}, { eval: true });`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 15000, cwd: ROOT });
    assert.strictEqual(r.status, 0, r.stderr);
    const fired = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const [, jobKind] = fired.find(([p, , name]) => p === 'async-kind' && name === 'WorkerEndJob') || [];
    assert(jobKind, r.stdout);
    assert.deepStrictEqual(fired.filter(([p, kind]) => p === 'async-count' && kind === jobKind).map((f) => f.slice(0, 4)), [['async-count', jobKind, 1, 0]], r.stdout);
  });

  // The real hook, loaded by -r register in a process no tracer attaches to:
  // node's own async_hooks state (internal/async_hooks, --expose-internals)
  // says no hook is enabled, after several polls and work of every kind.
  const probeScript = `
    const ah = require('internal/async_hooks');
    const h = globalThis[Symbol.for('nodetrace.register.async')];
    let n = 0;
    const tick = () => {
      setImmediate(() => {}); Promise.resolve().then(() => {}); require('fs').stat(__filename, () => {});
      if (++n < 40) return setTimeout(tick, 10);
      console.log(JSON.stringify({ installed: Boolean(h), active: h.active(), init: ah.initHooksExist(), destroy: ah.destroyHooksExist(), after: ah.afterHooksExist(), hooks: ah.getHookArrays()[0].length }));
    };
    tick();`;
  // The same in a worker thread, which -r register gives a hook of its own:
  // the worker's async_hooks state, as the worker's node reports it.
  const workerScript = `
    const { Worker } = require('worker_threads');
    new Worker(${JSON.stringify(probeScript)}, { eval: true });`;
  const untraced = { installed: true, active: false, init: false, destroy: false, after: false, hooks: 0 };
  for (const build of nodeBuilds('all', { except: ['node18'] })) {
    it(`${build.label}: with -r register and no tracer, no async_hooks hook is enabled, on the main thread or in a worker`, function () {
      requireBuild(this, build);
      const run = (script) => spawnSync(build.node, ['--expose-internals', '--no-warnings', '-r', path.join(ROOT, 'register.js'), '-e', script],
        { encoding: 'utf8', timeout: 15000, cwd: ROOT });
      const r = run(probeScript);
      assert.strictEqual(r.status, 0, r.stderr);
      assert.deepStrictEqual(JSON.parse(r.stdout), untraced);
      const w = run(workerScript);
      assert.strictEqual(w.status, 0, w.stderr);
      assert.deepStrictEqual(JSON.parse(w.stdout), untraced, 'in the worker');
    });
  }
});
