'use strict';
// `nodetrace http`: the lines of d-scripts/http.bt -> request records ->
// one line each (text or JSON); histograms.js makes the histograms. Pure.
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
const { safeText, safeJson } = require('../terminal-safe');
const { stringBytes } = require('../tracer/output-formats');
const { clockTime } = require('../render/text');
const { monoToWallMs } = require('../clock');

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
const REQ_KEY = /^(\d+),(\d+),(\d+),([01]),(-?\d+),(-?\d+)$/;
const PID_OF_KEY = /^(\d+),/;
const BATCH_MAP = /^@(err|url|req)([01])$/;
const FIRED = /^@requests: (\d+)$/;
const PER_PID = /^\d{1,10}$/;

function bytesText(x) {
  return stringBytes(String(x)).toString('utf8');
}

// Why a request's numbers cannot be a request's, or null: the probe's
// arguments are whatever the firing process passed.
function malformation(status, us) {
  if (us < 0) return 'a negative latency';
  if (!(status === 0 || (status >= 100 && status <= 999))) return 'a status that is no HTTP status';
  if (!Number.isSafeInteger(us)) return 'a latency out of range';
  return null;
}

/**
 * One batch of http-batched.bt: its @errN and @urlN maps (string values by
 * "PID,TID,NS") and its @reqN map -> records, in the order they completed.
 * An entry not as the script writes it, or whose numbers cannot be a
 * request's, is left out and told to `refused(pid or null, why)`.
 */
function batchRecords(req, { url = {}, err = {} } = {}, refused = () => {}) {
  const out = [];
  for (const [key, method] of Object.entries(req || {})) {
    const k = REQ_KEY.exec(key);
    if (!k || typeof method !== 'string') {
      const p = PID_OF_KEY.exec(key);
      refused(p ? Number(p[1]) : null, 'an entry not as the program writes it');
      continue;
    }
    const status = Number(k[5]);
    const us = Number(k[6]);
    const why = malformation(status, us);
    if (why) {
      refused(Number(k[1]), why);
      continue;
    }
    const id = `${k[1]},${k[2]},${k[3]}`;
    const u = typeof url[id] === 'string' ? bytesText(url[id]) : '?';
    const e = typeof err[id] === 'string' ? bytesText(err[id]) : '';
    out.push({
      pid: Number(k[1]),
      ns: BigInt(k[3]),
      direction: k[4] === '0' ? 'server' : 'client',
      status,
      us,
      method: bytesText(method),
      url: u,
      error: status === 0 ? (e || 'error') : null,
    });
  }
  return out.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
}

/**
 * The tracer's output items (lines of http.bt, or JSON items of
 * http-batched.bt) -> completed records. What the script counted, printed
 * at exit: `fired`, the requests the probes saw (null until then), and per
 * process `firedBy` (pid -> n), `overBy` (pid -> n: left out of a crowded
 * batch, over the process's share) and `fullBy` (left out of a full batch). `malformedBy` (pid -> n; pid
 * null when unknown): requests refused here, with `malformedWhy` (pid ->
 * the first reason).
 */
class RequestReader {
  constructor() {
    this.joiner = new RequestJoiner();
    this.fired = null;
    this.firedBy = new Map();
    this.overBy = new Map();
    this.fullBy = new Map();
    this.malformedBy = new Map();
    this.malformedWhy = new Map();
    // The @errN and @urlN maps of the batch being read, until its @reqN.
    this.fields = [{}, {}];
    this.refused = (pid, why) => {
      this.malformedBy.set(pid, (this.malformedBy.get(pid) || 0) + 1);
      if (!this.malformedWhy.has(pid)) this.malformedWhy.set(pid, why);
    };
  }

  // END prints the count; bpftrace 0.17 then prints the cleared map again
  // at exit, as 0 (or {}): added, not replaced.
  addFired(n) {
    this.fired = (this.fired || 0) + n;
  }

