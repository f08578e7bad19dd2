'use strict';
// Names a JavaScript function from V8's heap: from a frame's function slot
// (a JSFunction, checked by its map's instance type) or from a
// SharedFunctionInfo captured earlier (checked again before a cached name
// is trusted: compaction moves objects), as
//   { name, inferred, file, line, column, kind, text, sfi, from }
//   name      the function's own name; for an anonymous one V8's inferred
//             name (`handlers.onTick`) with inferred: true, or '' (text
//             says "(anonymous)"); null when it could not be read (text
//             says "(unknown)"), never a guess
//   file      the script's name (a path, a file:// URL for ES modules,
//             node:internal/... for Node's own), null for V8's builtins
//   line, column  1-based, of the function's start (the '(' of its
//             parameters, where V8's --perf-basic-prof names put it)
//   kind      'function' | 'class constructor' | 'builtin'
//   from      where the name came from: 'scope-info' (the table in
//             scope-info.js), 'shared' (a name V8 keeps in the
//             SharedFunctionInfo itself), 'source' (read from the source
//             text: a V8 whose ScopeInfo layout nodetrace does not know)
//   sourceMapUrl  with `sourceMapUrls`: the script's source map reference
//             (the last line of its source, `//# sourceMappingURL=URL`),
//             null for none; absent where its file name is not plain
//             (lib/source-maps.js reads the map)
// All text is made safe by names.js (bounded, controls escaped).
const { Heap } = require('./heap');
const { readString } = require('./strings');
const { ScriptReader, nameFromSource } = require('./script');
const { readScopeInfo } = require('./scope-info');
const { safeName, MAX_NAME, MAX_FILE } = require('./names');
const { sourceMappingUrlIn } = require('../source-maps');
const { LIMITS } = require('../limits');

const SOURCE_WINDOW = 400;
const MAX_SCOPE_SLOTS = 4096;
const CACHE_LIMIT = 65536;

class V8Namer {
  /**
   * @param {object} o { memory (lib/v8/memory.js), layout (metadata.layoutFrom),
   *   sourceMapUrls: each result also says its script's source map reference }
   */
  constructor({ memory, layout, sourceMapUrls = false }) {
    if (!layout || layout.unsupported) throw new Error('V8Namer needs a supported layout');
    this.layout = layout;
    this.heap = new Heap(memory, layout);
    this.scripts = new ScriptReader(this.heap);
    this.sourceMapUrls = sourceMapUrls;
    this.cache = new Map();   // SFI address -> { key, result }
  }

  /** Gives back the run's memory its scripts' line indexes hold. */
  close() {
    this.scripts.close();
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
    const file = script && script.name !== null
      ? safeName(script.name, { max: MAX_FILE, truncated: script.nameTruncated }) : null;
    const result = {
      name: name === null ? null : safeName(name, { truncated: nameTruncated }),
      inferred,
      file,
      line: where ? where.line : null,
      column: where ? where.column : null,
      kind: script ? 'function' : 'builtin',
      sfi: sfi.address + 1,
      from: name === null ? null : from,
    };
    result.text = frameText(result);
    // (Only for a file name kept as it is: the map is found from it.)
    if (this.sourceMapUrls && script && script.name !== null && script.name === file
      && result.line !== null) result.sourceMapUrl = this.mapUrlOf(script);
    return result;
  }

