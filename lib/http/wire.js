'use strict';
// `nodetrace http --source wire`: the lines of d-scripts/http-wire.bt (the
// first bytes of each socket read/write that starts an HTTP message) ->
// request records, the shape lib/http/records.js gives, so that the same
// lines, JSON and histograms render them. Pure.
//
// Per connection (PID, fd; for TLS, PID and the SSL object), per side (what
// it read, what it wrote):
//   - a request read, then a response written: a request served, its
//     latency from the read's return to the response head's write;
//   - a request written, then a response head read: a request made, its
//     latency from the write's return to the read's return;
//   - keep-alive (one after another), pipelined requests (several heads in
//     one read, bodies skipped by Content-Length), a start line split
//     across reads (kept, at most CARRY_BYTES, until its CRLF comes);
//   - a request line longer than the prefix copied: its URL cut, ending in …;
//   - a request whose body goes on past its call (Content-Length, chunked):
//     that side's calls until the request is answered are its body, not
//     requests, whatever they start with (a body may hold "GET / HTTP/1.1");
//     a request pipelined behind such a body before its answer is not seen;
//   - a socket closed with requests unanswered: each reported, status 0,
//     error "closed";
//   - a connection that leaves HTTP/1: a request answered 101 (Upgrade:
//     websocket, h2c, ...) or a CONNECT answered 2xx is reported with what
//     it became (`upgrade`), and nothing after it on that connection is read
//     as HTTP/1 (a WebSocket frame may hold "GET / HTTP/1.1"); HTTP/2's
//     preface ("PRI * HTTP/2.0", prior knowledge, or over TLS after ALPN
//     h2) makes one record of its own per side, `connection: 'HTTP/2'`:
//     HTTP/2 is not decoded, its requests are not read.
// Events come in batches (every 100 ms) whose entries have no order: they
// are held REORDER_NS and handled in the order of their times.
const { stringBytes, splitterFor } = require('../tracer/output-formats');
const { lossLines, addMaps } = require('../usdt/loss');

// rd, wr, cl: socket reads, writes, closes (by fd); tr, tw, tf: TLS reads,
// writes, SSL_free (by the SSL object's address).
const BATCH_MAP = /^@(rd|wr|cl|tr|tw|tf)([01])$/;
const IO_KEY = /^(\d{1,10}),(\d{1,20}),(\d{1,20}),(-?\d{1,20}),(\d{1,4})$/;
const CLOSE_KEY = /^(\d{1,10}),(\d{1,20}),(\d{1,20})$/;
const KINDS = { rd: 'read', wr: 'write', cl: 'close', tr: 'read', tw: 'write', tf: 'close' };
const REQUEST_LINE = /^([A-Z]{1,20}) ([^ \r\n]{1,8192}) HTTP\/1\.[01]$/;
const CUT_REQUEST_LINE = /^([A-Z]{1,20}) ([^ \r\n]{1,8192})$/;
const CUT_MARK = '…';
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/;
const HOST = /\r\nhost:[ \t]*([A-Za-z0-9.:[\]_-]{1,255})[ \t]*\r\n/i;
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d{1,15})[ \t]*\r\n/i;
// A chunked body's end: its last chunk, no trailers (at the end of a call).
const LAST_CHUNK = /(^|\r\n)0\r\n\r\n$/;
// HTTP/2's connection preface starts with this line (RFC 9113 3.4): no HTTP/1 request line.
const HTTP2_PREFACE_LINE = 'PRI * HTTP/2.0';
// An Upgrade header: the protocols asked for, or (in a 101) the one switched to.
const UPGRADE = /\r\nupgrade:[ \t]*([^\r\n]{0,200})\r\n/i;
// A protocol's name as shown: a token (RFC 9110 16.7), at most 32 bytes; other text is no name.
const PROTOCOL_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~/-]{1,32}$/;
const UNKNOWN_PROTOCOL = 'unknown';

