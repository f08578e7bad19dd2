'use strict';
// http --prometheus: the requests' latency histograms as Prometheus metrics.
// http keeps its histograms itself, in user space, as requests arrive
// (lib/http/histograms.js LatencyStats: per process, direction, method and
// route or status, within its bounds); this renders them as they are at a
// scrape (pure). The endpoint and the rest: lib/prometheus/live.js;
// docs/prometheus.md.
const { familyHead, sample, histogramSeries } = require('../prometheus/exposition');
const { histogramOf, addHistograms, ladderPairs } = require('../prometheus/histograms');
const { processLabels } = require('../prometheus/live');

const DURATION = { name: 'nodetrace_http_request_duration_seconds', help: 'HTTP requests served (direction server) or made (client), by latency: request to response complete (nodetrace http)' };
const REQUESTS = { name: 'nodetrace_http_requests_total', help: 'HTTP requests served or made' };
// A label value taken from a request (its method, its route) is the
// client's text: cut to this many characters, so that no series's labels
// grow with what a client sends. Two routes alike so far are one series.
const MAX_LABEL_CHARS = 120;
const OTHER_PROCESSES = '(other processes)';

function cut(text) {
  const s = String(text);
  return s.length > MAX_LABEL_CHARS ? `${s.slice(0, MAX_LABEL_CHARS)}…` : s;
}

/**
 * renderHttpMetrics(stats | null) -> text. Each group of the stats (one
 * process's direction, method and route, or status with --by status) a
 * histogram on the fixed `le` bounds, its `_sum` the requests' exact total,
 * and a counter; labelled by its process (pid, container, pod). Pure.
 */
function renderHttpMetrics(stats) {
  const by = stats ? stats.by : 'route';
  // label set (as text) -> { labels, h }: groups whose cut labels agree are one series.
  const series = new Map();
  for (const set of stats ? stats.sets() : []) {
    const own = set.other ? [['pid', OTHER_PROCESSES]] : processLabels(set.identity);
    for (const g of set.groups) {
      const labels = [...own, ['direction', g.direction], ['method', cut(g.method)], [by === 'status' ? 'status' : 'route', cut(g.group)]];
      const key = JSON.stringify(labels);
      const h = { ...histogramOf(g.histogram.log2Entry(), 'us'), sumSeconds: g.sumUs / 1e6 };
      const had = series.get(key);
      series.set(key, { labels, h: had ? addHistograms(had.h, h) : h });
    }
  }
  const shown = [...series.keys()].sort().map((k) => series.get(k));
  let text = familyHead(DURATION.name, 'histogram', DURATION.help);
  for (const { labels, h } of shown) {
    text += histogramSeries(DURATION.name, labels, ladderPairs(h), h.sumSeconds, h.count);
  }
  text += familyHead(REQUESTS.name, 'counter', REQUESTS.help);
  for (const { labels, h } of shown) text += sample(REQUESTS.name, labels, h.count);
  return text;
}

/** What lib/prometheus/live.js serves for http: `holder.stats`, the trace's stats once it has them. */
function liveMetricsOf(holder) {
  return {
    current: () => holder.stats || null,
    render: (stats) => ({ text: renderHttpMetrics(stats) }),
  };
}

module.exports = { MAX_LABEL_CHARS, OTHER_PROCESSES, renderHttpMetrics, liveMetricsOf };
