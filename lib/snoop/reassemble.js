'use strict';
// Turns what d-scripts/log-snoop.bt (log-snoop-whole.bt) and log-snoop.d
// print into whole bunyan records. Pure: items in
// (lib/tracer/output-formats.js), events out; the caller supplies the clock.
//
// The tracers' output (see the scripts' headers):
//   bpftrace, -f json: records come in batches, maps the program prints
//   every 100 ms (then clears):
//     @pieces0 / @pieces1  {"PID,TID,ID,IDX": TEXT}  piece IDX of record
//                          (PID, TID, ID): up to 199 bytes (4,179 whole)
//     @cut0 / @cut1        {"PID,TID,ID": N}  that record is longer than
//                          its N pieces (0, 1: the two sets taking turns)
//   and its own objects: lost_events (its output buffer overflowed), the maps
//   @records, @full and @over (at exit, per process: records the probes saw,
//   those left out of a full batch, and those left out of a crowded batch,
//   the process over its share).
//   DTrace, length-prefixed: R PID TID CUT LEN TEXT (a whole record, LEN
//   bytes; CUT 1: cut at strsize), and `records N` at exit.
// A record's text is something a traced process wrote. It arrives escaped
// (JSON) or counted (LEN), never as lines of its own, and PID, TID and the
// loss counts come only from the tracer's own fields and objects: no text
// can forge another process's record or a loss report.
//
// A record's pieces and its cut mark may come in either order: a batch
// prints @pieces before @cut, but at exit bpftrace prints the maps left in
// order of name, @cut1 before @pieces1 (0.17 to 0.27 alike; measured, and
// test/fixtures/snoop-bpftrace-0.27-exit.json, where a snoop of one PID on
// 0.24+ is ended without being stopped first and its last batch comes so).
// A mark that comes first waits for its record's pieces.
//
// A batch holds a map entry per piece, in no particular order: its records
// are put in the order they were logged (ID, the kernel time the probe fired,
// then the piece index), so each thread's records come out in order, and
// batches follow each other in time. A batch printed again (bpftrace prints
// every map left at exit, and one whose clear() it had not done yet comes
// twice) is recognised by its records' names, and shown once.
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

const PIECES_MAP = /^@pieces[01]$/;
const CUTS_MAP = /^@cut[01]$/;
const PIECE_KEY = /^(\d{1,10}),(\d{1,10}),(\d{1,20}),(\d{1,3})$/;
const CUT_KEY = /^(\d{1,10}),(\d{1,10}),(\d{1,20})$/;
const DTRACE_FIRED_RE = /^\s*records\s+(\d+)\s*$/;
const DROPS_RE = /^dtrace: (\d+) (?:dynamic variable |aggregation )?drops? on CPU \d+/;
const STRLEN_ERROR = /^ERROR: (log-snoop\.bt needs BPFTRACE_STRLEN.*)$/;
// bpftrace's own plain lines are short; a longer one is a batch cut at
// nodetrace's line limit (lib/tracer/output-formats.js), not news to show.
const PLAIN_LINE_MAX = 4096;

function parsePrintf(data) {
  const text = stringBytes(data).toString('utf8').replace(/\n$/, '');
  const m = STRLEN_ERROR.exec(text);
  return m ? { kind: 'error', message: m[1] } : { kind: 'other', line: text };
}

// A printed map of pieces or cuts -> a batch, or garbled if any entry is not
// as the program writes it.
function parseBatch(name, entries) {
  const batch = { kind: 'batch', map: name, pieces: [], cuts: [] };
  if (!entries || typeof entries !== 'object') return { kind: 'garbled', line: name };
  const pieces = PIECES_MAP.test(name);
  for (const [key, value] of Object.entries(entries)) {
    const m = (pieces ? PIECE_KEY : CUT_KEY).exec(key);
    if (!m || typeof value !== (pieces ? 'string' : 'number')) return { kind: 'garbled', line: `${name}[${key}]` };
    if (pieces) batch.pieces.push({ pid: +m[1], tid: +m[2], id: m[3], idx: +m[4], bytes: stringBytes(value) });
    else batch.cuts.push({ pid: +m[1], tid: +m[2], id: m[3], pieces: value });
  }
  return batch;
}

// A per-process count map ({"PID": N}) -> Map pid -> N (entries not so left out).
function perPid(map) {
  const out = new Map();
  for (const [pid, n] of Object.entries(map)) if (/^\d{1,10}$/.test(pid) && Number.isSafeInteger(n)
    && n >= 0) out.set(Number(pid), n);
  return out;
}

function sum(byPid) {
  let n = 0;
  for (const v of byPid.values()) n += v;
  return n;
}

