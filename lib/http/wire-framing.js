'use strict';
// HTTP/1.1's framing (RFC 9112, 6) followed over one side of a connection as
// nodetrace sees it off the wire: calls whose lengths are known (what each
// read or write returned) but whose bytes are known only in part (the pieces
// d-scripts/http-wire.bt copied). Where the next message starts is counted
// from those lengths, by the head's Content-Length or chunked transfer
// coding, never guessed from what the bytes look like: nothing inside a body
// is taken for a request, a response, an upgrade or HTTP/2's preface. Where
// the bytes the framing needs were not copied (a head longer than what was
// copied, a chunk's size line past it), or a head holds what node itself
// would refuse, the side is lost: it says why and reads nothing more. Pure.
const { grouped } = require('../render/text');
const { LIMITS } = require('../limits');

// A call's bytes as far as copied: `pieces` [{ off, bytes }] (bytes may stop
// short of what was asked, at a NUL), of a call that returned `ret` bytes.
class Call {
  constructor(ns, ret, pieces) {
    this.ns = ns;
    this.ret = ret;
    this.pieces = pieces.filter((p) => p.off < ret && p.bytes.length)
      .map((p) => ({ off: p.off, bytes: p.bytes.subarray(0, Math.max(0, ret - p.off)) }))
      .sort((a, b) => a.off - b.off);
  }

  // The bytes known from `pos` on without a gap (empty where pos is unknown).
  knownFrom(pos) {
    const parts = [];
    let at = pos;
    for (const p of this.pieces) {
      const end = p.off + p.bytes.length;
      if (end <= at) continue;
      if (p.off > at) break;
      parts.push(p.bytes.subarray(at - p.off));
      at = end;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }
}

// A head kept across calls (a head split across reads), a chunk's size
// line, and the calls held after a request that asks to leave HTTP/1 until
// its answer, at most (lib/limits.js says why).
const CARRY_BYTES = LIMITS.WIRE_CARRY_BYTES;
const CHUNK_LINE_BYTES = LIMITS.WIRE_CHUNK_LINE_BYTES;
const HELD_CALLS = LIMITS.WIRE_HELD_CALLS;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}) ([^ \r\n]{1,16384}) HTTP\/1\.([01])$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
const HEADER_LINE = /^([^:\s]+):[ \t]*(.*?)[ \t]*$/;
const HTTP2_PREFACE_LINE = 'PRI * HTTP/2.0';
// A protocol's name as shown: a token (RFC 9110 16.7), at most 32 bytes.
const PROTOCOL_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~/-]{1,32}$/;
const UNKNOWN_PROTOCOL = 'unknown';

// Why a side is lost, as the closing line says it.
const LOST = {
  longHead: 'a head longer than the bytes copied of it',
  longCarry: `a head longer than ${grouped(CARRY_BYTES)} bytes`,
  refused: 'a head node would refuse',
  coding: 'a transfer coding nodetrace does not follow',
  unseen: 'bytes the framing needs were not copied',
  held: `more than ${HELD_CALLS} calls before the answer to an upgrade`,
  role: 'a message of the other end',
};

/**
 * A head (its bytes, CRLF CRLF included) -> { kind: 'request', method, url,
 * host, upgrade, connect, length | chunked } | { kind: 'response', status,
 * upgrade, length | chunked | untilClose } | { kind: 'http2' } | { lost }.
 * A response's body also depends on the request it answers: decided by
 * bodyOf().
 */
function parseHead(buf) {
  const text = buf.toString('latin1');
  let eol = text.indexOf('\r\n');
  const first = text.slice(0, eol);
  if (first === HTTP2_PREFACE_LINE) return { kind: 'http2' };
  const req = REQUEST_LINE.exec(first);
  const res = req ? null : STATUS_LINE.exec(first);
  if (!req && !res) return { lost: LOST.refused };
  // The fields that frame a message or name it; every line checked as node checks it.
  let cl = null;
  let te = null;
  let upgradeValue;
  let connection = '';
  let host;
  const last = text.length - 2;   // the empty line's CRLF
  for (let pos = eol + 2; pos < last; pos = eol + 2) {
    eol = text.indexOf('\r\n', pos);
    const m = HEADER_LINE.exec(text.slice(pos, eol));
    // A folded line, a name that is no token, a field without a colon: node refuses them.
    if (!m || !TOKEN.test(m[1])) return { lost: LOST.refused };
    switch (m[1].length) {
      case 4: if (host === undefined && m[1].toLowerCase() === 'host') host = m[2]; break;
      case 7: if (upgradeValue === undefined && m[1].toLowerCase() === 'upgrade') upgradeValue = m[2]; break;
      case 10: if (m[1].toLowerCase() === 'connection') connection += `,${m[2]}`; break;
      case 14: if (m[1].toLowerCase() === 'content-length') { if (cl !== null) return { lost: LOST.refused }; cl = m[2]; } break;
      case 17: if (m[1].toLowerCase() === 'transfer-encoding') { if (te !== null) return { lost: LOST.refused }; te = m[2]; } break;
      default:
    }
  }
  const framing = {};
  if (te !== null) {
    // As node (llhttp) does: Content-Length beside Transfer-Encoding is refused;
    // of codings, only chunked alone is followed here.
    if (cl !== null) return { lost: LOST.refused };
    if (te.toLowerCase() !== 'chunked') {
      if (req) return { lost: LOST.coding };
      framing.untilClose = true;
    } else {
      framing.chunked = true;
    }
  } else if (cl !== null) {
    if (!/^\d{1,15}$/.test(cl)) return { lost: LOST.refused };
    framing.length = Number(cl);
  } else if (res) {
    framing.untilClose = true;
  } else {
    framing.length = 0;
  }
  const upgrade = upgradeOf(upgradeValue);
  if (req) {
    return {
      kind: 'request',
      method: req[1],
      url: /[\u0080-\uffff]/.test(req[2]) ? Buffer.from(req[2], 'latin1').toString('utf8') : req[2],
      host: hostOf(host),
      // Asks to leave HTTP/1: an upgrade, or a tunnel.
      upgrade: upgrade && connection.toLowerCase().split(',').some((t) => t.trim() === 'upgrade') ? upgrade : null,
      connect: req[1] === 'CONNECT',
      ...framing,
    };
  }
  return { kind: 'response', status: Number(res[2]), upgrade, ...framing };
}

