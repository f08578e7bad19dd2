'use strict';
// async --prometheus: every kind of asynchronous operation's running counts
// and histograms as Prometheus metrics. async.bt's LIVE clause prints the
// kinds' maps every second, uncleared; each dump is read by async's own
// parser (pure) and rendered here (pure). The endpoint and the rest:
// lib/prometheus/live.js; docs/prometheus.md.
const { parseAsync } = require('./report/build-model');
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const { histogramOf, addHistograms, ladderPairs, admitKeys } = require('../prometheus/histograms');

// Kinds shown, each its own series: Node's AsyncWrap providers are about
// 70, the register hook's kinds are types a process names (user
// AsyncResources): the first MAX_KINDS seen keep their series for the whole
// run, any later one is added into kind="(other kinds)", so that no series
// ever goes backwards.
const MAX_KINDS = 100;
const OTHER_KINDS = '(other kinds)';

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
  const all = kinds || [];
  const nowAdmitted = admitKeys(admitted, all.map((k) => k.name), maxKinds);
  const shown = new Set(nowAdmitted);
  const rows = new Map();
  for (const k of all) {
    const name = shown.has(k.name) ? k.name : OTHER_KINDS;
    const row = rows.get(name) || { created: 0n, destroyed: 0n, callbacks: 0n };
    for (const c of COUNTERS) row[c.field] += k[c.field];
    for (const h of HISTOGRAMS) if (k[h.field]) row[h.field] = addHistograms(row[h.field], histogramOf(k[h.field], 'us'));
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
