'use strict';
// Known counts of the resources that are not AsyncWraps, on the main thread
// and in a worker thread, for `nodetrace async` on a process started with
// -r nodetrace/register (lib/async/hook.js runs in each thread, and each
// numbers its kinds apart). Prints "ready", then on SIGUSR2 waits until the
// main thread's hook is on (a tracer attached: "state active"; "state
// inactive" after 20 s), starts one worker, which waits until its own hook
// is on ("worker-state active|inactive"), and both do their rounds at once:
//   main:   ROUNDS (default 120) of one setTimeout, one setImmediate, one
//           AsyncResource of type NodetraceJob run once and destroyed;
//   worker: WORKER_ROUNDS (default 200) of one AsyncResource of type
//           NodetraceWorkerJob (the worker's only), one NodetraceJob, one
//           setImmediate and one setTimeout: made in another order than the
//           main thread's, so that the two threads' kind numbers name
//           different types.
// Each round of each thread also stats this file (fs.stat: an AsyncWrap,
// FSREQCALLBACK, made on that thread's own loop).
// Each thread counts what it did and prints it, with the AsyncWraps its
// own async_hooks init hook saw created over its rounds, by type, and its
// threadId:
//   done {"Timeout":N,"Immediate":N,"NodetraceJob":N,"fs.stat":N,"inits":{"FSREQCALLBACK":N,...},"threadId":0}
//   worker-done {"Timeout":N,"Immediate":N,"NodetraceJob":N,"NodetraceWorkerJob":N,"fs.stat":N,"inits":{...},"threadId":N}
// No promise made, no async function: each resource made is one counted.
// The worker stays until the process ends (its resources' destructions are
// handed over while it runs).
const fs = require('fs');
const { Worker, isMainThread, parentPort, threadId } = require('worker_threads');
const { AsyncResource, createHook, asyncWrapProviders } = require('async_hooks');

// This thread's own count of the AsyncWraps created on it, by type (a hook
// is per thread: each thread's sees its own resources only).
const inits = {};
createHook({ init(id, type) { if (type in asyncWrapProviders) inits[type] = (inits[type] || 0) + 1; } }).enable();
// What the hook saw from `since` (a copy of `inits`) to now.
function initsSince(since) {
  return Object.fromEntries(Object.entries(inits).map(([t, n]) => [t, n - (since[t] || 0)]).filter(([, n]) => n > 0));
}

const hook = () => globalThis[Symbol.for('nodetrace.register.async')];

function whenActive(waited, then) {
  const h = hook();
  if (h && h.active()) { then(true); return; }
  if (waited > 20000) { then(false); return; }
  setTimeout(() => whenActive(waited + 10, then), 10);
}

function job(type, done) {
  const r = new AsyncResource(type);
  r.runInAsyncScope(() => { done[type]++; });
  r.emitDestroy();
}

// rounds of makeRound(one), each one() call a resource's callback done, then print.
function run(rounds, perRound, makeRound, done, say) {
  let n = 0;
  const since = { ...inits };
  const next = () => {
    if (++n > rounds) { say(JSON.stringify({ ...done, inits: initsSince(since), threadId })); return; }
    let left = perRound;
    makeRound(() => { if (--left === 0) next(); });
  };
  next();
}

if (isMainThread) {
  const ROUNDS = Number(process.env.ROUNDS || 120);
  const done = { Timeout: 0, Immediate: 0, NodetraceJob: 0, 'fs.stat': 0 };
  const round = (one) => {
    setTimeout(() => { done.Timeout++; one(); }, 1);
    setImmediate(() => { done.Immediate++; one(); });
    fs.stat(__filename, () => { done['fs.stat']++; one(); });
    job('NodetraceJob', done);
    one();
  };
  process.on('SIGUSR2', () => whenActive(0, (on) => {
    console.log(`state ${on ? 'active' : 'inactive'}`);
    if (!on) return;
    const worker = new Worker(__filename);
    worker.on('message', (m) => console.log(m));
    worker.on('error', (err) => console.log(`worker-error ${err && err.message}`));
    run(ROUNDS, 4, round, done, (s) => console.log(`done ${s}`));
  }));
  setInterval(() => {}, 1000);
  console.log(`ready ${hook() ? 'hook' : 'no-hook'}`);
} else {
  const ROUNDS = Number(process.env.WORKER_ROUNDS || 200);
  const done = { Timeout: 0, Immediate: 0, NodetraceJob: 0, NodetraceWorkerJob: 0, 'fs.stat': 0 };
  const round = (one) => {
    job('NodetraceWorkerJob', done);
    job('NodetraceJob', done);
    setImmediate(() => { done.Immediate++; one(); });
    setTimeout(() => { done.Timeout++; one(); }, 1);
    fs.stat(__filename, () => { done['fs.stat']++; one(); });
    one();
  };
  whenActive(0, (on) => {
    parentPort.postMessage(`worker-state ${on ? 'active' : 'inactive'}`);
    if (!on) return;
    run(ROUNDS, 4, round, done, (s) => parentPort.postMessage(`worker-done ${s}`));
  });
  // Kept until the process ends: the message port holds the thread.
  parentPort.on('message', () => {});
}
