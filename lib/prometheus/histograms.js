'use strict';
// bpftrace's hist() as Prometheus histograms, and the bound on how many
// keys (kinds, routes) get series of their own. Pure.
const { estimatedTotal, totalCount } = require('../aggregation/model');
const { NS_PER } = require('../render/units');

// The `le` bounds, in seconds: powers of two microseconds, 1 µs to 2^27 µs
// (134 s), the bounds of bpftrace's hist() of microseconds; one fixed set
// for every series and scrape. A value above the last is in +Inf only.
const LADDER_NS = Array.from({ length: 28 }, (_, k) => (2 ** k) * 1000);
const LADDER_SECONDS = LADDER_NS.map((ns) => ns / 1e9);

// An entry's counts on the ladder: cumulative counts of values ≤ each bound.
// A bucket [lo, hi) counts at the first bound ≥ hi (every value in it is
// below hi); one with no upper bound, or above the last, in +Inf only.
function onLadder(entry, unit) {
  const per = NS_PER[unit] || 1;
  const counts = LADDER_NS.map(() => 0n);
  for (const b of entry.buckets) {
    if (b.count <= 0n || b.hi === null) continue;
    const at = LADDER_NS.findIndex((bound) => Number(b.hi) * per <= bound);
    if (at >= 0) counts[at] += b.count;
  }
  let running = 0n;
  return counts.map((n) => (running += n));
}

/**
 * A histogram entry of lib/aggregation's model (a hist() of `unit`) ->
 * { ladder, sumSeconds, count }. The sum is estimated from the buckets (each
 * value at its bucket's midpoint): the programs keep no exact sum.
 */
function histogramOf(entry, unit) {
  return {
    ladder: onLadder(entry, unit),
    sumSeconds: (estimatedTotal(entry) * (NS_PER[unit] || 1)) / 1e9,
    count: totalCount(entry),
  };
}

/** Two histograms' sum (a folded key's); `a` may be undefined. */
function addHistograms(a, b) {
  if (!a) return b;
  return {
    ladder: a.ladder.map((n, i) => n + b.ladder[i]),
    sumSeconds: a.sumSeconds + b.sumSeconds,
    count: a.count + b.count,
  };
}

/** [[le, cumulative count], ...] for exposition's histogramSeries. */
function ladderPairs(h) {
  return LADDER_SECONDS.map((bound, i) => [bound, h.ladder[i]]);
}

/**
 * The keys that keep series of their own: those admitted before, then new
 * ones in the order given, up to `max`. A key once admitted keeps its
 * series for the whole run; a later one is folded into an overflow series,
 * so that no series ever goes backwards.
 */
function admitKeys(admitted, names, max) {
  const out = admitted.slice();
  for (const name of names) if (out.length < max && !out.includes(name)) out.push(name);
  return out;
}

// Kinds shown, each its own series (latency's functions, async's
// providers and a process's own AsyncResource types): the programs' maps
// are bounded by bpftrace's map keys (4,096), a scraper's storage should be
// bounded far lower. Later kinds are added into OTHER_KINDS.
const MAX_KINDS = 100;
const OTHER_KINDS = '(other kinds)';

/**
 * items grouped by series: each item under its kind where the kind is
 * admitted (admitKeys: those before, then new ones up to `max`), else under
 * OTHER_KINDS. -> { groups: Map(series name -> [item, ...]), admitted }.
 */
function groupByAdmittedKind(items, kindOf, { admitted = [], max = MAX_KINDS } = {}) {
  const nowAdmitted = admitKeys(admitted, items.map(kindOf), max);
  const shown = new Set(nowAdmitted);
  const groups = new Map();
  for (const item of items) {
    const name = shown.has(kindOf(item)) ? kindOf(item) : OTHER_KINDS;
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(item);
  }
  return { groups, admitted: nowAdmitted };
}

module.exports = {
  LADDER_NS, LADDER_SECONDS, MAX_KINDS, OTHER_KINDS,
  histogramOf, addHistograms, ladderPairs, admitKeys, groupByAdmittedKind,
};
