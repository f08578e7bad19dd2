'use strict';
// The functions V8's optimizing compiler inlined into a frame's code, read
// back from that code: a JSFunction's Code (when the sampled address is in
// it), the Code's deoptimization data (the inlined functions'
// SharedFunctionInfos, and where each was inlined) and its source position
// table (code offset -> source position, with the inlining it belongs to).
// V8 writes both for its debugger and its deoptimizer; nodetrace reads them
// as V8's own SourcePositionTableIterator does. The metadata gives some of
// the offsets; the rest were measured per version (docs/v8-frames.md,
// "Inlined functions"). From V8 13 a JSFunction holds a handle into V8's
// dispatch table (leap-tiering), whose entry holds its Code
// (./dispatch-table.js).
const { Heap } = require('./heap');
const { pick } = require('./metadata');
const { lastAtOrBelow } = require('../sorted');
const { DispatchTable, readDispatchLocation } = require('./dispatch-table');

// Per V8 version: where a JSFunction keeps its Code (`handle`: its 32-bit
// dispatch handle instead), and where the Code keeps its instructions (a
// field holding their address, or right after a header of that size),
// their size (int32), its flags (kind in the low bits), deoptimization data
// and source position table. (13.6 and 14.6: the handle at 24 measured,
// Code's start, size and flags exported, deoptimization data and positions
// measured; the DeoptimizationData's function is a SharedFunctionInfoWrapper.
// offsetFlagBits: how the position table writes a code offset, below.)
const MEASURED = {
  '10.2': { code: 48, start: { header: 128 }, size: 40, flags: 48, deopt: 16, positions: 24 },
  '11.3': { code: 48, start: { field: 40 }, size: 56, flags: 48, deopt: 16, positions: 24 },
  '12.4': { code: 24, start: { field: 40 }, size: 52, flags: 48, deopt: 8, positions: 16 },
  '13.6': { code: 24, handle: true, start: { field: 40 }, size: 56, flags: 52, deopt: 8, positions: 16 },
  '14.6': { code: 24, handle: true, start: { field: 40 }, size: 56, flags: 52, deopt: 8, positions: 16, offsetFlagBits: 2 },
};
// DeoptimizationData's slots (exported from 11.3; the same on 10.2, measured).
const DEOPT_INDEX = { count: 1, literals: 2, shared: 6, positions: 7 };
// An InliningPosition: a SourcePosition (8 bytes), the inlined function's
// index in the literal array (int32), padding.
const INLINING_POSITION_SIZE = 16;
const MAX_INLINED = 4096;
const MAX_TABLE_BYTES = 1 << 20;
const CACHE_LIMIT = 16384;

/**
 * Pure: what reading inlining takes on this V8 -> the offsets, or
 * { unsupported: one line } (with the layout's version).
 */
function measuredFor(layout) {
  return layout.version ? MEASURED[`${layout.version.major}.${layout.version.minor}`] || null : null;
}

/**
 * What reading inlining on the V8 of `layout` (in ELF file `file`: a path,
 * or { root, path }) takes from its file beyond its metadata: V8 13+'s
 * dispatch table's place (./dispatch-table.js readDispatchLocation), or null.
 */
function dispatchLocationFor(layout, file) {
  const m = measuredFor(layout);
  return m && m.handle ? readDispatchLocation(file) : null;
}

