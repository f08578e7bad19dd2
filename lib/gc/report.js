'use strict';
// `nodetrace gc`: the output of d-scripts/gc.bt|.d -> pauses by kind ->
// text (histograms as `latency` renders them) or JSON. Pure.
const { describeIdentity, identityJson } = require('../proc/container');
const { parse } = require('../aggregation/parse');
const { percentile, totalCount } = require('../aggregation/model');
const { renderHistogram, percentileText } = require('../render/histogram');
const { formatDuration } = require('../render/units');
const { jsonInteger, jsonHistogram } = require('../render/json');
const { safeText, safeJson } = require('../terminal-safe');
const { threadLabel, threadReportName } = require('../threads/roles');

const JSON_VERSION = 1;
// The order kinds are shown in, and what each is.
const KINDS = [
  ['scavenge', 'scavenges (young generation; Heap::CollectGarbage running the ScavengerCollector)'],
  ['mark-compact', "mark-compact (a full GC's pause; Heap::CollectGarbage running the MarkCompactCollector)"],
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
 * threads: [{ tid, kinds: [{ name, count, totalUs }] }] (the threads that
 * paused: each isolate collects on its own thread), tracedNs }. `maps`: the tracer's output after the END marker (the
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
    kinds.push({ name, describe, entry, count: value(counts) || totalCount(entry), totalUs: value(totals),
      maxUs: value(maxes) });
  }
  return { kinds, threads: threadPauses(model), tracedNs: traced ? traced.value : null };
}

// @thread_pauses[TID, KIND] and @thread_pause_us[TID, KIND] (KIND: 0-3, KINDS' order) -> per thread, kinds in KINDS order.
function threadPauses(model) {
  const entries = (name) => {
    const agg = model.aggregations.find((a) => a.name === name);
    return agg ? agg.entries.filter((e) => e.kind === 'scalar' && e.key.length === 2 && /^\d+$/.test(e.key[0])) : [];
  };
  const threads = new Map();
  const kindOf = (tid, kind) => {
    if (!threads.has(tid)) threads.set(tid, new Map());
    const m = threads.get(tid);
    if (!m.has(kind)) m.set(kind, { name: kind, count: 0n, totalUs: 0n });
    return m.get(kind);
  };
  // The kind as its index in KINDS (the programs' @since index): a string
  // key of a tuple came out as stray bytes on bpftrace 0.17 (d-scripts/gc.bt).
  const nameOf = (k) => (/^[0-3]$/.test(k) ? KINDS[Number(k)][0] : null);
  for (const e of entries('thread_pauses')) if (nameOf(e.key[1])) kindOf(Number(e.key[0]), nameOf(e.key[1])).count += e.value;
  for (const e of entries('thread_pause_us')) if (nameOf(e.key[1])) kindOf(Number(e.key[0]), nameOf(e.key[1])).totalUs += e.value;
  const order = KINDS.map(([name]) => name);
  return [...threads].map(([tid, m]) => ({ tid, kinds: [...m.values()].filter((k) => order.includes(k.name))
    .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name)) }))
    .filter((t) => t.kinds.length)
    .sort((a, b) => Number(b.kinds.reduce((n, k) => n + k.totalUs, 0n) - a.kinds.reduce((n, k) => n + k.totalUs, 0n))
      || a.tid - b.tid);
}

function threadName(t, identityOf) {
  return threadReportName(t.tid, identityOf(t.tid));
}

function share(us, ns) {
  if (us === null || !ns) return '';
  const p = (Number(us) * 1000 / Number(ns)) * 100;
  return ` (${p > 0 && p < 0.1 ? '<0.1' : p.toFixed(1)}% of the time)`;
}

// Where the pauses were: each isolate (the main thread's, each Worker's)
// collects its own heap on its own thread. Said whenever a thread other
// than the main one paused: a Worker's pauses are not the main loop's.
function threadLines(r, identityOf, us) {
  const threads = r.threads || [];
  if (!threads.length || (threads.length === 1 && (identityOf(threads[0].tid) || {}).role === 'main')) return [];
  const kinds = (t) => t.kinds.map((k) => `${k.name} ${k.count} (${us(k.totalUs)})`).join(', ');
  if (threads.length === 1) {
    return ['', `All of them in ${threadName(threads[0], identityOf)}, which collects its own heap: the main thread did not pause.`];
  }
  const names = threads.map((t) => threadName(t, identityOf));
  const width = Math.max(...names.map((n) => n.length));
  return ['', 'By thread (each isolate, the main thread\'s and each Worker\'s, collects its own heap; the histograms below hold every thread):',
    ...threads.map((t, i) => `  ${names[i].padEnd(width)}  ${kinds(t)}`)];
}

/**
 * renderGcText(report, { pid, who, identityOf }) -> string; who:
 * lib/proc/container.js's identity; identityOf(tid): the thread's identity
 * (lib/threads/identify.js) or null.
 */
function renderGcText(r, { pid, who, identityOf = (tid) => (tid === pid ? { role: 'main' } : undefined) }) {
  const us = (v) => formatDuration(v, 'us');
  const out = [];
  const traced = r.tracedNs !== null ? formatDuration(r.tracedNs, 'ns') : 'unknown';
  const paused = r.kinds.reduce((n, k) => n + (k.totalUs || 0n), 0n);
  out.push(`GC pauses of ${who ? describeIdentity(who) : `PID ${pid}`}, traced ${traced}: ${r.kinds.reduce((n, k) => n + k.count, 0n)} pauses, ${us(paused)} in all${share(paused, r.tracedNs)}.`);
  if (!r.kinds.length) out.push('No garbage collection ran while tracing.');
  out.push(...threadLines(r, identityOf, us));
  for (const k of r.kinds) {
    out.push('', `${k.name}: ${k.describe}`);
    out.push(...renderHistogram(k.entry, 'us', { width: 40 }));
    const limit = k.maxUs === null ? null : Number(k.maxUs);
    // Each percentile as the bucket of the tracer's histogram that holds it.
    const ps = [50, 90, 99].map((p) => `p${p} ${percentileText(k.entry, p, 'us', { limit })}`);
    out.push(`  count ${k.count}, ${ps.join(', ')}${k.maxUs !== null ? `, max ${us(k.maxUs)}` : ''}${k.totalUs !== null ? `, total ${us(k.totalUs)}${share(k.totalUs, r.tracedNs)}` : ''}`);
  }
  return safeText(out.join('\n') + '\n');
}

/** renderGcJSON(report, { pid, who, tracer, identityOf }) -> string (docs/json-format.md) */
function renderGcJSON(r, { pid, who, tracer, identityOf = (tid) => (tid === pid ? { role: 'main' } : null) }) {
  const threads = (r.threads || []).map((t) => {
    const identity = identityOf(t.tid);
    return {
      tid: t.tid,
      role: identity ? identity.role : 'exited',
      label: threadLabel(identity),
      ...(identity && identity.role === 'worker' ? { worker: { thread_id: identity.worker.threadId, name: identity.worker.name || null } } : {}),
      kinds: t.kinds.map((k) => ({ name: k.name, count: jsonInteger(k.count), total_us: jsonInteger(k.totalUs) })),
    };
  });
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
  return safeJson({ version: JSON_VERSION, command: 'gc', pid, ...(who ? { process: identityJson(who) } : {}), tracer, traced_ns: r.tracedNs === null ? null : jsonInteger(r.tracedNs), unit: 'us', kinds, threads }) + '\n';
}

module.exports = { parseGc, renderGcText, renderGcJSON, KINDS };
