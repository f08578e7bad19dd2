'use strict';
// `nodetrace http --source wire`: what d-scripts/http-wire.bt (or .d) prints
// -> request records, the shape lib/http/records.js gives, so that the same
// lines, JSON and histograms render them. Pure.
//
// The program hands over every call on each connection the process accepts
// or opens while traced (its length, and the pieces of its bytes it copied),
// from the connection's first call. Per connection (PID and fd; for TLS,
// PID and the SSL object) each side is followed by HTTP/1.1's framing
// (lib/http/wire-framing.js): its messages where their lengths put them,
// never where bytes look like one.
//   - a request read, then a response written: a request served, its
//     latency from the return of the read that brought its first byte to
//     that of the write of the response's head;
//   - a request written, then a response read: a request made, from the
//     write's return to the read's;
//   - an answer before the request's body was read is the request's answer,
//     and the body is still counted off the reads that follow;
//   - a socket closed with requests unanswered: each reported, status 0,
//     error "closed";
//   - a connection that leaves HTTP/1 (a 101, a CONNECT answered 2xx, HTTP/2's
//     preface) is said with what it became (`upgrade`, `connection:
//     'HTTP/2'`) and read no more;
//   - a connection that cannot be followed any more (a head longer than what
//     was copied, a coding not followed, events lost) is not guessed at: its
//     requests from then on are counted, not reported, and the closing line
//     says how many; so are connections opened before the trace began (their
//     first message's start is not known).
// Events come in batches (every 100 ms) whose entries have no order: they are
// held REORDER_NS and handled in the order of their times.
const { stringBytes, splitterFor } = require('../tracer/output-formats');
const { lossLines, addMaps } = require('../render/loss');
const { plural, grouped } = require('../render/text');
const { Framer, Call } = require('./wire-framing');
const { PIECE_BYTES, HEAD_BYTES, MAP_KEYS, DTRACE_FDS } = require('./wire-plan');
const { LIMITS } = require('../limits');

// KIND of an event, as the programs write it (their #defines, held to these
// by test/http-wire-unit.test.js): what the call was, and flags.
// UNFOLLOWED, http-wire.d's only: a socket accepted or connected at an fd
// past those it keeps (DTRACE_FDS), never read. EXEC, http-wire.bt's only:
// a child of the cluster's primary ran its program (a worker forked anew).
const EVENT = Object.freeze({
  READ: 1, WRITE: 2, CLOSE: 3, BEFORE: 4, UNFOLLOWED: 5, EXEC: 6, FIRST: 16, LAST: 32, TLS: 64,
});
const KIND_BITS = 15;
const FLAG_BITS = EVENT.FIRST | EVENT.LAST | EVENT.TLS;

const BATCH_MAP = /^@ev([01])$/;
const COUNT_MAP = /^@n([01])$/;
// What a full map did not keep (http-wire.bt: connections, threads' calls), so far.
const FULL_MAP = /^@full_(conn|call)$/;
// KIND,TID,NS,FD,RET,OFF,LEN,PID (PID: of the process among those traced;
// captures made before it was added hold one process, the reader's `pid`).
const EVENT_KEY = /^(\d{1,3}),(\d{1,10}),(\d{1,20}),(-?\d{1,20}),(-?\d{1,20}),(\d{1,10}),(\d{1,5})(?:,(\d{1,10}))?$/;

// Bounds: nodetrace's memory stays bounded however busy or hostile the
// process. A connection beyond MAX_CONNECTIONS (the program's, where it is
// told another: maxConnections) evicts the oldest (its later
// calls are then a connection not seen from its start: not read, counted);
// a connection's unanswered requests beyond MAX_PENDING are dropped, counted.
const MAX_CONNECTIONS = MAP_KEYS;
const MAX_PENDING = LIMITS.WIRE_PENDING_REQUESTS;
// Batches come every 100 ms, printed by bpftrace at the next turn but one at
// worst: an event is held 400 ms, so that one in a later batch is never
// handled before it.
const REORDER_NS = 400000000n;
// Processes a trace is asked to follow beyond those it named (lib/limits.js).
const MAX_FOLLOWED = LIMITS.WIRE_FOLLOWED_PROCESSES;

