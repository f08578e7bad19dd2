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
const {
  STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_TLS, STT_GNU_IFUNC, SHT_SYMTAB, SHT_DYNSYM, PT_LOAD, PT_NOTE, PT_DYNAMIC, PT_TLS,
  DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH,
} = require('./elf-constants');
const { lastAtOrBelow } = require('./sorted');

const NT_GNU_BUILD_ID = 3;
const DEBUG_DIR = '/usr/lib/debug/.build-id';

// An ELF file is read only if it is a regular file (map_files paths are
// kernel links; a plain path's last name must not be a link someone
// planted), of bounded size. `file` is a path, or { root, path }: a file of
// another root (a process's, /proc/PID/root) opened inside that root only
// (safe-open.js openInRoot: a container's links never lead to a host file).
const MAX_ELF_BYTES = 4 * 1024 * 1024 * 1024;
// A perf map larger than this is not read (V8's maps of long-running
// processes reach hundreds of MB; a planted sparse file could be any size).
const MAX_PERF_MAP_BYTES = 1024 * 1024 * 1024;

// Reads one ELF file's headers and calls onSymbol(value, size, strtab, nameOffset, type)
// for every defined function symbol of .symtab and .dynsym (with `data`, every
// variable instead; with `any`, functions, variables and thread-local
// variables); -> { type (ET_*), loads, buildId, tls (PT_TLS: { vaddr, memsz, align }, or null) }.
/** Pure: an ELF64 little-endian file's header (its first 64 bytes), or null. */
function elfHeader(eh) {
  if (eh.length < 64 || eh.readUInt32BE(0) !== 0x7f454c46 || eh[4] !== 2 || eh[5] !== 1) return null;
  return {
    type: eh.readUInt16LE(16), machine: eh.readUInt16LE(18),
    phoff: Number(eh.readBigUInt64LE(32)), shoff: Number(eh.readBigUInt64LE(40)),
    phentsize: eh.readUInt16LE(54), phnum: eh.readUInt16LE(56), shentsize: eh.readUInt16LE(58), shnum: eh.readUInt16LE(60),
  };
}

/** Pure: program headers -> [{ type, flags, offset, vaddr, filesz, memsz, align }]. */
function programHeaders(ph, phnum, phentsize) {
  const out = [];
  for (let i = 0; i < phnum && (i + 1) * phentsize <= ph.length; i++) {
    const o = i * phentsize;
    out.push({
      type: ph.readUInt32LE(o), flags: ph.readUInt32LE(o + 4), offset: Number(ph.readBigUInt64LE(o + 8)),
      vaddr: Number(ph.readBigUInt64LE(o + 16)), filesz: Number(ph.readBigUInt64LE(o + 32)), memsz: Number(ph.readBigUInt64LE(o + 40)),
      align: Number(ph.readBigUInt64LE(o + 48)),
    });
  }
  return out;
}

function readElfSymbols(fd, onSymbol, { data = false, any = false } = {}) {
  const h = elfHeader(readAt(fd, 0, 64));
  if (!h) return null;
  const { shoff, shentsize, shnum } = h;
  const loads = [];
  let buildId = null;
  let tls = null;
  for (const p of programHeaders(readAt(fd, h.phoff, h.phentsize * h.phnum), h.phnum, h.phentsize)) {
    if (p.type === PT_LOAD) loads.push({ offset: p.offset, vaddr: p.vaddr, filesz: p.filesz });
    if (p.type === PT_NOTE && !buildId && p.filesz < 65536) buildId = findBuildId(readAt(fd, p.offset, p.filesz));
    if (p.type === PT_TLS && !tls) tls = { vaddr: p.vaddr, memsz: p.memsz, align: p.align };
  }
  const sh = readAt(fd, shoff, shentsize * shnum);
  const section = (i) => {
    const o = i * shentsize;
    return { type: sh.readUInt32LE(o + 4), offset: Number(sh.readBigUInt64LE(o + 24)), size: Number(sh.readBigUInt64LE(o + 32)), link: sh.readUInt32LE(o + 40) };
  };
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type !== SHT_SYMTAB && s.type !== SHT_DYNSYM) continue;
    const strs = section(s.link);
    const strtab = readAt(fd, strs.offset, strs.size);
    const syms = readAt(fd, s.offset, s.size);
    for (let o = 0; o + 24 <= syms.length; o += 24) {
      const info = syms[o + 4];
      const type = info & 0xf;
      const shndx = syms.readUInt16LE(o + 6);
      const value = Number(syms.readBigUInt64LE(o + 8));
      const size = Number(syms.readBigUInt64LE(o + 16));
      if (shndx === 0 || value === 0) continue;
      const fn = type === STT_FUNC || type === STT_GNU_IFUNC || (type === STT_NOTYPE && size > 0);
      if (any ? !fn && type !== STT_OBJECT && type !== STT_TLS : data ? type !== STT_OBJECT : !fn) continue;
      onSymbol(value, size, strtab, syms.readUInt32LE(o), type);
    }
  }
  return { type: h.type, loads, buildId, tls };
}

