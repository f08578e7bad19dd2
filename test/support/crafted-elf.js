'use strict';
// ELF files and cores a hostile user crafts (docs/security.md, issue 35),
// made at run time, sparse where they claim to be large: counts and sizes
// that are absurd for their files, as an attacker writes them.
const fs = require('fs');

const SHT_STRTAB = 3;
const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const SHDR = 64;
const PHDR = 56;

/**
 * A copy of ELF file `src` at `dst` (a real executable still runs: the
 * loader reads program headers only) whose section header table is
 * replaced by one at the file's end: the original sections, a string table
 * of `size` bytes at offset `at`, then `count` sections of `type` (default
 * SHT_SYMTAB, linked to that string table) of the same place and size.
 * `fileBytes`: the file made that large (a sparse hole) first.
 */
function withSections(src, dst, { count, type = SHT_SYMTAB, size = 256 * 1024 * 1024, at = 0, fileBytes = 0 }) {
  return withSectionTable(src, dst, (fd, old, shnum) => {
    const total = Math.min(0xfeff, shnum + 1 + count);
    const table = Buffer.alloc(total * SHDR);
    old.copy(table, 0);
    const strtab = shnum;
    const section = (i, t, link) => {
      const o = i * SHDR;
      table.writeUInt32LE(t, o + 4);
      table.writeBigUInt64LE(BigInt(at), o + 24);
      table.writeBigUInt64LE(BigInt(size), o + 32);
      table.writeUInt32LE(link, o + 40);
      table.writeBigUInt64LE(t === SHT_SYMTAB ? 24n : 0n, o + 56);
    };
    section(strtab, SHT_STRTAB, 0);
    for (let i = shnum + 1; i < total; i++) section(i, type, strtab);
    const end = Math.max(fs.fstatSync(fd).size, fileBytes);
    return { table, count: total, at: Math.ceil(end / 8) * 8 };
  });
}

/**
 * Copies ELF file `src` to `dst` and gives the copy the section header
 * table that `build(fd, old, shnum)` makes (`old`: the original `shnum`
 * headers; fd: the copy, open to write): -> { table, count (its headers),
 * at (where it is written) }. Returns dst.
 */
function withSectionTable(src, dst, build) {
  fs.copyFileSync(src, dst);
  const fd = fs.openSync(dst, 'r+');
  try {
    const eh = Buffer.alloc(64);
    fs.readSync(fd, eh, 0, 64, 0);
    const shnum = eh.readUInt16LE(60);
    const old = Buffer.alloc(shnum * SHDR);
    fs.readSync(fd, old, 0, old.length, Number(eh.readBigUInt64LE(40)));
    const { table, count, at } = build(fd, old, shnum);
    fs.writeSync(fd, table, 0, table.length, at);
    eh.writeBigUInt64LE(BigInt(at), 40);
    eh.writeUInt16LE(count, 60);
    fs.writeSync(fd, eh, 0, 64, 0);
  } finally {
    fs.closeSync(fd);
  }
  return dst;
}

/**
 * A copy of ELF file `src` at `dst` (it still runs, or loads: the loader
 * reads program headers, not sections) whose two symbol tables' string
 * tables (.strtab and .dynstr, as their sections say) claim `bytes` each:
 * the original strings first, so every real symbol is still named right,
 * then a sparse hole of zeros. A file with no .symtab (a stripped library)
 * is given an empty one, with such a string table. The string tables and
 * a new section header table are placed at the file's end.
 */
function withBigStringTables(src, dst, { bytes }) {
  return withSectionTable(src, dst, (fd, old, shnum) => {
    const typeOf = (i) => old.readUInt32LE(i * SHDR + 4);
    let symtab = -1;
    for (let i = 0; i < shnum; i++) if (typeOf(i) === SHT_SYMTAB) symtab = i;
    const total = symtab < 0 ? shnum + 2 : shnum;
    const table = Buffer.alloc(total * SHDR);
    old.copy(table, 0);
    const align = (n) => Math.ceil(n / 4096) * 4096;
    let at = align(fs.fstatSync(fd).size);
    if (symtab < 0) {
      // An empty .symtab, linked to a string table after it.
      symtab = shnum;
      table.writeUInt32LE(SHT_SYMTAB, symtab * SHDR + 4);
      table.writeBigUInt64LE(BigInt(at), symtab * SHDR + 24);
      table.writeUInt32LE(shnum + 1, symtab * SHDR + 40);
      table.writeBigUInt64LE(24n, symtab * SHDR + 56);
      table.writeUInt32LE(SHT_STRTAB, (shnum + 1) * SHDR + 4);
    }
    const linked = [symtab];
    for (let i = 0; i < shnum; i++) if (typeOf(i) === SHT_DYNSYM) linked.push(i);
    for (const s of linked) {
      const str = table.readUInt32LE(s * SHDR + 40);
      const o = str * SHDR;
      const was = Buffer.alloc(Number(table.readBigUInt64LE(o + 32)));
      if (was.length) fs.readSync(fd, was, 0, was.length, Number(table.readBigUInt64LE(o + 24)));
      fs.writeSync(fd, was, 0, was.length, at);
      table.writeBigUInt64LE(BigInt(at), o + 24);
      table.writeBigUInt64LE(BigInt(bytes), o + 32);
      at = align(at + bytes);
    }
    return { table, count: total, at };
  });
}

