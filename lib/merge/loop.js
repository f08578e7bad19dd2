'use strict';
// `loop --json` reports merged: the busy time per turn's histogram added
// bucket by bucket, turns and busy time added (so busy_total_us / turns_ns
// is the loops' busy share together), every stall kept, longest first, with
// the source it came from, and --stacks' samples added by stack. Only
// reports made with the same --over merge: a stall list is every turn over
// that threshold. The thread, its Workers and a turn open at the end are
// one process's: per source only. Pure.
const { readBuckets, addBuckets, bucketsJson, countOf, percentileOf, maxOf, MergeError } = require('./histogram');
const { jsonInteger } = require('../render/json');
const F = require('./fields');

function read(report) {
  const busy = F.objectOrNull(report.busy, 'busy');
  return {
    tracer: F.textOrNull(report.tracer, 'tracer'),
    process: F.processOf(report),
    thread: F.objectOrNull(report.thread, 'thread'),
    traced_ns: F.integerOrNull(report.traced_ns, 'traced_ns'),
    turns_ns: F.integerOrNull(report.turns_ns, 'turns_ns'),
    turns: F.integer(report.turns, 'turns'),
    busy_total_us: F.integer(report.busy_total_us, 'busy_total_us'),
    over_us: F.number(report.over_us, 'over_us'),
    busy: busy ? { max: F.integerOrNull(busy.max, 'busy.max'), p99: F.numberOrNull(busy.p99, 'busy.p99'), buckets: readBuckets(busy.histogram, 'busy.histogram', { maxBuckets: F.MAX_BUCKETS }) } : null,
    stalls: F.list(report.stalls, 'stalls').map((s, i) => ({ ended_at: F.text(s.ended_at, `stalls[${i}].ended_at`), busy_us: F.integer(s.busy_us, `stalls[${i}].busy_us`) })),
    early: F.objectOrNull(report.early, 'early'),
    open: F.objectOrNull(report.open, 'open'),
    stacks: report.stacks === null || report.stacks === undefined ? null : F.list(report.stacks, 'stacks').map((s, i) => ({
      samples: F.number(s.samples, `stacks[${i}].samples`),
      frames: F.list(s.frames, `stacks[${i}].frames`, 1024).map((f, j) => F.text(f, `stacks[${i}].frames[${j}]`)),
    })),
  };
}

function merge(inputs, { bySource = false } = {}) {
  const reports = inputs.map((i) => i.report);
  const overs = [...new Set(reports.map((r) => r.over_us))];
  if (overs.length > 1) throw new MergeError(`the reports were made with different --over (${overs.map((us) => `${us / 1000} ms`).join(', ')}): their stall lists do not add; merge reports of one threshold`);
  const withBusy = inputs.filter((i) => i.report.busy);
  let busy = null;
  if (withBusy.length) {
    const buckets = addBuckets(withBusy.map((i) => i.report.busy.buckets), 'the busy time per turn');
    const max = maxOf(withBusy.map((i) => i.report.busy.max));
    busy = {
      unit: 'us', count: jsonInteger(countOf(buckets)),
      p50: percentileOf(buckets, 50, max), p90: percentileOf(buckets, 90, max), p99: percentileOf(buckets, 99, max),
      max: jsonInteger(max), histogram: bucketsJson(buckets),
      ...(bySource ? { by_source: withBusy.map((i) => ({ source: i.source,
        count: jsonInteger(countOf(i.report.busy.buckets)), p99: i.report.busy.p99,
        max: jsonInteger(i.report.busy.max) })) } : {}),
    };
  }
  const turnsNs = reports.map((r) => r.turns_ns);
  const stalls = inputs.flatMap(({ source, report }) => report.stalls.map((s) => ({ ...s, source })))
    .sort((a, b) => (b.busy_us > a.busy_us ? 1 : b.busy_us < a.busy_us ? -1 : 0))
    .map((s) => ({ ended_at: s.ended_at, busy_us: jsonInteger(s.busy_us), source: s.source }));
  return {
    pid: null,
    tracer: F.common(reports.map((r) => r.tracer)),
    thread: null,
    workers: [],
    traced_ns: null,
    turns_ns: turnsNs.includes(null) ? null : jsonInteger(turnsNs.reduce((a, b) => a + b, 0n)),
    turns: jsonInteger(reports.reduce((n, r) => n + r.turns, 0n)),
    busy_total_us: jsonInteger(reports.reduce((n, r) => n + r.busy_total_us, 0n)),
    over_us: overs[0],
    busy,
    stalls,
    early: null,
    open: null,
    stacks: reports.every((r) => r.stacks) ? mergeStacks(reports.map((r) => r.stacks)) : null,
    sources: inputs.map(({ source, report }) => ({
      source, process: report.process, tracer: report.tracer, thread: report.thread,
      traced_ns: jsonInteger(report.traced_ns), early: report.early, open: report.open,
    })),
  };
}

function mergeStacks(lists) {
  const byFrames = new Map();
  for (const s of lists.flat()) {
    const id = JSON.stringify(s.frames);
    if (byFrames.has(id)) byFrames.get(id).samples += s.samples;
    else byFrames.set(id, { samples: s.samples, frames: s.frames });
  }
  return [...byFrames.values()].sort((a, b) => b.samples - a.samples);
}

module.exports = { read, merge, VERSIONS: [1] };
