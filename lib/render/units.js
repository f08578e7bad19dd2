'use strict';
// Human time units for the text report: each number gets the unit that keeps
// it small (4096 ns -> "4.1 µs"), so a histogram spanning microseconds to
// seconds stays readable.  Values without a known unit keep bpftrace's style
// of powers-of-1024 suffixes ("16K").

const NS_PER = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
const LARGEST_FIRST = ['s', 'ms', 'us', 'ns'];

function unitLabel(unit, { ascii = false } = {}) {
  if (unit === 'us') return ascii ? 'us' : '\u00b5s';
  return unit;
}

function toNanoseconds(value, unit) {
  return Number(value) * NS_PER[unit];
}

/** The largest unit in which |ns| is at least 1 (so at most 3 digits before the point, except seconds). */
function chooseUnit(ns) {
  const magnitude = Math.abs(ns);
  return LARGEST_FIRST.find((unit) => magnitude >= NS_PER[unit]) || 'ns';
}

// Two significant digits below 10 (4.1), whole numbers above (16, 262).
function formatNumber(x) {
  const magnitude = Math.abs(x);
  if (magnitude !== 0 && magnitude < 10) return String(Math.round(x * 10) / 10);
  return String(Math.round(x));
}

const SUFFIXES = ['', 'K', 'M', 'G', 'T', 'P', 'E'];

/** A unitless value in bpftrace's style: 16384 -> "16K", 1536 -> "1.5K". */
function formatPlain(value) {
  let x = Number(value);
  let i = 0;
  while (Math.abs(x) >= 1024 && i < SUFFIXES.length - 1) {
    x /= 1024;
    i++;
  }
  return formatNumber(x) + SUFFIXES[i];
}

/**
 * formatDuration(value, unit, { ascii }) -> "7.4 µs".  `value` is in `unit`
 * ('ns'|'us'|'ms'|'s'); a null unit prints the plain value ("16K").
 */
function formatDuration(value, unit, options = {}) {
  if (value === null || value === undefined) return '-';
  if (!unit) return formatPlain(value);
  const ns = toNanoseconds(value, unit);
  const shown = chooseUnit(ns);
  return `${formatNumber(ns / NS_PER[shown])} ${unitLabel(shown, options)}`;
}

/**
 * A bucket's bounds [lo, hi) in one unit: "4.1–8.2 µs", "< 0 ns", "≥ 100 ms".
 * The unit is chosen from the lower bound (from the upper one when the lower
 * is 0 or open), so both numbers read on the same scale.
 */
function formatRange(lo, hi, unit, options = {}) {
  const dash = options.ascii ? '-' : '\u2013';
  const atLeast = options.ascii ? '>=' : '\u2265';
  if (!unit) {
    if (lo === null) return `< ${formatPlain(hi)}`;
    if (hi === null) return `${atLeast} ${formatPlain(lo)}`;
    return `${formatPlain(lo)}${dash}${formatPlain(hi)}`;
  }
  if (lo === null) return `< ${formatDuration(hi, unit, options)}`;
  if (hi === null) return `${atLeast} ${formatDuration(lo, unit, options)}`;
  const anchor = Number(lo) !== 0 ? toNanoseconds(lo, unit) : toNanoseconds(hi, unit);
  const shown = chooseUnit(anchor);
  const scale = NS_PER[shown];
  const format = (v) => formatNumber(toNanoseconds(v, unit) / scale);
  return `${format(lo)}${dash}${format(hi)} ${unitLabel(shown, options)}`;
}

/** A share as a whole percentage, "<1%" for small non-zero shares. */
function formatPercent(fraction) {
  if (fraction === null || !Number.isFinite(fraction)) return '-';
  const percent = fraction * 100;
  if (percent > 0 && percent < 1) return '<1%';
  return `${Math.round(percent)}%`;
}

module.exports = {
  NS_PER,
  unitLabel,
  toNanoseconds,
  chooseUnit,
  formatNumber,
  formatPlain,
  formatDuration,
  formatRange,
  formatPercent,
};
