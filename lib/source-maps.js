'use strict';
// Frames at the place the code was written: where a script has a source
// map (its source ends with `//# sourceMappingURL=` an inline data: URL or
// a path, or a file `X.js.map` lies beside it), a generated position
// (dist/orders/service.js:37:12) is turned into the original one
// (src/orders/service.ts:42:3), as `node --enable-source-maps` turns its
// own stack traces, for a process that was started without it.
//
// A map is another user's file: read inside the process's own root
// (lib/safe-open.js openInRoot: no link leads out of it), a reference that
// climbs out of that root or is no path (http:, ...) is not followed, and
// sizes and counts are bounded (lib/limits.js); what is refused is said
// once, in one line (overLimit). Maps are parsed by Node's own
// module.SourceMap (no dependency; the same on Node 18 to 26), kept per run,
// the least recently used dropped past SOURCE_MAP_CACHE_BYTES. What a parsed
// map holds is charged to the run's memory budget (lib/memory-budget.js)
// before Node parses it, and given back when it is dropped and at close().
// docs/reading-output.md, "Source maps", says what is shown.
const path = require('path');
const { fileURLToPath } = require('url');
const { SourceMap } = require('module');
const { openInRoot, readAt } = require('./safe-open');
const fs = require('fs');
const { LIMITS, overLimit, formatBytes } = require('./limits');
const { runBudget } = require('./memory-budget');

