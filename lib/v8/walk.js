'use strict';
// A frame-pointer walk of one thread of a stopped process or a core: from
// its registers (rip, rbp) up the chain of saved frame pointers, each frame
// named as native code (the symbolizer) or as V8's: a JavaScript function
// (the namer, from the frame's function slot), or a frame V8 marks with its
// type (entry, exit, stub, construct, internal...: the marker in the
// context slot) and the builtin whose code it runs.
//
// Bounded: at most maxDepth frames; a frame pointer that does not climb
// the stack (a cycle), jumps further than MAX_FRAME_BYTES, or points at
// nothing readable ends the walk, and `ended` says which. V8's code and
// Node's C++ keep frame pointers; a native function without one (libc's
// system call wrappers) hides its caller, as in any frame-pointer walk.
//
// Two passes: the chain first (pure reads), then every pc classified at
// once (classify: pcs -> [{ kind: 'native'|'jit'|'unmapped'|'unknown',
// symbol, module, offset }], lib/symbolize.js's frames: see nativeClassifier),
// then names.
const { inlinedAt } = require('./inlining');
const { atOriginal } = require('./namer');

const MAX_DEPTH = 256;
const MAX_FRAME_BYTES = 8 * 1024 * 1024;
// A frame marker is a frame type shifted left by one (a "Smi" without the
// 32-bit shift); V8 has fewer than 64 frame types.
const MAX_FRAME_TYPE = 64;
// Builtins whose frames are a JavaScript function's own, not a frame of theirs.
const INTERPRETER = /^(InterpreterEntryTrampoline|InterpreterEnterAtBytecode|InterpreterEnterAtNextBytecode|InterpreterOnStackReplacement.*|BaselineOutOfLinePrologue.*|.*Handler)$/;

/**
 * @param {object} o
 * @param {object} o.memory     lib/v8/memory.js
 * @param {object} o.registers  { rip, rbp, rsp, fsBase? } (numbers; fsBase: the thread pointer)
 * @param {Function} o.classify pcs (numbers; return addresses already minus one) -> frames, see above
 * @param {object} [o.namer]    lib/v8/namer.js V8Namer (absent: JavaScript frames stay addresses)
 * @param {object} [o.layout]   the namer's layout (frame offsets, frame types)
 * @param {Function} [o.isCode] address -> whether it lies in mapped code (the
 *   top frame's return address is then also looked for at rsp)
 * @param {object} [o.inlining] lib/v8/inlining.js InliningReader: a compiled
 *   JavaScript frame gets `inlined`, the functions its code inlined where it ran
 * @param {object} [o.sourceMaps] lib/source-maps.js SourceMaps: JavaScript
 *   frames where their scripts' source maps put them (the namer then gives
 *   each script's reference: V8Namer's sourceMapUrls)
 * @returns {{ frames: object[], ended: string }}
 */
function walkStack({ memory, registers, classify, namer, layout, isCode, inlining = null, sourceMaps = null,
  maxDepth = MAX_DEPTH }) {
  const word = (a) => {
    const b = memory.read(a, 8);
    return b ? b.readBigUInt64LE(0) : null;
  };
  let { chain, ended } = followChain(word, registers.rip, registers.rbp, { layout, maxDepth });
  // Stopped in a native function that keeps no frame pointer (libc's
  // system call wrappers): rbp is its caller's frame, or another value, and
  // its return address is the first word from rsp up that points into code
  // (within TOP_SCAN_WORDS). The caller's frame pointer is then rbp if it
  // leads on, or else the word the function saved it in below its return
  // address. Tried only when the chain from rbp does not lead into code.
  if (isCode && Number.isSafeInteger(registers.rsp) && (chain.length < 2 || !isCode(chain[1].pc))) {
    const rescued = fromStackTop(word, registers, isCode, { layout, maxDepth });
    if (rescued) ({ chain, ended } = { chain: [chain[0], ...rescued.chain], ended: rescued.ended });
  }

  // A return address is looked up as the call before it (pc - 1).
  const lookUp = (part, first) => classify(part.map((f, i) => (i === 0 && first ? f.pc : f.pc - 1)))
    .map((n, i) => ((i > 0 || !first) && n && typeof n.offset === 'number' ? { ...n, offset: n.offset + 1 } : n));
  let natives = lookUp(chain, true);
  // Native code without frame pointers between the thread's top and V8's
  // frames (a distribution's libuv, built without them): the chain breaks
  // there before any of V8's frames. The walk goes on from the next frame
  // record further up the stack, and marks the gap.
  if (isCode && !natives.some(isV8Code) && !/^the outermost frame$|^stopped at/.test(ended)) {
    const resumed = resumeAfterGap(word, chain, registers, isCode, { layout, maxDepth: maxDepth - chain.length });
    if (resumed) {
      resumed.chain[0].afterGap = true;
      const more = lookUp(resumed.chain, false);
      chain = chain.concat(resumed.chain);
      natives = natives.concat(more);
      ended = resumed.ended;
    }
  }
  const frames = chain.map((f, i) => {
    const frame = nameFrame(f, natives[i] || { kind: 'unknown' }, namer, layout);
    if (f.afterGap) frame.afterGap = true;
    if (inlining && frame.kind === 'js' && frame.tier === 'compiled') {
      const inlined = inlinedInFrame(inlining, f, frame, i > 0, registers.fsBase);
      if (inlined) frame.inlined = inlined.map((r) => atOriginal(r, sourceMaps));
    }
    return frame.kind === 'js' ? atOriginal(frame, sourceMaps) : frame;
  });
  return { frames, ended };
}

