'use strict';
// Loaded by `node -r nodetrace/register`: the asynchronous resources that are
// not AsyncWraps (PROMISE, Timeout, Immediate, user AsyncResources; not
// TickObject and Microtask, below) as USDT probes (lib/async/probes.js), for
// `nodetrace async`, which takes the AsyncWraps from uprobes on node itself.
//
// async_hooks costs a process much while enabled (every promise, timer and
// tick calls into JavaScript; promises are also tracked for their
// collection), so the hook is enabled only while a tracer is attached: a
// timer (unref'd: it keeps no process alive) reads the probes' semaphores
// every POLL_MS, enables the hook when all of them are set and disables it
// when they are not. Untraced, that read is all the hook costs; traced, the
// first POLL_MS after the attach are not seen, nor the creations and
// destructions of the last POLL_MS before the tracer leaves (they are handed
// over at each poll, and as the thread exits: lib/async/probes.js).
//
// Every thread: -r runs register.js again in each worker, which installs a
// hook of its own (its own timer, kinds and counts). The threads share the
// probe library (one file, dlopen()ed once: the same sites and semaphores),
// so a worker's hook turns on and off as the main thread's does; each numbers
// its kinds apart, and the tracer keys them by the thread that fired them
// (d-scripts/async.bt).
const { createHook, asyncWrapProviders } = require('async_hooks');
const { performance } = require('perf_hooks');
const { ASYNC_PROVIDER, MAX_KINDS, POLL_MS } = require('./probes');

const MORE_TYPES = '(more types)';
const FRAME = 5;
const UNCOUNTED = ['TickObject', 'Microtask'];

/**
 * install(usdt[, { pollMs }]) -> { active(), uninstall() } or null (a
 * Node without asyncWrapProviders, a provider without semaphores to read:
 * dtrace-provider on DTrace systems). Once per thread.
 */
