'use strict';
// async --stacks: where the operations still alive at the end were created.
// async.bt's maps of live operations taken out of its output, grouped by
// kind and raw stack (to be named: lib/loop/name-stacks.js), then, once
// named, per kind with the most kept and the rest counted. Pure.
const { userFrames } = require('../../tracer/stack-frames');
const { NO_USER_STACK } = require('../../render/map-full');

// --stacks: the creation stacks kept per kind (most live operations
// first), in JSON; the rest are counted. Text shows fewer (./text.js).
const STACKS_PER_KIND = 10;
// What async.bt keeps at once (its LIVE_KEPT): the bound said in the output.
const LIVE_KEPT = 16384;

// async.bt's maps of live operations, keyed by the AsyncWrap's address:
//   @live_kind[ADDR]: KIND+1     @live_js[ADDR]: HASH (of the JavaScript chain)
//   @live_stack[ADDR]:           (then its frames, one a line: indented
//                                 0x... on 0.17, bare hex ending in 0 on 0.23+)
// and the JavaScript chain's @js_prev (read by lib/profile/js-frames.js).
// -> { rest: the other maps' text, live: Map(addr -> { kind, chain, frames }) }
const LIVE_NUMBER = /^@(live_kind|live_js)\[(\d+)\]: (-?\d+)$/;
// An entry whose stack bpftrace 0.17 could not look up (its map of stacks
// lost it: capabilities.userStackMap) is printed as its key alone, with no
// line break: the next entry's key follows on the same line
// ("@live_stack[A]: @live_stack[B]: ", B's frames below), so keys are
// taken off the front of a line one by one, the last one's frames below.
const LIVE_STACK = /^@live_stack\[(\d+)\]: */;
function splitLiveStacks(text) {
  const rest = [];
  const live = new Map();
  const entry = (addr) => {
    if (!live.has(addr)) live.set(addr, { kind: null, chain: '0', frames: [] });
    return live.get(addr);
  };
  let frames = null;
  for (const whole of text.split('\n')) {
    let line = whole;
    if (frames) {
      // A frame a line (indented; bare hex ending in 0 in 0.23+'s raw
      // mode), to a blank line or the next map's line.
      if (line.trim() && !line.startsWith('@')) { frames.push(line.trim()); continue; }
      frames = null;
      if (!line.trim()) continue;
    }
    const n = LIVE_NUMBER.exec(line.trim());
    if (n) {
      const v = BigInt.asUintN(64, BigInt(n[3]));
      if (n[1] === 'live_kind') entry(n[2]).kind = String(v - 1n);
      else entry(n[2]).chain = String(v);
      continue;
    }
    for (let st = LIVE_STACK.exec(line.trim()); st; st = LIVE_STACK.exec(line)) {
      frames = entry(st[1]).frames;
      line = line.trim().slice(st[0].length);
    }
    // (What follows the last key on its line: the next map's, its stack lost too.)
    if (frames && line) frames = null;
    if (frames || /^@js_(prev|sfi)\[/.test(line.trim())) continue;
    rest.push(line);
  }
  return { rest: rest.join('\n'), live };
}

// Live operations -> [{ kind, count, stack: { frames, chain } }], one per
// kind and raw stack, most first. An operation whose kind was not printed
// (the map cut short) is left out. One printed with a kind and no stack:
// bpftrace lost its stack from its map of stacks (capabilities.userStackMap;
// 0.17 prints no @live_stack entry for it, its stderr "ERROR: failed to
// look up stack id -17"), counted as NO_USER_STACK (lost: true).
function groupRaw(live) {
  const groups = new Map();
  for (const e of live.values()) {
    if (e.kind === null) continue;
    const raw = userFrames(e.frames);
    const lost = raw.length === 0;
    const frames = lost ? [NO_USER_STACK] : raw;
    const key = `${e.kind}|${e.chain}|${frames.join(' ')}`;
    if (!groups.has(key)) {
      groups.set(key, { kind: e.kind, count: 0, stack: { frames, ...(e.chain !== '0' ? { chain: e.chain } : {}) }, ...(lost ? { lost: true } : {}) });
    }
    groups.get(key).count++;
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/** Live operations whose creation stack the tracer lost (groupRaw: NO_USER_STACK). */
function lostLiveStacks(liveStacks) {
  return (liveStacks || []).reduce((n, g) => n + (g.lost ? g.count : 0), 0);
}

/**
 * After the frames are named: each kind's live operations by creation
 * stack (raw stacks that name alike are one) -> kind.live = { tracked,
 * stacks: [{ count, frames }] (STACKS_PER_KIND at most, most first),
 * otherStacks, otherCount, unkept }. Pure; sets nothing without --stacks.
 */
function groupLiveStacks(r) {
  if (!r.liveStacks) return r;
  const perKind = new Map();
  for (const g of r.liveStacks) {
    if (!perKind.has(g.kind)) perKind.set(g.kind, new Map());
    const named = perKind.get(g.kind);
    const key = g.stack.frames.join('\n');
    if (!named.has(key)) named.set(key, { count: 0, frames: g.stack.frames });
    named.get(key).count += g.count;
  }
  for (const k of r.kinds) {
    const all = [...(perKind.get(String(k.number)) || new Map()).entries()]
      .sort(([ka, a], [kb, b]) => b.count - a.count || (ka < kb ? -1 : ka > kb ? 1 : 0)).map(([, v]) => v);
    const kept = all.slice(0, STACKS_PER_KIND);
    const others = all.slice(STACKS_PER_KIND);
    k.live = {
      tracked: all.reduce((n, s) => n + s.count, 0),
      stacks: kept,
      otherStacks: others.length,
      otherCount: others.reduce((n, s) => n + s.count, 0),
      unkept: k.unkept,
    };
  }
  return r;
}

module.exports = { splitLiveStacks, groupRaw, groupLiveStacks, lostLiveStacks, STACKS_PER_KIND, LIVE_KEPT };
