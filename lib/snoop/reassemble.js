'use strict';
// Turns what d-scripts/log-snoop.bt and log-snoop.d print into whole bunyan
// records. Pure: items in (lib/tracer/output-formats.js), events out; the
// caller supplies the clock.
//
// The tracers' output (see the scripts' headers):
//   bpftrace, -f json: printf objects whose data is
//     S PID TID ID IDX TEXT     piece IDX of record (PID, TID, ID): up to 199 bytes
//     T PID TID ID N            that record is longer than its N pieces
//   and its own objects: lost_events (its perf buffer overflowed), the map
//   @records (at exit: records the probes saw).
//   DTrace, length-prefixed: R PID TID CUT LEN TEXT (a whole record, LEN
//   bytes; CUT 1: cut at strsize), and `records N` at exit.
// A record's text is something a traced process wrote. It arrives escaped
// (JSON) or counted (LEN), never as lines of its own, and PID, TID and the
// loss counts come only from the tracer's own fields and objects: no text
// can forge another process's record or a loss report.
//
// Pieces are 199 bytes of the record (PIECE_BYTES) except the last, which is
// shorter; they are joined as bytes and decoded once, so a UTF-8 character
// cut between two pieces comes out whole. Byte counts are checked, so pieces
// of the wrong size or missing pieces (lost events) make an "incomplete"
// event, never a wrong record.
const { stringBytes, itemText } = require('../tracer/output-formats');

const PIECE_BYTES = 199;
const MAX_PIECES = 21;
const PREFIX_CHARS = 200;

// The fields before TEXT, read as ASCII; TEXT is everything after them.
const PIECE_HEAD = /^S (\d{1,10}) (\d{1,10}) (\d{1,20}) (\d{1,3}) /;
const TRUNC_RE = /^T (\d{1,10}) (\d{1,10}) (\d{1,20}) (\d{1,3})$/;
const DTRACE_FIRED_RE = /^\s*records\s+(\d+)\s*$/;
const DROPS_RE = /^dtrace: (\d+) (?:dynamic variable |aggregation )?drops? on CPU \d+/;
const STRLEN_ERROR = /^ERROR: (log-snoop\.bt needs BPFTRACE_STRLEN.*)$/;

// bpftrace's printf data: the bytes the program printed, less the newline
// that ends each of its lines.
function printfBytes(data) {
  const bytes = stringBytes(data);
  return bytes.length && bytes[bytes.length - 1] === 10 ? bytes.subarray(0, -1) : bytes;
}

function parsePrintf(data) {
  const bytes = printfBytes(data);
  const ascii = bytes.subarray(0, 64).toString('latin1');
  let m;
  if ((m = PIECE_HEAD.exec(ascii))) {
    return { kind: 'piece', pid: +m[1], tid: +m[2], id: m[3], idx: +m[4], bytes: bytes.subarray(m[0].length) };
  }
  const text = bytes.toString('utf8');
  if ((m = TRUNC_RE.exec(text))) return { kind: 'cut', pid: +m[1], tid: +m[2], id: m[3], pieces: +m[4] };
  if ((m = STRLEN_ERROR.exec(text))) return { kind: 'error', message: m[1] };
  if (text.startsWith('S ')) return { kind: 'garbled', line: text };
  return { kind: 'other', line: text };
}

/**
 * One item of a snoop tracer's output -> { kind, ... }: piece, cut, record,
 * lost, fired, error, garbled or other.
 */
function parseItem(item) {
  if (typeof item === 'string') return parseTextLine(item);
  switch (item.type) {
    case 'printf': return typeof item.data === 'string' ? parsePrintf(item.data) : { kind: 'garbled', line: JSON.stringify(item) };
    case 'lost_events': return { kind: 'lost', events: Number(item.data && item.data.events) || 0 };
    case 'map':
      if (item.data && typeof item.data['@records'] === 'number') return { kind: 'fired', records: item.data['@records'] };
      return { kind: 'other', line: '' };
    case 'attached_probes': return { kind: 'other', line: '' };
    case 'record': return { kind: 'record', pid: item.pid, tid: item.tid, cut: item.cut, bytes: item.bytes };
    case 'garbled': return { kind: 'garbled', line: item.line };
    case 'text': return parseTextLine(item.line);
    default: return { kind: 'other', line: itemText(item) || JSON.stringify(item) };
  }
}

// Plain lines: DTrace's (records, and its drops on stderr), and whatever a
// tracer prints outside its program's output.
function parseTextLine(line) {
  let m;
  if ((m = DTRACE_FIRED_RE.exec(line))) return { kind: 'fired', records: +m[1] };
  if ((m = DROPS_RE.exec(line))) return { kind: 'lost', events: +m[1] };
  return { kind: 'other', line };
}

// bunyan ends each record with os.EOL; our output adds its own.
function stripEol(text) {
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
}

function levelOf(text) {
  const m = /"level":(\d+)/.exec(text);
  return m ? Number(m[1]) : null;
}

function prefixOf(text) {
  return Array.from(stripEol(text).slice(0, PREFIX_CHARS + 1)).slice(0, PREFIX_CHARS).join('');
}