  // A script's source map reference, read once a script from the end of
  // its source as V8 holds it: the last 4 KiB, or where that last line is
  // longer (a map inline, as base64) the whole line up to
  // MAX_SOURCE_MAP_URL_CHARS. -> URL or null.
  mapUrlOf(script) {
    if (script.mapUrl !== undefined) return script.mapUrl;
    script.mapUrl = null;
    const length = script.source ? (readString(this.heap, script.source, { maxChars: 0 }) || {}).length : null;
    if (!length) return null;
    const tail = (n) => this.scripts.text(script, Math.max(0, length - n), n);
    let text = tail(LIMITS.SOURCE_MAP_TAIL_CHARS);
    // (Only where those 4 KiB are all base64: the end of an inline map.)
    if (text !== null && length > text.length && /^[A-Za-z0-9+/=]+$/.test(text.replace(/\s+$/, ''))) {
      text = tail(Math.min(length, LIMITS.MAX_SOURCE_MAP_URL_CHARS));
    }
    script.mapUrl = sourceMappingUrlIn(text);
    return script.mapUrl;
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

  // The fallback for a V8 whose ScopeInfo layout is not in the table: the
  // function's [start, end) positions are two Smis in its ScopeInfo, where
  // exactly is what is not known, so every pair of the first slots is tried,
  // and one is taken only if the source there is this function's text: its
  // token (start less the SharedFunctionInfo's function token offset) begins
  // a function (nameFromSource), the character at start opens its
  // parameters, and the text ends at `end` with its body's '}' (or, for an
  // arrow, '=>' follows the parameters).
  sourceName(scope, sfi, script) {
    const { heap, layout } = this;
    const tokenBytes = layout.sfi.functionTokenOffset === undefined ? null
      : heap.read(sfi.address + layout.sfi.functionTokenOffset, 2);
    const tokenOffset = tokenBytes ? tokenBytes.readUInt16LE(0) : 0;
    const locals = Heap.smi(heap.word(scope.address + 24));
    if (locals === null || locals < 0) return null;
    const slots = Math.min(MAX_SCOPE_SLOTS, 16 + 2 * locals);
    const block = heap.read(scope.address, slots * 8) || heap.read(scope.address, 16 * 8);
    if (!block) return null;
    const smi = (k) => Heap.smi(block.readBigUInt64LE(8 * k));
    for (let k = 2; k + 1 < block.length / 8; k++) {
      const start = smi(k);
      const end = smi(k + 1);
      if (start === null || end === null || start < 0 || end <= start) continue;
      const token = start - (tokenOffset === 0xffff ? 0 : tokenOffset);
      if (token < 0) continue;
      const head = this.scripts.text(script, token, SOURCE_WINDOW);
      const last = this.scripts.text(script, end - 1, 1);
      if (!head || !last) continue;
      const name = nameFromSource(head);
      if (name === null || !looksLikeFunction(head, start - token, last)) continue;
      return { name, start };
    }
    return null;
  }
}

// Pure: whether source text `head` (from a function's token; its parameters
// open at `paramsAt`) and the last character of its [start, end) range are
// a function's: a body closed by '}', or an arrow's '=>' after the parameters.
function looksLikeFunction(head, paramsAt, last) {
  const params = head.slice(paramsAt);
  if (params.startsWith('(')) {
    let depth = 0;
    for (let i = 0; i < params.length; i++) {
      if (params[i] === '(') depth++;
      else if (params[i] === ')' && --depth === 0) {
        const after = params.slice(i + 1).replace(/^\s+/, '');
        return after.startsWith('{') ? last === '}' : after.startsWith('=>');
      }
    }
    return false;
  }
  // A single parameter without parentheses: x => ...
  return /^[\p{ID_Start}$_][\p{ID_Continue}$]*\s*=>/u.test(params);
}

/** "name (file:line:column)", as V8's stack traces print a frame. Pure. */
function frameText({ name, file, line, column, kind }) {
  const shown = name === null ? '(unknown)' : name || '(anonymous)';
  if (kind === 'builtin' || file === null) return `${shown} (native)`;
  if (line === null) return `${shown} (${file})`;
  return `${shown} (${file}:${line}:${column})`;
}

/**
 * A namer result (or a walked frame holding one) at its original place,
 * where its script has a source map (lib/source-maps.js SourceMaps): file,
 * line, column and text the original's, `generated` the place V8 gave.
 * The result as it is where there is none (or no maps: null).
 */
function atOriginal(r, sourceMaps) {
  if (!sourceMaps || !r || r.sourceMapUrl === undefined) return r;
  const o = sourceMaps.original({ file: r.file, line: r.line, column: r.column, mapUrl: r.sourceMapUrl });
  const { sourceMapUrl, ...rest } = r;
  if (!o) return rest;
  const out = { ...rest, file: safeName(o.file, { max: MAX_FILE }), line: o.line, column: o.column,
    generated: { file: r.file, line: r.line, column: r.column } };
  out.text = frameText(out);
  return out;
}

module.exports = { V8Namer, frameText, atOriginal, looksLikeFunction };
