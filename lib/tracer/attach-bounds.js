'use strict';
// Every bound on attaching, in one table: how long attaching may go without
// attaching another probe before a run is given up and reported (the
// session counts it from the last probe attached: lib/tracer/session.js,
// lib/tracer/attach-progress.js). Each row says what it is for and why it
// is that long (docs/platforms.md, "bpftrace 0.17 attaches slowly" and
// "Learned 2026-11-27": attaching and detaching uprobes on a 100 MB node
// binary is slow, far slower on a busy host).
const { isDtraceForLinux } = require('./capabilities');

const ATTACH_BOUNDS_MS = Object.freeze({
  // Any program: the base.
  default: 20000,
  // DTrace for Linux attaches pid-provider probes slowly: 13 s for
  // addon-latency.d's six on a 2-core host, over 20 s when it is busy.
  dtraceForLinux: 90000,
  // latency: under the former 20 s, every run on the official 22/24/26
  // builds ended "did not attach its probes within 20 s" at load 15 to 40.
  latency: 60000,
  // gc and async: ten uprobes and more by name took over a minute on a
  // loaded host (bpftrace 0.17 reads the symbol table for each).
  gc: 180000,
  async: 180000,
  // http off the wire (http-wire.bt): bpftrace 0.17 took 8.1 s to compile
  // it (its kernel types, struct socket and tcp_sock, read from BTF) and
  // 14.4 s to attach its 23 probes at load 9 (2026-11-29); through
  // nodetrace at that load 22.5 s, and runs given up at 20 s with no probe
  // yet attached, still compiling (bench/attach-time.js's http row).
  httpWire: 60000,
  // bpftrace compiles a USDT program once per probe it matches: 35 s for 5
  // libraries (30 probes) on a loaded 2-core host, about 7 s a library
  // (snoop: six probes a library; http: two).
  usdtPerLibrarySnoop: 8000,
  usdtPerLibraryHttp: 4000,
  // nodetrace probes: one clause per probe, one program per site it
  // matches (the 30 probes above: about 1.2 s each).
  usdtPerSiteProbes: 2000,
});

/**
 * The bound for one run: `command` (a row above, or none: the default),
 * `libraries` (USDT commands: how many probe libraries it attaches to),
 * `sites` (probes: how many probe sites).
 */
function attachBoundMs(tracer, { command, libraries = 1, sites = 1 } = {}) {
  if (tracer && isDtraceForLinux(tracer)) return ATTACH_BOUNDS_MS.dtraceForLinux;
  if (command === 'probes') return ATTACH_BOUNDS_MS.default + ATTACH_BOUNDS_MS.usdtPerSiteProbes * Math.max(0, sites - 1);
  const extra = Math.max(0, libraries - 1);
  if (command === 'snoop') return ATTACH_BOUNDS_MS.default + ATTACH_BOUNDS_MS.usdtPerLibrarySnoop * extra;
  if (command === 'http') return ATTACH_BOUNDS_MS.default + ATTACH_BOUNDS_MS.usdtPerLibraryHttp * extra;
  return ATTACH_BOUNDS_MS[command] || ATTACH_BOUNDS_MS.default;
}

module.exports = { ATTACH_BOUNDS_MS, attachBoundMs };