function parseMap(data) {
  if (!data || typeof data !== 'object') return { kind: 'other', line: '' };
  const names = Object.keys(data);
  if (names.length !== 1) return { kind: 'other', line: '' };
  const name = names[0];
  if (name === '@records' && typeof data[name] === 'number') return { kind: 'fired', records: data[name] };
  if (name === '@records' && data[name] && typeof data[name] === 'object') {
    const byPid = perPid(data[name]);
    return { kind: 'fired', records: sum(byPid), byPid };
  }
  if ((name === '@over' || name === '@full') && data[name] && typeof data[name] === 'object') {
    const byPid = perPid(data[name]);
    return { kind: name.slice(1), records: sum(byPid), byPid };
  }
  if (PIECES_MAP.test(name) || CUTS_MAP.test(name)) return parseBatch(name, data[name]);
  return { kind: 'other', line: '' };
}

/**
 * One item of a snoop tracer's output -> { kind, ... }: batch, record, lost,
 * fired, error, garbled or other.
 */
function parseItem(item) {
  if (typeof item === 'string') return parseTextLine(item);
  switch (item.type) {
    case 'printf': return typeof item.data === 'string' ? parsePrintf(item.data) : { kind: 'garbled', line: JSON.stringify(item) };
    case 'lost_events': return { kind: 'lost', events: Number(item.data && item.data.events) || 0 };
    case 'map': return parseMap(item.data);
    case 'attached_probes': return { kind: 'other', line: '' };
    case 'record': return { kind: 'record', pid: item.pid, tid: item.tid, cut: item.cut, bytes: item.bytes };
    case 'garbled': return { kind: 'garbled', line: item.line };
    case 'text':
      return typeof item.line === 'string' && item.line.length > PLAIN_LINE_MAX
        ? { kind: 'garbled', line: item.line.slice(0, 80) } : parseTextLine(item.line);
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

// IDs are nanoseconds as decimal strings, up to 20 digits.
function byTime(x, y) {
  return x.id.length - y.id.length || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
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
  constructor({ staleMs = 5000, pieceBytes = PIECE_BYTES, batchEntries = Infinity } = {}) {
    this.staleMs = staleMs;
    this.pieceBytes = pieceBytes;
    // A batch map this full refused further entries: records were lost
    // because more arrived in one batch than it holds.
    this.batchEntries = batchEntries;
    this.pending = new Map();
    // Names (PID TID ID) of the records of the last few batches: a batch
    // printed twice shows once.
    this.recent = { pieces: [new Set(), new Set(), new Set()], cuts: [new Set(), new Set(), new Set()] };
    this.stats = { records: 0, truncated: 0, incomplete: 0, lostEvents: 0, fullBatches: 0, fired: null,
      pids: new Set() };
    // Per process: what its probes fired, what was left out of a crowded
    // batch (over its share), and what arrived (whole or marked truncated),
    // however it was then shown.
    this.firedBy = new Map();
    this.overBy = new Map();
    this.fullBy = new Map();
    this.arrivedBy = new Map();
  }

  arrived(pid) {
    this.arrivedBy.set(pid, (this.arrivedBy.get(pid) || 0) + 1);
  }

  // A per-process count printed again at exit (cleared or not) counts once:
  // the larger is the count.
  addBy(into, byPid) {
    for (const [pid, n] of byPid || []) into.set(pid, Math.max(into.get(pid) || 0, n));
  }

  // Parsed item (parseItem) -> events.
  push(p, now = 0) {
    switch (p.kind) {
      case 'batch': return this.batch(p, now);
      case 'record': return this.whole(p);
      case 'lost':
        this.stats.lostEvents += p.events;
        return [{ type: 'lost', events: p.events }];
      case 'fired':
        if (p.byPid) {
          this.addBy(this.firedBy, p.byPid);
          this.stats.fired = sum(this.firedBy);
        } else {
          this.stats.fired = (this.stats.fired || 0) + p.records;
        }
        return [{ type: 'fired', records: p.records }];
      case 'over':
        this.addBy(this.overBy, p.byPid);
        this.stats.over = sum(this.overBy);
        return [];
      case 'full':
        this.addBy(this.fullBy, p.byPid);
        this.stats.full = sum(this.fullBy);
        return [];
      case 'error': return [{ type: 'error', message: p.message }];
      case 'garbled': return [this.incomplete({ pid: 0, tid: 0, bytes: 0 }, 'a line of the tracer\'s output was garbled')];
      default: return p.line.trim() ? [{ type: 'other', line: p.line }] : [];
    }
  }

  // Convenience: an item of the tracer's output.
  pushItem(item, now = 0) {
    return this.push(parseItem(item), now);
  }

  // A batch (one printed map): its pieces in the order they were logged,
  // or its cuts.
  batch(b, now) {
    const kind = b.pieces.length ? 'pieces' : 'cuts';
    const recent = this.recent[kind];
    const name = (p) => p.pid + ' ' + p.tid + ' ' + p.id;
    const fresh = b[kind].filter((p) => !recent.some((set) => set.has(name(p))));
    fresh.sort((x, y) => byTime(x, y) || x.pid - y.pid || x.tid - y.tid || (x.idx || 0) - (y.idx || 0));
    recent.pop();
    recent.unshift(new Set(fresh.map(name)));
    const out = [];
    if (b[kind].length >= this.batchEntries) {
      this.stats.fullBatches++;
      out.push({ type: 'full', entries: b[kind].length });
    }
    for (const p of fresh) out.push(...(kind === 'pieces' ? this.piece(p, now) : this.cut(p, now)));
    return out;
  }

  piece(p, now) {
    const key = p.pid + ' ' + p.tid + ' ' + p.id;
    let e = this.pending.get(key);
    if (!e) {
      e = this.entry(p, now);
      this.pending.set(key, e);
    }
    e.seen = now;
    if (p.idx !== e.next) {
      e.damaged = e.damaged || `piece ${e.next} of the record was lost`;
      if (e.lead === undefined) e.lead = e.parts.length;
    }
    e.next = p.idx + 1;
    e.parts.push(p.bytes);
    e.bytes += p.bytes.length;
    if (p.bytes.length > this.pieceBytes) {
      e.damaged = e.damaged || `a piece held ${p.bytes.length} bytes, not ${this.pieceBytes} (run bpftrace with BPFTRACE_STRLEN=200)`;
    }
    if (e.cutAt !== undefined) {
      // Its cut mark came first: every piece of a cut record is full.
      if (p.bytes.length < this.pieceBytes) e.damaged = e.damaged || 'a piece of a cut record was short';
      if (e.next < e.cutAt && p.bytes.length >= this.pieceBytes) return [];   // more to come
      this.pending.delete(key);
      return [this.truncated(e, e.cutAt)];
    }
    if (p.bytes.length >= this.pieceBytes) return [];   // more to come
    this.pending.delete(key);
    if (e.damaged) return [this.incomplete(e, e.damaged)];
    this.stats.records++;
    this.stats.pids.add(e.pid);
    this.arrived(e.pid);
    return [{ type: 'record', pid: e.pid, tid: e.tid, id: e.id, text: stripEol(Buffer.concat(e.parts).toString('utf8')) }];
  }

  // A record being put together. lead: how many of its parts run from piece
  // 0 without a gap (undefined: all of them); only those say its level and
  // prefix. cutAt: its cut mark came before its pieces, naming how many.
  entry(p, now) {
    return { pid: p.pid, tid: p.tid, id: p.id, parts: [], bytes: 0, next: 0, damaged: null, seen: now, lead: undefined,
      cutAt: undefined };
  }

  cut(p, now) {
    const key = p.pid + ' ' + p.tid + ' ' + p.id;
    const e = this.pending.get(key);
    if (!e) {
      // No piece of it yet: its pieces may come after (see the top).
      const held = this.entry(p, now);
      held.cutAt = p.pieces;
      this.pending.set(key, held);
      return [];
    }
    this.pending.delete(key);
    return [this.truncated(e, p.pieces)];
  }

  // The mark of a record longer than the tracer reads, from what arrived of
  // it; none if its beginning was lost (its level and prefix would be some
  // other part's: a wrong mark is worse than a lost record, counted).
  truncated(e, pieces) {
    if (e.next !== pieces) e.damaged = e.damaged || 'pieces of the record were lost';
    const lead = Buffer.concat(e.parts.slice(0, e.lead === undefined ? e.parts.length : e.lead)).toString('utf8');
    if (!lead) return this.incomplete(e, e.damaged || 'its pieces were lost');
    this.stats.truncated++;
    this.stats.pids.add(e.pid);
    this.arrived(e.pid);
    return {
      type: 'truncated', pid: e.pid, tid: e.tid, id: e.id, level: levelOf(lead), bytesSeen: e.bytes,
      prefix: prefixOf(lead), complete: !e.damaged,
    };
  }

  whole(p) {
    this.stats.pids.add(p.pid);
    this.arrived(p.pid);
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

  // A record given up on: a cut one is marked with what came of it.
  unfinished(e) {
    if (e.cutAt !== undefined) return this.truncated(e, e.cutAt);
    return this.incomplete(e, e.damaged || 'the end of the record was lost');
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
        out.push(this.unfinished(e));
      }
    }
    return out;
  }

  // End of the tracer's output: whatever is still pending is given up on.
  finish() {
    const out = [];
    for (const e of this.pending.values()) out.push(this.unfinished(e));
    this.pending.clear();
    return out;
  }

  // Records lost: those the probes saw minus those that arrived (whole or
  // marked truncated). null when the tracer did not say how many it saw.
  lostRecords() {
    if (this.stats.fired === null) return null;
    const { fired, over, full, records, truncated } = this.stats;
    return Math.max(0, fired - (over || 0) - (full || 0) - records - truncated);
  }
}

module.exports = {
  Reassembler, parseItem, parseTextLine, stripEol, levelOf, prefixOf, PIECE_BYTES, MAX_PIECES,
};
