'use strict';
// What d-scripts/profile.bt printed, as stacks: pure. The maps are read by
// the shared parser (lib/aggregation/parse-bpftrace.js, which keeps ustack()
// and kstack() keys one frame per line); this only gives the keys meaning.
const { parseBpftraceText } = require('../aggregation/parse-bpftrace');
const { TEXT_KEYS } = require('../aggregation/text-keys');
const { kernelFrames, userFrames } = require('../tracer/stack-frames');

function frameLines(field) {
  return field ? field.split('\n').map((f) => f.trim()).filter(Boolean) : [];
}

// Raw stacks (the plans ask bpftrace for them: capabilities.js
// rawUserStackEnv) made ready to name: user frames as 0x.. for
// lib/symbolize.js, kernel frames named (lib/tracer/stack-frames.js).
function kernelStack(field) {
  return kernelFrames(frameLines(field));
}

function userStack(field) {
  return userFrames(frameLines(field));
}

/**
 * What `program` ('profile' or 'profile-js': their keys differ in length,
 * and a thread's name in them may hold ", ": ../aggregation/text-keys.js)
 * printed -> { stacks: [{ tid, comm, kernel: [frame], user: [frame], count, chain? }], threads: [{ tid, comm, count }] }
 * Frames leaf first: kernel frames named ("do_syscall_64+110"), user frames
 * as addresses ("0x7f4e6a7c7efe") or names where the tracer named them.
 */
function parseProfile(text, program) {
  if (program !== 'profile' && program !== 'profile-js') throw new Error(`parseProfile: no program ${program}`);
  const model = parseBpftraceText(text, { textKeys: TEXT_KEYS[program] });
  const byName = new Map(model.aggregations.map((a) => [a.name, a]));
  const stacks = [];
  for (const e of (byName.get('samples') || { entries: [] }).entries) {
    // (profile-js.bt adds the hash of the sample's JavaScript chain,
    // lib/profile/js-frames.js, and the return address at the stack
    // pointer, for a leaf that keeps no frame: lib/profile/name-stacks.js.)
    if (e.kind !== 'scalar' || e.key.length < 4 || e.key.length > 6) continue;
    const [tid, comm, kernel, user, chain, leafRet] = e.key;
    const s = { tid: Number(tid), comm, kernel: kernelStack(kernel), user: userStack(user), count: Number(e.value) };
    if (chain !== undefined && /^-?\d+$/.test(chain) && chain !== '0') s.chain = chain;
    if (leafRet !== undefined && /^[1-9]\d*$/.test(leafRet)) s.leafRet = '0x' + BigInt(leafRet).toString(16);
    stacks.push(s);
  }
  // profile-js.bt keeping the user stacks itself (its WALK slot): the pc
  // and the hash of the frames above it, read back from @user_frames.
  const frames = userFrameTable(byName.get('user_frames'));
  for (const e of (byName.get('walked_samples') || { entries: [] }).entries) {
    if (e.kind !== 'scalar' || e.key.length !== 7) continue;
    const [tid, comm, kernel, pc, top, chain, leafRet] = e.key;
    const s = { tid: Number(tid), comm, kernel: kernelStack(kernel), user: walkedStack(pc, top, frames),
      count: Number(e.value), walked: true };
    if (/^-?\d+$/.test(chain) && chain !== '0') s.chain = chain;
    if (/^[1-9]\d*$/.test(leafRet)) s.leafRet = '0x' + BigInt(leafRet).toString(16);
    stacks.push(s);
  }
  const threads = [];
  for (const e of (byName.get('threads') || { entries: [] }).entries) {
    if (e.kind !== 'scalar' || e.key.length !== 2) continue;
    threads.push({ tid: Number(e.key[0]), comm: e.key[1], count: Number(e.value) });
  }
  return { stacks, threads, userFrames: frames.size };
}

// bpftrace prints a 64-bit key or value signed or not, by its type.
function u64(text) {
  return /^-?\d{1,20}$/.test(text) ? BigInt.asUintN(64, BigInt(text)) : null;
}

// @user_frames[BELOW, RETURN ADDRESS] = HASH: each frame's hash -> the
// hash below it and its return address.
function userFrameTable(agg) {
  const table = new Map();
  for (const e of (agg || { entries: [] }).entries) {
    if (e.kind !== 'scalar' || e.key.length !== 2) continue;
    const [below, ret, hash] = [u64(e.key[0]), u64(e.key[1]), u64(e.value)];
    if (below !== null && ret !== null && hash) table.set(hash, { below, ret });
  }
  return table;
}

/**
 * A walked sample's user stack, leaf first, as raw ustack frames: the pc,
 * then each return address from the hash of the topmost down. [] where the
 * tracer found no user registers, or a frame's key is missing (the map
 * filled): a stack cut short anywhere would be a wrong one.
 */
function walkedStack(pc, top, table) {
  const first = u64(pc);
  let hash = u64(top);
  if (!first || hash === null) return [];
  const above = [];
  // At most one frame a key: a table that loops ends the walk.
  while (hash !== 0n && above.length <= table.size) {
    const f = table.get(hash);
    if (!f) return [];
    above.push('0x' + f.ret.toString(16));
    hash = f.below;
  }
  if (hash !== 0n) return [];
  return ['0x' + first.toString(16), ...above.reverse()];
}

