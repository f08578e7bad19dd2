'use strict';
// Names a JavaScript function from V8's heap: from a frame's function slot
// (a JSFunction, checked by its map's instance type) or from a
// SharedFunctionInfo captured earlier (checked again before a cached name
// is trusted: compaction moves objects), as
//   { name, inferred, file, line, column, kind, text, sfi, from }
//   name      the function's own name; for an anonymous one V8's inferred
//             name (`handlers.onTick`) with inferred: true, or '' (text
//             says "(anonymous)")
//   file      the script's name (a path, a file:// URL for ES modules,
//             node:internal/... for Node's own), null for V8's builtins
//   line, column  1-based, of the function's start (the '(' of its
//             parameters, where V8's --perf-basic-prof names put it)
//   kind      'function' | 'class constructor' | 'builtin'
//   from      where the name came from: 'scope-info' (the table in
//             scope-info.js), 'shared' (a name V8 keeps in the
//             SharedFunctionInfo itself), 'source' (read from the source
//             text: a V8 whose ScopeInfo layout nodetrace does not know)
// All text is made safe by names.js (bounded, controls escaped).
const { Heap } = require('./heap');
const { readString } = require('./strings');
const { ScriptReader, nameFromSource } = require('./script');
const { readScopeInfo } = require('./scope-info');
const { safeName, MAX_NAME, MAX_FILE } = require('./names');

const SOURCE_WINDOW = 200;
const CACHE_LIMIT = 65536;

class V8Namer {
  /**
   * @param {object} o { memory (lib/v8/memory.js), layout (metadata.layoutFrom) }
   */
  constructor({ memory, layout }) {
    if (!layout || layout.unsupported) throw new Error('V8Namer needs a supported layout');
    this.layout = layout;
    this.heap = new Heap(memory, layout);
    this.scripts = new ScriptReader(this.heap);
    this.cache = new Map();   // SFI address -> { key, result }
  }

  /** What the namer cannot do on this V8, in one line, or null. */
  limitation() {
    if (this.layout.scopeInfo) return null;
    return `V8 ${this.layout.versionText}'s ScopeInfo layout was not measured by nodetrace: function names are read from the source text, and unnamed where that fails`;
  }

  /** The name of the JSFunction in a tagged word (BigInt), or null if it is not one. */
  nameFunction(word) {
    const fn = this.heap.object(word);
    if (!fn || !this.heap.isJSFunction(fn)) return null;
    const sfiWord = this.heap.word(fn.address + this.layout.jsFunction.shared);
    const result = this.nameSfi(sfiWord);
    if (!result) return null;
    if (fn.type === this.layout.types.jsFunctionLast && result.kind === 'function') {
      return { ...result, kind: 'class constructor' };
    }
    return result;
  }

  /** The name of the SharedFunctionInfo in a tagged word (BigInt), or null. */
  nameSfi(word) {
    const sfi = this.heap.object(word);
    if (!sfi || sfi.type !== this.layout.types.sharedFunctionInfo) return null;
    const L = this.layout.sfi;
    const nosWord = this.heap.word(sfi.address + L.nameOrScopeInfo);
    const scriptWord = this.heap.word(sfi.address + L.script);
    if (nosWord === null || scriptWord === null) return null;
    const key = `${nosWord}:${scriptWord}`;
    const hit = this.cache.get(sfi.address);
    if (hit && hit.key === key) return hit.result;
    const result = this.describe(sfi, nosWord, scriptWord);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(sfi.address, { key, result });
    return result;
  }

