'use strict';
// A core file opened for frame walks, as lib/v8/process.js opens a live
// process: V8's metadata from the file the process had mapped (by the path
// the core records, under `root` for a process that ran in another mount
// namespace, a container), checked against the core's own copy of those
// values (a node binary replaced since, or a different one at that path,
// is refused rather than misread), its memory and its threads' registers.
const fs = require('fs');
const path = require('path');
const { UserError } = require('../errors');
const { openRegular, readAt } = require('../safe-open');
const { validRange } = require('./memory');
const { Symbolizer, findElfData } = require('../symbolize');
const { codeObjects } = require('../proc/code-objects');
const { layoutFrom, PREFIXES } = require('./metadata');
const { openCore } = require('./core-file');
const { V8Namer } = require('./namer');
const { InliningReader, dispatchLocationFor } = require('./inlining');
const { walkStack, nativeClassifier } = require('./walk');
const { codeTest } = require('./process');

// Files of a core searched for V8's metadata at most (a Node process maps
// 30 to 300 with code; node or libnode is the first or second).
const MAX_V8_CANDIDATES = 256;

// Where a file the core names is on this host (never a path under /proc:
// the core's PID may be another process's now).
function hostPath(root, file) {
  if (!file.startsWith('/') || file.startsWith('/proc/')) return null;
  return root ? path.join(root, file) : file;
}

// The load bias of a mapped ELF object: where its first mapping is, less
// where its first segment asks to be (0 for an executable linked at a fixed address).
function loadBias(maps, object, loads) {
  const first = maps.filter((m) => m.path === object).sort((a, b) => a.offset - b.offset || a.start - b.start)[0];
  if (!first || !loads.length) return null;
  const seg = loads.reduce((a, b) => (b.offset < a.offset ? b : a));
  return first.start - first.offset - (seg.vaddr - seg.offset);
}

/**
 * The V8 metadata of a core's process -> { object, file, symbols } or null.
 * Throws UserError when the file on this host does not hold the values the
 * core holds.
 */
function findCoreV8Object(core,
  { root, read = (f) => findElfData(f, PREFIXES, { followLinks: true, width: 4 }) } = {}) {
  const exe = core.files.length ? core.files[0].path : '';
  // The executable and libnode come first; a core that names thousands of
  // files is not searched past the first MAX_V8_CANDIDATES.
  for (const o of codeObjects(core.maps, exe).slice(0, MAX_V8_CANDIDATES)) {
    const file = hostPath(root, o.path);
    const found = file && read(file);
    if (!found || ![...found.found.keys()].some((n) => n.startsWith('v8dbg_'))) continue;
    const symbols = {};
    for (const [name, sym] of found.found) symbols[name] = sym.bytes.readInt32LE(0);
    const bias = loadBias(core.maps, o.path, found.loads);
    let compared = 0;
    let differ = 0;
    if (bias !== null) {
      for (const [name, sym] of found.found) {
        // (Not the version's strings: pointers, relocated in a shared libnode.)
        if (!/^v8dbg_|^_ZN2v88internal7Version\d(major|minor|build|patch)_E$/.test(name)) continue;
        const b = core.memory.read(sym.value + bias, 4);
        if (!b) continue;
        compared++;
        if (b.readInt32LE(0) !== symbols[name]) differ++;
      }
    }
    if (differ) {
      throw new UserError(`${file} is not the ${o.path} the core's process ran: ${differ} of ${compared} of V8's values differ.`,
        { hint: 'Point at the binary the process ran (--root DIR for a process that ran in a container).' });
    }
    return { object: o.path, file, symbols, checked: compared };
  }
  return null;
}

// The core's memory, and where it saved nothing of a mapping of V8's own
// file (read-only data: the sources of Node's built-in modules), that file.
class CoreWithFile {
  constructor(memory, maps, fd) {
    this.inner = memory;
    this.maps = maps;
    this.fd = fd;
    this.budget = memory.budget;
  }

  read(address, length) {
    const fromCore = this.inner.read(address, length);
    if (fromCore || this.fd === null) return fromCore;
    const m = this.maps.find((x) => address >= x.start && address + length <= x.end);
    if (!m || !validRange(address, length) || !this.budget.take(length)) return null;
    const buf = readAt(this.fd, m.offset + (address - m.start), length);
    return buf.length === length ? buf : null;
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    this.inner.close();
  }
}

/**
 * Opens a core -> { pid, command, threads, object, layout, namer, note,
 * notes (every one-line remark), walk(registers, opts), close() }.
 * `sourceMaps` (lib/source-maps.js SourceMaps, its root where the
 * process's files are): JavaScript frames where their scripts' maps put them;
 * `sourceMapUrls`: only their references kept, for a SourceMaps later.
 * Throws UserError for a file that is not a core, a truncated one, one that
 * is not a Node process's, or a binary that does not match it.
 */
function openCoreForWalk(file,
  { root = null, symbolizer = null, sourceMaps = null, sourceMapUrls = false } = {}) {
  // A symbolizer of its own is closed with it (its tables give back the run's memory).
  const own = symbolizer ? null : new Symbolizer();
  symbolizer = symbolizer || own;
  const core = openCore(file);
  try {
    const v8 = findCoreV8Object(core, { root });
    if (!v8) {
      const what = core.command ? `${core.command} (PID ${core.pid})` : `PID ${core.pid}`;
      throw new UserError(`${file} is the core of ${what}, in which no mapped file on this host carries V8's metadata: not a Node process's core${root ? '' : ', or one from a container (give its root with --root)'}.`);
    }
    const layout = layoutFrom(v8.symbols);
    const opened = openRegular(v8.file, { followLinks: true });
    const memory = new CoreWithFile(core.memory, core.maps.filter((m) => m.path === v8.object), opened.refused ? null
      : opened.fd);
    const notes = [];
    if (core.truncated) notes.push(`the core is truncated (${core.truncated} bytes missing): frames in the missing part are not named`);
    if (!v8.checked) notes.push(`the core does not hold V8's values to check ${v8.file} against: it is trusted to be the binary that ran`);
    let namer = null;
    let inlining = null;
    if (layout.unsupported) notes.push(`${layout.unsupported}: JavaScript frames are shown as addresses`);
    else {
      namer = new V8Namer({ memory, layout, sourceMapUrls: sourceMapUrls || Boolean(sourceMaps) });
      inlining = new InliningReader({ heap: namer.heap, layout, symbols: v8.symbols, namer,
        dispatch: dispatchLocationFor(layout, v8.file) });
      if (namer.limitation()) notes.push(namer.limitation());
    }
    const snap = {
      pid: core.pid, maps: core.maps, perfMap: null, takenAt: Date.now(),
      elfFiles: (map) => { const f = hostPath(root, map.path); return f ? [[f, true]] : []; },
    };
    const classify = nativeClassifier(symbolizer, snap);
    const isCode = codeTest(core.maps);
    return {
      pid: core.pid,
      command: core.command,
      threads: core.threads,
      object: v8.object,
      file: v8.file,
      layout,
      namer,
      note: notes[0] || null,
      notes,
      memory,
      classify,
      walk: (registers, opts = {}) => walkStack({ memory, registers, classify, isCode, namer, inlining, sourceMaps,
        layout: namer ? layout : null, ...opts }),
      close: () => {
        memory.close();
        if (namer) namer.close();
        if (own) own.close();
      },
    };
  } catch (err) {
    core.close();
    if (own) own.close();
    throw err;
  }
}

module.exports = { openCoreForWalk, findCoreV8Object, loadBias, hostPath };
