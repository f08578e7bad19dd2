'use strict';
// The stack of the thread whose call failed, JavaScript frames named with
// no flag on the target: walked with lib/v8 while the process is stopped at
// the hit (registers from gdb, memory from /proc/PID/mem), or from the core
// when the tracer holds the process under ptrace (DTrace's ustack(): gdb
// cannot attach then). The perf map, when the process writes one, is a
// cross-check: a frame both name is compared by its address.
const { openCoreForWalk } = require('../v8/core');

// gdb's attach for the registers takes 70-140 ms on an idle host
// (docs/v8-frames.md); a loaded one is given far more before giving up.
const REGISTERS_TIMEOUT_MS = 15000;

/**
 * Walks thread `tid` of a saved core (`root`: a container's files beside
 * it) -> { frames, ended, note, from } or { error } (one line). (A stopped
 * process is walked in its user's worker: hit-reader-worker.js.)
 */
function walkCore({ core, tid, root = null, symbolizer }) {
  let c;
  try {
    // (Each script's source map reference kept: the frames are put where
    // their maps say once the process runs again, hit-reader-worker.js.)
    c = openCoreForWalk(core, symbolizer ? { root, symbolizer, sourceMapUrls: true } : { root, sourceMapUrls: true });
  } catch (err) {
    return { error: err.message.split('\n')[0] };
  }
  try {
    const thread = c.threads.find((t) => t.tid === tid);
    if (!thread) return { error: `the core holds no thread ${tid}` };
    const { frames, ended } = c.walk(thread.registers);
    return { frames, ended, note: c.note, from: 'core' };
  } finally {
    c.close();
  }
}

// A perf map's name: "JS:*closeTwice /app/x.js:38:20", "LazyCompile:~f file:..."
// (V8's tier marks * ~ ^ + before the name), or a bare name.
function perfMapFunction(symbol) {
  const m = /^(?:[A-Za-z]+:)?[*~^+]?(.*?)(?: \S*:\d+(?::\d+)?)?$/.exec(String(symbol));
  return m ? m[1] : String(symbol);
}

/**
 * Pure: the walk's JavaScript frames against the perf map's names of the
 * same addresses (lib/symbolize.js frames, kind 'js') -> { compared, differ: [{ walk, perfMap }] }.
 */
function crossCheck(walkFrames, perfFrames) {
  const byAddress = new Map();
  for (const f of perfFrames || []) if (f.kind === 'js' && typeof f.addr === 'number') byAddress.set(f.addr, f.symbol);
  let compared = 0;
  const differ = [];
  for (const f of walkFrames || []) {
    if (f.kind !== 'js' || f.name === null || f.name === undefined || !byAddress.has(f.pc)) continue;
    compared++;
    // (V8 writes an anonymous function's inferred name in the map, as the walk names it.)
    if (perfMapFunction(byAddress.get(f.pc)) !== f.name) differ.push({ walk: f.text, perfMap: byAddress.get(f.pc) });
  }
  return { compared, differ };
}

module.exports = { walkCore, crossCheck, perfMapFunction, REGISTERS_TIMEOUT_MS };
