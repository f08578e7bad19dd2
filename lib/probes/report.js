'use strict';
// What `nodetrace probes --count` and `--latency` print, from the maps of
// d-scripts/usdt-count.bt and usdt-latency.bt (one or more tracers: a
// probe library that appeared later has one of its own). Pure.
const { parseBpftraceJson } = require('../aggregation/parse-bpftrace');
const { percentile, totalCount, mergeTwo } = require('../aggregation/model');
const { renderHistogram, percentileText } = require('../render/histogram');
const { formatDuration } = require('../render/units');
const { jsonInteger, jsonEstimate, jsonHistogram } = require('../render/json');
const { safeText, safeJson } = require('../terminal-safe');
const { plural } = require('../render/text');
const { describeIdentity, identityJson } = require('../proc/container');

const JSON_VERSION = 1;

// The maps of one tracer (its map and hist items), as the aggregation model.
function modelOf(items) {
  return parseBpftraceJson(items.map((i) => JSON.stringify(i)).join('\n'));
}

function entriesOf(model, name) {
  const a = model.aggregations.find((x) => x.name === name);
  return a ? a.entries : [];
}

/**
 * Counts by process and probe, over every tracer: [{ pid, probe, count }],
 * each tracer's clause K named by its own probes.
 * @param {Array<{ items, probes }>} runs
 */
function counts(runs) {
  const by = new Map();
  for (const { items, probes } of runs) {
    for (const e of entriesOf(modelOf(items), 'count')) {
      const [pid, k] = e.key.map(Number);
      const probe = probes[k - 1];
      if (!probe || e.kind !== 'scalar') continue;
      const key = `${pid}\0${probe.provider}\0${probe.name}`;
      const had = by.get(key);
      by.set(key, { pid, probe, count: (had ? had.count : 0n) + BigInt(e.value) });
    }
  }
  return [...by.values()].sort((a, b) => (a.pid - b.pid) || `${a.probe.provider}:${a.probe.name}`.localeCompare(`${b.probe.provider}:${b.probe.name}`));
}

/** Every probe counted, with 0 for those that never fired in a process traced. */
function withZeros(rows, probes, pids) {
  const out = [...rows];
  for (const pid of pids) {
    for (const probe of probes) {
      if (!out.some((r) => r.pid === pid && r.probe.provider === probe.provider
        && r.probe.name === probe.name)) out.push({ pid, probe, count: 0n });
    }
  }
  return out.sort((a, b) => (a.pid - b.pid) || `${a.probe.provider}:${a.probe.name}`.localeCompare(`${b.probe.provider}:${b.probe.name}`));
}

function renderCountsText(rows, { identityOf }) {
  if (!rows.length) return 'no probe fired while tracing.\n';
  const lines = [];
  let pid = null;
  const width = Math.max(...rows.map((r) => `${r.probe.provider}:${r.probe.name}`.length), 5);
  for (const r of rows) {
    if (r.pid !== pid) {
      if (pid !== null) lines.push('');
      pid = r.pid;
      lines.push(describeIdentity(identityOf(pid)));
      lines.push(`  ${'PROBE'.padEnd(width)}  ${'COUNT'.padStart(10)}`);
    }
    lines.push(`  ${`${r.probe.provider}:${r.probe.name}`.padEnd(width)}  ${r.count.toString().padStart(10)}`);
  }
  return safeText(lines.join('\n')) + '\n';
}

function renderCountsJson(rows, { identityOf, seconds }) {
  return safeJson({
    version: JSON_VERSION,
    seconds,
    counts: rows.map((r) => ({ ...identityJson(identityOf(r.pid)), provider: r.probe.provider, probe: r.probe.name,
      count: jsonInteger(r.count) })),
  }) + '\n';
}

/**
 * Latency per process, over every tracer: [{ pid, entry (a log2 histogram
 * in microseconds), starts, ends }].
 */
