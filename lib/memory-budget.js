'use strict';
// One budget of memory for a whole run: the readers that keep large
// buffers of what others control (the symbolizer's tables, a core's notes)
// charge it for what they keep and release it when they drop it, so that
// together, not only each alone, they stay within LIMITS.RUN_MEMORY_BYTES
// (lib/limits.js, which says why that value). A charge past the total is
// refused: the reader then leaves that part out and says so in one line
// (overLimit), and the report goes on.
//
// The count lives in a SharedArrayBuffer: worker threads (ebadf's
// hit readers) are the same process, and charge the same budget
// (`joinRunBudget` with the main thread's `shared`).
const { LIMITS } = require('./limits');

class MemoryBudget {
  /** @param {number} totalBytes  @param {SharedArrayBuffer} [shared] another budget's count, to share it */
  constructor(totalBytes, shared = new SharedArrayBuffer(8)) {
    this.total = BigInt(totalBytes);
    this.shared = shared;
    this.cell = new BigInt64Array(shared);
  }

  /** Takes `bytes` if they fit under the total: true; else takes nothing: false. */
  charge(bytes) {
    const n = BigInt(Math.max(0, Math.ceil(bytes)));
    for (;;) {
      const held = Atomics.load(this.cell, 0);
      if (held + n > this.total) return false;
      if (Atomics.compareExchange(this.cell, 0, held, held + n) === held) return true;
    }
  }

  /** Gives back `bytes` charged before. */
  release(bytes) {
    const n = BigInt(Math.max(0, Math.ceil(bytes)));
    if (n > 0n) Atomics.sub(this.cell, 0, n);
  }

  held() {
    return Number(Atomics.load(this.cell, 0));
  }
}

let run = null;

/** The run's budget (LIMITS.RUN_MEMORY_BYTES), made on first use. */
function runBudget() {
  if (!run) run = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES);
  return run;
}

/** In a worker thread: the run's budget is the one whose `shared` count it was given. */
function joinRunBudget(shared) {
  run = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES, shared);
  return run;
}

module.exports = { MemoryBudget, runBudget, joinRunBudget };
