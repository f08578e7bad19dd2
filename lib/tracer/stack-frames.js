'use strict';
// Stack frames as tracers print them, made ready for nodetrace to name.
// nodetrace names user frames itself (lib/symbolize.js, from a snapshot of
// the target), so bpftrace is asked for raw stacks: 0.17 then prints user
// frames as 0x7f.. and names kernel frames ("do_syscall_64+110"); 0.23+
// (its raw stack mode, which covers kernel stacks too: capabilities.js
// rawUserStackEnv) prints both as bare hex and ends each stack with a 0
// frame. Kernel frames that come raw are named here from /proc/kallsyms,
// as bpftrace would.
const fs = require('fs');
const { lastAtOrBelow } = require('../sorted');

/**
 * One frame as lib/symbolize.js takes it: bare hex gets its 0x (a name
 * always carries +offset or a module); the null return address that ends a
 * raw stack is no frame (null). Pure.
 */
function rawFrame(text) {
  const hex = /^(?:0x)?([0-9a-f]+)$/i.exec(text);
  if (!hex) return text;
  return /^0+$/.test(hex[1]) ? null : '0x' + hex[1].toLowerCase();
}

/** Pure: /proc/kallsyms text -> { addresses (sorted BigInts), names }, text symbols only. */
function parseKallsyms(text) {
  const rows = [];
  for (const line of String(text).split('\n')) {
    const m = /^([0-9a-f]+) ([tTwW]) (\S+)/.exec(line);
    if (m && !/^0+$/.test(m[1])) rows.push([BigInt('0x' + m[1]), m[3]]);
  }
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { addresses: rows.map((r) => r[0]), names: rows.map((r) => r[1]) };
}

/** Pure: "0xffffffff81234567" -> "do_syscall_64+110" from a parsed table; other text as it is. */
function kernelFrameName(frame, table) {
  const hex = /^0x([0-9a-f]+)$/i.exec(frame);
  if (!hex || !table || !table.addresses.length) return frame;
  const a = BigInt('0x' + hex[1]);
  const at = lastAtOrBelow(table.addresses, a);
  return at < 0 ? frame : `${table.names[at]}+${a - table.addresses[at]}`;
}

// The kernel's symbols, read once (root sees their addresses; others see
// zeros, and frames then stay addresses).
let kallsyms;
function kernelSymbols() {
  if (kallsyms === undefined) {
    try { kallsyms = parseKallsyms(fs.readFileSync('/proc/kallsyms', 'utf8')); } catch { kallsyms = null; }
  }
  return kallsyms;
}

/**
 * A kernel stack as the tracer printed it -> frames named: raw ones from
 * /proc/kallsyms, named ones as they are; the 0 frame that ends a raw
 * stack dropped.
 */
function kernelFrames(frames) {
  const raw = frames.map(rawFrame).filter((f) => f !== null);
  if (!raw.some((f) => /^0x/.test(f))) return raw;
  const table = kernelSymbols();
  return raw.map((f) => kernelFrameName(f, table));
}

/** A user stack as the tracer printed it -> frames for lib/symbolize.js (raw ones as 0x..). */
function userFrames(frames) {
  return frames.map(rawFrame).filter((f) => f !== null);
}

module.exports = { rawFrame, parseKallsyms, kernelFrameName, kernelFrames, userFrames };
