'use strict';
// gc --prometheus: V8's pauses by kind as Prometheus metrics. gc.bt's LIVE
// clause prints its pause maps every second, uncleared; each dump is read
// by gc's own parser (pure) and rendered here (pure). The kinds are gc's
// four (lib/gc/report.js KINDS): the series are bounded by construction.
// The endpoint and the rest: lib/prometheus/live.js; docs/prometheus.md.
const { parseGc } = require('./report');
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const { histogramOf, ladderPairs } = require('../prometheus/histograms');

const PAUSES = { name: 'nodetrace_gc_pause_seconds', help: 'V8 garbage-collection pauses of the process by kind: scavenge, mark-compact, incremental, weak-callbacks (nodetrace gc)' };
const COUNT = { name: 'nodetrace_gc_pauses_total', help: 'V8 garbage-collection pauses by kind' };

/** A dump's text -> gc's kinds. Pure. */
function dumpKinds(text) {
  return parseGc(text, { tracer: 'bpftrace' }).kinds;
}

/**
 * renderGcMetrics(kinds | null, { labels }) -> text. Each kind's histogram
 * of pauses on the fixed `le` bounds; its `_sum` the program's exact total
 * (@pause_total_us), not an estimate from the buckets. Pure.
 */
function renderGcMetrics(kinds, { labels = [] } = {}) {
  const shown = kinds || [];
  let text = familyHead(PAUSES.name, 'histogram', PAUSES.help);
  for (const kind of shown) {
    const h = histogramOf(kind.entry, 'us');
    const sumSeconds = kind.totalUs === null ? h.sumSeconds : Number(kind.totalUs) / 1e6;
    text += histogramSeries(PAUSES.name, [...labels, ['kind', kind.name]], ladderPairs(h), sumSeconds, h.count);
  }
  text += familyHead(COUNT.name, 'counter', COUNT.help);
  for (const kind of shown) text += sample(COUNT.name, [...labels, ['kind', kind.name]], kind.count);
  return text;
}

// What lib/prometheus/live.js serves for gc.
const liveMetrics = {
  read: dumpKinds,
  render: (kinds, { labels }) => ({ text: renderGcMetrics(kinds, { labels }) }),
};

module.exports = { dumpKinds, renderGcMetrics, liveMetrics };
