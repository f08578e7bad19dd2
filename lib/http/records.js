'use strict';
// `nodetrace http`: the lines of d-scripts/http.bt -> request records ->
// one line each (text or JSON), or histograms per direction, method and
// route. Pure.
//
// A request arrives as up to three lines sharing "PID TID NS" (bpftrace 0.17
// cannot put two 200-byte strings in one printf): U (its URL), E (its error,
// only when there was no response), then H (the rest), which completes it.
// Lines of other CPUs may come in between, so they are joined by that key.
//
// d-scripts/http-batched.bt (-f json) hands them over in batches every
// 100 ms instead, three maps a batch (N: 0 or 1, the pair that batch used):
// @errN {"PID,TID,NS": error}, @urlN {"PID,TID,NS": url}, then
// @reqN {"PID,TID,NS,DIR,STATUS,LATENCY_US": method}, which completes the
// batch; RequestReader takes either.
const { renderHistogram } = require('../render/histogram');
const { percentile, totalCount } = require('../aggregation/model');
const { formatDuration } = require('../render/units');
const { safeText } = require('../terminal-safe');
const { stringBytes } = require('../tracer/output-formats');

const LINE = /^([UEH]) (\d+) (\d+) (\d+) (.*)$/;
const HEAD = /^(server|client) (-?\d+) (\d+) (\S*)$/;

class RequestJoiner {
  constructor() {
    this.pending = new Map();
  }

  /** One line of the tracer's output -> a completed record, or null. */
  push(line) {
    const m = LINE.exec(line);
    if (!m) return null;
    const [, tag, pid, tid, ns, rest] = m;
    const key = `${pid} ${tid} ${ns}`;
    if (tag !== 'H') {
      const part = this.pending.get(key) || {};
      part[tag === 'U' ? 'url' : 'error'] = rest;
      this.pending.set(key, part);
      return null;
    }
    const h = HEAD.exec(rest);
    if (!h) return null;
    const part = this.pending.get(key) || {};
    this.pending.delete(key);
    const status = Number(h[2]);
    return {
      pid: Number(pid),
      ns: BigInt(ns),
      direction: h[1],
      status,
      us: Number(h[3]),
      method: h[4],
      url: part.url === undefined ? '?' : part.url,
      error: status === 0 ? (part.error || 'error') : null,
    };
  }
}

const FIELD_KEY = /^(\d+),(\d+),(\d+)$/;
const REQ_KEY = /^(\d+),(\d+),(\d+),([01]),(\d+),(\d+)$/;
const BATCH_MAP = /^@(err|url|req)([01])$/;
const FIRED = /^@requests: (\d+)$/;

function bytesText(x) {
  return stringBytes(String(x)).toString('utf8');
}

/**
 * One batch of http-batched.bt: its @errN and @urlN maps (string values by
 * "PID,TID,NS") and its @reqN map -> records, in the order they completed.
 * An entry not as the script writes it is left out.
 */
function batchRecords(req, { url = {}, err = {} } = {}) {
  const out = [];
  for (const [key, method] of Object.entries(req || {})) {
    const k = REQ_KEY.exec(key);
    if (!k || typeof method !== 'string') continue;
    const id = `${k[1]},${k[2]},${k[3]}`;
    const status = Number(k[5]);
    const u = typeof url[id] === 'string' ? bytesText(url[id]) : '?';
    const e = typeof err[id] === 'string' ? bytesText(err[id]) : '';
    out.push({
      pid: Number(k[1]),
      ns: BigInt(k[3]),
      direction: k[4] === '0' ? 'server' : 'client',
      status,
      us: Number(k[6]),
      method: bytesText(method),
      url: u,
      error: status === 0 ? (e || 'error') : null,
    });
  }
  return out.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
}

/**
 * The tracer's output items (lines of http.bt, or JSON items of
 * http-batched.bt) -> completed records; `fired` is the count the script
 * printed at exit (@requests: what the probes saw), null until then.
 */
class RequestReader {
  constructor() {
    this.joiner = new RequestJoiner();
    this.fired = null;
    // The @errN and @urlN maps of the batch being read, until its @reqN.
    this.fields = [{}, {}];
  }

  // END prints the count; bpftrace 0.17 then prints the cleared map again
  // at exit, as 0: added, not replaced.
  addFired(n) {
    this.fired = (this.fired || 0) + n;
  }

  push(item) {
    if (typeof item === 'string') {
      const f = FIRED.exec(item);
      if (f) { this.addFired(Number(f[1])); return []; }
      const r = this.joiner.push(item);
      return r ? [r] : [];
    }
    if (!item || item.type !== 'map' || !item.data) return [];
    if (typeof item.data['@requests'] === 'number') { this.addFired(item.data['@requests']); return []; }
    const out = [];
    for (const [name, map] of Object.entries(item.data)) {
      const m = BATCH_MAP.exec(name);
      if (!m || !map || typeof map !== 'object') continue;
      const pair = this.fields[Number(m[2])];
      if (m[1] !== 'req') {
        for (const [k, v] of Object.entries(map)) if (FIELD_KEY.test(k)) (pair[m[1]] = pair[m[1]] || {})[k] = v;
        continue;
      }
      out.push(...batchRecords(map, pair));
      this.fields[Number(m[2])] = {};
    }
    return out;
  }
}

function parseRequests(text) {
  const joiner = new RequestJoiner();
  const out = [];
  for (const line of String(text).split('\n')) {
    const r = joiner.push(line);
    if (r) out.push(r);
  }
  return out;
}

// ---- one line per request ------------------------------------------------

