'use strict';
// Names for addresses the tracer printed raw. bpftrace resolves usym() when
// it prints, from the live process: a target that has exited (the usual end
// of a -c command, or a target dying mid-trace) leaves bare addresses. We
// keep the target's memory map while it runs, and afterwards look the
// addresses up in the mapped files' symbol tables with binutils' nm and
// readelf (run with argument arrays, never a shell).
const fs = require('fs');
const { execFileSync } = require('child_process');

// Pure: /proc/PID/maps text -> file-backed mappings.
function parseMaps(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) \S+ \d+\s+(\/.*)$/.exec(line);
    if (m) out.push({ start: BigInt('0x' + m[1]), end: BigInt('0x' + m[2]), perms: m[3], offset: BigInt('0x' + m[4]), file: m[5] });
  }
  return out;
}

function readMaps(pid) {
  try {
    return parseMaps(fs.readFileSync(`/proc/${pid}/maps`, 'utf8'));
  } catch (err) {
    return null;
  }
}

// Pure: `readelf -lW` text -> PT_LOAD segments {offset, vaddr, filesz}.
function parseLoadSegments(text) {
  const segs = [];
  for (const line of text.split('\n')) {
    const m = /^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)/.exec(line);
    if (m) segs.push({ offset: BigInt('0x' + m[1]), vaddr: BigInt('0x' + m[2]), filesz: BigInt('0x' + m[3]) });
  }
  return segs;
}

// Pure: `nm --defined-only -S` text -> sorted function symbols.
function parseNm(text) {
  const syms = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) [TtWw] (.+)$/.exec(line);
    if (m) syms.push({ value: BigInt('0x' + m[1]), size: BigInt('0x' + m[2]), name: m[3] });
  }
  return syms.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

function run(file, args) {
  return execFileSync(file, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] });
}

// addresses: hex strings ('0x7f...'); maps: from readMaps(). Returns Map hex -> name.
function symbolizeAddresses(addresses, maps) {
  const names = new Map();
  const perFile = new Map();
  for (const hex of addresses) {
    const addr = BigInt(hex);
    const map = maps.find((m) => addr >= m.start && addr < m.end);
    if (!map) continue;
    if (!perFile.has(map.file)) perFile.set(map.file, []);
    perFile.get(map.file).push({ hex, fileOffset: addr - map.start + map.offset });
  }
  for (const [file, wanted] of perFile) {
    let segs;
    let syms;
    try {
      segs = parseLoadSegments(run('readelf', ['-lW', file]));
      syms = parseNm(run('nm', ['--defined-only', '-S', '-C', file]));
    } catch (err) {
      continue; // binutils missing or file gone: leave the address
    }
    for (const { hex, fileOffset } of wanted) {
      const seg = segs.find((s) => fileOffset >= s.offset && fileOffset < s.offset + s.filesz);
      if (!seg) continue;
      const vaddr = fileOffset - seg.offset + seg.vaddr;
      const sym = syms.find((s) => vaddr >= s.value && vaddr < s.value + (s.size || 1n));
      if (sym) names.set(hex, sym.name);
    }
  }
  return names;
}

module.exports = { parseMaps, readMaps, parseLoadSegments, parseNm, symbolizeAddresses };
