'use strict';
// `latency --json` reports merged (docs/json-format.md, docs/merge.md): each
// kind of operation (its name, key, map and, with --paths/--hosts, its
// subject) once, its histograms (total and each phase) added bucket by
// bucket, its max the largest, its percentiles read again from the sum;
// the other maps added as the report adds a map printed twice (a count,
// sum or stats added; min_/max_ maps the smaller/larger); the discarded
// samples added. The pool's figures are shares of one process's threads
// over its own trace and do not add: per source only. Pure.
const { readBuckets, addBuckets, bucketsJson, countOf, percentileOf, maxOf, MergeError } = require('./histogram');
const { estimatedTotal } = require('../aggregation/model');
const { jsonInteger } = require('../render/json');
const F = require('./fields');

const PHASES = ['queue_wait', 'run', 'loop_wait'];
const SUBJECTS = ['path', 'host'];

function discardedOf(d, what) {
  const o = F.objectOrNull(d, what) || {};
  return { out_of_order: F.integerOrNull(o.out_of_order, `${what}.out_of_order`) || 0n, longer_than_trace: F.integerOrNull(o.longer_than_trace, `${what}.longer_than_trace`) || 0n };
}

function readKind(k, what) {
  F.object(k, what);
  const subject = SUBJECTS.find((s) => s in k) || null;
  const breakdown = F.objectOrNull(k.breakdown, `${what}.breakdown`);
  return {
    name: F.textOrNull(k.name, `${what}.name`),
    module: F.textOrNull(k.module, `${what}.module`),
    key: F.list(k.key, `${what}.key`, 64).map((f, i) => F.text(f, `${what}.key[${i}]`)),
    aggregation: F.textOrNull(k.aggregation, `${what}.aggregation`),
    unit: F.textOrNull(k.unit, `${what}.unit`),
    // "as printed when either unit is unknown": only an integer max is exact.
    max: typeof k.max === 'number' || typeof k.max === 'string' ? F.integerOrNull(k.max, `${what}.max`) : null,
    buckets: readBuckets(k.histogram, `${what}.histogram`, { maxBuckets: F.MAX_BUCKETS }),
    discarded: discardedOf(k.discarded, `${what}.discarded`),
    breakdown: breakdown ? Object.fromEntries(PHASES.filter((p) => breakdown[p]).map((p) => {
      const part = F.object(breakdown[p], `${what}.breakdown.${p}`);
      return [p, {
        unit: F.textOrNull(part.unit, `${what}.breakdown.${p}.unit`),
        buckets: readBuckets(part.histogram, `${what}.breakdown.${p}.histogram`, { maxBuckets: F.MAX_BUCKETS }),
        discarded: discardedOf(part.discarded, `${what}.breakdown.${p}.discarded`),
      }];
    })) : null,
    note: F.textOrNull(k.note, `${what}.note`),
    subject: subject ? { field: subject, text: F.textOrNull(k[subject], `${what}.${subject}`), cut: k.name_cut === true, folded: k.folded_names === undefined ? null : F.number(k.folded_names, `${what}.folded_names`) } : null,
    symbols: k.symbols === null || k.symbols === undefined ? null : F.list(k.symbols, `${what}.symbols`, 64).map((s, i) => F.text(s, `${what}.symbols[${i}]`)),
    p50: F.numberOrNull(k.p50, `${what}.p50`),
    p99: F.numberOrNull(k.p99, `${what}.p99`),
  };
}

function readEntry(e, what) {
  F.object(e, what);
  const kind = F.text(e.kind, `${what}.kind`);
  const key = F.list(e.key, `${what}.key`, 64).map((f, i) => F.text(f, `${what}.key[${i}]`));
  if (kind === 'scalar') return { key, kind, value: F.integer(e.value, `${what}.value`) };
  if (kind === 'stats') {
    const s = F.object(e.stats, `${what}.stats`);
    return { key, kind, count: F.integer(s.count, `${what}.stats.count`), total: F.integer(s.total, `${what}.stats.total`) };
  }
  return { key, kind, buckets: readBuckets(e.histogram, `${what}.histogram`, { maxBuckets: F.MAX_BUCKETS }), discarded: discardedOf(e.discarded, `${what}.discarded`) };
}

