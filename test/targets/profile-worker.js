'use strict';
// Two threads that each spend a known share of their CPU in JavaScript: a
// worker_threads Worker (named "spinner") runs workerSpin two calls deep
// (outerWork -> middleWork -> workerSpin) for HOT_MS of its CPU, then
// workerWarm for WARM_MS (8 and 4 by default), over and over, each turn
// called back by an fs.stat of its own loop (a completion of the thread
// pool's work, uv__work_done, under the Worker's JavaScript: the Worker is
// still no pool thread); the main thread runs mainSpin in turns of MAIN_MS (10) of
// wall time. Each call's CPU is the calling thread's own, read from
// /proc/thread-self/schedstat (nanoseconds on CPU) before and after it:
// process.cpuUsage() counts every thread. The worker adds its figures to a
// SharedArrayBuffer after each call. Prints "ready PID" once the worker
// has run workerSpin.
// On SIGUSR2 it prints "threads WORKER_HOT_MS MAIN_HOT_MS CPU_MS": the CPU
// really spent in workerSpin and in mainSpin so far, and the process's CPU
// time (process.cpuUsage), then "worker TID THREAD_ID": the Worker's thread
// as the kernel knows it and as worker_threads does. SECONDS=N exits after N
// seconds.
const fs = require('fs');
const { Worker, isMainThread, workerData } = require('worker_threads');

const HOT_MS = Number(process.env.HOT_MS || 8);
const WARM_MS = Number(process.env.WARM_MS || 4);
const MAIN_MS = Number(process.env.MAIN_MS || 10);

// This thread's CPU time in ms (the kernel's sum_exec_runtime, in ns).
function threadCpuMs() {
  return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
}

// Node runs every immediate from one call site (processImmediate): with one
// or two callbacks ever seen there, TurboFan inlines them into it once it is
// hot (measured: mainSpin vanished into processImmediate after some 20 s),
// and an inlined function is no frame to name. Five distinct callbacks
// make that call site megamorphic for good: nothing is inlined there. They
// are queued again and again (V8 keeps no feedback for a function's first
// calls).
function unsettleImmediates() {
  for (const f of [function a() {}, function b() {}, function c() {}, function d() {},
    function e() {}]) setImmediate(f);
}

setInterval(unsettleImmediates, 100).unref();
if (isMainThread) {
  // [0] workerSpin's CPU in µs, [1] calls of it, [2] its TID, written by the worker.
  const shared = new SharedArrayBuffer(24);
  const fromWorker = new BigInt64Array(shared);
  let mainHotMs = 0;
  const worker = new Worker(__filename, { workerData: shared, name: 'spinner' });
  worker.on('error', (err) => { console.error(err); process.exit(1); });

  // Spins on the main thread for MAIN_MS of wall time a turn; its CPU is
  // measured as the worker's is.
  function mainSpin() {
    const start = threadCpuMs();
    const end = Date.now() + MAIN_MS;
    let x = 1;
    while (Date.now() < end) { for (let i = 0; i < 100000; i++) x = (x * 13 + i) % 999979; }
    globalThis.mainResult = x;
    mainHotMs += threadCpuMs() - start;
    setImmediate(mainSpin);
  }

  const ready = () => {
    if (Atomics.load(fromWorker, 1) === 0n) { setTimeout(ready, 10); return; }
    setImmediate(mainSpin);
    console.log('ready ' + process.pid);
  };
  ready();
  process.on('SIGUSR2', () => {
    const u = process.cpuUsage();
    console.log(`threads ${Number(Atomics.load(fromWorker, 0)) / 1000} ${mainHotMs} ${(u.user + u.system) / 1000}`);
    console.log(`worker ${Atomics.load(fromWorker, 2)} ${worker.threadId}`);
  });
  if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
} else {
  const toMain = new BigInt64Array(workerData);
  // This thread's TID: /proc/thread-self is /proc/PID/task/TID.
  Atomics.store(toMain, 2, BigInt(fs.readlinkSync('/proc/thread-self').split('/').pop()));

  // Each spins in its own loop (a shared helper would be the frame the
  // samples fall in) until this thread has used its budget of CPU.
  function workerSpin() {
    const start = threadCpuMs();
    let now = start;
    let x = 1;
    while (now - start < HOT_MS) {
      for (let i = 0; i < 200000; i++) x = (x * 31 + i) % 1000003;
      now = threadCpuMs();
    }
    globalThis.hotResult = x;
    Atomics.add(toMain, 0, BigInt(Math.round((now - start) * 1000)));
    Atomics.add(toMain, 1, 1n);
    fs.stat(__filename, workerWarm);
  }

  function workerWarm() {
    const start = threadCpuMs();
    let x = 1;
    while (threadCpuMs() - start < WARM_MS) { for (let i = 0; i < 200000; i++) x = (x * 17 + i) % 999983; }
    globalThis.warmResult = x;
    fs.promises.stat(__filename).then(outerWork);
  }

  // Each called once a turn: V8 compiles and inlines only what runs often,
  // so they stay frames of their own (as in profile-hot.js).
  function middleWork() {
    workerSpin();
  }

  function outerWork() {
    middleWork();
  }

  setImmediate(outerWork);
}

// INLINE=1: the main thread also runs profile-inline.js's hot arrow function
// (step, and the functions TurboFan inlines into it), its turns between
// mainSpin's: one target, one trace, for profile.test.js's two checks of
// each Node build.
if (isMainThread && process.env.INLINE === '1') setImmediate(require('./profile-inline.js').runFor, 20);
