'use strict';
// latency --prometheus: the running histograms of latency's report as
// Prometheus metrics. addon-latency.bt's LIVE clause prints the kinds' maps
// every second, uncleared (lib/prometheus/live-dumps.js); each dump is read
// by latency's own parser and summary (pure) and rendered here (pure) as
// the exposition format (docs/prometheus.md). The endpoint and the rest:
// lib/prometheus/live.js.
const { buildModel } = require('./report/build-model');
const { summarize } = require('./report/summary');
const { kindName, PHASES } = require('./report/kinds');
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const {
  MAX_KINDS, OTHER_KINDS, histogramOf, addHistograms, ladderPairs, groupByAdmittedKind,
} = require('../prometheus/histograms');

const FAMILIES = [
  { role: 'total', name: 'nodetrace_latency_seconds', help: 'Thread-pool operations by total latency, queued to completion callback about to run, by kind (nodetrace latency)' },
  { role: 'queue_wait', name: 'nodetrace_latency_queue_wait_seconds', help: 'Time thread-pool operations waited for a pool thread, by kind' },
  { role: 'run', name: 'nodetrace_latency_run_seconds', help: 'Time thread-pool operations ran on a pool thread, by kind' },
  { role: 'loop_wait', name: 'nodetrace_latency_loop_wait_seconds', help: 'Time finished thread-pool work waited for the event loop to run its callback, by kind' },
];
const OPERATIONS = { name: 'nodetrace_latency_operations_total', help: 'Thread-pool operations completed, by kind' };

/** A dump's text -> latency's summary (the kinds and their breakdown). Pure. */
function dumpSummary(text) {
  return summarize(buildModel({ during: [], maps: text }, { tracer: 'bpftrace' }));
}

/**
 * renderMetrics(summary, { labels, admitted }) -> { text, admitted }
 *   labels: [[name, value], ...] every series carries (pid, container, pod)
 *   admitted: the kinds given series of their own so far (admitKeys)
 * Kinds are labelled `kind`; values are as cumulative as the dump. Pure.
 */
function renderMetrics(summary, { labels = [], admitted = [], maxKinds = MAX_KINDS } = {}) {
  const kinds = summary ? summary.kinds : [];
  const { groups, admitted: nowAdmitted } = groupByAdmittedKind(kinds, kindName, { admitted, max: maxKinds });
  // series name -> { total, queue_wait, run, loop_wait } histograms (others folded).
  const byKind = new Map();
  for (const [name, group] of groups) {
    const row = {};
    for (const kind of group) {
      row.total = addHistograms(row.total, histogramOf(kind.entry, kind.unit));
      for (const phase of PHASES) {
        const part = kind.breakdown && kind.breakdown[phase];
        if (part) row[phase] = addHistograms(row[phase], histogramOf(part.entry, part.unit));
      }
    }
    byKind.set(name, row);
  }
  const names = [...byKind.keys()].sort();
  let text = '';
  for (const family of FAMILIES) {
    text += familyHead(family.name, 'histogram', family.help);
    for (const name of names) {
      const h = byKind.get(name)[family.role];
      if (!h) continue;
      text += histogramSeries(family.name, [...labels, ['kind', name]], ladderPairs(h), h.sumSeconds, h.count);
    }
  }
  text += familyHead(OPERATIONS.name, 'counter', OPERATIONS.help);
  for (const name of names) text += sample(OPERATIONS.name, [...labels, ['kind', name]], byKind.get(name).total.count);
  return { text, admitted: nowAdmitted };
}

// What lib/prometheus/live.js serves for latency.
const liveMetrics = {
  read: dumpSummary,
  render: (summary, { labels, state }) => {
    const out = renderMetrics(summary, { labels, admitted: state });
    return { text: out.text, state: out.admitted };
  },
};

module.exports = { MAX_KINDS, OTHER_KINDS, dumpSummary, renderMetrics, liveMetrics };
