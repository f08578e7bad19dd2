'use strict';
// Names raw user-space addresses, from a snapshot of the process's memory
// map, the ELF symbol tables of the mapped files, and V8's /tmp/perf-PID.map
// for JIT code (written by node --perf-basic-prof). nodetrace does this itself
// because bpftrace symbolizes only when it prints, from the live process:
// `ebadf` needs the stack while the target is stopped (bpftrace took seconds),
// and `latency` needs names after a -c command or a dying target is gone.
//
// ELF64 little-endian only (x86-64, arm64); other files' frames stay as
// addresses.
const fs = require('fs');
const path = require('path');
const { demangleNames } = require('./demangle');
const { openRegular, openInRoot, readAt } = require('./safe-open');
const { stat: procStat } = require('./proc');
const { parseNsPids, otherMountNamespace } = require('./proc/container');
const { readProcText } = require('./proc/read-bounded');
const {
  STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_TLS, STT_GNU_IFUNC, SHT_SYMTAB, SHT_DYNSYM, SHT_STRTAB, SHT_HASH, SHT_GNU_HASH,
  PT_LOAD, PT_NOTE, PT_DYNAMIC, PT_TLS,
  DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH,
} = require('./elf-constants');
const { lastAtOrBelow } = require('./sorted');
const { LIMITS, overLimit, formatBytes, elfReadBudgetMs } = require('./limits');
const { RenewingBudget } = require('./read-budget');
const { runBudget } = require('./memory-budget');

const NT_GNU_BUILD_ID = 3;
const DEBUG_DIR = '/usr/lib/debug/.build-id';

const { MAX_ELF_BYTES, MAX_PERF_MAP_BYTES } = LIMITS;

/** Pure: an ELF64 little-endian file's header (its first 64 bytes), or null. */
function elfHeader(eh) {
  if (eh.length < 64 || eh.readUInt32BE(0) !== 0x7f454c46 || eh[4] !== 2 || eh[5] !== 1) return null;
  return {
    type: eh.readUInt16LE(16), machine: eh.readUInt16LE(18),
    phoff: Number(eh.readBigUInt64LE(32)), shoff: Number(eh.readBigUInt64LE(40)),
    phentsize: eh.readUInt16LE(54), phnum: eh.readUInt16LE(56), shentsize: eh.readUInt16LE(58),
    shnum: eh.readUInt16LE(60),
  };
}

/** Pure: program headers -> [{ type, flags, offset, vaddr, filesz, memsz, align }]. */
function programHeaders(ph, phnum, phentsize) {
  const out = [];
  for (let i = 0; i < phnum && (i + 1) * phentsize <= ph.length; i++) {
    const o = i * phentsize;
    out.push({
      type: ph.readUInt32LE(o), flags: ph.readUInt32LE(o + 4), offset: Number(ph.readBigUInt64LE(o + 8)),
      vaddr: Number(ph.readBigUInt64LE(o + 16)), filesz: Number(ph.readBigUInt64LE(o + 32)),
      memsz: Number(ph.readBigUInt64LE(o + 40)),
      align: Number(ph.readBigUInt64LE(o + 48)),
    });
  }
  return out;
}

const ELF64_PHDR = 56;
const ELF64_SHDR = 64;
const ELF64_SYM = 24;
// Symbols are read this many bytes at a time, never a whole table at once.
const SYMBOL_CHUNK = ELF64_SYM * 43690;

// Whether [offset, offset + size) lies inside a file of `fileSize` bytes.
function inFile(offset, size, fileSize) {
  return Number.isSafeInteger(offset) && Number.isSafeInteger(size) && offset >= 0 && size >= 0
    && offset + size <= fileSize;
}

/** An open ELF file's program headers, bounded: -> [headers] or { refused }. */
function readProgramHeaders(fd, h, fileSize) {
  if (h.phnum === 0) return [];
  if (h.phentsize < ELF64_PHDR) return { refused: `its program headers are ${h.phentsize} bytes each, less than ELF64's ${ELF64_PHDR}` };
  if (h.phnum > LIMITS.MAX_PROGRAM_HEADERS) return { refused: `it has ${h.phnum} program headers, more than the ${LIMITS.MAX_PROGRAM_HEADERS} nodetrace reads` };
  if (!inFile(h.phoff, h.phentsize * h.phnum, fileSize)) return { refused: 'its program headers lie past its end' };
  return programHeaders(readAt(fd, h.phoff, h.phentsize * h.phnum), h.phnum, h.phentsize);
}

/**
 * The symbol tables of an open ELF file, every count and size checked:
 * -> { type (ET_*), loads, buildId, tls (PT_TLS: { vaddr, memsz, align } or
 * null), tables: [{ kind, offset, size, strtab: Buffer }] }
 * or { refused: 'why' } (the whole file: not ELF, or its headers cannot
 * be right). A table over a limit is left out and said (overLimit), the
 * others read. At most one .symtab and one .dynsym: the gABI allows one
 * of each, and a file with more is refused. `name` and `key` (its identity)
 * say which file in what is said.
 */
