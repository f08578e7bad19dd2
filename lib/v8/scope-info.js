'use strict';
// A compiled function's name and source position live in its ScopeInfo,
// whose layout no v8dbg_* symbol describes: this table says where, per V8
// version, measured from the memory of each Node build nodetrace is tested
// on (docs/v8-frames.md has the dumps; test/v8-frames-builds.test.js checks
// every build against what the running V8 says of its own functions).
//
// Slots are 8 bytes, slot 0 being the map. Every layout begins with the
// flags (slot 1), the parameter count (2) and the number of context locals
// n (3, a Smi). Then:
//   positions after the names (V8 10.2, 11.3, 12.4; flags a Smi):
//     [module variable count (module scopes, from 12.4)], n local names
//     (or, when n >= 75, one slot: a hash table of them), n local infos,
//     [saved class variable], [function variable: name, slot], [inferred
//     name], start and end position, ...
//   positions first (V8 13.6, 14.6; flags a raw uint32):
//     start and end position, [module variable count (module scopes)],
//     the names and infos as above, [saved class variable], [function
//     variable], [inferred name], ...
// The flags' bits that say which optional slots are there kept their places
// over all five versions (measured: a function scope's flags and the slots
// present agree on each): has_saved_class_variable bit 10, function_variable
// bits 12-13 (0: none), has_inferred_function_name bit 14, scope type bits
// 0-3 (whose numbering changed in 13: function 2 -> 4, module 3 -> 5).
const { Heap } = require('./heap');

const MAX_INLINED_LOCAL_NAMES = 75;

const BEFORE_13 = { flagsSmi: true, positionsFirst: false, functionScope: 2, moduleScope: 3 };
const FROM_13 = { flagsSmi: false, positionsFirst: true, functionScope: 4, moduleScope: 5, moduleCountFirst: true };

// The versions measured (major.minor -> layout).
const MEASURED = {
  '10.2': { ...BEFORE_13, moduleCountFirst: false },
  '11.3': { ...BEFORE_13, moduleCountFirst: false },
  '12.4': { ...BEFORE_13, moduleCountFirst: true },
  '13.6': FROM_13,
  '14.6': FROM_13,
};

/** The ScopeInfo layout of a V8 version, or null when it was not measured. */
function scopeInfoLayout(version) {
  const key = `${version.major}.${version.minor}`;
  return MEASURED[key] ? { measuredOn: key, ...MEASURED[key] } : null;
}

const bit = (flags, n) => ((flags >>> n) & 1) === 1;

/**
 * What a function's ScopeInfo says of it: { nameObject (the string object
 * of its own name, or null), inferredObject (V8's guess for an anonymous
 * one, or null), start, end (source positions, or null), scopeType }, or null when the
 * object cannot be read or does not fit the layout. `scope` is
 * heap.object() of the ScopeInfo.
 */
function readScopeInfo(heap, scope, layout) {
  const slot = (k) => heap.word(scope.address + 8 * k);
  const flagsWord = slot(1);
  if (flagsWord === null) return null;
  const flags = layout.flagsSmi ? Heap.smi(flagsWord) : Number(flagsWord & 0xffffffffn);
  const n = Heap.smi(slot(3));
  if (flags === null || n === null || n < 0 || n > 1 << 20) return null;
  const scopeType = flags & 0xf;
  let k = 4;
  let start = null;
  let end = null;
  if (layout.positionsFirst) {
    start = Heap.smi(slot(4));
    end = Heap.smi(slot(5));
    k = 6;
  }
  if (layout.moduleCountFirst && scopeType === layout.moduleScope) k++;
  k += (n < MAX_INLINED_LOCAL_NAMES ? n : 1) + n;
  if (bit(flags, 10)) k++;
  let nameObject = null;
  if (((flags >>> 12) & 3) !== 0) {
    const o = heap.object(slot(k));
    nameObject = o && heap.isString(o) ? o : null;
    k += 2;
  }
  let inferredObject = null;
  if (bit(flags, 14)) {
    const o = heap.object(slot(k));
    inferredObject = o && heap.isString(o) ? o : null;
    k++;
  }
  if (!layout.positionsFirst) {
    start = Heap.smi(slot(k));
    end = Heap.smi(slot(k + 1));
  }
  if (start === null || end === null || start < 0 || end < start) { start = null; end = null; }
  return { nameObject, inferredObject, start, end, scopeType, isFunction: scopeType === layout.functionScope };
}

module.exports = { scopeInfoLayout, readScopeInfo, MEASURED, MAX_INLINED_LOCAL_NAMES };
