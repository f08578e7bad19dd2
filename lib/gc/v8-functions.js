'use strict';
// Where V8's garbage collector is in one Node process, for `nodetrace gc`:
// the object that defines it (the node executable in official and
// NodeSource builds; libnode.so in Debian's and Ubuntu's, which exports these
// symbols even stripped) and the exact names of the functions that bound
// each kind of pause. Measured with uprobes on Node 18 (Debian's libnode
// 108), 20, 22, 24 and 26 here: every build defines them.
//
//   collection     v8::internal::Heap::CollectGarbage(...) (every
//                  collection's whole pause: it calls V8's GC prologue and
//                  epilogue callbacks, between which Node's
//                  PerformanceObserver times a 'gc' entry; its signature
//                  differs between versions: 26 adds two arguments)
//   scavenge       v8::internal::ScavengerCollector::CollectGarbage(): a
//                  collection that runs it is a scavenge (Heap::Scavenge()
//                  is inlined on most paths: a quick count on Node 20 saw it
//                  2 times for 10 scavenges)
//   mark-compact   v8::internal::MarkCompactCollector::CollectGarbage(): a
//                  collection that runs it is a full GC. Timed alone, it
//                  missed what its collection does around it (sweeping
//                  finished on the main thread, weak callbacks): 26.6 ms of
//                  a 47.0 ms pause, 6.6 of 11.8 (docs/gc.md)
//   incremental    v8::internal::IncrementalMarking::Step(...) (a step of
//                  marking on the main thread between full GCs; its
//                  signature differs between versions, and 22+ also define
//                  a ".cold" clone, which must not get a return probe)
//   weak           GlobalHandles::InvokeFirstPassWeakCallbacks() and
//                  InvokeSecondPassPhantomCallbacks() (weak callbacks run
//                  by the GC: finalizers of native objects)
const { findElfSymbols, elfFunctionsStartingWith, parseMaps } = require('../symbolize');
const { readProcFile } = require('../proc');
const { noun } = require('../render/text');
const { codeObjects, objectFiles, mapFile } = require('../proc/code-objects');

const FIXED = Object.freeze({
  scavenge: '_ZN2v88internal18ScavengerCollector14CollectGarbageEv',
  'mark-compact': '_ZN2v88internal20MarkCompactCollector14CollectGarbageEv',
  'weak-first': '_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv',
  'weak-second': '_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv',
});
const STEP_PREFIX = '_ZN2v88internal18IncrementalMarking4StepE';
const COLLECTION_PREFIX = '_ZN2v88internal4Heap14CollectGarbageE';

// The one function of a symbol table whose name starts with `prefix` (a
// plain symbol, not a clone such as ".cold"), or null.
function onePlain(names, prefix) {
  // (.symtab and .dynsym may both name it.)
  const plain = [...new Set(names.filter((n) => n.startsWith(prefix) && /^[A-Za-z0-9_]+$/.test(n)))];
  return plain.length === 1 ? plain[0] : null;
}

/** The one IncrementalMarking::Step of a symbol table, or null. */
const stepName = (names) => onePlain(names, STEP_PREFIX);
/** The one Heap::CollectGarbage of a symbol table, or null. */
const collectionName = (names) => onePlain(names, COLLECTION_PREFIX);

/**
 * -> { file (what the tracer attaches to: the mapped file itself, through
 *    /proc/PID/map_files), object (its path in the process), functions: {
 *    scavenge, 'mark-compact', incremental, 'weak-first', 'weak-second' },
 *    addresses (name -> its start in the file, or null) } or { missing: why }.
 * `host` reads the process and files (tests pass their own); each object is
 * read through map_files or inside the process's own root (objectFiles).
 */
function locateGc(pid, host = realHost()) {
  const maps = parseMaps(host.maps(pid) || '');
  for (const o of codeObjects(maps, host.exePath(pid))) {
    let found = null;
    let readFrom = null;
    for (const f of objectFiles(pid, o)) {
      found = host.findSymbols(f, Object.values(FIXED));
      if (found) { readFrom = f; break; }
    }
    if (!found || !found.found.has(FIXED['mark-compact'])) continue;
    const missing = Object.entries(FIXED).filter(([, name]) => !found.found.has(name)).map(([kind]) => kind);
    const step = stepName(host.symbolNames(readFrom, STEP_PREFIX));
    if (!step) missing.push('incremental');
    const collection = collectionName(host.symbolNames(readFrom, COLLECTION_PREFIX));
    if (!collection) missing.push('collection');
    if (missing.length) return { missing: `${o.path} defines V8's collector but not its ${missing.join(', ')} ${noun(missing.length, 'function')}` };
    const functions = { ...FIXED, incremental: step, collection };
    const addresses = addressesOf(functions, found, host.findSymbols(readFrom, [step, collection]));
    return { file: mapFile(pid, o), object: o.path, functions, addresses };
  }
  return { missing: 'no object of the process defines V8\'s MarkCompactCollector::CollectGarbage (not Node, or a build without symbols)' };
}

// Each function's start in the file (its symbol's value), for probes by
// address (lib/tracer/template.js uprobesAtAddresses): name -> value, or
// null where one is not known, when the probes go by name.
function addressesOf(functions, ...tables) {
  const addresses = new Map();
  for (const name of Object.values(functions)) {
    const sym = tables.map((t) => t && t.found.get(name)).find(Boolean);
    if (!sym || !(sym.value > 0)) return null;
    addresses.set(name, sym.value);
  }
  return addresses;
}

function realHost() {
  const fs = require('fs');
  return {
    maps: (pid) => readProcFile(pid, 'maps'),
    exePath: (pid) => { try { return fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { return null; } },
    findSymbols: (file, names) => findElfSymbols(file, names, { followLinks: true }),
    // Only the symbols named where the prefix occurs in each string table:
    // a tenth of the CPU of reading the whole table sorted to filter it
    // (docs/performance.md, "Planning").
    symbolNames: (file, prefix) => elfFunctionsStartingWith(file, prefix, { followLinks: true }) || [],
  };
}

module.exports = { locateGc, stepName, collectionName, FIXED, STEP_PREFIX, COLLECTION_PREFIX };
