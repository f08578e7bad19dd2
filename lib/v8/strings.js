'use strict';
// V8 strings read from another process's heap, in every representation
// the versions nodetrace reads use: sequential (one- or two-byte
// characters in the object), cons (a rope of two strings), thin (a forward
// to the internalized copy), sliced (a window on a parent) and external
// (characters outside the heap, behind a resource V8 caches a pointer to).
//
// Bounded: at most `maxChars` characters are read (what is left out is
// said by `truncated`), a rope at most MAX_PARTS pieces and MAX_DEPTH deep,
// so a cyclic or forged rope ends. Pure over the heap's memory.
const { Heap } = require('./heap');

const MAX_DEPTH = 64;
const MAX_PARTS = 4096;
// An external string's resource caches its characters' address in the word
// after the resource pointer (V8's ExternalString::resource_data), except in
// "uncached" external strings (the representation's 0x10 bit), whose
// characters only the resource's virtual data() knows.
const UNCACHED_BIT = 0x10;
const CACHED_DATA_AFTER_RESOURCE = 8;

/**
 * Characters [start, start + count) of the string object `obj` ({ address,
 * type } from heap.object()), or null if any part cannot be read.
 * -> { text, length (the string's whole length), truncated }
 */
function readString(heap, obj, { start = 0, maxChars = 1024 } = {}) {
  const s = heap.layout.string;
  const length = stringLength(heap, obj);
  if (length === null) return null;
  const from = Math.min(Math.max(0, start), length);
  const count = Math.min(length - from, maxChars);
  const parts = [];
  // An explicit stack of pieces still to read: [object, start, count].
  const stack = [[obj, from, count, 0]];
  let pieces = 0;
  while (stack.length) {
    const [o, at, n, depth] = stack.pop();
    if (n <= 0) continue;
    if (++pieces > MAX_PARTS || depth > MAX_DEPTH || !heap.isString(o)) return null;
    const repr = o.type & s.representationMask;
    if (repr === s.seq) {
      const oneByte = (o.type & s.encodingMask) === s.oneByte;
      const b = heap.read(o.address + s.chars + at * (oneByte ? 1 : 2), n * (oneByte ? 1 : 2));
      if (!b) return null;
      parts.push(decode(b, oneByte));
    } else if (repr === s.cons) {
      const first = heap.field(o.address, s.consFirst);
      const second = heap.field(o.address, s.consSecond);
      if (!first || !second) return null;
      const firstLength = stringLength(heap, first);
      if (firstLength === null) return null;
      // Right first: the stack pops the left part first.
      if (at + n > firstLength) stack.push([second, Math.max(0, at - firstLength), at + n - Math.max(at, firstLength),
        depth + 1]);
      if (at < firstLength) stack.push([first, at, Math.min(n, firstLength - at), depth + 1]);
    } else if (repr === s.thin && s.thinActual !== undefined) {
      const actual = heap.field(o.address, s.thinActual);
      if (!actual) return null;
      stack.push([actual, at, n, depth + 1]);
    } else if (repr === s.sliced && s.slicedParent !== undefined) {
      const parent = heap.field(o.address, s.slicedParent);
      const offset = Heap.smi(heap.word(o.address + s.slicedOffset));
      if (!parent || offset === null || offset < 0) return null;
      stack.push([parent, offset + at, n, depth + 1]);
    } else if (repr === s.external && s.externalResource !== undefined && !(o.type & UNCACHED_BIT)) {
      const oneByte = (o.type & s.encodingMask) === s.oneByte;
      const data = heap.word(o.address + s.externalResource + CACHED_DATA_AFTER_RESOURCE);
      if (data === null || data === 0n || data >= 2n ** 48n) return null;
      const b = heap.read(Number(data) + at * (oneByte ? 1 : 2), n * (oneByte ? 1 : 2));
      if (!b) return null;
      parts.push(decode(b, oneByte));
    } else {
      return null;
    }
  }
  return { text: parts.join(''), length, truncated: from + count < length };
}

function stringLength(heap, obj) {
  if (!heap.isString(obj)) return null;
  const b = heap.read(obj.address + heap.layout.string.length, 4);
  if (!b) return null;
  const n = b.readInt32LE(0);
  return n >= 0 && n < 2 ** 30 ? n : null;
}

function decode(bytes, oneByte) {
  if (oneByte) return bytes.toString('latin1');
  // utf16le: a lone surrogate stays one, and is replaced where names are made safe.
  return bytes.toString('utf16le');
}

module.exports = { readString, stringLength, MAX_DEPTH, MAX_PARTS };