  // A per-process count map ({"PID": n}) into `into`. END prints it, and
  // bpftrace may print it again at exit, cleared or not (a second signal):
  // the larger count is the count.
  addCounts(map, into, fired) {
    for (const [pid, n] of Object.entries(map)) {
      if (!PER_PID.test(pid) || !Number.isSafeInteger(n) || n < 0) continue;
      into.set(Number(pid), Math.max(into.get(Number(pid)) || 0, n));
    }
    if (fired) {
      let total = 0;
      for (const n of into.values()) total += n;
      this.fired = total;
    }
  }

  push(item) {
    if (typeof item === 'string') {
      const f = FIRED.exec(item);
      if (f) { this.addFired(Number(f[1])); return []; }
      const r = this.joiner.push(item);
      return r ? [r] : [];
    }
    if (!item || item.type !== 'map' || !item.data) return [];
    const requests = item.data['@requests'];
    if (typeof requests === 'number') { this.addFired(requests); return []; }
    if (requests && typeof requests === 'object') { this.addCounts(requests, this.firedBy, true); return []; }
    const over = item.data['@over'];
    if (over && typeof over === 'object') { this.addCounts(over, this.overBy, false); return []; }
    const full = item.data['@full'];
    if (full && typeof full === 'object') { this.addCounts(full, this.fullBy, false); return []; }
    const out = [];
    for (const [name, map] of Object.entries(item.data)) {
      const m = BATCH_MAP.exec(name);
      if (!m || !map || typeof map !== 'object') continue;
      const pair = this.fields[Number(m[2])];
      if (m[1] !== 'req') {
        for (const [k, v] of Object.entries(map)) if (FIELD_KEY.test(k)) (pair[m[1]] = pair[m[1]] || {})[k] = v;
        continue;
      }
      out.push(...batchRecords(map, pair, this.refused));
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

const HEADER = `${'TIME'.padEnd(12)} ${'PID'.padStart(7)} ${'DIR'.padEnd(6)} ${'METHOD'.padEnd(7)} ${'STATUS'.padStart(10)} ${'MS'.padStart(9)}  URL\n`;

// The wire's records may say that a connection left HTTP/1 (lib/http/wire.js):
// a request with `upgrade` (what the connection became after it), or a
// connection record (`connection: 'HTTP/2'`, no request of its own).
function renderLine(r, { wallMinusMonoNs } = {}) {
  const start = `${clockTime(monoToWallMs(r.ns, wallMinusMonoNs)).padEnd(12)} ${String(r.pid).padStart(7)} ${r.direction.padEnd(6)} `;
  if (r.connection) {
    return safeText(`${start}${'-'.padEnd(7)} ${r.connection.padStart(10)} ${'-'.padStart(9)}  `
      + `(an ${r.connection} connection${r.tls ? ' over TLS' : ''}: its requests are not read)`, { oneLine: true }) + '\n';
  }
  const status = r.status === 0 ? r.error : String(r.status);
  const ms = (r.us / 1000).toFixed(1);
  const left = r.upgrade ? `  (${r.upgrade === 'tunnel' ? 'a tunnel' : `upgraded to ${r.upgrade}`}: not read further)` : '';
  return safeText(`${start}${r.method.padEnd(7)} ${status.padStart(10)} ${ms.padStart(9)}  ${r.url}${left}`, { oneLine: true }) + '\n';
}

function renderJSONLine(r, { wallMinusMonoNs } = {}) {
  const time = new Date(monoToWallMs(r.ns, wallMinusMonoNs)).toISOString();
  if (r.connection) {
    return safeJson({ time, pid: r.pid, direction: r.direction, connection: r.connection, method: null, url: null, status: null, error: null, ms: null }, 0) + '\n';
  }
  return safeJson({
    time,
    pid: r.pid,
    direction: r.direction,
    method: r.method,
    url: r.url,
    status: r.status === 0 ? null : r.status,
    error: r.error,
    ms: r.us / 1000,
    ...(r.upgrade ? { upgrade: r.upgrade } : {}),
  }, 0) + '\n';
}

module.exports = { RequestJoiner, RequestReader, batchRecords, parseRequests, renderLine, renderJSONLine, HEADER };
