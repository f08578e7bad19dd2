'use strict';
// bunyan's levels, and which of its probes (log-trace ... log-fatal) a
// minimum level enables, spelled for each tracer. Pure.
const { UsageError } = require('../errors');

const LEVELS = Object.freeze({ trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 });
const NAMES = Object.keys(LEVELS);

// bpftrace: six probe slots (d-scripts/log-snoop.bt $2..$7), each an exact
// probe name or NONE, a wildcard that matches no probe.
const NONE = 'none*';

// DTrace: one probe-name glob (d-scripts/log-snoop.d $2), DTrace globs
// having character classes.
const DTRACE_GLOB = Object.freeze({
  10: 'log-*', 20: 'log-[!t]*', 30: 'log-[iwef]*', 40: 'log-[wef]*', 50: 'log-[ef]*', 60: 'log-fatal',
});

// "warn", "WARN", "40", 35 -> the lowest bunyan level at or above it.
// Like `bunyan -l`, a number between levels means the next level up.
function parseLevel(value) {
  if (value === undefined || value === null || value === '') return LEVELS.trace;
  const s = String(value).trim().toLowerCase();
  let n;
  if (Object.prototype.hasOwnProperty.call(LEVELS, s)) n = LEVELS[s];
  else if (/^[0-9]{1,3}$/.test(s)) n = Number(s);
  else throw new UsageError(`-l expects a bunyan level (${NAMES.join(', ')}) or a number, not "${value}".`);
  const level = NAMES.map((k) => LEVELS[k]).find((l) => l >= n);
  if (level === undefined) throw new UsageError(`-l ${value} is above fatal (60): no record would match.`);
  return level;
}

function levelName(level) {
  return NAMES.find((k) => LEVELS[k] === level) || String(level);
}

// Probe names enabled for a minimum level.
function probeNames(minLevel) {
  return NAMES.filter((k) => LEVELS[k] >= minLevel).map((k) => 'log-' + k);
}

function bpftraceProbeSlots(minLevel) {
  const names = minLevel <= LEVELS.trace ? ['log-*'] : probeNames(minLevel);
  return names.concat(Array(6 - names.length).fill(NONE));
}

function dtraceProbeGlob(minLevel) {
  return DTRACE_GLOB[minLevel];
}

module.exports = { LEVELS, NONE, parseLevel, levelName, probeNames, bpftraceProbeSlots, dtraceProbeGlob };
