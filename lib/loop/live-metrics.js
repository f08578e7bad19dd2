'use strict';
// loop --prometheus: the busy time of each turn of the traced event loop as
// Prometheus metrics. loop.bt's LIVE clause prints its turn maps every
// second, uncleared; each dump is read by loop's own parser (pure) and
// rendered here (pure). One loop per endpoint: a histogram and a counter.
// The endpoint and the rest: lib/prometheus/live.js; docs/prometheus.md.
const { parseLoop } = require('./report');
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const { histogramOf, ladderPairs } = require('../prometheus/histograms');

const BUSY = { name: 'nodetrace_loop_busy_seconds', help: 'Time each turn of the event loop ran code rather than waiting for I/O (nodetrace loop)' };
const TURNS = { name: 'nodetrace_loop_turns_total', help: 'Turns of the event loop' };

/** A dump's text -> loop's busy histogram, turns and exact total. Pure. */
function dumpTurns(text) {
  const r = parseLoop({ maps: text }, { tracer: 'bpftrace' });
  return { busy: r.busy, turns: r.turns, busyTotalUs: r.busyTotalUs };
}

/**
 * renderLoopMetrics(turns | null, { labels }) -> text: the histogram of
 * each turn's busy time on the fixed `le` bounds, its `_count` the turns
 * and `_sum` the program's exact total (@busy_total_us). Pure.
 */
function renderLoopMetrics(turns, { labels = [] } = {}) {
  let text = familyHead(BUSY.name, 'histogram', BUSY.help);
  const seen = turns && turns.busy;
  if (seen) {
    const h = histogramOf(turns.busy, 'us');
    text += histogramSeries(BUSY.name, labels, ladderPairs(h), Number(turns.busyTotalUs) / 1e6, h.count);
  }
  text += familyHead(TURNS.name, 'counter', TURNS.help);
  if (seen) text += sample(TURNS.name, labels, turns.turns);
  return text;
}

// What lib/prometheus/live.js serves for loop: the thread's labels with the process's.
function liveMetricsFor(thread) {
  const extra = thread ? [['thread', thread.role === 'main' ? 'main' : thread.label]] : [];
  return {
    read: dumpTurns,
    render: (turns, { labels }) => ({ text: renderLoopMetrics(turns, { labels: [...labels, ...extra] }) }),
  };
}

module.exports = { dumpTurns, renderLoopMetrics, liveMetricsFor };
