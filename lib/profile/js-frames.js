'use strict';
// JavaScript frames of `profile` named with no flag on the target, from
// what d-scripts/profile-js.bt captures at each sample of every thread:
// per frame whose slots hold a JavaScript function, its SharedFunctionInfo,
// kept in two maps keyed by a running hash of the sample's chain
// (@js_prev[HASH] = the hash before, @js_sfi[HASH] = DEPTH << 48 | SFI) and
// the chain's last hash in the sample's key. Each SFI is named each time it
// is printed (every second), while the process runs: SFIs move only in
// compaction, and lib/v8/namer.js checks an SFI's map again before it uses
// a cached name (docs/v8-frames.md).
const fs = require('fs');
const { parseMaps } = require('../symbolize');
const { readProcText } = require('../proc/read-bounded');
const { findV8Object } = require('../v8/process');
const { layoutFrom } = require('../v8/metadata');
const { commandV8Object } = require('../v8/command-object');
const { ProcessMemory } = require('../v8/memory');
const { V8Namer, atOriginal } = require('../v8/namer');
const { SourceMaps } = require('../source-maps');
const { InliningReader, inliningLayout, dispatchLocationFor, inlinedAt } = require('../v8/inlining');
const { dispatchArguments } = require('../v8/dispatch-table');
const { safeText } = require('../terminal-safe');

const DEPTH_SHIFT = 48n;
const SFI_MASK = (1n << DEPTH_SHIFT) - 1n;
// Frames of one chain followed back at most (the program walks 64).
const MAX_CHAIN = 256;
const MEMORY_BUDGET = 512 * 1024 * 1024;
// What is kept at most: a target's own memory decides what the program
// captures, and a hostile one can make every word look like a new SFI (the
// kernel's maps are bounded too: mapKeysEnv). Past these, new
// entries are dropped: their frames stay unnamed, never misnamed.
const MAX_SFIS = 100000;
const MAX_ENTRIES = 1000000;

/** Pure: a printed map line "@js_sfi[-123]: 456" -> { map, key (BigInt, unsigned), value (BigInt) } or null. */
function parseJsLine(line) {
  const m = /^@(js_sfi|js_prev|js_code)\[(-?\d+)\]: (-?\d+)$/.exec(String(line).trim());
  if (!m) return null;
  return { map: m[1], key: BigInt.asUintN(64, BigInt(m[2])), value: BigInt.asUintN(64, BigInt(m[3])) };
}

/**
 * What the program needs to capture a process's JavaScript frames ->
 * { shared, codeArguments (CODE and, V8 13+, DISPATCH_*: each frame's code),
 * v8: version text, ... } or { note } (one line: why JavaScript is named
 * from the perf map only). Reads V8's metadata (and V8 13+'s dispatch
 * table's place) from the process's node or libnode; nothing of its memory.
 */