/**
 * One piece of a call (a bpftrace batch entry, or an http-wire.d event) ->
 * { kind, tid, ns, fd, ret, off, bytes } or null (told to `refused(why)`)
 * when it is not as the programs write it.
 */
function pieceOf({ kind, tid, ns, fd, ret, off, asked, pid = null }, bytes, refused) {
  const k = Number(kind);
  const base = k & KIND_BITS;
  const known = base >= EVENT.READ && base <= EVENT.EXEC && (k & ~(KIND_BITS | FLAG_BITS)) === 0;
  const r = Number(ret);
  const at = Number(off);
  const n = Number(asked);
  // The bytes end at a NUL (a string): never more than were asked for, nor past what the call returned.
  // A close, an fd not followed or an exec carries no bytes (what a tracer
  // puts there is not read: bpftrace 0.27 gave str(fd, 0) a string of its own).
  const fits = base === EVENT.CLOSE || base === EVENT.UNFOLLOWED || base === EVENT.EXEC ? r === 0 && at === 0 && n === 0
    : r > 0 && at >= 0 && n <= HEAD_BYTES && at + n <= r && bytes.length <= n;
  if (!known || !fits) { refused('an entry not as the program writes it'); return null; }
  return { kind: k, tid: Number(tid), ns: BigInt(ns), fd: String(fd), ret: r, off: at, bytes, pid };
}

class Connection {
  constructor(server, tls) {
    this.server = server;
    this.tls = tls;
    // A server reads requests and writes responses; a client the other way.
    // Its writes are node's own output (`trusted`: its chunks end in CRLF).
    this.framers = {
      read: new Framer({ carries: server ? 'request' : 'response' }),
      write: new Framer({ carries: server ? 'response' : 'request', trusted: true }),
    };
    this.requestSide = server ? 'read' : 'write';
    this.responseSide = server ? 'write' : 'read';
    this.pending = [];    // requests awaiting their answer
    this.left = null;     // what it became once it left HTTP/1
    this.unreadable = null;   // why it is not followed any more (counted once)
    this.lossTaken = { read: false, write: false };   // each side's loss, counted
  }
}

/**
 * The tracer's output -> completed request records ({ pid, ns, direction,
 * status, us, method, url, error }, as lib/http/records.js). push(item) and
 * flush(nowNs) return the records completed; end() returns the rest.
 * Counts, per process: firedBy (calls the program handed over, its @nN),
 * arrivedBy (calls read), malformedBy/malformedWhy (pieces refused),
 * droppedBy (requests given up at the bounds), http2By, beforeBy
 * (connections opened before the trace), unreadableBy ({ connections,
 * requests, why }: connections not followed after a point).
 * `follow(pid)`, where the program also reads a cluster primary's children
 * (http-wire.bt's PARENT): asked once for each process it did not name,
 * whether to read it (a worker forked anew) or drop its calls (another
 * child); at most MAX_FOLLOWED are asked.
 */
class WireReader {
  constructor({
    pid = null, pids = null, reorderNs = REORDER_NS, maxConnections = MAX_CONNECTIONS, follow = null,
  } = {}) {
    this.reorderNs = reorderNs;
    this.maxConnections = maxConnections;
    // The program's full maps: what @conn and @call did not keep (their
    // counts so far: the largest seen), the most entries one batch held.
    this.full = { conn: 0, call: 0 };
    this.batchHeld = 0;
    this.held = [];
    this.first = 0;
    this.heldCalls = new Map();   // a call's key -> its held event, while its pieces arrive
    this.latest = 0n;
    this.connections = new Map();
    this.firedBy = new Map();
    this.arrivedBy = new Map();
    this.malformedBy = new Map();
    this.malformedWhy = new Map();
    this.droppedBy = new Map();
    this.http2By = new Map();
    this.beforeBy = new Map();
    this.unfollowedBy = new Map();
    this.unreadableBy = new Map();
    this.batchCalls = [0, 0];    // calls of each set's batch, against its @nN
    this.batchLatest = [0n, 0n];
    this.pid = pid;   // the traced process, where one is (http-wire.d's output does not repeat it)
    // The processes traced: an entry that names another is refused.
    this.pids = new Set(pids || (pid === null ? [] : [pid]));
    this.follow = follow;
    this.asked = new Map();   // pid -> whether follow() took it
    // Calls lost where several processes are traced: the batch's count is
    // of them all, so whose they were is not known.
    this.lostOfAll = 0;
  }

