'use strict';
// Where V8 13 and 14 keep a function's code. With leap-tiering
// (V8_ENABLE_LEAPTIERING, on in official Node 24 and 26) a JSFunction holds
// no Code pointer but a 32-bit handle into V8's JSDispatchTable, whose entry
// holds the code it runs now (src/sandbox/js-dispatch-table.h). No v8dbg_*
// constant says where that table is. V8's own code does: the function its
// compilers call for the table's address,
// ExternalReference::js_dispatch_table_address(), read from the binary:
//
//   V8 13.6 (one table a process, in the isolate group):
//     mov rax, [rip + default_isolate_group_] ; mov rax, [rax + AT]
//   V8 14.6 (one table an isolate: the main thread's and each Worker's):
//     mov rax, [rdi + AT]                     (rdi: the Isolate)
//
// A thread's isolate is V8's thread-local g_current_isolate_, at a fixed
// distance below the thread pointer (fs) for the executable's own TLS block.
// The handle's shift comes from the table's reservation, which is in the
// names of V8's functions on it (ExternalEntityTable<JSDispatchEntry, BYTES>).
// The measured values and their sources: docs/v8-frames.md, "Inlined functions".
const { findElfData } = require('../symbolize');
const { STT_FUNC, STT_TLS, ET_EXEC } = require('../elf-constants');

const TABLE_FUNCTION = '_ZN2v88internal17ExternalReference25js_dispatch_table_address';
const CURRENT_ISOLATE = '_ZN2v88internal18g_current_isolate_E';
const TABLE_TYPE = '_ZN2v88internal19ExternalEntityTableINS0_15JSDispatchEntryELm';
const PREFIXES = [TABLE_FUNCTION, CURRENT_ISOLATE, TABLE_TYPE];

// A JSDispatchEntry on 64-bit builds (js-dispatch-table.h, the same in 13.6
// and 14.6): 16 bytes, the entrypoint then a word holding the Code's
// address shifted left by 16 (bit 16 the marking bit, bits 0-15 the
// parameter count); the programs (d-scripts/profile-js.bt, offcpu.bt,
// loop.bt) name these as #defines, test/v8-dispatch-table-unit.test.js holds
// them to this table.
const ENTRY = Object.freeze({ bytes: 16, codeAt: 8, codeShift: 16 });
// The largest offset of a field believed (IsolateGroup is about 13 KB on 13.6).
const MAX_FIELD_OFFSET = 1 << 20;
const CODE_BYTES = 32;

/**
 * Pure: the first bytes of js_dispatch_table_address() at file address
 * `at` -> { root: address of the pointer to the object holding the table
 * (V8 13: default_isolate_group_), at } or { isolate: true, at } (V8 14: the
 * Isolate passed in rdi), or null (another shape of code).
 */
function decodeTableAddress(bytes, at) {
  if (!bytes || bytes.length < 14) return null;
  const b = (i) => bytes[i];
  // mov rax, [rdi + disp32] / [rdi + disp8]
  if (b(0) === 0x48 && b(1) === 0x8b && b(2) === 0x87) return field({ isolate: true }, bytes.readInt32LE(3));
  if (b(0) === 0x48 && b(1) === 0x8b && b(2) === 0x47) return field({ isolate: true }, bytes.readInt8(3));
  // mov rax, [rip + disp32]; then mov rax, [rax + disp32] / [rax + disp8]
  if (b(0) === 0x48 && b(1) === 0x8b && b(2) === 0x05) {
    const root = at + 7 + bytes.readInt32LE(3);
    if (b(7) === 0x48 && b(8) === 0x8b && b(9) === 0x80) return field({ root }, bytes.readInt32LE(10));
    if (b(7) === 0x48 && b(8) === 0x8b && b(9) === 0x40) return field({ root }, bytes.readInt8(10));
  }
  return null;
}

function field(where, at) {
  return at >= 0 && at < MAX_FIELD_OFFSET && at % 8 === 0 ? { ...where, at } : null;
}

/**
 * Pure: how far below the thread pointer a variable of the executable's own
 * TLS block is (x86-64, the TLS block right below the thread pointer: glibc's
 * and musl's TLS_TCB_AT_TP) -> bytes (positive), or null.
 */
function tlsDistance(value, tls) {
  if (!tls || !(tls.memsz > 0) || value < 0 || value >= tls.memsz) return null;
  const align = Math.max(1, tls.align || 1);
  // The block's start is aligned as the segment's first byte is.
  const first = (align - (tls.vaddr % align)) % align;
  const size = Math.ceil((tls.memsz + first) / align) * align;
  return size - first - value;
}

