'use strict';
// The ELF constants nodetrace reads and writes (the System V gABI and the
// x86-64 psABI), in one place for every ELF reader and writer here:
// lib/symbolize.js, lib/usdt/elf.js and library-check.js, lib/proc/link-map.js,
// lib/v8/core-file.js.
module.exports = Object.freeze({
  ET_EXEC: 2, ET_DYN: 3, ET_CORE: 4,
  EM_X86_64: 62,
  PT_LOAD: 1, PT_DYNAMIC: 2, PT_NOTE: 4, PT_TLS: 7, PT_GNU_STACK: 0x6474e551,
  PF_X: 1, PF_W: 2, PF_R: 4,
  SHT_PROGBITS: 1, SHT_SYMTAB: 2, SHT_STRTAB: 3, SHT_HASH: 5, SHT_DYNAMIC: 6, SHT_NOTE: 7, SHT_DYNSYM: 11,
  SHT_GNU_HASH: 0x6ffffff6,
  SHF_WRITE: 1, SHF_ALLOC: 2, SHF_EXECINSTR: 4,
  DT_NULL: 0, DT_NEEDED: 1, DT_HASH: 4, DT_STRTAB: 5, DT_SYMTAB: 6, DT_STRSZ: 10, DT_SYMENT: 11, DT_RPATH: 15,
  DT_DEBUG: 21, DT_RUNPATH: 29,
  STB_GLOBAL: 1,
  STT_NOTYPE: 0, STT_OBJECT: 1, STT_FUNC: 2, STT_TLS: 6, STT_GNU_IFUNC: 10,
});
