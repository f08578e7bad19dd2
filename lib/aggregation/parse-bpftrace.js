'use strict';
// Parse the maps bpftrace prints when it exits (or on print()) into the model
// of ./model.js, from its text output or from `bpftrace -f json` lines.
//
// Text output (bpftrace 0.17; see test/fixtures/bpftrace-*.out):
//
//   Attaching 3 probes...                    <- noise, like any printf output
//   @c: 3                                    <- count/sum/min/max/avg: one line
//   @x[4466, bpftrace]: 1                    <- keys joined by ", "
//   @st: count 2, average 15, total 31       <- stats()
//   @lat[napi_queue_async_work]:             <- hist()/lhist(): rows follow
//   (..., 0)               1 |@@@@@   |     <- negative values
//   [0]                    1 |@@@@@   |
//   [2, 4)                 2 |@@@@@@@@|     <- K/M/G/T/P/E suffixes are powers of 1024
//   [100, ...)             2 |@@@@@@@@|     <- lhist() above max
//   @calls[                                  <- ustack()/kstack() keys span lines
//       0x18ac3a0
//   , node]: 1
//
// bpftrace prints no empty bucket before the first or after the last
// non-empty one, and keys usym() by address, so one name can appear twice in
// a map (model.mergeEntriesByName adds them).  Before 0.20, hist() folds every
// value >= 4G into its last bucket, [2G, 4G); a non-empty [2G, 4G) bucket is
// flagged with a note because its true values may be far larger.

const { makeAggregation, splitKeyList } = require('./model');
const { partsAroundText, shapeOf } = require('./text-keys');

const FOLDED_4G_NOTE = 'bpftrace<0.20 folds values >= 4G into [2G,4G)';
const TWO_G = 2n ** 31n;
const FOUR_G = 2n ** 32n;

const SUFFIX_POWER = { K: 1n, M: 2n, G: 3n, T: 4n, P: 5n, E: 6n };

/** "16K" -> 16384n; bpftrace's suffixes are powers of 1024. */
function parseSuffixedNumber(text) {
  const match = /^(-?\d+)([KMGTPE])?$/.exec(text.trim());
  if (!match) return null;
  const n = BigInt(match[1]);
  return match[2] ? n * 1024n ** SUFFIX_POWER[match[2]] : n;
}

const BUCKET_ROW = /^([[(][^|]*?[\])])\s+(\d+)\s+\|[ @]*\|\s*$/;

// [lo, hi) from the label's texts; null (open) where the label has none, and
// no bounds at all when a number does not parse.
function bounds(loText, hiText) {
  const lo = loText === null ? null : parseSuffixedNumber(loText);
  const hi = hiText === null ? null : parseSuffixedNumber(hiText);
  if ((loText !== null && lo === null) || (hiText !== null && hi === null)) return null;
  return { lo, hi };
}

/** A histogram row's label as [lo, hi): "(..., 0)", "[0]", "[2, 4)", "[100, ...)"; null if it is none of them. */
function parseBucketLabel(label) {
  let match = /^\(\.\.\.,\s*(\S+)\)$/.exec(label);
  if (match) return bounds(null, match[1]);
  match = /^\[(\S+),\s*\.\.\.\)$/.exec(label);
  if (match) return bounds(match[1], null);
  match = /^\[([^,\]]+)\]$/.exec(label);
  if (match) {
    const single = bounds(match[1], null);
    return single && { lo: single.lo, hi: single.lo + 1n };
  }
  match = /^\[([^,]+),\s*([^)]+)\)$/.exec(label);
  return match ? bounds(match[1], match[2]) : null;
}

function parseBucketRow(line) {
  const match = BUCKET_ROW.exec(line);
  const label = match && parseBucketLabel(match[1]);
  return label ? { lo: label.lo, hi: label.hi, count: BigInt(match[2]) } : null;
}

function isPowerOfTwo(n) {
  return n > 0n && (n & (n - 1n)) === 0n;
}

// Could hist() have printed this bucket?  Its buckets are (..., 0), [0], [1]
// and [2^k, 2^(k+1)); lhist() buckets are equal steps from min to max.
function isLog2Bucket(bucket) {
  if (bucket.lo === null) return bucket.hi === 0n;
  if (bucket.hi === null) return false;
  if (bucket.lo === 0n) return bucket.hi === 1n;
  return isPowerOfTwo(bucket.lo) && bucket.hi === bucket.lo * 2n;
}

function distributionEntry(key, buckets) {
  const entry = { key, kind: buckets.every(isLog2Bucket) ? 'log2' : 'linear', buckets };
  if (entry.kind === 'log2' && buckets.some((b) => b.lo === TWO_G && b.hi === FOUR_G && b.count > 0n)) {
    entry.note = FOLDED_4G_NOTE;
  }
  return entry;
}