function elfSymbolTables(fd, fileSize, { name, key = null }) {
  const h = elfHeader(readAt(fd, 0, 64));
  if (!h) return { refused: 'it is not a 64-bit little-endian ELF file' };
  const phs = readProgramHeaders(fd, h, fileSize);
  if (phs.refused) return phs;
  const loads = [];
  let buildId = null;
  let tls = null;
  for (const p of phs) {
    if (p.type === PT_LOAD) loads.push({ offset: p.offset, vaddr: p.vaddr, filesz: p.filesz });
    if (p.type === PT_TLS && !tls) tls = { vaddr: p.vaddr, memsz: p.memsz, align: p.align };
    if (p.type === PT_NOTE && !buildId && p.filesz <= LIMITS.MAX_BUILD_ID_NOTES_BYTES
      && inFile(p.offset, p.filesz, fileSize)) {
      buildId = findBuildId(readAt(fd, p.offset, p.filesz));
    }
  }
  const tables = [];
  if (h.shnum === 0) return { type: h.type, loads, buildId, tls, tables };
  if (h.shentsize < ELF64_SHDR) return { refused: `its section headers are ${h.shentsize} bytes each, less than ELF64's ${ELF64_SHDR}` };
  if (h.shnum > LIMITS.MAX_SECTIONS) return { refused: `it has ${h.shnum} sections, more than the ${LIMITS.MAX_SECTIONS} nodetrace reads` };
  if (!inFile(h.shoff, h.shentsize * h.shnum, fileSize)) return { refused: 'its section headers lie past its end' };
  const sh = readAt(fd, h.shoff, h.shentsize * h.shnum);
  const section = (i) => {
    const o = i * h.shentsize;
    return { index: i, type: sh.readUInt32LE(o + 4), offset: Number(sh.readBigUInt64LE(o + 24)),
      size: Number(sh.readBigUInt64LE(o + 32)), link: sh.readUInt32LE(o + 40) };
  };
  const found = [];
  const hashes = [];
  for (let i = 0; i < h.shnum; i++) {
    const s = section(i);
    if (s.type === SHT_SYMTAB || s.type === SHT_DYNSYM) found.push(s);
    if ((s.type === SHT_GNU_HASH || s.type === SHT_HASH) && inFile(s.offset, s.size, fileSize)) hashes.push(s);
  }
  for (const type of [SHT_SYMTAB, SHT_DYNSYM]) {
    const n = found.filter((s) => s.type === type).length;
    if (n > 1) return { refused: `it has ${n} ${type === SHT_SYMTAB ? '.symtab' : '.dynsym'} symbol tables, where an ELF file has one at most` };
  }
  for (const s of found) {
    const kind = s.type === SHT_SYMTAB ? '.symtab' : '.dynsym';
    const strs = s.link > 0 && s.link < h.shnum ? section(s.link) : null;
    if (!strs || strs.type !== SHT_STRTAB) continue;
    if (!inFile(s.offset, s.size, fileSize) || !inFile(strs.offset, strs.size, fileSize)) {
      overLimit(name, `its ${kind} symbols were not read: the table lies past the file's end`, { key });
      continue;
    }
    if (s.size > LIMITS.MAX_SYMBOL_TABLE_BYTES || strs.size > LIMITS.MAX_STRING_TABLE_BYTES) {
      overLimit(name, `its ${kind} symbols were not read: ${formatBytes(Math.max(s.size, strs.size))}, more than the ${formatBytes(LIMITS.MAX_SYMBOL_TABLE_BYTES)} nodetrace reads of one table`, { key });
      continue;
    }
    // The string table is read when first needed: a name found by a hash
    // table reads none of .symtab's.
    const table = { kind, offset: s.offset, size: s.size - (s.size % ELF64_SYM), strtabSize: strs.size };
    let strtab = null;
    Object.defineProperty(table, 'strtab', { enumerable: true, get: () => strtab || (strtab = readAt(fd, strs.offset, strs.size)) });
    // .dynsym's hash table (GNU's, else System V's), where names are looked up.
    const hash = hashes.filter((x) => x.link === s.index)
      .sort((a, b) => (b.type === SHT_GNU_HASH) - (a.type === SHT_GNU_HASH))[0];
    if (kind === '.dynsym' && hash) table.hash = { gnu: hash.type === SHT_GNU_HASH, offset: hash.offset, size: hash.size };
    tables.push(table);
  }
  return { type: h.type, loads, buildId, tls, tables };
}

// The NUL-terminated name at `at` in a string table, bounded, as latin1.
function nameIn(strtab, at) {
  if (at >= strtab.length) return '';
  const stop = Math.min(strtab.length, at + LIMITS.MAX_SYMBOL_NAME_BYTES);
  const end = strtab.indexOf(0, at);
  return strtab.toString('latin1', at, end < 0 || end > stop ? stop : end);
}

// Whether a symbol is a definition of the kind asked for: a function (with
// `data`, a variable; with `any`, either or a thread-local variable).
function definesKind(shndx, value, type, size, { data = false, any = false } = {}) {
  if (shndx === 0 || value === 0) return false;
  const fn = type === STT_FUNC || type === STT_GNU_IFUNC || (type === STT_NOTYPE && size > 0);
  return any ? fn || type === STT_OBJECT || type === STT_TLS : data ? type === STT_OBJECT : fn;
}

// The hash functions of .gnu.hash (Bernstein's) and of System V's .hash.
function gnuHash(bytes) {
  let h = 5381;
  for (const c of bytes) h = (h * 33 + c) >>> 0;
  return h;
}
function sysvHash(bytes) {
  let h = 0;
  for (const c of bytes) {
    h = ((h << 4) + c) >>> 0;
    const g = h & 0xf0000000;
    if (g) h ^= g >>> 24;
    h = (h & ~g) >>> 0;
  }
  return h;
}

/**
 * A name's defined function in .dynsym `t`, looked up through its hash
 * table as the dynamic loader does, reading a few entries, never the
 * table: -> { value, size } or null. `bytes`: the name and a NUL. Every
 * index and count is checked against the sections, and a chain is
 * followed at most as many steps as the table has symbols.
 */