  describe(sfi, nosWord, scriptWord) {
    const { heap, layout } = this;
    const nos = heap.object(nosWord);
    const scriptObj = heap.object(scriptWord);
    const script = scriptObj && scriptObj.type === layout.types.script ? this.scripts.script(scriptObj) : null;
    let name = null;
    let inferred = false;
    let start = null;
    let from = 'shared';
    let nameTruncated = false;
    const text = (o) => {
      const r = o ? readString(heap, o, { maxChars: MAX_NAME }) : null;
      if (r && r.truncated) nameTruncated = true;
      return r ? r.text : null;
    };
    if (nos && heap.isString(nos)) {
      name = text(nos);
      start = this.uncompiledStart(sfi);
    } else if (nos && nos.type === layout.types.scopeInfo) {
      const scope = layout.scopeInfo ? readScopeInfo(heap, nos, layout.scopeInfo) : null;
      if (scope) {
        from = 'scope-info';
        start = scope.start;
        name = scope.nameObject ? text(scope.nameObject) : '';
        if (name === '' && scope.inferredObject) {
          const guess = text(scope.inferredObject);
          if (guess) { name = guess; inferred = true; }
        }
        if (name === null) name = '';
      } else if (script) {
        // No layout for this V8: the name from the source text. Its
        // position still comes from the ScopeInfo: the first two Smis
        // that make a plausible [start, end) of this function whose text
        // begins a function.
        const found = this.sourceName(nos, sfi, script);
        if (found) { name = found.name; start = found.start; from = 'source'; }
      }
    } else {
      return null;
    }
    const where = script && start !== null ? this.scripts.lineColumn(script, start) : null;
    const file = script && script.name !== null ? safeName(script.name, { max: MAX_FILE, truncated: script.nameTruncated }) : null;
    const result = {
      name: name === null ? '' : safeName(name, { truncated: nameTruncated }),
      inferred,
      file,
      line: where ? where.line : null,
      column: where ? where.column : null,
      kind: script ? 'function' : 'builtin',
      sfi: sfi.address + 1,
      from,
    };
    result.text = frameText(result);
    return result;
  }

  // A function that was never compiled (or whose bytecode V8 flushed) keeps
  // its positions in UncompiledData, in function_data where the metadata
  // says where that is.
  uncompiledStart(sfi) {
    const { heap, layout } = this;
    if (layout.sfi.functionData === undefined || layout.uncompiledData.start === undefined) return null;
    const data = heap.field(sfi.address, layout.sfi.functionData);
    if (!data || !layout.types.uncompiledData.includes(data.type)) return null;
    const b = heap.read(data.address + layout.uncompiledData.start, 4);
    return b ? b.readInt32LE(0) : null;
  }

  // The fallback for a V8 whose ScopeInfo layout is not in the table.
  sourceName(scope, sfi, script) {
    const { heap, layout } = this;
    const tokenBytes = layout.sfi.functionTokenOffset === undefined ? null : heap.read(sfi.address + layout.sfi.functionTokenOffset, 2);
    const tokenOffset = tokenBytes ? tokenBytes.readUInt16LE(0) : 0;
    for (let k = 2; k < 24; k++) {
      const s = Heap.smi(heap.word(scope.address + 8 * k));
      const e = Heap.smi(heap.word(scope.address + 8 * (k + 1)));
      if (s === null || e === null || s < 0 || e <= s) continue;
      const token = s - (tokenOffset === 0xffff ? 0 : tokenOffset);
      if (token < 0) continue;
      const at = this.scripts.text(script, token, SOURCE_WINDOW);
      const opening = this.scripts.text(script, s, 1);
      if (!at || !opening) continue;
      const name = nameFromSource(at);
      if (name !== null && /[(a-zA-Z_$\p{ID_Start}]/u.test(opening)) return { name, start: s };
    }
    return null;
  }
}

/** "name (file:line:column)", as V8's stack traces print a frame. Pure. */
function frameText({ name, file, line, column, kind }) {
  const shown = name || '(anonymous)';
  if (kind === 'builtin' || file === null) return `${shown} (native)`;
  if (line === null) return `${shown} (${file})`;
  return `${shown} (${file}:${line}:${column})`;
}

module.exports = { V8Namer, frameText };
