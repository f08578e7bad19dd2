'use strict';
// How a tracer's stdout is cut into items, by the plan's output format. Pure:
// Buffers in, items out. Every splitter has push(buffer) -> items and
// end() -> items.
//
//   'text'     lines (strings), as the tracer printed them.
//   'json'     bpftrace -f json: one object per line ({type, data}); a line
//              that is not JSON (bpftrace prints a few plain lines even in
//              this mode) comes as { type: 'text', line }. The point of this
//              format: text a traced process controls (a log record) crosses
//              it JSON-escaped, so it can never pass for another line.
//   'records'  log-snoop.d's length-prefixed records, `R PID TID CUT LEN ` then
//              exactly LEN bytes of text, then a newline, as
//              { type: 'record', pid, tid, cut, bytes }; any other line as a string.
//              The length, not a separator, ends a record: its text may hold
//              anything.
//   'wire'     http-wire.d's length-prefixed pieces of calls, `W KIND TID NS
//              FD RET OFF ASKED LEN ` then exactly LEN bytes, then a newline,
//              as { type: 'wire', kind, tid, ns, fd, ret, off, asked, bytes }
//              (numbers as decimal strings); any other line as a string.
// Beyond this, a line without its newline is cut off and passed on as it is
// (a runaway tracer must not grow nodetrace's memory without bound).
const MAX_LINE_BYTES = 1 << 20;

class LineCutter {
  constructor() {
    this.parts = [];
    this.size = 0;
  }

  // -> complete lines (Buffers, without their newline)
  push(buf) {
    const lines = [];
    let start = 0;
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
      lines.push(this.take(buf.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < buf.length) this.keep(buf.subarray(start), lines);
    return lines;
  }

  keep(piece, lines) {
    this.parts.push(piece);
    this.size += piece.length;
    if (this.size > MAX_LINE_BYTES) lines.push(this.take(Buffer.alloc(0)));
  }

  take(tail) {
    if (!this.parts.length) return tail;
    const line = Buffer.concat([...this.parts, tail]);
    this.parts = [];
    this.size = 0;
    return line;
  }

  end() {
    return this.size ? [this.take(Buffer.alloc(0))] : [];
  }
}

class TextSplitter {
  constructor() {
    this.cutter = new LineCutter();
  }

  push(buf) {
    return this.cutter.push(buf).map((l) => l.toString('utf8'));
  }

  end() {
    return this.cutter.end().map((l) => l.toString('utf8'));
  }
}

// bpftrace (every version to date) escapes a byte of 0x80 or more in a JSON
// string as "\u" and the sign-extended value of a C char: \uffffffe2 for
// 0xe2. Those become the byte again; every other escape is standard JSON.
const BPFTRACE_ESCAPE = /\\(?:uffffff([0-9a-f]{2})|u[0-9a-f]{4}|[^u])/g;

function decodeBpftraceJson(line) {
  // Strings then hold one character per byte (stringBytes turns them back).
  return JSON.parse(line.replace(BPFTRACE_ESCAPE, (all, byte) => (byte === undefined ? all : `\\u00${byte}`)));
}

// A string from bpftrace's JSON as the bytes the tracer printed: every
// character is one byte (ASCII as itself, 0x80 and up escaped), so latin1.
function stringBytes(s) {
  return Buffer.from(s, 'latin1');
}

class JsonSplitter {
  constructor() {
    this.cutter = new LineCutter();
  }

  push(buf) {
    return this.cutter.push(buf).map(parseJsonLine);
  }

  end() {
    return this.cutter.end().map(parseJsonLine);
  }
}

function parseJsonLine(buf) {
  const line = buf.toString('latin1');
  if (line.startsWith('{')) {
    try {
      const value = decodeBpftraceJson(line);
      if (value && typeof value === 'object' && typeof value.type === 'string') return value;
    } catch { /* not JSON: a plain line */ }
  }
  return { type: 'text', line: buf.toString('utf8') };
}

// The text of a bpftrace JSON item as a person reads it: printf's data
// without its newline, or a plain line. null for anything else.
function itemText(item) {
  if (typeof item === 'string') return item;
  if (item.type === 'printf' && typeof item.data === 'string') return stringBytes(item.data).toString('utf8').replace(/\n$/, '');
  if (item.type === 'text') return item.line;
  return null;
}

// A length-prefixed record: its head (a regular expression over at most
// maxHead bytes), the group that holds its length, and what it becomes.
const SNOOP_RECORD = {
  head: /^R (\d{1,10}) (\d{1,10}) ([01]) (\d{1,9}) /,
  // The longest head: "R " + 3 fields of 10 digits, 1 flag, spaces.
  maxHead: 2 + 10 + 1 + 10 + 1 + 1 + 1 + 9 + 1,
  length: 4,
  item: (h, bytes) => ({ type: 'record', pid: Number(h[1]), tid: Number(h[2]), cut: h[3] === '1', bytes }),
};
const WIRE_EVENT = {
  head: /^W (\d{1,3}) (\d{1,10}) (\d{1,20}) (-?\d{1,20}) (-?\d{1,20}) (\d{1,10}) (\d{1,5}) (\d{1,5}) /,
  // "W " + KIND (3 digits), TID (10), NS (20), FD, RET (21), OFF (10), ASKED, LEN (5), spaces.
  maxHead: 2 + 3 + 1 + 10 + 1 + 20 + 1 + 21 + 1 + 21 + 1 + 10 + 1 + 5 + 1 + 5 + 1,
  length: 8,
  item: (h, bytes) => ({ type: 'wire', kind: h[1], tid: h[2], ns: h[3], fd: h[4], ret: h[5], off: h[6], asked: h[7], bytes }),
};
const MAX_RECORD_BYTES = 1 << 20;

class RecordSplitter {
  constructor(format = SNOOP_RECORD) {
    this.format = format;
    this.buf = Buffer.alloc(0);
  }