// Bounds: nodetrace's memory stays bounded however busy or hostile the
// process. A connection beyond MAX_CONNECTIONS evicts the oldest; a
// connection's unanswered requests beyond MAX_PENDING are dropped, counted.
const CARRY_BYTES = 1024;
const MAX_CONNECTIONS = 4096;
const MAX_PENDING = 64;
// Batches come every 100 ms; an event taken just before a turn may land in
// the next batch: held 250 ms, every event is in order.
const REORDER_NS = 250000000n;

/**
 * One batch map of http-wire.bt (-f json): its name, its entries -> events
 * { type: 'read'|'write'|'close', pid, fd, ns, ret, bytes }, or null when
 * the map is none of the batch's. An entry not as the program writes it
 * is told to `refused(why)`.
 */
function batchEvents(name, map, pid, refused) {
  const m = BATCH_MAP.exec(name);
  if (!m || !map || typeof map !== 'object') return null;
  const out = [];
  const tls = m[1].startsWith('t');
  // A connection: an fd, or for TLS the SSL object (no fd behind node's memory BIOs).
  const conn = (n) => (tls ? `tls:${n}` : n);
  for (const [key, value] of Object.entries(map)) {
    if (KINDS[m[1]] === 'close') {
      const k = CLOSE_KEY.exec(key);
      if (!k) { refused('an entry not as the program writes it'); continue; }
      out.push({ type: 'close', pid, fd: conn(k[3]), ns: BigInt(k[2]), tls });
      continue;
    }
    const k = IO_KEY.exec(key);
    const bytes = typeof value === 'string' ? stringBytes(value) : null;
    // The bytes end at a NUL (a string): never more than were copied.
    if (!k || !bytes || bytes.length > Number(k[5]) || Number(k[5]) > Number(k[4])) {
      refused('an entry not as the program writes it');
      continue;
    }
    out.push({ type: KINDS[m[1]], pid, fd: conn(k[3]), ns: BigInt(k[2]), ret: Number(k[4]), bytes, tls });
  }
  return out;
}

/**
 * One event of http-wire.d (lib/tracer/output-formats.js 'wire': { kind,
 * tid, ns, fd, ret, copied, bytes }) -> the event batchEvents makes of a
 * batch entry, or null (told to `refused(why)`) when it is not as the
 * program writes it.
 */
function wireEvent(item, pid, refused) {
  const kind = BATCH_MAP.exec(`@${item.kind}0`) ? item.kind : null;
  const tls = kind !== null && kind.startsWith('t');
  const conn = tls ? `tls:${item.fd}` : item.fd;
  if (kind === null) { refused('an entry not as the program writes it'); return null; }
  if (KINDS[kind] === 'close') {
    if (item.bytes.length) { refused('an entry not as the program writes it'); return null; }
    return { type: 'close', pid, fd: conn, ns: BigInt(item.ns), tls };
  }
  // The bytes end at a NUL (a string): never more than were copied.
  if (item.bytes.length > Number(item.copied) || Number(item.copied) > Number(item.ret)) {
    refused('an entry not as the program writes it');
    return null;
  }
  return { type: KINDS[kind], pid, fd: conn, ns: BigInt(item.ns), ret: Number(item.ret), bytes: Buffer.from(item.bytes), tls };
}

/**
 * The HTTP messages that start in `data` (a side's bytes: what it carried
 * over, then this call's), from a message's start. -> { messages, carry }:
 * messages { kind: 'request', method, url, host, upgrade } |
 * { kind: 'response', status, upgrade } | { kind: 'http2' } (its preface);
 * `upgrade`: the protocol an Upgrade header names (a request's first), or
 * null; a request's `bodyOpen`: its body goes on past this call. Nothing
 * after a preface, a request asking to upgrade or a 101 is read: those
 * bytes may be the next protocol's. carry: bytes to keep for the next call
 * (a start line not ended yet), or null. `total`: how long the call's data
 * was, cut or not (data holds the whole call when it is data.length).
 */
