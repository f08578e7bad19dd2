'use strict';
// Histograms of several reports added into one, exactly: a bucket's counts
// are added only to a bucket with the same bounds, and two histograms whose
// buckets overlap without being the same (power-of-two buckets against
// log-linear ones, DTrace's llquantize against bpftrace's hist) are refused,
// never spread over each other's buckets. The buckets are the reports'
// `[{ lo, hi, count }]` (docs/json-format.md: integers as JSON numbers, or
// decimal strings past 2^53; an open bound null); the sums are BigInt, so
// 64-bit counts add exactly. Pure.
const { percentile } = require('../aggregation/model');
const { jsonInteger, jsonEstimate } = require('../render/json');

class MergeError extends Error {}

const INTEGER = /^-?[0-9]{1,20}$/;

/** A report's integer (a JSON number, or a decimal string) -> BigInt; null stays null; else throws `what`. */
function toBigInt(value, what, { nullable = false } = {}) {
  if (value === null && nullable) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && INTEGER.test(value)) return BigInt(value);
  throw new MergeError(`${what} is not an integer`);
}

/** A report's bucket list -> [{ lo, hi, count }] (BigInt; open bounds null), in order, checked. */
function readBuckets(list, what, { maxBuckets }) {
  if (!Array.isArray(list)) throw new MergeError(`${what} is not a list of buckets`);
  if (list.length > maxBuckets) throw new MergeError(`${what} has ${list.length} buckets, more than the ${maxBuckets} a report has`);
  const buckets = list.map((b, i) => {
    if (!b || typeof b !== 'object') throw new MergeError(`${what}[${i}] is not a bucket`);
    const bucket = {
      lo: toBigInt(b.lo, `${what}[${i}].lo`, { nullable: true }),
      hi: toBigInt(b.hi, `${what}[${i}].hi`, { nullable: true }),
      count: toBigInt(b.count, `${what}[${i}].count`),
    };
    if (bucket.lo !== null && bucket.hi !== null && bucket.hi <= bucket.lo) throw new MergeError(`${what}[${i}] ends before it starts`);
    return bucket;
  });
  return buckets;
}

const boundText = (v) => (v === null ? '' : String(v));
const idOf = (b) => `${boundText(b.lo)},${boundText(b.hi)}`;
const below = (a, b) => (a === null ? b !== null : b !== null && a < b);   // null lo: minus infinity

/**
 * Adds bucket lists (each from readBuckets) -> one list, in order; throws
 * naming the two buckets when two lists' buckets overlap but differ.
 */
function addBuckets(lists, what) {
  const byId = new Map();
  for (const list of lists) {
    for (const b of list) {
      const id = idOf(b);
      const seen = byId.get(id);
      if (seen) seen.count += b.count;
      else byId.set(id, { lo: b.lo, hi: b.hi, count: b.count });
    }
  }
  const out = [...byId.values()].sort((a, b) => (below(a.lo, b.lo) ? -1 : below(b.lo, a.lo) ? 1 : 0));
  for (let i = 1; i < out.length; i++) {
    const prev = out[i - 1];
    // A bucket must start where the one before it ends, or after: an open
    // upper end, or one past the next start, is another layout's bucket.
    if (prev.hi === null || out[i].lo === null || out[i].lo < prev.hi) {
      throw new MergeError(`${what}: the reports' buckets differ ([${boundText(prev.lo)}, ${boundText(prev.hi)}) against [${boundText(out[i].lo)}, ${boundText(out[i].hi)})), so their counts do not add`);
    }
  }
  return out;
}

/** Buckets -> the reports' JSON form. */
function bucketsJson(buckets) {
  return buckets.map((b) => ({ lo: jsonInteger(b.lo), hi: jsonInteger(b.hi), count: jsonInteger(b.count) }));
}

/** Sum of counts (BigInt). */
function countOf(buckets) {
  return buckets.reduce((n, b) => n + b.count, 0n);
}

/** The p-th percentile estimate of merged buckets, as the commands read theirs (capped by the exact max when known). */
function percentileOf(buckets, p, max = null) {
  return jsonEstimate(percentile({ kind: 'log2', buckets }, p, max === null ? null : Number(max)));
}

/** The largest of some reports' exact maxima (BigInt or null each); null when any is unknown. */
function maxOf(values) {
  if (!values.length || values.some((v) => v === null)) return null;
  return values.reduce((a, b) => (b > a ? b : a));
}

module.exports = { MergeError, toBigInt, readBuckets, addBuckets, bucketsJson, countOf, percentileOf, maxOf };
