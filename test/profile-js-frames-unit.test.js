'use strict';
// profile's JavaScript frames from V8's metadata (lib/profile/js-frames.js):
// the chains profile-js.bt keeps by hash, read back into frame names, and
// frames named in nameStacks where they run V8's code. Pure: no tracer.
const assert = require('assert');
const { SampleNames, parseJsLine, profileFrame, MAX_SFIS, openCommandJsFrames, jsFramesLayout, commandJsFramesLayout } = require('../lib/profile/js-frames');
const { nameStacks } = require('../lib/profile/name-stacks');
const { parseProfile } = require('../lib/profile/parse');

// profile-js.bt's hash: (h ^ sfi) * FNV prime ^ (depth + 1), 64 bits.
const mix = (h, sfi, k) => BigInt.asUintN(64, BigInt.asUintN(64, (h ^ sfi) * 1099511628211n) ^ BigInt(k + 1));
const signed = (x) => BigInt.asIntN(64, x).toString();   // as bpftrace prints a map key

// A namer that knows some SFIs (as lib/v8/namer.js: null for anything else).
function fakeNamer(known) {
  return { nameSfi: (sfi) => known.get(sfi) || null, limitation: () => null, close: () => {} };
}
const HOT = { name: 'hotSpin', file: '/app/hot.js', line: 28, column: 17, kind: 'function' };
const MID = { name: 'middleHot', file: '/app/hot.js', line: 48, column: 19, kind: 'function' };

