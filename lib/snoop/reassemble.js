'use strict';
// Turns what d-scripts/log-snoop.bt and log-snoop.d print into whole bunyan
// records. Pure: text in, events out; the caller supplies the clock.
//
// The tracers' output (see the scripts' headers):
//   S PID TID ID IDX K TEXT\x1e   bpftrace: piece IDX of record (PID, TID, ID)
//   T PID TID ID N                bpftrace: that record is longer than its N pieces
//   R PID TID CUT TEXT\x1e         DTrace: a whole record (CUT 1: cut at strsize)
//   @records: N                   bpftrace, at exit: records the probes saw
//   records N                     DTrace, at exit: the same
//   Lost N events                 bpftrace: its perf buffer overflowed
// TEXT may contain newlines (bunyan ends every record with one), hence the
// \x1e (RS) that ends every S and R line.
//
// Pieces are 199 bytes of the record (PIECE_BYTES) except the last, which is
// shorter; a piece whose last K bytes start a UTF-8 character that the next
// piece repeats arrives with that character replaced by one U+FFFD (the
// decoder saw an incomplete sequence), which is dropped here. Byte counts are
// checked, so pieces of the wrong size (BPFTRACE_STRLEN not 200) or missing
// pieces (lost events) make an "incomplete" event, never a wrong record.

const PIECE_BYTES = 199;
const MAX_PIECES = 21;
const TERMINATOR = '\x1e';
const REPLACEMENT = '\ufffd';
// A logical S/R line longer than this without its terminator is broken.
const MAX_LINE = 64 * 1024;
const PREFIX_CHARS = 200;

// Splits a text stream into logical lines: an S or R line runs to the first
// "\x1e\n", whatever newlines its text holds.
class LineSplitter {
  constructor() {
    this.buf = '';
  }

  push(text) {
    this.buf += text;
    const lines = [];
    let start = 0;
    let from = 0;
    for (;;) {
      const nl = this.buf.indexOf('\n', from);
      if (nl < 0) break;
      const c = this.buf.charCodeAt(start);
      const tagged = (c === 0x53 || c === 0x52) && this.buf.charCodeAt(start + 1) === 0x20;   // "S " or "R "
      if (tagged && this.buf.charCodeAt(nl - 1) !== 0x1e && nl - start < MAX_LINE) {
        from = nl + 1;   // the record's own newline: keep going
        continue;
      }
      lines.push(this.buf.slice(start, nl));
      start = nl + 1;
      from = start;
    }
    this.buf = this.buf.slice(start);
    return lines;
  }

  // What is left at the end of the stream.
  end() {
    const rest = this.buf;
    this.buf = '';
    return rest ? [rest] : [];
  }
}

const PIECE_RE = /^S (\d+) (\d+) (\d+) (\d+) (\d) ([\s\S]*)\x1e$/;
const TRUNC_RE = /^T (\d+) (\d+) (\d+) (\d+)$/;
const RECORD_RE = /^R (\d+) (\d+) ([01]) ([\s\S]*)\x1e$/;
const FIRED_RE = /^(?:@records:|\s*records)\s+(\d+)\s*$/;
const LOST_RE = /^Lost (\d+) events?\b/;
const DROPS_RE = /^dtrace: (\d+) (?:dynamic variable |aggregation )?drops? on CPU \d+/;

// One logical line -> { kind, ... }.
function parseLine(line) {
  let m;
  if ((m = PIECE_RE.exec(line))) {
    return { kind: 'piece', pid: +m[1], tid: +m[2], id: m[3], idx: +m[4], k: +m[5], text: m[6] };
  }
  if ((m = TRUNC_RE.exec(line))) return { kind: 'cut', pid: +m[1], tid: +m[2], id: m[3], pieces: +m[4] };
  if ((m = RECORD_RE.exec(line))) return { kind: 'record', pid: +m[1], tid: +m[2], cut: m[3] === '1', text: m[4] };
  if ((m = LOST_RE.exec(line))) return { kind: 'lost', events: +m[1] };
  if ((m = FIRED_RE.exec(line))) return { kind: 'fired', records: +m[1] };
  if ((m = DROPS_RE.exec(line))) return { kind: 'lost', events: +m[1] };
  if (/^ERROR: log-snoop\.bt needs BPFTRACE_STRLEN/.test(line)) return { kind: 'error', message: line.replace(/^ERROR: /, '') };
  if (line.startsWith('S ') || line.startsWith('R ')) return { kind: 'garbled', line };
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

  // Parsed line (parseLine) -> events.
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

  // Convenience: a logical line as text.
  pushLine(line, now = 0) {
    return this.push(parseLine(line), now);
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
    let text = p.text;
    let raw;
    if (p.k > 0) {
      if (!text.endsWith(REPLACEMENT)) {
        e.damaged = e.damaged || 'a piece did not end as announced';
      } else {
        text = text.slice(0, -1);
      }
      raw = Buffer.byteLength(text, 'utf8') + p.k;
    } else {
      raw = Buffer.byteLength(text, 'utf8');
    }
    e.parts.push(text);
    e.bytes += Buffer.byteLength(text, 'utf8');
    if (raw > this.pieceBytes || (p.k > 0 && raw !== this.pieceBytes)) {
      e.damaged = e.damaged || `a piece held ${raw} bytes, not ${this.pieceBytes} (run bpftrace with BPFTRACE_STRLEN=200)`;
    }
    if (raw >= this.pieceBytes) return [];   // more to come
    this.pending.delete(key);
    if (e.damaged) return [this.incomplete(e, e.damaged)];
    this.stats.records++;
    this.stats.pids.add(e.pid);
    return [{ type: 'record', pid: e.pid, tid: e.tid, id: e.id, text: stripEol(e.parts.join('')) }];
  }

  cut(p) {
    const key = p.pid + ' ' + p.tid + ' ' + p.id;
    const e = this.pending.get(key) || { pid: p.pid, tid: p.tid, id: p.id, parts: [], bytes: 0, next: 0, damaged: 'its pieces were lost' };
    this.pending.delete(key);
    if (e.next !== p.pieces) e.damaged = e.damaged || 'pieces of the record were lost';
    const text = e.parts.join('');
    this.stats.truncated++;
    this.stats.pids.add(e.pid);
    return [{
      type: 'truncated', pid: e.pid, tid: e.tid, id: e.id, level: levelOf(text), bytesSeen: e.bytes,
      prefix: prefixOf(text), complete: !e.damaged,
    }];
  }

  whole(p) {
    this.stats.pids.add(p.pid);
    if (!p.cut) {
      this.stats.records++;
      return [{ type: 'record', pid: p.pid, tid: p.tid, text: stripEol(p.text) }];
    }
    this.stats.truncated++;
    return [{
      type: 'truncated', pid: p.pid, tid: p.tid, level: levelOf(p.text), bytesSeen: Buffer.byteLength(p.text, 'utf8'),
      prefix: prefixOf(p.text), complete: true,
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
  LineSplitter, Reassembler, parseLine, stripEol, levelOf, prefixOf,
  PIECE_BYTES, MAX_PIECES, TERMINATOR,
};