function inliningLayout(layout, symbols, { dispatch = null } = {}) {
  const m = measuredFor(layout);
  const no = (why) => ({ unsupported: `V8 ${layout.versionText} (${why}): a function its optimizing compiler inlined is counted as its caller` });
  if (!m) return no('nodetrace has not measured where its code keeps them');
  // Leap-tiering: the code is found through the dispatch table, whose place
  // is read from the binary (./dispatch-table.js readDispatchLocation).
  if (m.handle && (!dispatch || dispatch.unsupported)) {
    return no(`its functions hold a handle into its dispatch table, not their code, and ${dispatch ? dispatch.unsupported : 'where that table is was not read'}`);
  }
  const t = (re) => pick(symbols, re);
  const baseline = pick(symbols, 'v8dbg_CodeKindBaseline');
  const types = {
    code: t(/^v8dbg_type_Code__CODE_TYPE$/),
    fixedArrays: [t(/^v8dbg_type_FixedArray__FIXED_ARRAY_TYPE$/), t(/^v8dbg_type_TrustedFixedArray__/)]
      .filter((x) => x !== undefined),
    byteArrays: [t(/^v8dbg_type_ByteArray__BYTE_ARRAY_TYPE$/), t(/^v8dbg_type_TrustedByteArray__/)]
      .filter((x) => x !== undefined),
    weakFixedArrays: [t(/^v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE$/), t(/^v8dbg_type_TrustedWeakFixedArray__/),
      t(/^v8dbg_type_ProtectedWeakFixedArray__/)].filter((x) => x !== undefined),
    // (13+: the DeoptimizationData, a trusted object, points to its function through a wrapper.)
    sharedWrapper: t(/^v8dbg_type_SharedFunctionInfoWrapper__/),
  };
  if (m.handle) types.fixedArrays.push(t(/^v8dbg_type_ProtectedFixedArray__/));
  if (types.code === undefined || baseline === undefined || !types.fixedArrays.length
    || types.fixedArrays.includes(undefined) || !types.byteArrays.length || !types.weakFixedArrays.length) {
    return { unsupported: `V8 ${layout.versionText}'s metadata lacks the types of its code: a function its optimizing compiler inlined is counted as its caller` };
  }
  const index = (name, fallback) => pick(symbols, `v8dbg_DeoptimizationData${name}Index`) ?? fallback;
  const wrapped = pick(symbols, 'v8dbg_DeoptimizationDataWrappedSharedFunctionInfoIndex');
  const wrapperShared = pick(symbols, /^v8dbg_class_SharedFunctionInfoWrapper__shared_info__/);
  if (wrapped !== undefined && (types.sharedWrapper === undefined || wrapperShared === undefined)) {
    return { unsupported: `V8 ${layout.versionText}'s metadata lacks its SharedFunctionInfoWrapper: a function its optimizing compiler inlined is counted as its caller` };
  }
  return {
    ...m,
    dispatch: m.handle ? dispatch : null,
    // Where the DeoptimizationData's function is, in a wrapper from 13.
    wrapperShared: wrapped !== undefined ? wrapperShared : null,
    // Maglev's and TurboFan's code: the kinds after baseline code's.
    kinds: [baseline + 1, baseline + 2],
    kindMask: pick(symbols, 'v8dbg_CodeKindFieldMask') ?? 15,
    types,
    index: {
      count: index('InlinedFunctionCount', DEOPT_INDEX.count),
      literals: index('LiteralArray', DEOPT_INDEX.literals),
      shared: wrapped ?? index('SharedFunctionInfo', DEOPT_INDEX.shared),
      positions: index('InliningPositions', DEOPT_INDEX.positions),
    },
  };
}

// A variable-length quantity, 7 bits a byte, least significant first
// (V8's source-position-table.cc), zigzag-decoded unless `unsigned`.
// -> [BigInt, next] or null.
function readVlq(bytes, at, { unsigned = false } = {}) {
  let value = 0n;
  let shift = 0n;
  for (let i = at; i < bytes.length && shift < 70n; i++) {
    const b = bytes[i];
    value |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if (!(b & 0x80)) return [unsigned ? value : (value >> 1n) ^ -(value & 1n), i + 1];
  }
  return null;
}

// A SourcePosition's fields (not external): the script offset and the
// inlining it belongs to, each stored plus one (-1: none, the outer function).
function sourcePosition(word) {
  return { offset: Number((word >> 1n) & 0x3fffffffn) - 1, inlining: Number((word >> 31n) & 0xffffn) - 1 };
}

/**
 * Pure: a source position table's bytes -> { offsets, inlinings } (Int32Arrays,
 * code offsets ascending) or null when it does not decode. Each entry is the
 * code offset's delta and the source position's delta (zigzag). Up to V8
 * 13 the offset's delta is zigzag too, its sign saying whether the entry is
 * a statement; V8 14 writes it unsigned, shifted left by `flagBits` (2: a
 * statement in bit 0, another flag in bit 1; measured on 14.6.202.34 from
 * SourcePositionTableIterator::Advance, which adds value >> 2 to the offset).
 */
