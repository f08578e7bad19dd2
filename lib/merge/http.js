'use strict';
// `http --latency --json` reports merged: each group (direction, method,
// and route or status) once, its latencies' histogram added bucket by
// bucket (the log-linear layout the reports state is the same on every
// host: whole-microsecond bounds), its max the longest, its percentiles
// read again from the sum; requests folded into "(other routes)" by a
// report's bounds stay folded, and are counted. Per-process reports
// (version 2) and merged ones (version 1, --merge) both merge, into
// version 1's shape: one set of groups. Pure.
const { readBuckets, addBuckets, bucketsJson, countOf, percentileOf, MergeError } = require('./histogram');
const F = require('./fields');

const FOLDS = new Set(['(other routes)', '(other statuses)']);

function readGroup(g, by, what) {
  F.object(g, what);
  return {
    direction: F.text(g.direction, `${what}.direction`),
    method: F.text(g.method, `${what}.method`),
    group: F.text(g[by], `${what}.${by}`),
    max: F.numberOrNull(g.max, `${what}.max`),
    p99: F.numberOrNull(g.p99, `${what}.p99`),
    buckets: readBuckets(g.histogram, `${what}.histogram`, { maxBuckets: F.MAX_BUCKETS }),
  };
}

function read(report, { version }) {
  const by = report.by;
  if (by !== 'route' && by !== 'status') throw new MergeError('"by" is neither "route" nor "status"');
  const sets = [];
  if (version === 1) {
    sets.push({ process: null, folded: F.number(report.folded_requests || 0, 'folded_requests'), groups: F.list(report.groups, 'groups') });
  } else {
    F.list(report.processes, 'processes', 1024).forEach((p, i) => {
      F.object(p, `processes[${i}]`);
      sets.push({ process: F.processOf({ process: { pid: p.pid, pid_inside: p.pid_inside, container: p.container, ...(p.pod !== undefined ? { pod: p.pod } : {}) } }, `processes[${i}]`), folded: F.number(p.folded_requests, `processes[${i}].folded_requests`), groups: F.list(p.groups, `processes[${i}].groups`) });
    });
    if (report.other_processes) {
      const o = F.object(report.other_processes, 'other_processes');
      sets.push({ process: null, folded: F.number(o.folded_requests, 'other_processes.folded_requests'), groups: F.list(o.groups, 'other_processes.groups') });
    }
  }
  return {
    by,
    layout: report.histogram_layout === undefined ? null : JSON.stringify(F.object(report.histogram_layout, 'histogram_layout')),
    limits: F.objectOrNull(report.limits, 'limits'),
    processes: sets.filter((s) => s.process).map((s) => s.process),
    folded: sets.reduce((n, s) => n + s.folded, 0),
    groups: sets.flatMap((s, i) => s.groups.map((g, j) => readGroup(g, by, `${version === 1 ? 'groups' : `processes[${i}].groups`}[${j}]`))),
  };
}

function merge(inputs, { bySource = false } = {}) {
  const reports = inputs.map((i) => i.report);
  const bys = [...new Set(reports.map((r) => r.by))];
  if (bys.length > 1) throw new MergeError('the reports group requests by route in one and by status in another (--by): merge reports grouped alike');
  const layouts = [...new Set(reports.map((r) => r.layout))];
  if (layouts.length > 1) throw new MergeError('the reports\' histograms have different layouts (histogram_layout): their buckets do not add');
  const by = bys[0];
  const alike = F.gatherRows(inputs, (r) => r.groups, (g) => JSON.stringify([g.direction, g.method, g.group]), 'g');
  const merged = alike.map((parts) => {
    const g0 = parts[0].g;
    const buckets = addBuckets(parts.map((p) => p.g.buckets), `${g0.direction} ${g0.method} ${g0.group}`);
    const maxes = parts.map((p) => p.g.max);
    const max = maxes.includes(null) ? null : Math.max(...maxes);
    // A source with several processes (a version 2 report) is one source: its groups added first.
    const bySourceCounts = new Map();
    for (const p of parts) {
      const s = bySourceCounts.get(p.source) || { source: p.source, count: 0n, max: null };
      s.count += countOf(p.g.buckets);
      if (p.g.max !== null && (s.max === null || p.g.max > s.max)) s.max = p.g.max;
      bySourceCounts.set(p.source, s);
    }
    return {
      direction: g0.direction,
      method: g0.method,
      [by]: g0.group,
      unit: 'us',
      count: Number(countOf(buckets)),
      p50: percentileOf(buckets, 50, max),
      p90: percentileOf(buckets, 90, max),
      p99: percentileOf(buckets, 99, max),
      max,
      histogram: bucketsJson(buckets),
      ...(bySource ? { by_source: [...bySourceCounts.values()]
        .map((s) => ({ source: s.source, count: Number(s.count), max: s.max })) } : {}),
    };
  });
  // Most requests first, the folded groups last (as http's own).
  const folded = (g) => FOLDS.has(g[by]) && g.method === '*';
  merged.sort((a, b) => folded(a) - folded(b) || b.count - a.count);
  const limits = F.common(reports.map((r) => JSON.stringify(r.limits)));
  return {
    by,
    limits: limits === null ? null : JSON.parse(limits),
    ...(reports[0].layout ? { histogram_layout: JSON.parse(reports[0].layout) } : {}),
    requests: merged.reduce((n, g) => n + g.count, 0),
    folded_requests: reports.reduce((n, r) => n + r.folded, 0),
    groups: merged,
    sources: inputs.map(({ source, report }) => ({ source, processes: report.processes,
      requests: report.groups.reduce((n, g) => n + Number(countOf(g.buckets)), 0) })),
  };
}

module.exports = { read, merge, VERSIONS: [1, 2], OUTPUT_VERSION: 1 };
