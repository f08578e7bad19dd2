'use strict';
// The tracer run for resolved snoop targets (lib/snoop/targets.js). Pure.
const { planTracer, inTemp, BATCH_QUIESCE } = require('../tracer/plan');
const { attachBoundMs } = require('../tracer/attach-bounds');
const { libraryLinks } = require('../probe-libraries/probe-targets');
const { isMapFile } = require('../probe-libraries');
const { bpftraceProbeSlots, dtraceProbeGlob, levelName } = require('./levels');
const { stringLimitEnv, stringTrailerEnv, readsLongStrings, usdtPathForPid, filtersEveryProbeByPid, quietMapHelperArgs } = require('../tracer/capabilities');

const SCRIPT = 'log-snoop';
const WHOLE_SCRIPT = 'log-snoop-whole';
// d-scripts/log-snoop.bt filters on up to 8 PIDs (PIDS) and log-snoop.d
// takes up to 8 providers; with more, every bunyan process is traced and
// the others' records are dropped by nodetrace.
const PID_SLOTS = 8;
// log-snoop.bt reads a record in 200-byte strings (bpftrace 0.17's most):
// pieces of 199 bytes. Where bpftrace copies long strings,
// log-snoop-whole.bt reads it in one string of 4,180 bytes (the same 4,179
// bytes 21 pieces bring). The limit goes by the name the version reads, and
// with no trailer appended to a string cut short (0.23+ would add "..").
const PIECE_STRLEN = 200;
const WHOLE_STRLEN = 4180;
//
// The scripts keep records in maps and print them in batches (every 100 ms):
// what the logging thread pays is a map update, not an output event and the
// reader's wake-up. bpftrace's default of 4,096 keys a map bounds a batch:
// 4,096 pieces (0.17) or records (whole) per 100 ms; beyond, records are
// dropped and counted lost. A full map is expected and counted that way, so
// bpftrace's own check of every map update (0.23+) is turned off.
const BATCH_ENTRIES = 4096;
function bpftraceRecordReading(tracer) {
  const whole = readsLongStrings(tracer, WHOLE_STRLEN);
  const strlen = whole ? WHOLE_STRLEN : PIECE_STRLEN;
  return {
    script: whole ? WHOLE_SCRIPT : SCRIPT,
    pieceBytes: strlen - 1,
    env: { ...stringLimitEnv(tracer, strlen), ...stringTrailerEnv(tracer) },
    extra: quietMapHelperArgs(tracer),
  };
}

function levelPhrase(minLevel) {
  return minLevel <= 10 ? 'all levels' : `${levelName(minLevel)} and up`;
}

/**
 * -> a plan (lib/tracer/plan.js), plus `only`: the PIDs nodetrace itself must
 *    keep records of (null: all), when there are more than the program's slots.
 * bpftrace takes one library path, but globs it: libraries are linked from
 * the run's private directory and named by a glob. `opened` (path -> fd):
 * libraries nodetrace has opened and verified (probe-libraries.openVerified);
 * their links point at /proc/<nodetrace>/fd/<fd>, that very file, so a file
 * swapped in at the path later (a FIFO, to hang the tracer) is never opened.
 * One process is traced with -p instead (only its probes are enabled, not
 * those of every process mapping the library), where bpftrace resolves the
 * path itself: the library's owner is then the traced process's user, and a
 * swapped file costs at most the bounded attach time.
 */
function planSnoop(tracer, targets, minLevel, { opened = new Map() } = {}) {
  const overflow = targets.kind === 'pids' && targets.pids.length > PID_SLOTS;
  const slotPids = targets.kind === 'pids' && !overflow ? targets.pids : [];
  const o = { script: SCRIPT, describe: `${targets.describe}, ${levelPhrase(minLevel)}` };
  let pieceBytes;
  if (overflow) o.notes = [`more than ${PID_SLOTS} processes: nodetrace drops the records of the others`];
  if (tracer.name === 'bpftrace') {
    const libs = targets.libraries;
    // Not for a library named by its mapping (a container's): given -p,
    // bpftrace would put the process's root in front of it (lib/tracer/capabilities.js).
    const one = slotPids.length === 1 && libs.length === 1 && !isMapFile(libs[0]);
    if (!one) {
      o.links = libraryLinks(libs, opened);
      if (libs.some((file) => !opened.has(file))) o.notes = [...(o.notes || []), 'nodetrace links to its own verified descriptor of each library; by hand, to the files'];
    }
    o.args = { LIBRARY: one ? usdtPathForPid(tracer, slotPids[0], libs[0]) : inTemp('*.so'), PROBES: bpftraceProbeSlots(minLevel) };
    if (slotPids.length) o.args.PIDS = slotPids;
    if (one) o.pid = slotPids[0];
    const reading = bpftraceRecordReading(tracer);
    o.script = reading.script;
    o.env = reading.env;
    o.extra = reading.extra;
    pieceBytes = reading.pieceBytes;
    // The bound grows with the libraries (lib/tracer/attach-bounds.js).
    o.attachTimeoutMs = attachBoundMs(tracer, { command: 'snoop', libraries: libs.length });
    // Records are text the traced processes wrote: JSON keeps them in their place.
    o.output = 'json';
  } else {
    o.output = 'records';
    const glob = dtraceProbeGlob(minLevel);
    o.args = slotPids.length ? { TARGET: slotPids[0], PROBES: glob, MORE_PIDS: slotPids.slice(1) } : { TARGET: '*', PROBES: glob };
  }
  o.only = overflow ? new Set(targets.pids) : null;
  o.details = {
    pieceBytes,   // bpftrace: how long the script's pieces are (lib/snoop/reassemble.js)
    // bpftrace: the most entries a batch map holds; a full one lost records.
    batchEntries: tracer.name === 'bpftrace' ? BATCH_ENTRIES : null,
  };
  // bpftrace: stop the records first, end bpftrace once they are read
  // (lib/tracer/session.js). The script hears the signal at a tracepoint in
  // nodetrace's context, which -p on 0.24+ filters out: there bpftrace is
  // ended at once, and may discard the last records it had not read.
  if (tracer.name === 'bpftrace' && !(o.pid && filtersEveryProbeByPid(tracer))) {
    o.quiesce = BATCH_QUIESCE;
  }
  return planTracer(tracer, o);
}

module.exports = { SCRIPT, WHOLE_SCRIPT, PID_SLOTS, BATCH_ENTRIES, planSnoop, levelPhrase };
