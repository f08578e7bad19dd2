'use strict';
// Every USDT probe one live process has, for `nodetrace probes`: the
// providers it made with the dtrace-provider API (lib/usdt's probe
// libraries, whose own definition gives each argument's declared type),
// then the stapsdt notes of every other object it maps (libstdc++'s,
// libpython's, a node built --with-dtrace), each with the file it lives in
// and whether a tracer has it enabled now (its semaphore, read from the
// process's memory: what lib/usdt's probe.fire() itself reads).
//
// Files and memory are the process's owner's: libraries are checked as
// every command that traces them checks them (lib/probe-libraries/index.js
// openVerified, lib/probe-libraries/library-check.js), other objects' notes as
// lib/probes/object-probes.js reads them, and an object refused is listed
// with why, never traced.
const path = require('path');
const proc = require('../proc');
const libraries = require('../probe-libraries');
const paths = require('../usdt/paths');
const { providerFromDefinition, kindOf } = require('../usdt/definition');
const { parseMaps } = require('../symbolize');
const { codeObjects, mapFile } = require('../proc/code-objects');
const { objectNotes, argumentType } = require('./object-probes');
const { ProcessMemory } = require('../v8/memory');
const { LIMITS } = require('../limits');

const SEMAPHORE_BYTES = 2;
// What reading semaphores may cost one process: 2 bytes each, at most
// MAX_OBJECT_NOTES of each of its objects'; far more than any has.
const SEMAPHORE_BUDGET = 256 * 1024;

// Any provider a library declares, checked against its own definition.
const ANY_PROVIDER = (def) => providerFromDefinition(def);

// Where the process has a semaphore: the mapping of the object's file that
// holds its file offset (the private, writable one, where the kernel counts).
function semaphoreAddress(maps, object, offset) {
  if (offset === null) return null;
  const mine = maps.filter((m) => m.dev === object.dev && m.inode === object.inode
    && offset >= m.offset && offset + SEMAPHORE_BYTES <= m.offset + (m.end - m.start));
  const m = mine.find((x) => x.perms[1] === 'w') || mine[0];
  return m ? m.start + (offset - m.offset) : null;
}

// true/false: a tracer has (not) enabled it in this process now; null: it
// has no semaphore (its site runs whether traced or not), or it was unreadable.
function semaphoreState(memory, address) {
  if (!memory || address === null) return null;
  const b = memory.read(address, SEMAPHORE_BYTES);
  return b ? b.readUInt16LE(0) > 0 : null;
}

// The probes of a lib/usdt library: its definition's, each with its note.
function apiProbes(provider, notes) {
  return provider.probes.map(([name, ...types]) => {
    const note = notes.find((n) => n.provider === provider.name && n.name === name);
    return {
      provider: provider.name, module: provider.module, name, api: true, types, kinds: types.map(kindOf),
      format: note ? note.format : '', sites: note ? 1 : 0, note,
    };
  });
}

// The probes of another object: one per provider and name, however many sites.
function noteProbes(notes) {
  const byName = new Map();
  for (const n of notes) {
    const key = `${n.provider}\0${n.name}`;
    if (byName.has(key)) { byName.get(key).sites++; continue; }
    byName.set(key, {
      provider: n.provider, module: null, name: n.name, api: false, types: n.args.map(argumentType),
      kinds: n.args.map((a) => (a.signed ? 'int' : 'uint')), format: n.format, sites: 1, note: n,
    });
  }
  return [...byName.values()];
}

/**
 * -> { pid, objects: [{ path (as the process maps it), file (where a tracer
 *      reaches it from here), api, refused, probes: [{ provider, module,
 *      name, api, types, kinds, format, sites, enabled }] }] }
 *    API libraries first, then the other objects in the order of the map.
 *    null when the process is gone.
 */
function processProbes(pid) {
  const text = proc.readProcFile(pid, 'maps');
  if (text === null) return null;
  const maps = parseMaps(text);
  const exe = proc.readLink ? proc.readLink(`/proc/${pid}/exe`) : null;
  const objects = codeObjects(maps, exe).slice(0, LIMITS.MAX_SYMBOL_FILES);
  const verified = new Map(libraries.verifiedLibrariesOf(pid, ANY_PROVIDER).map((l) => [l.mapped, l]));
  let memory = null;
  try { memory = new ProcessMemory(pid, { budget: SEMAPHORE_BUDGET }); } catch (err) { /* gone, or not ours to read */ }
  const out = [];
  try {
    for (const o of objects) {
      const isLibrary = paths.isProbeLibraryName(path.basename(o.path));
      const lib = isLibrary ? verified.get(o.path) : null;
      const file = lib ? lib.path : libraries.reachablePath(pid, { path: o.path, range: o.range }) || mapFile(pid, o);
      const entry = { path: o.path, file, range: o.range, api: isLibrary, refused: null, probes: [] };
      if (isLibrary && (!lib || lib.refused)) {
        entry.refused = lib ? lib.refused : 'it could not be opened';
        out.push(entry);
        continue;
      }
      const found = objectNotes(mapFile(pid, o));
      if (found.refused) {
        // Not an ELF file nodetrace reads is nothing to list; a bad note is.
        if (isLibrary || !/not an ELF64/.test(found.refused)) { entry.refused = found.refused; out.push(entry); }
        continue;
      }
      if (!isLibrary && !found.notes.length) continue;
      entry.probes = isLibrary ? apiProbes(lib.provider, found.notes) : noteProbes(found.notes);
      for (const p of entry.probes) {
        p.enabled = semaphoreState(memory, semaphoreAddress(maps, o, p.note ? p.note.semaphoreOffset : null));
      }
      out.push(entry);
    }
  } finally {
    if (memory) memory.close();
  }
  out.sort((a, b) => Number(b.api) - Number(a.api));
  return { pid, objects: out };
}

module.exports = { processProbes, semaphoreAddress, apiProbes, noteProbes, ANY_PROVIDER };
