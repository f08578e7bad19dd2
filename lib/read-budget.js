'use strict';
// A budget of time for reading what other users control, that renews: at
// most `budgetMs` of reading within each window of `windowMs`, the window
// starting at the first read after the last one ended. A burst of hostile
// files gets the budget and no more; a command that follows new processes
// for hours (snoop '*', http NAME, probes) gets it again every window, where
// one budget per run was spent once and then read nothing new. Pure but for
// the clock, which a test may pass.

class RenewingBudget {
  /**
   * @param {object} o { budgetMs, windowMs, now: () => milliseconds
   *   (a monotonic clock; performance.now by default) }
   */
  constructor({ budgetMs, windowMs, now = () => performance.now() }) {
    this.budgetMs = budgetMs;
    this.windowMs = windowMs;
    this.now = now;
    this.windowStart = null;
    this.spentMs = 0;
  }

  // Starts a new window once the last one has ended.
  renew(at) {
    if (this.windowStart === null || at - this.windowStart >= this.windowMs) {
      this.windowStart = at;
      this.spentMs = 0;
    }
  }

  /**
   * null while reading is allowed; once this window's budget is spent,
   * { window: its number (one refusal said per window), renewsInMs }.
   */
  refusal() {
    const at = this.now();
    this.renew(at);
    if (this.spentMs < this.budgetMs) return null;
    return { window: this.windowStart, renewsInMs: Math.max(0, this.windowStart + this.windowMs - at) };
  }

  /** Runs read() and counts its time against the budget. */
  spend(read) {
    const started = this.now();
    this.renew(started);
    try {
      return read();
    } finally {
      this.spentMs += this.now() - started;
    }
  }
}

module.exports = { RenewingBudget };