function openElf(file, followLinks) {
  if (typeof file === 'object') return openInRoot(file.root, file.path, { maxBytes: MAX_ELF_BYTES, followLinks: true });
  return openRegular(file, { maxBytes: MAX_ELF_BYTES, followLinks });
}

function withElf(file, followLinks, read) {
  const opened = openElf(file, followLinks);
  if (opened.refused) return null;
  try {
    return read(opened.fd);
  } catch (err) {
    return null;
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** Symbol table of one ELF file: { loads, values, sizes, names } sorted by value, or null. */
function loadElfSymbols(file, { followLinks = false } = {}) {
  return withElf(file, followLinks, (fd) => {
    const entries = [];
    const strtabs = [];
    const header = readElfSymbols(fd, (value, size, strtab, name) => {
      if (strtabs[strtabs.length - 1] !== strtab) strtabs.push(strtab);
      entries.push({ value, size, name, which: strtabs.length - 1 });
    });
    if (!header) return null;
    entries.sort((a, b) => a.value - b.value || b.size - a.size);
    return {
      loads: header.loads,
      buildId: header.buildId,
      values: Float64Array.from(entries, (e) => e.value),
      sizes: Float64Array.from(entries, (e) => e.size),
      nameAt: (i) => {
        const e = entries[i];
        const buf = strtabs[e.which];
        const end = buf.indexOf(0, e.name);
        return buf.toString('latin1', e.name, end < 0 ? buf.length : end);
      },
    };
  });
}

/**
 * Where the given names are defined in one ELF file, without building its
 * whole table (a node binary has 180,000 symbols): -> { loads, found: Map(name
 * -> { value, size }) } or null. The first definition of a name wins.
 */
function findElfSymbols(file, names, { followLinks = false } = {}) {
  const wanted = new Map(names.map((n) => [n, Buffer.from(n + '\0', 'latin1')]));
  return withElf(file, followLinks, (fd) => {
    const found = new Map();
    const header = readElfSymbols(fd, (value, size, strtab, name) => {
      for (const [n, bytes] of wanted) {
        if (!found.has(n) && strtab[name] === bytes[0] && strtab.compare(bytes, 0, bytes.length, name, name + bytes.length) === 0) {
          found.set(n, { value, size });
        }
      }
    });
    return header && { loads: header.loads, found };
  });
}

/**
 * The variables of one ELF file whose names start with one of `prefixes`,
 * and the first `width` bytes each holds in the file (V8's postmortem
 * constants): -> { type (ET_*), loads, tls, found: Map(name -> { value,
 * size, type (STT_*), bytes }) } or null. A variable with no bytes in the
 * file (.bss) holds zeros. The first definition of a name wins. With
 * `any`, functions (their first bytes: code) and thread-local variables
 * (their value an offset in the TLS segment; no bytes) too.
 */
function findElfData(file, prefixes, { followLinks = false, width = 4, any = false } = {}) {
  const wanted = prefixes.map((p) => Buffer.from(p, 'latin1'));
  return withElf(file, followLinks, (fd) => {
    const symbols = new Map();
    const header = readElfSymbols(fd, (value, size, strtab, name, type) => {
      if (!wanted.some((p) => strtab[name] === p[0] && strtab.compare(p, 0, p.length, name, name + p.length) === 0)) return;
      const end = strtab.indexOf(0, name);
      const text = strtab.toString('latin1', name, end < 0 ? strtab.length : end);
      if (!symbols.has(text)) symbols.set(text, { value, size, type });
    }, { data: !any, any });
    if (!header) return null;
    for (const sym of symbols.values()) {
      const seg = sym.type !== STT_TLS && header.loads.find((l) => sym.value >= l.vaddr && sym.value + width <= l.vaddr + l.filesz);
      sym.bytes = seg ? readAt(fd, sym.value - seg.vaddr + seg.offset, width) : Buffer.alloc(width);
    }
    return { type: header.type, loads: header.loads, tls: header.tls, found: symbols };
  });
}

// Bounds on what elfDynamic reads: the dynamic section's entries, and one string.
const MAX_DYNAMIC_BYTES = 64 * 1024;
const MAX_DYNAMIC_STRING = 4096;

/**
 * What an ELF file asks of the dynamic loader: { needed: [names], rpath:
 * [dirs], runpath: [dirs] } (as written: $ORIGIN unexpanded), or null (not
 * ELF, unreadable, no dynamic section). Opened as every ELF file here.
 */
function elfDynamic(file, { followLinks = false } = {}) {
  return withElf(file, followLinks, (fd) => {
    const h = elfHeader(readAt(fd, 0, 64));
    if (!h) return null;
    const phs = programHeaders(readAt(fd, h.phoff, h.phentsize * h.phnum), h.phnum, h.phentsize);
    const dyn = phs.find((p) => p.type === PT_DYNAMIC);
    if (!dyn || dyn.filesz > MAX_DYNAMIC_BYTES) return null;
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
    const seg = strtab && phs.find((p) => p.type === PT_LOAD && strtab.value >= p.vaddr && strtab.value < p.vaddr + p.filesz);
    if (!seg || !strsz) return null;
    const at = strtab.value - seg.vaddr + seg.offset;
    const text = (off) => {
      if (off >= strsz.value) return null;
      const b = readAt(fd, at + off, Math.min(MAX_DYNAMIC_STRING, strsz.value - off));
      const end = b.indexOf(0);
      return end < 0 ? null : b.toString('latin1', 0, end);
    };
    const of = (tag) => entries.filter((e) => e.tag === tag).map((e) => text(e.value)).filter((t) => t !== null);
    const dirs = (tag) => of(tag).flatMap((t) => t.split(':')).filter(Boolean);
    return { needed: of(DT_NEEDED), rpath: dirs(DT_RPATH), runpath: dirs(DT_RUNPATH) };
  });
}

/** Pure: the notes of a PT_NOTE segment (or an NT_ note section): [{ name, type, desc }]. */
function elfNotes(buf) {
  const notes = [];
  let o = 0;
  while (o + 12 <= buf.length) {
    const namesz = buf.readUInt32LE(o);
    const descsz = buf.readUInt32LE(o + 4);
    const type = buf.readUInt32LE(o + 8);
    const nameAt = o + 12;
    const descAt = nameAt + Math.ceil(namesz / 4) * 4;
    if (descAt + descsz > buf.length) break;
    notes.push({ name: buf.toString('latin1', nameAt, nameAt + Math.max(0, namesz - 1)), type, desc: buf.subarray(descAt, descAt + descsz) });
    o = descAt + Math.ceil(descsz / 4) * 4;
  }
  return notes;
}

// The GNU build ID from a PT_NOTE segment, as hex, or null.
function findBuildId(notes) {
  const note = elfNotes(notes).find((n) => n.type === NT_GNU_BUILD_ID && n.name === 'GNU');
  return note ? note.desc.toString('hex') : null;
}

// Separate debug symbols (e.g. Debian's libc6-dbg) for a stripped library.
function loadDebugSymbols(buildId) {
  if (!buildId || buildId.length < 4) return null;
  return loadElfSymbols(path.join(DEBUG_DIR, buildId.slice(0, 2), buildId.slice(2) + '.debug'), { followLinks: true });
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
  {
    while (pos < map.size) {
      const n = fs.readSync(map.fd, chunk, 0, Math.min(chunk.length, map.size - pos), pos);
      if (n === 0) break;
      pos += n;
      const text = rest + chunk.toString('utf8', 0, n);
      const lines = text.split('\n');
      rest = lines.pop();
      for (const line of lines) matchPerfLine(line, addresses, found);
    }
    if (rest) matchPerfLine(rest, addresses, found);
  }
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
  try { return fs.readFileSync(`/proc/${pid}/status`, 'utf8'); } catch (err) { return null; }
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

class Symbolizer {
  constructor({ demangle = true } = {}) {
    this.elfCache = new Map();
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
    try { maps = parseMaps(fs.readFileSync(`/proc/${pid}/maps`, 'utf8')); } catch (err) { /* gone */ }
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
    if (this.elfCache.has(key)) return this.elfCache.get(key);
    // A snapshot not taken from a live process (a core), or of one that may
    // be gone by now, says where its files are.
    const tries = snap.elfFiles ? snap.elfFiles(map) : liveElfFiles(snap, map);
    let table = null;
    for (const [file, followLinks] of tries) {
      table = loadElfSymbols(file, { followLinks });
      if (table) break;
    }
    if (table) table.debug = loadDebugSymbols(table.buildId);
    this.elfCache.set(key, table);
    return table;
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
      const map = snap.maps.find((mm) => probe >= mm.start && probe < mm.end);
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

module.exports = { Symbolizer, liveElfFiles, loadElfSymbols, findElfSymbols, findElfData, elfDynamic, elfNotes, elfHeader, programHeaders, lookupSymbol, parseMaps, scanPerfMap, openPerfMap, MAX_PERF_MAP_BYTES };
