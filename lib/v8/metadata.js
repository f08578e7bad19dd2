'use strict';
// V8's postmortem metadata: the `v8dbg_*` constants V8 compiles into the
// node executable (or Debian's libnode.so) so that a debugger can read its
// heap without its source (object field offsets, instance type numbers,
// frame offsets and frame types), and V8's version. Each is a 4-byte int at
// the symbol's place in the file; all are in .dynsym, which survives
// stripping. Their names drift between versions (`shared__SharedFunctionInfo`,
// `..._Tagged_Object_` suffixes, `SEQ_ONE_BYTE_STRING_TYPE` for
// `ONE_BYTE_STRING_TYPE`), so fields are matched by pattern.
//
// layoutFrom() is pure: symbol values in, the layout the namer reads by out
// (or why not). The values and what each build has are in docs/v8-frames.md.
const { findElfData } = require('../symbolize');
const { scopeInfoLayout } = require('./scope-info');

const PREFIXES = ['v8dbg_', '_ZN2v88internal7Version'];
const VERSION = (part) => `_ZN2v88internal7Version${part.length + 1}${part}_E`;

/**
 * The metadata of one ELF file: { symbols: { name: int32 } } with at least
 * one v8dbg_ symbol, or null (not V8, or unreadable).
 */
function readMetadata(file, { followLinks = true } = {}) {
  const found = findElfData(file, PREFIXES, { followLinks, width: 4 });
  if (!found) return null;
  const symbols = {};
  for (const [name, sym] of found.found) symbols[name] = sym.bytes.readInt32LE(0);
  if (!Object.keys(symbols).some((n) => n.startsWith('v8dbg_'))) return null;
  return { symbols };
}

// The value of the first symbol matching one of the patterns, in order.
function pick(symbols, ...patterns) {
  for (const p of patterns) {
    if (typeof p === 'string') {
      if (Object.prototype.hasOwnProperty.call(symbols, p)) return symbols[p];
      continue;
    }
    const name = Object.keys(symbols).filter((n) => p.test(n)).sort()[0];
    if (name !== undefined) return symbols[name];
  }
  return undefined;
}

const field = (cls, name) => new RegExp(`^v8dbg_class_${cls}__${name}__`);
const type = (cls) => new RegExp(`^v8dbg_type_${cls}__`);

// How many instance types from JS_FUNCTION_TYPE on are JSFunctions too
// (V8's own constructors and class constructors have types of their own),
// where the metadata does not say (V8 before 12 exports no First/Last
// JSFunctionType): measured on 10.2 and 11.3, a class constructor's type is
// JS_FUNCTION_TYPE + 15, the last of the range, as LastJSFunctionType is on
// 12.4, 13.6 and 14.6. A candidate is trusted only if its `shared` field
// also holds a SharedFunctionInfo.
const JS_FUNCTION_TYPES = 16;

/**
 * Pure: symbol values -> the layout the namer and the walk use, or
 * { unsupported: 'one line saying why' } (with `version` when known).
 */
