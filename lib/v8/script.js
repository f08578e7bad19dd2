'use strict';
// A function's Script: its file name, and a source position turned into a
// line and column (1-based, as V8's stack traces print them), from the
// script's line ends when V8 computed them (searched in place), or else by
// counting line terminators in its source text. The source is another
// user's: it is scanned once, at most MAX_SCRIPT_SOURCE_CHARS of a script
// and SCRIPT_SCAN_BUDGET_CHARS in all, and what is kept is one checkpoint
// per LINE_INDEX_STRIDE characters (the lines before it), never one entry
// per line: a position's line is counted again from its checkpoint. (One
// entry per line took 1.3 GB for 4 scripts of 16 M lines.) Also the source
// text near a position, and a function's name read from it (the fallback
// where a ScopeInfo's layout is unknown). The checkpoints are charged to
// the run's memory (lib/memory-budget.js) and given back when the scripts
// are dropped (the cache cleared, close()).
const { Heap } = require('./heap');
const { readString } = require('./strings');
const { LIMITS, overLimit } = require('../limits');
const { grouped } = require('../render/text');
const { runBudget } = require('../memory-budget');

const { MAX_SCRIPT_SOURCE_CHARS: MAX_SOURCE, SCRIPT_SCAN_BUDGET_CHARS, LINE_INDEX_STRIDE: STRIDE,
  MAX_LINE_ENDS } = LIMITS;
const MAX_SCRIPTS = 1024;
// What one checkpoint holds: an object of three fields (a map, its
// properties and elements, three values: 48 bytes without pointer
// compression, which no Node build has) and its slot in the array.
const CHECKPOINT_BYTES = 56;

// V8's line terminators: \n, \r not followed by \n, U+2028, U+2029.
const LF = 10;
const CR = 13;
const isBreak = (c) => c === LF || c === 0x2028 || c === 0x2029;

/**
 * Pure: the line terminators of `text` (whose first character is at
 * `from`), up to `until` (exclusive), given the state before it: { lines
 * (terminators so far), lastEnd (the last one's position, or -1), cr (the
 * position of a \r just before `from`, or null) } -> the state after. A
 * \r's fate waits for the next character.
 */
function countBreaks(text, from, until, state) {
  let { lines, lastEnd, cr } = state;
  const n = Math.min(text.length, until - from);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (cr !== null) {
      if (c !== LF) { lines++; lastEnd = cr; }
      cr = null;
    }
    if (isBreak(c)) { lines++; lastEnd = from + i; } else if (c === CR) cr = from + i;
  }
  return { lines, lastEnd, cr };
}

class ScriptReader {
  /** @param {object} [o] { budget: the run's memory the line indexes are charged to } */
  constructor(heap, { budget = runBudget() } = {}) {
    this.heap = heap;
    this.cache = new Map();   // script address -> { key, info }
    this.scanBudget = SCRIPT_SCAN_BUDGET_CHARS;
    this.budget = budget;
    this.charged = 0;         // bytes of the cached scripts' checkpoints
  }

  /** Drops every script kept, giving their memory back. Can be used again after. */
  close() {
    this.cache.clear();
    this.budget.release(this.charged);
    this.charged = 0;
  }

  /** { name (raw text or null), lineAt(pos) } for a Script object (heap.object()). */
  script(obj) {
    const { heap } = this;
    const L = heap.layout.script;
    const nameWord = heap.word(obj.address + L.name);
    const sourceWord = heap.word(obj.address + L.source);
    const key = `${nameWord}:${sourceWord}`;
    const hit = this.cache.get(obj.address);
    if (hit && hit.key === key) return hit.info;
    const nameObj = heap.object(nameWord);
    const name = nameObj && heap.isString(nameObj) ? readString(heap, nameObj, { maxChars: 4096 }) : null;
    const source = heap.object(sourceWord);
    const info = {
      name: name ? name.text : null,
      nameTruncated: Boolean(name && name.truncated),
      source: source && heap.isString(source) ? source : null,
      address: obj.address,
      scanned: 0,          // source characters scanned for line ends so far
      // The state at every STRIDE characters scanned: checkpoints[k] is the
      // state before position k * STRIDE (countBreaks' state).
      checkpoints: [{ lines: 0, lastEnd: -1, cr: null }],
      state: { lines: 0, lastEnd: -1, cr: null },
    };
    if (this.cache.size >= MAX_SCRIPTS) this.close();
    this.cache.set(obj.address, { key, info });
    return info;
  }

  /** { line, column } (1-based) of a source position, or null. */
  lineColumn(script, position) {
    if (position === null || position === undefined || position < 0) return null;
    const fromV8 = this.fromLineEnds(script, position);
    if (fromV8) return fromV8;
    return this.fromSource(script, position);
  }