const MAGIC = /\/[/*][#@][ \t]+sourceMappingURL=([^\s'"*]+)[ \t]*(?:\*\/)?[ \t]*$/;

/**
 * Pure: the source map reference of a script, from the end of its source
 * text: the last line that is a `//# sourceMappingURL=URL` (or `/*# ... *\/`,
 * or the older `//@`) comment, with nothing but blank lines after it ->
 * URL, or null.
 */
function sourceMappingUrlIn(tail) {
  if (typeof tail !== 'string') return null;
  const lines = tail.split(/\r\n|[\n\r\u2028\u2029]/);
  while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
  const last = lines.length ? lines[lines.length - 1] : '';
  const m = MAGIC.exec(last);
  return m ? m[1] : null;
}

/**
 * Pure: a script's name as V8 gives it -> its path (an absolute path, or a
 * file: URL for ES modules), or null (node:..., eval code, anything else).
 */
function scriptPath(name) {
  if (typeof name !== 'string') return null;
  if (name.startsWith('/')) return path.posix.normalize(name);
  if (name.startsWith('file:')) {
    try { return fileURLToPath(name); } catch { return null; }
  }
  return null;
}

/**
 * Pure: a relative path resolved from directory `dir` (absolute) ->
 * an absolute path, or null when it climbs above the root ('/').
 */
function inside(dir, relative) {
  const parts = dir.split('/').filter(Boolean);
  for (const p of relative.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(p);
  }
  return '/' + parts.join('/');
}

/**
 * Pure: where the map of the script at `script` (a path) is, from its
 * reference (`url`, or null: none) -> { data: Buffer } (inline), { path }
 * (a file in the process's root), { refused: why } or null (no map named).
 */
function mapPlace(script, url) {
  if (url === null || url === undefined) return null;
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma < 0) return { refused: 'its inline map is no data: URL' };
    const meta = url.slice(5, comma).split(';');
    if (meta[0] && !/json$/i.test(meta[0])) return { refused: `its inline map is ${JSON.stringify(meta[0].slice(0, 40))}, not JSON` };
    const body = url.slice(comma + 1);
    try {
      return { data: meta.includes('base64') ? Buffer.from(body, 'base64') : Buffer.from(decodeURIComponent(body), 'utf8') };
    } catch {
      return { refused: 'its inline map cannot be decoded' };
    }
  }
  let target;
  if (url.startsWith('file:')) {
    try { target = fileURLToPath(url); } catch { return { refused: 'its map\'s file: URL is no path' }; }
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    return { refused: `its map is at a URL (${url.split(':')[0]}:), which nodetrace does not fetch` };
  } else {
    let decoded;
    try { decoded = decodeURIComponent(url.split(/[?#]/)[0]); } catch { return { refused: 'its map\'s path cannot be decoded' }; }
    target = decoded.startsWith('/') ? decoded : inside(path.posix.dirname(script), decoded);
  }
  if (target === null || inside('/', target) === null || target.split('/').includes('..')) return { refused: 'its map\'s path leads out of the process\'s root: not followed' };
  return { path: path.posix.normalize(target) };
}

/**
 * A map's text -> { map: module.SourceMap, sourceName (a source as shown),
 * bytes (what the map holds, parsedBytes) } or { refused: why }. `base`:
 * where relative sources are from (the map's own path, or the script's for
 * an inline map). `afford(bytes)`: asked before Node parses the mappings ->
 * null (go on: the bytes are taken) or why not (one line's end); pure
 * without it.
 */
function parseMap(text, base, { afford = () => null } = {}) {
  let payload;
  try { payload = JSON.parse(text); } catch { return { refused: 'it is not JSON' }; }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return { refused: 'it is not a source map (no object)' };
  if (payload.version !== 3) return { refused: `it is a version ${JSON.stringify(payload.version).slice(0, 20)} map, not 3` };
  if (payload.sections !== undefined) {
    // An index map: its sections' maps inline, one level (a section that
    // names another map by url, or holds an index map itself, is not followed).
    if (!Array.isArray(payload.sections) || payload.sections.length > LIMITS.MAX_SOURCE_MAP_SECTIONS) return { refused: `its sections are not a list of at most ${LIMITS.MAX_SOURCE_MAP_SECTIONS}` };
    for (const s of payload.sections) {
      if (!s || typeof s !== 'object' || s.url !== undefined) return { refused: 'a section names another map (url): not followed' };
      if (!s.map || typeof s.map !== 'object' || s.map.sections !== undefined) return { refused: 'a section is no flat map (an index map within an index map): not followed' };
      const bad = checkFlat(s.map);
      if (bad) return { refused: bad };
    }
  } else {
    const bad = checkFlat(payload);
    if (bad) return { refused: bad };
  }
  const bytes = parsedBytes(payload, text);
  const unaffordable = afford(bytes);
  if (unaffordable) return { refused: unaffordable, bytes, unaffordable: true };
  let map;
  try { map = new SourceMap(payload); } catch { return { refused: 'its mappings cannot be read', taken: bytes }; }
  const dir = path.posix.dirname(base);
  const root = typeof payload.sourceRoot === 'string' ? payload.sourceRoot : '';
  const display = new Map();
  // A source as written, resolved from the map's directory (and its
  // sourceRoot) when it is a relative path; a URL of another scheme
  // (webpack://...) as it is. Only ever shown, never read.
  const sourceName = (s) => {
    if (typeof s !== 'string') return null;
    if (display.has(s)) return display.get(s);
    let name = s;
    if (/^file:/.test(s)) {
      try { name = fileURLToPath(s); } catch { name = s; }
    } else if (!/^[a-z][a-z0-9+.-]*:/i.test(s) && !s.startsWith('/')) {
      const joined = root ? `${root.replace(/\/+$/, '')}/${s}` : s;
      if (/^[a-z][a-z0-9+.-]*:/i.test(root)) name = joined;
      else name = (joined.startsWith('/') ? inside('/', joined) : inside(dir, joined)) || s;
    }
    display.set(s, name);
    return name;
  };
  return { map, sourceName, bytes };
}

// What module.SourceMap keeps of a map: its payload (the mappings string
// and the rest of the JSON: at most 2 bytes a character) and one array per
// entry of its mappings, [line, column] for a segment of one field and
// six slots for the others. Measured on Node 18 to 26 alike
// (docs/security.md, the source map row): 72 bytes a one-field entry, 105
// a longer one, 138 where its numbers leave V8's small integers (a map can
// choose that); 8 bytes more each while Node sorts them.
const PAIR_ENTRY_BYTES = 80;
const FULL_ENTRY_BYTES = 146;

// Base64 digits that say another digit follows (a VLQ's continuation bit).
const CONTINUES = new Uint8Array(128);
for (const c of 'ghijklmnopqrstuvwxyz0123456789+/') CONTINUES[c.charCodeAt(0)] = 1;

/**
 * Pure: a flat map's mappings string -> { pairs, full }: the entries
 * Node's module.SourceMap makes of it, counted as its parser reads them
 * (a field ends at a digit without the continuation bit, any other
 * character included; one field followed by a separator is a pair, anything
 * else takes four or five fields), without decoding a value.
 */
function entriesIn(mappings) {
  const n = mappings.length;
  let i = 0;
  let pairs = 0;
  let full = 0;
  const field = () => { while (CONTINUES[mappings.charCodeAt(i++)] === 1); };
  const separator = () => { const c = mappings.charCodeAt(i); return c === 44 || c === 59; };   // , ;
  for (;;) {
    if (mappings.charCodeAt(i) === 44) i++;
    else {
      while (mappings.charCodeAt(i) === 59) i++;
      if (i >= n) break;
    }
    field();
    if (separator()) { pairs++; continue; }
    field(); field(); field();
    if (!separator()) field();
    full++;
  }
  return { pairs, full };
}

/**
 * Pure: the bytes a map's parsed payload (JSON.parse of `text`, checked)
 * holds in module.SourceMap, estimated before it is built: an upper bound.
 */
function parsedBytes(payload, text) {
  const flats = payload.sections !== undefined ? payload.sections.map((s) => s.map) : [payload];
  let mappingsChars = 0;
  let bytes = 0;
  for (const m of flats) {
    const { pairs, full } = entriesIn(m.mappings);
    mappingsChars += m.mappings.length;
    bytes += pairs * PAIR_ENTRY_BYTES + full * FULL_ENTRY_BYTES;
  }
  return bytes + mappingsChars + 2 * Math.max(0, text.length - mappingsChars);
}

// A flat map's fields, checked before Node parses it: what is wrong, or null.
function checkFlat(m) {
  if (typeof m.mappings !== 'string') return 'its mappings are no string';
  if (!Array.isArray(m.sources) || m.sources.length > LIMITS.MAX_SOURCE_MAP_SOURCES) return `its sources are not a list of at most ${LIMITS.MAX_SOURCE_MAP_SOURCES}`;
  if (m.names !== undefined && (!Array.isArray(m.names) || m.names.length > LIMITS.MAX_SOURCE_MAP_SOURCES)) return `its names are not a list of at most ${LIMITS.MAX_SOURCE_MAP_SOURCES}`;
  return null;
}

class SourceMaps {
  /**
   * @param {object} o { root: the process's root (/proc/PID/root, or a
   *   core's --root; '/' for this host's files), budget: the run's memory
   *   (lib/memory-budget.js) the parsed maps kept are charged to, given back
   *   as they are dropped and at close(); cacheBytes: what they hold at most
   *   (SOURCE_MAP_CACHE_BYTES) }
   */
  constructor({ root = '/', budget = runBudget(), cacheBytes = LIMITS.SOURCE_MAP_CACHE_BYTES } = {}) {
    this.root = root;
    this.budget = budget;
    this.cacheBytes = cacheBytes;
    this.scripts = new Map();   // script path -> { place, key } (key: the map's, null: none)
    this.maps = new Map();      // map key -> { parsed, bytes } | { refused } (insertion order: least recently used first)
    this.cachedBytes = 0;       // what the parsed maps kept hold (parsedBytes), charged to the budget
    this.readBytes = 0;
    this.found = new Set();     // scripts whose map was read
    this.refused = new Map();   // script -> line said
  }

  /**
   * The original place of a generated one -> { file, line, column } (1-based)
   * or null (no map, refused, or the position is not mapped). `mapUrl`: the
   * script's reference as its source ends (lib/v8/namer.js), or null: none
   * (a map beside it is looked for); the first one given for a script is kept.
   */
  original({ file, line, column, mapUrl }) {
    const script = scriptPath(file);
    if (!script || !Number.isInteger(line) || !Number.isInteger(column) || line < 1 || column < 1) return null;
    const map = this.mapOf(script, mapUrl);
    if (!map) return null;
    let e;
    try { e = map.map.findEntry(line - 1, column - 1); } catch { return null; }
    // Node's findEntry gives the last entry at or before the position, on
    // an earlier line too: a line without an entry of its own is not mapped.
    if (!e || e.generatedLine !== line - 1 || typeof e.originalSource !== 'string' || !Number.isInteger(e.originalLine)) return null;
    const source = map.sourceName(e.originalSource);
    return source === null ? null : { file: source, line: e.originalLine + 1, column: e.originalColumn + 1 };
  }

  /**
   * Whether the script at `script` (a path in the root) has a map that can
   * be read: its reference read from the end of its file (where V8's copy
   * of its source is not at hand: doctor -p) -> { found: true, map (where:
   * a path, or 'inline') } | { found: false, why } (one line; none: null).
   */
  check(script) {
    const url = this.fileMapUrl(script);
    if (url && url.refused) return { found: false, why: url.refused };
    const map = this.mapOf(script, url);
    const s = this.scripts.get(script);
    if (map) return { found: true, map: s && s.place && s.place.path ? s.place.path : 'inline' };
    return { found: false, why: this.refused.has(script) ? this.refused.get(script).replace(/^nodetrace: [^:]*: /, '') : null };
  }

  // A script file's reference, from its last line (4 KiB of it; a longer
  // line of base64, an inline map, up to MAX_SOURCE_MAP_URL_CHARS) -> URL,
  // null, or { refused }.
  fileMapUrl(script) {
    const opened = openInRoot(this.root, script, { followLinks: true });
    if (opened.refused) return opened.missing ? null : { refused: `the script was not read: ${opened.refused}` };
    try {
      const tail = (n) => readAt(opened.fd, Math.max(0, opened.size - n), Math.min(n, opened.size)).toString('utf8');
      let text = tail(LIMITS.SOURCE_MAP_TAIL_CHARS);
      if (opened.size > text.length && /^[A-Za-z0-9+/=]+$/.test(text.replace(/\s+$/, ''))) text = tail(LIMITS.MAX_SOURCE_MAP_URL_CHARS);
      return sourceMappingUrlIn(text);
    } finally {
      fs.closeSync(opened.fd);
    }
  }

  /** What was found and refused: { found: [scripts], refused: [lines] }. */
  summary() {
    return { found: [...this.found], refused: [...this.refused.values()] };
  }

  mapOf(script, mapUrl) {
    let s = this.scripts.get(script);
    if (!s) {
      if (this.scripts.size >= LIMITS.MAX_SOURCE_MAP_SCRIPTS) return null;
      // No reference: a map beside the script, if there is one.
      const place = typeof mapUrl === 'string' && mapUrl ? mapPlace(script, mapUrl) : { path: `${script}.map`, beside: true };
      s = { place, key: place && place.data ? `inline:${script}` : place && place.path ? place.path : null };
      this.scripts.set(script, s);
      if (place && place.refused) this.refuse(script, place.refused);
    }
    if (!s.key) return null;
    let m = this.maps.get(s.key);
    if (m) {
      // Used: to the end of the order, the last to go.
      this.maps.delete(s.key);
      this.maps.set(s.key, m);
    } else {
      m = this.load(script, s.place);
      this.maps.set(s.key, m);
      if (m.parsed) this.cachedBytes += m.bytes;
    }
    if (m.refused) {
      if (!m.silent) this.refuse(script, m.refused);
      return null;
    }
    this.found.add(script);
    return m.parsed;
  }

  load(script, place) {
    let text;
    let base;
    if (place.data) {
      if (place.data.length > LIMITS.MAX_SOURCE_MAP_BYTES) return { refused: `its inline map is ${formatBytes(place.data.length)}, more than the ${formatBytes(LIMITS.MAX_SOURCE_MAP_BYTES)} nodetrace reads` };
      if (!this.spend(place.data.length)) return { refused: `not read: the ${formatBytes(LIMITS.SOURCE_MAP_BUDGET_BYTES)} of maps nodetrace reads in one run were read` };
      text = place.data.toString('utf8');
      base = script;
    } else {
      const opened = openInRoot(this.root, place.path, { maxBytes: LIMITS.MAX_SOURCE_MAP_BYTES, followLinks: true });
      if (opened.refused) {
        // A script without a map beside it is the common case: nothing to say.
        if (place.beside && opened.missing) return { refused: 'none', silent: true };
        if (/larger than/.test(opened.refused)) return { refused: `its map ${place.path} is more than the ${formatBytes(LIMITS.MAX_SOURCE_MAP_BYTES)} nodetrace reads` };
        return { refused: `its map ${place.path} was not read: ${opened.refused}`, silent: place.beside && opened.missing };
      }
      try {
        if (!this.spend(opened.size)) return { refused: `not read: the ${formatBytes(LIMITS.SOURCE_MAP_BUDGET_BYTES)} of maps nodetrace reads in one run were read` };
        text = readAt(opened.fd, 0, opened.size).toString('utf8');
      } finally {
        fs.closeSync(opened.fd);
      }
      base = place.path;
    }
    const parsed = parseMap(text, base, { afford: (bytes) => this.afford(bytes) });
    const which = place.path ? `its map ${place.path}` : 'its inline map';
    if (parsed.taken) this.budget.release(parsed.taken);
    if (parsed.unaffordable) return { refused: `${which} was not read (${formatBytes(parsed.bytes)} parsed): ${parsed.refused}` };
    if (parsed.refused) return { refused: `${which} was not read: ${parsed.refused}` };
    return { parsed, bytes: parsed.bytes };
  }

  // Room for a map that will hold `bytes` once parsed, taken from the run's
  // budget -> null, or why not. The least recently used maps are dropped
  // first (read again if needed, within SOURCE_MAP_BUDGET_BYTES): for the
  // cache's bound, and then all of them if the run's budget has no room.
  afford(bytes) {
    if (bytes > this.cacheBytes) return `more than the ${formatBytes(this.cacheBytes)} of parsed maps nodetrace keeps`;
    this.dropWhile(() => this.cachedBytes + bytes > this.cacheBytes);
    if (this.budget.charge(bytes)) return null;
    this.dropWhile(() => true);
    return this.budget.charge(bytes) ? null : this.budget.refusal();
  }

  // Drops parsed maps, least recently used first, while `more()`; their
  // memory given back to the run's budget.
  dropWhile(more) {
    for (const [k, old] of this.maps) {
      if (!more()) break;
      if (!old.parsed) continue;
      this.cachedBytes -= old.bytes;
      this.budget.release(old.bytes);
      this.maps.delete(k);
    }
  }

  /** Drops every parsed map, giving its memory back to the run's budget. Can be used again after. */
  close() {
    this.dropWhile(() => true);
  }

  spend(bytes) {
    if (this.readBytes + bytes > LIMITS.SOURCE_MAP_BUDGET_BYTES) return false;
    this.readBytes += bytes;
    return true;
  }

  refuse(script, why) {
    if (this.refused.has(script) || this.refused.size >= LIMITS.MAX_SOURCE_MAP_SCRIPTS) return;
    this.refused.set(script, overLimit(`the source map of ${script}`, why));
  }
}

module.exports = { SourceMaps, sourceMappingUrlIn, scriptPath, mapPlace, parseMap, inside, entriesIn, parsedBytes };