function hashLookup(fd, t, bytes) {
  const { hash } = t;
  const count = t.size / ELF64_SYM;
  const u32 = (at) => (at + 4 <= hash.offset + hash.size ? readAt(fd, at, 4).readUInt32LE(0) : null);
  const symbolAt = (i) => {
    if (i <= 0 || i >= count) return null;
    const e = readAt(fd, t.offset + i * ELF64_SYM, ELF64_SYM);
    const name = e.readUInt32LE(0);
    const value = Number(e.readBigUInt64LE(8));
    const size = Number(e.readBigUInt64LE(16));
    const match = name + bytes.length <= t.strtab.length
      && t.strtab.compare(bytes, 0, bytes.length, name, name + bytes.length) === 0;
    return match && definesKind(e.readUInt16LE(6), value, e[4] & 0xf, size) ? { value, size } : null;
  };
  const name = bytes.subarray(0, bytes.length - 1);
  if (hash.gnu) {
    if (hash.size < 16) return null;
    const head = readAt(fd, hash.offset, 16);
    const nbuckets = head.readUInt32LE(0);
    const symoffset = head.readUInt32LE(4);
    const bloomWords = head.readUInt32LE(8);
    if (nbuckets === 0) return null;
    const h = gnuHash(name);
    const buckets = hash.offset + 16 + bloomWords * 8;
    const chains = buckets + nbuckets * 4;
    let i = u32(buckets + (h % nbuckets) * 4);
    for (let steps = 0; i !== null && i >= symoffset && i < count && steps < count; steps++, i++) {
      const link = u32(chains + (i - symoffset) * 4);
      if (link === null) return null;
      if (((link ^ h) >>> 1) === 0) {
        const sym = symbolAt(i);
        if (sym) return sym;
      }
      if (link & 1) return null;
    }
    return null;
  }
  if (hash.size < 8) return null;
  const head = readAt(fd, hash.offset, 8);
  const nbucket = head.readUInt32LE(0);
  if (nbucket === 0) return null;
  let y = u32(hash.offset + 8 + (sysvHash(name) % nbucket) * 4);
  const chains = hash.offset + 8 + nbucket * 4;
  for (let steps = 0; y && steps < count; steps++) {
    const sym = symbolAt(y);
    if (sym) return sym;
    y = u32(chains + y * 4);
  }
  return null;
}

// Calls onSymbol(value, size, strtab, nameOffset, type) for every defined
// function symbol of the tables (with `data`, every variable instead; with
// `any`, functions, variables and thread-local variables; with `prefixes`
// (Buffers), only those whose name starts with one of them, tested first:
// a table none of whose names can is not read, startsWithAny), reading
// each table SYMBOL_CHUNK bytes at a time.
function eachSymbol(fd, tables, onSymbol, { data = false, any = false, prefixes = null } = {}) {
  for (const t of tables) {
    const named = prefixes ? startsWithAny(t.strtab, prefixes) : null;
    if (prefixes && !named) continue;
    for (let at = 0; at < t.size; at += SYMBOL_CHUNK) {
      const syms = readAt(fd, t.offset + at, Math.min(SYMBOL_CHUNK, t.size - at));
      for (let o = 0; o + ELF64_SYM <= syms.length; o += ELF64_SYM) {
        const nameAt = syms.readUInt32LE(o);
        if (named && !named(nameAt)) continue;
        const info = syms[o + 4];
        const type = info & 0xf;
        const shndx = syms.readUInt16LE(o + 6);
        const value = Number(syms.readBigUInt64LE(o + 8));
        const size = Number(syms.readBigUInt64LE(o + 16));
        if (!definesKind(shndx, value, type, size, { data, any })) continue;
        if (nameAt >= t.strtab.length) continue;
        onSymbol(value, size, t.strtab, nameAt, type);
      }
    }
  }
}

// What names a file in a line said about it: a mapped file by its path
// (the link map_files holds), as the operator would look for it.
function fileName(file) {
  if (typeof file === 'object') return `${file.root}${file.path}`;
  if (/^\/proc\/(?:\d+\/map_files|self\/fd)\//.test(file)) {
    try { return `${fs.readlinkSync(file)} (${file})`; } catch { /* gone */ }
  }
  return file;
}

// An ELF file is read only if it is a regular file (map_files paths are
// kernel links; a plain path's last name must not be a link someone
// planted), of bounded size. `file` is a path, or { root, path }: a file of
// another root (a process's, /proc/PID/root) opened inside that root only
// (safe-open.js openInRoot: a container's links never lead to a host file).
// What is in it is its owner's: every count and size is checked against
// the file's size and lib/limits.js before anything is read.
function openElf(file, followLinks) {
  if (typeof file === 'object') return openInRoot(file.root, file.path, { maxBytes: MAX_ELF_BYTES, followLinks: true });
  return openRegular(file, { maxBytes: MAX_ELF_BYTES, followLinks });
}

/**
 * Opens an ELF file now (`file` as for findElfSymbolsAt with followLinks),
 * to read after the process whose map named it is gone: -> { path (its
 * /proc/self/fd link, which reopens the same file), close() }, or null (it
 * cannot be opened). One too large to read is given by its own path, so that
 * the reading says why it was not read.
 */
function holdElfFile(file) {
  const opened = openElf(file, true);
  if (opened.refused) return /larger than/.test(opened.refused) ? { path: file, close() {} } : null;
  return {
    path: `/proc/self/fd/${opened.fd}`,
    close() { fs.closeSync(opened.fd); },
  };
}

// Time spent in withElf, against LIMITS.ELF_READ_BUDGET_MS in each
// ELF_READ_WINDOW_MS.
const elfReading = new RenewingBudget({ budgetMs: elfReadBudgetMs(), windowMs: LIMITS.ELF_READ_WINDOW_MS });

// Opens `file` and runs read(fd, tables) over its symbol tables (null when
// it is not an ELF file that can be read; a refusal is said once). Once
// the window's time for reading such files is spent, no file is read until
// it ends: said once a window, naming the first left out.
function withElf(file, followLinks, read, o = {}) {
  const refused = elfReading.refusal();
  if (refused) {
    // One text a window (its wait as at the first refusal), so that overLimit says it once.
    if (!elfRefusal || elfRefusal.window !== refused.window) {
      elfRefusal = { window: refused.window, text: `not read, nor any executable or library for the next ${Math.ceil(refused.renewsInMs / 1000)} s: `
        + `reading them took ${formatSeconds(elfReading.budgetMs)} already, the bound per ${formatSeconds(elfReading.windowMs)}` };
    }
    overLimit(fileName(file), elfRefusal.text, { key: `ELF_READ_BUDGET_MS ${refused.window}` });
    return null;
  }
  return elfReading.spend(() => readElf(file, followLinks, read, o));
}
let elfRefusal = null;

function formatSeconds(ms) {
  return ms % 60000 === 0 && ms >= 60000 ? `${ms / 60000} minutes` : `${ms / 1000} s`;
}

