'use strict';
// Snapshots of a traced process (lib/symbolize.js: its memory map, and its
// perf map opened safely where asked), taken while it runs; the latest is
// kept, so that what the tracer printed as addresses can still be named after
// a -c command or a target that exited is gone. `latency` names its kinds
// (native return addresses, no perf map), `profile` its frames.
const { Symbolizer } = require('./symbolize');
const { ThreadRoster } = require('./threads/identify');

// Every 20 ms for the first 2 s: a -c command may live only that long. The
// pool mix (test/targets/pool-mix.js) lived about 150 ms after the attach;
// every 100 ms caught it once, 2 runs in 14 before its require('sqlite3'),
// and the add-on's work came out as bare addresses. A snapshot reads
// /proc/PID/maps (0.17 ms for 108 mappings, measured).
const FAST_SNAPSHOT_EVERY_MS = 20;
const FAST_SNAPSHOTS = 100;
// New threads are looked for at most this often (a listing of
// /proc/PID/task and a stat of each thread; the stack tops are read only
// when a thread is new).
const THREADS_EVERY_MS = 250;

class TargetSnapshots {
  /**
   * @param {function(): number|null} pidOf the process to watch now, or null (not known yet)
   * @param {object} [o] { perfMap: also open /tmp/perf-PID.map (JIT frames),
   *   threads: also identify its threads as they appear (lib/threads/identify.js) }
   */
  constructor(pidOf, { perfMap = false, threads = false } = {}) {
    this.pidOf = pidOf;
    this.perfMap = perfMap;
    this.withThreads = threads;
    this.threads = null;   // a ThreadRoster, with `threads`
    this.threadsAt = 0;
    this.symbolizer = new Symbolizer();
    this.latest = null;
    this.timer = null;
  }

  // -> whether the process was there to be read.
  refresh() {
    const pid = this.pidOf();
    if (!pid) return false;
    const snap = this.symbolizer.snapshot(pid, { perfMap: this.perfMap });
    if (!snap.maps.length) { this.symbolizer.release(snap); return false; }   // gone
    if (this.latest) this.symbolizer.release(this.latest);
    this.latest = snap;
    this.refreshThreads(pid);
    return true;
  }

  refreshThreads(pid, { now = false } = {}) {
    if (!this.withThreads || (!now && Date.now() - this.threadsAt < THREADS_EVERY_MS)) return;
    this.threadsAt = Date.now();
    if (!this.threads || this.threads.pid !== pid) {
      if (this.threads) this.threads.close();
      this.threads = new ThreadRoster(pid);
    }
    this.threads.refresh();
  }

  /** Every thread identified so far (lib/threads/identify.js), or [] (not asked for). */
  threadsSeen() {
    return this.threads ? this.threads.all() : [];
  }

  /** A thread's identity (lib/threads/identify.js), or null: not identified (or not asked for). */
  identityOf(tid) {
    return this.threads ? this.threads.identity(tid) : null;
  }

  // Every `everyMs`, and every 20 ms for the first seconds the process is
  // there: a -c command that runs for a second, and loads its add-ons as it
  // starts, must still be named (a snapshot taken before its dlopen() names
  // none of them). A second call does nothing.
  start(everyMs = 1000) {
    if (this.timer) return;
    this.refresh();
    let fast = FAST_SNAPSHOTS;
    this.timer = setInterval(() => {
      if (!this.refresh() || --fast > 0) return;
      clearInterval(this.timer);
      this.timer = setInterval(() => this.refresh(), everyMs);
      this.timer.unref();
    }, FAST_SNAPSHOT_EVERY_MS);
    this.timer.unref();
  }

  // One last snapshot: the newest perf map lines name the code that ran last.
  stop() {
    clearInterval(this.timer);
    this.refresh();
    const pid = this.pidOf();
    if (pid) this.refreshThreads(pid, { now: true });
  }

  release() {
    if (this.latest) this.symbolizer.release(this.latest);
    this.latest = null;
    if (this.threads) this.threads.close();
    this.symbolizer.close();
  }

  // For latency's kinds: return addresses (the calls that queued work), or
  // function entries (a work class's DoThreadPoolWork, libuv's work
  // functions), told apart by an address that starts a symbol exactly (a
  // return address never does: the call it follows is in the same function).
  // addresses -> Map(address -> name), or undefined when no map was kept.
  resolver() {
    if (!this.latest) return undefined;
    const snap = this.latest;
    return (addresses) => {
      const entries = this.symbolizer.symbolize(snap, addresses, { allPcs: true }).frames;
      const returns = this.symbolizer.symbolize(snap, addresses, { allReturnAddresses: true }).frames;
      return new Map(addresses.map((a, i) => [a, entries[i].symbol && entries[i].offset === 0 ? entries[i].symbol
        : returns[i].symbol])
        .filter(([, name]) => name));
    };
  }
}

module.exports = { TargetSnapshots };
