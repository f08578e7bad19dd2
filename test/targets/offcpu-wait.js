'use strict';
// A main thread that waits off-CPU in two known places, over and over:
// waitForFifo() blocks in a synchronous fs call (fs.readSync of a FIFO that
// a worker thread writes a byte to every FIFO_MS, 150 by default), then
// sleepInAtomics() blocks in Atomics.wait for ATOMICS_MS (40). Prints
// "ready PID" once the FIFO is open. On SIGUSR2 it prints
// "waits FIFO_MS ATOMICS_MS WALL_MS": the wall time really spent blocked in
// each so far (measured around the calls, not assumed), and the time since
// it started; with WAITS_AT_EXIT=1, also as it exits. SECONDS=N exits
// after N seconds.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { Worker } = require('worker_threads');

const FIFO_MS = Number(process.env.FIFO_MS || 150);
const ATOMICS_MS = Number(process.env.ATOMICS_MS || 40);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-offcpu-'));
const fifo = path.join(dir, 'fifo');
execFileSync('mkfifo', [fifo]);
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

// The writer: opens the FIFO (which waits for the reader), then a byte every FIFO_MS.
new Worker(`
  const fs = require('fs');
  const fd = fs.openSync(${JSON.stringify(fifo)}, 'w');
  setInterval(() => fs.writeSync(fd, 'x'), ${FIFO_MS});
`, { eval: true }).unref();
const fd = fs.openSync(fifo, 'r');
// Both ends are open: the FIFO needs no name now, and a target killed
// with SIGKILL (as tests end it) leaves nothing in the temporary directory.
fs.rmSync(dir, { recursive: true, force: true });

const started = process.hrtime.bigint();
const ms = (from) => Number(process.hrtime.bigint() - from) / 1e6;
const byte = Buffer.alloc(1);
const cell = new Int32Array(new SharedArrayBuffer(4));
let fifoMs = 0;
let atomicsMs = 0;

function waitForFifo() {
  const t = process.hrtime.bigint();
  fs.readSync(fd, byte, 0, 1, null);
  fifoMs += ms(t);
}

function sleepInAtomics() {
  const t = process.hrtime.bigint();
  Atomics.wait(cell, 0, 0, ATOMICS_MS);
  atomicsMs += ms(t);
}

function round() {
  waitForFifo();
  sleepInAtomics();
  setImmediate(round);
}

process.on('SIGUSR2', () => console.log(`waits ${fifoMs} ${atomicsMs} ${ms(started)}`));
if (process.env.WAITS_AT_EXIT) process.on('exit', () => console.log(`waits ${fifoMs} ${atomicsMs} ${ms(started)}`));
if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
console.log('ready ' + process.pid);
setImmediate(round);
