'use strict';
// async --prometheus: every kind of asynchronous operation's running counts
// and histograms as Prometheus metrics. async.bt's LIVE clause prints the
// kinds' maps every second, uncleared; each dump is read by async's own
// parser (pure) and rendered here (pure). The endpoint and the rest:
// lib/prometheus/live.js; docs/prometheus.md.
const { parseAsync } = require('./report/build-model');
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const {
  MAX_KINDS, OTHER_KINDS, histogramOf, addHistograms, ladderPairs, groupByAdmittedKind,
} = require('../prometheus/histograms');

const COUNTERS = [
  { field: 'created', name: 'nodetrace_async_operations_created_total', help: 'Asynchronous operations created, by kind (nodetrace async)' },
  { field: 'destroyed', name: 'nodetrace_async_operations_destroyed_total', help: 'Asynchronous operations destroyed, by kind' },
  { field: 'callbacks', name: 'nodetrace_async_callbacks_total', help: 'Callbacks of asynchronous operations run, by kind' },
];
const HISTOGRAMS = [
  { field: 'wait', name: 'nodetrace_async_first_callback_wait_seconds', help: 'Time from an operation\'s creation to its first callback, by kind' },
  { field: 'callback', name: 'nodetrace_async_callback_seconds', help: 'Time each callback held the thread, by kind' },
];

/** A dump's text -> async's kinds. Pure. */
function dumpKinds(text, { providers = null, hook = false } = {}) {
  return parseAsync({ maps: text }, { providers, hook, tracer: 'bpftrace' }).kinds;
}

/**
 * renderAsyncMetrics(kinds | null, { labels, admitted }) -> { text, admitted }:
 * per kind, its counters and its histograms (microseconds on the fixed `le`
 * bounds; `_sum` estimated from the buckets). Pure.
 */
function renderAsyncMetrics(kinds, { labels = [], admitted = [], maxKinds = MAX_KINDS } = {}) {
  const { groups, admitted: nowAdmitted } = groupByAdmittedKind(kinds || [], (k) => k.name,
    { admitted, max: maxKinds });
  const rows = new Map();
  for (const [name, group] of groups) {
    const row = { created: 0n, destroyed: 0n, callbacks: 0n };
    for (const k of group) {
      for (const c of COUNTERS) row[c.field] += k[c.field];
      for (const h of HISTOGRAMS) if (k[h.field]) row[h.field] = addHistograms(row[h.field], histogramOf(k[h.field], 'us'));
    }
    rows.set(name, row);
  }
  const names = [...rows.keys()].sort();
  let text = '';
  for (const c of COUNTERS) {
    text += familyHead(c.name, 'counter', c.help);
    for (const name of names) text += sample(c.name, [...labels, ['kind', name]], rows.get(name)[c.field]);
  }
  for (const h of HISTOGRAMS) {
    text += familyHead(h.name, 'histogram', h.help);
    for (const name of names) {
      const got = rows.get(name)[h.field];
      if (got) text += histogramSeries(h.name, [...labels, ['kind', name]], ladderPairs(got), got.sumSeconds, got.count);
    }
  }
  return { text, admitted: nowAdmitted };
}

// What lib/prometheus/live.js serves for async: the kinds named by the plan's provider table.
function liveMetricsFor(details) {
  const o = { providers: details.providers || null, hook: Boolean(details.hook) };
  return {
    read: (dump) => dumpKinds(dump, o),
    render: (kinds, { labels, state }) => {
      const out = renderAsyncMetrics(kinds, { labels, admitted: state });
      return { text: out.text, state: out.admitted };
    },
  };
}

module.exports = { MAX_KINDS, OTHER_KINDS, dumpKinds, renderAsyncMetrics, liveMetricsFor };
