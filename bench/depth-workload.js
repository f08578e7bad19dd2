'use strict';
// A Node workload whose main thread works at a chosen JavaScript depth, for
// bench/profile-cost.js: down() calls itself DEPTH times, then the last call
// runs one of three loops forever, never returning, so every sample (every
// wait) has DEPTH frames of down() above the event loop's own:
//   KIND=user    arithmetic (samples taken in user mode)
//   KIND=kernel  fs.readSync of 64 KiB from /dev/zero (the kernel clears
//                each buffer: samples taken in a system call, walked from
//                the user registers saved on entry)
//   KIND=wait    fs.readSync of one byte from a FIFO that a worker thread
//                writes every WAIT_MS (1 by default): one off-CPU wait of
//                the main thread per byte (a read(), whose glibc wrapper
//                keeps the frame pointer chain, unlike a futex wait)
// Prints "ready PID" once at its depth.
const fs = require('fs');

const DEPTH = Number(process.env.DEPTH || 20);
const KIND = process.env.KIND || 'user';
const WAIT_MS = Number(process.env.WAIT_MS || 1);

function userLoop() {
  let h = 1;
  for (;;) {
    for (let k = 0; k < 100000; k++) h = (h * 31 + k) | 0;
    globalThis.sink = h;
  }
}

function kernelLoop() {
  const fd = fs.openSync('/dev/zero', 'r');
  const buf = Buffer.alloc(65536);
  for (;;) fs.readSync(fd, buf, 0, buf.length, null);
}

function waitLoop(fd) {
  const buf = Buffer.alloc(1);
  for (;;) fs.readSync(fd, buf, 0, 1, null);
}

const loops = { user: userLoop, kernel: kernelLoop, wait: waitLoop };
if (!loops[KIND]) throw new Error(`KIND must be one of ${Object.keys(loops)}`);

let fifo = null;
if (KIND === 'wait') {
  const os = require('os');
  const path = require('path');
  const { execFileSync } = require('child_process');
  const { Worker } = require('worker_threads');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-bench-'));
  const name = path.join(dir, 'fifo');
  execFileSync('mkfifo', [name]);
  // O_RDWR: opening a FIFO so never blocks (Linux); the worker writes to
  // the same descriptor (threads share them), so the name can go at once.
  fifo = fs.openSync(name, 'r+');
  fs.rmSync(dir, { recursive: true, force: true });
  new Worker(`
    const fs = require('fs');
    const b = Buffer.from('x');
    const i32 = new Int32Array(new SharedArrayBuffer(4));
    for (;;) { Atomics.wait(i32, 0, 0, ${WAIT_MS}); fs.writeSync(${fifo}, b); }
  `, { eval: true });
}

function down(n) {
  if (n > 1) return down(n - 1) + 1;
  console.log('ready ' + process.pid);
  return loops[KIND](fifo);
}

// Off the event loop's first turn, as a service's code runs.
setImmediate(() => down(DEPTH));
