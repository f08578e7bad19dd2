'use strict';
// `nodetrace gc`: the output of d-scripts/gc.bt|.d -> pauses by kind ->
// text (histograms as `latency` renders them) or JSON. Pure.
const { describeIdentity, identityJson } = require('../proc/container');
const { parse } = require('../aggregation/parse');
const { percentile, totalCount } = require('../aggregation/model');
const { renderHistogram } = require('../render/histogram');
const { formatDuration } = require('../render/units');
const { jsonInteger, jsonHistogram } = require('../render/json');
const { safeText, safeJson } = require('../terminal-safe');

const JSON_VERSION = 1;
// The order kinds are shown in, and what each is.
const KINDS = [
  ['scavenge', 'scavenges (young generation; ScavengerCollector::CollectGarbage)'],
  ['mark-compact', 'mark-compact (the atomic pause of a full GC; MarkCompactCollector::CollectGarbage)'],
  ['incremental', 'incremental marking steps (IncrementalMarking::Step)'],
  ['weak-callbacks', 'weak callbacks run by the GC (GlobalHandles::Invoke*Callbacks)'],
];

function byKind(model, name) {
  const agg = model.aggregations.find((a) => a.name === name);
  const out = new Map();
  for (const e of agg ? agg.entries : []) out.set(e.key.join(','), e);
  return out;
}

/**
 * parseGc(maps, { tracer }) -> { kinds: [{ name, describe, entry, count,
 * totalUs, maxUs }] (kinds that paused at least once, in KINDS order),
 * tracedNs }. `maps`: the tracer's output after the END marker (the
 * session's result.maps). Numbers are BigInt, as in lib/aggregation's model.
 */
function parseGc(maps, { tracer } = {}) {
  const model = parse(String(maps || '').replace(/\0/g, ''), { tracer });
  const hists = byKind(model, 'pause_us');
  const counts = byKind(model, 'pauses');
  const totals = byKind(model, 'pause_total_us');
  const maxes = byKind(model, 'pause_max_us');
  const traced = byKind(model, 'traced_ns').get('');
  const kinds = [];
  for (const [name, describe] of KINDS) {
    const entry = hists.get(name);
    if (!entry || !Array.isArray(entry.buckets) || totalCount(entry) === 0n) continue;
    const value = (m) => (m.get(name) ? m.get(name).value : null);
    kinds.push({ name, describe, entry, count: value(counts) || totalCount(entry), totalUs: value(totals), maxUs: value(maxes) });
  }
  return { kinds, tracedNs: traced ? traced.value : null };
}

function share(us, ns) {
  if (us === null || !ns) return '';
  const p = (Number(us) * 1000 / Number(ns)) * 100;
  return ` (${p > 0 && p < 0.1 ? '<0.1' : p.toFixed(1)}% of the time)`;
}

/** renderGcText(report, { pid, who }) -> string; who: lib/proc/container.js's identity */
function renderGcText(r, { pid, who }) {
  const us = (v) => formatDuration(v, 'us');
  const out = [];
  const traced = r.tracedNs !== null ? formatDuration(r.tracedNs, 'ns') : 'unknown';
  const paused = r.kinds.reduce((n, k) => n + (k.totalUs || 0n), 0n);
  out.push(`GC pauses of ${who ? describeIdentity(who) : `PID ${pid}`}, traced ${traced}: ${r.kinds.reduce((n, k) => n + k.count, 0n)} pauses, ${us(paused)} in all${share(paused, r.tracedNs)}.`);
  if (!r.kinds.length) out.push('No garbage collection ran while tracing.');
  for (const k of r.kinds) {
    out.push('', `${k.name}: ${k.describe}`);
    out.push(...renderHistogram(k.entry, 'us', { width: 40 }));
    const limit = k.maxUs === null ? null : Number(k.maxUs);
    const ps = [50, 90, 99].map((p) => `p${p} ${us(percentile(k.entry, p, limit))}`);
    out.push(`  count ${k.count}, ${ps.join(', ')}${k.maxUs !== null ? `, max ${us(k.maxUs)}` : ''}${k.totalUs !== null ? `, total ${us(k.totalUs)}${share(k.totalUs, r.tracedNs)}` : ''}`);
  }
  return safeText(out.join('\n') + '\n');
}

/** renderGcJSON(report, { pid, who, tracer }) -> string (docs/json-format.md) */
function renderGcJSON(r, { pid, who, tracer }) {
  const kinds = r.kinds.map((k) => {
    const limit = k.maxUs === null ? null : Number(k.maxUs);
    return {
      name: k.name,
      count: jsonInteger(k.count),
      total_us: k.totalUs === null ? null : jsonInteger(k.totalUs),
      max_us: k.maxUs === null ? null : jsonInteger(k.maxUs),
      p50_us: percentile(k.entry, 50, limit),
      p99_us: percentile(k.entry, 99, limit),
      histogram: jsonHistogram(k.entry),
    };
  });
  return safeJson({ version: JSON_VERSION, pid, ...(who ? { process: identityJson(who) } : {}), tracer, traced_ns: r.tracedNs === null ? null : jsonInteger(r.tracedNs), unit: 'us', kinds }) + '\n';
}

module.exports = { parseGc, renderGcText, renderGcJSON, KINDS };
