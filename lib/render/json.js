'use strict';
// Numbers in the machine-readable reports (`--json`): the model's counts and
// values are BigInt (lib/aggregation/model.js), which JSON cannot carry, and
// its percentiles are estimates.

/** A BigInt as a JSON number when exact, else as its decimal string; null stays null. */
function jsonInteger(value) {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && BigInt(n) === value ? n : value.toString();
}

/** An estimate (a percentile from buckets, a share) to three decimals: plenty; null stays null. */
function jsonEstimate(value) {
  return value === null ? null : Math.round(value * 1000) / 1000;
}

/** A distribution entry's buckets, every one, as [{ lo, hi, count }] (open bounds null). */
function jsonHistogram(entry) {
  return entry.buckets.map((b) => ({ lo: jsonInteger(b.lo), hi: jsonInteger(b.hi), count: jsonInteger(b.count) }));
}

module.exports = { jsonInteger, jsonEstimate, jsonHistogram };