function messagesIn(data, total = data.length) {
  const whole = total === data.length;
  const messages = [];
  let i = 0;
  while (i < data.length) {
    const eol = data.indexOf('\r\n', i, 'latin1');
    if (eol < 0) {
      // A start line not ended: kept for the next read, if this one was
      // whole; cut at the prefix, a request line longer than it: its URL
      // as far as it was copied, marked cut.
      const rest = data.subarray(i);
      const cut = whole ? null : CUT_REQUEST_LINE.exec(rest.toString('latin1'));
      if (cut) messages.push({ kind: 'request', method: cut[1], url: Buffer.from(cut[2], 'latin1').toString('utf8') + CUT_MARK });
      return { messages, carry: whole && rest.length <= CARRY_BYTES && looksLikeStart(rest) ? rest : null };
    }
    const line = data.subarray(i, eol).toString('latin1');
    if (line === HTTP2_PREFACE_LINE) {
      messages.push({ kind: 'http2' });
      break;
    }
    const req = REQUEST_LINE.exec(line);
    const res = req ? null : STATUS_LINE.exec(line);
    const upgrade = req || res ? upgradeIn(data, eol) : null;
    if (req) messages.push({ kind: 'request', method: req[1], url: Buffer.from(req[2], 'latin1').toString('utf8'), host: hostIn(data, eol), upgrade });
    else if (res) messages.push({ kind: 'response', status: Number(res[1]), upgrade });
    else break;
    if ((req && upgrade) || (res && Number(res[1]) === 101)) break;
    // The next message (pipelined) after this head and its body, where the
    // head ends here and says its body's length.
    const end = data.indexOf('\r\n\r\n', i, 'latin1');
    if (end < 0) break;
    const head = data.subarray(i, end + 2).toString('latin1');
    const cl = CONTENT_LENGTH.exec(head);
    const chunked = !cl && /\r\ntransfer-encoding:/i.test(head);
    if (req) {
      // Its body past this call: by its length, or chunked and not ended here.
      messages[messages.length - 1].bodyOpen = cl ? end + 4 + Number(cl[1]) > total
        : chunked && !(whole && LAST_CHUNK.test(data.subarray(end + 4).toString('latin1')));
    }
    if (!cl && (res || chunked)) break;   // a body of unknown length
    i = end + 4 + (cl ? Number(cl[1]) : 0);
  }
  return { messages, carry: null };
}

// The Host header of the head whose start line ends at `eol`, as far as copied, or null.
function hostIn(data, eol) {
  const end = data.indexOf('\r\n\r\n', eol, 'latin1');
  const head = data.subarray(eol, end < 0 ? data.length : end + 2).toString('latin1');
  const m = HOST.exec(head);
  return m ? m[1] : null;
}

// The protocol the Upgrade header of the head whose start line ends at
// `eol` names first, as far as copied; UNKNOWN_PROTOCOL when it names no
// token; null without one.
function upgradeIn(data, eol) {
  const end = data.indexOf('\r\n\r\n', eol, 'latin1');
  const head = data.subarray(eol, end < 0 ? data.length : end + 2).toString('latin1');
  const m = UPGRADE.exec(head);
  if (!m) return null;
  const first = m[1].split(',')[0].trim();
  return PROTOCOL_TOKEN.test(first) ? first : UNKNOWN_PROTOCOL;
}

// Could these bytes be the start of a start line (a method, or "HTTP/")?
function looksLikeStart(b) {
  const s = b.subarray(0, 5).toString('latin1');
  return /^[A-Z]{1,5}$/.test(s) || /^[A-Z]{1,20} /.test(b.subarray(0, 21).toString('latin1')) || 'HTTP/'.startsWith(s);
}

class Connection {
  constructor() {
    this.carry = { read: null, write: null };
    // A side whose last request's body goes on: its calls are that body
    // until the request is answered.
    this.inBody = { read: false, write: false };
    this.served = [];   // requests read, awaiting the response written
    this.made = [];     // requests written, awaiting the response read
    // Once the connection leaves HTTP/1 (an upgrade, a tunnel, HTTP/2): what
    // it became; its bytes are not read any more.
    this.left = null;
  }
}

/**
 * The tracer's lines -> completed request records ({ pid, ns, direction,
 * status, us, method, url, error }, as lib/http/records.js). push(line) and
 * flush(nowNs) return the records completed; end() returns the rest.
 * Counts, for lib/usdt/loss.js: firedBy (the program's @events), fullBy
 * (left out of a full batch), arrivedBy (events read), malformedBy/
 * malformedWhy (entries refused), droppedBy (requests given up: bounds).
 */
