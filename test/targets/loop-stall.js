'use strict';
// For test/loop.test.js: blocks its event loop with a busy-wait of a known
// length at a steady interval (defaults: 200 ms every second), so that the
// stalls `nodetrace loop` reports can be checked against what really
// happened. --stacks names spinTheLoop with no flag, from V8's metadata.
//   LOOP_STALL_MS     how long each busy-wait lasts
//   LOOP_INTERVAL_MS  how often one starts
//   LOOP_IN_WORKER    1: the stalls are a worker_threads Worker's (named
//                     "stall"), the main loop idles; the main thread answers
//                     SIGUSR2 with "elu ACTIVE_MS TID THREAD_ID": the
//                     Worker's own eventLoopUtilization() active time so
//                     far, its TID and its threadId
const { Worker, isMainThread } = require('worker_threads');

const STALL_MS = Number(process.env.LOOP_STALL_MS || 200);
const INTERVAL_MS = Number(process.env.LOOP_INTERVAL_MS || 1000);

function spinTheLoop(ms) {
  const until = process.hrtime.bigint() + BigInt(ms) * 1000000n;
  let x = 0;
  while (process.hrtime.bigint() < until) x++;
  return x;
}

if (process.env.LOOP_IN_WORKER !== '1' || !isMainThread) {
  setInterval(() => spinTheLoop(STALL_MS), INTERVAL_MS);
  if (isMainThread) process.stdout.write(`ready ${process.pid}\n`);
  else require('worker_threads').parentPort.postMessage(Number(require('fs').readlinkSync('/proc/thread-self').split('/').pop()));
} else {
  const worker = new Worker(__filename, { name: 'stall' });
  worker.on('error', (err) => { console.error(err); process.exit(1); });
  worker.once('message', (tid) => {
    process.on('SIGUSR2', () => console.log(`elu ${worker.performance.eventLoopUtilization().active} ${tid} ${worker.threadId}`));
    process.stdout.write(`ready ${process.pid}\n`);
  });
  setInterval(() => {}, 1000);
}