function readElf(file, followLinks, read, { tables = true }) {
  const opened = openElf(file, followLinks);
  if (opened.refused) {
    if (/larger than/.test(opened.refused)) overLimit(fileName(file), `not read: ${opened.refused}`);
    return null;
  }
  try {
    if (!tables) return read(opened.fd, null, opened.size);
    // One file reached by two paths (map_files, the path in its root) is said once.
    const st = fs.fstatSync(opened.fd);
    const elf = elfSymbolTables(opened.fd, opened.size, { name: fileName(file), key: `${st.dev}:${st.ino}` });
    if (elf.refused) {
      if (!/not a 64-bit/.test(elf.refused)) overLimit(fileName(file), `its symbols were not read: ${elf.refused}`, { key: `${st.dev}:${st.ino}` });
      return null;
    }
    elf.key = `${st.dev}:${st.ino}`;
    return read(opened.fd, elf, opened.size);
  } catch {
    return null;
  } finally {
    fs.closeSync(opened.fd);
  }
}

// Bytes a table of `capacity` symbols takes while it is built (the symbols
// as read, their order, the sorted copy kept), and once built (the copy).
const SYMBOL_BUILD_BYTES = 21 + 4 + 21;
const SYMBOL_KEPT_BYTES = 21;

/**
 * Symbol table of one ELF file: { loads, buildId, values, sizes, nameAt(i),
 * bytes, charged } sorted by value, or null. Kept compact (typed arrays,
 * the string tables as read): `bytes` is what it holds, charged to
 * `budget` (the run's memory, lib/memory-budget.js) as `charged`: its
 * holder gives that back when it drops the table (Symbolizer.close()).
 * Building it is charged first, at most what it takes while built: past
 * the budget the file's symbols are not read, said in one line.
 */
function loadElfSymbols(file, { followLinks = false, budget = runBudget() } = {}) {
  return withElf(file, followLinks, (fd, elf) => {
    const capacity = elf.tables.reduce((n, t) => n + t.size / ELF64_SYM, 0);
    const strtabBytes = elf.tables.reduce((n, t) => n + t.strtabSize, 0);
    const building = strtabBytes + capacity * SYMBOL_BUILD_BYTES;
    if (!budget.charge(building)) {
      overLimit(fileName(file), `its symbols were not read (${formatBytes(building)}): ${budget.refusal()}`, { key: elf.key });
      return null;
    }
    let table;
    try {
      table = buildSymbolTable(fd, elf, capacity);
    } catch (err) {
      budget.release(building);
      throw err;
    }
    // What it keeps from now on: the rest given back.
    budget.release(building - table.bytes);
    table.charged = table.bytes;
    return table;
  });
}

function buildSymbolTable(fd, elf, capacity) {
  const values = new Float64Array(capacity);
  const sizes = new Float64Array(capacity);
  const names = new Uint32Array(capacity);
  const which = new Uint8Array(capacity);
  const strtabs = elf.tables.map((t) => t.strtab);
  let n = 0;
  eachSymbol(fd, elf.tables, (value, size, strtab, name) => {
    values[n] = value;
    sizes[n] = size;
    names[n] = name;
    which[n] = strtabs.indexOf(strtab);
    n++;
  });
  // Sorted by value, the larger first where two start together.
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => values[a] - values[b] || sizes[b] - sizes[a]);
  const sorted = { values: new Float64Array(n), sizes: new Float64Array(n), names: new Uint32Array(n),
    which: new Uint8Array(n) };
  for (let i = 0; i < n; i++) {
    const k = order[i];
    sorted.values[i] = values[k];
    sorted.sizes[i] = sizes[k];
    sorted.names[i] = names[k];
    sorted.which[i] = which[k];
  }
  return {
    loads: elf.loads,
    buildId: elf.buildId,
    values: sorted.values,
    sizes: sorted.sizes,
    nameAt: (i) => nameIn(strtabs[sorted.which[i]], sorted.names[i]),
    bytes: strtabs.reduce((b, s) => b + s.length, 0) + n * SYMBOL_KEPT_BYTES,
  };
}

// Past this many places of a prefix in one string table (a hostile file
// can repeat it), names are compared at each symbol instead: as right,
// slower, bounded by the table's symbols.
const MAX_PREFIX_PLACES = 4096;

/**
 * Pure: whether the name at a string table offset starts with one of
 * `prefixes` (Buffers), as a function of the offset; null where no name of
 * the table can (the table's symbols need not be read). Where the prefixes
 * occur in the table at most MAX_PREFIX_PLACES times, those places are found
 * once by Buffer's native search and the test is a lookup: a node binary's
 * .symtab names 150,000-180,000 symbols, and comparing at each was most
 * of the time (docs/performance.md, "Planning").
 */
function startsWithAny(strtab, prefixes) {
  const places = new Set();
  for (const p of prefixes) {
    for (let i = strtab.indexOf(p); i >= 0; i = strtab.indexOf(p, i + 1)) {
      if (places.size >= MAX_PREFIX_PLACES) {
        return (name) => prefixes.some((q) => strtab[name] === q[0]
          && strtab.compare(q, 0, q.length, name, name + q.length) === 0);
      }
      places.add(i);
    }
  }
  return places.size ? (name) => places.has(name) : null;
}

/**
 * Where the given names are defined in one ELF file, without building its
 * whole table (a node binary has 180,000 symbols): -> { loads, found: Map(name
 * -> { value, size }) } or null. The first definition of a name wins.
 * Exported names are looked up through .dynsym's hash table; only names it
 * does not define are searched for in .symtab, read through.
 */
