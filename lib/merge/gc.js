'use strict';
// `gc --json` reports merged: each kind of collection (scavenge,
// mark-compact, ...) once, its pauses' histogram added bucket by bucket,
// counts and total pause time added, the longest pause the longest, the
// percentiles read again from the sum. Threads are one process's: per
// source only (with the traced time). Pure.
const { readBuckets, addBuckets, bucketsJson, countOf, percentileOf, maxOf } = require('./histogram');
const { jsonInteger } = require('../render/json');
const F = require('./fields');

function read(report) {
  return {
    tracer: F.textOrNull(report.tracer, 'tracer'),
    process: F.processOf(report),
    traced_ns: F.integerOrNull(report.traced_ns, 'traced_ns'),
    kinds: F.list(report.kinds, 'kinds', 64).map((k, i) => {
      const what = `kinds[${i}]`;
      F.object(k, what);
      return {
        name: F.text(k.name, `${what}.name`),
        total_us: F.integerOrNull(k.total_us, `${what}.total_us`),
        max_us: F.integerOrNull(k.max_us, `${what}.max_us`),
        p99_us: F.numberOrNull(k.p99_us, `${what}.p99_us`),
        buckets: readBuckets(k.histogram, `${what}.histogram`, { maxBuckets: F.MAX_BUCKETS }),
      };
    }),
  };
}

function merge(inputs, { bySource = false } = {}) {
  const kinds = F.gatherRows(inputs, (r) => r.kinds, (k) => k.name, 'kind').map((parts) => {
    const buckets = addBuckets(parts.map((p) => p.kind.buckets), `the ${parts[0].kind.name} pauses`);
    const max = maxOf(parts.map((p) => p.kind.max_us));
    const totals = parts.map((p) => p.kind.total_us);
    return {
      name: parts[0].kind.name,
      count: jsonInteger(countOf(buckets)),
      total_us: totals.includes(null) ? null : jsonInteger(totals.reduce((a, b) => a + b, 0n)),
      max_us: jsonInteger(max),
      p50_us: percentileOf(buckets, 50, max),
      p99_us: percentileOf(buckets, 99, max),
      histogram: bucketsJson(buckets),
      ...(bySource ? {
        by_source: parts.map((p) => ({ source: p.source, count: jsonInteger(countOf(p.kind.buckets)),
          total_us: jsonInteger(p.kind.total_us), max_us: jsonInteger(p.kind.max_us), p99_us: p.kind.p99_us })),
      } : {}),
    };
  });
  const reports = inputs.map((i) => i.report);
  return {
    pid: null,
    tracer: F.common(reports.map((r) => r.tracer)),
    traced_ns: null,
    unit: 'us',
    kinds,
    threads: [],
    sources: inputs.map(({ source, report }) => ({ source, process: report.process, tracer: report.tracer,
      traced_ns: jsonInteger(report.traced_ns) })),
  };
}

module.exports = { read, merge, VERSIONS: [1] };