/**
 * Events:
 *   { type: 'record', pid, tid, id, text }                a whole record (no trailing newline); id:
 *                                                         when the probe fired (bpftrace's nsecs), or undefined
 *   { type: 'truncated', pid, tid, level, bytesSeen, prefix, complete }
 *                                                         longer than the tracer reads; complete:
 *                                                         false if pieces were lost too
 *   { type: 'incomplete', pid, tid, bytesSeen, reason }   pieces lost or malformed: not shown
 *   { type: 'lost', events }                              the tracer says it dropped events
 *   { type: 'fired', records }                            records the probes saw (at exit)
 *   { type: 'error', message }                            the program refused to run
 *   { type: 'other', line }                               anything else the tracer printed
 */
class Reassembler {
  constructor({ staleMs = 5000, pieceBytes = PIECE_BYTES } = {}) {
    this.staleMs = staleMs;
    this.pieceBytes = pieceBytes;
    this.pending = new Map();
    this.stats = { records: 0, truncated: 0, incomplete: 0, lostEvents: 0, fired: null, pids: new Set() };
  }

  // Parsed item (parseItem) -> events.
  push(p, now = 0) {
    switch (p.kind) {
      case 'piece': return this.piece(p, now);
      case 'cut': return this.cut(p);
      case 'record': return this.whole(p);
      case 'lost':
        this.stats.lostEvents += p.events;
        return [{ type: 'lost', events: p.events }];
      case 'fired':
        this.stats.fired = (this.stats.fired || 0) + p.records;
        return [{ type: 'fired', records: p.records }];
      case 'error': return [{ type: 'error', message: p.message }];
      case 'garbled': return [this.incomplete({ pid: 0, tid: 0, bytes: 0 }, 'a line of the tracer\'s output was garbled')];
      default: return p.line.trim() ? [{ type: 'other', line: p.line }] : [];
    }
  }

  // Convenience: an item of the tracer's output.
  pushItem(item, now = 0) {
    return this.push(parseItem(item), now);
  }

  piece(p, now) {
    const key = p.pid + ' ' + p.tid + ' ' + p.id;
    let e = this.pending.get(key);
    if (!e) {
      e = { pid: p.pid, tid: p.tid, id: p.id, parts: [], bytes: 0, next: 0, damaged: null, seen: now };
      this.pending.set(key, e);
    }
    e.seen = now;
    if (p.idx !== e.next) e.damaged = e.damaged || `piece ${e.next} of the record was lost`;
    e.next = p.idx + 1;
    e.parts.push(p.bytes);
    e.bytes += p.bytes.length;
    if (p.bytes.length > this.pieceBytes) {
      e.damaged = e.damaged || `a piece held ${p.bytes.length} bytes, not ${this.pieceBytes} (run bpftrace with BPFTRACE_STRLEN=200)`;
    }
    if (p.bytes.length >= this.pieceBytes) return [];   // more to come
    this.pending.delete(key);
    if (e.damaged) return [this.incomplete(e, e.damaged)];
    this.stats.records++;
    this.stats.pids.add(e.pid);
    return [{ type: 'record', pid: e.pid, tid: e.tid, id: e.id, text: stripEol(Buffer.concat(e.parts).toString('utf8')) }];
  }

  cut(p) {
    const key = p.pid + ' ' + p.tid + ' ' + p.id;
    const e = this.pending.get(key) || { pid: p.pid, tid: p.tid, id: p.id, parts: [], bytes: 0, next: 0, damaged: 'its pieces were lost' };
    this.pending.delete(key);
    if (e.next !== p.pieces) e.damaged = e.damaged || 'pieces of the record were lost';
    const text = Buffer.concat(e.parts).toString('utf8');
    this.stats.truncated++;
    this.stats.pids.add(e.pid);
    return [{
      type: 'truncated', pid: e.pid, tid: e.tid, id: e.id, level: levelOf(text), bytesSeen: e.bytes,
      prefix: prefixOf(text), complete: !e.damaged,
    }];
  }

  whole(p) {
    this.stats.pids.add(p.pid);
    const text = p.bytes.toString('utf8');
    if (!p.cut) {
      this.stats.records++;
      return [{ type: 'record', pid: p.pid, tid: p.tid, text: stripEol(text) }];
    }
    this.stats.truncated++;
    return [{
      type: 'truncated', pid: p.pid, tid: p.tid, level: levelOf(text), bytesSeen: p.bytes.length,
      prefix: prefixOf(text), complete: true,
    }];
  }

  incomplete(e, reason) {
    this.stats.incomplete++;
    return { type: 'incomplete', pid: e.pid, tid: e.tid, bytesSeen: e.bytes, reason };
  }

  // Records whose last piece has not come for staleMs will not come: their
  // events were lost (one CPU's buffer can lag another's, hence the wait).
  expire(now) {
    const out = [];
    for (const [key, e] of this.pending) {
      if (now - e.seen >= this.staleMs) {
        this.pending.delete(key);
        out.push(this.incomplete(e, e.damaged || 'the end of the record was lost'));
      }
    }
    return out;
  }

  // End of the tracer's output: whatever is still pending is incomplete.
  finish() {
    const out = [];
    for (const e of this.pending.values()) out.push(this.incomplete(e, e.damaged || 'the end of the record was lost'));
    this.pending.clear();
    return out;
  }

  // Records lost: those the probes saw minus those that arrived (whole or
  // marked truncated). null when the tracer did not say how many it saw.
  lostRecords() {
    if (this.stats.fired === null) return null;
    return Math.max(0, this.stats.fired - this.stats.records - this.stats.truncated);
  }
}

module.exports = {
  Reassembler, parseItem, parseTextLine, stripEol, levelOf, prefixOf, PIECE_BYTES, MAX_PIECES,
};