class WireReader {
  constructor({ pid = null, reorderNs = REORDER_NS } = {}) {
    this.reorderNs = reorderNs;
    this.held = [];
    this.latest = 0n;
    this.connections = new Map();
    this.firedBy = new Map();
    this.arrivedBy = new Map();
    this.malformedBy = new Map();
    this.malformedWhy = new Map();
    this.droppedBy = new Map();
    this.fullBy = new Map();
    this.http2By = new Map();   // pid -> { server, client }: HTTP/2 connections seen, not read
    this.pid = pid;   // the traced process (the program's output does not repeat it)
  }

  /**
   * One item of the tracer's output (lib/tracer/output-formats.js: 'json',
   * http-wire.bt's batches; 'wire', http-wire.d's events) -> the records completed.
   */
  push(item) {
    if (item && item.type === 'wire') {
      const ev = wireEvent(item, this.pid, (why) => this.refuse(this.pid, why));
      if (ev) this.take([ev]);
      return this.release(this.latest - this.reorderNs);
    }
    if (!item || item.type !== 'map' || !item.data) return [];
    for (const [name, value] of Object.entries(item.data)) {
      // At exit; bpftrace may print them again, cleared: the larger is the count.
      if (name === '@events' || name === '@full') {
        if (Number.isSafeInteger(value) && value >= 0 && this.pid !== null) {
          const into = name === '@events' ? this.firedBy : this.fullBy;
          into.set(this.pid, Math.max(into.get(this.pid) || 0, value));
        }
        continue;
      }
      this.take(batchEvents(name, value, this.pid, (why) => this.refuse(this.pid, why)) || []);
    }
    return this.release(this.latest - this.reorderNs);
  }

  take(events) {
    for (const ev of events) {
      bump(this.arrivedBy, ev.pid);
      this.hold(ev);
      if (ev.ns > this.latest) this.latest = ev.ns;
    }
  }

  // Events older than `nowNs` less the reorder time: handled now.
  flush(nowNs) {
    return this.release(BigInt(nowNs) - this.reorderNs);
  }

  end() {
    const out = this.release(null);
    // Connections still open keep their unanswered requests: not complete, not reported.
    return out;
  }

  hold(ev) {
    let i = this.held.length;
    while (i > 0 && this.held[i - 1].ns > ev.ns) i--;
    this.held.splice(i, 0, ev);
  }

  release(before) {
    let n = 0;
    while (n < this.held.length && (before === null || this.held[n].ns <= before)) n++;
    const out = [];
    for (const ev of this.held.splice(0, n)) this.handle(ev, out);
    return out;
  }

  refuse(pid, why) {
    bump(this.malformedBy, pid);
    if (!this.malformedWhy.has(pid)) this.malformedWhy.set(pid, why);
  }

  connection(ev, create) {
    const key = `${ev.pid}:${ev.fd}`;
    let c = this.connections.get(key);
    if (!c && create) {
      if (this.connections.size >= MAX_CONNECTIONS) {
        const [oldest, conn] = this.connections.entries().next().value;
        this.connections.delete(oldest);
        const dropped = conn.served.length + conn.made.length;
        if (dropped) bump(this.droppedBy, ev.pid, dropped);
      }
      c = new Connection();
      this.connections.set(key, c);
    }
    return c;
  }

