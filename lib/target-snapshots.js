'use strict';
// Snapshots of a traced process (lib/symbolize.js: its memory map, and its
// perf map opened safely where asked), taken while it runs; the latest is
// kept, so that what the tracer printed as addresses can still be named after
// a -c command or a target that exited is gone. `latency` names its kinds
// (native return addresses, no perf map), `profile` its frames.
const { Symbolizer } = require('./symbolize');

class TargetSnapshots {
  /**
   * @param {function(): number|null} pidOf the process to watch now, or null (not known yet)
   * @param {object} [o] { perfMap: also open /tmp/perf-PID.map (JIT frames) }
   */
  constructor(pidOf, { perfMap = false } = {}) {
    this.pidOf = pidOf;
    this.perfMap = perfMap;
    this.symbolizer = new Symbolizer();
    this.latest = null;
    this.timer = null;
  }

  refresh() {
    const pid = this.pidOf();
    if (!pid) return;
    const snap = this.symbolizer.snapshot(pid, { perfMap: this.perfMap });
    if (!snap.maps.length) { this.symbolizer.release(snap); return; }   // gone
    if (this.latest) this.symbolizer.release(this.latest);
    this.latest = snap;
  }

  start(everyMs = 1000) {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), everyMs);
    this.timer.unref();
  }

  // One last snapshot: the newest perf map lines name the code that ran last.
  stop() {
    clearInterval(this.timer);
    this.refresh();
  }

  release() {
    if (this.latest) this.symbolizer.release(this.latest);
    this.latest = null;
  }

  // For return addresses (latency's kinds: the calls that queued work):
  // addresses -> Map(address -> name), or undefined when no map was kept.
  resolver() {
    if (!this.latest) return undefined;
    const snap = this.latest;
    return (addresses) => {
      const { frames } = this.symbolizer.symbolize(snap, addresses, { allReturnAddresses: true });
      return new Map(addresses.map((a, i) => [a, frames[i].symbol]).filter(([, name]) => name));
    };
  }
}

module.exports = { TargetSnapshots };