  push(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out = [];
    const f = this.format;
    let pos = 0;
    for (;;) {
      const head = f.head.exec(this.buf.subarray(pos, pos + f.maxHead).toString('latin1'));
      if (head && Number(head[f.length]) <= MAX_RECORD_BYTES) {
        const start = pos + head[0].length;
        const end = start + Number(head[f.length]);
        if (this.buf.length < end + 1) break;   // the rest of the record is still to come
        if (this.buf[end] !== 10) {
          // Not what the script prints: say so rather than guess where it ends.
          out.push({ type: 'garbled', line: this.buf.subarray(pos, end + 1).toString('utf8') });
        } else {
          out.push(f.item(head, this.buf.subarray(start, end)));
        }
        pos = end + 1;
        continue;
      }
      // Any other line (a record's head still arriving has no newline after it yet).
      const nl = this.buf.indexOf(10, pos);
      if (nl < 0) break;
      out.push(this.buf.subarray(pos, nl).toString('utf8'));
      pos = nl + 1;
    }
    this.buf = this.buf.subarray(pos);
    if (this.buf.length > MAX_RECORD_BYTES + f.maxHead) {
      out.push({ type: 'garbled', line: this.buf.subarray(0, 200).toString('utf8') });
      this.buf = Buffer.alloc(0);
    }
    return out;
  }

  end() {
    const rest = this.buf;
    this.buf = Buffer.alloc(0);
    return rest.length ? [{ type: 'garbled', line: rest.toString('utf8') }] : [];
  }
}

const SPLITTERS = {
  text: () => new TextSplitter(),
  json: () => new JsonSplitter(),
  records: () => new RecordSplitter(SNOOP_RECORD),
  wire: () => new RecordSplitter(WIRE_EVENT),
};

// The protocol's two markers (ARCHITECTURE.md). Every program prints a line
// ending with READY_MARKER from BEGIN, and END_MARKER alone on a line in
// END, after which come only the maps (bpftrace prints them after END; the D
// scripts print the marker first in END, then printa).
const READY_MARKER = 'Hit Ctrl-C to end.';
const END_MARKER = 'Tracing ended.';
// A program with a window (its `@template WINDOW:` clause, run on
// nodetrace's second signal: lib/tracer/capabilities.js windowSignal)
// prints END_MARKER and its maps from that clause while its probes are
// still attached, then this line: its report is complete, before bpftrace
// detaches anything.
const REPORT_MARKER = 'Report printed.';
// ... and prints this line from the same clause when nodetrace's first
// signal opens the window: counting has started. bpftrace 0.22+ runs the
// clause up to its poll loop's 100 ms after the signal (measured 100.5 ms
// on 0.23.2 here, each of 4 signals): what the target did between the
// signal and this line was not counted, so the trace starts at the line.
const WINDOW_MARKER = 'Window opened.';
// A batching program (log-snoop.bt, log-snoop-whole.bt, http-batched.bt,
// http-wire.bt: two sets of maps taking turns, @phase naming the one its
// probes write) prints this once SIGURG has stopped its probes and both
// sets are printed: nothing is left to read, and bpftrace can be ended
// without dropping what it had not read (plan.quiesce).
const QUIET_MARKER = 'Tracing stopped.';

/**
 * A finished trace's lines in their two parts: `during`, what the program
 * printed while tracing (its events, without its ready line), and `maps`,
 * the text after the END marker. Without the marker (a tracer that died
 * before END), both are everything it printed: what can be read is read.
 * Pure.
 */
function splitAtEndMarker(lines) {
  const end = lines.indexOf(END_MARKER);
  const before = end < 0 ? lines : lines.slice(0, end);
  const ready = before.findIndex((l) => l.endsWith(READY_MARKER));
  const during = ready < 0 ? before : [...before.slice(0, ready), ...before.slice(ready + 1)];
  const after = end < 0 ? lines : lines.slice(end + 1);
  return { during, maps: after.length ? after.join('\n') + '\n' : '' };
}

function splitterFor(format = 'text') {
  const make = SPLITTERS[format];
  if (!make) throw new Error(`no such output format: ${format}`);
  return make();
}

module.exports = {
  splitterFor, itemText, stringBytes, decodeBpftraceJson, splitAtEndMarker, MAX_LINE_BYTES, READY_MARKER, END_MARKER,
  REPORT_MARKER, WINDOW_MARKER, QUIET_MARKER,
};