  handle(ev, out) {
    if (ev.type === 'close') {
      const c = this.connection(ev, false);
      if (!c) return;
      this.connections.delete(`${ev.pid}:${ev.fd}`);
      for (const r of c.served) out.push(record(ev, r, 'server', 0, 'closed'));
      for (const r of c.made) out.push(record(ev, r, 'client', 0, 'closed'));
      return;
    }
    const { bytes } = ev;
    const c = this.connection(ev, true);
    if (c.left) return;   // no more HTTP/1 here: an upgraded connection's or HTTP/2's bytes
    const side = ev.type;
    if (c.inBody[side]) return;   // a request's body, whatever it starts with
    const carried = c.carry[side];
    const data = carried ? Buffer.concat([carried.bytes, bytes]) : bytes;
    const startNs = carried ? carried.ns : ev.ns;
    c.carry[side] = null;
    const { messages, carry } = messagesIn(data, data.length - bytes.length + ev.ret);
    if (carry) c.carry[side] = { bytes: carry, ns: carry.length === data.length ? startNs : ev.ns };
    for (const m of messages) {
      if (m.kind === 'http2') {
        c.left = 'HTTP/2';
        c.carry = { read: null, write: null };
        // The preface read: a connection served; written: one made.
        const direction = side === 'read' ? 'server' : 'client';
        const n = this.http2By.get(ev.pid) || { server: 0, client: 0 };
        n[direction]++;
        this.http2By.set(ev.pid, n);
        out.push({ pid: ev.pid, ns: ev.ns, direction, connection: 'HTTP/2', tls: ev.tls });
        break;
      }
      if (m.kind === 'request') {
        const queue = side === 'read' ? c.served : c.made;
        if (queue.length >= MAX_PENDING) { queue.shift(); bump(this.droppedBy, ev.pid); }
        // A request made is named by its URL, as the hook names it.
        const url = side === 'write' && m.host && m.url.startsWith('/') ? `${ev.tls ? 'https' : 'http'}://${m.host}${m.url}` : m.url;
        queue.push({ method: m.method, url, ns: side === 'read' ? startNs : ev.ns, upgrade: m.upgrade });
        if (m.bodyOpen) c.inBody[side] = true;
      } else if (m.status >= 200 || m.status === 101) {
        // 1xx (100 Continue) is not the response; 101 (an upgrade) is.
        c.inBody[side === 'write' ? 'read' : 'write'] = false;
        const queue = side === 'write' ? c.served : c.made;
        const r = queue.shift();
        // What the connection becomes: the protocol of the 101 (its own
        // Upgrade header, else the request's), or a CONNECT's tunnel.
        let left = null;
        if (m.status === 101) left = m.upgrade || (r && r.upgrade) || UNKNOWN_PROTOCOL;
        else if (r && r.method === 'CONNECT' && m.status < 300) left = 'tunnel';
        if (r) out.push(record(ev, r, side === 'write' ? 'server' : 'client', m.status, null, left));
        if (left) {
          c.left = left;
          c.carry = { read: null, write: null };
          break;
        }
      }
    }
  }
}

function record(ev, r, direction, status, error, upgrade = null) {
  const ns = ev.ns > r.ns ? ev.ns - r.ns : 0n;
  const out = {
    pid: ev.pid,
    ns: ev.ns,
    direction,
    status,
    us: Number(ns / 1000n),
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
 * said (lib/usdt/loss.js): left out of a full batch, refused, lost; and the
 * requests given up at the bounds. `describe(pid)` names a process.
 */
function wireLossLines(reader, describe) {
  const counts = addMaps(new Map(), { fired: reader.firedBy, full: reader.fullBy, arrived: reader.arrivedBy, malformed: reader.malformedBy },
    reader.malformedWhy);
  const lines = lossLines(counts, {
    describe,
    noun: 'socket event',
    nouns: 'socket events',
    share: '',
    lostWhy: 'nodetrace could not read them before the tracer ended: their requests may be missing',
  });
  for (const [pid, n] of reader.http2By) {
    const sides = [n.server && `${n.server} served`, n.client && `${n.client} made`].filter(Boolean).join(', ');
    lines.push(`${describe(pid)}: ${n.server + n.client} HTTP/2 connection${n.server + n.client === 1 ? '' : 's'} (${sides}): `
      + 'HTTP/2 is not decoded, their requests are not reported.');
  }
  for (const [pid, n] of reader.droppedBy) {
    lines.push(`${describe(pid)}: ${n.toLocaleString('en-US')} request${n === 1 ? '' : 's'} given up `
      + `(more than ${MAX_PENDING} unanswered on a connection, or more than ${MAX_CONNECTIONS.toLocaleString('en-US')} connections).`);
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

module.exports = { WireReader, parseWire, batchEvents, wireEvent, messagesIn, wireLossLines, CARRY_BYTES, MAX_CONNECTIONS, MAX_PENDING, REORDER_NS };
