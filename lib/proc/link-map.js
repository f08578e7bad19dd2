'use strict';
// The names the dynamic loader gave the shared objects of a (stopped)
// process: its link map (r_debug, found through the executable's DT_DEBUG,
// walked over /proc/PID/mem), each entry paired with the file it maps. gdb
// opens a core's libraries by these names (/lib/x86_64-linux-gnu/libc.so.6,
// /lib64/ld-linux-x86-64.so.2), which are often links to the mapped files
// (/usr/lib/..., libstdc++.so.6.0.30): lib/ebadf/sysroot.js lays them out
// beside a core. Every value read is the process's own: names are bounded
// and checked by the caller, the walk is bounded in length and bytes.
const { ProcessMemory } = require('../v8/memory');
const { elfHeader, programHeaders } = require('../symbolize');
const { readAt } = require('../safe-open');
const { PT_LOAD, PT_DYNAMIC, ET_DYN, DT_NULL, DT_DEBUG } = require('../elf-constants');

const MAX_OBJECTS = 1024;
const MAX_NAME = 4096;

/** Pure: the address of r_debug in a dynamic section's bytes (16-byte entries), or null. */
function debugAddress(dynamic) {
  for (let o = 0; o + 16 <= dynamic.length; o += 16) {
    const tag = dynamic.readBigUInt64LE(o);
    if (tag === BigInt(DT_NULL)) break;
    if (tag === BigInt(DT_DEBUG)) {
      const v = Number(dynamic.readBigUInt64LE(o + 8));
      return v || null;
    }
  }
  return null;
}

function readString(memory, address) {
  let out = Buffer.alloc(0);
  for (let at = address; out.length < MAX_NAME; at += 256) {
    const chunk = memory.read(at, 256);
    if (!chunk) return null;
    const end = chunk.indexOf(0);
    out = Buffer.concat([out, end < 0 ? chunk : chunk.subarray(0, end)]);
    if (end >= 0) return out.toString('utf8');
  }
  return null;
}

/**
 * -> [{ name (as the loader has it), path (the mapped file, as /proc/PID/maps
 *    says) }] of process `pid`, or [] when it cannot be read (a static
 *    executable, no DT_DEBUG, memory unreadable).
 * @param {number} pid
 * @param {object[]} maps parsed /proc/PID/maps (lib/symbolize.js parseMaps)
 * @param {object} exe { fd, path }: the executable, opened (its program headers are read)
 */
function loaderNames(pid, maps, exe) {
  let memory;
  try {
    memory = new ProcessMemory(pid, { budget: 1 << 20 });
  } catch {
    return [];
  }
  try {
    const h = elfHeader(readAt(exe.fd, 0, 64));
    if (!h) return [];
    const phs = programHeaders(readAt(exe.fd, h.phoff, h.phentsize * h.phnum), h.phnum, h.phentsize);
    const dyn = phs.find((p) => p.type === PT_DYNAMIC);
    const loads = phs.filter((p) => p.type === PT_LOAD);
    if (!dyn || !loads.length) return [];
    // The executable's load bias: 0 for one linked at a fixed address.
    let bias = 0;
    if (h.type === ET_DYN) {
      const first = maps.filter((m) => m.path === exe.path).reduce((a, m) => (!a || m.start < a.start ? m : a), null);
      if (!first) return [];
      bias = first.start - (Math.min(...loads.map((l) => l.vaddr)) & ~0xfff);
    }
    const dynamic = memory.read(bias + dyn.vaddr, Math.min(dyn.memsz, 64 * 1024));
    const rDebug = dynamic && debugAddress(dynamic);
    const head = rDebug && memory.read(rDebug + 8, 8);
    let lm = head ? Number(head.readBigUInt64LE(0)) : 0;
    const out = [];
    for (let n = 0; lm && n < MAX_OBJECTS; n++) {
      const entry = memory.read(lm, 32);   // l_addr, l_name, l_ld, l_next
      if (!entry) break;
      const nameAt = Number(entry.readBigUInt64LE(8));
      const ld = Number(entry.readBigUInt64LE(16));
      const name = nameAt ? readString(memory, nameAt) : null;
      const map = maps.find((m) => ld >= m.start && ld < m.end && m.path.startsWith('/'));
      if (name && map) out.push({ name, path: map.path.replace(/ \(deleted\)$/, '') });
      lm = Number(entry.readBigUInt64LE(24));
    }
    return out;
  } finally {
    memory.close();
  }
}

module.exports = { loaderNames, debugAddress };