  /**
   * One item of the tracer's output (lib/tracer/output-formats.js: 'json',
   * http-wire.bt's batches; 'wire', http-wire.d's events) -> the records completed.
   */
  push(item) {
    const refused = (why) => this.refuse(this.pid, why);
    if (item && item.type === 'wire') {
      const piece = pieceOf(item, Buffer.from(item.bytes), refused);
      if (piece) {
        const isNew = this.take(piece);
        if (isNew) bump(this.firedBy, this.pid);   // DTrace's losses it says itself
      }
      return this.release(this.latest - this.reorderNs);
    }
    if (!item || item.type !== 'map' || !item.data) return [];
    for (const [name, value] of Object.entries(item.data)) {
      const batch = BATCH_MAP.exec(name);
      if (batch && value && typeof value === 'object') {
        const set = Number(batch[1]);
        const entries = Object.entries(value);
        if (entries.length > this.batchHeld) this.batchHeld = entries.length;
        for (const [key, bytes] of entries) {
          const k = EVENT_KEY.exec(key);
          const b = typeof bytes === 'string' ? stringBytes(bytes) : null;
          const pid = k && k[8] !== undefined ? Number(k[8]) : this.pid;
          const whose = k && b ? this.whose(pid) : 'unknown';
          // A child of the primary that is not a worker: counted among the
          // batch's calls, not read.
          // (@nN counts a call once: its first piece, at 0.)
          if (whose === 'dropped') { if (k[6] === '0') this.batchCalls[set]++; continue; }
          const piece = whose === 'traced'
            ? pieceOf({ kind: k[1], tid: k[2], ns: k[3], fd: k[4], ret: k[5], off: k[6], asked: k[7], pid }, b, refused)
              : null;
          if (whose === 'unknown') refused('an entry not as the program writes it');
          if (!piece) continue;
          // A worker forked anew: taken above (whose), nothing to follow.
          if ((piece.kind & KIND_BITS) === EVENT.EXEC) { this.batchCalls[set]++; continue; }
          if (this.take(piece)) this.batchCalls[set]++;
          if (piece.ns > this.batchLatest[set]) this.batchLatest[set] = piece.ns;
        }
        continue;
      }
      const count = COUNT_MAP.exec(name);
      if (count && Number.isSafeInteger(value) && value >= 0) this.counted(Number(count[1]), value);
      const full = FULL_MAP.exec(name);
      if (full && Number.isSafeInteger(value) && value > this.full[full[1]]) this.full[full[1]] = value;
    }
    return this.release(this.latest - this.reorderNs);
  }

  // What the program's bounded maps held or refused (lib/http/wire-plan.js
  // wireBoundedMaps), for lib/render/map-full.js.
  mapsSeen() {
    return { '@conn': { refused: this.full.conn }, '@call': { refused: this.full.call }, '@ev0/@ev1': { held: this.batchHeld } };
  }

  // Whether an entry's PID is one traced (any, where the reader was told
  // none), or one follow() took: 'traced'; one it dropped: 'dropped'; else 'unknown'.
  whose(pid) {
    if (this.pids.size === 0 || this.pids.has(pid)) return 'traced';
    if (!this.follow) return 'unknown';
    if (!this.asked.has(pid)) {
      if (this.asked.size >= MAX_FOLLOWED) return 'dropped';
      const take = Boolean(this.follow(pid));
      this.asked.set(pid, take);
      if (take) this.pids.add(pid);
    }
    return this.asked.get(pid) ? 'traced' : 'dropped';
  }

  // A set's count of calls: those of its batch that did not arrive were lost
  // (the batch map full, or left behind): from that batch's last event on,
  // no connection then open is followed.
  counted(set, n) {
    if (this.pid !== null) bump(this.firedBy, this.pid, n);
    else if (n > this.batchCalls[set]) this.lostOfAll += n - this.batchCalls[set];
    if (n > this.batchCalls[set]) {
      const ns = this.batchLatest[set] > this.latest ? this.batchLatest[set] : this.latest;
      this.hold({ kind: 'loss', pid: this.pid, ns });
    }
    this.batchCalls[set] = 0;
    this.batchLatest[set] = 0n;
  }

