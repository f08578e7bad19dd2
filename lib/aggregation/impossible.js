'use strict';
// Samples that cannot be true are set apart, never folded into a histogram,
// a percentile or a share of time, and never dropped without a word.
//
// A duration below zero means the tracer's timestamps were out of order (on
// DTrace for Linux 2.0 a race in its global arrays moves values between keys;
// a D script written for illumos shows it as negative quantize() buckets).
// A duration longer than the whole trace cannot have been measured by it
// (the same race produced a p99 of 7,147 s, about the system's uptime).
//
// Pure: model in, model out.  Every distribution entry that lost samples
// carries `discarded: { outOfOrder, longerThanTrace }` (BigInt counts); the
// model carries the totals.  A max()/min() scalar that is impossible is left
// out (the kind then has no max) and counted in `model.discarded.maxima`.

const { isDistribution, unitOf } = require('./model');
const { noun } = require('../render/text');

const NS_PER = { ns: 1n, us: 1000n, ms: 1000000n, s: 1000000000n };

// Every value in the bucket is below zero.  DTrace's negative quantize rows
// are [-1, 0), [-2, -1), ...; an open "< N" row of lquantize() is negative
// only when N <= 0.
function allNegative(bucket) {
  if (bucket.lo !== null) return bucket.lo < 0n;
  return bucket.hi !== null && bucket.hi <= 0n;
}

// Every value in the bucket is longer than the trace (in the entry's unit).
function allLongerThan(bucket, limit) {
  return limit !== null && bucket.lo !== null && bucket.lo > limit;
}

// The trace length in `unit`, rounded up: a sample equal to it is possible.
function traceIn(unit, traceNs) {
  if (traceNs === null || traceNs === undefined || !NS_PER[unit]) return null;
  const ns = BigInt(Math.ceil(Number(traceNs)));
  return (ns + NS_PER[unit] - 1n) / NS_PER[unit];
}

// Durations only: a map in nanoseconds, microseconds... or the default unit
// a tracer's own latency maps use.  A count() or a size histogram is no
// duration, and a negative value in it may be real.
function isDuration(aggregation, defaultUnit) {
  return Boolean(unitOf(aggregation, defaultUnit));
}

function splitEntry(entry, limit) {
  let outOfOrder = 0n;
  let longerThanTrace = 0n;
  const buckets = [];
  for (const bucket of entry.buckets) {
    if (bucket.count > 0n && allNegative(bucket)) outOfOrder += bucket.count;
    else if (bucket.count > 0n && allLongerThan(bucket, limit)) longerThanTrace += bucket.count;
    else {
      buckets.push(bucket);
      continue;
    }
    // The row stays, empty, so that the histogram keeps its shape.
    buckets.push({ ...bucket, count: 0n });
  }
  if (outOfOrder === 0n && longerThanTrace === 0n) return entry;
  return { ...entry, buckets, discarded: { outOfOrder, longerThanTrace } };
}

/**
 * discardImpossible(model, { traceNs, unit }) -> model
 *   traceNs: how long the trace lasted, in ns (null: unknown, e.g. `format`
 *            of saved output; then only negative durations are set apart)
 *   unit:    the unit of maps whose names carry none (DTrace's default 'ns')
 * model.discarded = { outOfOrder, longerThanTrace, maxima } (BigInt, BigInt, Number)
 */
function discardImpossible(model, { traceNs = null, unit = null } = {}) {
  const totals = { outOfOrder: 0n, longerThanTrace: 0n, maxima: 0 };
  const aggregations = model.aggregations.map((aggregation) => {
    if (!isDuration(aggregation, unit)) return aggregation;
    const limit = traceIn(unitOf(aggregation, unit), traceNs);
    const entries = [];
    for (const entry of aggregation.entries) {
      if (isDistribution(entry)) {
        const kept = splitEntry(entry, limit);
        if (kept.discarded) {
          totals.outOfOrder += kept.discarded.outOfOrder;
          totals.longerThanTrace += kept.discarded.longerThanTrace;
        }
        entries.push(kept);
      } else if (/^(max|min)($|_)/.test(aggregation.name || '') && entry.kind === 'scalar' &&
          (entry.value < 0n || (limit !== null && entry.value > limit))) {
        // a max()/min() map, known by its name (@max_us, @min_ns): the text
        // does not say which function made a scalar
        totals.maxima += 1;
      } else {
        entries.push(entry);
      }
    }
    return { ...aggregation, entries };
  });
  return { ...model, aggregations, discarded: totals };
}

/** How many distribution samples were set apart, as a Number (0 if none or not checked). */
function discardedCount(model) {
  const d = model.discarded;
  return d ? Number(d.outOfOrder + d.longerThanTrace) : 0;
}

/** The sentences the reports print (empty when nothing was set apart). */
function discardedSentences(discarded, { traceText = null } = {}) {
  if (!discarded) return [];
  const lines = [];
  if (discarded.outOfOrder > 0n) {
    lines.push(`${discarded.outOfOrder} ${noun(discarded.outOfOrder, 'sample')} discarded: timestamps out of order (negative durations)`);
  }
  if (discarded.longerThanTrace > 0n) {
    lines.push(`${discarded.longerThanTrace} ${noun(discarded.longerThanTrace, 'sample')} discarded: longer than the trace${traceText ? ` (${traceText})` : ''}`);
  }
  if (discarded.maxima > 0) {
    lines.push(`${discarded.maxima} impossible ${noun(discarded.maxima, 'max value')} left out`);
  }
  return lines;
}

module.exports = { discardImpossible, discardedCount, discardedSentences, allNegative };
