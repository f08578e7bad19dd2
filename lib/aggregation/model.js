'use strict';
// The parsed-aggregation model both tracers' parsers make, and the pure
// helpers every report uses on it (latency's, gc's, loop's, http's).
//
//   Model       = { tracer: 'dtrace'|'bpftrace', aggregations: Aggregation[] }
//   Aggregation = { name: string|null, unit: 'ns'|'us'|'ms'|'s'|null, entries: Entry[] }
//   Entry       = { key: string[], kind: 'log2'|'linear'|'loglinear'|'scalar'|'stats',
//                   buckets?: [{ lo: bigint|null, hi: bigint|null, count: bigint }],
//                   value?: bigint, stats?: { count, average, total: bigint }, note?: string,
//                   subject?: Subject }
//   Subject     = { field: 'path'|'host', text: string|null, cut?: boolean, folded?: number }
//                 what one kind of operation was done to (latency --paths,
//                 --hosts: lib/latency/report/named-kinds.js): text the traced
//                 process chose, kept apart from the key so that nothing
//                 meant for names of functions (demangling, symbolizing,
//                 renaming, splitting on commas) ever touches it. text null:
//                 the rest of that kind's subjects, folded into one.
//
// Counts and values are BigInt because DTrace prints the whole signed 64-bit
// range (its own tests print ±9223372036854775808) and a Number would round
// them silently.  Percentiles and time estimates are Numbers: they are
// estimates anyway.

const UNIT_SUFFIXES = [
  [/_(ns|nsecs)$/, 'ns'],
  [/_(us|usecs)$/, 'us'],
  [/_(ms|msecs)$/, 'ms'],
  [/_(s|secs)$/, 's'],
];

/** The unit an aggregation's values are in, from its name's suffix (total_us -> 'us'); else null. */
function unitFromName(name) {
  if (!name) return null;
  for (const [pattern, unit] of UNIT_SUFFIXES) {
    if (pattern.test(name)) return unit;
  }
  return null;
}

/** The unit an aggregation's values are in: its name says, or else `defaultUnit` (null: unknown). */
function unitOf(aggregation, defaultUnit) {
  return aggregation.unit || defaultUnit || null;
}

function makeAggregation(name, entries) {
  return { name: name || null, unit: unitFromName(name), entries: entries || [] };
}

function isDistribution(entry) {
  return Array.isArray(entry.buckets);
}

/**
 * How many values an entry counted: the sum of its bucket counts, or a stats()
 * entry's count.  null for a scalar, whose text does not say what it counted.
 */
function totalCount(entry) {
  if (isDistribution(entry)) return entry.buckets.reduce((sum, b) => sum + b.count, 0n);
  if (entry.kind === 'stats') return entry.stats.count;
  return null;
}

// A bucket's representative value; an open-ended bucket is represented by its
// finite bound, the only thing the tracer tells us about it.
function bucketMidpoint(bucket) {
  if (bucket.lo === null && bucket.hi === null) return null;
  if (bucket.lo === null) return Number(bucket.hi);
  if (bucket.hi === null) return Number(bucket.lo);
  return (Number(bucket.lo) + Number(bucket.hi)) / 2;
}

function hasNegativeCounts(entry) {
  return entry.buckets.some((b) => b.count < 0n);
}

/**
 * Estimate the p-th percentile (p in 0..100) of a distribution entry, as a
 * Number in the entry's value units, by linear interpolation inside the bucket
 * holding that rank.  Open-ended buckets answer their finite bound.  null when
 * there is no data, or when DTrace weights made counts negative (a weighted
 * sum is not a population, so it has no percentiles).
 * `limit`, when known (the exact max from a max() map, in the same units),
 * caps the bucket it falls in: with log2 buckets the top bucket is often
 * twice as wide as the data in it, so p99 would otherwise exceed the max.
 */
function percentile(entry, p, limit = null) {
  if (!isDistribution(entry) || hasNegativeCounts(entry)) return null;
  const total = Number(totalCount(entry));
  if (!(total > 0)) return null;
  const rank = (Math.min(Math.max(p, 0), 100) / 100) * total;
  let below = 0;
  for (const bucket of entry.buckets) {
    const count = Number(bucket.count);
    if (count === 0) continue;
    if (below + count >= rank) return interpolate(bucket, (rank - below) / count, limit);
    below += count;
  }
  return null; // unreachable with positive counts; kept for safety with float rounding
}

/**
 * The bucket that holds the p-th percentile's rank, as { lo, hi } Numbers
 * (an open bound null), `hi` capped by `limit` (the exact max) where it
 * falls inside: all a tracer's hist() says of that percentile. null as for
 * percentile(). The reports print this range for the tracer's histograms
 * (latency, gc, loop, async), where a value read inside a power-of-two
 * bucket could be off by half of it (docs/reading-output.md).
 */