// One map is either hist() or lhist().  An lhist() entry whose few buckets
// happen to be powers of two (one bucket [64, 128)) looks like hist(): any
// entry that cannot be hist() settles it for the whole map.
function settleMapKind(aggregation) {
  const distributions = aggregation.entries.filter((e) => e.buckets);
  if (!distributions.some((e) => e.kind === 'linear')) return;
  for (const entry of distributions) {
    entry.kind = 'linear';
    delete entry.note;
  }
}

// A ustack()/kstack() key prints one frame per line; keep one frame per line
// without the indentation.  Other keys are kept byte for byte.
function normaliseKeyField(field) {
  if (!field.includes('\n')) return field;
  return field
    .split('\n')
    .map((frame) => frame.trim())
    .filter(Boolean)
    .join('\n');
}

// The parts of a key joined by `separator`: by the map's shape where its key
// holds a process's text (./text-keys.js: the text kept byte for byte),
// else split outside brackets (model.splitKeyList, which has its limits).
function splitKey(inner, separator, shape) {
  if (!shape) return splitKeyList(inner, separator).map(normaliseKeyField);
  const tokens = inner.split(separator === ', ' ? /(, )/ : /(,)/);
  return partsAroundText(tokens, shape).map((part, i) => (i === shape.at ? part : normaliseKeyField(part)));
}

/** "4466, bpftrace" -> ['4466', 'bpftrace']. */
function splitTextKey(inner, shape) {
  if (inner === undefined) return [];
  return splitKey(inner, ', ', shape);
}

// "@name[key]: rest" with the key possibly spanning lines (already joined).
// The last "]:" ends the key: values never contain one. Within a line, any
// character but the line break: `.` in a JavaScript regular expression stops
// at U+2028 and U+2029 too, which a key (a path, a function's name: the
// target's text) may hold; read with `.` such a line was taken for a key
// that goes on, and merged with the next map line (lib/aggregation tests).
const MAP_LINE = /^@(\w*)(?:\[([\s\S]*)\])?:(?: ([^\n]*))?$/;
const STATS_VALUE = /^count (-?\d+), average (-?\d+), total (-?\d+)$/;

class MapCollector {
  constructor() {
    this.byName = new Map();
  }

  add(name, entry) {
    const id = name || '';
    if (!this.byName.has(id)) this.byName.set(id, makeAggregation(name || null, []));
    this.byName.get(id).entries.push(entry);
  }

  aggregations() {
    const all = [...this.byName.values()];
    all.forEach(settleMapKind);
    return all;
  }
}

const COMPLETE_MAP_LINE = /^@\w*(\[[^\n]*\])?:( [^\n]*)?$/;
const KEY_CLOSE = /\]:( [^\n]*)?$/;

// A map line, joined with the following lines when its key spans several
// ("@calls[" ... ", node]: 1" for ustack() keys).
function readMapLine(lines, start) {
  const first = lines[start];
  if (COMPLETE_MAP_LINE.test(first) || !/^@\w*\[/.test(first)) return { text: first, next: start + 1 };
  for (let i = start + 1; i < lines.length; i++) {
    if (KEY_CLOSE.test(lines[i])) return { text: lines.slice(start, i + 1).join('\n'), next: i + 1 };
  }
  return { text: first, next: start + 1 }; // never closed: not a map after all
}

/**
 * parseBpftraceText(text, { textKeys }) -> Model. Lines that are not map
 * output are skipped. textKeys: the program's maps whose key holds a
 * process's text (./text-keys.js TEXT_KEYS), read by their shape.
 */
function parseBpftraceText(text, options = {}) {
  const lines = String(text).split(/\r?\n/);
  const maps = new MapCollector();
  let i = 0;
  while (i < lines.length) {
    if (!lines[i].startsWith('@')) {
      i++;
      continue;
    }
    const { text: mapText, next } = readMapLine(lines, i);
    i = next;
    const match = MAP_LINE.exec(mapText);
    if (!match) continue;
    const [, name, inner, rest = ''] = match;
    const key = splitTextKey(inner, shapeOf(options.textKeys, name));
    const value = rest.trim();
    if (value === '') {
      const buckets = [];
      for (let row; i < lines.length && (row = parseBucketRow(lines[i])); i++) buckets.push(row);
      if (buckets.length > 0) maps.add(name, distributionEntry(key, buckets));
    } else if (/^-?\d+$/.test(value)) {
      maps.add(name, { key, kind: 'scalar', value: BigInt(value) });
    } else {
      const stats = STATS_VALUE.exec(value);
      // Anything else is a map of strings, timestamps or pointers: not an aggregation.
      if (stats) {
        const [count, average, total] = stats.slice(1).map(BigInt);
        maps.add(name, { key, kind: 'stats', stats: { count, average, total } });
      }
    }
  }
  return { tracer: 'bpftrace', aggregations: maps.aggregations() };
}

// ---- -f json ---------------------------------------------------------------

/**
 * JSON.parse, except that integers become BigInt so that counts and sums past
 * 2^53 (bpftrace prints them exactly) survive.  null when the line is not JSON.
 * Node 20's JSON.parse cannot hand a reviver the source text, hence this.
 */
function parseJsonWithBigInts(text) {
  let at = 0;
  const fail = () => {
    throw new SyntaxError('bad JSON at ' + at);
  };
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at])) at++;
  };
  const value = () => {
    skipSpace();
    const ch = text[at];
    if (ch === '{') return object();
    if (ch === '[') return array();
    if (ch === '"') return string();
    const literal = /^(?:true|false|null)/.exec(text.slice(at, at + 5));
    if (literal) {
      at += literal[0].length;
      return JSON.parse(literal[0]);
    }
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at));
    if (!number) fail();
    at += number[0].length;
    return number[1] || number[2] ? Number(number[0]) : BigInt(number[0]);
  };
  const string = () => {
    const match = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(at));
    if (!match) fail();
    at += match[0].length;
    return JSON.parse(match[0]);
  };
  const array = () => {
    const items = [];
    at++;
    skipSpace();
    if (text[at] === ']') return at++, items;
    for (;;) {
      items.push(value());
      skipSpace();
      if (text[at] === ']') return at++, items;
      if (text[at++] !== ',') fail();
    }
  };
  const object = () => {
    const result = {};
    at++;
    skipSpace();
    if (text[at] === '}') return at++, result;
    for (;;) {
      skipSpace();
      const name = string();
      skipSpace();
      if (text[at++] !== ':') fail();
      result[name] = value();
      skipSpace();
      if (text[at] === '}') return at++, result;
      if (text[at++] !== ',') fail();
    }
  };
  try {
    const result = value();
    skipSpace();
    return at === text.length ? result : null;
  } catch {
    return null;
  }
}

