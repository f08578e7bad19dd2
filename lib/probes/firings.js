'use strict';
// The firings d-scripts/usdt-probes.bt prints (-f json), read back into one
// record per firing, and rendered as a line or as JSON. Pure.
//
// A firing comes as an F line (its integer arguments) and one S line per
// string argument, all printed by one run of its clause, so on one CPU, in
// that order; they are joined by clause, thread and time. A firing whose S
// lines never come (the tracer's buffer overflowed: bpftrace says how many
// events it lost) is shown with those arguments missing (null), and counted.
//
// Everything after the F or S line's fixed fields is the target's: a
// string is the bytes the process passed, read as UTF-8 (a string cut at
// the limit may end inside a character), shown escaped and bounded.
const { stringBytes: bytesOf } = require('../tracer/output-formats');
const { safeText, safeJson } = require('../terminal-safe');
const { jsonInteger } = require('../render/json');
const { STRING } = require('./program');
// A firing's time as the HTTP lines say theirs: wall clock from the kernel's (CLOCK_MONOTONIC) ns.
const { monoToWallMs } = require('../clock');
const { clockTime } = require('../render/text');

const F_LINE = /^F (\d{1,6}) (\d{1,10}) (\d{1,10}) (\d{1,20})((?: -?\d{1,20})*)\n$/;
const S_LINE = /^S (\d{1,6}) (\d{1,10}) (\d{1,10}) (\d{1,20}) (\d{1,2}) /;
// A firing waits this many more lines of its thread for its strings.
const MAX_PENDING = 4096;

class FiringReader {
  /**
   * @param {Array} probes the plan's clauses (lib/probes/program.js details.probes)
   * @param {object} o { stringBytes: the program's string limit; read: how many arguments of each probe it reads }
   */
  constructor(probes, { stringBytes, read = probes.map((p) => p.kinds.length) }) {
    this.probes = probes;
    this.read = read;
    this.stringBytes = stringBytes;
    this.pending = new Map();   // `${k} ${tid} ${ns}` -> firing still missing strings
    this.stats = { firings: 0, incomplete: 0, lostEvents: 0, malformed: 0, strays: 0 };
  }

  /** One item of the tracer's output -> the firings it completes. */
  push(item) {
    if (item && item.type === 'lost_events') {
      this.stats.lostEvents += Number(item.data && item.data.events) || 0;
      return [];
    }
    if (!item || item.type !== 'printf' || typeof item.data !== 'string') return [];
    const bytes = bytesOf(item.data);
    const head = bytes.subarray(0, 80).toString('latin1');
    if (head.startsWith('F ')) return this.fLine(bytes.toString('latin1'));
    if (head.startsWith('S ')) return this.sLine(bytes, head);
    return [];
  }

  fLine(text) {
    const m = F_LINE.exec(text);
    const probe = m && this.probes[Number(m[1]) - 1];
    if (!probe) { this.stats.malformed++; return []; }
    const k = Number(m[1]) - 1;
    const n = this.read[k];
    const ints = m[5].trim() ? m[5].trim().split(' ') : [];
    const intPlaces = [];
    const strings = [];
    for (let i = 0; i < n; i++) (STRING.has(probe.kinds[i]) ? strings : intPlaces).push(i);
    if (ints.length !== intPlaces.length) { this.stats.malformed++; return []; }
    const args = new Array(n).fill(null);
    intPlaces.forEach((i, j) => { args[i] = BigInt(ints[j]); });
    const firing = { probe, pid: Number(m[2]), tid: Number(m[3]), ns: BigInt(m[4]), args, cut: [],
      missing: new Set(strings), unread: probe.kinds.length - n };
    const out = this.flushThread(firing.tid);
    if (!strings.length) return [...out, this.done(firing)];
    this.pending.set(`${k} ${firing.tid} ${firing.ns}`, firing);
    if (this.pending.size > MAX_PENDING) out.push(...this.flushAll());
    return out;
  }