function percentileBucket(entry, p, limit = null) {
  if (!isDistribution(entry) || hasNegativeCounts(entry)) return null;
  const total = Number(totalCount(entry));
  if (!(total > 0)) return null;
  const rank = (Math.min(Math.max(p, 0), 100) / 100) * total;
  let below = 0;
  for (const bucket of entry.buckets) {
    const count = Number(bucket.count);
    if (count === 0) continue;
    if (below + count >= rank) {
      const lo = bucket.lo === null ? null : Number(bucket.lo);
      let hi = bucket.hi === null ? null : Number(bucket.hi);
      if (limit !== null && (lo === null || limit >= lo) && (hi === null || limit < hi)) hi = limit;
      return { lo, hi };
    }
    below += count;
  }
  return null;
}

function interpolate(bucket, fraction, limit) {
  const lo = bucket.lo === null ? null : Number(bucket.lo);
  let hi = bucket.hi === null ? null : Number(bucket.hi);
  if (limit !== null && (lo === null || limit >= lo) && (hi === null || limit < hi)) hi = limit;
  if (lo === null) return hi;
  if (hi === null) return lo;
  return lo + fraction * (hi - lo);
}

/**
 * Estimated sum of all values in a distribution (bucket midpoint x count), in
 * the entry's units: what "total time" means when sorting latency kinds.
 */
function estimatedTotal(entry) {
  if (!isDistribution(entry)) return null;
  let sum = 0;
  for (const bucket of entry.buckets) {
    const mid = bucketMidpoint(bucket);
    if (mid !== null) sum += mid * Number(bucket.count);
  }
  return sum;
}

/**
 * Drop empty buckets at both ends but keep one empty bucket on each side of the
 * data, as DTrace prints them.  An all-empty distribution is returned as is.
 */
function trimEmptyBuckets(entry) {
  if (!isDistribution(entry)) return entry;
  const buckets = entry.buckets;
  const first = buckets.findIndex((b) => b.count !== 0n);
  if (first === -1) return { ...entry, buckets: buckets.slice() };
  let last = buckets.length - 1;
  while (buckets[last].count === 0n) last--;
  const start = Math.max(0, first - 1);
  const end = Math.min(buckets.length - 1, last + 1);
  return { ...entry, buckets: buckets.slice(start, end + 1) };
}

function compareLo(a, b) {
  if (a.lo === b.lo) return 0;
  if (a.lo === null) return -1;
  if (b.lo === null) return 1;
  return a.lo < b.lo ? -1 : 1;
}

/**
 * Add two bucket lists bucket by bucket.  Buckets are matched by their lower
 * bound: DTrace may not know the upper bound of a last row (hi null) that
 * another entry's output bounds, so the known one wins.
 */
function mergeBuckets(a, b) {
  const byLo = new Map();
  for (const bucket of a.concat(b)) {
    const id = bucket.lo === null ? 'open' : bucket.lo.toString();
    const seen = byLo.get(id);
    if (seen) {
      seen.count += bucket.count;
      if (seen.hi === null) seen.hi = bucket.hi;
    } else {
      byLo.set(id, { lo: bucket.lo, hi: bucket.hi, count: bucket.count });
    }
  }
  return [...byLo.values()].sort(compareLo);
}

function mergeNotes(a, b) {
  if (!a) return b;
  if (!b || a === b) return a;
  return a + '; ' + b;
}

function shapeOf(entry) {
  if (isDistribution(entry)) return 'distribution';
  return entry.kind; // 'scalar' | 'stats'
}

// How two scalars of one map combine: the text does not say which function
// made them, but nodetrace's programs (and bpftrace's tools) name min()/max()
// maps after it (@max_us, @min_ns).
function scalarCombiner(name) {
  if (/^max($|_)/.test(name || '')) return (x, y) => (x > y ? x : y);
  if (/^min($|_)/.test(name || '')) return (x, y) => (x < y ? x : y);
  return (x, y) => x + y;
}

function mergeTwo(a, b, combine = (x, y) => x + y) {
  const merged = { ...a, key: a.key.slice() };
  if (a.subject && b.subject && a.subject.folded !== undefined) {
    merged.subject = { ...a.subject, folded: a.subject.folded + (b.subject.folded || 0) };
  }
  if (isDistribution(a)) merged.buckets = mergeBuckets(a.buckets, b.buckets);
  else if (a.kind === 'stats') {
    const count = a.stats.count + b.stats.count;
    const total = a.stats.total + b.stats.total;
    merged.stats = { count, average: count === 0n ? 0n : total / count, total };
  } else merged.value = combine(a.value, b.value);
  const note = mergeNotes(a.note, b.note);
  if (note) merged.note = note;
  // samples set apart as impossible (lib/aggregation/impossible.js) add up too
  if (a.discarded || b.discarded) {
    const zero = { outOfOrder: 0n, longerThanTrace: 0n };
    const x = a.discarded || zero;
    const y = b.discarded || zero;
    merged.discarded = { outOfOrder: x.outOfOrder + y.outOfOrder,
      longerThanTrace: x.longerThanTrace + y.longerThanTrace };
  }
  return merged;
}

// An entry's identity: its key, and its subject where it has one.
function keyId(entry) {
  const s = entry.subject;
  return entry.key.join('\u0000') + (s ? `\u0001${s.field}\u0001${s.text === null ? '\u0002' : s.text}` : '');
}

