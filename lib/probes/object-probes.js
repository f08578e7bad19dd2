'use strict';
// The USDT probes one object file holds, for `nodetrace probes`: its stapsdt
// notes (systemtap's format: what bpftrace, bcc, perf and lib/usdt's probe
// libraries use), read from a file another user may control, so every read
// is bounded and every note is checked as lib/probe-libraries/library-check.js checks
// a probe library's (site on a nop in the file's code, base where the notes
// say, semaphore in its data). An object whose notes fail a check is kept
// with why, and none of its probes is traced.
//
// A note says where each argument is and its size (`-4@%edi`: a signed
// 32-bit value in edi; `8@%rsi`: 8 bytes, unsigned), not what it means: a
// char * is an unsigned 64-bit value like any pointer. Only a provider made
// with lib/usdt (lib/probes/inventory.js) says its arguments' types.
const fs = require('fs');
const { openRegular, readAt } = require('../safe-open');
const { elfLayout, stapsdtNotes, siteRefusal } = require('../probe-libraries/library-check');
const { LIMITS } = require('../limits');

// What one object's notes may cost: a library with its own probes has a
// handful (Debian 12's libstdc++ 3, libpython3.11 8; a node built
// --with-dtrace about 20; glibc where built with them about 50).
const MAX_OBJECT_NOTES = 1024;
const MAX_OBJECT_NOTE_BYTES = 1024 * 1024;

// One argument of a note: `[-]SIZE@LOCATION` (sdt.h); a bare location (old
// notes) is 8 bytes, unsigned. -> { signed, bytes, location }.
function parseArgument(text) {
  const m = /^(-?)(1|2|4|8)@(.+)$/.exec(text);
  if (!m) return { signed: false, bytes: 8, location: text };
  return { signed: m[1] === '-', bytes: Number(m[2]), location: m[3] };
}

// The arguments a note's format string describes, [] for none.
function parseArguments(format) {
  const t = String(format).trim();
  return t ? t.split(/\s+/).map(parseArgument) : [];
}

// What an argument of a note is, for the list: int32, uint64, ...
function argumentType(a) {
  return `${a.signed ? '' : 'u'}int${a.bytes * 8}`;
}

// Where a semaphore's address (checked to lie in a loaded segment of the
// file) is in the file, or null for none: the process has it at that
// offset of its mapping of the file.
function fileOffset(loads, address) {
  if (address === 0n) return null;
  const a = Number(address);
  const seg = loads.find((l) => a >= l.vaddr && a < l.vaddr + l.filesz);
  return seg ? a - seg.vaddr + seg.offset : null;
}

/**
 * The notes of the ELF file open on `fd` (`size` bytes), checked.
 * -> { notes: [{ provider, name, format, args, pc, semaphore, semaphoreOffset }] } or { refused }.
 */
function notesOfOpenFile(fd, size) {
  const read = (offset, length) => (offset >= 0 && length >= 0 && offset + length <= size ? readAt(fd, offset, length) : null);
  const layout = elfLayout(read, size, { maxSections: LIMITS.MAX_SECTIONS });
  if (layout.refused) return layout;
  const found = stapsdtNotes(read, layout, size, { maxNotes: MAX_OBJECT_NOTES, maxNoteBytes: MAX_OBJECT_NOTE_BYTES });
  if (found.refused) return found;
  const notes = [];
  for (const n of found.notes) {
    const why = siteRefusal(n, layout, read, size);
    if (why) return { refused: why };
    notes.push({
      provider: n.provider, name: n.name, format: n.args, args: parseArguments(n.args), pc: n.pc, semaphore: n.semaphore,
      semaphoreOffset: fileOffset(layout.loads, n.semaphore),
    });
  }
  return { notes };
}

// Verdicts by file identity (device, inode, size, times): every Node process
// maps the same libstdc++, read once per run.
const cache = new Map();
const CACHE_MAX = 4096;

/**
 * The checked notes of one file (a /proc/PID/map_files link: the mapped
 * file itself; or a path of nodetrace's own choosing).
 * -> { notes } (none: []) or { refused }.
 */
function objectNotes(file) {
  const opened = openRegular(file, { maxBytes: LIMITS.MAX_ELF_BYTES, followLinks: /^\/proc\/\d+\/map_files\//.test(file) });
  if (opened.refused) return opened;
  try {
    const st = fs.fstatSync(opened.fd, { bigint: true });
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    if (cache.has(key)) return cache.get(key);
    const verdict = notesOfOpenFile(opened.fd, opened.size);
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, verdict);
    return verdict;
  } catch (err) {
    return { refused: `it could not be read (${err.code || err.message})` };
  } finally {
    fs.closeSync(opened.fd);
  }
}

module.exports = { objectNotes, notesOfOpenFile, parseArguments, parseArgument, argumentType, MAX_OBJECT_NOTES };