function latencies(runs) {
  const by = new Map();
  const at = (pid) => {
    if (!by.has(pid)) by.set(pid, { pid, entry: null, starts: 0n, ends: 0n, totalUs: 0n, maxUs: null });
    return by.get(pid);
  };
  for (const { items } of runs) {
    const model = modelOf(items);
    for (const e of entriesOf(model, 'latency_us')) {
      const r = at(Number(e.key[0]));
      r.entry = r.entry ? mergeTwo(r.entry, e) : e;
    }
    for (const e of entriesOf(model, 'latency_stats_us')) if (e.kind === 'stats') at(Number(e.key[0])).totalUs += BigInt(e.stats.total);
    for (const e of entriesOf(model, 'latency_max_us')) {
      const r = at(Number(e.key[0]));
      if (r.maxUs === null || BigInt(e.value) > r.maxUs) r.maxUs = BigInt(e.value);
    }
    for (const e of entriesOf(model, 'starts')) at(Number(e.key[0])).starts += BigInt(e.value);
    for (const e of entriesOf(model, 'ends')) at(Number(e.key[0])).ends += BigInt(e.value);
  }
  return [...by.values()].sort((a, b) => a.pid - b.pid);
}

function paired(r) {
  return r.entry ? totalCount(r.entry) : 0n;
}

// The exact mean (the program's stats(): a sum and a count), in µs, or null.
function meanUs(r) {
  const n = paired(r);
  return n > 0n ? Number(r.totalUs) / Number(n) : null;
}

function renderLatencyText(rows, { identityOf, start, end }) {
  if (!rows.length) return `neither ${start} nor ${end} fired while tracing.\n`;
  const out = [];
  for (const r of rows) {
    if (out.length) out.push('');
    out.push(`${describeIdentity(identityOf(r.pid))}: ${start} -> ${end}, ${paired(r)} paired (${r.starts} starts, ${r.ends} ends)`);
    if (!r.entry) { out.push('  no end met its start'); continue; }
    out.push(...renderHistogram(r.entry, 'us', { width: 40 }));
    // Percentiles as the rows that hold them (capped by the exact max), as every report gives them.
    const limit = r.maxUs === null ? null : Number(r.maxUs);
    out.push(`  mean ${formatDuration(meanUs(r), 'us')}  max ${formatDuration(Number(r.maxUs), 'us')}  `
      + `${[50, 90, 99].map((p) => `p${p} ${percentileText(r.entry, p, 'us', { limit })}`).join('  ')}`);
  }
  const unpaired = rows.reduce((n, r) => n + (r.ends - paired(r)), 0n);
  if (unpaired > 0n) out.push('', `${plural(unpaired, 'end')} met no start: started before the trace, or keyed otherwise than the start`);
  return safeText(out.join('\n')) + '\n';
}

function renderLatencyJson(rows, { identityOf, start, end, key, seconds }) {
  return safeJson({
    version: JSON_VERSION,
    seconds,
    start,
    end,
    key,
    processes: rows.map((r) => ({
      ...identityJson(identityOf(r.pid)),
      starts: jsonInteger(r.starts),
      ends: jsonInteger(r.ends),
      paired: jsonInteger(paired(r)),
      mean_us: r.entry ? jsonEstimate(meanUs(r)) : null,
      max_us: r.maxUs === null ? null : jsonInteger(r.maxUs),
      p50_us: r.entry ? jsonEstimate(percentile(r.entry, 50, r.maxUs === null ? null : Number(r.maxUs))) : null,
      p90_us: r.entry ? jsonEstimate(percentile(r.entry, 90, r.maxUs === null ? null : Number(r.maxUs))) : null,
      p99_us: r.entry ? jsonEstimate(percentile(r.entry, 99, r.maxUs === null ? null : Number(r.maxUs))) : null,
      histogram_us: r.entry ? jsonHistogram(r.entry) : [],
    })),
  }) + '\n';
}

module.exports = { counts, withZeros, renderCountsText, renderCountsJson, latencies, renderLatencyText,
  renderLatencyJson, JSON_VERSION };
