'use strict';
// A worker_threads Worker that waits off-CPU in one known place, over and
// over: waitInWorker() blocks in a synchronous fs call (fs.readSync of a
// FIFO that the main thread writes a byte to every FIFO_MS, 100 by
// default), called by workerRound, an immediate of the worker's own loop.
// Prints "ready PID" once the worker reads. On SIGUSR2 it prints
// "waits FIFO_MS 0 WALL_MS" (as offcpu-wait.js): the wall time the worker
// really spent blocked in waitInWorker so far (measured around the calls,
// added to a SharedArrayBuffer after each), and the time since it started.
// SECONDS=N exits after N seconds.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { Worker, isMainThread, workerData } = require('worker_threads');

const FIFO_MS = Number(process.env.FIFO_MS || 100);

if (isMainThread) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-offcpu-worker-'));
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  // [0] µs blocked in waitInWorker, [1] its calls: written by the worker.
  const shared = new SharedArrayBuffer(16);
  const fromWorker = new BigInt64Array(shared);
  const started = process.hrtime.bigint();
  new Worker(__filename, { workerData: { fifo, shared } }).on('error', (err) => { console.error(err); process.exit(1); });
  const fd = fs.openSync(fifo, 'w');
  // Both ends are open: the FIFO needs no name now, and a target killed
  // with SIGKILL (as tests end it) leaves nothing in the temporary directory.
  fs.rmSync(dir, { recursive: true, force: true });
  setInterval(() => fs.writeSync(fd, 'x'), FIFO_MS);
  const ready = () => {
    if (Atomics.load(fromWorker, 1) === 0n) { setTimeout(ready, 10); return; }
    console.log('ready ' + process.pid);
  };
  ready();
  process.on('SIGUSR2', () => {
    console.log(`waits ${Number(Atomics.load(fromWorker, 0)) / 1000} 0 ${Number(process.hrtime.bigint() - started) / 1e6}`);
  });
  if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
} else {
  const fd = fs.openSync(workerData.fifo, 'r');
  const toMain = new BigInt64Array(workerData.shared);
  const byte = Buffer.alloc(1);

  function waitInWorker() {
    const t = process.hrtime.bigint();
    fs.readSync(fd, byte, 0, 1, null);
    Atomics.add(toMain, 0, (process.hrtime.bigint() - t) / 1000n);
    Atomics.add(toMain, 1, 1n);
  }

  function workerRound() {
    waitInWorker();
    setImmediate(workerRound);
  }

  setImmediate(workerRound);
}