  // A piece: joined to its call while held, else a call of its own. -> whether it is a new call.
  take(piece) {
    const pid = piece.pid === null ? this.pid : piece.pid;
    const key = `${piece.kind},${pid},${piece.tid},${piece.ns},${piece.fd},${piece.ret}`;
    const held = this.heldCalls.get(key);
    if (held) { held.pieces.push(piece); return false; }
    const ev = { kind: piece.kind, pid, ns: piece.ns, fd: piece.fd, ret: piece.ret, pieces: [piece], key };
    this.heldCalls.set(key, ev);
    bump(this.arrivedBy, pid);
    // Several processes: each one's calls as they arrived (the lost, lostOfAll).
    if (this.pid === null) bump(this.firedBy, pid);
    this.hold(ev);
    if (piece.ns > this.latest) this.latest = piece.ns;
    return true;
  }

  // Events older than `nowNs` less the reorder time: handled now.
  flush(nowNs) {
    return this.release(BigInt(nowNs) - this.reorderNs);
  }

  end() {
    // Connections still open keep their unanswered requests: not complete, not reported.
    return this.release(null);
  }

  // Held events in the order of their times, from this.first on (a queue:
  // released from the front, compacted now and then).
  hold(ev) {
    let i = this.held.length;
    while (i > this.first && this.held[i - 1].ns > ev.ns) i--;
    if (i === this.held.length) this.held.push(ev); else this.held.splice(i, 0, ev);
  }

  release(before) {
    const out = [];
    while (this.first < this.held.length && (before === null || this.held[this.first].ns <= before)) {
      const ev = this.held[this.first];
      this.held[this.first++] = undefined;
      if (ev.key) this.heldCalls.delete(ev.key);
      this.handle(ev, out);
    }
    if (this.first > 1024 && this.first * 2 > this.held.length) {
      this.held = this.held.slice(this.first);
      this.first = 0;
    }
    return out;
  }

  refuse(pid, why) {
    bump(this.malformedBy, pid);
    if (!this.malformedWhy.has(pid)) this.malformedWhy.set(pid, why);
  }

  handle(ev, out) {
    if (ev.kind === 'loss') {
      for (const c of this.connections.values()) this.giveUp(c.pid, c, 'events lost');
      return;
    }
    const kind = ev.kind & KIND_BITS;
    const tls = (ev.kind & EVENT.TLS) !== 0;
    const id = `${ev.pid}:${tls ? 'tls:' : ''}${ev.fd}`;
    let c = this.connections.get(id);
    if (kind === EVENT.BEFORE) {
      // One followed until now: the program lost its state (its map full, or
      // http-wire.d's slot taken), and reads no more of it.
      if (c) this.giveUp(ev.pid, c, 'the tracer lost track of it');
      else bump(this.beforeBy, ev.pid);
      return;
    }
    if (kind === EVENT.UNFOLLOWED) {
      bump(this.unfollowedBy, ev.pid);
      return;
    }
    if (kind === EVENT.CLOSE) {
      if (!c) return;
      this.connections.delete(id);
      // Unanswered, where answers were still followed: closed with no answer.
      if (!c.left && !c.framers[c.responseSide].lost) for (const r of c.pending) out.push(record(ev.pid, ev.ns, r, c.server, 0, 'closed'));
      return;
    }
    if (ev.kind & EVENT.FIRST) {
      // Its first call (an fd or SSL object used again: a new connection).
      c = new Connection(kind === EVENT.READ, tls);
      this.add(id, c, ev.pid);
    } else if (!c) {
      // A connection not seen from its start (events lost, or given up at the bounds).
      c = new Connection(true, tls);
      this.add(id, c, ev.pid);
      this.giveUp(ev.pid, c, 'events lost');
    }
    if (!c.left) this.read(ev, c, kind === EVENT.READ ? 'read' : 'write', out);
    if (ev.kind & EVENT.LAST) {
      // The program reads no more of it: it left HTTP/1, or it is given up.
      if (!c.left) this.giveUp(ev.pid, c, 'an upgrade\'s answer inside a body');
      this.connections.delete(id);
    }
  }

