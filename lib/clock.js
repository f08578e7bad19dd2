'use strict';
// Clocks and waiting, for code that cannot be asynchronous.

// Kernel monotonic time (bpftrace's nsecs, process.hrtime) -> wall time:
// add this. Date.now() counts whole milliseconds, so one reading beside
// process.hrtime() is up to 1 ms early; a stall's end then printed up to
// 2 ms before the target's own clock had it (CI, 2026-11-29: a 5.26 ms spin
// ending 2 ms after the stall that held it). So the monotonic clock is read
// as Date.now() turns to its next millisecond, when the wall clock is that
// whole millisecond: off by one loop turn (well under 1 us) instead. The wait
// is at most 1 ms, bounded at 5 ms should the wall clock stand still.
function wallMinusMonoNs() {
  const first = Date.now();
  const giveUp = process.hrtime.bigint() + 5000000n;
  for (;;) {
    const mono = process.hrtime.bigint();
    const wall = Date.now();
    if (wall !== first || mono > giveUp) return BigInt(wall) * 1000000n - mono;
  }
}

// A kernel monotonic time (ns, a BigInt) as wall-clock milliseconds since
// the epoch, with the offset wallMinusMonoNs() measured (none: 0). Pure: what
// every report that prints a time of day takes its time from.
function monoToWallMs(ns, offsetNs) {
  return Number((ns + BigInt(offsetNs || 0n)) / 1000000n);
}

// Blocks the thread for `ms` (no busy-wait): for the few synchronous waits
// (a stopped process, a CPU sample of candidates).
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

module.exports = { wallMinusMonoNs, monoToWallMs, sleepSync };
