'use strict';
// An ELF core file (gcore's, or the kernel's) opened for frame walks: its
// memory (PT_LOAD segments), its threads' registers (NT_PRSTATUS notes),
// the files it had mapped (NT_FILE) and its command (NT_PRPSINFO). x86-64
// only (the registers' layout). Everything in it is another user's
// process's: counts and sizes are checked against the file before use, and
// a file that is not such a core, or a truncated one, is said in one line
// (UserError).
const fs = require('fs');
const { UserError } = require('../errors');
const { openRegular, readAt } = require('../safe-open');
const { eachNote, elfHeader, programHeaders } = require('../symbolize');
const { Budget, validRange } = require('./memory');
const { ET_CORE, EM_X86_64, PT_LOAD, PT_NOTE, PF_X } = require('../elf-constants');
const { lastAtOrBelow } = require('../sorted');
const { LIMITS, overLimit, formatBytes } = require('../limits');
const { grouped } = require('../render/text');
const { runBudget } = require('../memory-budget');

const NT_PRSTATUS = 1;
const NT_PRPSINFO = 3;
const NT_FILE = 0x46494c45;
const {
  MAX_CORE_NOTES_BYTES, MAX_CORE_NOTES, MAX_CORE_SEGMENTS, MAX_CORE_BYTES, MAX_CORE_THREADS, MAX_CORE_FILES,
  MAX_CORE_PATH_BYTES,
} = LIMITS;
const KEPT_NOTES = new Set([NT_PRSTATUS, NT_PRPSINFO, NT_FILE]);
// struct elf_prstatus (x86-64): pr_pid at 32, pr_reg (struct
// user_regs_struct: 27 words) at 112. fs_base: the thread pointer, where V8
// 14 finds a thread's isolate (lib/v8/dispatch-table.js).
const PRSTATUS_PID = 32;
const PRSTATUS_REGS = 112;
const REG_INDEX = { rbp: 4, rip: 16, rsp: 19, fsBase: 21 };
// struct elf_prpsinfo (x86-64): pr_pid at 24, pr_fname[16] at 40, pr_psargs[80] at 56.
const PRPSINFO_PID = 24;
const PRPSINFO_FNAME = 40;

/** A core's memory, read from the file on demand (never all of it). */
class CoreMemory {
  constructor(fd, segments, { budget } = {}) {
    this.fd = fd;
    this.segments = segments;      // sorted by vaddr: { vaddr, memsz, offset, filesz, present }
    this.budget = new Budget(budget);
  }