function findElfSymbols(file, names, { followLinks = false } = {}) {
  const named = new Map(names.map((n) => [n, Buffer.from(n + '\0', 'latin1')]));
  return withElf(file, followLinks, (fd, elf) => {
    const found = new Map();
    // Names .dynsym defines, through its hash table; the rest from the
    // other table (.symtab: static functions no hash covers).
    const dynsym = elf.tables.find((t) => t.hash);
    if (dynsym) {
      for (const [n, bytes] of named) {
        const sym = hashLookup(fd, dynsym, bytes);
        if (sym) found.set(n, sym);
      }
    }
    const rest = new Map([...named].filter(([n]) => !found.has(n)));
    if (!rest.size) return { loads: elf.loads, found };
    // (A name and its NUL as a prefix: the name exactly.)
    eachSymbol(fd, elf.tables.filter((t) => t !== dynsym), (value, size, strtab, name) => {
      for (const [n, bytes] of rest) {
        if (!found.has(n) && strtab[name] === bytes[0]
          && strtab.compare(bytes, 0, bytes.length, name, name + bytes.length) === 0) {
          found.set(n, { value, size });
        }
      }
    }, { prefixes: [...rest.values()] });
    return { loads: elf.loads, found };
  });
}

/**
 * The functions that start exactly at the given file offsets of one ELF
 * file (code as mapped: an address's offset in its mapping plus the
 * mapping's), in one pass over its symbols, without building its whole
 * table: -> Map(offset -> name) or null. The first definition wins.
 */
function findElfSymbolsAt(file, offsets, { followLinks = false } = {}) {
  return withElf(file, followLinks, (fd, elf) => {
    const wanted = new Map();   // vaddr -> offset
    for (const off of offsets) {
      const seg = elf.loads.find((l) => off >= l.offset && off < l.offset + l.filesz);
      if (seg) wanted.set(off - seg.offset + seg.vaddr, off);
    }
    const found = new Map();
    eachSymbol(fd, elf.tables, (value, size, strtab, name) => {
      const off = wanted.get(value);
      if (off !== undefined && !found.has(off)) found.set(off, nameIn(strtab, name));
    });
    return found;
  });
}

/**
 * The names of the functions one ELF file defines that start with
 * `prefix`, each once (a name in both .symtab and .dynsym too): -> [names]
 * or null. A table none of whose names has the prefix is not read.
 */
function elfFunctionsStartingWith(file, prefix, { followLinks = false } = {}) {
  const wanted = [Buffer.from(prefix, 'latin1')];
  return withElf(file, followLinks, (fd, elf) => {
    const names = new Set();
    eachSymbol(fd, elf.tables, (value, size, strtab, name) => names.add(nameIn(strtab, name)), { prefixes: wanted });
    return [...names];
  });
}

/**
 * The variables of one ELF file whose names start with one of `prefixes`,
 * and the first `width` bytes each holds in the file (V8's postmortem
 * constants): -> { type (ET_*), loads, tls, found: Map(name -> { value,
 * size, type (STT_*), bytes }) } or null. A variable with no bytes in the
 * file (.bss) holds zeros. The first definition of a name wins; at most
 * MAX_DATA_SYMBOLS are kept (node 26 has 485 v8dbg_ ones). With `any`,
 * functions (their first bytes: code) and thread-local variables (their
 * value an offset in the TLS segment; no bytes) too.
 */
const MAX_DATA_SYMBOLS = 8192;
function findElfData(file, prefixes, { followLinks = false, width = 4, any = false } = {}) {
  const wanted = prefixes.map((p) => Buffer.from(p, 'latin1'));
  return withElf(file, followLinks, (fd, elf, fileSize) => {
    const symbols = new Map();
    eachSymbol(fd, elf.tables, (value, size, strtab, name, type) => {
      if (symbols.size >= MAX_DATA_SYMBOLS) return;
      const text = nameIn(strtab, name);
      if (!symbols.has(text)) symbols.set(text, { value, size, type });
    }, { data: !any, any, prefixes: wanted });
    for (const sym of symbols.values()) {
      const seg = sym.type !== STT_TLS
        && elf.loads.find((l) => sym.value >= l.vaddr && sym.value + width <= l.vaddr + l.filesz);
      const at = seg ? sym.value - seg.vaddr + seg.offset : -1;
      sym.bytes = seg && inFile(at, width, fileSize) ? readAt(fd, at, width) : Buffer.alloc(width);
    }
    return { type: elf.type, loads: elf.loads, tls: elf.tls, found: symbols };
  });
}

// Bounds on what elfDynamic reads: the dynamic section's entries, and one string.
const { MAX_DYNAMIC_BYTES, MAX_DYNAMIC_STRING } = LIMITS;

/**
 * What an ELF file asks of the dynamic loader: { needed: [names], rpath:
 * [dirs], runpath: [dirs] } (as written: $ORIGIN unexpanded), or null (not
 * ELF, unreadable, no dynamic section). Opened as every ELF file here.
 */
function elfDynamic(file, { followLinks = false } = {}) {
  return withElf(file, followLinks, (fd, none, fileSize) => {
    const h = elfHeader(readAt(fd, 0, 64));
    if (!h) return null;
    const phs = readProgramHeaders(fd, h, fileSize);
    if (phs.refused) {
      overLimit(fileName(file), `not read: ${phs.refused}`);
      return null;
    }
    const dyn = phs.find((p) => p.type === PT_DYNAMIC);
    if (!dyn || dyn.filesz > MAX_DYNAMIC_BYTES || !inFile(dyn.offset, dyn.filesz, fileSize)) return null;
    const d = readAt(fd, dyn.offset, dyn.filesz);
    const entries = [];
    for (let o = 0; o + 16 <= d.length; o += 16) {
      const tag = Number(d.readBigInt64LE(o));
      if (tag === DT_NULL) break;
      entries.push({ tag, value: Number(d.readBigUInt64LE(o + 8)) });
    }
    const strtab = entries.find((e) => e.tag === DT_STRTAB);
    const strsz = entries.find((e) => e.tag === DT_STRSZ);
    // DT_STRTAB is an address: its file offset from the load segment holding it.
    const seg = strtab && phs.find((p) => p.type === PT_LOAD && strtab.value >= p.vaddr
      && strtab.value < p.vaddr + p.filesz);
    if (!seg || !strsz) return null;
    const at = strtab.value - seg.vaddr + seg.offset;
    const text = (off) => {
      if (off >= strsz.value || !inFile(at + off, 1, fileSize)) return null;
      const b = readAt(fd, at + off, Math.min(MAX_DYNAMIC_STRING, strsz.value - off));
      const end = b.indexOf(0);
      return end < 0 ? null : b.toString('latin1', 0, end);
    };
    const of = (tag) => entries.filter((e) => e.tag === tag).map((e) => text(e.value)).filter((t) => t !== null);
    const dirs = (tag) => of(tag).flatMap((t) => t.split(':')).filter(Boolean);
    return { needed: of(DT_NEEDED), rpath: dirs(DT_RPATH), runpath: dirs(DT_RUNPATH) };
  }, { tables: false });
}

