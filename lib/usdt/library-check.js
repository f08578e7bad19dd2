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
const { elfHeader, programHeaders, elfNotes } = require('../symbolize');
const { argFormat } = require('./elf');
const { kindOf } = require('./definition');
const { EM_X86_64, ET_DYN, PT_LOAD, PF_X, PF_W, SHT_NOTE } = require('../elf-constants');

// lib/usdt writes one note per probe; providers have a handful (bunyan 6).
const MAX_NOTES = 64;
const NT_STAPSDT = 3;
const SHDR_SIZE = 64;
const SEMAPHORE_BYTES = 2;
// The instructions a site may start with: lib/usdt's 5-byte nop, sdt.h's nop.
const NOPS = [Buffer.from([0x0f, 0x1f, 0x44, 0x00, 0x00]), Buffer.from([0x90])];

function hex(n) {
  return `0x${n.toString(16)}`;
}

function sections(bytes, h) {
  if (h.shentsize !== SHDR_SIZE || h.shoff + h.shnum * SHDR_SIZE > bytes.length) return null;
  const out = [];
  for (let i = 0; i < h.shnum; i++) {
    const o = h.shoff + i * SHDR_SIZE;
    out.push({
      name: bytes.readUInt32LE(o), type: bytes.readUInt32LE(o + 4), addr: Number(bytes.readBigUInt64LE(o + 16)),
      offset: Number(bytes.readBigUInt64LE(o + 24)), size: Number(bytes.readBigUInt64LE(o + 32)),
    });
  }
  return out;
}

function sectionName(bytes, strtab, s) {
  if (!strtab) return '';
  const at = strtab.offset + s.name;
  if (at >= bytes.length) return '';
  const end = bytes.indexOf(0, at);
  return bytes.toString('latin1', at, end < 0 ? bytes.length : end);
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
 * Checks a probe library's bytes for `provider` ({ name, probes: [[name,
 * ...types]] }). -> { ok: true, sites: N } or { refused: 'why, in a few words' }.
 */
function checkLibrary(bytes, provider) {
  const h = elfHeader(bytes);
  if (!h) return { refused: 'it is not an ELF64 little-endian file' };
  if (h.type !== ET_DYN || h.machine !== EM_X86_64) return { refused: 'it is not an x86-64 shared object' };
  if (h.phoff + h.phnum * h.phentsize > bytes.length || h.phentsize < 56) return { refused: 'its program headers lie outside the file' };
  const loads = programHeaders(bytes.subarray(h.phoff, h.phoff + h.phnum * h.phentsize), h.phnum, h.phentsize)
    .filter((p) => p.type === PT_LOAD);
  const secs = sections(bytes, h);
  if (!secs) return { refused: 'its section headers lie outside the file' };
  const strtab = secs[bytes.readUInt16LE(62)];   // e_shstrndx
  const base = secs.find((s) => sectionName(bytes, strtab, s) === '.stapsdt.base');
  if (!base) return { refused: 'it has no .stapsdt.base section' };

  const notes = [];
  for (const s of secs) {
    if (s.type !== SHT_NOTE) continue;
    if (s.offset + s.size > bytes.length) return { refused: 'a note section lies outside the file' };
    for (const n of elfNotes(bytes.subarray(s.offset, s.offset + s.size))) {
      if (n.name !== 'stapsdt' || n.type !== NT_STAPSDT) continue;
      if (notes.length >= MAX_NOTES) return { refused: `it has more than ${MAX_NOTES} probe sites` };
      const note = parseNote(n.desc);
      if (!note) return { refused: 'a probe note is malformed' };
      notes.push(note);
    }
  }

  const expected = new Map(provider.probes.map(([name, ...types]) => [name, argFormat(types.map(kindOf))]));
  const seen = new Set();
  for (const n of notes) {
    const what = `probe ${n.provider}:${n.name}`;
    if (n.base !== BigInt(base.addr)) return { refused: `${what} has a base that is not its .stapsdt.base` };
    const pc = Number(n.pc);
    const code = loads.find((seg) => (seg.flags & PF_X) && inSegment(pc, NOPS[1].length, seg, bytes.length));
    if (!code) return { refused: `${what} has its site at ${hex(n.pc)}, outside the file's code` };
    const at = pc - code.vaddr + code.offset;
    if (!NOPS.some((nop) => bytes.subarray(at, at + nop.length).equals(nop))) return { refused: `${what} has its site at ${hex(n.pc)}, not on a nop` };
    const sem = Number(n.semaphore);
    if (sem !== 0 && !loads.some((seg) => (seg.flags & PF_W) && inSegment(sem, SEMAPHORE_BYTES, seg, bytes.length))) {
      return { refused: `${what} has its semaphore at ${hex(n.semaphore)}, outside the file's data` };
    }
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

module.exports = { checkLibrary, MAX_NOTES };