function decodePositionTable(bytes, { flagBits = 0 } = {}) {
  const offsets = [];
  const inlinings = [];
  let at = 0;
  let offset = 0n;
  let position = 0n;
  while (at < bytes.length) {
    const a = readVlq(bytes, at, { unsigned: flagBits > 0 });
    if (!a) return null;
    const b = readVlq(bytes, a[1]);
    if (!b) return null;
    if (flagBits > 0) offset += a[0] >> BigInt(flagBits);
    else offset += a[0] >= 0n ? a[0] : -(a[0] + 1n);
    position += b[0];
    at = b[1];
    offsets.push(Number(offset));
    inlinings.push(sourcePosition(BigInt.asUintN(64, position)).inlining);
  }
  return { offsets: Int32Array.from(offsets), inlinings: Int32Array.from(inlinings) };
}

// An untagged address in user space, or null.
function rawAddress(word) {
  if (word === null) return null;
  const a = Number(word);
  return a >= 4096 && a < 2 ** 48 ? a : null;
}

class InliningReader {
  /**
   * @param {object} o { heap (./heap.js), layout (metadata.layoutFrom), symbols, namer (./namer.js),
   *   dispatch (V8 13+: dispatchLocationFor's result) }
   */
  constructor({ heap, layout, symbols, namer, dispatch = null }) {
    this.heap = heap;
    this.namer = namer;
    this.layout = inliningLayout(layout, symbols, { dispatch });
    this.table = this.layout.dispatch ? new DispatchTable(heap, this.layout.dispatch) : null;
    this.cache = new Map();   // code address -> { key, record }
  }

  /** What cannot be read on this V8, in one line, or null. */
  limitation() {
    return this.layout.unsupported || null;
  }

  /** Where a JSFunction keeps its Code (the program's CODE argument), or 0. */
  codeOffset() {
    return this.layout.unsupported ? 0 : this.layout.code;
  }

  /**
   * The Code word of the JSFunction in a tagged word, or null. V8 13+: the
   * code its dispatch handle leads to now, in the table of the thread whose
   * thread pointer is `fsBase` (14: a table an isolate).
   */
  codeOf(functionWord, { fsBase = null } = {}) {
    if (this.layout.unsupported) return null;
    const fn = Heap.objectAddress(functionWord);
    if (fn === null) return null;
    if (!this.table) return this.heap.word(fn + this.layout.code);
    const handle = this.heap.read(fn + this.layout.code, 4);
    return handle ? this.table.code(this.table.base({ fsBase }), handle.readUInt32LE(0)) : null;
  }

  /**
   * What a Code object (a tagged word) says of its inlining -> { start, end,
   * optimized, shared (the outer function's SFI word; null: not optimized
   * code, which inlines nothing), offsets, inlinings, inlined: [{ parent,
   * name (namer result or null) }] } or null: not a Code, or not readable.
   * Read promptly (code moves and is freed); cached by address while its
   * fields are the same.
   */
  describe(codeWord) {
    if (this.layout.unsupported) return null;
    const { heap } = this;
    const L = this.layout;
    const code = heap.object(codeWord);
    if (!code || code.type !== L.types.code) return null;
    const deoptWord = heap.word(code.address + L.deopt);
    const positionsWord = heap.word(code.address + L.positions);
    const flags = heap.read(code.address + L.flags, 4);
    if (deoptWord === null || positionsWord === null || !flags) return null;
    const key = `${deoptWord}:${positionsWord}:${flags.readUInt32LE(0)}`;
    const hit = this.cache.get(code.address);
    if (hit && hit.key === key) return hit.record;
    const record = this.read(code, deoptWord, positionsWord, flags.readUInt32LE(0));
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(code.address, { key, record });
    return record;
  }

