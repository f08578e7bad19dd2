'use strict';
// fs work on libuv's pool in a loop (fs.stat of this file, two at a time):
// a process beside a traced one, whose fs.stat must never show in the
// other's trace, and a target whose own count is the truth a trace's is
// held to. Prints "ready PID"; on SIGUSR2, "started N at NS": the fs.stat
// calls it has made so far, and when it was asked (CLOCK_MONOTONIC, ns).
// With WORKER=NAME, a worker_threads Worker of that name does the same with
// fs.lstat on its own loop (the same pool); the main thread prints "worker
// {tid, threadId, name}" before "ready PID", and on SIGUSR2 also "worker
// started N": the Worker's fs.lstat calls so far, read at the same moment
// (a counter the two threads share).
const fs = require('fs');
const { Worker, isMainThread, workerData, threadId } = require('worker_threads');

// Two at a time, `call` counting each start in `count()`.
function loop(call, counted) {
  function one() {
    counted();
    call(__filename, () => setImmediate(one));
  }
  for (let i = 0; i < 2; i++) one();
}

if (isMainThread) {
  let started = 0;
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const begin = () => {
    process.on('SIGUSR2', () => {
      const at = process.hrtime.bigint();
      const inWorker = Atomics.load(shared, 0);
      console.log(`started ${started} at ${at}`);
      if (process.env.WORKER) console.log(`worker started ${inWorker}`);
    });
    console.log('ready ' + process.pid);
    loop(fs.stat, () => { started++; });
  };
  if (process.env.WORKER) {
    const name = process.env.WORKER;
    const w = new Worker(__filename, { name, workerData: shared });
    w.once('message', (m) => {
      console.log('worker ' + JSON.stringify({ ...m, name }));
      begin();
    });
  } else {
    begin();
  }
} else {
  const { parentPort } = require('worker_threads');
  const shared = workerData;
  parentPort.postMessage({ tid: Number(fs.readlinkSync('/proc/thread-self').split('/').pop()), threadId });
  loop(fs.lstat, () => { Atomics.add(shared, 0, 1); });
}