function install(usdt, { pollMs = POLL_MS } = {}) {
  // Elsewhere lib/usdt is dtrace-provider, with no semaphore to read.
  if (process.platform !== 'linux' || !asyncWrapProviders) return null;
  const provider = usdt.createDTraceProvider(ASYNC_PROVIDER.name);
  const probes = {};
  for (const [name, ...types] of ASYNC_PROVIDER.probes) probes[name] = provider.addProbe(name, ...types);
  provider.enable();
  const all = Object.values(probes);
  if (!all.every((p) => typeof p._enabled === 'function' && typeof p._fireValues === 'function')) return null;
  const traced = () => all.every((p) => p._enabled());

  // The AsyncWraps' types (the uprobes count those) are kind 0, never fired:
  // no kind counted twice. PROMISE is listed, but promises are not AsyncWraps
  // (V8's promise hooks since Node 16). Nor process.nextTick's and
  // queueMicrotask's callbacks (TickObject, Microtask): ten a request in an
  // HTTP server, they would cost it more than all the rest
  // (docs/performance.md#nodetrace-async-what-tracing-asyncwrap-operations-costs);
  // they run inside the callback that queued them, whose time they stay in.
  const kinds = new Map([...Object.keys(asyncWrapProviders).filter((t) => t !== 'PROMISE'), ...UNCOUNTED].map((t) => [t, 0]));
  const names = [];                 // kind - 1 -> type
  const ids = new Map();            // async ID -> kind, of the resources seen created
  const born = new Map();           // async ID -> when it was created (ms), until its first callback
  // The callbacks running, FRAME values each: async ID, kind, wait (us, -1:
  // not its first callback), started (ms), time in callbacks nested in it (ms).
  const stack = [];
  // Created and destroyed per kind since the last hand-over (each poll).
  const created = new Float64Array(MAX_KINDS + 1);
  const destroyed = new Float64Array(MAX_KINDS + 1);
  let active = false;

  // An exception out of an async_hooks callback ends the process: a probe
  // that fails to fire turns the hook off for good, with one warning.
  let broken = false;
  const fire = (probe, a, b, c, d) => {
    if (broken || !probe._enabled()) return;
    try {
      probe._fireValues([a, b, c, d]);
    } catch (err) {
      broken = true;
      hook.disable();
      reset();
      process.emitWarning(`nodetrace: the async hook is off: ${err && err.message}`, { code: 'NODETRACE_ASYNC' });
    }
  };
  function kindOf(type) {
    let kind = kinds.get(type);
    if (kind !== undefined) return kind;
    // A type is a string a program chose: a bounded number of them named,
    // the rest in one kind.
    const before = names.length;
    if (names.length < MAX_KINDS - 1) names.push(String(type));
    else if (names.length < MAX_KINDS) names.push(MORE_TYPES);
    kind = Math.min(names.length, MAX_KINDS);
    if (kinds.size < 4 * MAX_KINDS) kinds.set(type, kind);
    if (active && names.length > before) fire(probes['async-kind'], kind, names[kind - 1]);
    return kind;
  }

  const hook = createHook({
    init(asyncId, type) {
      const kind = kindOf(type);
      if (kind === 0) return;
      ids.set(asyncId, kind);
      born.set(asyncId, performance.now());
      created[kind]++;
    },
    // A callback's time, measured here, nested ones taken out (a stack:
    // callbacks nest), handed over once at its end.
    before(asyncId) {
      const kind = ids.get(asyncId);
      if (kind === undefined) return;
      const at = born.get(asyncId);
      let waitUs = -1;
      const now = performance.now();
      if (at !== undefined) {
        born.delete(asyncId);
        waitUs = Math.floor((now - at) * 1000);
      }
      stack.push(asyncId, kind, waitUs, now, 0);
    },
    after(asyncId) {
      // Its frame is the top one; were a callback above it left without its
      // after, that one goes too, so one lost after loses no others.
      let top = stack.length - FRAME;
      while (top >= 0 && stack[top] !== asyncId) top -= FRAME;
      if (top < 0) return;   // not one of ours
      const kind = stack[top + 1];
      const waitUs = stack[top + 2];
      const ms = performance.now() - stack[top + 3];
      const nestedMs = stack[top + 4];
      stack.length = top;
      if (top > 0) stack[top - 1] += ms;
      fire(probes['async-after'], kind, waitUs, Math.floor((ms - nestedMs) * 1e6), Math.floor(ms * 1e6));
    },
    destroy(asyncId) {
      const kind = ids.get(asyncId);
      if (kind === undefined) return;
      ids.delete(asyncId);
      born.delete(asyncId);
      destroyed[kind]++;
    },
  });

  // The counts since the last hand-over, per kind that has any.
  function handOver() {
    for (let kind = 1; kind <= names.length; kind++) {
      if (created[kind] === 0 && destroyed[kind] === 0) continue;
      fire(probes['async-count'], kind, created[kind], destroyed[kind]);
      created[kind] = 0;
      destroyed[kind] = 0;
    }
  }

  function reset() {
    ids.clear();
    stack.length = 0;
    born.clear();
    created.fill(0);
    destroyed.fill(0);
  }

  function poll() {
    const on = traced() && !broken;
    if (on && active) handOver();
    if (on === active) return;
    active = on;
    if (on) {
      // Every kind named again: this tracer may be a new one.
      names.forEach((name, i) => fire(probes['async-kind'], i + 1, name));
      hook.enable();
    } else {
      hook.disable();
      reset();
    }
  }
  const timer = setInterval(poll, pollMs);
  timer.unref();
  // A thread that ends (a worker, while the process goes on being traced;
  // the process itself) hands over what it counted since the last poll.
  // Not a worker stopped by worker.terminate(): no 'exit' runs in it.
  const onExit = () => { if (active && !broken) handOver(); };
  process.on('exit', onExit);
  return {
    active: () => active,
    uninstall() {
      clearInterval(timer);
      process.off('exit', onExit);
      hook.disable();
      reset();
      active = false;
    },
  };
}

module.exports = { install, POLL_MS };
