'use strict';
// Builds, from a provider definition, the bytes of a tiny ELF64 x86-64 shared
// object that carries USDT probes in systemtap's format (the one bpftrace,
// bcc, perf and libbpf read). Pure: same definition in, same bytes out; no
// I/O, no clock, no randomness, because the file is content-addressed and one
// tracer attached by path must cover every process using that definition.
//
// Layout (every file offset equals its virtual address, so no reader can
// confuse "offset" with "address": bcc, libbpf and the kernel's uprobe
// ref_ctr_offset all want file offsets but the notes hold addresses):
//
//   page 0, PT_LOAD R   ELF header, program headers, .hash, .dynsym, .dynstr,
//                       .stapsdt.base (1 byte; the notes' base address)
//   page 1, PT_LOAD R X .text: one probe site per probe, SITE_STRIDE bytes
//                       apart: `nop5; ret` (the tracer puts its breakpoint on
//                       the nop; calling the site is an empty C function)
//   page 2, PT_LOAD RW  .dynamic, .probes (one 2-byte semaphore per probe).
//                       File-backed and private: the kernel only updates a
//                       uprobe reference counter (semaphore) that lives in a
//                       writable private mapping of the probed file itself.
//   not loaded          .note.stapsdt (after .text in section order: bcc only
//                       looks for notes after the first executable section),
//                       .nodetrace.usdt (the definition as JSON, so the file
//                       says what it is, and so the module name is part of the
//                       bytes), .shstrtab, section headers.
//
// PT_GNU_STACK is present (non-executable): without it glibc would make every
// thread stack of the process executable when the library is dlopen'ed.
// PT_DYNAMIC with DT_HASH/DT_SYMTAB/DT_STRTAB is what glibc's dlopen needs;
// two exported symbols tell the addon where the sites and semaphores are.

const FORMAT_VERSION = 1;
const PAGE = 0x1000;
const SITE_STRIDE = 8;
// Each site is a complete function: the probe point, then return. The probe
// point is a 5-byte nop (`nopl 0x0(%rax,%rax,1)`) rather than sdt.h's 1-byte
// `nop`: recent Linux (6.18 here) turns a uprobe on a 5-byte nop into a call to a
// trampoline (no int3 trap), about a third cheaper per enabled fire here;
// older kernels treat both alike.
const SITE_CODE = Buffer.from([0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3]);
const SITE_PAD = 0xcc;                             // int3 between sites
const MAX_ARGS = 12;                               // as systemtap's sdt.h

const SITES_SYMBOL = 'nodetrace_probe_sites';
const SEMAPHORES_SYMBOL = 'nodetrace_semaphores';

// System V AMD64 calling convention: the first six integer/pointer arguments
// in registers, the rest on the stack. At the probe point (the site's first
// instruction) %rsp points at the return address, so argument 7 is 8(%rsp).
const REGS64 = ['%rdi', '%rsi', '%rdx', '%rcx', '%r8', '%r9'];
const REGS32 = ['%edi', '%esi', '%edx', '%ecx', '%r8d', '%r9d'];

// Argument kinds -> stapsdt size (negative: signed) and register width.
//   int     signed 64-bit, as dtrace-provider passes int64_t on x86-64
//   int32   signed 32-bit (declared as 'int32_t')
//   string  pointer to a NUL-terminated UTF-8 copy ('char *' and 'json')
function argOperand(kind, i) {
  if (i < REGS64.length) {
    if (kind === 'int') return '-8@' + REGS64[i];
    if (kind === 'int32') return '-4@' + REGS32[i];
    return '8@' + REGS64[i];
  }
  const off = 8 * (i - REGS64.length + 1) + '(%rsp)';
  if (kind === 'int') return '-8@' + off;
  if (kind === 'int32') return '-4@' + off;
  return '8@' + off;
}

function argFormat(kinds) {
  return kinds.map(argOperand).join(' ');
}

// --- little helpers ---------------------------------------------------------

function align(n, a) { return Math.ceil(n / a) * a; }

class StrTab {
  constructor() { this.parts = [Buffer.alloc(1)]; this.size = 1; this.index = new Map(); }
  add(s) {
    if (this.index.has(s)) return this.index.get(s);
    const off = this.size;
    const b = Buffer.from(s + '\0', 'utf8');
    this.parts.push(b);
    this.size += b.length;
    this.index.set(s, off);
    return off;
  }
  bytes() { return Buffer.concat(this.parts); }
}

