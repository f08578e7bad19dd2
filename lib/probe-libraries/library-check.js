'use strict';
// Is a probe library another user owns one a tracer can attach to without
// failing, or slowing, the trace of everyone else? Pure: bytes in, a verdict
// out.
//
// A tracer attached to a library by path reads its stapsdt notes: each is a
// probe site (an address), the notes' base, a semaphore and the arguments'
// locations. One crafted library in a trace of '*' used to end it for all:
// a site at 0x7fffffff ("Could not resolve symbol"), 1,000 sites of one
// probe (over bpftrace's 512 probes), 200 sites (27 s to attach). So a
// library is taken only if its notes are as lib/usdt/elf.js writes them:
//   - at most MAX_NOTES notes, all of them stapsdt notes in well-formed
//     SHT_NOTE sections;
//   - each note's base is the .stapsdt.base section's address (so the site
//     is where the note says, no adjustment);
//   - each site is inside an executable PT_LOAD segment, inside the file, on
//     a nop (what lib/usdt puts there; an instruction the kernel could refuse
//     to probe would fail the attach);
//   - each semaphore is 0 or inside a writable PT_LOAD segment, in the file;
//   - the traced provider's notes are its probes, each once, with the
//     argument locations its argument types give: no extra probe of that
//     provider (a wildcard in the program could match it) and no second
//     site of one.
// The same checks of sites, base and semaphores hold for any other object's
// stapsdt notes (libstdc++'s, a library's of its own: lib/probes/notes.js),
// read there through a bounded reader rather than as a whole file.
const { elfHeader, programHeaders, elfNotes } = require('../symbolize');
const { argFormat } = require('../usdt/elf');
const { kindOf } = require('../usdt/definition');
const { EM_X86_64, ET_DYN, PT_LOAD, PF_X, PF_W, SHT_NOTE } = require('../elf-constants');
const { LIMITS } = require('../limits');

// lib/usdt writes one note per probe (lib/limits.js).
const MAX_NOTES = LIMITS.MAX_PROBE_LIBRARY_NOTES;
const NT_STAPSDT = 3;
const SHDR_SIZE = 64;
const SEMAPHORE_BYTES = 2;
// The instructions a site may start with: lib/usdt's 5-byte nop, sdt.h's nop.
const NOPS = [Buffer.from([0x0f, 0x1f, 0x44, 0x00, 0x00]), Buffer.from([0x90])];
const LONGEST_NOP = Math.max(...NOPS.map((n) => n.length));

function hex(n) {
  return `0x${n.toString(16)}`;
}

// An ELF file read through read(offset, length) -> Buffer (null or short past
// its end): its header, loadable segments and section headers, every count
// and place checked against `fileSize` and `maxSections`.
// -> { header, loads, sections: [{ name, type, addr, offset, size }] } or { refused }.
function elfLayout(read, fileSize, { maxSections = 4096 } = {}) {
  const h = elfHeader(read(0, 64) || Buffer.alloc(0));
  if (!h) return { refused: 'it is not an ELF64 little-endian file' };
  if (h.phoff + h.phnum * h.phentsize > fileSize || h.phentsize < 56) return { refused: 'its program headers lie outside the file' };
  const loads = programHeaders(read(h.phoff, h.phnum * h.phentsize) || Buffer.alloc(0), h.phnum, h.phentsize)
    .filter((p) => p.type === PT_LOAD);
  if (h.shentsize !== SHDR_SIZE || h.shoff + h.shnum * SHDR_SIZE > fileSize) return { refused: 'its section headers lie outside the file' };
  if (h.shnum > maxSections) return { refused: `it has ${h.shnum} sections, more than the ${maxSections} nodetrace reads` };
  const sh = read(h.shoff, h.shnum * SHDR_SIZE);
  if (!sh || sh.length < h.shnum * SHDR_SIZE) return { refused: 'its section headers lie outside the file' };
  const raw = [];
  for (let i = 0; i < h.shnum; i++) {
    const o = i * SHDR_SIZE;
    raw.push({
      nameAt: sh.readUInt32LE(o), type: sh.readUInt32LE(o + 4), addr: Number(sh.readBigUInt64LE(o + 16)),
      offset: Number(sh.readBigUInt64LE(o + 24)), size: Number(sh.readBigUInt64LE(o + 32)),
    });
  }
  const eh = read(0, 64);
  const strtab = raw[eh.readUInt16LE(62)];   // e_shstrndx
  // Section names: the string table, at most 64 KB of it (an object's are a few hundred bytes).
  const names = strtab && strtab.offset + Math.min(strtab.size, 65536) <= fileSize
    ? read(strtab.offset, Math.min(strtab.size, 65536)) : null;
  const nameOf = (s) => {
    if (!names || s.nameAt >= names.length) return '';
    const end = names.indexOf(0, s.nameAt);
    return names.toString('latin1', s.nameAt, end < 0 ? names.length : end);
  };
  return { header: h, loads,
    sections: raw.map((s) => ({ name: nameOf(s), type: s.type, addr: s.addr, offset: s.offset, size: s.size })) };
}