/**
 * Merge the entries of one aggregation that print the same key: bpftrace keys
 * usym() by address, so one function can appear several times, once per call
 * site.  Distributions add bucket by bucket, stats add counts and totals.
 * Scalars add, except in maps named max_... or min_... (or max, min), which keep the
 * larger/smaller: the text does not say which function made a scalar.
 * Entries of different shapes never merge.  Order: first appearance.
 */
function mergeEntriesByName(aggregation) {
  const combine = scalarCombiner(aggregation.name);
  const merged = [];
  const index = new Map();
  for (const entry of aggregation.entries) {
    const id = shapeOf(entry) + '\u0000' + keyId(entry);
    const at = index.get(id);
    if (at === undefined) {
      index.set(id, merged.length);
      merged.push(entry);
    } else {
      merged[at] = mergeTwo(merged[at], entry, combine);
    }
  }
  return { ...aggregation, entries: merged };
}

const OPENERS = { '(': ')', '[': ']', '<': '>', '{': '}' };

function splitAtDepthZero(text, separator, brackets) {
  const fields = [];
  const closers = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (brackets[ch]) closers.push(brackets[ch]);
    else if (closers.length > 0 && ch === closers[closers.length - 1]) closers.pop();
    else if (closers.length === 0 && text.startsWith(separator, i)) {
      fields.push(text.slice(start, i));
      start = i + separator.length;
      i = start - 1;
    }
  }
  if (closers.length > 0) return null; // unbalanced, e.g. "operator<(...)"
  fields.push(text.slice(start));
  return fields;
}

/**
 * Split a printed multi-field key ("1234, node", "2,p q") on `separator`, but
 * not inside brackets, so a C++ signature such as "f(int, char*)" or
 * "std::map<int, int>::find" stays one field.  When angle brackets do not
 * balance (operator<, operator->) only round and square brackets count.
 * A string key that itself contains the separator is split anyway: the
 * tracer's text does not say where such a key ends (a map whose key holds a
 * process's text is read by its shape instead: ./text-keys.js).
 */
function splitKeyList(text, separator) {
  const all = splitAtDepthZero(text, separator, OPENERS);
  if (all) return all;
  const parens = splitAtDepthZero(text, separator, { '(': ')', '[': ']' });
  return parens || [text];
}

const HEX_ADDRESS = /^0x[0-9a-f]+$/i;

/** True for a symbol the tracer could not resolve and printed as a bare address (0x0, 0x7f12abcd). */
function isUnresolvedAddress(text) {
  return HEX_ADDRESS.test(String(text).trim());
}

/**
 * Split a printed function key into its parts.  DTrace prints `module`func`
 * (node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(...)); stacks and
 * some symbolisers append `+0x1a`.  A bare hex address is unresolved.
 */
function displayKey(keyString) {
  const raw = String(keyString);
  let func = raw.trim();
  let module = null;
  let offset = null;
  const tick = func.indexOf('`');
  if (tick > 0) {
    module = func.slice(0, tick);
    func = func.slice(tick + 1);
  }
  const withOffset = /^(.+?)\+(0x[0-9a-f]+|\d+)$/i.exec(func);
  if (withOffset) {
    func = withOffset[1];
    offset = '+' + withOffset[2];
  }
  return { module, func, offset, raw, unresolved: isUnresolvedAddress(func) };
}

// An Itanium-ABI mangled name standing alone or after a module's backtick;
// the `+0x1a` offset is not part of it.
const MANGLED = /(^|[\s`[(,])(_Z[A-Za-z0-9_.$]+)/g;

/** Every distinct mangled C++ name in the model's keys, in order of appearance, for c++filt. */
function mangledNames(model) {
  const names = new Set();
  for (const aggregation of model.aggregations) {
    for (const entry of aggregation.entries) {
      for (const field of entry.key) {
        for (const match of String(field).matchAll(MANGLED)) names.add(match[2]);
      }
    }
  }
  return [...names];
}

/**
 * A new model whose keys have each mangled name replaced by its demangled form
 * from `demangled` (a Map or a plain object: mangled -> demangled).  Names the
 * map lacks are left as they are.
 */
function applyDemangled(model, demangled) {
  const lookup = demangled instanceof Map ? demangled : new Map(Object.entries(demangled || {}));
  const replace = (field) =>
    String(field).replace(MANGLED, (whole, before, name) => before + (lookup.get(name) || name));
  return {
    ...model,
    aggregations: model.aggregations.map((aggregation) => ({
      ...aggregation,
      entries: aggregation.entries.map((entry) => ({ ...entry, key: entry.key.map(replace) })),
    })),
  };
}

module.exports = {
  unitFromName,
  unitOf,
  makeAggregation,
  isDistribution,
  totalCount,
  bucketMidpoint,
  percentile,
  percentileBucket,
  estimatedTotal,
  trimEmptyBuckets,
  mergeBuckets,
  mergeEntriesByName,
  splitKeyList,
  isUnresolvedAddress,
  displayKey,
  mangledNames,
  applyDemangled,
  keyId,
};
