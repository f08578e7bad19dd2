'use strict';
// libuv's thread pool as a resource, from the latency program's pool maps
// (d-scripts/addon-latency.bt and .d: @pool_busy_us per thread, @queue_len
// at each start, @pool_waiting_us) and the kinds' run times. Pure: aggregations and
// kinds in, a summary out, and the summary as the text report's lines or
// the JSON report's object.
const { percentile, totalCount, estimatedTotal } = require('../../aggregation/model');
const { jsonEstimate } = require('../../render/json');
const { plural } = require('../../render/text');

const POOL_MAPS = ['pool_busy_us', 'queue_len', 'pool_waiting_us'];

// Saturated enough to say so in one line: some operation was waiting for a
// thread this share of the trace, while the threads were busy. libuv hands a
// queued operation to an idle thread at once, but the thread takes time to
// wake up (about 100 µs on a VM here): a service queueing thousands of short
// operations a second waits that long for each, and those waits alone added
// up to 34% of the time with the threads 96% idle (the sqlite3 demo). So
// the waiting must come with threads busy half the time or more, or with
// operations queued behind one when it started. (The busy time counts only
// work that finished while tracing: an underestimate, hence only half.)
const SATURATED_WAITING = 0.20;
const SATURATED_BUSY = 0.5;

/** Splits the pool's maps off a model's aggregations: -> { pool, rest }. */
function splitPoolMaps(aggregations) {
  const pool = {};
  const rest = [];
  for (const a of aggregations) {
    if (POOL_MAPS.includes(a.name)) pool[a.name] = a;
    else rest.push(a);
  }
  return { pool: Object.keys(pool).length ? pool : null, rest };
}

function scalar(aggregation) {
  const e = aggregation && aggregation.entries[0];
  return e && e.value !== undefined ? Number(e.value) : null;
}

/**
 * @param {object} pool splitPoolMaps' pool (null: the program had no pool maps)
 * @param {Array<{name: string, runUs: number}>} kinds each kind's time running on the pool
 * @param {number} traceUs how long the trace lasted
 * @returns {null | {threads, busyShare, perThread, waitingShare, queue, byKind, saturated}}
 */
function summarizePool(pool, kinds, traceUs) {
  if (!pool || !traceUs) return null;
  const perThread = (pool.pool_busy_us ? pool.pool_busy_us.entries : [])
    .map((e) => ({ tid: Number(e.key[0]), busyUs: Number(e.value) }))
    .sort((a, b) => b.busyUs - a.busyUs);
  const threads = perThread.length;
  const busyUs = perThread.reduce((s, t) => s + t.busyUs, 0);
  const busyShare = threads ? Math.min(1, busyUs / (threads * traceUs)) : 0;
  const waitingUs = scalar(pool.pool_waiting_us);
  const waitingShare = waitingUs === null ? null : Math.min(1, waitingUs / traceUs);
  const q = pool.queue_len && pool.queue_len.entries[0];
  if (!threads && !q) return null;
  const queue = q && totalCount(q) > 0n
    ? queueFigures(q)
    : null;
  const runTotal = kinds.reduce((s, k) => s + k.runUs, 0);
  const byKind = kinds.filter((k) => k.runUs > 0)
    .map((k) => ({ name: k.name, share: runTotal ? k.runUs / runTotal : 0 }))
    .sort((a, b) => b.share - a.share);
  const saturated = waitingShare !== null && waitingShare >= SATURATED_WAITING
    && (busyShare >= SATURATED_BUSY || (queue !== null && queue.maxAtMost >= 1));
  return { threads, busyShare, perThread, waitingShare, queue, byKind, saturated };
}

// Percentiles interpolate inside a bucket ([0, 1) gives up to 1): none may
// exceed the bound of the highest bucket filled.
function queueFigures(q) {
  const maxAtMost = Number(lastFilled(q).hi) - 1;
  const clamp = (x) => Math.min(x, maxAtMost);
  return { p50: clamp(percentile(q, 50)), p99: clamp(percentile(q, 99)), maxAtMost, starts: Number(totalCount(q)) };
}

// The highest bucket anything fell in: DTrace's quantize() prints an empty
// row after it (bpftrace's hist() does not), and the bound must not depend
// on which tracer ran.
function lastFilled(entry) {
  return [...entry.buckets].reverse().find((b) => b.count > 0n);
}

// A kind's time on the pool, in microseconds, from its run histogram.
function runMicroseconds(kind) {
  const run = kind.breakdown && kind.breakdown.run;
  if (!run) return 0;
  const total = estimatedTotal(run.entry);
  return run.unit === 'us' ? total : run.unit === 'ns' ? total / 1000 : run.unit === 'ms' ? total * 1000 : total;
}

// A share as a whole percentage; one that rounds to 0 but is not, "<1%".
function pct(share) {
  return share > 0 && share < 0.005 ? '<1%' : `${Math.round(share * 100)}%`;
}

/** The pool's lines of the text report. */
function poolLines(summary) {
  if (!summary) return [];
  const lines = [];
  const top = summary.byKind.filter((k) => k.share >= 0.01).slice(0, 3).map((k) => `${k.name} ${pct(k.share)}`).join(', ');
  if (summary.threads) {
    lines.push(`thread pool: ${plural(summary.threads, 'thread')} ran work, `
      + `busy at least ${pct(summary.busyShare)} of the time (work that finished while tracing)` + (top ? `: ${top}` : ''));
  } else {
    lines.push('thread pool: no work that started while tracing finished');
  }
  if (summary.waitingShare !== null) {
    // A power-of-two histogram bounds the longest queue, it does not measure it.
    const queue = summary.queue ? `; operations still queued at each start: p50 ${Math.round(summary.queue.p50)}, p99 ${Math.round(summary.queue.p99)}, at most ${summary.queue.maxAtMost}` : '';
    const idle = !summary.saturated && summary.waitingShare >= SATURATED_WAITING
      ? ' (the threads were mostly idle: that is the time a thread takes to wake up, not a full pool)' : '';
    lines.push(`  operations waited for a free thread ${pct(summary.waitingShare)} of the time${idle}${queue}`);
  }
  if (summary.saturated) {
    const culprit = summary.byKind[0];
    lines.push(`  the thread pool was saturated ${pct(summary.waitingShare)} of the time: ${summary.threads} threads, mostly ${culprit ? culprit.name : 'unnamed work'}`
      + '; consider UV_THREADPOOL_SIZE (set before the pool starts) or less of that work at once');
  }
  return lines;
}

/** The pool's object in the JSON report (docs/json-format.md, `pool`): null without a summary. */
function poolToJSON(summary) {
  if (!summary) return null;
  return {
    threads: summary.threads,
    busy_share: jsonEstimate(summary.busyShare),
    busy_us_by_thread: summary.perThread.map((t) => ({ tid: t.tid, busy_us: t.busyUs })),
    waiting_share: jsonEstimate(summary.waitingShare),
    queued_at_start: summary.queue
      ? { p50: jsonEstimate(summary.queue.p50), p99: jsonEstimate(summary.queue.p99), at_most: summary.queue.maxAtMost,
        starts: summary.queue.starts } : null,
    run_share_by_kind: summary.byKind.map((k) => ({ name: k.name, share: jsonEstimate(k.share) })),
    saturated: summary.saturated,
  };
}

module.exports = { splitPoolMaps, summarizePool, runMicroseconds, poolLines, poolToJSON, POOL_MAPS, SATURATED_WAITING };
