'use strict';
// One live (stopped) Node process, opened for frame walks: the object that
// carries V8 (the node executable, or libnode.so in Debian's and Ubuntu's
// builds) found in its memory map and read through /proc/PID/map_files
// (the mapped file itself, in any mount namespace), its memory through
// /proc/PID/mem, and a classifier of code addresses over its map.
const fs = require('fs');
const { Symbolizer, parseMaps } = require('../symbolize');
const { codeObjects, objectFiles } = require('../proc/code-objects');
const { readProcText } = require('../proc/read-bounded');
const { readMetadata, layoutFrom } = require('./metadata');
const { ProcessMemory } = require('./memory');
const { V8Namer } = require('./namer');
const { InliningReader, dispatchLocationFor } = require('./inlining');
const { walkStack, nativeClassifier } = require('./walk');

/**
 * Pure over its inputs: which mapped object carries V8's metadata.
 * -> { object (its path in the process), file (where it was read), source
 * (the same, as lib/symbolize.js opens it again: a path, or { root, path }),
 * symbols } or null.
 */
function findV8Object({ pid, maps, exePath, read = readMetadata }) {
  for (const o of codeObjects(maps, exePath)) {
    // map_files, then inside the process's own root (never through a link out of it).
    for (const file of objectFiles(pid, o)) {
      const found = read(file);
      if (found) return { object: o.path, file: typeof file === 'string' ? file : `${file.root}${file.path}`, source: file, symbols: found.symbols };
    }
  }
  return null;
}

/**
 * Opens process `pid` (stopped, for a consistent walk) -> {
 *   pid, object, layout, namer (null when V8 cannot be read: `note` says why),
 *   inlining (lib/v8/inlining.js InliningReader, with the namer),
 *   note (one line, or null), memory, classify, walk(registers, opts), close() }.
 * `wrapMemory` wraps the process's memory (a RecordingMemory, to save what a walk read);
 * `readMetadata` reads a file's V8 metadata (a caller's cache of it);
 * `sourceMapUrls`: JavaScript frames also say their script's source map
 * reference (lib/v8/namer.js), for lib/source-maps.js, after the walk.
 * Throws a plain Error when /proc/PID/mem cannot be opened.
 */
function openProcess(pid,
  { symbolizer = null, wrapMemory = (m) => m, readMetadata: read = readMetadata,
    sourceMapUrls = false } = {}) {
  // A symbolizer of its own is closed with it (its tables give back the run's memory).
  const own = symbolizer ? null : new Symbolizer();
  symbolizer = symbolizer || own;
  let maps = [];
  let exePath = '';
  maps = parseMaps(readProcText(`/proc/${pid}/maps`) || '');   // '': gone, no V8 below
  try { exePath = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { /* gone */ }
  const v8 = findV8Object({ pid, maps, exePath, read });
  const layout = v8 ? layoutFrom(v8.symbols) : null;
  const memory = wrapMemory(new ProcessMemory(pid));
  let namer = null;
  let inlining = null;
  let note = null;
  if (!v8) note = 'no mapped object carries V8\'s postmortem metadata (not Node, or a build without it): JavaScript frames are shown as addresses';
  else if (layout.unsupported) note = `${layout.unsupported}: JavaScript frames are shown as addresses`;
  else {
    namer = new V8Namer({ memory, layout, sourceMapUrls });
    inlining = new InliningReader({ heap: namer.heap, layout, symbols: v8.symbols, namer,
      dispatch: dispatchLocationFor(layout, v8.source) });
    note = namer.limitation();
  }
  const snap = { pid, maps, perfMap: null, takenAt: Date.now() };
  const classify = nativeClassifier(symbolizer, snap);
  const isCode = codeTest(maps);
  return {
    pid,
    object: v8 ? v8.object : null,
    symbols: v8 ? v8.symbols : null,
    layout,
    namer,
    inlining,
    note,
    memory,
    classify,
    walk: (registers, opts = {}) => walkStack({ memory, registers, classify, isCode, namer, inlining, layout: namer
      ? layout : null, ...opts }),
    close: () => {
      memory.close();
      if (namer) namer.close();
      if (own) own.close();
    },
  };
}

/** Pure: a test of whether an address lies in an executable mapping. */
function codeTest(maps) {
  const code = maps.filter((m) => m.perms[2] === 'x');
  return (address) => code.some((m) => address >= m.start && address < m.end);
}

module.exports = { openProcess, findV8Object, codeTest };
