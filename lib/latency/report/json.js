'use strict';
// The latency report as JSON (`nodetrace latency --json`, `format --json`):
// the same kinds of operation as the text report, with numbers instead of
// prose, and the pool's figures.  The shape is documented field by field in
// docs/json-format.md; bump `version` when it changes incompatibly.  Pure:
// a summary (./summary.js) in, a plain object or its text out.

const { displayKey, isDistribution, percentile, totalCount } = require('../../aggregation/model');
const { jsonInteger, jsonEstimate, jsonHistogram } = require('../../render/json');
const { PHASES } = require('./kinds');
const { poolToJSON } = require('./pool');
const { threadsToJSON } = require('./threads');
const { safeJson } = require('../../terminal-safe');

const VERSION = 1;

// Samples set apart as impossible (lib/aggregation/impossible.js): always
// present, so a reader can tell "none" from "not checked".
function discardedOf(discarded) {
  return {
    out_of_order: jsonInteger(discarded ? discarded.outOfOrder : 0n),
    longer_than_trace: jsonInteger(discarded ? discarded.longerThanTrace : 0n),
  };
}

function percentiles(entry, limit = null) {
  return {
    p50: jsonEstimate(percentile(entry, 50, limit)),
    p90: jsonEstimate(percentile(entry, 90, limit)),
    p99: jsonEstimate(percentile(entry, 99, limit)),
  };
}

// The function (demangled if the caller applied demangling) and its module,
// from the key's first field that names one; every key field joined by ", ".
function nameAndModule(key) {
  if (key.length === 0) return { name: null, module: null };
  const parts = key.map((field) => displayKey(field));
  const withModule = parts.find((p) => p.module);
  return { name: parts.map((p) => p.func).join(', '), module: withModule ? withModule.module : null };
}

function breakdownOf(kind) {
  if (!kind.breakdown) return null;
  const breakdown = {};
  for (const phase of PHASES) {
    const part = kind.breakdown[phase];
    if (!part) continue;
    breakdown[phase] = {
      count: jsonInteger(totalCount(part.entry)),
      unit: part.unit,
      ...percentiles(part.entry, part.limit),
      histogram: jsonHistogram(part.entry),
      discarded: discardedOf(part.entry.discarded),
    };
  }
  return breakdown;
}

// The exact max in the kind's unit, so it compares with p99 directly; as
// printed when either unit is unknown.
function maxInKindUnit(kind) {
  if (!kind.max) return null;
  if (kind.max.unit === kind.unit || kind.limit === null) return jsonInteger(kind.max.value);
  return kind.limit;
}

// symbols: the C++ or libuv functions behind each name given for users
// (summary.symbols).
function kindToJSON(kind, symbols) {
  const result = {
    ...nameAndModule(kind.key),
    key: kind.key.slice(),
    aggregation: kind.aggregation,
    count: jsonInteger(kind.count),
    unit: kind.unit,
    ...percentiles(kind.entry, kind.limit),
    max: maxInKindUnit(kind),
    histogram: jsonHistogram(kind.entry),
    discarded: discardedOf(kind.entry.discarded),
    breakdown: breakdownOf(kind),
  };
  if (kind.entry.note) result.note = kind.entry.note;
  // latency --paths / --hosts: what the operations were done to, beside the kind.
  const s = kind.subject;
  if (s) {
    result[s.field] = s.text;
    if (s.cut) result.name_cut = true;
    if (s.text === null) result.folded_names = s.folded;
  }
  result.symbols = (symbols && symbols.get(result.name)) || null;
  return result;
}

function entryToJSON(entry) {
  const result = { key: entry.key.slice(), kind: entry.kind };
  if (isDistribution(entry)) {
    result.count = jsonInteger(totalCount(entry));
    Object.assign(result, percentiles(entry));
    result.histogram = jsonHistogram(entry);
    result.discarded = discardedOf(entry.discarded);
  } else if (entry.kind === 'stats') {
    result.stats = {
      count: jsonInteger(entry.stats.count),
      average: jsonInteger(entry.stats.average),
      total: jsonInteger(entry.stats.total),
    };
  } else {
    result.value = jsonInteger(entry.value);
  }
  if (entry.note) result.note = entry.note;
  return result;
}

function sharedUnit(kinds, fallback) {
  const units = new Set(kinds.map((kind) => kind.unit));
  if (units.size === 1) return [...units][0];
  return units.size === 0 ? fallback : null;
}

/**
 * toJSON(summary, { process, identityOf }) -> plain object for JSON.stringify.
 * Unlike the text report nothing is lumped or trimmed: every key and bucket
 * the tracer printed is there (after merging keys printed twice).
 * `process`: the traced process (lib/proc/container.js identityJson), where
 * one was (not for `format`); identityOf(tid): a thread's identity
 * (lib/threads/identify.js), to name the threads whose work it was.
 */
function toJSON(summary, { process, identityOf } = {}) {
  return {
    version: VERSION,
    command: 'latency',
    tracer: summary.tracer,
    ...(process ? { process } : {}),
    // The window the figures are of (docs/json-format.md); not for format.
    ...(summary.tracedNs !== null && summary.tracedNs !== undefined ? { traced_ns: jsonInteger(summary.tracedNs) }
      : {}),
    unit: sharedUnit(summary.kinds, summary.unit),
    kinds: summary.kinds.map((kind) => kindToJSON(kind, summary.symbols)),
    discarded: {
      ...discardedOf(summary.discarded),
      impossible_maxima: summary.discarded ? summary.discarded.maxima : 0,
    },
    other: summary.other.map((aggregation) => ({
      name: aggregation.name,
      // Only a name says what a scalar measures: a count() has no unit.
      unit: aggregation.unit,
      entries: aggregation.entries.map(entryToJSON),
    })),
    pool: poolToJSON(summary.pool),
    // The operations above by the thread that queued them (main, each
    // Worker): null where the program printed no such maps.
    threads: threadsToJSON(summary.threads, identityOf),
  };
}

/** The report as JSON text, one object. */
function renderJson(summary, options) {
  // Paths and host names come from the traced process (lib/terminal-safe.js).
  return safeJson(toJSON(summary, options)) + '\n';
}

module.exports = { toJSON, renderJson };