function clockTime(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

function wallMs(r, wallMinusMonoNs) {
  return Number((r.ns + BigInt(wallMinusMonoNs || 0n)) / 1000000n);
}

const HEADER = `${'TIME'.padEnd(12)} ${'PID'.padStart(7)} ${'DIR'.padEnd(6)} ${'METHOD'.padEnd(7)} ${'STATUS'.padStart(10)} ${'MS'.padStart(9)}  URL\n`;

function renderLine(r, { wallMinusMonoNs } = {}) {
  const status = r.status === 0 ? r.error : String(r.status);
  const ms = (r.us / 1000).toFixed(1);
  return safeText(`${clockTime(wallMs(r, wallMinusMonoNs)).padEnd(12)} ${String(r.pid).padStart(7)} ${r.direction.padEnd(6)} `
    + `${r.method.padEnd(7)} ${status.padStart(10)} ${ms.padStart(9)}  ${r.url}`, { oneLine: true }) + '\n';
}

function renderJSONLine(r, { wallMinusMonoNs } = {}) {
  return JSON.stringify({
    time: new Date(wallMs(r, wallMinusMonoNs)).toISOString(),
    pid: r.pid,
    direction: r.direction,
    method: r.method,
    url: r.url,
    status: r.status === 0 ? null : r.status,
    error: r.error,
    ms: r.us / 1000,
  }) + '\n';
}

// ---- histograms --------------------------------------------------------------

/**
 * The route a path belongs to, for grouping: the path without its query,
 * with segments that are numbers, UUIDs or long hex ids replaced by ":id"
 * (/users/42/orders?x=1 -> /users/:id/orders). A client URL keeps its origin.
 */
function routeOf(url) {
  const noQuery = url.replace(/[?#].*$/, '');
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/]*)?(.*)$/i.exec(noQuery);
  const origin = m[1] || '';
  const route = (m[2] || '/').split('/').map((seg) => (
    /^\d+$/.test(seg) || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(seg) || /^[0-9a-f]{16,}$/i.test(seg)
      ? ':id' : seg)).join('/');
  return origin + (route || '/');
}

// log2 buckets of microseconds, as bpftrace's hist() makes them.
function bucketOf(us) {
  if (us < 1) return { lo: 0n, hi: 1n };
  const lo = 2n ** BigInt(Math.floor(Math.log2(us)));
  return { lo, hi: lo * 2n };
}

/** Records -> [{ direction, method, route, entry (a model Entry, µs), max }] by count, most first. */
function histograms(records, { by = 'route' } = {}) {
  const groups = new Map();
  for (const r of records) {
    const what = by === 'status' ? (r.status === 0 ? r.error : String(r.status)) : routeOf(r.url);
    const key = `${r.direction} ${r.method} ${what}`;
    let g = groups.get(key);
    if (!g) {
      g = { direction: r.direction, method: r.method, group: what, counts: new Map(), max: 0, n: 0 };
      groups.set(key, g);
    }
    const b = bucketOf(r.us);
    const id = b.lo.toString();
    g.counts.set(id, { ...b, count: ((g.counts.get(id) || { count: 0n }).count) + 1n });
    g.max = Math.max(g.max, r.us);
    g.n++;
  }
  return [...groups.values()].sort((a, b) => b.n - a.n).map((g) => {
    const present = [...g.counts.values()].sort((a, b) => (a.lo < b.lo ? -1 : 1));
    // Every bucket between the first and last, empty ones too, as the tracers print them.
    const buckets = [];
    for (let lo = present[0].lo; lo <= present[present.length - 1].lo; lo = lo === 0n ? 1n : lo * 2n) {
      const hit = g.counts.get(lo.toString());
      buckets.push({ lo, hi: lo === 0n ? 1n : lo * 2n, count: hit ? hit.count : 0n });
    }
    return { direction: g.direction, method: g.method, group: g.group, entry: { key: [], kind: 'log2', buckets }, max: g.max };
  });
}

function renderHistograms(records, options = {}) {
  const hs = histograms(records, options);
  if (!hs.length) return 'No requests completed while tracing.\n';
  const blocks = hs.map((h) => {
    const ps = [50, 90, 99].map((p) => `p${p} ${formatDuration(percentile(h.entry, p, h.max), 'us')}`);
    return [
      `${h.direction} ${h.method} ${h.group}`,
      ...renderHistogram(h.entry, 'us', { width: 40 }),
      `  count ${totalCount(h.entry)}, ${ps.join(', ')}, max ${formatDuration(h.max, 'us')}`,
    ].join('\n');
  });
  return safeText(blocks.join('\n\n') + '\n');
}

function histogramsJSON(records, options = {}) {
  return JSON.stringify({
    version: 1,
    by: options.by || 'route',
    groups: histograms(records, options).map((h) => ({
      direction: h.direction,
      method: h.method,
      [options.by === 'status' ? 'status' : 'route']: h.group,
      unit: 'us',
      count: Number(totalCount(h.entry)),
      p50: percentile(h.entry, 50, h.max),
      p90: percentile(h.entry, 90, h.max),
      p99: percentile(h.entry, 99, h.max),
      max: h.max,
      histogram: h.entry.buckets.map((b) => ({ lo: Number(b.lo), hi: Number(b.hi), count: Number(b.count) })),
    })),
  }, null, 2) + '\n';
}

module.exports = {
  RequestJoiner, RequestReader, batchRecords, parseRequests, renderLine, renderJSONLine, HEADER, routeOf, histograms, renderHistograms, histogramsJSON,
};