// The functions optimized code inlined where a frame ran, innermost first
// (lib/v8/inlining.js), or null: none, or not known (the function's code
// now is not the code that ran: on-stack replacement, deoptimized since).
// (fsBase: the thread's pointer, where V8 14 finds its isolate's dispatch table.)
function inlinedInFrame(inlining, f, frame, returnAddress, fsBase) {
  const at = inlinedAt(inlining.describe(inlining.codeOf(f.function, { fsBase })), f.pc,
    { returnAddress, sfi: frame.sfi });
  return at && at.length ? at : null;
}

function isV8Code(n) {
  return Boolean(n && (n.kind === 'jit' || builtinName(n.symbol) !== null));
}

// How far up the stack a frame record is looked for past a gap, and how
// many frames it must lead on through (code at every return address) to
// be believed.
const GAP_SCAN_WORDS = 2048;
const GAP_MIN_FRAMES = 3;

function resumeAfterGap(word, chain, { rsp }, isCode, { layout, maxDepth }) {
  if (maxDepth < GAP_MIN_FRAMES || !Number.isSafeInteger(rsp)) return null;
  const last = chain[chain.length - 1];
  let from = Math.max(rsp, last && last.fp ? last.fp + 16 : 0);
  from -= from % 8;
  for (let i = 0; i < GAP_SCAN_WORDS; i++) {
    const slot = from + 8 * i;
    const saved = word(slot);
    if (saved === null) return null;
    const next = Number(saved);
    if (next <= slot || next - slot > MAX_FRAME_BYTES) continue;
    const ret = word(slot + 8);
    if (ret === null || !isCode(Number(ret))) continue;
    const rest = followChain(word, Number(ret), next, { layout, maxDepth });
    // The record's own return address is left out: a record an earlier
    // call left (a function without a frame pointer called another that
    // saved it) looks the same, and its return address is that call's.
    // What it points to is a frame of the live chain either way.
    if (rest.chain.length > GAP_MIN_FRAMES && rest.chain.slice(0, GAP_MIN_FRAMES).every((f) => isCode(f.pc))) {
      return { chain: rest.chain.slice(1), ended: rest.ended };
    }
  }
  return null;
}

const TOP_SCAN_WORDS = 64;

function fromStackTop(word, { rsp, rbp }, isCode, { layout, maxDepth }) {
  const words = [];
  for (let i = 0; i < TOP_SCAN_WORDS; i++) {
    const w = word(rsp + 8 * i);
    if (w === null) return null;
    words.push(w);
    const ret = Number(w);
    if (!isCode(ret)) continue;
    const slot = rsp + 8 * i;
    const leads = (fp) => fp > slot && fp - slot < MAX_FRAME_BYTES && (() => {
      const r = word(fp + 8);
      return r !== null && isCode(Number(r));
    })();
    let fp = Number.isSafeInteger(rbp) && leads(rbp) ? rbp : null;
    for (let j = i - 1; fp === null && j >= 0; j--) if (leads(Number(words[j]))) fp = Number(words[j]);
    const rest = followChain(word, ret, fp || 0, { layout, maxDepth: maxDepth - 1 });
    rest.chain[0].fromStackTop = true;
    return rest;
  }
  return null;
}

