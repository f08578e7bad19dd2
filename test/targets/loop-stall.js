'use strict';
// For test/loop.test.js: blocks its event loop with a busy-wait of a known
// length at a steady interval (defaults: 200 ms every second), so that the
// stalls `nodetrace loop` reports can be checked against what really
// happened. --stacks names spinTheLoop with no flag, from V8's metadata.
//   LOOP_STALL_MS     how long each busy-wait lasts
//   LOOP_INTERVAL_MS  how often one starts
//   LOOP_IN_WORKER    1: the stalls are a worker_threads Worker's (named
//                     "stall"), the main loop idles. At the end of each
//                     stall the Worker notes its own eventLoopUtilization()
//                     active time so far (from one stall's end to the next:
//                     that turn's busy time, from its wait's end, and the
//                     little the loop does between). The main thread
//                     answers SIGUSR2 with "elu ACTIVE_MS TID THREAD_ID"
//                     (the Worker's active time so far, its TID, its
//                     threadId), then "stalls END:ACTIVE_MS ..." (its last
//                     64 stalls: when each ended, Date.now(), and the
//                     active time then)
//   LOOP_STALLS_ON_SIGNAL  N: no steady stalls; each SIGUSR2 runs N of
//                     LOOP_STALL_MS, each a turn of its own, then prints
//                     "burst K: stalls N" (its stalls since its start;
//                     test/loop-prometheus.test.js)
const { Worker, isMainThread } = require('worker_threads');

const STALL_MS = Number(process.env.LOOP_STALL_MS || 200);
const INTERVAL_MS = Number(process.env.LOOP_INTERVAL_MS || 1000);

function spinTheLoop(ms) {
  const until = process.hrtime.bigint() + BigInt(ms) * 1000000n;
  let x = 0;
  while (process.hrtime.bigint() < until) x++;
  return x;
}

const STALLS_KEPT = 64;

// Stalls on demand, each counted by the process itself.
function stallsOnSignal(perBurst) {
  let stalls = 0;
  let bursts = 0;
  process.on('SIGUSR2', () => {
    const n = ++bursts;
    let left = perBurst;
    const next = () => {
      if (left-- === 0) { process.stdout.write(`burst ${n}: stalls ${stalls}\n`); return; }
      spinTheLoop(STALL_MS);
      stalls++;
      setTimeout(next, 20);
    };
    setTimeout(next, 20);
  });
  setInterval(() => {}, 1000);
}

if (process.env.LOOP_STALLS_ON_SIGNAL) {
  stallsOnSignal(Number(process.env.LOOP_STALLS_ON_SIGNAL));
  process.stdout.write(`ready ${process.pid}\n`);
} else if (process.env.LOOP_IN_WORKER !== '1') {
  setInterval(() => spinTheLoop(STALL_MS), INTERVAL_MS);
  process.stdout.write(`ready ${process.pid}\n`);
} else if (!isMainThread) {
  const { parentPort, workerData } = require('worker_threads');
  // [0] stalls so far, then (end, active ms) for the last STALLS_KEPT.
  const log = new Float64Array(workerData);
  setInterval(() => {
    spinTheLoop(STALL_MS);
    const at = (log[0] % STALLS_KEPT) * 2 + 1;
    log[at + 1] = performance.eventLoopUtilization().active;
    log[at] = Date.now();
    log[0]++;
  }, INTERVAL_MS);
  parentPort.postMessage(Number(require('fs').readlinkSync('/proc/thread-self').split('/').pop()));
} else {
  const log = new Float64Array(new SharedArrayBuffer(8 * (1 + 2 * STALLS_KEPT)));
  const worker = new Worker(__filename, { name: 'stall', workerData: log.buffer });
  worker.on('error', (err) => { console.error(err); process.exit(1); });
  worker.once('message', (tid) => {
    process.on('SIGUSR2', () => {
      console.log(`elu ${worker.performance.eventLoopUtilization().active} ${tid} ${worker.threadId}`);
      const stalls = [];
      for (let i = 0; i < Math.min(log[0], STALLS_KEPT); i++) stalls.push(`${log[2 * i + 1]}:${log[2 * i + 2]}`);
      stalls.sort((a, b) => Number(a.split(':')[0]) - Number(b.split(':')[0]));
      console.log(`stalls ${stalls.join(' ')}`);
    });
    process.stdout.write(`ready ${process.pid}\n`);
  });
  setInterval(() => {}, 1000);
}
