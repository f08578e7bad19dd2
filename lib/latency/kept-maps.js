'use strict';
// The traced process's memory map, refreshed while it runs, so that
// addresses the tracer could not name (bpftrace names usym() keys when it
// prints, from the live process) can still be named after a -c command or a
// target that exited is gone.
const { Symbolizer } = require('../symbolize');

class KeptMaps {
  // pidOf(): the process to watch now, or null (not known yet).
  constructor(pidOf) {
    this.pidOf = pidOf;
    this.symbolizer = new Symbolizer();
    this.latest = null;
    this.timer = null;
  }

  refresh() {
    const pid = this.pidOf();
    // Kinds are native functions: no perf map.
    const snap = pid && this.symbolizer.snapshot(pid, { perfMap: false });
    if (snap && snap.maps.length) this.latest = snap;
  }

  start() {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 1000);
    this.timer.unref();
  }

  stop() {
    clearInterval(this.timer);
  }

  // Kinds are keyed by return addresses (of the calls that queued work):
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

module.exports = { KeptMaps };
