'use strict';
// latency --prometheus: the running histograms of latency's report as
// Prometheus metrics. addon-latency.bt's LIVE clause prints the kinds' maps
// every second, uncleared (values cumulative since the window opened),
// between two marker lines; LiveSnapshots takes those lines from the
// session (none is kept for the final report) and hands over each whole
// dump; the dump is read by latency's own parser and summary (pure) and
// rendered here (pure) as the exposition format (docs/prometheus.md).
const { buildModel } = require('./report/build-model');
const { summarize } = require('./report/summary');
const { kindName, PHASES } = require('./report/kinds');
const { estimatedTotal, totalCount } = require('../aggregation/model');
const { NS_PER } = require('../render/units');
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const { END_MARKER, REPORT_MARKER } = require('../tracer/output-formats');

const LIVE_BEGIN = 'Live maps.';
const LIVE_END = 'Live maps printed.';
// The lines of one dump: a kind is 5 maps of at most ~40 lines each (a
// power-of-2 histogram of microseconds); past this, the dump is not read
// (a map that grew past any kinds this endpoint shows).
const MAX_DUMP_LINES = 100000;
// Kinds shown, each its own series: the program's maps are bounded by
// bpftrace's map keys (4,096), a scraper's storage should be bounded far
// lower. The first MAX_KINDS kinds seen keep their series for the whole
// run; any later one is added into kind="(other kinds)", so that no
// series ever goes backwards.
const MAX_KINDS = 100;
const OTHER_KINDS = '(other kinds)';
// The `le` bounds, in seconds: powers of two microseconds, 1 µs to 2^27 µs
// (134 s), the bounds of bpftrace's hist() of microseconds; one fixed set
// for every kind and scrape. A value above the last is in +Inf only.
const LADDER_NS = Array.from({ length: 28 }, (_, k) => (2 ** k) * 1000);

const FAMILIES = [
  { role: 'total', name: 'nodetrace_latency_seconds', help: 'Thread-pool operations by total latency, queued to completion callback about to run, by kind (nodetrace latency)' },
  { role: 'queue_wait', name: 'nodetrace_latency_queue_wait_seconds', help: 'Time thread-pool operations waited for a pool thread, by kind' },
  { role: 'run', name: 'nodetrace_latency_run_seconds', help: 'Time thread-pool operations ran on a pool thread, by kind' },
  { role: 'loop_wait', name: 'nodetrace_latency_loop_wait_seconds', help: 'Time finished thread-pool work waited for the event loop to run its callback, by kind' },
];
const OPERATIONS = { name: 'nodetrace_latency_operations_total', help: 'Thread-pool operations completed, by kind' };

/**
 * Takes a session's lines (TracerSession's takeLine): those of each live
 * dump, markers included, are taken, and onDump(text) gets each whole dump.
 */
class LiveSnapshots {
  constructor(onDump, { maxLines = MAX_DUMP_LINES } = {}) {
    this.onDump = onDump;
    this.maxLines = maxLines;
    this.lines = null;
    this.overflowed = 0;
    this.abandoned = 0;
  }

  take(line) {
    if (line === LIVE_BEGIN) {
      this.lines = [];
      return true;
    }
    if (this.lines === null) return false;
    // The report's lines are never taken: the window's clause, run on
    // another CPU at the very moment a dump is printed, could interleave
    // with it (a dump is printed by one clause, so its lines otherwise come
    // together). That dump is given up.
    if (line === END_MARKER || line === REPORT_MARKER) {
      this.lines = null;
      this.abandoned++;
      return false;
    }
    if (line === LIVE_END) {
      const lines = this.lines;
      this.lines = null;
      if (lines.length > this.maxLines) this.overflowed++;
      else this.onDump(lines.join('\n') + '\n');
      return true;
    }
    if (this.lines.length <= this.maxLines) this.lines.push(line);
    return true;
  }
}

/** A dump's text -> latency's summary (the kinds and their breakdown). Pure. */
function dumpSummary(text) {
  return summarize(buildModel({ during: [], maps: text }, { tracer: 'bpftrace' }));
}