// One stapsdt note's desc -> { pc, base, semaphore, provider, name, args } or null.
function parseNote(desc) {
  if (desc.length < 24 + 3) return null;
  const strs = desc.toString('utf8', 24).split('\0');
  if (strs.length < 4) return null;
  return {
    pc: desc.readBigUInt64LE(0), base: desc.readBigUInt64LE(8), semaphore: desc.readBigUInt64LE(16),
    provider: strs[0], name: strs[1], args: strs[2],
  };
}

function inSegment(addr, size, seg, fileSize) {
  return addr >= seg.vaddr && addr + size <= seg.vaddr + seg.filesz && seg.offset + seg.filesz <= fileSize;
}

/**
 * The stapsdt notes of a file whose layout elfLayout() read, at most
 * `maxNotes` of them in SHT_NOTE sections of at most `maxNoteBytes` in all.
 * -> { notes: [parseNote()] } or { refused }.
 */
function stapsdtNotes(read, layout, fileSize, { maxNotes = MAX_NOTES, maxNoteBytes = Infinity } = {}) {
  const notes = [];
  let bytes = 0;
  for (const s of layout.sections) {
    if (s.type !== SHT_NOTE) continue;
    if (s.offset + s.size > fileSize) return { refused: 'a note section lies outside the file' };
    bytes += s.size;
    if (bytes > maxNoteBytes) return { refused: `its notes are larger than the ${maxNoteBytes} bytes nodetrace reads` };
    for (const n of elfNotes(read(s.offset, s.size) || Buffer.alloc(0))) {
      if (n.name !== 'stapsdt' || n.type !== NT_STAPSDT) continue;
      if (notes.length >= maxNotes) return { refused: `it has more than ${maxNotes} probe sites` };
      const note = parseNote(n.desc);
      if (!note) return { refused: 'a probe note is malformed' };
      notes.push(note);
    }
  }
  return { notes };
}

/**
 * Why a note's site, base or semaphore is not where a tracer can attach to
 * it as the note says (elfLayout()'s layout, read() for the site's bytes),
 * or null.
 */
function siteRefusal(n, layout, read, fileSize) {
  const what = `probe ${n.provider}:${n.name}`;
  const base = layout.sections.find((s) => s.name === '.stapsdt.base');
  if (!base) return 'it has no .stapsdt.base section';
  if (n.base !== BigInt(base.addr)) return `${what} has a base that is not its .stapsdt.base`;
  const pc = Number(n.pc);
  const code = layout.loads.find((seg) => (seg.flags & PF_X) && inSegment(pc, NOPS[1].length, seg, fileSize));
  if (!code) return `${what} has its site at ${hex(n.pc)}, outside the file's code`;
  const at = pc - code.vaddr + code.offset;
  const bytes = read(at, Math.min(LONGEST_NOP, code.offset + code.filesz - at)) || Buffer.alloc(0);
  if (!NOPS.some((nop) => bytes.subarray(0, nop.length).equals(nop))) return `${what} has its site at ${hex(n.pc)}, not on a nop`;
  const sem = Number(n.semaphore);
  if (sem !== 0 && !layout.loads.some((seg) => (seg.flags & PF_W) && inSegment(sem, SEMAPHORE_BYTES, seg, fileSize))) {
    return `${what} has its semaphore at ${hex(n.semaphore)}, outside the file's data`;
  }
  return null;
}

/**
 * Checks a probe library's bytes for `provider` ({ name, probes: [[name,
 * ...types]] }). -> { ok: true, sites: N } or { refused: 'why, in a few words' }.
 */
function checkLibrary(bytes, provider) {
  const read = (offset, length) => bytes.subarray(offset, offset + length);
  const layout = elfLayout(read, bytes.length);
  if (layout.refused) return layout;
  const h = layout.header;
  if (h.type !== ET_DYN || h.machine !== EM_X86_64) return { refused: 'it is not an x86-64 shared object' };
  if (!layout.sections.some((s) => s.name === '.stapsdt.base')) return { refused: 'it has no .stapsdt.base section' };
  const found = stapsdtNotes(read, layout, bytes.length);
  if (found.refused) return found;
  const { notes } = found;

  const expected = new Map(provider.probes.map(([name, ...types]) => [name, argFormat(types.map(kindOf))]));
  const seen = new Set();
  for (const n of notes) {
    const what = `probe ${n.provider}:${n.name}`;
    const why = siteRefusal(n, layout, read, bytes.length);
    if (why) return { refused: why };
    if (n.provider !== provider.name) continue;
    if (!expected.has(n.name)) return { refused: `it declares ${what}, which the ${provider.name} provider does not have` };
    if (seen.has(n.name)) return { refused: `${what} has more than one site` };
    if (n.args !== expected.get(n.name)) return { refused: `${what} reads its arguments from other places than its types say` };
    seen.add(n.name);
  }
  const missing = [...expected.keys()].filter((name) => !seen.has(name));
  if (missing.length) return { refused: `it has no site for probe ${provider.name}:${missing[0]}` };
  return { ok: true, sites: notes.length };
}

module.exports = { checkLibrary, elfLayout, stapsdtNotes, siteRefusal, parseNote, MAX_NOTES };