  add(id, c, pid) {
    if (this.connections.size >= this.maxConnections) {
      const [oldest, conn] = this.connections.entries().next().value;
      this.connections.delete(oldest);
      if (conn.pending.length) bump(this.droppedBy, pid, conn.pending.length);
    }
    c.pid = pid;
    this.connections.set(id, c);
  }

  // One call on one side of a connection, by that side's framing.
  read(ev, c, side, out) {
    const framer = c.framers[side];
    framer.take(new Call(ev.ns, ev.ret, ev.pieces), (head, ns) => this.message(ev.pid, c, side, head, ns, out));
    this.lossOf(ev.pid, c);
  }

  // A head found on a side: a request kept, a response matched to its request.
  message(pid, c, side, head, ns, out) {
    const { tls } = c;
    if (head.kind === 'http2') {
      c.left = 'HTTP/2';
      // The preface read: a connection served; written: one made.
      const direction = side === 'read' ? 'server' : 'client';
      const n = this.http2By.get(pid) || { server: 0, client: 0 };
      n[direction]++;
      this.http2By.set(pid, n);
      out.push({ pid, ns, direction, connection: 'HTTP/2', tls });
      return null;
    }
    if (head.kind === 'request') {
      // Its answer cannot be seen any more: counted, not reported.
      if (c.framers[c.responseSide].lost) { this.countUnread(pid, 1); return null; }
      if (c.pending.length >= MAX_PENDING) { c.pending.shift(); bump(this.droppedBy, pid); }
      // A request made is named by its URL, as the hook names it.
      const url = !c.server && head.host && head.url.startsWith('/') ? `${tls ? 'https' : 'http'}://${head.host}${head.url}` : head.url;
      c.pending.push({ method: head.method, url, ns, upgrade: head.upgrade, connect: head.connect });
      return null;
    }
    // 1xx (100 Continue) is not the response; 101 (an upgrade) is.
    if (head.status < 200 && head.status !== 101) return { request: c.pending[0] || null };
    const r = c.pending.shift() || null;
    // A response whose request was not read: counted (its request not reported).
    if (!r && c.framers[c.requestSide].lost) this.countUnread(pid, 1);
    // What the connection becomes: the protocol of the 101 (its own Upgrade
    // header, else the request's), or a CONNECT's tunnel.
    let left = null;
    if (head.status === 101) left = head.upgrade || (r && r.upgrade) || 'unknown';
    else if (r && r.connect && head.status < 300) left = 'tunnel';
    if (r) out.push(record(pid, ns, r, c.server, head.status, null, left));
    // The request side, held after a request to leave HTTP/1, goes on or ends.
    const requests = c.framers[c.requestSide];
    if (left) c.left = left;
    if (r && (r.upgrade || r.connect)) {
      requests.answered(Boolean(left), (h, hns) => this.message(pid, c, c.requestSide, h, hns, out));
      this.lossOf(pid, c);
    }
    return { request: r, ends: Boolean(left) };
  }

  // A side that cannot be followed any more: the connection is counted, and
  // where answers can no longer be seen, the requests awaiting one.
  lossOf(pid, c) {
    for (const side of ['read', 'write']) {
      const why = c.framers[side].lost;
      if (!why || c.lossTaken[side]) continue;
      c.lossTaken[side] = true;
      this.countConnection(pid, c, why);
      if (side === c.responseSide) {
        this.countUnread(pid, c.pending.length);
        c.pending = [];
      }
    }
  }

  // Neither side followed any more (events lost, its start not seen).
  giveUp(pid, c, why) {
    if (c.left) return;
    for (const f of Object.values(c.framers)) f.lose(why);
    this.lossOf(pid, c);
  }

  countConnection(pid, c, why) {
    if (c.unreadable) return;
    c.unreadable = why;
    const u = this.unread(pid);
    u.connections++;
    u.why.set(why, (u.why.get(why) || 0) + 1);
  }

  countUnread(pid, n) {
    if (n) this.unread(pid).requests += n;
  }

  unread(pid) {
    if (!this.unreadableBy.has(pid)) this.unreadableBy.set(pid, { connections: 0, requests: 0, why: new Map() });
    return this.unreadableBy.get(pid);
  }
}

