'use strict';
// `nodetrace http --latency`: latency histograms per direction, method and
// route (or status), gathered as requests arrive (no request is kept), per
// process unless asked to merge, within stated bounds: a flood of unique
// routes, or of processes, costs a bounded amount of memory, and what was
// folded is counted and said. Pure: requests in, text or JSON out; who a
// process is comes from `identify` (lib/proc/identity.js).
const { renderHistogram } = require('../render/histogram');
const { percentile, totalCount } = require('../aggregation/model');
const { LogLinearHistogram, LAYOUT } = require('../aggregation/log-linear');
const { formatDuration } = require('../render/units');
const { plural } = require('../render/text');
const { safeText, safeJson } = require('../terminal-safe');
const { describeIdentity, identityJson } = require('../proc/container');
const { LIMITS: FIXED } = require('../limits');

// The bounds: processes with histograms of their own, and groups per
// process (lib/limits.js says why).
const LIMITS = Object.freeze({
  processes: FIXED.HTTP_HISTOGRAM_PROCESSES,
  groupsPerProcess: FIXED.HTTP_HISTOGRAM_GROUPS_PER_PROCESS,
});
// Every group's histogram, as the JSON states it (docs/json-format.md).
const HISTOGRAM_LAYOUT = Object.freeze({ ...LAYOUT, unit: 'us' });
/**
 * The route a path belongs to, for grouping: the path without its query,
 * with segments that are numbers, UUIDs or long hex ids replaced by ":id"
 * (/users/42/orders?x=1 -> /users/:id/orders). A client URL keeps its origin.
 */
function routeOf(url) {
  // [^] and no `.`: a URL a process passed may hold any character, line
  // breaks and U+2028 too.
  const noQuery = String(url).replace(/[?#][^]*$/, '');
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/]*)?([^]*)$/i.exec(noQuery);
  const origin = m[1] || '';
  const route = (m[2] || '/').split('/').map((seg) => (
    /^\d+$/.test(seg) || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(seg)
      || /^[0-9a-f]{16,}$/i.test(seg)
      ? ':id' : seg)).join('/');
  return origin + (route || '/');
}

// A group's latencies (microseconds) in log-linear buckets
// (lib/aggregation/log-linear.js): its percentiles within 1.6% of the
// requests' own; drawn in power-of-two rows.
class Group {
  constructor(direction, method, group) {
    this.direction = direction;
    this.method = method;
    this.group = group;
    this.histogram = new LogLinearHistogram();
    this.sumUs = 0;   // exact, for --prometheus's _sum
  }

  get n() { return this.histogram.n; }

  get max() { return this.histogram.max; }

  add(us) {
    this.histogram.add(us);
    this.sumUs += us;
  }

  // -> a model entry (lib/aggregation/model.js): the buckets that counted.
  entry() {
    return this.histogram.entry();
  }
}

// One process's groups (or every process's, merged; or the processes beyond
// the bound's).
class ProcessGroups {
  constructor(identity, foldName) {
    this.identity = identity;   // null: merged, or "other processes"
    this.foldName = foldName;
    this.groups = new Map();
    this.folds = new Map();     // direction -> Group
    this.n = 0;
    this.folded = 0;            // requests in the folds
  }

  group(direction, method, what, limit) {
    const key = `${direction} ${method} ${what}`;
    let g = this.groups.get(key);
    if (g) return g;
    if (this.groups.size < limit) {
      g = new Group(direction, method, what);
      this.groups.set(key, g);
      return g;
    }
    this.folded++;
    if (!this.folds.has(direction)) this.folds.set(direction, new Group(direction, '*', this.foldName));
    return this.folds.get(direction);
  }

  list() {
    return [...[...this.groups.values()].sort((a, b) => b.n - a.n), ...this.folds.values()];
  }
}

class LatencyStats {
  /**
   * @param {object} [o]
   * @param {'route'|'status'} [o.by]
   * @param {boolean} [o.merge] one set of histograms for every process
   * @param {function(number): object} [o.identify] pid -> identity, asked once per process
   * @param {object} [o.limits] { processes, groupsPerProcess }
   */
  constructor({ by = 'route', merge = false, identify = (pid) => ({ pid, uid: null, user: null, pidInside: null, container: null }), limits = LIMITS } = {}) {
    this.by = by;
    this.merge = merge;
    this.identify = identify;
    this.limits = limits;
    this.foldName = by === 'status' ? '(other statuses)' : '(other routes)';
    this.merged = new ProcessGroups(null, this.foldName);
    this.byPid = new Map();
    this.others = new ProcessGroups(null, this.foldName);
    this.requests = 0;
  }

  processFor(pid) {
    if (this.merge) return this.merged;
    let p = this.byPid.get(pid);
    if (p) return p;
    if (this.byPid.size >= this.limits.processes) return this.others;
    p = new ProcessGroups(this.identify(pid), this.foldName);
    this.byPid.set(pid, p);
    return p;
  }

