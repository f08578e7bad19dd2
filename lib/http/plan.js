'use strict';
// The tracer run of `nodetrace http` for resolved targets
// (lib/probe-libraries/probe-targets.js). Pure.
const { planTracer, inTemp, BATCH_QUIESCE } = require('../tracer/plan');
const { attachBoundMs } = require('../tracer/attach-bounds');
const { usdtPathForPid, stringLimitEnv, filtersEveryProbeByPid } = require('../tracer/capabilities');
const { libraryLinks } = require('../probe-libraries/probe-targets');
const { isMapFile } = require('../probe-libraries');

// Requests are handed over in batches (d-scripts/http-batched.bt), on every
// bpftrace: an output event per request (d-scripts/http.bt, kept for reading
// by eye) costs the traced process a wakeup of bpftrace, 20-45 µs a request
// on this VM (docs/performance.md).
const SCRIPT = 'http';
const BATCHED_SCRIPT = 'http-batched';
const URL_BYTES = 200;
// d-scripts/http.bt filters on PID and up to 7 more (MORE_PIDS); with more
// processes than that, it traces every process mapping the libraries and
// nodetrace drops the others' requests.
const PID_SLOTS = 8;

/**
 * -> a plan (lib/tracer/plan.js), plus `only`: the PIDs nodetrace itself must
 *    keep requests of (null: all), when there are more than the slots.
 * One process with one library is traced with -p (only its probes'
 * semaphores are enabled); otherwise the libraries are attached by path
 * (through verified descriptors, `opened`: path -> fd), which enables the
 * semaphores of every process mapping them and keeps only the targets'
 * requests in the kernel.
 */
function planHttp(tracer, targets, minUs, { opened = new Map() } = {}) {
  const libs = targets.libraries;
  const overflow = targets.kind === 'pids' && targets.pids.length > PID_SLOTS;
  const pids = targets.kind === 'pids' && !overflow ? targets.pids : [];
  const bpftrace = tracer.name === 'bpftrace';
  const o = {
    script: bpftrace ? BATCHED_SCRIPT : SCRIPT,
    env: stringLimitEnv(tracer, URL_BYTES),
    output: bpftrace ? 'json' : 'text',
    describe: `HTTP requests of ${targets.describe}`,
    notes: [],
  };
  if (overflow) o.notes.push(`more than ${PID_SLOTS} processes: nodetrace drops the requests of the others`);
  // Not for a library named by its mapping (a container's): given -p, bpftrace
  // would put the process's root in front of it (lib/tracer/capabilities.js).
  if (pids.length === 1 && libs.length === 1 && !isMapFile(libs[0])) {
    o.pid = pids[0];
    o.args = { LIBRARY: usdtPathForPid(tracer, pids[0], libs[0]), PID: pids[0], MIN_US: minUs };
  } else {
    // The processes started later that map these files are covered too ('*').
    const one = libs.length === 1 && !opened.has(libs[0]);
    if (!one) {
      o.links = libraryLinks(libs, opened);
      if (libs.some((file) => !opened.has(file))) o.notes.push('nodetrace links to its own verified descriptor of each library; by hand, to the files');
    }
    // Every slot given (MORE_PIDS fills with 0): bpftrace 0.27 warns of each one left out.
    o.args = { LIBRARY: one ? libs[0] : inTemp('*.so'), PID: pids[0] || 0, MIN_US: minUs, MORE_PIDS: pids.slice(1) };
    // The bound grows with the libraries (lib/tracer/attach-bounds.js).
    o.attachTimeoutMs = attachBoundMs(tracer, { command: 'http', libraries: libs.length });
  }
  o.only = overflow ? new Set(targets.pids) : null;
  // bpftrace: stop the probes first (http-batched.bt prints what the batch
  // maps hold, then "Tracing stopped."), end bpftrace once that is read: it
  // discards what it has not read when its end signal arrives. As snoop's
  // (lib/snoop/plan.js), not where -p on 0.24+ filters out the signal's
  // tracepoint in nodetrace's context.
  if (bpftrace && !(o.pid && filtersEveryProbeByPid(tracer))) o.quiesce = BATCH_QUIESCE;
  return planTracer(tracer, o);
}

module.exports = { SCRIPT, BATCHED_SCRIPT, PID_SLOTS, planHttp };
