'use strict';
// Clocks and waiting, for code that cannot be asynchronous.

// Kernel monotonic time (bpftrace's nsecs, process.hrtime) -> wall time:
// add this. Both clocks are read back to back.
function wallMinusMonoNs() {
  return BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
}

// Blocks the thread for `ms` (no busy-wait): for the few synchronous waits
// (a stopped process, a CPU sample of candidates).
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

module.exports = { wallMinusMonoNs, sleepSync };