function hostOf(value) {
  return value && /^[A-Za-z0-9.:[\]_-]{1,255}$/.test(value) ? value : null;
}

// The protocol an Upgrade header names first, UNKNOWN_PROTOCOL when it names
// no token (never the peer's text), null without one.
function upgradeOf(value) {
  if (value === undefined) return null;
  const first = value.split(',')[0].trim();
  return PROTOCOL_TOKEN.test(first) ? first : UNKNOWN_PROTOCOL;
}

/**
 * A response's body (RFC 9112 6.3), given the request it answers (null:
 * not known): none for HEAD, 1xx, 204 and 304; the rest of the connection
 * for a 2xx to CONNECT or a 101 (it leaves HTTP/1); else as its head says.
 */
function bodyOf(head, request) {
  const { status } = head;
  if ((request && request.method === 'HEAD') || (status >= 100 && status < 200) || status === 204 || status === 304) return { length: 0 };
  return head.chunked ? { chunked: true } : head.untilClose ? { untilClose: true } : { length: head.length };
}

/**
 * One side of a connection: the messages it carries, found by their framing.
 * `carries`: 'request' or 'response'; `trusted`: the side is node's own output
 * (its writes), whose chunk data is always followed by CRLF, so a CRLF not
 * copied is taken as there (never on a side a peer writes).
 */
class Framer {
  constructor({ carries, trusted = false }) {
    this.carries = carries;
    this.trusted = trusted;
    this.state = 'start';
    this.carry = null;    // bytes of a head or a line not ended yet, and the ns of its first call
    this.carryNs = 0n;
    this.remaining = 0;   // body bytes (length, chunk data) still to come
    this.lost = null;     // why the side cannot be followed any more
    this.holding = null;  // calls held after a request to leave HTTP/1
    this.ended = false;   // the rest is a body until the connection closes, or another protocol
  }

  /**
   * The call's bytes, in order: each head found is told to onHead(head, ns)
   * (ns: the call that brought its first byte), which for a response returns
   * the request it answers (null: none known) and may end the side (ends:
   * true, an upgrade or a tunnel).
   */
  take(call, onHead) {
    if (this.lost || this.ended) return;
    if (this.holding) { this.hold(call, 0); return; }
    this.read(call, 0, onHead);
  }

  read(call, from, onHead) {
    let pos = from;
    while (pos < call.ret && !this.lost && !this.ended && !this.holding) {
      if (this.state === 'length' || this.state === 'chunk-data') {
        const n = Math.min(this.remaining, call.ret - pos);
        pos += n;
        this.remaining -= n;
        if (this.remaining === 0) this.state = this.state === 'length' ? 'start' : 'chunk-crlf';
        continue;
      }
      if (this.state === 'until-close') return;
      if (this.state === 'chunk-crlf') {
        pos = this.crlf(call, pos);
        continue;
      }
      // start, head, chunk-size, trailer: a piece of text up to a line's or a head's end.
      pos = this.text(call, pos, onHead);
    }
    if (this.holding && pos < call.ret) this.hold(call, pos);
  }

  // The CRLF after a chunk's data.
  crlf(call, pos) {
    const known = call.knownFrom(pos);
    const need = this.carry ? 1 : 2;   // one byte of it came at the end of the last call
    if (known.length >= need || (known.length && pos + known.length === call.ret)) {
      const want = this.carry ? '\n' : '\r\n';
      const got = known.subarray(0, Math.min(need, known.length)).toString('latin1');
      if (!want.startsWith(got)) { this.lose(LOST.refused); return call.ret; }
      if (got.length < want.length) { this.carry = Buffer.from('\r'); return pos + got.length; }
      this.carry = null;
      this.state = 'chunk-size';
      return pos + got.length;
    }
    if (!this.trusted) { this.lose(LOST.unseen); return call.ret; }
    // node's own chunk: its CRLF, not copied.
    const n = Math.min(need, call.ret - pos);
    if (n === need) { this.carry = null; this.state = 'chunk-size'; } else { this.carry = Buffer.from('\r'); }
    return pos + n;
  }

