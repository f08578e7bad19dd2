'use strict';
// Names the frames of the stacks loop.bt sampled during stalls, which it
// prints as raw addresses (capabilities.js rawUserStackEnv): from a
// snapshot of the target (lib/symbolize.js: its memory map, the ELF symbols
// of its files, and V8's perf map read inside the process's own root), as
// bpftrace would print them ("JS:*spinTheLoop /app/loop-stall.js:11:21+671",
// "uv_run+123"), but for the kernel's pages, named as what they are
// ("[vdso]"). A frame nothing names stays an address.
const { userAddresses } = require('../profile/parse');

function frameText(f) {
  if (f.symbol) return `${f.symbol}+${f.offset}`;
  if (f.kind === 'special') return f.module;
  return f.text;
}

/**
 * @param {Array<{frames: string[], samples}>} stacks innermost frame first
 * @param {Symbolizer} symbolizer
 * @param {object|null} snap from symbolizer.snapshot(), or null (frames stay addresses)
 * @returns the stacks, their frames named
 */
function nameLoopStacks(stacks, symbolizer, snap) {
  if (!snap || !stacks.length) return stacks;
  const { pcs, returns } = userAddresses(stacks.map((s) => ({ user: s.frames })));
  const named = new Map();
  const a = symbolizer.symbolize(snap, pcs, { allPcs: true }).frames;
  const b = symbolizer.symbolize(snap, returns, { allReturnAddresses: true }).frames;
  pcs.forEach((addr, i) => named.set('pc:' + addr, frameText(a[i])));
  returns.forEach((addr, i) => named.set('ret:' + addr, frameText(b[i])));
  return stacks.map((s) => ({
    ...s,
    frames: s.frames.map((f, i) => named.get((i === 0 ? 'pc:' : 'ret:') + f.toLowerCase()) || f),
  }));
}

module.exports = { nameLoopStacks };