  sLine(bytes, head) {
    const m = S_LINE.exec(head);
    if (!m) { this.stats.malformed++; return []; }
    const k = Number(m[1]) - 1;
    const firing = this.pending.get(`${k} ${m[3]} ${m[4]}`);
    const place = Number(m[5]);
    if (!firing || !firing.missing.has(place)) { this.stats.strays++; return []; }
    // The string: every byte after the head, but the newline printf ends it with.
    const value = bytes.subarray(m[0].length, bytes.length - (bytes[bytes.length - 1] === 10 ? 1 : 0));
    firing.args[place] = value.toString('utf8');
    // At the limit, it may have been longer (str() copies limit - 1 bytes and a NUL).
    if (value.length >= this.stringBytes - 1) firing.cut.push(place);
    firing.missing.delete(place);
    if (firing.missing.size) return [];
    this.pending.delete(`${k} ${m[3]} ${m[4]}`);
    return [this.done(firing)];
  }

  // A thread's next firing: any of its firings still waiting lost its strings.
  flushThread(tid) {
    const out = [];
    for (const [key, f] of this.pending) {
      if (f.tid !== tid) continue;
      this.pending.delete(key);
      out.push(this.done(f));
    }
    return out;
  }

  flushAll() {
    const out = [...this.pending.values()].map((f) => this.done(f));
    this.pending.clear();
    return out;
  }

  done(f) {
    this.stats.firings++;
    if (f.missing.size) this.stats.incomplete++;
    return { probe: f.probe, pid: f.pid, tid: f.tid, ns: f.ns, args: f.args, cut: f.cut, incomplete: f.missing.size > 0,
      unread: f.unread };
  }

  end() {
    return this.flushAll();
  }
}

// A JSON argument as the value it is, or null when it is not JSON (cut at the limit).
function jsonValue(text) {
  try { return JSON.parse(text); } catch { return undefined; }
}

// The most of one string argument a line shows; --json has all the tracer read.
const LINE_STRING_CHARS = 400;

function argumentText(f, i) {
  const v = f.args[i];
  if (v === null) return '?';
  if (typeof v === 'bigint') return v.toString();
  const cut = f.cut.includes(i);
  if (f.probe.kinds[i] === 'json' && !cut && jsonValue(v) !== undefined) return v.length > LINE_STRING_CHARS ? `${v.slice(0, LINE_STRING_CHARS)}…` : v;
  const shown = v.length > LINE_STRING_CHARS ? `${v.slice(0, LINE_STRING_CHARS)}` : v;
  return JSON.stringify(shown) + (cut || shown !== v ? '…' : '');
}

function header(probeWidth = 0) {
  return `${'TIME'.padEnd(12)} ${'PID'.padStart(7)}  ${'PROBE'.padEnd(probeWidth)}  ARGUMENTS\n`;
}

function probeName(p) {
  return `${p.provider}:${p.name}`;
}

/** One line: time, PID, probe (padded to probeWidth), its arguments (strings quoted, JSON as JSON; ? where one never came). */
function renderLine(f, { wallMinusMonoNs, probeWidth = 0 } = {}) {
  const args = f.args.map((_, i) => argumentText(f, i));
  if (f.unread) args.push(`(${f.unread} more not read)`);
  return safeText(`${clockTime(monoToWallMs(f.ns, wallMinusMonoNs)).padEnd(12)} ${String(f.pid).padStart(7)}  ${probeName(f.probe).padEnd(probeWidth)}  ${args.join(' ')}`, { oneLine: true }) + '\n';
}

/** One JSON object a line. */
function renderJsonLine(f, { wallMinusMonoNs } = {}) {
  const args = f.args.map((v, i) => {
    if (v === null) return null;
    if (typeof v === 'bigint') return jsonInteger(v);
    if (f.probe.kinds[i] === 'json' && !f.cut.includes(i)) {
      const parsed = jsonValue(v);
      if (parsed !== undefined) return parsed;
    }
    return v;
  });
  return safeJson({
    time: new Date(monoToWallMs(f.ns, wallMinusMonoNs)).toISOString(),
    pid: f.pid,
    tid: f.tid,
    provider: f.probe.provider,
    probe: f.probe.name,
    arguments: args,
    ...(f.cut.length ? { cut: f.cut } : {}),
    ...(f.incomplete ? { incomplete: true } : {}),
    ...(f.unread ? { unread: f.unread } : {}),
  }, 0) + '\n';
}

module.exports = { FiringReader, renderLine, renderJsonLine, header, probeName, LINE_STRING_CHARS };