// ELF constants used below.
const { ET_DYN, EM_X86_64, PT_LOAD, PT_DYNAMIC, PT_GNU_STACK, PF_X, PF_W, PF_R, SHT_PROGBITS, SHT_STRTAB, SHT_HASH, SHT_DYNAMIC, SHT_NOTE, SHT_DYNSYM, SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, DT_NULL, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, STB_GLOBAL, STT_OBJECT, STT_FUNC } = require('../elf-constants');
const NT_STAPSDT = 3;
const EHDR_SIZE = 64, PHDR_SIZE = 56, SHDR_SIZE = 64, SYM_SIZE = 24, DYN_SIZE = 16;

// Normalized definition -> { bytes, layout }.
// def: { provider, module, probes: [{ name, kinds: ['int'|'int32'|'string', ...] }] }
// No DT_SONAME: every file would share it, and a shared soname invites the
// dynamic linker to treat different files as one library.
// Probes are laid out in the order given; callers sort them (see
// definition.js) so that the order of addProbe calls does not change the file.
function buildElf(def) {
  const probes = def.probes;
  const n = probes.length;
  if (n === 0) throw new RangeError('a probe library needs at least one probe');

  // Non-loaded content first, because its size does not affect addresses.
  const dynstr = new StrTab();
  const sitesName = dynstr.add(SITES_SYMBOL);
  const semsName = dynstr.add(SEMAPHORES_SYMBOL);
  const dynstrBytes = dynstr.bytes();

  const shstr = new StrTab();
  const names = {};
  for (const s of ['.hash', '.dynsym', '.dynstr', '.stapsdt.base', '.text', '.dynamic',
    '.probes', '.note.stapsdt', '.nodetrace.usdt', '.shstrtab']) names[s] = shstr.add(s);
  const shstrBytes = shstr.bytes();

  // --- page 0: headers and dynamic-linking tables ---
  const PHNUM = 5;
  const hashOff = align(EHDR_SIZE + PHNUM * PHDR_SIZE, 8);
  const NSYM = 3;                                   // null, sites, semaphores
  const hashSize = 4 * (2 + 1 + NSYM);              // nbucket, nchain, bucket, chains
  const dynsymOff = align(hashOff + hashSize, 8);
  const dynstrOff = dynsymOff + NSYM * SYM_SIZE;
  const baseOff = dynstrOff + dynstrBytes.length;   // .stapsdt.base, 1 byte
  const roEnd = baseOff + 1;

  // --- page 1: probe sites ---
  const textOff = align(roEnd, PAGE);
  const textSize = n * SITE_STRIDE;

  // --- page 2: .dynamic + semaphores ---
  const dynOff = align(textOff + textSize, PAGE);
  const DYN_ENTRIES = 6;
  const dynSize = DYN_ENTRIES * DYN_SIZE;
  const probesOff = align(dynOff + dynSize, 8);
  const probesSize = n * 2;
  const rwEnd = probesOff + probesSize;

  // --- not loaded ---
  const notes = [];
  for (let i = 0; i < n; i++) {
    const p = probes[i];
    const strs = Buffer.from(def.provider + '\0' + p.name + '\0' + argFormat(p.kinds) + '\0', 'utf8');
    const desc = Buffer.alloc(24 + strs.length);
    desc.writeBigUInt64LE(BigInt(textOff + i * SITE_STRIDE), 0);   // pc
    desc.writeBigUInt64LE(BigInt(baseOff), 8);                     // .stapsdt.base
    desc.writeBigUInt64LE(BigInt(probesOff + i * 2), 16);          // semaphore
    strs.copy(desc, 24);
    const note = Buffer.alloc(12 + 8 + align(desc.length, 4));
    note.writeUInt32LE(8, 0);                // namesz: "stapsdt\0"
    note.writeUInt32LE(desc.length, 4);      // descsz
    note.writeUInt32LE(NT_STAPSDT, 8);
    note.write('stapsdt\0', 12, 'latin1');
    desc.copy(note, 20);
    notes.push(note);
  }
  const notesBytes = Buffer.concat(notes);
  const notesOff = align(rwEnd, 4);
  const defJson = Buffer.from(JSON.stringify({
    format: FORMAT_VERSION, provider: def.provider, module: def.module,
    probes: probes.map((p) => ({ name: p.name, args: p.kinds })),
  }) + '\n', 'utf8');
  const defOff = notesOff + notesBytes.length;
  const shstrOff = defOff + defJson.length;
  const shOff = align(shstrOff + shstrBytes.length, 8);
  const SHNUM = 11;
  const fileSize = shOff + SHNUM * SHDR_SIZE;

  const b = Buffer.alloc(fileSize);   // zero-filled: padding is deterministic

  // ELF header
  b.write('\x7fELF', 0, 'latin1');
  b[4] = 2;          // ELFCLASS64
  b[5] = 1;          // ELFDATA2LSB
  b[6] = 1;          // EV_CURRENT
  b[7] = 0;          // ELFOSABI_SYSV
  b.writeUInt16LE(ET_DYN, 16);
  b.writeUInt16LE(EM_X86_64, 18);
  b.writeUInt32LE(1, 20);                    // e_version
  b.writeBigUInt64LE(0n, 24);                // e_entry
  b.writeBigUInt64LE(BigInt(EHDR_SIZE), 32); // e_phoff
  b.writeBigUInt64LE(BigInt(shOff), 40);     // e_shoff
  b.writeUInt32LE(0, 48);                    // e_flags
  b.writeUInt16LE(EHDR_SIZE, 52);
  b.writeUInt16LE(PHDR_SIZE, 54);
  b.writeUInt16LE(PHNUM, 56);
  b.writeUInt16LE(SHDR_SIZE, 58);
  b.writeUInt16LE(SHNUM, 60);
  b.writeUInt16LE(SHNUM - 1, 62);            // e_shstrndx: .shstrtab is last

  // Program headers
  let ph = EHDR_SIZE;
  function phdr(type, flags, off, size, alignment) {
    b.writeUInt32LE(type >>> 0, ph);
    b.writeUInt32LE(flags, ph + 4);
    b.writeBigUInt64LE(BigInt(off), ph + 8);    // p_offset
    b.writeBigUInt64LE(BigInt(off), ph + 16);   // p_vaddr == offset
    b.writeBigUInt64LE(BigInt(off), ph + 24);   // p_paddr
    b.writeBigUInt64LE(BigInt(size), ph + 32);  // p_filesz
    b.writeBigUInt64LE(BigInt(size), ph + 40);  // p_memsz (no bss: semaphores are file-backed)
    b.writeBigUInt64LE(BigInt(alignment), ph + 48);
    ph += PHDR_SIZE;
  }
  phdr(PT_LOAD, PF_R, 0, roEnd, PAGE);
  phdr(PT_LOAD, PF_R | PF_X, textOff, textSize, PAGE);
  phdr(PT_LOAD, PF_R | PF_W, dynOff, rwEnd - dynOff, PAGE);
  phdr(PT_DYNAMIC, PF_R | PF_W, dynOff, dynSize, 8);
  phdr(PT_GNU_STACK, PF_R | PF_W, 0, 0, 16);

  // .hash: one bucket holding the chain 2 -> 1 -> end.
  b.writeUInt32LE(1, hashOff);          // nbucket
  b.writeUInt32LE(NSYM, hashOff + 4);   // nchain
  b.writeUInt32LE(2, hashOff + 8);      // bucket[0]
  b.writeUInt32LE(0, hashOff + 12);     // chain[0]
  b.writeUInt32LE(0, hashOff + 16);     // chain[1]
  b.writeUInt32LE(1, hashOff + 20);     // chain[2]

  // .dynsym (entry 0 stays all zero)
  function sym(i, nameOff, type, shndx, value, size) {
    const o = dynsymOff + i * SYM_SIZE;
    b.writeUInt32LE(nameOff, o);
    b[o + 4] = (STB_GLOBAL << 4) | type;
    b[o + 5] = 0;                              // STV_DEFAULT
    b.writeUInt16LE(shndx, o + 6);
    b.writeBigUInt64LE(BigInt(value), o + 8);
    b.writeBigUInt64LE(BigInt(size), o + 16);
  }
  const SEC = { hash: 1, dynsym: 2, dynstr: 3, base: 4, text: 5, dynamic: 6, probes: 7, note: 8, def: 9, shstrtab: 10 };
  sym(1, sitesName, STT_FUNC, SEC.text, textOff, textSize);
  sym(2, semsName, STT_OBJECT, SEC.probes, probesOff, probesSize);

  dynstrBytes.copy(b, dynstrOff);
  // .stapsdt.base: a single zero byte, already zero.

  // .text
  b.fill(SITE_PAD, textOff, textOff + textSize);
  for (let i = 0; i < n; i++) SITE_CODE.copy(b, textOff + i * SITE_STRIDE);

  // .dynamic
  let d = dynOff;
  function dyn(tag, val) {
    b.writeBigUInt64LE(BigInt(tag), d);
    b.writeBigUInt64LE(BigInt(val), d + 8);
    d += DYN_SIZE;
  }
  dyn(DT_HASH, hashOff);
  dyn(DT_STRTAB, dynstrOff);
  dyn(DT_SYMTAB, dynsymOff);
  dyn(DT_STRSZ, dynstrBytes.length);
  dyn(DT_SYMENT, SYM_SIZE);
  dyn(DT_NULL, 0);

  // .probes: semaphores start at zero (already zero).
  notesBytes.copy(b, notesOff);
  defJson.copy(b, defOff);
  shstrBytes.copy(b, shstrOff);

  // Section headers
  function shdr(i, name, type, flags, addr, off, size, link, info, alignment, entsize) {
    const o = shOff + i * SHDR_SIZE;
    b.writeUInt32LE(name, o);
    b.writeUInt32LE(type, o + 4);
    b.writeBigUInt64LE(BigInt(flags), o + 8);
    b.writeBigUInt64LE(BigInt(addr), o + 16);
    b.writeBigUInt64LE(BigInt(off), o + 24);
    b.writeBigUInt64LE(BigInt(size), o + 32);
    b.writeUInt32LE(link, o + 40);
    b.writeUInt32LE(info, o + 44);
    b.writeBigUInt64LE(BigInt(alignment), o + 48);
    b.writeBigUInt64LE(BigInt(entsize), o + 56);
  }
  shdr(SEC.hash, names['.hash'], SHT_HASH, SHF_ALLOC, hashOff, hashOff, hashSize, SEC.dynsym, 0, 8, 4);
  shdr(SEC.dynsym, names['.dynsym'], SHT_DYNSYM, SHF_ALLOC, dynsymOff, dynsymOff, NSYM * SYM_SIZE, SEC.dynstr, 1, 8, SYM_SIZE);
  shdr(SEC.dynstr, names['.dynstr'], SHT_STRTAB, SHF_ALLOC, dynstrOff, dynstrOff, dynstrBytes.length, 0, 0, 1, 0);
  shdr(SEC.base, names['.stapsdt.base'], SHT_PROGBITS, SHF_ALLOC, baseOff, baseOff, 1, 0, 0, 1, 0);
  shdr(SEC.text, names['.text'], SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, textOff, textOff, textSize, 0, 0, SITE_STRIDE, 0);
  shdr(SEC.dynamic, names['.dynamic'], SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, dynOff, dynOff, dynSize, SEC.dynstr, 0, 8, DYN_SIZE);
  shdr(SEC.probes, names['.probes'], SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, probesOff, probesOff, probesSize, 0, 0, 2, 0);
  shdr(SEC.note, names['.note.stapsdt'], SHT_NOTE, 0, 0, notesOff, notesBytes.length, 0, 0, 4, 0);
  shdr(SEC.def, names['.nodetrace.usdt'], SHT_PROGBITS, 0, 0, defOff, defJson.length, 0, 0, 1, 0);
  shdr(SEC.shstrtab, names['.shstrtab'], SHT_STRTAB, 0, 0, shstrOff, shstrBytes.length, 0, 0, 1, 0);

  return {
    bytes: b,
    layout: { sites: textOff, stride: SITE_STRIDE, semaphores: probesOff, count: n, base: baseOff },
  };
}

module.exports = {
  buildElf, argFormat, FORMAT_VERSION, SITE_STRIDE, MAX_ARGS, SITES_SYMBOL, SEMAPHORES_SYMBOL,
};