/**
 * Pure: calls fn({ name, type, desc }) for each note of a PT_NOTE segment
 * (or an NT_ note section), in order, until it returns false. No note is
 * kept; with `types` (a Set), fn only sees notes of those types and the
 * others cost nothing (a segment of zeros is a note every 12 bytes);
 * `onAny` is told of every note and may end the walk too.
 */
function eachNote(buf, fn, { types = null, onAny = null } = {}) {
  let o = 0;
  while (o + 12 <= buf.length) {
    const namesz = buf.readUInt32LE(o);
    const descsz = buf.readUInt32LE(o + 4);
    const type = buf.readUInt32LE(o + 8);
    const nameAt = o + 12;
    const descAt = nameAt + Math.ceil(namesz / 4) * 4;
    if (descAt + descsz > buf.length) break;
    if (onAny && onAny() === false) break;
    if (!types || types.has(type)) {
      const name = buf.toString('latin1', nameAt, nameAt + Math.max(0, Math.min(namesz - 1, 64)));
      if (fn({ name, type, desc: buf.subarray(descAt, descAt + descsz) }) === false) break;
    }
    o = descAt + Math.ceil(descsz / 4) * 4;
  }
}

/** Pure: the notes of a PT_NOTE segment (or an NT_ note section): [{ name, type, desc }]. */
function elfNotes(buf) {
  const notes = [];
  eachNote(buf, (n) => { notes.push(n); });
  return notes;
}

// The GNU build ID from a PT_NOTE segment, as hex, or null.
function findBuildId(notes) {
  let id = null;
  eachNote(notes, (n) => {
    if (n.type === NT_GNU_BUILD_ID && n.name === 'GNU') id = n.desc.toString('hex');
    return id === null;
  });
  return id;
}

// Separate debug symbols (e.g. Debian's libc6-dbg) for a stripped library.
function loadDebugSymbols(buildId, { budget = runBudget() } = {}) {
  if (!buildId || buildId.length < 4) return null;
  return loadElfSymbols(path.join(DEBUG_DIR, buildId.slice(0, 2), buildId.slice(2) + '.debug'),
    { followLinks: true, budget });
}

function lookupSymbol(table, vaddr) {
  const { values, sizes } = table;
  const found = lastAtOrBelow(values, vaddr);
  // Among symbols starting at or below vaddr, the nearest one that contains it.
  for (let i = found; i >= 0 && i > found - 8; i--) {
    if (sizes[i] === 0 || vaddr < values[i] + sizes[i]) return { name: table.nameAt(i), start: values[i] };
  }
  return null;
}

function parseMaps(text) {
  const maps = [];
  for (const line of text.split('\n')) {
    // [^]: a path may hold \r or U+2028, which `.` would not match, and the
    // mapping would go unseen (the kernel writes a newline in it as \012).
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) (\S+) ([0-9]+)\s*([^]*)$/.exec(line);
    if (!m) continue;
    const start = parseInt(m[1], 16);
    const end = parseInt(m[2], 16);
    // `range`: the mapping's name in /proc/PID/map_files, which has none of
    // /proc/PID/maps' zero padding (00400000-00e0c000 there is 400000-e0c000).
    maps.push({
      start, end, range: `${start.toString(16)}-${end.toString(16)}`, perms: m[3],
      offset: parseInt(m[4], 16), dev: m[5], inode: m[6], path: m[7],
    });
  }
  return maps;
}

// Reads the perf map in chunks, keeping for each address the last entry that
// covers it (V8 reuses code space; later lines win). Files of hundreds of MB
// are read once, without holding them in memory. `map` is an open perf map
// (openPerfMap): only its first `size` bytes, what it held when the
// snapshot was taken, are read, so code V8 moved there since cannot
// be mistaken for what ran then.
function scanPerfMap(map, addresses) {
  const found = new Map();
  if (!addresses.length || !map) return found;
  const chunk = Buffer.alloc(1 << 20);
  let pos = 0;
  let rest = '';
  // A line longer than MAX_PERF_MAP_LINE_BYTES is skipped to its end, not kept.
  let skipping = false;
  let skipped = 0;
  while (pos < map.size) {
    const n = fs.readSync(map.fd, chunk, 0, Math.min(chunk.length, map.size - pos), pos);
    if (n === 0) break;
    pos += n;
    let text = chunk.toString('utf8', 0, n);
    if (skipping) {
      const nl = text.indexOf('\n');
      if (nl < 0) continue;
      text = text.slice(nl + 1);
      skipping = false;
    }
    const lines = (rest + text).split('\n');
    rest = lines.pop();
    for (const line of lines) matchPerfLine(line, addresses, found);
    if (rest.length > LIMITS.MAX_PERF_MAP_LINE_BYTES) {
      rest = '';
      skipping = true;
      skipped++;
    }
  }
  if (rest && !skipping) matchPerfLine(rest, addresses, found);
  if (skipped) overLimit(map.path || 'a perf map', `${skipped} line(s) longer than ${formatBytes(LIMITS.MAX_PERF_MAP_LINE_BYTES)} were skipped`);
  return found;
}