describe('profile: JavaScript frames from V8\'s metadata (pure)', () => {
  it('reads the printed maps, signed keys as bpftrace prints them', () => {
    assert.deepStrictEqual(parseJsLine('@js_sfi[-1]: 281474976710657'), { map: 'js_sfi', key: (1n << 64n) - 1n, value: 281474976710657n });
    assert.deepStrictEqual(parseJsLine('@js_prev[5]: 0'), { map: 'js_prev', key: 5n, value: 0n });
    assert.strictEqual(parseJsLine('@samples[1, node, , , 0]: 3'), null);
    assert.strictEqual(parseJsLine('Sampling PID 1 at 99 Hz... Hit Ctrl-C to end.'), null);
  });

  it('follows a chain back from its last hash: each frame\'s depth and name; a frame no SFI names is left alone', () => {
    const names = new SampleNames(fakeNamer(new Map([[0x1001n, HOT], [0x2001n, MID]])), { close() {} });
    // Frames 3 (hotSpin), 4 (middleHot) and 6 (a word that is no SFI).
    const h1 = mix(0n, 0x1001n, 3);
    const h2 = mix(h1, 0x2001n, 4);
    const h3 = mix(h2, 0x3001n, 6);
    for (const [h, prev, k, sfi] of [[h1, 0n, 3, 0x1001n], [h2, h1, 4, 0x2001n], [h3, h2, 6, 0x3001n]]) {
      assert.ok(names.take(`@js_prev[${signed(h)}]: ${prev}`));
      assert.ok(names.take(`@js_sfi[${signed(h)}]: ${(BigInt(k) << 48n) | sfi}`));
    }
    const chain = names.chain(signed(h3));
    assert.deepStrictEqual([...chain.keys()].sort(), [3, 4]);
    assert.strictEqual(chain.get(3), HOT);
    assert.strictEqual(chain.get(4), MID);
    assert.strictEqual(names.chain('0').size, 0);
    assert.strictEqual(names.chain('12345').size, 0, 'a hash never printed names nothing');
  });

  it('an SFI is named as it was when its entry was printed, not as its address was first named (compaction moves SFIs)', () => {
    const known = new Map([[0x1001n, HOT]]);
    const names = new SampleNames(fakeNamer(known), { close() {} });
    const h1 = mix(0n, 0x1001n, 0);
    names.take(`@js_sfi[${signed(h1)}]: ${0x1001n}`);
    // A compaction later: middleHot's SFI now sits where hotSpin's was.
    known.set(0x1001n, MID);
    const h2 = mix(0n, 0x1001n, 1);
    names.take(`@js_sfi[${signed(h2)}]: ${(1n << 48n) | 0x1001n}`);
    assert.strictEqual(names.chain(signed(h1)).get(0), HOT);
    assert.strictEqual(names.chain(signed(h2)).get(1), MID);
  });

  it('a hash printed again under another function\'s name names neither: its samples are merged in one key', () => {
    const known = new Map([[0x1001n, HOT]]);
    const names = new SampleNames(fakeNamer(known), { close() {} });
    const h = mix(0n, 0x1001n, 0);
    names.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    names.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    assert.strictEqual(names.chain(signed(h)).get(0), HOT, 'the same function printed twice keeps its name');
    // Later another function's SFI at that address, at that depth: the same hash.
    const again = new SampleNames(fakeNamer(known), { close() {} });
    again.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    known.set(0x1001n, MID);
    again.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    known.set(0x1001n, HOT);
    again.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    assert.strictEqual(again.chain(signed(h)).size, 0);
    assert.strictEqual(again.ambiguous, 1);
  });

  it('a hash printed again when nothing can be named (the process has exited: END prints the last second) keeps the name it had', () => {
    const known = new Map([[0x1001n, HOT]]);
    const names = new SampleNames(fakeNamer(known), { close() {} });
    const h = mix(0n, 0x1001n, 0);
    names.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    known.clear();
    names.take(`@js_sfi[${signed(h)}]: ${0x1001n}`);
    assert.strictEqual(names.chain(signed(h)).get(0), HOT, 'every sample of that chain keeps its name');
    const first = mix(0n, 0x2001n, 0);
    names.take(`@js_sfi[${signed(first)}]: ${0x2001n}`);
    assert.strictEqual(names.chain(signed(first)).size, 0, 'first printed then: unnamed, never guessed');
  });

  it('-c: entries printed before the command runs its program are unnamed; once the namer is attached, named', () => {
    const names = new SampleNames();
    const before = mix(0n, 0x1001n, 0);
    const after = mix(0n, 0x1001n, 1);
    assert.ok(names.take(`@js_sfi[${signed(before)}]: ${0x1001n}`));
    names.attach(fakeNamer(new Map([[0x1001n, HOT]])), { close() {} });
    names.take(`@js_sfi[${signed(after)}]: ${(1n << 48n) | 0x1001n}`);
    assert.strictEqual(names.chain(signed(before)).size, 0);
    assert.strictEqual(names.chain(signed(after)).get(1), HOT);
    names.close();
  });

  it('-c: the command\'s process is opened only once it runs the executable planned for, with the SHARED planned', function () {
    // This process runs node: what `profile -c 'node ...'` plans from node's file.
    const planned = commandJsFramesLayout(process.execPath);
    assert.strictEqual(planned.shared, jsFramesLayout(process.pid).shared);
    assert.deepStrictEqual(openCommandJsFrames(null, planned), { wait: true }, 'no PID yet');
    // Still the fork of bpftrace (here: a process running another executable).
    assert.deepStrictEqual(openCommandJsFrames(process.pid, { ...planned, binary: '/bin/sh' }), { wait: true });
    const opened = openCommandJsFrames(process.pid, planned);
    assert(opened.names, opened.note || Object.keys(opened).join(', '));
    opened.names.close();
    const other = openCommandJsFrames(process.pid, { ...planned, shared: planned.shared + 8 });
    assert.match(other.note,
      /^the command's V8 keeps a function's SharedFunctionInfo at \d+ and its code at CODE \d+, not \d+ and CODE \d+ as its executable said: JavaScript is named from the perf map only$/);
    const otherCode = openCommandJsFrames(process.pid,
      { ...planned, codeArguments: { CODE: planned.codeArguments.CODE + 8 } });
    assert.match(otherCode.note, /its code at CODE \d+, not \d+ and CODE \d+ as its executable said/);
    // V8 13+: where its dispatch table is must agree too.
    const otherTable = openCommandJsFrames(process.pid,
      { ...planned, codeArguments: { ...planned.codeArguments, DISPATCH_AT: 616 } });
    assert.match(otherTable.note, /its code at CODE \d+, not \d+ and CODE \d+, DISPATCH_AT 616 as its executable said/);
    assert.match(commandJsFramesLayout('/bin/sh').note, /^\/bin\/sh carries no V8 postmortem metadata/);
  });

  it('a cycle in what the maps say ends the chain', () => {
    const names = new SampleNames(fakeNamer(new Map([[0x1001n, HOT]])), { close() {} });
    names.take('@js_prev[7]: 8');
    names.take('@js_prev[8]: 7');
    names.take(`@js_sfi[7]: ${(1n << 48n) | 0x1001n}`);
    names.take(`@js_sfi[8]: ${(2n << 48n) | 0x1001n}`);
    assert.deepStrictEqual([...names.chain('7').keys()].sort(), [1, 2]);
  });

  it('a target that makes every word look like a new SFI: at most MAX_SFIS named, the rest dropped, counted', () => {
    let asked = 0;
    const names = new SampleNames({ nameSfi: () => { asked++; return null; }, limitation: () => null }, { close() {} });
    for (let i = 0; i < MAX_SFIS + 10; i++) names.take(`@js_sfi[${i + 1}]: ${2 * i + 1}`);
    assert.strictEqual(asked, MAX_SFIS);
    assert.strictEqual(names.dropped, 10);
  });

  it('names a frame as the perf map would: name file:line:column, its origin; V8\'s builtins as V8', () => {
    assert.deepStrictEqual(profileFrame(HOT), { name: 'hotSpin /app/hot.js:28:17', category: 'js', origin: 'app' });
    assert.deepStrictEqual(profileFrame({ ...HOT, name: '', file: 'node:internal/timers' }), { name: '(anonymous) node:internal/timers:28:17', category: 'js', origin: 'node' });
    assert.deepStrictEqual(profileFrame({ ...HOT, name: null, file: '/app/node_modules/x/i.js' }).name, '(unknown) /app/node_modules/x/i.js:28:17');
    assert.deepStrictEqual(profileFrame({ name: 'map', file: null, line: null, column: null, kind: 'builtin' }), { name: 'map (native)', category: 'v8' });
  });

  it('nameStacks names a sampled frame from its SFI only where it runs V8\'s code', () => {
    const text = '@samples[42, node, \n, \n        0x10000010\n        0x10000020\n        0x401000\n, -5]: 7\n@threads[42, node]: 7\n';
    const parsed = parseProfile(text, 'profile-js');
    assert.strictEqual(parsed.stacks[0].chain, '-5');
    // Frame 0 in JIT code, frame 1 in JIT code, frame 2 in node's C++.
    const symbolizer = {
      symbolize: (snap, addrs) => ({
        frames: addrs.map((a) => (parseInt(a, 16) < 0x400000 || parseInt(a, 16) >= 0x10000000 ? { kind: 'jit', text: a, module: '[anon]' } : { kind: 'native', symbol: 'uv_run', offset: 1, text: 'uv_run+1', module: 'node' })),
        perfMapUsed: false,
      }),
    };
    const js = { chain: () => new Map([[0, HOT], [1, MID], [2, HOT]]), inlinedAt: () => null, original: (r) => r,
      limitation: null };
    const named = nameStacks(parsed, symbolizer, { maps: [] }, { js });
    const frames = named.stacks[0].frames.map((f) => f.name);
    assert.deepStrictEqual(frames.slice(-3), ['uv_run', 'middleHot /app/hot.js:48:19', 'hotSpin /app/hot.js:28:17'], 'the C++ frame keeps its own name');
    assert.deepStrictEqual(named.v8,
      { used: true, leafCallers: 0, note: null, inlining: { read: false, shown: 0, unknown: 0, note: null },
        sourceMaps: null });
    // A native leaf that kept no frame pointer: the walk's first frame (the
    // chain's depth 0) is its JavaScript caller's, which the return address
    // at the stack pointer (the sixth key) names; put back between them.
    const leaf = parseProfile('@samples[42, node, \n, \n        0x401000\n        0x10000020\n, -5, 268435504]: 3\n', 'profile-js');
    assert.strictEqual(leaf.stacks[0].leafRet, '0x10000030');
    const put = nameStacks(leaf, symbolizer, { maps: [] },
      { js: { chain: () => new Map([[0, MID], [1, HOT]]), inlinedAt: () => null, original: (r) => r,
        limitation: null } });
    assert.deepStrictEqual(put.stacks[0].frames.map((f) => f.name), ['hotSpin /app/hot.js:28:17', 'middleHot /app/hot.js:48:19', 'uv_run']);
    assert.strictEqual(put.v8.leafCallers, 3);
    // Not where the leaf is V8's own code (it keeps a frame), nor where no
    // JavaScript frame is at depth 0.
    const jitLeaf = parseProfile('@samples[42, node, \n, \n        0x10000010\n        0x10000020\n, -5, 268435504]: 3\n', 'profile-js');
    assert.strictEqual(nameStacks(jitLeaf, symbolizer, { maps: [] },
      { js: { chain: () => new Map([[0, MID], [1, HOT]]), inlinedAt: () => null, original: (r) => r,
        limitation: null } }).stacks[0].frames.length, 2);
    const noJs = nameStacks(leaf, symbolizer, { maps: [] },
      { js: { chain: () => new Map([[1, HOT]]), inlinedAt: () => null, original: (r) => r, limitation: null } });
    assert.strictEqual(noJs.v8.leafCallers, 0);
    const without = nameStacks(parsed, symbolizer, { maps: [] });
    assert.deepStrictEqual(without.stacks[0].frames.slice(-1)[0].category, 'jit');
  });

  it('nameStacks names from its SFI a frame whose code was freed before the end (V8 decommitted or unmapped a code page)', () => {
    const text = '@samples[42, node, \n, \n        0x7f0000000010\n        0x7e0000000020\n        0x401000\n, -5]: 7\n@threads[42, node]: 7\n';
    const parsed = parseProfile(text, 'profile-js');
    // Frame 0 in no mapping of the last snapshot, frame 1 in anonymous
    // memory no longer executable, frame 2 in node's C++.
    const symbolizer = {
      symbolize: (snap, addrs) => ({
        frames: addrs.map((a) => (parseInt(a, 16) >= 0x7f0000000000 ? { kind: 'unmapped', text: a, module: '' }
          : parseInt(a, 16) >= 0x10000000 ? { kind: 'unknown', text: a, module: '' } : { kind: 'native', symbol: 'uv_run', offset: 1, text: 'uv_run+1', module: 'node' })),
        perfMapUsed: false,
      }),
    };
    const js = { chain: () => new Map([[0, HOT], [1, MID], [2, HOT]]), inlinedAt: () => null, original: (r) => r,
      limitation: null };
    const frames = nameStacks(parsed, symbolizer, { maps: [] }, { js }).stacks[0].frames.map((f) => f.name);
    assert.deepStrictEqual(frames.slice(-3), ['uv_run', 'middleHot /app/hot.js:48:19', 'hotSpin /app/hot.js:28:17']);
  });
});