function jsFramesLayout(pid) {
  let maps = [];
  let exe = '';
  maps = parseMaps(readProcText(`/proc/${pid}/maps`) || '');   // '': gone
  try { exe = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { /* gone */ }
  const v8 = findV8Object({ pid, maps, exePath: exe });
  if (!v8) return { note: 'no mapped object of the process carries V8\'s postmortem metadata: JavaScript is named from the perf map only' };
  const layout = layoutFrom(v8.symbols);
  if (layout.unsupported) return { note: `${layout.unsupported}: JavaScript is named from the perf map only` };
  const inlining = inliningOf(layout, v8.symbols, v8.source);
  return {
    shared: layout.jsFunction.shared, codeArguments: inlining.codeArguments, dispatch: inlining.dispatch,
    inliningNote: inlining.note,
    v8: layout.versionText, object: v8.object, layout, symbols: v8.symbols,
  };
}

// Where a JSFunction keeps its code (V8 13+: its handle, and where the
// dispatch table it leads into is), where what it inlined can be read back
// (lib/v8/inlining.js): the programs' arguments, else { CODE: 0 } and why
// not (one line). `file`: V8's ELF file (a path, or { root, path }).
function inliningOf(layout, symbols, file) {
  const dispatch = dispatchLocationFor(layout, file);
  const inlining = inliningLayout(layout, symbols, { dispatch });
  if (inlining.unsupported) return { codeArguments: { CODE: 0 }, dispatch: null, note: inlining.unsupported };
  return { codeArguments: { CODE: inlining.code, ...dispatchArguments(dispatch) }, dispatch, note: null };
}

/**
 * -c: what the program needs to capture the JavaScript frames of a command
 * not started yet -> { shared, codeArguments, v8, binary } or { note } (one line, as
 * jsFramesLayout's). Reads V8's metadata from the file it will run
 * (lib/tracer/command-target.js resolveCommand's binary: root's own choice)
 * or the libnode it links (lib/v8/command-object.js): read, never run here.
 * Once it runs, openCommandJsFrames checks that the process's own metadata
 * agrees before anything is named.
 */
function commandJsFramesLayout(binary, { env = process.env } = {}) {
  const v8 = commandV8Object(binary, { env });
  if (!v8) return { note: `${binary} carries no V8 postmortem metadata, nor a libnode it links (not node's executable, or a script): JavaScript is named from the perf map only` };
  const layout = layoutFrom(v8.symbols);
  if (layout.unsupported) return { note: `${layout.unsupported}: JavaScript is named from the perf map only` };
  return { shared: layout.jsFunction.shared, codeArguments: inliningOf(layout, v8.symbols, v8.file).codeArguments,
    v8: layout.versionText, binary };
}

/**
 * Opens what naming a process's samples takes -> { shared (the program's
 * SHARED argument), codeArguments, names: SampleNames } or { note } (one
 * line: why JavaScript is named from the perf map only). `sourceMaps`:
 * frames are shown where their scripts' source maps put them (read inside
 * the process's own root: lib/source-maps.js).
 */
function openJsFrames(pid, { sourceMaps = true } = {}) {
  const found = jsFramesLayout(pid);
  if (found.note) return found;
  let memory;
  try {
    // (Naming thousands of functions reads their scripts' line ends: more than the default budget.)
    memory = new ProcessMemory(pid, { budget: MEMORY_BUDGET });
  } catch (err) {
    return { note: `cannot read the memory of ${pid} (${err.code || err.message}): JavaScript is named from the perf map only` };
  }
  const namer = new V8Namer({ memory, layout: found.layout, sourceMapUrls: sourceMaps });
  const inlining = new InliningReader({ heap: namer.heap, layout: found.layout, symbols: found.symbols, namer,
    dispatch: found.dispatch });
  const maps = sourceMaps ? new SourceMaps({ root: `/proc/${pid}/root` }) : null;
  return { shared: found.shared, codeArguments: found.codeArguments,
    names: new SampleNames(namer, memory, inlining, { sourceMaps: maps }) };
}

/**
 * -c: opens the command's process for naming once it runs the planned
 * binary (bpftrace forks it, then execs it once its probes are attached:
 * before that, /proc/PID/mem would be the fork's, bpftrace's) ->
 * { names } | { note } | { wait: true } (not yet: ask again).
 * `planned`: commandJsFramesLayout's result; its SHARED and code arguments
 * must be the process's own, else what was captured is not what the namer reads.
 */
function openCommandJsFrames(pid, planned, { sourceMaps = true } = {}) {
  if (!pid) return { wait: true };
  let exe;
  let binary;
  try {
    exe = fs.statSync(`/proc/${pid}/exe`);
    binary = fs.statSync(planned.binary);
  } catch {
    return { wait: true };
  }
  if (exe.dev !== binary.dev || exe.ino !== binary.ino) return { wait: true };
  const opened = openJsFrames(pid, { sourceMaps });
  const said = (x) => Object.entries(x.codeArguments).map(([k, v]) => `${k} ${v}`).join(', ');
  if (opened.note || (opened.shared === planned.shared && said(opened) === said(planned))) return opened;
  opened.names.close();
  return { note: `the command's V8 keeps a function's SharedFunctionInfo at ${opened.shared} and its code at ${said(opened)}, not ${planned.shared} and ${said(planned)} as its executable said: JavaScript is named from the perf map only` };
}

// Two namer results for one function: the same name at the same place.
function sameFunction(a, b) {
  return a.name === b.name && a.file === b.file && a.line === b.line && a.column === b.column;
}

class SampleNames {
  // namer, memory and inlining (lib/v8/inlining.js): null until attach()
  // (-c: the command runs its own program); sourceMaps (lib/source-maps.js
  // SourceMaps): where frames are shown at their original place, or null.
  constructor(namer = null, memory = null, inlining = null, { sourceMaps = null } = {}) {
    this.namer = null;
    this.memory = null;
    this.inlining = null;
    this.sourceMaps = null;
    this.originals = new WeakMap();   // namer result -> at its original place
    this.limitation = null;
    this.inliningNote = null;
    this.codeAt = new Map();  // hash -> what its frame's code inlined (lib/v8/inlining.js describe), or null
    this.prev = new Map();    // hash -> hash before
    this.sfiAt = new Map();   // hash -> { depth, sfi }
    this.names = new Map();   // sfi -> name result (or null), as last named
    this.chains = new Map();  // hash -> Map(depth -> name result)
    this.chainCodes = new Map();  // hash -> Map(depth -> what its code inlined: codeAt's record)
    this.dropped = 0;          // entries past the bounds above
    this.ambiguous = 0;        // hashes printed under two functions' names
    if (namer) this.attach(namer, memory, inlining, { sourceMaps });
  }

  attach(namer, memory, inlining = null, { sourceMaps = null } = {}) {
    this.namer = namer;
    this.memory = memory;
    this.inlining = inlining;
    this.sourceMaps = sourceMaps;
    this.limitation = namer.limitation();
    this.inliningNote = inlining ? inlining.limitation() : null;
  }

  /** A line the program printed (while tracing, or its maps at the end). */
  take(line) {
    const e = parseJsLine(line);
    if (!e) return false;
    if (this.prev.size >= MAX_ENTRIES || this.sfiAt.size >= MAX_ENTRIES
      || this.codeAt.size >= MAX_ENTRIES) { this.dropped++; return true; }
    if (e.map === 'js_prev') this.prev.set(e.key, e.value);
    else if (e.map === 'js_code') {
      // Read as printed (code moves and is freed): the hash holds the code's
      // address, so it stands for this code; printed again where it can no
      // longer be read, it keeps what was read.
      let record = null;
      try { record = this.inlining ? this.inlining.describe(e.value) : null; } catch { record = null; }
      if (record || !this.codeAt.has(e.key)) this.codeAt.set(e.key, record);
    } else {
      // Named as printed (within a second of its capture), kept with the
      // entry: after a compaction another function's SFI can sit at the
      // same address, and a name kept by address would name it wrongly.
      const sfi = e.value & SFI_MASK;
      const name = this.name(sfi);
      // A chain's hash is of its SFIs' addresses: printed again under
      // another function's name, the hash stood for two chains (another
      // SFI took that address at that depth), and its samples, merged in
      // one key, cannot be told apart: named by neither, never wrongly.
      const was = this.sfiAt.get(e.key);
      // Printed again where nothing can be named now (the process has
      // exited: bpftrace prints the last second's entries at END; or the
      // SFI moved since): the hash stands for the same addresses at the same
      // depths, and keeps the name it had while they could be read.
      if (was && !name && (was.name || was.ambiguous)) return true;
      const ambiguous = Boolean(was && (was.ambiguous || (was.name && name && !sameFunction(was.name, name))));
      if (ambiguous && !was.ambiguous) this.ambiguous++;
      this.sfiAt.set(e.key, { depth: Number(e.value >> DEPTH_SHIFT), sfi, name: ambiguous ? null : name, ambiguous });
    }
    return true;
  }

  // The namer is asked again each time (it re-reads the SFI's map and
  // fields, and keeps what it named by address only while they match).
  name(sfi) {
    if (!this.namer) return null;
    if (!this.names.has(sfi) && this.names.size >= MAX_SFIS) { this.dropped++; return null; }
    let r = null;
    try { r = this.namer.nameSfi(sfi); } catch { r = null; }
    this.names.set(sfi, r);
    return r;
  }

  /** The names of a sample's frames: Map(depth -> namer result), empty for hash 0. */
  chain(hash) {
    const h0 = BigInt.asUintN(64, BigInt(hash));
    if (this.chains.has(h0)) return this.chains.get(h0);
    const out = new Map();
    const codes = new Map();
    let h = h0;
    for (let i = 0; h !== 0n && i < MAX_CHAIN; i++) {
      const at = this.sfiAt.get(h);
      if (!at) break;
      if (at.name) out.set(at.depth, at.name);
      if (this.codeAt.get(h)) codes.set(at.depth, this.codeAt.get(h));
      if (!this.prev.has(h)) break;
      h = this.prev.get(h);
    }
    this.chains.set(h0, out);
    this.chainCodes.set(h0, codes);
    return out;
  }

  /**
   * The functions inlined where frame `depth` of the sample whose chain
   * ends at `hash` ran, innermost first ([] none) -> [namer result | null],
   * or null when not known (no code read, the address not in it, or the
   * code not that frame's function's). `frame`: the frame as the program
   * printed it, an address ("0x..."; below the sampled one, a return
   * address); `sfi`: the frame's SharedFunctionInfo as named;
   * `returnAddress`: whether the frame's address is a return address (all
   * but the sampled pc; a frameless leaf's caller, put back at depth 0, is one).
   */
  inlinedAt(hash, depth, frame, { sfi = null, returnAddress = depth > 0 } = {}) {
    if (!/^0x[0-9a-f]+$/i.test(frame)) return null;
    this.chain(hash);
    const record = this.chainCodes.get(BigInt.asUintN(64, BigInt(hash))).get(depth);
    return inlinedAt(record, BigInt(frame), { returnAddress, sfi });
  }

  /**
   * A namer result where its script's source map puts it (file, line and
   * column the original's, `generated` V8's), once a result; the result as
   * it is without a map. Read at the report, not as samples are named.
   */
  original(r) {
    if (!r || !this.sourceMaps) return r;
    if (!this.originals.has(r)) this.originals.set(r, atOriginal(r, this.sourceMaps));
    return this.originals.get(r);
  }

  close() {
    if (this.memory) this.memory.close();
    if (this.namer) this.namer.close();
    if (this.sourceMaps) this.sourceMaps.close();
  }
}

/**
 * Pure: a namer result as profile names a frame -> { name, category, origin? }:
 * `hotSpin /app/hot.js:25:17` as the perf map's names read; V8's builtins
 * (`map (native)`) are V8's.
 */
function profileFrame(r) {
  const shown = r.name === null ? '(unknown)' : r.name || '(anonymous)';
  if (r.kind === 'builtin' || r.file === null) return { name: `${shown} (native)`, category: 'v8' };
  const where = r.line === null ? r.file : `${r.file}:${r.line}:${r.column}`;
  const origin = /^node:/.test(r.file) ? 'node' : /[/\\]node_modules[/\\]/.test(r.file) ? 'node_modules' : 'app';
  // At its original place (a source map): where V8 runs it, kept for JSON.
  const g = r.generated;
  return { name: `${shown} ${where}`, category: 'js', origin, ...(g ? { generated: `${g.file}:${g.line}:${g.column}` } : {}) };
}

/**
 * Pure: a function V8 inlined where a frame ran (lib/v8/inlining.js), as
 * profile names a frame: by the name it has where it runs on its own
 * (`scale /app/x.js:10:15`; unnamed: `(unknown) (inlined)`), marked
 * `inlined: true`. One function, one name: a function that ran both
 * inlined and not is one row in profile's tables (it was two, `json
 * (inlined)` 29.1% and `json` 4.2%), which say how much of it ran inlined;
 * --folded marks the frame `_[i]`, pprof puts it in its caller's location
 * (lib/profile/report.js, folded.js, pprof.js).
 */
function inlinedFrame(r) {
  if (!r) return { name: '(unknown) (inlined)', category: 'js', origin: 'app', inlined: true };
  return { ...profileFrame(r), inlined: true };
}

/** A function inlined, as a line of text shows it (loop --stacks): `scale (inlined) /app/x.js:10:15`. */
function inlinedText(r) {
  if (!r) return '(unknown) (inlined)';
  const shown = r.name === null ? '(unknown)' : r.name || '(anonymous)';
  return profileFrame({ ...r, name: `${shown} (inlined)` }).name;
}

/**
 * The session options of a run whose program captures SFIs (a plan with
 * details.jsFrames: profile-js.bt, loop.bt --stacks, offcpu.bt with SHARED):
 * they are named as the program prints them, every second, while the
 * process runs; its lines come through onLine, kept in run.lines for the
 * report to split (lib/tracer/output-formats.js splitAtEndMarker). Sets
 * run.js (SampleNames, closed by the caller) and run.lines.
 * -c (no plan.target; details.jsFrames.command: commandJsFramesLayout's
 * result): the command's process is opened once it runs its own program,
 * its PID from `targetPid()` (lib/tracer/run-command.js: null until known,
 * or once it has exited).
 */
function jsFramesSession(pl, run, { targetPid = () => null } = {}) {
  if (!pl.details || !pl.details.jsFrames) return {};
  const planned = pl.details.jsFrames.command;
  if (!pl.target && !planned) return {};
  const say = (note) => process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
  run.lines = [];
  let waiting = false;
  if (planned) {
    run.js = new SampleNames();
    waiting = true;
  } else {
    const opened = openJsFrames(pl.target.pid, { sourceMaps: pl.details.jsFrames.sourceMaps !== false });
    if (opened.note) say(opened.note);
    run.js = opened.names || null;
  }
  return {
    onLine: (item) => {
      const text = typeof item === 'string' ? item : JSON.stringify(item);
      run.lines.push(text);
      if (!run.js) return;
      // (Asked at each line that holds an SFI, until the command runs its program.)
      if (waiting && parseJsLine(text)) {
        const opened = openCommandJsFrames(targetPid(), planned,
          { sourceMaps: pl.details.jsFrames.sourceMaps !== false });
        if (!opened.wait) {
          waiting = false;
          if (opened.note) say(opened.note);
          else run.js.attach(opened.names.namer, opened.names.memory, opened.names.inlining,
            { sourceMaps: opened.names.sourceMaps });
        }
      }
      run.js.take(text);
    },
  };
}

module.exports = {
  MAX_SFIS, jsFramesSession, openJsFrames, jsFramesLayout, commandJsFramesLayout, openCommandJsFrames, SampleNames,
  parseJsLine, profileFrame, inlinedFrame, inlinedText,
};