/**
 * Pure: a handle's shift from the table's reservation in bytes: handles
 * index entries of ENTRY.bytes in the upper bits of 32 (2^(32 - shift)
 * entries fill the reservation), or null.
 */
function handleShift(reservation) {
  const entries = reservation / ENTRY.bytes;
  const bits = Math.log2(entries);
  return Number.isInteger(bits) && bits >= 8 && bits <= 32 ? 32 - bits : null;
}

/**
 * Pure: what findElfData gave for PREFIXES -> { root | tls, at, shift } or
 * { unsupported: why, in a few words }.
 */
function locationFrom(found) {
  if (!found) return { unsupported: 'its executable could not be read' };
  const fn = [...found.found].find(([name, s]) => name.startsWith(TABLE_FUNCTION) && s.type === STT_FUNC);
  if (!fn) return { unsupported: 'its binary keeps no symbol for js_dispatch_table_address (stripped)' };
  const where = decodeTableAddress(fn[1].bytes, fn[1].value);
  if (!where) return { unsupported: 'its js_dispatch_table_address() is code nodetrace does not know' };
  const reservations = [...found.found.keys()].filter((n) => n.startsWith(TABLE_TYPE))
    .map((n) => Number(/^\d+/.exec(n.slice(TABLE_TYPE.length)) || NaN));
  const shifts = [...new Set(reservations.map(handleShift))];
  if (shifts.length !== 1 || shifts[0] === null) return { unsupported: 'the size of its dispatch table is not in its symbols' };
  // An executable linked at a fixed address: the isolate group's pointer
  // is at the address its code names, and the thread-local isolate in the
  // executable's own TLS block. (Position-independent ones, and a libnode,
  // are loaded elsewhere each run, their TLS block wherever the loader puts it.)
  if (found.type !== ET_EXEC) return { unsupported: 'its node is position-independent, or V8 is in a shared library: where the table is depends on where it was loaded' };
  const out = { at: where.at, shift: shifts[0] };
  if (where.root !== undefined) return { ...out, root: where.root };
  const current = found.found.get(CURRENT_ISOLATE);
  const tls = current && current.type === STT_TLS ? tlsDistance(current.value, found.tls) : null;
  if (tls === null) return { unsupported: 'where a thread\'s isolate is kept is not in its symbols' };
  return { ...out, tls };
}

/**
 * Where the JSDispatchTable of the V8 in `file` (node, an executable) is
 * found -> locationFrom's result. Reads its symbols once more (about
 * 0.2-0.4 s for node's 140,000-160,000): only for a V8 that has the table.
 */
function readDispatchLocation(file, { followLinks = true } = {}) {
  let found = null;
  try { found = findElfData(file, PREFIXES,
    { followLinks, width: CODE_BYTES, any: true }); } catch { found = null; }
  return locationFrom(found);
}

/**
 * Pure: a location -> the programs' arguments that say it (d-scripts/profile-js.bt,
 * offcpu.bt, loop.bt: DISPATCH_*), or {} (none: CODE holds the code itself).
 */
function dispatchArguments(location) {
  if (!location || location.unsupported) return {};
  return { DISPATCH_AT: location.at, DISPATCH_ROOT: location.root ?? 0, DISPATCH_TLS: location.tls ?? 0,
    DISPATCH_SHIFT: location.shift };
}

/**
 * Reads a function's code through the table in a process's (or a core's)
 * memory: `heap` (./heap.js), `location` (locationFrom's).
 */
class DispatchTable {
  constructor(heap, location) {
    this.heap = heap;
    this.location = location;
  }

  /** The table's base for a thread (its thread pointer: `fsBase`), or null. */
  base({ fsBase = null } = {}) {
    const L = this.location;
    let holder;
    if (L.root !== undefined) holder = this.heap.word(L.root);
    else if (Number.isSafeInteger(fsBase) && fsBase > L.tls) holder = this.heap.word(fsBase - L.tls);
    else return null;
    const at = holder === null ? null : Number(holder);
    if (!at || at < 4096 || at >= 2 ** 48) return null;
    const base = this.heap.word(at + L.at);
    return base === null || base < 4096n || base >= 2n ** 48n ? null : Number(base);
  }

  /** The Code word (tagged) of handle `handle` in the table at `base`, or null. */
  code(base, handle) {
    if (base === null || !Number.isInteger(handle) || handle <= 0) return null;
    const word = this.heap.word(base + (handle >>> this.location.shift) * ENTRY.bytes + ENTRY.codeAt);
    if (word === null || word === 0n) return null;
    return (word >> BigInt(ENTRY.codeShift)) | 1n;
  }
}

module.exports = { DispatchTable, readDispatchLocation, locationFrom, dispatchArguments, decodeTableAddress,
  tlsDistance, handleShift, ENTRY, PREFIXES };