  read(code, deoptWord, positionsWord, flags) {
    const { heap } = this;
    const L = this.layout;
    const sizeBytes = heap.read(code.address + L.size, 4);
    const start = L.start.header !== undefined ? code.address + L.start.header
      : rawAddress(heap.word(code.address + L.start.field));
    if (!sizeBytes || start === null) return null;
    const size = sizeBytes.readInt32LE(0);
    if (size <= 0 || size > (64 << 20)) return null;
    // Code that inlines nothing (interpreted, baseline): only where it is,
    // so that a frame that ran elsewhere is known not to have run it.
    if (!L.kinds.includes(flags & L.kindMask)) {
      return { start, end: start + size, shared: null, optimized: false, offsets: new Int32Array(0),
        inlinings: new Int32Array(0), inlined: [] };
    }
    const deopt = heap.object(deoptWord);
    const table = this.bytes(positionsWord);
    if (!deopt || !L.types.fixedArrays.includes(deopt.type) || !table) return null;
    const decoded = decodePositionTable(table, { flagBits: L.offsetFlagBits || 0 });
    if (!decoded) return null;
    const length = Heap.smi(heap.word(deopt.address + 8));
    const element = (i) => (length !== null && i < length ? heap.word(deopt.address + 16 + 8 * i) : null);
    const count = Heap.smi(element(L.index.count));
    const shared = L.wrapperShared === null ? element(L.index.shared) : this.unwrap(element(L.index.shared));
    const inlined = [];
    if (count) {
      const literals = heap.object(element(L.index.literals));
      const positions = this.bytes(element(L.index.positions));
      if (!literals || !L.types.weakFixedArrays.includes(literals.type) || !positions) return null;
      const literalCount = Heap.smi(heap.word(literals.address + 8));
      const n = Math.min(positions.length / INLINING_POSITION_SIZE, MAX_INLINED);
      for (let i = 0; i < n; i++) {
        const parent = sourcePosition(positions.readBigUInt64LE(i * INLINING_POSITION_SIZE)).inlining;
        const id = positions.readInt32LE(i * INLINING_POSITION_SIZE + 8);
        // A parent is inlined before its children: an id at or after this
        // one is no V8 table (and would let the walk up loop).
        if (parent >= i || id < 0 || literalCount === null || id >= literalCount) return null;
        // (A weak reference's tag cleared: the literal array holds some weakly.)
        const literal = heap.word(literals.address + 16 + 8 * id);
        let name = null;
        try { name = literal === null ? null : this.namer.nameSfi(literal & ~2n); } catch { name = null; }
        inlined.push({ parent, name });
      }
    }
    return { start, end: start + size, shared, optimized: true, offsets: decoded.offsets, inlinings: decoded.inlinings,
      inlined };
  }

  // The SharedFunctionInfo word a SharedFunctionInfoWrapper holds, or null.
  unwrap(word) {
    const o = this.heap.object(word);
    if (!o || o.type !== this.layout.types.sharedWrapper) return null;
    return this.heap.word(o.address + this.layout.wrapperShared);
  }

  // A byte array's bytes (empty for none), bounded, or null.
  bytes(word) {
    const o = this.heap.object(word);
    if (!o || !this.layout.types.byteArrays.includes(o.type)) return null;
    const n = Heap.smi(this.heap.word(o.address + 8));
    if (n === null || n < 0 || n > MAX_TABLE_BYTES) return null;
    return n === 0 ? Buffer.alloc(0) : this.heap.read(o.address + 16, n);
  }
}

/**
 * Pure: the functions inlined at a code address of a described Code,
 * innermost first -> [namer result | null] ([] when none is, null when the
 * address is not in that code, or the optimized code is not the frame's
 * function's: `sfi`, its SharedFunctionInfo as the namer gives it).
 * `returnAddress`: the address follows a call (every frame but the sampled
 * one), so its call is what ran.
 */
function inlinedAt(record, pc, { returnAddress = false, sfi = null } = {}) {
  if (!record || (sfi !== null && record.optimized && Number(record.shared) !== sfi)) return null;
  const address = Number(pc);
  if (!(address >= record.start && address < record.end + (returnAddress ? 1 : 0))) return null;
  const i = lastAtOrBelow(record.offsets, address - record.start - (returnAddress ? 1 : 0));
  const out = [];
  let id = i < 0 ? -1 : record.inlinings[i];
  // Each parent comes before its child (checked when read); bounded anyway.
  while (id >= 0 && id < record.inlined.length && out.length < record.inlined.length) {
    out.push(record.inlined[id].name);
    id = record.inlined[id].parent;
  }
  return out;
}

module.exports = { InliningReader, inliningLayout, dispatchLocationFor, inlinedAt, decodePositionTable, sourcePosition,
  readVlq, MEASURED };