  // A head (start, head), a chunk's size line (chunk-size) or the trailer
  // section (trailer): text ending in CRLF CRLF or CRLF, whole in the
  // bytes copied (with what was carried from the calls before).
  text(call, pos, onHead) {
    const known = call.knownFrom(pos);
    const carried = this.carry || Buffer.alloc(0);
    let buf = carried.length ? Buffer.concat([carried, known]) : known;
    if (this.state === 'start') {
      // An empty line before a request line (RFC 9112 2.2) is skipped.
      let skip = 0;
      while (this.carries === 'request' && buf.subarray(skip, skip + 2).toString('latin1') === '\r\n') skip += 2;
      if (skip) return pos + skip;
      if (!buf.length) { this.lose(LOST.unseen); return call.ret; }
      this.state = 'head';
      this.carryNs = call.ns;
    }
    const lineOnly = this.state === 'chunk-size';
    // The trailer section may be empty: its end is then its first CRLF.
    const end = lineOnly || (this.state === 'trailer' && buf.subarray(0, 2).toString('latin1') === '\r\n')
      ? indexOfFrom(buf, '\r\n', Math.max(0, carried.length - 1)) : indexOfFrom(buf, '\r\n\r\n', Math.max(0, carried.length - 3));
    if (end < 0) {
      // Not ended in what was copied: carried to the next call when this one was copied whole.
      const limit = lineOnly ? CHUNK_LINE_BYTES : CARRY_BYTES;
      if (pos + known.length < call.ret) { this.lose(this.state === 'head' && buf.length >= 4 ? LOST.longHead : LOST.unseen); return call.ret; }
      if (buf.length > limit) { this.lose(lineOnly ? LOST.refused : LOST.longCarry); return call.ret; }
      this.carry = buf;
      return call.ret;
    }
    const size = end + (lineOnly || (this.state === 'trailer' && end === 0) ? 2 : 4);
    const text = buf.subarray(0, size);
    const next = pos + size - carried.length;
    this.carry = null;
    if (this.state === 'chunk-size') {
      const m = /^([0-9A-Fa-f]{1,15})(?:[ \t]*;[^\r\n]*)?\r\n$/.exec(text.toString('latin1'));
      if (!m) { this.lose(LOST.refused); return call.ret; }
      this.remaining = parseInt(m[1], 16);
      this.state = this.remaining ? 'chunk-data' : 'trailer';
      return next;
    }
    if (this.state === 'trailer') {
      this.state = 'start';
      return next;
    }
    this.head(text, onHead, call);
    return next;
  }

  head(text, onHead, call) {
    const head = parseHead(text);
    if (head.lost) { this.lose(head.lost); return; }
    if (head.kind !== 'http2' && head.kind !== this.carries) { this.lose(LOST.role); return; }
    const ns = this.carryNs;
    this.state = 'start';
    const answered = onHead(head, ns, call);
    if (head.kind === 'http2' || (answered && answered.ends)) { this.ended = true; return; }
    const body = head.kind === 'response' ? bodyOf(head, answered ? answered.request : null) : head;
    if (body.untilClose) { this.state = 'until-close'; return; }
    if (body.chunked) { this.state = 'chunk-size'; } else if (body.length) { this.state = 'length'; this.remaining = body.length; }
    // A request that asks to leave HTTP/1: what follows it waits for its answer.
    if (head.kind === 'request' && (head.upgrade || head.connect)) this.holding = [];
  }

  // After a request to leave HTTP/1, the calls (from `from`) wait for its answer.
  hold(call, from) {
    if (this.holding.length >= HELD_CALLS) { this.holding = null; this.lose(LOST.held); return; }
    this.holding.push({ call, from });
  }

  /** The answer to the request held for: it left HTTP/1 (ended), or not (the held calls are read). */
  answered(left, onHead) {
    const held = this.holding;
    if (!held) return;
    this.holding = null;
    if (left) { this.ended = true; return; }
    for (const { call, from } of held) {
      if (this.holding) { this.hold(call, from); continue; }
      if (!this.lost && !this.ended) this.read(call, from, onHead);
    }
  }

  lose(why) {
    if (!this.lost) this.lost = why;
    this.carry = null;
    this.holding = null;
  }
}

function indexOfFrom(buf, what, from) {
  return buf.indexOf(what, from, 'latin1');
}

module.exports = { Framer, Call, parseHead, bodyOf, LOST, CARRY_BYTES, HELD_CALLS, UNKNOWN_PROTOCOL };
