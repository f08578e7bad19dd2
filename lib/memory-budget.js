'use strict';
// One budget of memory for a whole run: the readers that keep large
// buffers of what others control (the symbolizer's tables, a core's notes,
// parsed source maps) charge it for what they keep and release it when they
// drop it, so that together, not only each alone, they stay within
// LIMITS.RUN_MEMORY_BYTES (lib/limits.js, which says why that value). A
// charge past the total is refused: the reader then leaves that part out and
// says so in one line (overLimit), and the report goes on.
//
// The count lives in a SharedArrayBuffer: worker threads (ebadf's
// hit readers) are the same process, and charge the same budget
// (`joinRunBudget` with the main thread's `shared`). A worker can be
// terminated in the middle of a read, before it gives anything back: what
// it holds is also kept in a ledger of its own, which the thread that
// started it releases when it exits (`releaseLedger`).
const { LIMITS, formatBytes } = require('./limits');

class MemoryBudget {
  /**
   * @param {number} totalBytes
   * @param {SharedArrayBuffer} [shared] another budget's count, to share it
   * @param {SharedArrayBuffer} [ledger] where this thread's own part of it is kept
   */
  constructor(totalBytes, shared = new SharedArrayBuffer(8), ledger = null) {
    this.total = BigInt(totalBytes);
    this.shared = shared;
    this.cell = new BigInt64Array(shared);
    this.ledger = ledger ? new BigInt64Array(ledger) : null;
  }

  /** Takes `bytes` if they fit under the total: true; else takes nothing: false. */
  charge(bytes) {
    const n = BigInt(Math.max(0, Math.ceil(bytes)));
    for (;;) {
      const held = Atomics.load(this.cell, 0);
      if (held + n > this.total) return false;
      if (Atomics.compareExchange(this.cell, 0, held, held + n) === held) {
        if (this.ledger) Atomics.add(this.ledger, 0, n);
        return true;
      }
    }
  }

  /** Gives back `bytes` charged before. */
  release(bytes) {
    const n = BigInt(Math.max(0, Math.ceil(bytes)));
    if (n <= 0n) return;
    Atomics.sub(this.cell, 0, n);
    if (this.ledger) Atomics.sub(this.ledger, 0, n);
  }

  held() {
    return Number(Atomics.load(this.cell, 0));
  }

  /** The end of a refusal's line: the bound, and what is held already. */
  refusal() {
    return `nodetrace's memory for this run is bounded to ${formatBytes(Number(this.total))}, and ${formatBytes(this.held())} of it is held already`;
  }

  /** What a thread that exited without releasing held, per its ledger: given back. */
  releaseLedger(ledger) {
    const cell = new BigInt64Array(ledger);
    const n = Atomics.exchange(cell, 0, 0n);
    if (n > 0n) Atomics.sub(this.cell, 0, n);
  }
}

let run = null;

/** The run's budget (LIMITS.RUN_MEMORY_BYTES), made on first use. */
function runBudget() {
  if (!run) run = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES);
  return run;
}

/**
 * In a worker thread: the run's budget is the one whose `shared` count it
 * was given; `ledger` (a SharedArrayBuffer of 8 bytes) keeps this thread's
 * part, for releaseLedger once it exits.
 */
function joinRunBudget(shared, ledger = null) {
  run = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES, shared, ledger);
  return run;
}

module.exports = { MemoryBudget, runBudget, joinRunBudget };
