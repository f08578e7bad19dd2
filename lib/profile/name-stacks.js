'use strict';
// Names the user frames of sampled stacks from a snapshot of the target
// (lib/symbolize.js: its memory map, the ELF symbols of its files, and V8's
// perf map opened only as a regular file of the target's user), then turns
// every frame into { name, category } (./frames.js). The tracer prints
// addresses only (raw stacks: capabilities.js rawUserStackEnv): bpftrace
// would open /tmp/perf-PID.map itself, following links (out of a
// container's root, too) and blocking on a FIFO.
const { userAddresses } = require('./parse');
const { userFrame, kernelFrame } = require('./frames');
const { profileFrame, inlinedFrame } = require('./js-frames');
const { demangleNames } = require('../demangle');

// DTrace names frames itself, mangled ("node`_ZN4node5StartEiPPc+0x58f"):
// demangled here in one batch.
function demangleTracerNames(stacks) {
  const mangled = new Set();
  for (const s of stacks) for (const f of s.user) {
    const m = /^[^`\s]+`(_Z[^+\s]*)/.exec(f);
    if (m) mangled.add(m[1]);
  }
  if (!mangled.size) return (f) => f;
  const names = demangleNames([...mangled]);
  return (f) => f.replace(/^([^`\s]+`)(_Z[^+\s]*)/, (all, mod, sym) => mod + (names.get(sym) || sym));
}

/**
 * @param {object} parsed from parseProfile()
 * @param {Symbolizer} symbolizer
 * @param {object|null} snap from symbolizer.snapshot(), or null (frames stay addresses)
 * @param {object} [o] { js: lib/profile/js-frames.js SampleNames, for stacks with a `chain` }
 * @returns {{ stacks: [{ tid, comm, frames: [{name, category, origin?}] (root first), count }],
 *            perfMap: { used, refused, path } }}
 */
function nameStacks(parsed, symbolizer, snap, { js = null } = {}) {
  const { pcs, returns } = userAddresses(parsed.stacks);
  const named = new Map();   // 'pc:0x..' / 'ret:0x..' -> frame
  const inV8 = new Set();    // keys of frames in V8's code, where a captured SFI names the frame
  const inJit = new Set();   // keys of frames in V8's generated code (not a builtin)
  let perfMapUsed = false;
  if (snap) {
    const a = symbolizer.symbolize(snap, pcs, { allPcs: true });
    const b = symbolizer.symbolize(snap, returns, { allReturnAddresses: true });
    const keep = (key, f) => {
      named.set(key, userFrame(f));
      if (isV8Code(f)) inV8.add(key);
      if (f && (f.kind === 'jit' || f.kind === 'js')) inJit.add(key);
    };
    pcs.forEach((addr, i) => keep('pc:' + addr, a.frames[i]));
    returns.forEach((addr, i) => keep('ret:' + addr, b.frames[i]));
    perfMapUsed = a.perfMapUsed || b.perfMapUsed;
  }
  const demangled = demangleTracerNames(parsed.stacks);
  let v8Named = 0;
  let inlinedShown = 0;
  let inlinedUnknown = 0;
  const readsInlining = Boolean(js && js.inlining) && !js.inliningNote;
  let leafCallers = 0;
  const stacks = parsed.stacks.map((s) => {
    const chain = js && s.chain ? js.chain(s.chain) : null;
    let unknown = false;
    // A native leaf that keeps no frame pointer (V8's ieee754::sin on its
    // fast path, a function's first instruction): the walk from fp starts at
    // its caller's frame and so skips its caller, a JavaScript function.
    // Then the frame fp points to is a JavaScript one (the chain has its
    // function at depth 0), the leaf is no V8 code, and the return address
    // at the stack pointer (profile-js.bt's LEAF_RET) is in V8's code: that
    // is the caller, put back between them, and depth k of the chain names
    // frame k + 1. Node 20: 97 of 463 sin samples went to the caller's
    // caller (test/profile.test.js, "a frameless leaf").
    const leafFrameless = Boolean(s.leafRet && chain && s.user.length && /^0x/i.test(s.user[0])
      && !inV8.has('pc:' + s.user[0].toLowerCase()) && inV8.has('ret:' + s.leafRet) && chain.get(0));
    if (leafFrameless) leafCallers += s.count;
    const raw = leafFrameless ? [s.user[0], s.leafRet, ...s.user.slice(1)] : s.user;
    const user = raw.map(demangled).flatMap((f, i) => {
      const key = (i === 0 ? 'pc:' : 'ret:') + f.toLowerCase();
      const depth = leafFrameless ? i - 1 : i;
      // A JavaScript frame named from V8's metadata (lib/profile/js-frames.js),
      // where the frame runs V8's code; the perf map's name otherwise.
      const fromV8 = chain && depth >= 0 && inV8.has(key) ? chain.get(depth) : null;
      if (fromV8) {
        v8Named += s.count;
        // Above it (leaf first here), the functions its code inlined there.
        const inlined = js.inlinedAt(s.chain, depth, f, { sfi: fromV8.sfi, returnAddress: i > 0 });
        if (inlined && inlined.length) inlinedShown += s.count;
        // Generated code that is not the function's code now (a loop V8
        // compiled while it ran: on-stack replacement; or code replaced
        // since): what it inlined is not known.
        if (!inlined && readsInlining && inJit.has(key)) unknown = true;
        // (Each where its script's source map puts it, if it has one.)
        return [...(inlined || []).map((r) => inlinedFrame(js.original(r))), profileFrame(js.original(fromV8))];
      }
      return [named.get(key) || userFrame({ kind: /^0x/i.test(f) ? 'unknown' : 'named', text: f, module: '' })];
    });
    if (unknown) inlinedUnknown += s.count;
    const kernel = s.kernel.map(kernelFrame);
    return { tid: s.tid, comm: s.comm, frames: [...kernel, ...user].reverse(), count: s.count,
      ...(s.ongoing ? { ongoing: true } : {}) };
  });
  const pm = snap && snap.perfMap;
  return {
    stacks,
    perfMap: { used: perfMapUsed, path: pm ? pm.path : null, refused: pm && pm.refused ? pm.refused : null },
    v8: js ? {
      used: v8Named > 0, leafCallers, note: js.limitation || null,
      inlining: { read: readsInlining, shown: inlinedShown, unknown: inlinedUnknown, note: js.inliningNote || null },
      sourceMaps: js.sourceMaps ? js.sourceMaps.summary() : null,
    } : null,
  };
}

// Where V8's code runs: its generated code (anonymous executable memory),
// its builtins (the interpreter's among them), or code in a file without
// symbols there (a stripped libnode's builtins). Also code that the last
// snapshot finds in anonymous memory no longer executable, or in none: the
// thread ran there when sampled, so it changed since, and what does that
// while a process runs is V8 freeing a code page after a compaction
// evacuated it (decommitted in its code range, or unmapped); C++ runs from
// files, and Node never unloads one. test/profile.test.js, "forced compactions".
function isV8Code(f) {
  return Boolean(f) && (f.kind === 'jit' || f.kind === 'js' || f.kind === 'unmapped' || (f.symbol && /^Builtins_/.test(f.symbol))
    || (f.kind === 'unknown' && (!f.module || /^libnode\.so/.test(f.module))));
}

module.exports = { nameStacks, isV8Code };
