'use strict';
// A function's Script: its file name, and a source position turned into a
// line and column (1-based, as V8's stack traces print them), from the
// script's line ends when V8 computed them, or else by counting line
// terminators in its source text (kept per script, so a second position
// costs nothing). Also the source text near a position, and a function's
// name read from it (the fallback where a ScopeInfo's layout is unknown).
const { Heap } = require('./heap');
const { readString } = require('./strings');

// Source is read CHUNK characters at a time, and at most MAX_SOURCE of it
// per script: a position further in gets no line.
const CHUNK = 64 * 1024;
const MAX_SOURCE = 16 * 1024 * 1024;
const MAX_LINE_ENDS = 4 * 1024 * 1024;

class ScriptReader {
  constructor(heap) {
    this.heap = heap;
    this.cache = new Map();   // script address -> { key, info }
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
      ends: [],            // line terminator positions found in them
      pendingCR: null,
    };
    if (this.cache.size > 1024) this.cache.clear();
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

  fromSource(script, position) {
    if (!script.source || position > MAX_SOURCE) return null;
    while (script.scanned < position) {
      const chunk = readString(this.heap, script.source, { start: script.scanned, maxChars: CHUNK });
      if (!chunk || chunk.text.length === 0) break;
      const text = chunk.text;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        const at = script.scanned + i;
        // V8's line terminators: \n, \r not followed by \n, U+2028, U+2029
        // (a \r that ends a chunk waits for the next one's first character).
        if (script.pendingCR !== null) {
          if (c !== 10) script.ends.push(script.pendingCR);
          script.pendingCR = null;
        }
        if (c === 10 || c === 0x2028 || c === 0x2029) script.ends.push(at);
        else if (c === 13) script.pendingCR = at;
      }
      script.scanned += text.length;
      if (script.scanned >= chunk.length) break;
    }
    if (position > script.scanned) return null;
    let lo = 0;
    let hi = script.ends.length - 1;
    let found = script.ends.length;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (script.ends[mid] >= position) { found = mid; hi = mid - 1; } else lo = mid + 1;
    }
    const lineStart = found === 0 ? 0 : script.ends[found - 1] + 1;
    return { line: found + 1, column: position - lineStart + 1 };
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

module.exports = { ScriptReader, nameFromSource, MAX_SOURCE };