  add(r) {
    const p = this.processFor(r.pid);
    const what = this.by === 'status' ? (r.status === 0 ? r.error : String(r.status)) : routeOf(r.url);
    p.group(r.direction, r.method, what, this.limits.groupsPerProcess).add(r.us);
    p.n++;
    this.requests++;
  }

  /** -> [{ identity (null: merged or other processes), other (boolean), n, folded, groups: [Group] }], most requests first. */
  sets() {
    if (this.merge) return this.merged.n
      ? [{ identity: null, other: false, n: this.merged.n, folded: this.merged.folded, groups: this.merged.list() }]
        : [];
    const out = [...this.byPid.values()].sort((a, b) => b.n - a.n)
      .map((p) => ({ identity: p.identity, other: false, n: p.n, folded: p.folded, groups: p.list() }));
    if (this.others.n) out.push({ identity: null, other: true, n: this.others.n, folded: this.others.folded,
      groups: this.others.list() });
    return out;
  }
}

/** Records -> merged stats (tests, and anything with its records at hand). */
function statsOf(records, o = {}) {
  const stats = new LatencyStats({ merge: true, ...o });
  for (const r of records) stats.add(r);
  return stats;
}

function renderGroup(g) {
  const entry = g.entry();
  const ps = [50, 90, 99].map((p) => `p${p} ${formatDuration(percentile(entry, p, g.max), 'us')}`);
  return [
    // The method and route are the process's (or a client's) to choose: on their line.
    safeText(`${g.direction} ${g.method} ${g.group}`, { oneLine: true }),
    ...renderHistogram(g.histogram.log2Entry(), 'us', { width: 40 }),
    `  count ${totalCount(entry)}, ${ps.join(', ')}, max ${formatDuration(g.max, 'us')}`,
  ].join('\n');
}

function setHeader(set, stats) {
  const what = stats.by === 'status' ? 'statuses' : 'routes';
  const folded = set.folded ? `; ${plural(set.folded, 'request')} beyond the first ${stats.limits.groupsPerProcess} ${what} folded into "${stats.foldName}"` : '';
  if (set.other) return `Other processes (beyond the first ${stats.limits.processes}): ${plural(set.n, 'request')}${folded}`;
  if (!set.identity) return set.folded ? `All processes: ${plural(set.n, 'request')}${folded}` : null;
  return `${describeIdentity(set.identity)}: ${plural(set.n, 'request')}${folded}`;
}

/** The histograms as text, a block per process (one block when merged). */
function renderHistograms(stats) {
  const sets = stats.sets();
  if (!sets.length) return 'No requests completed while tracing.\n';
  const blocks = sets.map((set) => {
    const header = setHeader(set, stats);
    const body = set.groups.map(renderGroup).join('\n\n');
    return header ? `${header}\n\n${body}` : body;
  });
  return safeText(blocks.join('\n\n') + '\n');
}

function groupJSON(g, by) {
  const entry = g.entry();
  return {
    direction: g.direction,
    method: g.method,
    [by === 'status' ? 'status' : 'route']: g.group,
    unit: 'us',
    count: Number(totalCount(entry)),
    p50: percentile(entry, 50, g.max),
    p90: percentile(entry, 90, g.max),
    p99: percentile(entry, 99, g.max),
    max: g.max,
    // The buckets that counted (the layout: histogram_layout).
    histogram: entry.buckets.map((b) => ({ lo: Number(b.lo), hi: Number(b.hi), count: Number(b.count) })),
  };
}

/**
 * The histograms as JSON (docs/json-format.md): merged, version 1's shape
 * ({ version, by, groups }); per process, version 2: { version, by,
 * limits, processes: [{ pid, uid, user, pid_inside, container, requests,
 * folded_requests, groups }], other_processes }.
 */
function histogramsJSON(stats) {
  const sets = stats.sets();
  const limits = { processes: stats.limits.processes, groups_per_process: stats.limits.groupsPerProcess };
  if (stats.merge) {
    const set = sets[0];
    return safeJson({
      version: 1, command: 'http', by: stats.by, limits, histogram_layout: HISTOGRAM_LAYOUT, folded_requests: set ? set.folded : 0,
      groups: set ? set.groups.map((g) => groupJSON(g, stats.by)) : [],
    }) + '\n';
  }
  const other = sets.find((s) => s.other);
  return safeJson({
    version: 2,
    command: 'http',
    by: stats.by,
    limits,
    histogram_layout: HISTOGRAM_LAYOUT,
    processes: sets.filter((s) => !s.other).map((s) => ({
      ...identityJson(s.identity), requests: s.n, folded_requests: s.folded,
      groups: s.groups.map((g) => groupJSON(g, stats.by)),
    })),
    other_processes: other ? { requests: other.n, folded_requests: other.folded,
      groups: other.groups.map((g) => groupJSON(g, stats.by)) } : null,
  }) + '\n';
}

module.exports = { LatencyStats, statsOf, routeOf, renderHistograms, histogramsJSON, LIMITS };
