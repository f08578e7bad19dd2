'use strict';
// The reading a hit takes, in a worker thread of its own (lib/ebadf/
// hit-readers.js starts it, one per user whose processes hit): the files
// and memory of the hit's process are that user's, and however long they
// take to read, nodetrace's main thread goes on handling the other hits
// (and the watchdog's heartbeat). It keeps what it read of each file (the
// symbolizer's tables, V8's metadata) for the next hit of that user.
//
// Requests, one at a time: { id, op, ... } -> { id, value } | { id, error }
//   prepare   { pid }                    read the files a walk of pid needs
//   walk      { pid, tid, registers }    lib/v8's walk of a stopped thread
//   symbolize { snap, frames, root }     lib/symbolize.js names raw frames
//   walkCore  { core, tid, root }        the walk from a saved core
//   original  { frames, root }           a walk's JavaScript frames where their
//                                        scripts' source maps put them
//                                        (lib/source-maps.js, in that root)
const fs = require('fs');
const { parentPort, workerData } = require('worker_threads');
const { Symbolizer, liveElfFiles } = require('../symbolize');
const { openProcess } = require('../v8/process');
const { readMetadata } = require('../v8/metadata');
const { codeObjects, objectFiles } = require('../proc/code-objects');
const { walkCore } = require('./js-stack');
const { SourceMaps } = require('../source-maps');
const { atOriginal } = require('../v8/namer');
const { joinRunBudget } = require('../memory-budget');

// The run's one memory budget, the main thread's (lib/ebadf/hit-readers.js).
if (workerData && workerData.budget) joinRunBudget(workerData.budget, workerData.ledger);

const symbolizer = new Symbolizer({ cacheBytes: workerData && workerData.cacheBytes });
// V8's metadata by file identity: a node binary read once for every hit.
const metadata = new Map();
const MAX_METADATA_FILES = 16;

function identity(file) {
  try {
    const st = typeof file === 'string' ? fs.statSync(file) : null;
    return st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}` : null;
  } catch {
    return null;
  }
}

function cachedMetadata(file) {
  const key = identity(file);
  if (key && metadata.has(key)) return metadata.get(key);
  const found = readMetadata(file);
  if (key) {
    if (metadata.size >= MAX_METADATA_FILES) metadata.clear();
    metadata.set(key, found);
  }
  return found;
}

const ops = {
  prepare({ pid }) {
    const snap = symbolizer.snapshot(pid, { perfMap: false });
    let exe = '';
    try { exe = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { /* gone */ }
    for (const o of codeObjects(snap.maps, exe)) {
      for (const file of objectFiles(pid, o)) if (typeof file === 'string' && cachedMetadata(file)) break;
      const map = snap.maps.find((m) => m.dev === o.dev && m.inode === o.inode);
      if (map) symbolizer.elfFor(snap, map);
    }
    return { objects: codeObjects(snap.maps, exe).length };
  },

  walk({ pid, registers }) {
    let p;
    try {
      p = openProcess(pid, { symbolizer, readMetadata: cachedMetadata, sourceMapUrls: true });
    } catch (err) {
      return { error: `cannot read the memory of ${pid}: ${err.code || err.message}` };
    }
    try {
      const { frames, ended } = p.walk(registers);
      return { frames, ended, note: p.note, from: 'process' };
    } finally {
      p.close();
    }
  },

  symbolize({ snap, frames, root }) {
    // A container's files saved beside its core, where it may be gone.
    if (root) snap.elfFiles = (map) => [...liveElfFiles(snap, map), [{ root, path: map.path }, true]];
    return symbolizer.symbolize(snap, frames);
  },

  walkCore({ core, tid, root }) {
    return walkCore({ core, tid, root, symbolizer });
  },

  original({ frames, root }) {
    // (The maps parsed live in this worker's heap: workerData.mapBytes bounds them.)
    const bound = workerData && workerData.mapBytes ? { cacheBytes: workerData.mapBytes } : {};
    const maps = new SourceMaps({ root, ...bound });
    try {
      return frames.map((f) => {
        if (f.kind !== 'js') return f;
        const out = atOriginal(f, maps);
        return f.inlined ? { ...out, inlined: f.inlined.map((r) => atOriginal(r, maps)) } : out;
      });
    } finally {
      maps.close();
    }
  },
};

parentPort.on('message', (req) => {
  let reply;
  try {
    reply = { id: req.id, value: ops[req.op](req) };
  } catch (err) {
    reply = { id: req.id, error: String(err && err.message ? err.message : err).split('\n')[0] };
  }
  parentPort.postMessage(reply);
});