function record(pid, ns, r, server, status, error, upgrade = null) {
  const us = ns > r.ns ? ns - r.ns : 0n;
  const out = {
    pid,
    ns,
    direction: server ? 'server' : 'client',
    status,
    us: Number(us / 1000n),
    method: r.method,
    url: r.url,
    error,
  };
  // Only where the connection left HTTP/1 here, so that the hook's records and the wire's compare alike.
  if (upgrade) out.upgrade = upgrade;
  return out;
}

function bump(map, pid, n = 1) {
  map.set(pid, (map.get(pid) || 0) + n);
}

/**
 * What the reader's events came to, per process, as the hook's losses are
 * said (lib/render/loss.js): calls refused or lost; connections left to
 * HTTP/2, not followed after a point, opened before the trace; requests
 * given up at the bounds. `describe(pid)` names a process.
 */
function wireLossLines(reader, describe) {
  const counts = addMaps(new Map(), { fired: reader.firedBy, arrived: reader.arrivedBy, malformed: reader.malformedBy },
    reader.malformedWhy);
  const lines = lossLines(counts, {
    describe,
    noun: 'socket call',
    nouns: 'socket calls',
    share: '',
    lostWhy: 'the batch was full, or it was not printed before the tracer ended: the connections they were on are not followed after them',
  });
  if (reader.lostOfAll) {
    lines.push(`${plural(reader.lostOfAll, 'socket call')} of the processes traced did not arrive (the batch was full, or it was not printed `
      + 'before the tracer ended): the connections then open are not followed after them.');
  }
  for (const [pid, n] of reader.http2By) {
    const sides = [n.server && `${n.server} served`, n.client && `${n.client} made`].filter(Boolean).join(', ');
    lines.push(`${describe(pid)}: ${plural(n.server + n.client, 'HTTP/2 connection')} (${sides}): `
      + 'HTTP/2 is not decoded, their requests are not reported.');
  }
  for (const [pid, u] of reader.unreadableBy) {
    const why = [...u.why.entries()].sort((a, b) => b[1] - a[1]).map(([w, n]) => `${w}: ${grouped(n)}`).join('; ');
    const requests = u.requests ? `; ${plural(u.requests, 'request')} on ${u.connections === 1 ? 'it' : 'them'} from then on `
      + `${u.requests === 1 ? 'is' : 'are'} not reported` : '';
    lines.push(`${describe(pid)}: ${plural(u.connections, 'connection')} could not be followed after a point (${why})${requests}.`);
  }
  for (const [pid, n] of reader.beforeBy) {
    lines.push(`${describe(pid)}: ${plural(n, 'connection')} opened before tracing began ${n === 1 ? 'was' : 'were'} not read `
      + '(where a message starts inside a connection cannot be known): trace longer, or from before its clients connect.');
  }
  for (const [pid, n] of reader.unfollowedBy) {
    lines.push(`${describe(pid)}: ${plural(n, 'socket')} accepted or connected at a descriptor of ${grouped(DTRACE_FDS)} or more `
      + `${n === 1 ? 'was' : 'were'} not read (DTrace's program follows the descriptors below it; bpftrace's follows every one).`);
  }
  for (const [pid, n] of reader.droppedBy) {
    lines.push(`${describe(pid)}: ${plural(n, 'request')} given up `
      + `(more than ${MAX_PENDING} unanswered on a connection, or more than ${grouped(reader.maxConnections)} connections).`);
  }
  return lines;
}

/**
 * A whole capture -> its records (tests, and reading a capture by hand):
 * http-wire.bt's (-f json, the default) or, with { format: 'wire' },
 * http-wire.d's.
 */
function parseWire(text, { format = 'json', ...o } = {}) {
  const reader = new WireReader(o);
  const splitter = splitterFor(format);
  const out = [];
  for (const item of [...splitter.push(Buffer.from(text, 'latin1')), ...splitter.end()]) out.push(...reader.push(item));
  out.push(...reader.end());
  return { records: out, reader };
}

module.exports = {
  WireReader, parseWire, wireLossLines, EVENT, MAX_CONNECTIONS, MAX_PENDING, MAX_FOLLOWED, REORDER_NS, PIECE_BYTES,
};