  fromLineEnds(script, position) {
    const { heap } = this;
    const L = heap.layout;
    const ends = heap.field(script.address, L.script.lineEnds);
    if (!ends || ends.type !== L.types.fixedArray) return null;
    const count = Heap.smi(heap.word(ends.address + L.fixedArray.length));
    if (count === null || count <= 0 || count > MAX_LINE_ENDS) return null;
    const at = (i) => Heap.smi(heap.word(ends.address + L.fixedArray.data + 8 * i));
    let lo = 0;
    let hi = count - 1;
    let found = count;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = at(mid);
      if (v === null) return null;
      if (v >= position) { found = mid; hi = mid - 1; } else lo = mid + 1;
    }
    if (found === count) return null;
    const lineStart = found === 0 ? 0 : at(found - 1) + 1;
    if (Number.isNaN(lineStart) || lineStart > position) return null;
    return { line: found + 1, column: position - lineStart + 1 };
  }

  // Scans the source (STRIDE characters a read) until `position` has been
  // read, keeping a checkpoint at each STRIDE; false where it cannot be.
  scanTo(script, position) {
    while (script.scanned <= position) {
      if (this.scanBudget <= 0) {
        overLimit('V8 scripts', `${grouped(SCRIPT_SCAN_BUDGET_CHARS)} characters of source were scanned for lines: frames further into unscanned scripts show no line`);
        return false;
      }
      // A chunk adds one checkpoint at most: charged before it is read.
      if (!this.budget.charge(CHECKPOINT_BYTES)) {
        overLimit(this.what(script), `lines past its first ${grouped(script.scanned)} characters are not counted: ${this.budget.refusal()}`,
          { key: `script lines ${script.address}` });
        return false;
      }
      const chunk = readString(this.heap, script.source, { start: script.scanned, maxChars: STRIDE });
      if (!chunk || chunk.text.length === 0) {
        this.budget.release(CHECKPOINT_BYTES);
        return false;
      }
      this.scanBudget -= chunk.text.length;
      script.state = countBreaks(chunk.text, script.scanned, Infinity, script.state);
      script.scanned += chunk.text.length;
      if (script.scanned % STRIDE === 0) {
        script.checkpoints.push(script.state);
        this.charged += CHECKPOINT_BYTES;
      } else this.budget.release(CHECKPOINT_BYTES);
      if (script.scanned >= chunk.length) return script.scanned > position;
    }
    return true;
  }

  fromSource(script, position) {
    if (!script.source) return null;
    if (position >= MAX_SOURCE) {
      overLimit(this.what(script), `lines past its first ${grouped(MAX_SOURCE)} characters are not counted: frames there show no line`);
      return null;
    }
    if (!this.scanTo(script, position)) return null;
    // The lines before `position`: from the checkpoint at or below it, the
    // rest of its stride read again (and one character more: a \r just
    // before `position` ends a line unless a \n is at `position`).
    const k = Math.floor(position / STRIDE);
    const from = k * STRIDE;
    const text = readString(this.heap, script.source, { start: from, maxChars: position - from + 1 });
    if (!text) return null;
    let state = countBreaks(text.text, from, position, script.checkpoints[k]);
    if (state.cr !== null && text.text.charCodeAt(position - from) !== LF) state = { lines: state.lines + 1,
      lastEnd: state.cr, cr: null };
    return { line: state.lines + 1, column: position - (state.lastEnd + 1) + 1 };
  }

  // A script's name, as said in a line (its address where it has none).
  what(script) {
    return script.name !== null ? `script ${script.name}` : `the script at 0x${script.address.toString(16)}`;
  }

  /** Up to `count` characters of source from `position`, or null. */
  text(script, position, count) {
    if (!script.source || position === null || position < 0) return null;
    const r = readString(this.heap, script.source, { start: position, maxChars: count });
    return r ? r.text : null;
  }
}

const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*/u;
const KEYWORDS_BEFORE_NAME = new Set(['async', 'get', 'set', 'static']);

/**
 * Pure: a function's own name from the source text at its function token
 * (`function f(`, `async function* f(`, a method `f(`, `get f(`, `static
 * async f(`), or '' for one written without a name (an arrow, `function (`,
 * a computed method name), or null when the text is not a function's start
 * that nodetrace can read (a class constructor: its name is the class's,
 * not in this text).
 */
function nameFromSource(text) {
  if (typeof text !== 'string') return null;
  let s = text;
  const skip = () => { s = s.replace(/^\s+/, ''); };
  skip();
  if (/^\(|^\[/.test(s)) return '';            // arrow or computed name
  for (let i = 0; i < 4; i++) {
    const m = IDENTIFIER.exec(s);
    if (!m) return s.startsWith('*') ? nameFromSource(s.slice(1)) : null;
    const word = m[0];
    const rest = s.slice(word.length).replace(/^\s+/, '');
    if (word === 'function') {
      s = rest.replace(/^\*\s*/, '');
      if (s.startsWith('(')) return '';
      const n = IDENTIFIER.exec(s);
      return n && s.slice(n[0].length).replace(/^\s+/, '').startsWith('(') ? n[0] : null;
    }
    if (rest.startsWith('=>')) return '';      // x => ...
    if (rest.startsWith('(')) return word === 'constructor' ? null : word;
    if (KEYWORDS_BEFORE_NAME.has(word) || word === 'async') { s = rest.replace(/^\*\s*/, ''); continue; }
    return null;
  }
  return null;
}

module.exports = { ScriptReader, nameFromSource, countBreaks, MAX_SOURCE, CHECKPOINT_BYTES };