/** One report -> what merging needs of it; throws MergeError naming the field. */
function read(report) {
  const d = F.object(report.discarded || {}, 'discarded');
  return {
    tracer: F.textOrNull(report.tracer, 'tracer'),
    unit: F.textOrNull(report.unit, 'unit'),
    process: F.processOf(report),
    traced_ns: F.integerOrNull(report.traced_ns, 'traced_ns'),
    kinds: F.list(report.kinds, 'kinds').map((k, i) => readKind(k, `kinds[${i}]`)),
    other: F.list(report.other || [], 'other').map((a, i) => ({
      name: F.textOrNull(a.name, `other[${i}].name`),
      unit: F.textOrNull(a.unit, `other[${i}].unit`),
      entries: F.list(a.entries, `other[${i}].entries`).map((e, j) => readEntry(e, `other[${i}].entries[${j}]`)),
    })),
    discarded: { ...discardedOf(d, 'discarded'), impossible_maxima: F.integerOrNull(d.impossible_maxima, 'discarded.impossible_maxima') || 0n },
    pool: F.objectOrNull(report.pool, 'pool'),
  };
}

const addDiscarded = (list) => ({
  out_of_order: jsonInteger(list.reduce((n, d) => n + d.out_of_order, 0n)),
  longer_than_trace: jsonInteger(list.reduce((n, d) => n + d.longer_than_trace, 0n)),
});

const kindId = (k) => JSON.stringify([k.name, k.key, k.aggregation, k.subject && k.subject.field, k.subject
  && k.subject.text]);

function sameUnit(units, what) {
  const set = new Set(units);
  if (set.size > 1) throw new MergeError(`${what} is in ${[...set].join(' in one report and ')} in another: merge reports of one unit`);
  return units[0];
}

function mergeKind(parts, bySource) {
  const first = parts[0].kind;
  const what = `the kind ${JSON.stringify(first.name)}`;
  const unit = sameUnit(parts.map((p) => p.kind.unit), what);
  const buckets = addBuckets(parts.map((p) => p.kind.buckets), what);
  const max = maxOf(parts.map((p) => p.kind.max));
  const out = {
    name: first.name,
    module: first.module,
    key: first.key,
    aggregation: first.aggregation,
    count: jsonInteger(countOf(buckets)),
    unit,
    p50: percentileOf(buckets, 50, max),
    p90: percentileOf(buckets, 90, max),
    p99: percentileOf(buckets, 99, max),
    max: jsonInteger(max),
    histogram: bucketsJson(buckets),
    discarded: addDiscarded(parts.map((p) => p.kind.discarded)),
    breakdown: mergeBreakdown(parts.map((p) => p.kind.breakdown), max, what),
  };
  const notes = [...new Set(parts.map((p) => p.kind.note).filter(Boolean))];
  if (notes.length) out.note = notes.join('; ');
  if (first.subject) {
    out[first.subject.field] = first.subject.text;
    if (parts.some((p) => p.kind.subject.cut)) out.name_cut = true;
    if (first.subject.text === null) out.folded_names = parts.reduce((n, p) => n + (p.kind.subject.folded || 0), 0);
  }
  out.symbols = (parts.find((p) => p.kind.symbols) || { kind: { symbols: null } }).kind.symbols;
  if (bySource) {
    out.by_source = parts.map((p) => ({ source: p.source, count: jsonInteger(countOf(p.kind.buckets)), p50: p.kind.p50,
      p99: p.kind.p99, max: jsonInteger(p.kind.max) }));
  }
  return out;
}

// Each phase present in every part with it; a phase's percentiles capped
// by the kind's max, as latency's own (no part of an operation outlasts it).
function mergeBreakdown(breakdowns, max, what) {
  const present = breakdowns.filter(Boolean);
  if (!present.length) return null;
  const out = {};
  for (const phase of PHASES) {
    const parts = present.map((b) => b[phase]).filter(Boolean);
    if (!parts.length) continue;
    const buckets = addBuckets(parts.map((p) => p.buckets), `${what}, ${phase}`);
    out[phase] = {
      count: jsonInteger(countOf(buckets)),
      unit: sameUnit(parts.map((p) => p.unit), `${what}'s ${phase}`),
      p50: percentileOf(buckets, 50, max),
      p90: percentileOf(buckets, 90, max),
      p99: percentileOf(buckets, 99, max),
      histogram: bucketsJson(buckets),
      discarded: addDiscarded(parts.map((p) => p.discarded)),
    };
  }
  return out;
}

