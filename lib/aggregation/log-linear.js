'use strict';
// A histogram nodetrace keeps itself, in user space (http's requests, from
// the hook's probes or off the wire; lib/http/histograms.js): log-linear
// buckets, as HdrHistogram's, so that a percentile read from them is as
// good as its value. Power-of-two buckets put /mid, a 50 ms timer, at p50
// 44.0 ms against 50.9 ms measured request by request (an Express app,
// node 20, issue 36.6): the bucket [32.8, 65.5) ms is twice as wide as its
// low end.
//
// The layout (LAYOUT, stated in the JSON reports, docs/json-format.md):
// below SUB_BUCKETS, one bucket per unit ([0, 1), [1, 2), ... [63, 64));
// from there, each power of two [2^e, 2^(e+1)) cut into SUB_BUCKETS equal
// buckets. Every bucket is at most 1/SUB_BUCKETS of its low end wide
// (1.6%), and a percentile is read inside the bucket that holds its rank:
// never further than that from the value it estimates (from 64 units up).
// Bounds are whole units, the same on every run and host: two reports'
// buckets are added by their bounds.
//
// Counts are kept per power of two, allocated when first hit (64 32-bit
// counters, 256 bytes): a group of requests whose latencies span 10 powers
// of two (10 us to 10 ms) holds 2.5 KB, and no group more than 9 KB
// (TOP_EXPONENT). Pure.

const SUB_BITS = 6;
const SUB_BUCKETS = 1 << SUB_BITS;
// Values from 2^41 on (25 days in microseconds) share the last power's
// buckets: at most 36 powers of two a histogram.
const TOP_EXPONENT = 40;
const MAX_COUNT = 0xffffffff;
const LAYOUT = Object.freeze({ kind: 'log-linear', sub_buckets: SUB_BUCKETS, linear_below: SUB_BUCKETS });

// The power of two at or below v (v >= 1), exactly: Math.log2 may round a
// value just below a power up to it.
function exponentOf(v) {
  let e = Math.min(TOP_EXPONENT, Math.floor(Math.log2(v)));
  while (e > 0 && 2 ** e > v) e--;
  while (e < TOP_EXPONENT && 2 ** (e + 1) <= v) e++;
  return e;
}

/** A value's bucket: { region (0: the unit buckets; r: the power 2^(r + SUB_BITS - 1)), slot }. */
function bucketOf(value) {
  const v = Number(value);
  if (!(v >= SUB_BUCKETS)) return { region: 0, slot: v >= 1 ? Math.floor(v) : 0 };
  const e = exponentOf(v);
  const width = 2 ** (e - SUB_BITS);
  return { region: e - SUB_BITS + 1, slot: Math.min(SUB_BUCKETS - 1, Math.floor(v / width) - SUB_BUCKETS) };
}

/** A bucket's bounds, whole units: { lo, hi } (BigInt, as the model's). */
function boundsOf(region, slot) {
  if (region === 0) return { lo: BigInt(slot), hi: BigInt(slot + 1) };
  const width = 2n ** BigInt(region - 1);
  const lo = BigInt(SUB_BUCKETS + slot) * width;
  return { lo, hi: lo + width };
}

// The power-of-two bucket ([0, 1), [1, 2), [2, 4) ...: lib/render/histogram.js's
// rows, as bpftrace's hist()) a bucket falls in, by its index there.
function log2Index(region, slot) {
  if (region === 0) return slot === 0 ? 0 : Math.floor(Math.log2(slot)) + 1;
  return region + SUB_BITS;
}

class LogLinearHistogram {
  constructor() {
    this.regions = [];   // region -> Uint32Array(SUB_BUCKETS), or undefined
    this.n = 0;
    this.max = 0;
  }

  add(value) {
    const { region, slot } = bucketOf(value);
    if (!this.regions[region]) this.regions[region] = new Uint32Array(SUB_BUCKETS);
    if (this.regions[region][slot] < MAX_COUNT) this.regions[region][slot]++;
    this.n++;
    if (value > this.max) this.max = value;
  }

  /** -> a model entry (lib/aggregation/model.js) of the buckets that counted something, in order. */
  entry() {
    const buckets = [];
    this.regions.forEach((counts, region) => {
      if (!counts) return;
      counts.forEach((count, slot) => {
        if (count > 0) buckets.push({ ...boundsOf(region, slot), count: BigInt(count) });
      });
    });
    return { key: [], kind: 'loglinear', buckets };
  }

  /**
   * -> the same counts in power-of-two buckets, every one from the first to
   * the last (empty ones too, as the tracers print them): for drawing.
   */
  log2Entry() {
    const counts = new Map();
    this.regions.forEach((region, r) => {
      if (!region) return;
      region.forEach((count, slot) => {
        if (count > 0) counts.set(log2Index(r, slot), (counts.get(log2Index(r, slot)) || 0) + count);
      });
    });
    if (!counts.size) return { key: [], kind: 'log2', buckets: [] };
    const indexes = [...counts.keys()];
    const buckets = [];
    for (let i = Math.min(...indexes); i <= Math.max(...indexes); i++) {
      const lo = i === 0 ? 0n : 2n ** BigInt(i - 1);
      buckets.push({ lo, hi: i === 0 ? 1n : lo * 2n, count: BigInt(counts.get(i) || 0) });
    }
    return { key: [], kind: 'log2', buckets };
  }
}

module.exports = { LogLinearHistogram, bucketOf, boundsOf, LAYOUT, SUB_BUCKETS };
