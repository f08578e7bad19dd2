'use strict';
// Another process's memory behind one interface, read(address, length) ->
// Buffer or null (null: not readable there, or past a bound), so that the
// V8 namer and the frame walk read a live process, a core file and a saved
// snapshot alike:
//
//   ProcessMemory   a live or stopped process, through /proc/PID/mem
//   CoreMemory      an ELF core (lib/v8/core-file.js opens it)
//   SnapshotMemory  the ranges a walk read, saved to a file (tests)
//   RecordingMemory any of them, keeping what was read, to save as a snapshot
//
// Every read is bounded: one read at most MAX_READ bytes, and each memory a
// budget of bytes over its life, after which it reads nothing: the memory
// read is another user's, and no pointer it holds may make us read without end.
const fs = require('fs');

const MAX_READ = 1 << 20;
const DEFAULT_BUDGET = 64 << 20;
// x86-64 and arm64 user space ends below 2^48; nothing above is read.
const USER_END = 2 ** 48;
const PAGE = 4096;

function validRange(address, length) {
  return Number.isSafeInteger(address) && Number.isSafeInteger(length) && length > 0 && length <= MAX_READ
    && address >= PAGE && address + length <= USER_END;
}

class Budget {
  constructor(bytes = DEFAULT_BUDGET) { this.left = bytes; this.used = 0; }
  take(length) {
    if (length > this.left) return false;
    this.left -= length;
    this.used += length;
    return true;
  }
}

class ProcessMemory {
  /**
   * @param {number} pid
   * @param {object} [o] { budget: bytes }
   * Throws (ENOENT, EACCES) when /proc/PID/mem cannot be opened.
   */
  constructor(pid, { budget } = {}) {
    this.pid = pid;
    this.fd = fs.openSync(`/proc/${pid}/mem`, fs.constants.O_RDONLY);
    this.budget = new Budget(budget);
  }

  read(address, length) {
    if (this.fd === null || !validRange(address, length) || !this.budget.take(length)) return null;
    const buf = Buffer.alloc(length);
    try {
      const n = fs.readSync(this.fd, buf, 0, length, address);
      return n === length ? buf : null;
    } catch {
      return null;   // EIO: not mapped
    }
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

/** Sorted, non-overlapping ranges [{ address, bytes }] served from memory. */
class RangeMemory {
  constructor(ranges, { budget } = {}) {
    this.ranges = [...ranges].sort((a, b) => a.address - b.address);
    this.budget = new Budget(budget);
  }

  find(address) {
    let lo = 0;
    let hi = this.ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.ranges[mid];
      if (address < r.address) hi = mid - 1;
      else if (address >= r.address + r.bytes.length) lo = mid + 1;
      else return r;
    }
    return null;
  }

  read(address, length) {
    if (!validRange(address, length) || !this.budget.take(length)) return null;
    const r = this.find(address);
    if (!r || address + length > r.address + r.bytes.length) return null;
    return Buffer.from(r.bytes.subarray(address - r.address, address - r.address + length));
  }

  close() {}
}

/**
 * A snapshot: what a walk read, as saved by RecordingMemory.toJSON(), plus
 * whatever the saver kept beside it (registers, metadata, names).
 */
class SnapshotMemory extends RangeMemory {
  constructor(snapshot, options) {
    super((snapshot.ranges || []).map(([address, base64]) => ({ address: parseInt(address, 16), bytes: Buffer.from(base64, 'base64') })), options);
  }
}

class RecordingMemory {
  constructor(inner) {
    this.inner = inner;
    this.reads = [];
  }

  read(address, length) {
    const buf = this.inner.read(address, length);
    if (buf) this.reads.push({ address, bytes: Buffer.from(buf) });
    return buf;
  }

  close() { this.inner.close(); }

  /** The ranges read, merged: [[hex address, base64 bytes]]. */
  ranges() {
    const sorted = [...this.reads].sort((a, b) => a.address - b.address);
    const merged = [];
    for (const r of sorted) {
      const last = merged[merged.length - 1];
      if (last && r.address <= last.address + last.bytes.length) {
        const end = Math.max(last.address + last.bytes.length, r.address + r.bytes.length);
        const joined = Buffer.alloc(end - last.address);
        last.bytes.copy(joined, 0);
        r.bytes.copy(joined, r.address - last.address);
        last.bytes = joined;
      } else {
        merged.push({ address: r.address, bytes: r.bytes });
      }
    }
    return merged.map((r) => [r.address.toString(16), r.bytes.toString('base64')]);
  }
}

module.exports = { ProcessMemory, RangeMemory, SnapshotMemory, RecordingMemory, Budget, validRange, MAX_READ,
  DEFAULT_BUDGET };