// The saved frame pointers from (pc, fp) up: [{ pc, fp, context, function }].
function followChain(word, pc, fp, { layout, maxDepth }) {
  const chain = [];
  let ended = `stopped at ${maxDepth} frames`;
  for (let depth = 0; depth < maxDepth; depth++) {
    if (!Number.isSafeInteger(pc) || pc < 4096) { ended = 'a return address that is no code'; break; }
    const frame = { pc, fp };
    chain.push(frame);
    if (!fp) { ended = 'the outermost frame (no frame pointer)'; break; }
    const saved = word(fp);
    const ret = word(fp + 8);
    if (layout && saved !== null) {
      frame.context = word(fp + layout.frame.context);
      frame.function = word(fp + layout.frame.function);
    }
    if (saved === null || ret === null) { ended = `an unreadable frame pointer (0x${fp.toString(16)})`; break; }
    if (saved === 0n) { ended = 'the outermost frame'; break; }
    const next = Number(saved);
    if (next <= fp) { ended = 'a frame pointer that does not climb the stack (a cycle or a wild pointer)'; break; }
    if (next - fp > MAX_FRAME_BYTES) { ended = 'a frame pointer beyond the stack (a wild pointer)'; break; }
    pc = Number(ret);
    fp = next;
  }
  return { chain, ended };
}

function builtinName(symbol) {
  return symbol && symbol.startsWith('Builtins_') ? symbol.slice('Builtins_'.length) : null;
}

function nameFrame(f, native, namer, layout) {
  const frame = {
    pc: f.pc, fp: f.fp, kind: 'native', module: native.module || '', symbol: native.symbol || null,
    offset: native.offset === undefined ? null : native.offset,
  };
  const builtin = builtinName(native.symbol);
  // V8's code: generated (jit), a builtin, or an address in a file without
  // a symbol there (a stripped libnode's builtins): the frame's own slots
  // say. A marker is believed only in V8's own code (a C++ frame may hold
  // any small number there).
  const knownV8 = native.kind === 'jit' || builtin !== null;
  if (namer && (knownV8 || native.kind === 'unknown')) {
    const marker = markerType(f.context);
    if (marker !== null && knownV8) {
      frame.kind = 'v8';
      frame.frameType = layout.frameTypes[marker] || `frame type ${marker}`;
      frame.builtin = builtin;
      frame.text = `[${frame.frameType}]${builtin ? ' ' + builtin : ''}`;
      return frame;
    }
    // A marker in code not known to be V8's: neither trusted nor ignored
    // (the function slot of V8's internal frames holds the callee).
    const js = marker === null && f.function !== undefined && f.function !== null ? namer.nameFunction(f.function)
      : null;
    if (js) {
      Object.assign(frame, js, { kind: 'js', jsKind: js.kind });
      if (builtin && !INTERPRETER.test(builtin)) frame.builtin = builtin;
      frame.tier = native.kind === 'jit' ? 'compiled' : builtin && INTERPRETER.test(builtin) ? 'interpreted' : null;
      return frame;
    }
  }
  if (native.symbol) {
    frame.text = `${native.symbol}+${native.offset || 0}`;
    frame.kind = builtin ? 'v8' : 'native';
    if (builtin) frame.builtin = builtin;
  } else {
    frame.kind = native.kind === 'jit' ? 'jit' : 'unknown';
    frame.text = '0x' + f.pc.toString(16);
  }
  return frame;
}

function markerType(word) {
  if (word === null || word === undefined || (word & 1n) !== 0n || word >= BigInt(MAX_FRAME_TYPE * 2)) return null;
  return Number(word >> 1n);
}

/**
 * A classify() for walkStack over lib/symbolize.js: a Symbolizer and its
 * snapshot of the process's map.
 */
function nativeClassifier(symbolizer, snap) {
  return (pcs) => symbolizer.symbolize(snap, pcs.map((pc) => '0x' + pc.toString(16)), { allPcs: true }).frames;
}

module.exports = { walkStack, nativeClassifier, markerType, MAX_DEPTH, MAX_FRAME_BYTES };