// One ELF note: owner name, type, desc, each padded to 4 bytes.
function note(type, owner, desc) {
  const name = Buffer.from(owner + '\0');
  const head = Buffer.alloc(12);
  head.writeUInt32LE(name.length, 0);
  head.writeUInt32LE(desc.length, 4);
  head.writeUInt32LE(type, 8);
  const pad = (b) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
  return Buffer.concat([head, pad(name), pad(desc)]);
}

/** The notes of a one-thread x86-64 core: NT_PRSTATUS (TID `tid`) and NT_PRPSINFO. */
function threadNotes({ tid = 4242, command = 'node' } = {}) {
  const prstatus = Buffer.alloc(336);
  prstatus.writeInt32LE(tid, 32);
  prstatus.writeBigUInt64LE(0x7f0000000100n, 112 + 8 * 4);   // rbp
  prstatus.writeBigUInt64LE(0x401000n, 112 + 8 * 16);        // rip
  prstatus.writeBigUInt64LE(0x7f0000000080n, 112 + 8 * 19);  // rsp
  const psinfo = Buffer.alloc(136);
  psinfo.writeInt32LE(tid, 24);
  psinfo.write(command, 40);
  return Buffer.concat([note(1, 'CORE', prstatus), note(3, 'CORE', psinfo)]);
}

/** An NT_FILE note of `files` [{ start, end, path }] (page size 4096). */
function fileNote(files) {
  const head = Buffer.alloc(16 + 24 * files.length);
  head.writeBigUInt64LE(BigInt(files.length), 0);
  head.writeBigUInt64LE(4096n, 8);
  files.forEach((f, i) => {
    head.writeBigUInt64LE(BigInt(f.start), 16 + 24 * i);
    head.writeBigUInt64LE(BigInt(f.end), 24 + 24 * i);
  });
  return note(0x46494c45, 'CORE', Buffer.concat([head, Buffer.from(files.map((f) => f.path).join('\0') + '\0')]));
}

/**
 * An x86-64 ELF core at `file`: the `notes` bytes in one PT_NOTE, plus
 * `extraNotes` PT_NOTE headers of `extraNoteBytes` each over one sparse
 * hole of zeros (zero notes, 12 bytes each), then `loads` PT_LOAD headers
 * [{ vaddr, size, exec }] whose bytes follow (one page each is written,
 * the rest left a hole).
 */
function writeCore(file,
  { notes = threadNotes(), extraNotes = 0, extraNoteBytes = 0, loads = [{ vaddr: 0x7f0000000000, size: 4096 }] } = {}) {
  const phnum = 1 + extraNotes + loads.length;
  const notesAt = 64 + phnum * PHDR;
  const holeAt = Math.ceil((notesAt + notes.length) / 4096) * 4096;
  let next = holeAt + Math.ceil(extraNoteBytes / 4096) * 4096;
  const ph = Buffer.alloc(phnum * PHDR);
  let i = 0;
  const header = (type, flags, offset, vaddr, size) => {
    const o = i++ * PHDR;
    ph.writeUInt32LE(type, o);
    ph.writeUInt32LE(flags, o + 4);
    ph.writeBigUInt64LE(BigInt(offset), o + 8);
    ph.writeBigUInt64LE(BigInt(vaddr), o + 16);
    ph.writeBigUInt64LE(BigInt(size), o + 32);
    ph.writeBigUInt64LE(BigInt(size), o + 40);
  };
  header(4, 0, notesAt, 0, notes.length);
  for (let k = 0; k < extraNotes; k++) header(4, 0, holeAt, 0, extraNoteBytes);
  const placed = [];
  for (const l of loads) {
    header(1, l.exec ? 5 : 6, next, l.vaddr, l.size);
    placed.push(next);
    next += Math.ceil(l.size / 4096) * 4096;
  }
  const eh = Buffer.alloc(64);
  eh.writeUInt32BE(0x7f454c46, 0);
  eh[4] = 2; eh[5] = 1; eh[6] = 1;
  eh.writeUInt16LE(4, 16);
  eh.writeUInt16LE(62, 18);
  eh.writeBigUInt64LE(64n, 32);
  eh.writeUInt16LE(64, 52);
  eh.writeUInt16LE(PHDR, 54);
  eh.writeUInt16LE(phnum, 56);
  const fd = fs.openSync(file, 'w', 0o600);
  try {
    fs.writeSync(fd, Buffer.concat([eh, ph, notes]), 0, null, 0);
    // Only the first load's first page is written; the rest is a hole.
    if (placed.length) fs.writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, placed[0]);
    fs.ftruncateSync(fd, next);
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

module.exports = { withSections, withBigStringTables, writeCore, threadNotes, fileNote, note };