// An entry's counts on the ladder: cumulative counts of values ≤ each bound.
// A bucket [lo, hi) counts at the first bound ≥ hi (every value in it is
// below hi); one with no upper bound, or above the last, in +Inf only.
function onLadder(entry, unit) {
  const per = NS_PER[unit] || 1;
  const counts = LADDER_NS.map(() => 0n);
  for (const b of entry.buckets) {
    if (b.count <= 0n || b.hi === null) continue;
    const at = LADDER_NS.findIndex((bound) => Number(b.hi) * per <= bound);
    if (at >= 0) counts[at] += b.count;
  }
  let running = 0n;
  return counts.map((n) => (running += n));
}

function histogramOf(entry, unit) {
  return {
    ladder: onLadder(entry, unit),
    sumSeconds: (estimatedTotal(entry) * (NS_PER[unit] || 1)) / 1e9,
    count: totalCount(entry),
  };
}

function addHistograms(a, b) {
  if (!a) return b;
  return {
    ladder: a.ladder.map((n, i) => n + b.ladder[i]),
    sumSeconds: a.sumSeconds + b.sumSeconds,
    count: a.count + b.count,
  };
}

/**
 * The kinds that keep series of their own: those admitted before, then new
 * ones in the order given, up to `max`. Pure.
 */
function admitKinds(admitted, names, max = MAX_KINDS) {
  const out = admitted.slice();
  for (const name of names) if (out.length < max && !out.includes(name)) out.push(name);
  return out;
}

/**
 * renderMetrics(summary, { labels, admitted }) -> { text, admitted }
 *   labels: [[name, value], ...] every series carries (pid, container, pod)
 *   admitted: the kinds given series of their own so far (admitKinds)
 * Kinds are labelled `kind`; values are as cumulative as the dump. Pure.
 */
function renderMetrics(summary, { labels = [], admitted = [], maxKinds = MAX_KINDS } = {}) {
  const kinds = summary ? summary.kinds : [];
  const nowAdmitted = admitKinds(admitted, kinds.map(kindName), maxKinds);
  const shown = new Set(nowAdmitted);
  // kind name -> { total, queue_wait, run, loop_wait } histograms (others folded).
  const byKind = new Map();
  for (const kind of kinds) {
    const name = shown.has(kindName(kind)) ? kindName(kind) : OTHER_KINDS;
    const row = byKind.get(name) || {};
    row.total = addHistograms(row.total, histogramOf(kind.entry, kind.unit));
    for (const phase of PHASES) {
      const part = kind.breakdown && kind.breakdown[phase];
      if (part) row[phase] = addHistograms(row[phase], histogramOf(part.entry, part.unit));
    }
    byKind.set(name, row);
  }
  const names = [...byKind.keys()].sort();
  const le = LADDER_NS.map((ns) => ns / 1e9);
  let text = '';
  for (const family of FAMILIES) {
    text += familyHead(family.name, 'histogram', family.help);
    for (const name of names) {
      const h = byKind.get(name)[family.role];
      if (!h) continue;
      text += histogramSeries(family.name, [...labels, ['kind', name]], le.map((bound, i) => [bound, h.ladder[i]]), h.sumSeconds, h.count);
    }
  }
  text += familyHead(OPERATIONS.name, 'counter', OPERATIONS.help);
  for (const name of names) text += sample(OPERATIONS.name, [...labels, ['kind', name]], byKind.get(name).total.count);
  return { text, admitted: nowAdmitted };
}

/** The labels every series of one traced process carries: pid, and its container and pod where it has them. */
function processLabels(identity) {
  if (!identity) return [];
  const labels = [['pid', String(identity.pid)]];
  if (identity.container) labels.push(['container', identity.container.name || identity.container.id]);
  if (identity.pod) labels.push(['pod', identity.pod.name || identity.pod.uid]);
  return labels;
}

module.exports = {
  LIVE_BEGIN, LIVE_END, MAX_KINDS, OTHER_KINDS, LADDER_NS,
  LiveSnapshots, dumpSummary, admitKinds, renderMetrics, processLabels,
};