function layoutFrom(symbols) {
  const v = (part) => symbols[VERSION(part)];
  const version = v('major') === undefined ? null
    : { major: v('major'), minor: v('minor'), build: v('build'), patch: v('patch') };
  const versionText = version ? `${version.major}.${version.minor}.${version.build}.${version.patch}` : 'unknown';
  const out = { version, versionText };
  const no = (why) => ({ version, versionText, unsupported: why });

  const tagged = pick(symbols, 'v8dbg_TaggedSize');
  const pointer = pick(symbols, 'v8dbg_SystemPointerSize');
  if (tagged !== undefined && tagged !== 8) return no(`V8 ${versionText} compresses its pointers (tagged size ${tagged}), which nodetrace does not read`);
  if (pointer !== undefined && pointer !== 8) return no(`V8 ${versionText} is not a 64-bit build`);
  const tags = {
    heapObjectTag: pick(symbols, 'v8dbg_HeapObjectTag'),
    heapObjectTagMask: pick(symbols, 'v8dbg_HeapObjectTagMask'),
    smiTag: pick(symbols, 'v8dbg_SmiTag'),
    smiTagMask: pick(symbols, 'v8dbg_SmiTagMask'),
    smiShiftSize: pick(symbols, 'v8dbg_SmiShiftSize'),
  };
  if (tags.heapObjectTag !== 1 || tags.heapObjectTagMask !== 3 || tags.smiTag !== 0 || tags.smiTagMask !== 1
    || tags.smiShiftSize !== 31) {
    return no(`V8 ${versionText} tags its values in a way nodetrace does not know (${JSON.stringify(tags)})`);
  }

  const jsFunction = pick(symbols, type('JSFunction'));
  const layout = {
    ...out,
    map: { offset: pick(symbols, field('HeapObject', 'map')), instanceType: pick(symbols, field('Map', 'instance_type')) },
    types: {
      map: pick(symbols, type('Map')),
      jsFunctionFirst: pick(symbols, 'v8dbg_FirstJSFunctionType', type('JSFunction')),
      jsFunctionLast: pick(symbols, 'v8dbg_LastJSFunctionType') ?? (jsFunction === undefined ? undefined : jsFunction + JS_FUNCTION_TYPES - 1),
      jsFunctionRangeExported: pick(symbols, 'v8dbg_LastJSFunctionType') !== undefined,
      sharedFunctionInfo: pick(symbols, type('SharedFunctionInfo')),
      script: pick(symbols, type('Script')),
      scopeInfo: pick(symbols, type('ScopeInfo')),
      fixedArray: pick(symbols, type('FixedArray')),
      firstNonstring: pick(symbols, 'v8dbg_FirstNonstringType'),
      uncompiledData: Object.keys(symbols).filter((n) => /^v8dbg_type_UncompiledData/.test(n)).map((n) => symbols[n]),
    },
    string: {
      length: pick(symbols, field('String', 'length')),
      representationMask: pick(symbols, 'v8dbg_StringRepresentationMask'),
      encodingMask: pick(symbols, 'v8dbg_StringEncodingMask'),
      oneByte: pick(symbols, 'v8dbg_OneByteStringTag'),
      seq: pick(symbols, 'v8dbg_SeqStringTag'),
      cons: pick(symbols, 'v8dbg_ConsStringTag'),
      external: pick(symbols, 'v8dbg_ExternalStringTag'),
      sliced: pick(symbols, 'v8dbg_SlicedStringTag'),
      thin: pick(symbols, 'v8dbg_ThinStringTag'),
      consFirst: pick(symbols, field('ConsString', 'first')),
      consSecond: pick(symbols, field('ConsString', 'second')),
      thinActual: pick(symbols, field('ThinString', 'actual')),
      slicedParent: pick(symbols, field('SlicedString', 'parent')),
      slicedOffset: pick(symbols, field('SlicedString', 'offset')),
      externalResource: pick(symbols, field('ExternalString', 'resource')),
    },
    fixedArray: { length: pick(symbols, field('FixedArrayBase', 'length')), data: pick(symbols, field('FixedArray', 'data')) },
    jsFunction: { shared: pick(symbols, field('JSFunction', 'shared')) },
    sfi: {
      nameOrScopeInfo: pick(symbols, field('SharedFunctionInfo', 'name_or_scope_info')),
      script: pick(symbols, field('SharedFunctionInfo', 'script_or_debug_info'), field('SharedFunctionInfo', 'script')),
      functionData: pick(symbols, field('SharedFunctionInfo', 'function_data')),
      functionTokenOffset: pick(symbols, field('SharedFunctionInfo', 'raw_function_token_offset')),
    },
    uncompiledData: {
      inferredName: pick(symbols, field('UncompiledData', 'inferred_name')),
      start: pick(symbols, field('UncompiledData', 'start_position')),
      end: pick(symbols, field('UncompiledData', 'end_position')),
    },
    script: {
      name: pick(symbols, field('Script', 'name')),
      source: pick(symbols, field('Script', 'source')),
      lineEnds: pick(symbols, field('Script', 'line_ends')),
    },
    frame: {
      function: pick(symbols, 'v8dbg_off_fp_function'),
      context: pick(symbols, 'v8dbg_off_fp_context_or_frame_type', 'v8dbg_off_fp_context'),
      bytecodeArray: pick(symbols, 'v8dbg_off_fp_bytecode_array'),
      bytecodeOffset: pick(symbols, 'v8dbg_off_fp_bytecode_offset'),
    },
    frameTypes: frameTypes(symbols),
  };
  // Characters follow the header: map, hash and length (no symbol says so).
  if (layout.string.length !== undefined) layout.string.chars = layout.string.length + 4;

  const missing = [];
  const required = {
    'map.offset': layout.map.offset, 'map.instanceType': layout.map.instanceType,
    'types.map': layout.types.map, 'types.jsFunctionFirst': layout.types.jsFunctionFirst,
    'types.sharedFunctionInfo': layout.types.sharedFunctionInfo, 'types.script': layout.types.script,
    'types.scopeInfo': layout.types.scopeInfo, 'types.firstNonstring': layout.types.firstNonstring,
    'string.length': layout.string.length, 'string.representationMask': layout.string.representationMask,
    'string.encodingMask': layout.string.encodingMask, 'string.cons': layout.string.cons,
    'string.consFirst': layout.string.consFirst, 'string.consSecond': layout.string.consSecond,
    'jsFunction.shared': layout.jsFunction.shared, 'sfi.nameOrScopeInfo': layout.sfi.nameOrScopeInfo,
    'sfi.script': layout.sfi.script, 'script.name': layout.script.name, 'script.source': layout.script.source,
    'frame.function': layout.frame.function, 'frame.context': layout.frame.context,
  };
  for (const [k, val] of Object.entries(required)) if (val === undefined) missing.push(k);
  if (missing.length) return no(`V8 ${versionText}'s metadata lacks ${missing.join(', ')}`);
  layout.scopeInfo = version ? scopeInfoLayout(version) : null;
  return layout;
}

function frameTypes(symbols) {
  const byNumber = {};
  for (const [name, value] of Object.entries(symbols)) {
    const m = /^v8dbg_frametype_(\w+)$/.exec(name);
    if (m) byNumber[value] = m[1];
  }
  return byNumber;
}

module.exports = { readMetadata, layoutFrom, pick, PREFIXES, JS_FUNCTION_TYPES };
