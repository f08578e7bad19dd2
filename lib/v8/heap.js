'use strict';
// Reading V8 heap values through a memory (lib/v8/memory.js) with a layout
// (lib/v8/metadata.js): tagged words, small integers, and an object's
// instance type, trusted only when its map is a map (the map's own map has
// MAP_TYPE). Words are BigInts: a Smi's value is in the high 32 bits.
const MAP_CACHE_LIMIT = 4096;

class Heap {
  constructor(memory, layout) {
    this.memory = memory;
    this.layout = layout;
    this.mapTypes = new Map();   // map address -> instance type (or -1: not a map)
  }

  read(address, length) {
    return this.memory.read(address, length);
  }

  /** The 8-byte word at address, as a BigInt, or null. */
  word(address) {
    const b = this.memory.read(address, 8);
    return b ? b.readBigUInt64LE(0) : null;
  }

  /** The untagged address of a heap object word, or null (a Smi, or not tagged). */
  static objectAddress(word) {
    if (word === null || (word & 3n) !== 1n) return null;
    const a = Number(word - 1n);
    return a >= 4096 && a < 2 ** 48 ? a : null;
  }

  /** A Smi's value, or null. (64-bit Smis: value << 32, low half zero.) */
  static smi(word) {
    if (word === null || (word & 0xffffffffn) !== 0n) return null;
    return Number(BigInt.asIntN(32, word >> 32n));
  }

  /** Instance type of the map at mapAddress (untagged), or null if it is not a map. */
  mapType(mapAddress) {
    if (this.mapTypes.has(mapAddress)) {
      const t = this.mapTypes.get(mapAddress);
      return t < 0 ? null : t;
    }
    const { map } = this.layout;
    let result = -1;
    const b = this.memory.read(mapAddress + map.instanceType, 2);
    const metaMap = Heap.objectAddress(this.word(mapAddress + map.offset));
    if (b && metaMap !== null) {
      const metaType = metaMap === mapAddress ? b.readUInt16LE(0) : this.rawType(metaMap);
      if (metaType === this.layout.types.map) result = b.readUInt16LE(0);
    }
    if (this.mapTypes.size >= MAP_CACHE_LIMIT) this.mapTypes.clear();
    this.mapTypes.set(mapAddress, result);
    return result < 0 ? null : result;
  }

  rawType(mapAddress) {
    const b = this.memory.read(mapAddress + this.layout.map.instanceType, 2);
    return b ? b.readUInt16LE(0) : null;
  }

  /** { address, type } of a tagged heap object word whose map checks, or null. */
  object(word) {
    const address = Heap.objectAddress(word);
    if (address === null) return null;
    const mapAddress = Heap.objectAddress(this.word(address + this.layout.map.offset));
    if (mapAddress === null) return null;
    const type = this.mapType(mapAddress);
    return type === null ? null : { address, type, map: mapAddress };
  }

  /** The object a field of object `address` points to, or null. */
  field(address, offset) {
    return this.object(this.word(address + offset));
  }

  isString(obj) {
    return obj !== null && obj.type < this.layout.types.firstNonstring;
  }

  isJSFunction(obj) {
    const t = this.layout.types;
    return obj !== null && obj.type >= t.jsFunctionFirst && obj.type <= t.jsFunctionLast;
  }
}

module.exports = { Heap };