// A JSON hist bucket: {"max": -1} is (..., 0); {"min": 100} is [100, ...);
// otherwise [min, max + 1).  bpftrace 0.17 prints the [2G, 4G) bucket as
// {"min": -2147483648, "max": 0}: its bounds wrapped through a 32-bit int.
function jsonBucket(raw) {
  const count = BigInt(raw.count);
  const hasMin = raw.min !== undefined;
  const hasMax = raw.max !== undefined;
  if (hasMin && hasMax && BigInt(raw.min) === -TWO_G && BigInt(raw.max) === 0n) {
    return { lo: TWO_G, hi: FOUR_G, count };
  }
  return {
    lo: hasMin ? BigInt(raw.min) : null,
    hi: hasMax ? BigInt(raw.max) + 1n : null,
    count,
  };
}

function isStatsObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && 'count' in value && 'average' in value && 'total' in value;
}

function isInteger(value) {
  return typeof value === 'bigint';
}

// JSON joins key fields with "," and no space ("2,p q"); bpftrace 0.27.1
// also drops every space of a string part ("2,pq"), so no program sends a
// process's text in a JSON key.
function splitJsonKey(text, shape) {
  return splitKey(text, ',', shape);
}

function jsonEntry(type, key, value) {
  if (type === 'hist' && Array.isArray(value)) return distributionEntry(key, value.map(jsonBucket));
  if (type === 'stats' && isStatsObject(value)) {
    return { key, kind: 'stats', stats: { count: value.count, average: value.average, total: value.total } };
  }
  // "map" values, and avg() which bpftrace 0.17 reports with type "stats"
  if ((type === 'map' || type === 'stats') && isInteger(value)) return { key, kind: 'scalar', value };
  return null;
}

// Is this map value one entry (unkeyed map) or an object of key -> entry?
function isUnkeyedValue(type, value) {
  return Array.isArray(value) || isInteger(value) || (type === 'stats' && isStatsObject(value));
}

/** parseBpftraceJson(text, { textKeys }) -> Model, from `bpftrace -f json` output (one JSON object a line). */
function parseBpftraceJson(text, options = {}) {
  const maps = new MapCollector();
  for (const line of String(text).split(/\r?\n/)) {
    if (!line.trim().startsWith('{')) continue;
    const message = parseJsonWithBigInts(line);
    if (!message || !['map', 'hist', 'stats'].includes(message.type) || !message.data) continue;
    for (const [mapName, value] of Object.entries(message.data)) {
      const name = mapName.replace(/^@/, '');
      const keyed = isUnkeyedValue(message.type, value) ? [[[], value]] : Object.entries(value || {})
        .map(([k, v]) => [splitJsonKey(k, shapeOf(options.textKeys, name)), v]);
      for (const [key, entryValue] of keyed) {
        const entry = jsonEntry(message.type, key, entryValue);
        if (entry) maps.add(name, entry);
      }
    }
  }
  return { tracer: 'bpftrace', aggregations: maps.aggregations() };
}

module.exports = {
  parseBpftraceText,
  parseBpftraceJson,
  parseJsonWithBigInts,
  parseBucketLabel,
  parseSuffixedNumber,
  FOLDED_4G_NOTE,
};