// A scalar's maps combine as the report combines a key printed twice
// (lib/aggregation/model.js scalarCombiner): min_/max_ maps by name.
function combineScalars(name, values) {
  if (/^max($|_)/.test(name || '')) return values.reduce((a, b) => (b > a ? b : a));
  if (/^min($|_)/.test(name || '')) return values.reduce((a, b) => (b < a ? b : a));
  return values.reduce((a, b) => a + b, 0n);
}

function mergeOther(reports) {
  const byName = new Map();
  for (const r of reports) {
    for (const a of r.other) {
      if (!byName.has(a.name)) byName.set(a.name, { name: a.name, unit: a.unit, entries: new Map() });
      const agg = byName.get(a.name);
      for (const e of a.entries) {
        const id = JSON.stringify([e.kind, e.key]);
        if (!agg.entries.has(id)) agg.entries.set(id, []);
        agg.entries.get(id).push(e);
      }
    }
  }
  return [...byName.values()].map((agg) => ({
    name: agg.name,
    unit: agg.unit,
    entries: [...agg.entries.values()].map((es) => {
      const e = es[0];
      const what = `the map ${JSON.stringify(agg.name)}'s key ${JSON.stringify(e.key)}`;
      if (e.kind === 'scalar') return { key: e.key, kind: e.kind, value: jsonInteger(combineScalars(agg.name, es.map((x) => x.value))) };
      if (e.kind === 'stats') {
        const count = es.reduce((n, x) => n + x.count, 0n);
        const total = es.reduce((n, x) => n + x.total, 0n);
        return { key: e.key, kind: e.kind,
          stats: { count: jsonInteger(count), average: jsonInteger(count === 0n ? 0n : total / count),
            total: jsonInteger(total) } };
      }
      const buckets = addBuckets(es.map((x) => x.buckets), what);
      return {
        key: e.key, kind: e.kind, count: jsonInteger(countOf(buckets)),
        p50: percentileOf(buckets, 50), p90: percentileOf(buckets, 90), p99: percentileOf(buckets, 99),
        histogram: bucketsJson(buckets), discarded: addDiscarded(es.map((x) => x.discarded)),
      };
    }),
  }));
}

/**
 * [{ source, report: read()'s }] -> the merged report, latency's JSON shape
 * with `sources` (each report's process and pool) instead of `process`.
 */
function merge(inputs, { bySource = false } = {}) {
  const merged = F.gatherRows(inputs, (r) => r.kinds, kindId, 'kind').map((parts) => mergeKind(parts, bySource));
  // Most time first, as latency's default order (--sort total).
  const total = (k) => estimatedTotal({ buckets: k.histogram.map((b) => ({ lo: b.lo === null ? null : BigInt(b.lo),
    hi: b.hi === null ? null : BigInt(b.hi), count: BigInt(b.count) })) });
  merged.sort((a, b) => total(b) - total(a));
  const reports = inputs.map((i) => i.report);
  const units = new Set(merged.map((k) => k.unit));
  return {
    tracer: F.common(reports.map((r) => r.tracer)),
    traced_ns: null,
    unit: units.size === 1 ? [...units][0] : (units.size ? null : F.common(reports.map((r) => r.unit))),
    kinds: merged,
    discarded: {
      ...addDiscarded(reports.map((r) => r.discarded)),
      impossible_maxima: jsonInteger(reports.reduce((n, r) => n + r.discarded.impossible_maxima, 0n)),
    },
    other: mergeOther(reports),
    pool: null,
    sources: inputs.map(({ source, report }) => ({ source, process: report.process, tracer: report.tracer,
      traced_ns: jsonInteger(report.traced_ns), pool: report.pool })),
  };
}

module.exports = { read, merge, VERSIONS: [1] };