// V8's perf map of process `pid`: node --perf-basic-prof writes
// /tmp/perf-PID.map with its PID as it knows it (in a container, its PID
// there: /tmp/perf-1.map in the container's /tmp), so it is read inside the
// process's own root (safe-open.js openInRoot: never through a link out of
// it), as a file of the process's own user: in /tmp anyone can create that
// name first, as a FIFO, a link or a huge file.
// -> { path, fd, size } | { path, refused: 'why' } | null (no such file, or
// an earlier process's). `path` says where it is, as the operator would
// look: /tmp/perf-PID.map, or /proc/PID/root/tmp/perf-N.map for a process
// that sees other mounts than nodetrace.
function openPerfMap(pid) {
  const status = readStatus(pid);
  const nsPids = parseNsPids(status);
  const inside = nsPids.length ? nsPids[nsPids.length - 1] : pid;
  const name = `/tmp/perf-${inside}.map`;
  const file = otherMountNamespace(pid) ? `/proc/${pid}/root${name}` : name;
  // Its real, effective, saved and file-system uids: the file is the fsuid's.
  const m = /^Uid:\s*(.*)$/m.exec(status || '');
  const uids = m ? m[1].trim().split(/\s+/).filter(Boolean).map(Number) : [];
  if (!uids.length) return null;   // gone
  const opened = openInRoot(`/proc/${pid}/root`, name, { owners: uids, maxBytes: MAX_PERF_MAP_BYTES });
  if (opened.refused) return opened.missing ? null : { path: file, refused: opened.refused };
  // V8 never removes its map, and PIDs come round again (32,768 of them
  // here): a map last written before this process started is an earlier
  // process's, whose names would be wrong, and this one has none. (V8
  // writes it as the process starts; 2 s for the boot time's whole seconds.)
  const started = procStat.startedAtMs(pid);
  if (started !== null && isStale(fs.fstatSync(opened.fd).mtimeMs, started)) {
    fs.closeSync(opened.fd);
    return null;
  }
  return { path: file, fd: opened.fd, size: opened.size };
}

function readStatus(pid) {
  return readProcText(`/proc/${pid}/status`);
}

const STALE_SLACK_MS = 2000;
function isStale(mtimeMs, startedMs) {
  return mtimeMs < startedMs - STALE_SLACK_MS;
}

function matchPerfLine(line, addresses, found) {
  const sp1 = line.indexOf(' ');
  const sp2 = line.indexOf(' ', sp1 + 1);
  if (sp1 < 0 || sp2 < 0) return;
  const start = parseInt(line.slice(0, sp1), 16);
  const size = parseInt(line.slice(sp1 + 1, sp2), 16);
  for (const a of addresses) {
    if (a >= start && a < start + size) found.set(a, { name: line.slice(sp2 + 1), start });
  }
}

/**
 * Where a live process's mapped file is read, in order: map_files/ (exactly
 * the mapped file, even if it was replaced or lives in another mount
 * namespace), the path inside the process's own root, and the plain path
 * only for a process that sees nodetrace's own mounts (in a container the
 * same path names another file here). [file, followLinks] pairs.
 */
function liveElfFiles(snap, map) {
  return [[`/proc/${snap.pid}/map_files/${map.range}`, true], [{ root: `/proc/${snap.pid}/root`, path: map.path }, true],
    ...(snap.otherMounts === false ? [[map.path, false]] : [])];
}

// The mapping of a snapshot that holds `address`, by binary search over
// its maps sorted by start (a core may name 65,536 mappings, and a walk
// looks up every pc). The index is kept on the snapshot, for its maps.
function mapAt(snap, address) {
  let index = snap.mapIndex;
  if (!index || index.maps !== snap.maps) {
    const sorted = [...snap.maps].sort((a, b) => a.start - b.start);
    index = { maps: snap.maps, sorted, starts: Float64Array.from(sorted, (m) => m.start) };
    Object.defineProperty(snap, 'mapIndex', { value: index, writable: true, configurable: true, enumerable: false });
  }
  const i = lastAtOrBelow(index.starts, address);
  // (Overlapping entries, which only a crafted core has: the few before.)
  for (let k = i; k >= 0 && k > i - 8; k--) {
    const m = index.sorted[k];
    if (address >= m.start && address < m.end) return m;
  }
  return null;
}

// The bytes of the run's memory a kept table (and its debug symbols') holds.
const chargedBy = (t) => (t ? (t.charged || 0) + (t.debug ? t.debug.charged || 0 : 0) : 0);

class Symbolizer {
  /**
   * @param {object} [o] { demangle, cacheBytes: the budget of its tables
   *   (SYMBOL_CACHE_BYTES), budget: the run's memory they are charged to
   *   (lib/memory-budget.js), given back as they are dropped and at close() }
   */
  constructor({ demangle = true, cacheBytes = LIMITS.SYMBOL_CACHE_BYTES, budget = runBudget() } = {}) {
    this.elfCache = new Map();   // file -> its table (or null), least recently used first
    this.cacheBytes = 0;
    this.cacheBudget = cacheBytes || LIMITS.SYMBOL_CACHE_BYTES;
    this.budget = budget;
    this.filesRead = 0;
    this.demangle = demangle;
  }

  /**
   * What must be read while the process is still there (stopped): cheap,
   * and nothing that can block: /proc/PID/maps, and the perf map opened (not
   * read) with its size then. Call release() when done with it.
   * @param {object} [o] { perfMap: false } for callers that name native code only
   */
  snapshot(pid, { perfMap = true } = {}) {
    // The mount namespace first: an exiting process gives up its memory
    // before its namespaces (the kernel's do_exit), so a snapshot with maps
    // always knows its mounts. Read after the maps, a process exiting in
    // between left maps with otherMounts null, whose files could then not
    // be read by their paths once it was gone: an add-on's kind unnamed.
    const otherMounts = otherMountNamespace(pid);
    let maps = [];
    maps = parseMaps(readProcText(`/proc/${pid}/maps`) || '');
    return { pid, maps, perfMap: perfMap ? openPerfMap(pid) : null, otherMounts, takenAt: Date.now() };
  }

  release(snap) {
    if (snap && snap.perfMap && snap.perfMap.fd !== undefined) {
      fs.closeSync(snap.perfMap.fd);
      delete snap.perfMap.fd;
      snap.perfMap.size = 0;
    }
  }

