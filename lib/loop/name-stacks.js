'use strict';
// Names the frames of the stacks loop.bt sampled during stalls, which it
// prints as raw addresses (capabilities.js rawUserStackEnv): from a
// snapshot of the target (lib/symbolize.js: its memory map, the ELF symbols
// of its files, and V8's perf map read inside the process's own root), as
// bpftrace would print them ("JS:*spinTheLoop /app/loop-stall.js:11:21+671",
// "uv_run+123"), but for the kernel's pages, named as what they are
// ("[vdso]"). A frame nothing names stays an address.
const { userAddresses } = require('../profile/parse');
const { profileFrame, inlinedText } = require('../profile/js-frames');
const { isV8Code } = require('../profile/name-stacks');

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
function nameLoopStacks(stacks, symbolizer, snap, { js = null } = {}) {
  if (!snap || !stacks.length) return stacks;
  const { pcs, returns } = userAddresses(stacks.map((s) => ({ user: s.frames })));
  const named = new Map();
  const inV8 = new Set();
  const a = symbolizer.symbolize(snap, pcs, { allPcs: true }).frames;
  const b = symbolizer.symbolize(snap, returns, { allReturnAddresses: true }).frames;
  const keep = (key, f) => {
    named.set(key, frameText(f));
    if (isV8Code(f)) inV8.add(key);
  };
  pcs.forEach((addr, i) => keep('pc:' + addr, a[i]));
  returns.forEach((addr, i) => keep('ret:' + addr, b[i]));
  return stacks.map((s) => {
    // JavaScript frames named from V8's metadata where captured (lib/profile/js-frames.js).
    const chain = js && s.chain ? js.chain(s.chain) : null;
    const { chain: _, ...rest } = s;
    return {
      ...rest,
      frames: s.frames.flatMap((f, i) => {
        const key = (i === 0 ? 'pc:' : 'ret:') + f.toLowerCase();
        const fromV8 = chain && inV8.has(key) ? chain.get(i) : null;
        if (!fromV8) return [named.get(key) || f];
        // Above it (innermost first here), what its code inlined there.
        const inlined = js.inlinedAt(s.chain, i, f, { sfi: fromV8.sfi });
        return [...(inlined || []).map((r) => inlinedText(js.original(r))), profileFrame(js.original(fromV8)).name];
      }),
    };
  });
}

module.exports = { nameLoopStacks };
