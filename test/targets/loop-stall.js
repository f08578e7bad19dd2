'use strict';
// For test/loop.test.js: blocks its event loop with a busy-wait of a known
// length at a steady interval (defaults: 200 ms every second), so that the
// stalls `nodetrace loop` reports can be checked against what really
// happened. --stacks names spinTheLoop with no flag, from V8's metadata.
//   LOOP_STALL_MS     how long each busy-wait lasts
//   LOOP_INTERVAL_MS  how often one starts
const STALL_MS = Number(process.env.LOOP_STALL_MS || 200);
const INTERVAL_MS = Number(process.env.LOOP_INTERVAL_MS || 1000);

function spinTheLoop(ms) {
  const until = process.hrtime.bigint() + BigInt(ms) * 1000000n;
  let x = 0;
  while (process.hrtime.bigint() < until) x++;
  return x;
}

setInterval(() => spinTheLoop(STALL_MS), INTERVAL_MS);
process.stdout.write(`ready ${process.pid}\n`);