/**
 * Samples of a thread of the process with no user stack: bpftrace lost it
 * (capabilities.userStackMap); a thread of a user process always has one
 * (the kernel records its user pc first, in user mode or in a system call).
 * `walked: false`: only those whose stack was ustack's, not the walk's
 * (whose frames are lost only to a full map, said as such).
 */
function withoutUserStack({ stacks }, { walked = true } = {}) {
  return stacks.reduce((n, s) => n + (s.user && s.user.length === 0 && (walked || !s.walked) ? s.count : 0), 0);
}

// profile.d's printa(@samples): per entry, the TID on a line of its own
// (indented 4), the kernel stack (frames indented 14; none in user mode), a
// blank line, the user stack, then the count (indented 16). printa(@threads):
// "TID COUNT". Section names come from the script's printf("\n@name\n").
// DTrace names frames itself, "module`symbol+0xoff", JIT code as bare
// addresses (`nameStacks` names those from the perf map).
function parseProfileDtrace(text) {
  const stacks = [];
  const threads = [];
  let section = null;
  let cur = null;
  let part = 'kernel';
  for (const line of String(text).split('\n')) {
    const marker = /^@(\w+)\s*$/.exec(line);
    if (marker) { section = marker[1]; cur = null; continue; }
    if (section === 'threads') {
      const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(line);
      if (m) threads.push({ tid: Number(m[1]), comm: '', count: Number(m[2]) });
      continue;
    }
    if (section !== 'samples') continue;
    const num = /^(\s*)(\d+)\s*$/.exec(line);
    if (num && (!cur || num[1].length < 8)) {
      cur = { tid: Number(num[2]), comm: '', kernel: [], user: [], count: 0 };
      part = 'kernel';
      continue;
    }
    if (!cur) continue;
    if (num) {
      cur.count = Number(num[2]);
      stacks.push(cur);
      cur = null;
    } else if (line.trim() === '') {
      if (part === 'kernel') part = 'user';
    } else {
      cur[part].push(line.trim());
    }
  }
  // Kernel frames: "vmlinux`do_syscall_64+0x71" -> as bpftrace prints them.
  for (const s of stacks) s.kernel = s.kernel.map((f) => f.replace(/^vmlinux`/, ''));
  return { stacks, threads };
}

/**
 * What d-scripts/offcpu.bt printed, as stacks whose count is microseconds
 * blocked: -> { stacks: [{ tid, comm, kernel, user, count, chain?, ongoing? }], threads: [{ tid, comm, blocks }],
 * seconds: the time traced by the kernel's clock, or null }.
 * A wait still going on at exit (@blocked_since_ns) counts up to then, marked ongoing.
 */
function parseOffCpu(text) {
  const model = parseBpftraceText(text, { textKeys: TEXT_KEYS.offcpu });
  const byName = new Map(model.aggregations.map((a) => [a.name, a]));
  const entries = (name) => (byName.get(name) || { entries: [] }).entries.filter((e) => e.kind === 'scalar');
  const threads = entries('blocks').filter((e) => e.key.length === 2)
    .map((e) => ({ tid: Number(e.key[0]), comm: e.key[1], blocks: Number(e.value) }));
  const comm = new Map(threads.map((t) => [t.tid, t.comm]));
  // (A fourth key, where the program walked the JavaScript frames: the hash
  // of the chain, as profile-js.bt's samples have: lib/profile/js-frames.js.)
  const keyed = (e) => e.key.length === 3 || e.key.length === 4;
  const stack = (key, count) => {
    const s = { tid: Number(key[0]), comm: comm.get(Number(key[0])) || '', kernel: kernelStack(key[1]), user: userStack(key[2]), count };
    if (key[3] !== undefined && /^-?\d+$/.test(key[3]) && key[3] !== '0') s.chain = key[3];
    return s;
  };
  const stacks = entries('offcpu_us').filter(keyed).map((e) => stack(e.key, Number(e.value)));
  const now = entries('now_ns')[0];
  const begin = entries('begin_ns')[0];
  const seconds = now && begin ? Number(BigInt(now.value) - BigInt(begin.value)) / 1e9 : null;
  if (now) {
    for (const e of entries('blocked_since_ns')) {
      if (!keyed(e)) continue;
      // Times as BigInt: nanoseconds since boot pass 2^53 after 104 days.
      const us = Number((BigInt(now.value) - BigInt(e.value)) / 1000n);
      if (us > 0) stacks.push({ ...stack(e.key, us), ongoing: true });
    }
  }
  return { stacks, threads, seconds };
}

/** Every distinct user address, split into sampled pcs (leaves) and return addresses. */
function userAddresses(stacks) {
  const pcs = new Set();
  const returns = new Set();
  for (const s of stacks) {
    if (s.leafRet) returns.add(s.leafRet);
    s.user.forEach((f, i) => {
      if (!/^0x[0-9a-f]+$/i.test(f)) return;
      // A sample taken in the kernel has no user pc: its first user frame is
      // where the thread entered the kernel, the pc of the syscall insn.
      (i === 0 ? pcs : returns).add(f.toLowerCase());
    });
  }
  return { pcs: [...pcs], returns: [...returns] };
}

module.exports = { parseProfile, parseProfileDtrace, parseOffCpu, userAddresses, withoutUserStack };