  elfFor(snap, map) {
    const key = `${map.dev}:${map.inode}:${map.path}`;
    if (this.elfCache.has(key)) {
      // Most recently used last: the first are dropped past the budget.
      const table = this.elfCache.get(key);
      this.elfCache.delete(key);
      this.elfCache.set(key, table);
      return table;
    }
    // A snapshot not taken from a live process (a core), or of one that may
    // be gone by now, says where its files are.
    const over = ++this.filesRead > LIMITS.MAX_SYMBOL_FILES;
    // Said once, naming the first file left out.
    if (over) overLimit(map.path, `its symbols, and those of any further file, were not read: the symbols of ${LIMITS.MAX_SYMBOL_FILES} files were read already`, { key: 'MAX_SYMBOL_FILES' });
    const tries = over ? [] : snap.elfFiles ? snap.elfFiles(map) : liveElfFiles(snap, map);
    let table = null;
    for (const [file, followLinks] of tries) {
      table = loadElfSymbols(file, { followLinks, budget: this.budget });
      if (table) break;
    }
    if (table) table.debug = loadDebugSymbols(table.buildId, { budget: this.budget });
    this.keep(key, table);
    return table;
  }

  // Keeps a file's table, within its budget across files.
  keep(key, table) {
    const bytes = (t) => (t ? t.bytes + (t.debug ? t.debug.bytes : 0) : 0);
    this.elfCache.set(key, table);
    this.cacheBytes += bytes(table);
    for (const [k, t] of this.elfCache) {
      if (this.cacheBytes <= this.cacheBudget || k === key) break;
      this.elfCache.delete(k);
      this.cacheBytes -= bytes(t);
      this.budget.release(chargedBy(t));
    }
  }

  /** Drops every table kept, giving their memory back to the run's budget. Can be used again after. */
  close() {
    for (const t of this.elfCache.values()) this.budget.release(chargedBy(t));
    this.elfCache.clear();
    this.cacheBytes = 0;
  }

  /**
   * @param {object} snap from snapshot()
   * @param {string[]} frames raw lines: "0x7f..." (bpftrace, no symbols) or already-named frames;
   *   the first is the probed pc itself unless allReturnAddresses; with allPcs every
   *   frame is a pc (sampled program counters, as `profile` has)
   * @returns {{frames: {text, module, kind}[], perfMapUsed: boolean, jitUnnamed: number, interpreted: number}}
   *   kind: native (a symbol of a mapped file), js (named from the perf map), jit (anonymous
   *   executable memory the perf map does not name), special (a page the kernel names, as
   *   [vdso]: module says which), named (named by the tracer), unmapped, unknown
   */
  symbolize(snap, frames, { allReturnAddresses = false, allPcs = false } = {}) {
    const out = [];
    const anonAddrs = [];
    for (let i = 0; i < frames.length; i++) {
      const raw = frames[i];
      const m = /^0x([0-9a-f]+)$/i.exec(raw.trim());
      if (!m) { out.push({ text: raw, module: '', kind: 'named' }); continue; }
      const addr = parseInt(m[1], 16);
      // Return addresses point after the call; look up the call itself.
      const probe = allPcs || (i === 0 && !allReturnAddresses) ? addr : addr - 1;
      const map = mapAt(snap, probe);
      const frame = { addr, text: '0x' + m[1], module: '', kind: 'unknown' };
      if (map && map.path.startsWith('/')) {
        frame.module = path.basename(map.path.replace(/ \(deleted\)$/, ''));
        const table = this.elfFor(snap, map);
        if (table) {
          const fileOff = probe - map.start + map.offset;
          const seg = table.loads.find((l) => fileOff >= l.offset && fileOff < l.offset + l.filesz);
          const vaddr = seg ? fileOff - seg.offset + seg.vaddr : fileOff;
          const sym = lookupSymbol(table, vaddr) || (table.debug && lookupSymbol(table.debug, vaddr));
          if (sym) {
            frame.symbol = sym.name;
            frame.offset = vaddr - sym.start + (addr - probe);
            frame.kind = 'native';
          }
        }
      } else if (map && map.perms[2] === 'x' && map.path) {
        // An executable mapping the kernel names ([vdso], [vsyscall],
        // [uprobes-trampoline], [anon:NAME]...): that is what it is, never JIT.
        frame.kind = 'special';
        frame.module = map.path;
      } else if (map && map.perms[2] === 'x') {
        // Anonymous executable memory with no name: where V8 puts the code it
        // compiles (its code space); named only from its perf map.
        frame.kind = 'jit';
        frame.module = '[anon]';
        anonAddrs.push(probe);
        frame.probe = probe;
      } else if (!map) {
        frame.kind = 'unmapped';
      }
      out.push(frame);
    }
    const perf = snap.perfMap && snap.perfMap.fd !== undefined ? scanPerfMap(snap.perfMap, anonAddrs) : new Map();
    let jitUnnamed = 0;
    for (const f of out) {
      if (f.kind !== 'jit') continue;
      const hit = perf.get(f.probe);
      if (hit) { f.symbol = hit.name; f.offset = f.probe - hit.start + 1; f.kind = 'js'; f.module = 'JIT'; } else jitUnnamed++;
    }
    if (this.demangle) {
      const names = out.filter((f) => f.kind === 'native' && f.symbol && f.symbol.startsWith('_Z')).map((f) => f.symbol);
      const dm = names.length ? demangleNames(names) : new Map();
      for (const f of out) if (f.symbol && dm.has(f.symbol)) f.symbol = dm.get(f.symbol);
    }
    let interpreted = 0;
    for (const f of out) {
      if (f.symbol) f.text = `${f.symbol}+${f.offset}`;
      if (f.symbol && /^Builtins_Interpreter(EntryTrampoline|OnStackReplacement)/.test(f.symbol)) interpreted++;
      delete f.probe;
    }
    return { frames: out, perfMapUsed: perf.size > 0, jitUnnamed, interpreted };
  }
}

module.exports = { Symbolizer, liveElfFiles, loadElfSymbols, findElfSymbols, findElfSymbolsAt, holdElfFile, findElfData,
  elfFunctionsStartingWith, elfDynamic, elfNotes, eachNote, elfHeader, programHeaders, lookupSymbol, parseMaps,
  scanPerfMap, openPerfMap, elfSymbolTables, startsWithAny, MAX_PERF_MAP_BYTES };