  read(address, length) {
    if (this.fd === null || !validRange(address, length) || !this.budget.take(length)) return null;
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const seg = this.segments[mid];
      if (address < seg.vaddr) hi = mid - 1;
      else if (address >= seg.vaddr + seg.memsz) lo = mid + 1;
      else {
        // Only what the file holds: a segment's tail past filesz (or past a
        // truncated file's end) was not saved.
        if (address + length > seg.vaddr + seg.present) return null;
        const buf = readAt(this.fd, seg.offset + (address - seg.vaddr), length);
        return buf.length === length ? buf : null;
      }
    }
    return null;
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * Pure: an NT_FILE note -> [{ start, end, offset (bytes), path }], at most
 * `max` entries (those past it are left out: `more` says how many), each
 * path at most MAX_CORE_PATH_BYTES.
 */
function parseFileNote(desc, { max = MAX_CORE_FILES } = {}) {
  if (desc.length < 16) return [];
  const count = Number(desc.readBigUInt64LE(0));
  const pageSize = Number(desc.readBigUInt64LE(8));
  if (count * 24 + 16 > desc.length || pageSize <= 0 || pageSize > 1 << 24) return [];
  const files = [];
  let name = 16 + count * 24;
  for (let i = 0; i < Math.min(count, max); i++) {
    const o = 16 + i * 24;
    const end = name < desc.length ? desc.indexOf(0, name) : -1;
    const stop = end < 0 ? desc.length : end;
    files.push({
      start: Number(desc.readBigUInt64LE(o)),
      end: Number(desc.readBigUInt64LE(o + 8)),
      offset: Number(desc.readBigUInt64LE(o + 16)) * pageSize,
      path: name < desc.length ? desc.toString('utf8', name, Math.min(stop, name + MAX_CORE_PATH_BYTES)) : '',
    });
    name = stop + 1;
  }
  if (count > max) files.more = count - max;
  return files;
}

// Pure: a test of whether [start, end) meets any of `ranges` ({ start, end }),
// in O(log n) each: the ranges sorted by start, with the furthest end so far.
function overlapTest(ranges) {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const starts = sorted.map((r) => r.start);
  const furthest = [];
  let far = -Infinity;
  for (const r of sorted) furthest.push(far = Math.max(far, r.end));
  return (start, end) => {
    const i = lastAtOrBelow(starts, end - 1);
    return i >= 0 && furthest[i] > start;
  };
}

/**
 * Opens a core -> { memory (CoreMemory), pid, command, threads: [{ tid,
 * registers: { rip, rsp, rbp, fsBase } }] (the thread that faulted or was current
 * first), files (NT_FILE), maps (parseMaps' shape, for the symbolizer),
 * truncated (bytes of memory missing from the file, or 0), notesUnread
 * (bytes of notes not read: past MAX_CORE_NOTES_BYTES, or refused by the
 * run's memory budget), close() }. Throws UserError.
 * `budget`: the run's memory its notes are charged to while read (lib/memory-budget.js).
 */
function openCore(file, { budget = runBudget() } = {}) {
  const opened = openRegular(file, { followLinks: true, maxBytes: MAX_CORE_BYTES });
  if (opened.refused) throw new UserError(`cannot read the core ${file}: ${opened.refused}.`);
  const { fd, size } = opened;
  const fail = (why, hint) => {
    fs.closeSync(fd);
    throw new UserError(`${file} ${why}.`, hint ? { hint } : undefined);
  };
  const eh = readAt(fd, 0, 64);
  if (eh.length < 64 || eh.readUInt32BE(0) !== 0x7f454c46) fail('is not an ELF file (not a core)');
  const h = elfHeader(eh);
  if (!h) fail('is not a 64-bit little-endian ELF file');
  if (h.type !== ET_CORE) fail('is an ELF file but not a core (its type is not ET_CORE)');
  if (h.machine !== EM_X86_64) fail('is a core of another architecture (nodetrace reads x86-64 cores)');
  if (h.phentsize < 56 || h.phnum === 0 || h.phnum > MAX_CORE_SEGMENTS || h.phoff + h.phentsize * h.phnum > size) {
    fail('is a truncated core (its program headers are missing)', 'The core was cut short (disk full, or a size limit): take it again.');
  }
  const segments = [];
  const threads = [];
  let files = [];
  let pid = null;
  let command = null;
  let missing = 0;
  let notesRead = 0;
  let notesLeft = 0;      // past MAX_CORE_NOTES_BYTES
  let notesRefused = 0;   // refused by the run's memory budget
  let threadsLeft = 0;
  let noteCount = 0;
  const countNote = () => ++noteCount <= MAX_CORE_NOTES;
  // Only the notes read here are kept (a zero note is one every 12 bytes):
  // threads' registers, the command, the files.
  const onNote = (n) => {
    if (n.type === NT_PRSTATUS && n.desc.length >= PRSTATUS_REGS + 27 * 8) {
      if (threads.length >= MAX_CORE_THREADS) { threadsLeft++; return; }
      const reg = (name) => Number(n.desc.readBigUInt64LE(PRSTATUS_REGS + 8 * REG_INDEX[name]));
      threads.push({ tid: n.desc.readInt32LE(PRSTATUS_PID), registers: { rip: reg('rip'), rsp: reg('rsp'), rbp: reg('rbp'), fsBase: reg('fsBase') } });
    } else if (n.type === NT_PRPSINFO && n.desc.length >= PRPSINFO_FNAME + 16) {
      pid = n.desc.readInt32LE(PRPSINFO_PID);
      const fname = n.desc.subarray(PRPSINFO_FNAME, PRPSINFO_FNAME + 16);
      const end = fname.indexOf(0);
      command = fname.toString('utf8', 0, end < 0 ? 16 : end);
    } else if (n.type === NT_FILE && n.name === 'CORE' && !files.length) {
      files = parseFileNote(n.desc);
      if (files.more) overLimit(file, `its NT_FILE note lists ${files.length + files.more} mappings; the first ${MAX_CORE_FILES} were read (a process has at most vm.max_map_count, 65,530 by default)`);
    }
  };
  for (const p of programHeaders(readAt(fd, h.phoff, h.phentsize * h.phnum), h.phnum, h.phentsize)) {
    if (p.type === PT_LOAD) {
      const present = Math.max(0, Math.min(p.filesz, size - p.offset));
      missing += p.filesz - present;
      segments.push({ vaddr: p.vaddr, memsz: p.memsz, offset: p.offset, filesz: p.filesz, present,
        exec: (p.flags & PF_X) !== 0 });
    } else if (p.type === PT_NOTE) {
      if (p.offset + p.filesz > size) fail('is a truncated core (its notes are cut)', 'Take the core again.');
      // Every note segment together at most MAX_CORE_NOTES_BYTES, each
      // held (charged to the run's memory) only while its notes are read.
      let take = Math.min(p.filesz, MAX_CORE_NOTES_BYTES - notesRead);
      notesLeft += p.filesz - take;
      if (take > 0 && !budget.charge(take)) {
        overLimit(file, `a note segment of ${grouped(take)} bytes was not read: ${budget.refusal()}`);
        // Counted after the refusal, not before: the whole segment went unread.
        notesRefused += take;
        take = 0;
      }
      try {
        if (take > 0 && noteCount <= MAX_CORE_NOTES) eachNote(readAt(fd, p.offset, take), onNote,
          { types: KEPT_NOTES, onAny: countNote });
      } finally {
        budget.release(take);
      }
      notesRead += take;
    }
  }
  if (notesLeft) overLimit(file, `its notes are ${grouped(notesRead + notesLeft + notesRefused)} bytes, more than the ${formatBytes(MAX_CORE_NOTES_BYTES)} nodetrace reads: the rest were not read`);
  if (noteCount > MAX_CORE_NOTES) overLimit(file, `it holds more than ${MAX_CORE_NOTES} notes; the first ${MAX_CORE_NOTES} were read (8 for each of ${MAX_CORE_THREADS} threads)`);
  if (threadsLeft) overLimit(file, `it holds ${MAX_CORE_THREADS + threadsLeft} threads; the first ${MAX_CORE_THREADS} were read (the kernel's default pid_max)`);
  segments.sort((a, b) => a.vaddr - b.vaddr);
  if (!threads.length) fail('is a core without threads (no NT_PRSTATUS note)', 'Take the core again with gcore or the kernel.');
  if (!segments.some((s) => s.present > 0)) fail('is a truncated core (no memory in it)', 'Take the core again.');
  const memory = new CoreMemory(fd, segments);
  // The maps the symbolizer reads: files from NT_FILE (gcore saves no
  // segment for a file's unwritten mappings, so which of them held code is
  // not known: any may), and the executable segments no file backs (V8's
  // generated code).
  const maps = files.map((f) => ({
    start: f.start, end: f.end, range: `${f.start.toString(16)}-${f.end.toString(16)}`, perms: 'r-xp',
    offset: f.offset, dev: 'core', inode: f.path, path: f.path,
  }));
  const backed = overlapTest(files);
  for (const s of segments) {
    if (s.exec && !backed(s.vaddr, s.vaddr + s.memsz)) {
      maps.push({ start: s.vaddr, end: s.vaddr + s.memsz, range: '', perms: 'r-xp', offset: 0, dev: '00:00', inode: '0', path: '' });
    }
  }
  maps.sort((a, b) => a.start - b.start);
  // The thread with the same ID as the process (the main thread) first.
  threads.sort((a, b) => (b.tid === pid) - (a.tid === pid));
  return { memory, pid, command, threads, files, maps, truncated: missing, notesUnread: notesLeft + notesRefused,
    segments, close: () => memory.close() };
}

module.exports = { openCore, parseFileNote, overlapTest, CoreMemory };
