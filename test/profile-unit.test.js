'use strict';
// nodetrace profile's pure parts: the tracer's output read into stacks,
// frames named and put in categories, the report, and the three outputs
// (folded, pprof, SVG) holding the same totals.
const assert = require('assert');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const fs = require('fs');
const path = require('path');
const { parseProfile, parseProfileDtrace, userAddresses, withoutUserStack } = require('../lib/profile/parse');
const { mapFullLines } = require('../lib/render/map-full');
const { nameStacks } = require('../lib/profile/name-stacks');
const { userFrame, kernelFrame, jsOrigin, UNNAMED_JIT } = require('../lib/profile/frames');
const { summarize, renderText } = require('../lib/profile/report');
const { renderFolded, parseFolded } = require('../lib/profile/folded');
const { encodePprof, decodePprof } = require('../lib/profile/pprof');
const { renderSvg, escapeXml } = require('../lib/profile/svg');
const profileCommand = require('../lib/commands/profile');

const FIXTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-profile-keys.out'), 'utf8');

const js = (name, origin = 'app') => ({ name, category: 'js', origin });
const nat = (name, category = 'node') => ({ name, category });
// Named stacks as nameStacks() gives them (frames root first).
function sampleProfile() {
  const base = [nat('uv_run'), nat('Builtins_JSEntry', 'v8'), js('processImmediate node:internal/timers:438:28', 'node')];
  return {
    perfMap: { used: true, path: '/tmp/perf-100.map', refused: null },
    stacks: [
      { tid: 100, comm: 'node', count: 70, frames: [...base, js('hotSpin /app/hot.js:3:17')] },
      { tid: 100, comm: 'node', count: 10, frames: [...base, js('hotSpin /app/hot.js:3:17'), nat('getrusage', 'libc'), nat('do_syscall_64', 'kernel')] },
      { tid: 100, comm: 'node', count: 10, frames: [...base, js('warmSpin /app/hot.js:9:18')] },
      { tid: 100, comm: 'node', count: 5, frames: [...base, { name: UNNAMED_JIT, category: 'jit' }] },
      { tid: 104, comm: 'node', count: 5, frames: [nat('worker'), nat('node::crypto::PBKDF2Traits::DeriveBits(...)'), nat('sha256_block_data_order_avx2')] },
    ],
  };
}

describe('profile: parsing what profile.bt printed', function () {
  it('reads every (thread, kernel stack, user stack) entry and the per-thread counts of a real run', function () {
    const p = parseProfile(splitAtEndMarker(FIXTURE.split('\n')).maps, 'profile');
    assert.strictEqual(p.stacks.length, 7);
    assert.deepStrictEqual(p.threads, [{ tid: 28550, comm: 'node', count: 12 }]);
    assert.strictEqual(p.stacks.reduce((n, s) => n + s.count, 0), 12, 'stacks add up to the thread count');
    for (const s of p.stacks) {
      assert.strictEqual(s.tid, 28550);
      assert.deepStrictEqual(s.kernel, []);
      assert(s.user.length > 5 && s.user.every((f) => /^0x[0-9a-f]+$/.test(f)), s.user.join(' '));
    }
    assert.strictEqual(p.stacks[0].user[0], '0x7f4e6a7c7efe', 'leaf first');
  });

  it('samples whose user stack bpftrace lost (0.17, a real capture): counted, as "[no stack]", and said in one line; not on 0.25+', function () {
    // Thousands of distinct stacks at -F 999: bpftrace 0.17's stack map kept
    // no stack for 7 samples (two stacks of one place), printed empty.
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-profile-no-ustack-0.17.out'), 'utf8');
    const p = parseProfile(splitAtEndMarker(text.split('\n')).maps, 'profile');
    assert.strictEqual(withoutUserStack(p), 7);
    assert.strictEqual(withoutUserStack(parseProfile(splitAtEndMarker(FIXTURE.split('\n')).maps, 'profile')), 0);
    // The counts still whole: every sample of every thread, those 7 among the main thread's.
    const total = p.threads.reduce((n, t) => n + t.count, 0);
    assert.strictEqual(p.stacks.reduce((n, s) => n + s.count, 0), total);
    const s = summarize(nameStacks(p, null, null), { pid: 4008, hz: 999, seconds: 5, top: 2000 });
    assert.strictEqual(s.samples, total);
    assert.deepStrictEqual(s.self.filter((f) => f.name === '[no stack]').map((f) => [f.category, f.samples]), [['unknown', 7]]);
    assert.strictEqual(s.threads.find((t) => t.role === 'main').samples, p.threads.find((t) => t.tid === 4008).count);
    // Declared where the tracer keeps stacks in a map of its own, said once with the count and what to do.
    const planned = (version) => profileCommand.plan({ pid: String(process.pid), frequency: 999, v8Frames: false },
      { name: 'bpftrace', path: '/usr/bin/bpftrace', version }).details.boundedMaps;
    assert.deepStrictEqual(mapFullLines(planned('0.17.0'), { '@samples': { held: p.stacks.length }, ustack: { refused: withoutUserStack(p) } }), [
      'warning: 7 samples had no user stack: the tracer lost them from its map of stacks (131,072 places: it keeps no stack '
      + 'whose place another holds); they are counted, as "[no stack]"; trace for less time or at a lower -F, '
      + 'or use bpftrace 0.25 or later, which keeps each stack with its sample']);
    assert.match(mapFullLines(planned('0.23.2'), { ustack: { refused: 1 } })[0], /^warning: 1 sample had no user stack: the tracer lost it from its map of stacks \(131,072 places: past them it drops the oldest\);/);
    assert.deepStrictEqual(mapFullLines(planned('0.17.0'), { ustack: { refused: 0 } }), []);
    assert.deepStrictEqual(planned('0.27.1').map((b) => b.map), ['@samples']);
    assert.deepStrictEqual(profileCommand.plan({ pid: String(process.pid), frequency: 99, offCpu: true },
      { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' }).details.boundedMaps.map((b) => b.map), ['@offcpu_us', 'ustack']);
  });

  it('bpftrace 0.17, profile-js.bt keeping the stacks itself (a real capture): each read back whole, leaf first, none lost', function () {
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-profile-walked-0.17.out'), 'utf8');
    const p = parseProfile(splitAtEndMarker(text.split('\n')).maps, 'profile-js');
    assert.strictEqual(p.stacks.length, 98);
    assert.strictEqual(p.userFrames, 1056);
    assert.strictEqual(withoutUserStack(p), 0);
    assert.strictEqual(p.stacks.reduce((n, s) => n + s.count, 0), 110, 'stacks add up to the thread count');
    assert.strictEqual(p.stacks.filter((s) => s.kernel.length).length, 3, 'samples taken in the kernel: the saved pc, then the walk');
    for (const s of p.stacks) {
      assert(s.walked && s.user.length >= 17 && s.user.every((f) => /^0x[0-9a-f]+$/.test(f)), s.user.join(' '));
      assert.match(s.chain, /^-?\d+$/, 'the JavaScript chain kept beside it');
    }
    // Leaf first, as ustack's: the pc, then the return addresses up to node's main and libc.
    const first = p.stacks[0].user;
    assert.strictEqual(first[0], '0x' + BigInt(/^@walked_samples\[8944, node, , (\d+),/m.exec(text)[1]).toString(16));
    // A frame whose key is missing (the map filled): no stack rather than a cut one; a table that loops ends.
    const lines = text.split('\n');
    const top = lines.findIndex((l) => l.startsWith('@user_frames['));
    const cut = parseProfile(splitAtEndMarker(lines.filter((l, i) => i !== top)).maps, 'profile-js');
    assert.strictEqual(cut.stacks.filter((s) => s.user.length === 0).length > 0, true);
    const loop = parseProfile('@walked_samples[1, node, , 4096, 7, 0, 0]: 2\n@user_frames[7, 4097]: 7\n@threads[1, node]: 2\n', 'profile-js');
    assert.deepStrictEqual(loop.stacks[0].user, []);
    assert.strictEqual(withoutUserStack(loop), 2);
    const one = parseProfile('@walked_samples[1, node, , 4096, -7, 0, 0]: 2\n@user_frames[0, 4097]: -7\n@threads[1, node]: 2\n', 'profile-js');
    // A thread named with the separator in it: its samples' parts still in place.
    const comma = parseProfile('@walked_samples[1, a, b, , 4096, -7, 0, 0]: 2\n@user_frames[0, 4097]: -7\n@threads[1, a, b]: 2\n', 'profile-js');
    assert.deepStrictEqual([comma.stacks[0].comm, comma.stacks[0].user], ['a, b', ['0x1000', '0x1001']]);
    assert.deepStrictEqual(one.stacks[0].user, ['0x1000', '0x1001'], 'a hash printed signed is the same hash');
  });

  it('reads kernel stacks, and tells sampled pcs from return addresses', function () {
    const text = '@samples[7, node, \n        do_syscall_64+110\n        entry_SYSCALL_64_after_hwframe+114\n, \n        0x7f00000010\n        0x401000\n]: 3\n@threads[7, node]: 3\n';
    const p = parseProfile(text, 'profile');
    assert.deepStrictEqual(p.stacks, [{ tid: 7, comm: 'node', count: 3, kernel: ['do_syscall_64+110', 'entry_SYSCALL_64_after_hwframe+114'], user: ['0x7f00000010', '0x401000'] }]);
    assert.deepStrictEqual(userAddresses(p.stacks), { pcs: ['0x7f00000010'], returns: ['0x401000'] });
    const named = nameStacks(p, null, null);
    assert.deepStrictEqual(named.stacks[0].frames.map((f) => f.name), ['[unknown] 0x401000', '[unknown] 0x7f00000010', 'entry_SYSCALL_64_after_hwframe', 'do_syscall_64']);
  });
});

describe('profile: parsing what profile.d printed (DTrace for Linux)', function () {
  const p = parseProfileDtrace(fs.readFileSync(path.join(__dirname, 'fixtures', 'dtrace-profile.out'), 'utf8'));

  it('reads every entry, and the stacks add up to the thread count', function () {
    assert.strictEqual(p.stacks.length, 59);
    assert.deepStrictEqual(p.threads, [{ tid: 13029, comm: '', count: 528 }]);
    assert.strictEqual(p.stacks.reduce((n, s) => n + s.count, 0), 528);
  });

  it('tells kernel frames from user frames, and demangles DTrace\'s names', function () {
    const inKernel = p.stacks.find((s) => s.kernel.includes('__do_sys_getrusage+0x42'));
    assert(inKernel, 'a sample inside getrusage');
    assert.strictEqual(inKernel.kernel[0], 'getrusage+0x2f9');
    assert.strictEqual(inKernel.user[0], 'libc.so.6`getrusage+0x7');
    const named = nameStacks({ stacks: [inKernel] }, null, null).stacks[0];
    const names = named.frames.map((f) => f.name);
    assert(names.includes('node::CPUUsage(v8::FunctionCallbackInfo<v8::Value> const&)'), names.join('\n'));
    assert.deepStrictEqual(named.frames.slice(-2), [{ name: '__do_sys_getrusage', category: 'kernel' }, { name: 'getrusage', category: 'kernel' }]);
    const userStacks = p.stacks.filter((s) => !s.kernel.length);
    assert(userStacks.length > 10 && userStacks.every((s) => s.user.length > 0));
  });
});

describe('profile: raw stacks (bpftrace 0.23+ prints both stacks as bare hex)', function () {
  const { parseKallsyms, kernelFrameName } = require('../lib/tracer/stack-frames');
  const RAW = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-profile-raw-0.23.out'), 'utf8');

  it('reads a real capture: user frames as 0x.. for nodetrace to name, kernel frames named or 0x.., no 0 frame', function () {
    const p = parseProfile(splitAtEndMarker(RAW.split('\n')).maps, 'profile');
    assert(p.stacks.length > 3, `${p.stacks.length} stacks`);
    for (const s of p.stacks) {
      assert(s.user.length && s.user.every((f) => /^0x[1-9a-f][0-9a-f]*$/.test(f)), s.user.join(' '));
      assert(s.kernel.every((f) => /^0x[0-9a-f]+$|^[A-Za-z_.][\w.]*\+\d+$/.test(f)), s.kernel.join(' '));
    }
    assert(p.stacks.some((s) => s.kernel.length), 'some samples in the kernel');
  });

  it('names raw kernel frames from /proc/kallsyms as bpftrace would: symbol+offset', function () {
    const table = parseKallsyms('ffffffff81000000 T _stext\nffffffff81000e40 T asm_sysvec_apic_timer_interrupt\nffffffff813a4000 t do_thing\n0000000000000000 A fixed_percpu_data\n');
    assert.strictEqual(kernelFrameName('0xffffffff81000e46', table), 'asm_sysvec_apic_timer_interrupt+6');
    assert.strictEqual(kernelFrameName('0xffffffff813a4413', table), 'do_thing+1043');
    assert.strictEqual(kernelFrameName('0x1000', table), '0x1000', 'below every symbol: left as it is');
    assert.strictEqual(kernelFrameName('do_syscall_64+110', table), 'do_syscall_64+110');
  });
});

describe('profile: frames and their categories', function () {
  it('names the pages the kernel maps by their own name, never JIT: [vdso] as libc, the uretprobe trampoline as kernel', function () {
    assert.deepStrictEqual(userFrame({ kind: 'special', text: '0x7ffd1234', module: '[vdso]' }), { name: '[vdso]', category: 'libc' });
    assert.deepStrictEqual(userFrame({ kind: 'special', text: '0x7ffd1234', module: '[uprobes-trampoline]' }), { name: '[uprobes-trampoline]', category: 'kernel' });
    assert.deepStrictEqual(userFrame({ kind: 'special', text: '0x7ffd1234', module: '[anon:ffi]' }), { name: '[anon:ffi]', category: 'unknown' });
  });

  it('names JavaScript from perf map entries, without the tier mark, and tells whose code it is', function () {
    assert.deepStrictEqual(userFrame({ kind: 'js', symbol: 'JS:*hotSpin /app/hot.js:3:17', module: 'JIT' }), { name: 'hotSpin /app/hot.js:3:17', category: 'js', origin: 'app' });
    assert.strictEqual(userFrame({ kind: 'js', symbol: 'JS:~processImmediate node:internal/timers:438:28', module: 'JIT' }).origin, 'node');
    assert.strictEqual(jsOrigin('parse /srv/app/node_modules/qs/lib/parse.js:1:1'), 'node_modules');
    assert.strictEqual(userFrame({ kind: 'jit', text: '0x7f00', module: '[anon]' }).category, 'jit');
  });

  it('puts native frames in V8, Node, add-on, libc by symbol and file', function () {
    const cat = (symbol, module) => userFrame({ kind: 'native', symbol, module }).category;
    assert.strictEqual(cat('v8::internal::Runtime_DateCurrentTime(int, unsigned long*, v8::internal::Isolate*)', 'node'), 'v8');
    assert.strictEqual(cat('Builtins_JSEntryTrampoline', 'node'), 'v8');
    assert.strictEqual(cat('node::crypto::PBKDF2Traits::DeriveBits()', 'node'), 'node');
    assert.strictEqual(cat('uv_run', 'libnode.so.108'), 'node');
    assert.strictEqual(cat('sqlite3VdbeExec', 'node_sqlite3.node'), 'addon');
    assert.strictEqual(cat('__memmove_avx_unaligned_erms', 'libc.so.6'), 'libc');
    assert.strictEqual(cat('operator new(unsigned long)', 'libstdc++.so.6.0.30'), 'libc');
    assert.deepStrictEqual(userFrame({ kind: 'named', text: 'node`uv_run+0x12' }), { name: 'uv_run', category: 'node' });
    assert.deepStrictEqual(kernelFrame('do_syscall_64+110'), { name: 'do_syscall_64', category: 'kernel' });
  });

});

describe('profile: the report', function () {
  // Threads as lib/threads/identify.js read them from the process.
  const identities = new Map([[100, { role: 'main' }], [104, { role: 'libuv-pool' }]]);
  const s = summarize(sampleProfile(),
    { pid: 100, hz: 99, seconds: 2, identityOf: (tid) => identities.get(tid) || null });

  it('ranks functions by self and by total samples with their shares', function () {
    assert.strictEqual(s.samples, 100);
    assert.deepStrictEqual([s.self[0].name, s.self[0].samples, s.self[0].share], ['hotSpin /app/hot.js:3:17', 70, 0.7]);
    assert.strictEqual(s.self.find((f) => f.name.startsWith('warmSpin')).samples, 10);
    assert.strictEqual(s.self.find((f) => f.name === 'do_syscall_64').category, 'kernel');
    const hot = s.total.find((f) => f.name.startsWith('hotSpin'));
    assert.strictEqual(hot.samples, 80, 'total counts what hotSpin called');
    assert.strictEqual(s.total[0].samples, 95, 'uv_run is under every main-thread sample');
    assert.strictEqual(s.busyCpus, 100 / 198);
    assert.deepStrictEqual(s.totalJs.map((f) => [f.name, f.samples]), [['processImmediate node:internal/timers:438:28', 95], ['hotSpin /app/hot.js:3:17', 80], ['warmSpin /app/hot.js:9:18', 10]]);
  });

  it('splits samples by category and JavaScript by origin, and threads by role', function () {
    const by = Object.fromEntries(s.categories.map((c) => [c.category, c.samples]));
    assert.deepStrictEqual(by, { js: 80, jit: 5, v8: 0, node: 5, addon: 0, libc: 0, kernel: 10, unknown: 0 });
    assert.strictEqual(s.categories.reduce((n, c) => n + c.samples, 0), s.samples);
    assert.deepStrictEqual(s.threads.map((t) => [t.role, t.label, t.threads, t.tids, t.samples]), [['main', 'main thread', 1, [100], 95], ['libuv-pool', 'libuv pool', 1, [104], 5]]);
  });

  it('gives each Worker a row of its own, by its thread id and name, whatever its stacks hold', function () {
    const worker = (threadId, name) => ({ role: 'worker', worker: { threadId, name } });
    const ids = new Map([[100, { role: 'main' }], [104, worker(1, 'resize')], [105, worker(2, null)], [106, { role: 'libuv-pool' }], [107, { role: 'libuv-pool' }]]);
    const onLoop = [nat('uv_run'), nat('uv__work_done'), js('spin /app/w.js:1:1')];
    const p = { stacks: [100, 104, 104, 105, 106, 107, 108].map((tid, i) => ({ tid, comm: 'node', count: 10 + i, frames: onLoop })) };
    const w = summarize(p, { pid: 100, hz: 99, seconds: 1, identityOf: (tid) => ids.get(tid) || null });
    assert.deepStrictEqual(w.threads.map((t) => [t.role, t.label, t.tids, t.samples, t.worker || null]), [
      ['libuv-pool', 'libuv pool', [106, 107], 14 + 15, null],
      ['worker', 'Worker 1 "resize"', [104], 11 + 12, { thread_id: 1, name: 'resize' }],
      ['exited', 'a thread that exited', [108], 16, null],
      ['worker', 'Worker 2', [105], 13, { thread_id: 2, name: null }],
      ['main', 'main thread', [100], 10, null],
    ]);
    const text = renderText(w);
    assert.match(text, /^ +25\.3% +23 {2}Worker 1 "resize" \(TID 104\)$/m);
    assert.match(text, /^ +\d+\.\d% +29 {2}libuv pool \(2 threads\)$/m);
  });

  it('says how much JIT code had no name and how to name it', function () {
    assert.strictEqual(s.jit.unnamedShare, 0.05);
    const unnamed = summarize({ ...sampleProfile(), perfMap: { used: false, path: null, refused: null } },
      { pid: 100, hz: 99, seconds: 2 });
    const text = renderText(unnamed);
    assert.match(text, /5\.0% of samples were in JIT-compiled JavaScript that has no name/);
    assert.match(text, /--perf-basic-prof/);
    const refused = renderText(summarize({ ...sampleProfile(), perfMap: { used: false, path: '/tmp/perf-100.map', refused: 'it is not a regular file' } }, { pid: 100 }));
    assert.match(refused, /\/tmp\/perf-100\.map was not read: it is not a regular file/);
  });

  it('a frame its source map placed: the original place in its name, V8\'s in JSON, and a line saying so', function () {
    const frame = { ...js('scoreOrder /app/src/orders/score.ts:5:27'), generated: '/app/dist/orders/score.js:4:20' };
    const p = { stacks: [{ tid: 100, comm: 'node', count: 7, frames: [nat('uv_run'), frame] }] };
    const v8 = { used: true, note: null, inlining: { read: true, shown: 0, unknown: 0, note: null }, sourceMaps: { found: ['/app/dist/orders/score.js'], refused: [] } };
    const m = summarize({ ...p, v8 }, { pid: 100, hz: 99, seconds: 1 });
    assert.deepStrictEqual(m.self[0], { name: 'scoreOrder /app/src/orders/score.ts:5:27', category: 'js', origin: 'app', generated: '/app/dist/orders/score.js:4:20', samples: 7, inlined: 0, share: 1 });
    assert.match(renderText(m),
      /^Frames of 1 script with a source map are shown where the map puts them \(the place V8 runs them: "generated" in --json; --no-source-maps shows that place\)\.$/m);
    assert.doesNotMatch(renderText(summarize({ ...p, v8: { ...v8, sourceMaps: { found: [], refused: [] } } },
      { pid: 100, hz: 99, seconds: 1 })), /source map/);
  });

  it('prints the tables, and no control character from a name reaches the terminal', function () {
    const p = sampleProfile();
    p.stacks[0].frames.push(js('evil\x1b[2J /app/x.js:1:1'));
    const text = renderText(summarize(p, { pid: 100, hz: 99, seconds: 2 }));
    assert.match(text, /Top functions by self samples/);
    assert.match(text, /70\.0%\s+70\s+JS\s+evil/);
    assert(!text.includes('\x1b'), 'escape sequence printed raw');
    // Inlining, said once where JavaScript was sampled (no V8 here describes it).
    assert.strictEqual(text.split('inlined into its caller').length, 2, text);
    const native = { ...p, stacks: p.stacks.map((st) => ({ ...st, frames: st.frames.filter((f) => f.category !== 'js') })) };
    assert.doesNotMatch(renderText(summarize(native, { pid: 100, hz: 99, seconds: 2 })), /inlined/);
  });
});

describe('profile: folded, pprof and SVG hold the same totals', function () {
  const named = sampleProfile();

  it('folded: one line per stack, root (the thread) first, counts add up', function () {
    const lines = parseFolded(renderFolded(named, { pid: 100 }));
    assert.strictEqual(lines.reduce((n, l) => n + l.count, 0), 100);
    const hot = lines.find((l) => l.frames[l.frames.length - 1] === 'hotSpin /app/hot.js:3:17');
    assert.deepStrictEqual(hot.frames.slice(0, 2), ['node (main thread)', 'uv_run']);
    assert.strictEqual(hot.count, 70);
    const odd = { stacks: [{ tid: 1, comm: 'n', count: 1, frames: [js('a;b\nc /x.js:1:1')] }] };
    assert.strictEqual(renderFolded(odd, { pid: 1 }), 'n (main thread);a b c /x.js:1:1 1\n');
  });

  it('pprof: decodes with pprof-format to the same samples, stacks leaf first, CPU time per sample', function () {
    const buf = encodePprof(named, { pid: 100, hz: 100, seconds: 1 });
    assert.deepStrictEqual([...buf.subarray(0, 2)], [0x1f, 0x8b], 'gzip');
    const p = decodePprof(buf);
    const str = (i) => p.stringTable.strings[Number(i)];
    assert.deepStrictEqual(p.sampleType.map((t) => str(t.type) + '/' + str(t.unit)), ['samples/count', 'cpu/nanoseconds']);
    assert.strictEqual(p.sample.reduce((n, s) => n + Number(s.value[0]), 0), 100);
    assert.strictEqual(p.sample.reduce((n, s) => n + Number(s.value[1]), 0), 100 * 1e7);
    const fnName = (locId) =>
      str(p.function.find((f) => Number(f.id) === Number(p.location.find((l) => Number(l.id) === Number(locId)).line[0]
        .functionId)).name);
    const first = p.sample[0];
    assert.strictEqual(fnName(first.locationId[0]), 'hotSpin');
    assert.strictEqual(fnName(first.locationId[first.locationId.length - 1]), 'uv_run');
    const hotFn = p.function.find((f) => str(f.name) === 'hotSpin');
    assert.strictEqual(str(hotFn.filename), '/app/hot.js');
    assert.strictEqual(Number(hotFn.startLine), 3);
  });

  it('SVG: well-formed, every sample in the root box, names escaped, no external reference', function () {
    const named2 = sampleProfile();
    named2.stacks[2].frames.push(js('<script>alert(1)</script> /x.js:1:1'));
    const svg = renderSvg(named2, { pid: 100, hz: 99, seconds: 1 });
    assert.match(svg, /data-total="100"/);
    assert.match(svg, /<g class="f" id="f0" data-x="0" data-w="100" data-d="0"/);
    assert(!svg.includes('<script>alert'), 'a name is markup');
    assert(!/(href|src)=|https?:\/\/(?!www\.w3\.org)/.test(svg), 'the SVG refers to nothing outside itself');
    const widths = [...svg.matchAll(/data-name="hotSpin[^"]*"/g)];
    assert.strictEqual(widths.length, 1, 'one box for hotSpin under processImmediate');
  });
});

describe('27.12: the SVG is valid XML whatever a name holds', function () {
  // XML 1.0, production [2]: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
  function notXmlChars(text) {
    const bad = [];
    for (const ch of text) {   // by code point: a pair is one character, a lone surrogate is one too
      const c = ch.codePointAt(0);
      const ok = c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd)
        || (c >= 0x10000 && c <= 0x10ffff);
      if (!ok) bad.push(c.toString(16));
    }
    return bad;
  }

  it('U+FFFE/U+FFFF, lone surrogates, C0 controls and a pair cut short: every character a Char, every box drawn', function () {
    const named = sampleProfile();
    const hostile = [
      'ev\ufffeil\uffff /x.js:1:1', 'lone\ud800high /x.js:1:1', 'lone\udc00low /x.js:1:1', 'c0\x00\x01\x08\x0b\x0c\x1b[2J /x.js:1:1',
      // Cut by fitText where the pair is: the narrow box keeps its first half.
      `${'\u{1F600}'.repeat(40)} /x.js:1:1`,
    ];
    for (const [i, name] of hostile.entries()) named.stacks[i % named.stacks.length].frames.push(js(name));
    const svg = renderSvg(named, { pid: 100, hz: 99, seconds: 1, title: 'CPU \ufffe flame graph' });
    assert.deepStrictEqual(notXmlChars(svg), []);
    // Every box there: each g opened is closed, and each name shown.
    assert.strictEqual((svg.match(/<g class="f"/g) || []).length, (svg.match(/<\/g>/g) || [])
      .length - (svg.match(/<g(?! class="f")[ >]/g) || []).length);
    for (const word of ['ev\ufffdil\ufffd', 'lone\ufffdhigh', 'lone\ufffdlow', 'c0\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd[2J']) {
      assert(svg.includes(`data-name="${word}`), word);
    }
  });

  it('a name with no such character is kept as it is (a pair, tab, markup escaped)', function () {
    assert.strictEqual(escapeXml('a\u{1F600}b\t<c>'), 'a\u{1F600}b\t&lt;c&gt;');
  });
});

describe('profile: the plan', function () {
  it('passes the rate and the PID as arguments and keeps bpftrace from reading the perf map', function () {
    const tracer = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    const p = profileCommand.plan({ pid: String(process.pid), frequency: 49, v8Frames: false }, tracer);
    assert.deepStrictEqual(p.argv.slice(-2), ['49', String(process.pid)]);
    assert(p.argv[p.argv.length - 3].endsWith('d-scripts/profile.bt'));
    // By default, a node whose V8 nodetrace knows: profile-js.bt, given JSFunction's shared offset (24 on V8 11, 32 after).
    // And where a JSFunction keeps its code (48 on V8 10-11, 24 on 12; 0: inlining not read, V8 13 on).
    // On 0.17 instantiated (its WALK slot): the user stacks kept by the program, bpftrace's map of them loses some.
    const js = profileCommand.plan({ pid: String(process.pid), frequency: 49 }, tracer);
    assert.deepStrictEqual(js.argv[js.argv.length - 5], { temp: 'profile-js.bt' }, js.argv.join(' '));
    assert.match(js.programText, /^#define WALK_USER_STACK 1$/m);
    assert.deepStrictEqual(js.details.boundedMaps.map((b) => [b.map, b.keys]), [['@walked_samples', 131072], ['@user_frames', 131072], ['ustack', 131072]]);
    assert.strictEqual(js.env.BPFTRACE_MAP_KEYS_MAX, '131072');
    assert.deepStrictEqual(mapFullLines(js.details.boundedMaps, { '@walked_samples': { held: 5 }, '@user_frames': { held: 131072 } }), [
      'warning: the tracer\'s map of stack frames (@user_frames) filled at 131,072 keys: more were not kept, samples whose stack '
      + 'did not fit are counted, as "[no stack]"; trace for less time or at a lower -F, or raise the bound with NODETRACE_MAP_KEYS=N (now 131,072)']);
    // From 0.21 ustack, the walk's part left out (compiled, though dead, it doubles the time to compile).
    const newer = profileCommand.plan({ pid: String(process.pid), frequency: 49 }, { ...tracer, version: '0.23.2' });
    assert.deepStrictEqual(newer.argv[newer.argv.length - 5], { temp: 'profile-js.bt' }, newer.argv.join(' '));
    assert(!/\/\* @walk |^\s*@(user_frames|walked_samples)\[/m.test(newer.programText), 'the walk left out');
    assert.match(newer.programText, /^\t\t@samples\[tid, comm, kstack, ustack, \$h, \$leaf_ret\] = count\(\);$/m);
    assert.deepStrictEqual(newer.details.boundedMaps.map((b) => b.map), ['@samples', 'ustack']);
    const major = Number(process.versions.v8.split('.')[0]);
    assert.deepStrictEqual(js.argv.slice(-4), ['49', String(process.pid), major <= 11 ? '24' : '32', major <= 11 ? '48' : major === 12 ? '24' : '0']);
    assert.strictEqual(p.env.BPFTRACE_NO_USER_SYMBOLS, '1');
    // 0.23+ names user frames itself whatever that says: its raw stack mode.
    assert.strictEqual(profileCommand.plan({ pid: String(process.pid), frequency: 49 }, { ...tracer, version: '0.23.2' }).env.BPFTRACE_STACK_MODE, 'raw');
    const d = profileCommand.plan({ pid: String(process.pid), frequency: 99 }, { name: 'dtrace', path: '/usr/sbin/dtrace', version: '2.0' });
    assert.deepStrictEqual(d.argv.slice(-3), ['-p', String(process.pid), '99']);
  });

  it('-c: the command goes to the tracer as words, never to a shell; bpftrace keeps only its child (cpid)', function () {
    const tracer = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    // This node's V8 is known: profile-js.bt, SHARED read from the executable before it runs.
    const { shared, codeArguments } = require('../lib/profile/js-frames').jsFramesLayout(process.pid);
    const code = codeArguments.CODE;
    for (const [flags, script, tail] of [[{}, 'profile-js.bt', ['99', '0', String(shared), String(code)]], [{ v8Frames: false }, 'profile.bt', ['99', '0']]]) {
      const p = profileCommand.plan({ command: `${process.execPath} app.js $(touch /tmp/x);`, frequency: 99, ...flags }, tracer);
      const c = p.argv.indexOf('-c');
      assert.strictEqual(p.argv[c + 1], `${process.execPath} app.js $(touch /tmp/x);`);
      assert.match(p.programText, /^profile:hz:\$1\n\/pid == cpid\/$/m);
      assert(!/\/pid == \$2\//.test(p.programText.replace(/@template TARGET: .*/, '')), 'every TARGET line instantiated');
      assert.deepStrictEqual(p.argv.slice(-tail.length), tail);
      assert.deepStrictEqual(p.argv.slice(-tail.length - 1, -tail.length), [{ temp: script }]);
      assert.deepStrictEqual(p.argv.slice(p.argv.indexOf('-o'), p.argv.indexOf('-o') + 2), ['-o', { temp: 'bpftrace.out' }]);
      assert.strictEqual(p.target, null);
      assert.deepStrictEqual(p.warnings, []);
      assert.deepStrictEqual(p.details.jsFrames && p.details.jsFrames.command, flags.v8Frames === false ? undefined
        : { binary: process.execPath, shared, codeArguments });
      if (flags.v8Frames !== false) assert.strictEqual(p.details.jsFrames.sourceMaps, true, 'frames at their source maps\' places by default');
      // Its captures printed every 200 ms: once it exits they can no longer be named.
      if (script === 'profile-js.bt') assert.match(p.programText, /^interval:ms:200$/m);
    }
    assert.match(profileCommand.plan({ pid: String(process.pid), frequency: 99 }, tracer).programText, /^interval:s:1$/m, '-p: every second');
    // -c on 0.17: both slots, the walk's stacks too.
    assert.match(profileCommand.plan({ command: `${process.execPath} app.js`, frequency: 99 }, tracer).programText, /^#define WALK_USER_STACK 1$/m);
    // A command whose executable carries no V8 (a script, env): today's program, said in one line.
    const sh = profileCommand.plan({ command: '/bin/sh app.sh', frequency: 99 }, tracer);
    assert.deepStrictEqual(sh.argv.slice(-3), [{ temp: 'profile.bt' }, '99', '0']);
    assert.deepStrictEqual(sh.warnings, ['/bin/sh carries no V8 postmortem metadata, nor a libnode it links (not node\'s executable, or a script): JavaScript is named from the perf map only']);
    const d = profileCommand.plan({ command: 'node app.js', frequency: 99 }, { name: 'dtrace', path: '/usr/sbin/dtrace', version: '2.0' });
    assert.deepStrictEqual(d.argv.slice(-3), ['-c', d.argv[d.argv.length - 2], '99']);
    assert.match(d.argv[d.argv.length - 2], /\/node app\.js$/);
    assert.throws(() => profileCommand.plan({ command: 'no-such-program-here x', frequency: 99 }, tracer), (e) => e.exitCode === 2);
  });
});

describe('profile: the command line', function () {
  this.timeout(480000);   // each run starts node and yargs; slow on a busy machine
  const { nodetrace } = require('./support/harness');

  it('-n prints the bpftrace command line and profile.bt, and runs nothing', async function () {
    const r = await nodetrace(['profile', '-p', String(process.pid), '-F', '49', '-n', '--backend', 'bpftrace', '--no-v8-frames'], { timeoutMs: 110000 });
    if (/not usable here|no tracer found/.test(r.stderr)) this.skip();
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# bpftrace \S+ would run \(PID \d+\):/);
    assert.match(r.stdout, new RegExp(`BPFTRACE_NO_USER_SYMBOLS=1 .*bpftrace \\S*d-scripts/profile\\.bt 49 ${process.pid}$`, 'm'));
    assert.match(r.stdout, /^exit$/m);
    assert.match(r.stdout, /profile:hz:\$1\n\/pid == \$2\//);
  });

  it('refuses a bad rate, a missing process and an empty file name as usage errors (exit 2)', async function () {
    for (const [args, says] of [
      [['profile', '-p', String(process.pid), '-F', '0'], /-F expects a whole number of samples a second from 1 to 999/],
      [['profile', '-p', String(process.pid), '-F', '99.5'], /-F expects/],
      [['profile'], /Give a process: a PID \(-p PID\), part of a command line, --container NAME, --pod NAME or -c COMMAND/],
      [['profile', '-p', String(process.pid), '-c', 'node app.js'], /Give one target: a PID \(-p PID\), part of a command line, --container NAME, --pod NAME or -c COMMAND, not -p and -c/],
      [['profile', '-c', ' '], /-c expects a command/],
      [['profile', '-p', String(process.pid), '--svg', ''], /--svg expects a file name/],
    ]) {
      const r = await nodetrace(args, { timeoutMs: 110000 });
      assert.strictEqual(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, says);
      assert(!/\n\s+at /.test(r.stderr), 'no stack trace');
    }
  });

});

describe('profile --off-cpu: what offcpu.bt printed, ranked by time blocked', function () {
  const { parseOffCpu } = require('../lib/profile/parse');
  const { summarizeOffCpu, renderOffCpuText } = require('../lib/profile/offcpu-report');
  // test/targets/offcpu-wait.js's main thread: a FIFO read, then Atomics.wait.
  const parsed = parseOffCpu(splitAtEndMarker(fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-offcpu.out'), 'utf8').split('\n')).maps);
  const pid = parsed.threads[0].tid;

  it('reads the stacks with their microseconds, the waits per thread, and the wait still going on at the end', function () {
    assert.deepStrictEqual(parsed.threads, [{ tid: pid, comm: 'node', blocks: 33 }]);
    assert.deepStrictEqual(parsed.stacks.map((s) => [s.count, s.user.length, Boolean(s.ongoing)]),
      [[642422, 1, false], [1761595, 25, false], [Number((11230016543472n - 11229877320682n) / 1000n), 25, true]]);
    assert(parsed.stacks.every((s) => s.comm === 'node' && s.kernel[0] === '__schedule+1560'));
  });

  it('merges equal stacks, says why each waited, and flags a user stack cut short in libc', function () {
    const named = nameStacks(parsed, null, null);
    const s = summarizeOffCpu(named, { pid, seconds: 3, threads: parsed.threads });
    assert.deepStrictEqual([s.threads[0].label, s.threads[0].tids], ['main thread', [pid]]);
    assert.strictEqual(s.blockedUs, 642422 + 1761595 + 139222);
    assert.strictEqual(s.blocks, 33);
    assert.deepStrictEqual(s.stacks.map((x) => [x.us, x.reason, Boolean(x.ongoing), Boolean(x.cutShort)]),
      [[1761595 + 139222, 'read: anon_pipe_read', true, false], [642422, 'futex: futex_do_wait', false, true]]);
    assert.strictEqual(s.threads[0].role, 'main');
    assert(Math.abs(s.threads[0].ofTrace - s.blockedUs / 3e6) < 1e-9);
    const text = renderOffCpuText(s);
    assert.match(text, /^Off-CPU time of PID \d+, its main thread: blocked 2\.54 s in 33 waits over 3\.0 s traced\./);
    assert.match(text, /^ {2}1\. 1\.90 s 63\.4% of the time, main thread: read: anon_pipe_read \(still blocked at the end\)$/m);
    assert.match(text, /its callers are unknown/);
  });

  it('waits whose user stack bpftrace 0.17 lost: their time counted, as "[no stack]" (never "cut short in libc"), and said in one line', function () {
    // test/fixtures/bpftrace-offcpu-no-ustack-0.17.out(.cmd): fsync from
    // 1,500 distinct stacks; 3 stacks lost, keyed ", , HASH]" (trimmed by
    // the .cmd's rule: every key without a user stack kept, and 40 others).
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-offcpu-no-ustack-0.17.out'), 'utf8');
    const p = parseOffCpu(splitAtEndMarker(text.split('\n')).maps);
    const lostKeys = [...text.matchAll(/^, , -?\d+\]: (\d+)$/gm)].map((m) => Number(m[1]));
    assert.strictEqual(lostKeys.length, 3);
    assert.strictEqual(withoutUserStack(p), lostKeys.reduce((n, us) => n + us, 0));
    // Every key read: the waits summed, and those still blocked at the end.
    const summed = [...text.matchAll(/^@offcpu_us\[[^]*?\]: (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    assert.strictEqual(p.stacks.filter((x) => !x.ongoing).reduce((n, x) => n + x.count, 0), summed);
    assert.strictEqual(p.stacks.length, (text.match(/^@(offcpu_us|blocked_since_ns)\[/gm) || []).length);
    const named = nameStacks(p, null, null);
    const s = summarizeOffCpu(named, { pid: p.threads[0].tid, seconds: 10, threads: p.threads, top: 1000 });
    assert.strictEqual(s.blockedUs, p.stacks.reduce((n, x) => n + x.count, 0));
    const lost = s.stacks.filter((x) => x.frames.length === 1 && x.frames[0].name === '[no stack]');
    assert.strictEqual(lost.reduce((n, x) => n + x.us, 0), withoutUserStack(p));
    assert(lost.every((x) => !x.cutShort && /^fsync: /.test(x.reason)), JSON.stringify(lost));
    assert(s.stacks.every((x) => x.frames.length > 0));
    // Declared on bpftrace before 0.25, said once with the time.
    const planned = (version) => profileCommand.plan({ pid: String(process.pid), frequency: 99, offCpu: true },
      { name: 'bpftrace', path: '/usr/bin/bpftrace', version }).details.boundedMaps;
    assert.deepStrictEqual(mapFullLines(planned('0.17.0'), { '@offcpu_us': { held: p.stacks.length }, ustack: { refused: withoutUserStack(p) } }), [
      'warning: 5.4 ms of waiting had no user stack: the tracer lost it from its map of stacks (131,072 places: it keeps no stack '
      + 'whose place another holds); it is counted, as "[no stack]"; trace for less time, '
      + 'or use bpftrace 0.25 or later, which keeps each stack with its sample']);
    assert.deepStrictEqual(planned('0.27.1').map((b) => b.map), ['@offcpu_us']);
    assert.strictEqual(withoutUserStack(parsed), 0, 'the other capture lost none');
  });

  it('pprof and SVG hold the same time, in time units', function () {
    const named = nameStacks(parsed, null, null);
    const us = parsed.stacks.reduce((n, x) => n + x.count, 0);
    const p = decodePprof(encodePprof(named, { pid, seconds: 3, offCpu: true }));
    const str = (i) => p.stringTable.strings[Number(i)];
    assert.deepStrictEqual(p.sampleType.map((t) => [str(t.type), str(t.unit)]), [['off-cpu', 'nanoseconds']]);
    assert.strictEqual(p.sample.reduce((n, x) => n + Number(x.value[0]), 0), us * 1000);
    const svg = renderSvg(named, { pid, seconds: 3, unit: 'us', title: 'Off-CPU time' });
    assert.match(svg, new RegExp(`data-total="${us}"`));
    assert.match(svg, /<text x="10" y="40">2\.54 s in 3\.0 s; click a box to zoom<\/text>/);
    assert.match(svg, /<title>all \(2\.54 s, 100\.00%\)<\/title>/);
  });

  it('with SHARED: each stack keeps the hash of its JavaScript chain, which leads to frames of that stack', function () {
    // test/targets/offcpu-wait.js with no flag, its JavaScript frames walked from the saved user registers.
    const { SampleNames } = require('../lib/profile/js-frames');
    const lines = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-offcpu-js.out'), 'utf8').split('\n');
    const js = parseOffCpu(splitAtEndMarker(lines).maps);
    // A namer that names every SFI by its address: what is checked here is the chain.
    const names = new SampleNames({ nameSfi: (sfi) => ({ name: `sfi${sfi}` }), limitation: () => null }, { close() {} });
    for (const line of lines) names.take(line);
    const fifo = js.stacks.filter((s) => s.kernel.some((f) => /^anon_pipe_read/.test(f)));
    assert.strictEqual(fifo.length, 2, 'the FIFO read: ended waits and the one still going on');
    for (const s of fifo) {
      assert(s.chain, 'a chain');
      const depths = [...names.chain(s.chain).keys()].sort((a, b) => a - b);
      assert.deepStrictEqual(depths, [7, 8, 9, 10]);
      assert(depths.every((d) => d < s.user.length));
    }
    // The futex wait's user stack stops in libc (no frame pointer there): no chain.
    const futex = js.stacks.find((s) => s.kernel.some((f) => /^futex_do_wait/.test(f)));
    assert.strictEqual(futex.chain, undefined);
    assert.strictEqual(futex.user.length, 1);
  });

  it('the plan: PID, thread choice and (V8 known) SHARED as arguments; -c puts cpid in every TARGET line', function () {
    const tracer = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    // This process is a node whose V8 nodetrace knows: its JavaScript frames are walked too.
    const { shared, codeArguments: { CODE: code } } = require('../lib/profile/js-frames').jsFramesLayout(process.pid);
    assert(shared > 0);
    const p = profileCommand.plan({ pid: String(process.pid), frequency: 99, offCpu: true, allThreads: true }, tracer);
    assert(p.argv[p.argv.length - 5].endsWith('d-scripts/offcpu.bt'));
    assert.deepStrictEqual(p.argv.slice(-4), [String(process.pid), '1', String(shared), String(code)]);
    const no = profileCommand.plan({ pid: String(process.pid), frequency: 99, offCpu: true, v8Frames: false }, tracer);
    assert(no.argv[no.argv.length - 3].endsWith('d-scripts/offcpu.bt'));
    assert.deepStrictEqual(no.argv.slice(-2), [String(process.pid), '0']);
    const c = profileCommand.plan({ command: `${process.execPath} app.js`, frequency: 99, offCpu: true }, tracer);
    assert.match(c.programText, /^\s*if \(pid == cpid && \(\$2 \|\| tid == cpid\) && \(args->prev_state & 3\)\) \{$/m);
    assert.deepStrictEqual(c.argv.slice(-4), ['0', '0', String(shared), String(code)]);
    assert.match(c.programText, /^interval:ms:200$/m);
    const cNo = profileCommand.plan({ command: `${process.execPath} app.js`, frequency: 99, offCpu: true, v8Frames: false }, tracer);
    assert.deepStrictEqual(cNo.argv.slice(-3), [{ temp: 'offcpu.bt' }, '0', '0']);
    assert.throws(() => profileCommand.plan({ pid: String(process.pid), offCpu: true }, { name: 'dtrace', path: '/usr/sbin/dtrace', version: '2.0' }),
      /--off-cpu runs on bpftrace only/);
  });
});

// 36.7: a function that ran both inlined and not is one row. A real capture
// (test/fixtures/profile-inline-both.folded, how made in its .cmd): scale
// inlined into step in 26 samples, on its own under coldCaller in 21.
describe('profile: a function that ran both inlined and on its own', function () {
  const { renderFolded, parseFolded } = require('../lib/profile/folded');
  const { buildPprof } = require('../lib/profile/pprof');
  const { renderJson } = require('../lib/profile/report');
  const FOLDED = fs.readFileSync(path.join(__dirname, 'fixtures', 'profile-inline-both.folded'), 'utf8');
  // The named stacks back from the folded lines: the thread its root frame,
  // a frame marked _[i] inlined; JavaScript by its file:line:column.
  const named = {
    stacks: parseFolded(FOLDED).map(({ frames, count }) => ({
      tid: 1, comm: 'node', count,
      frames: frames.slice(1).map((f) => {
        const inlined = f.endsWith('_[i]');
        const name = inlined ? f.slice(0, -4) : f;
        const isJs = / \S+:\d+:\d+$/.test(name);
        return { name, category: isJs ? 'js' : 'node', ...(isJs ? { origin: /^\S+ node:/.test(name) ? 'node' : 'app' } : {}), ...(inlined ? { inlined: true } : {}) };
      }),
    })),
  };
  const SCALE = 'scale /app/test/targets/profile-inline.js:14:15';

  it('one row, its samples either way, how many inlined; in text and JSON', function () {
    const s = summarize(named, { pid: 1, hz: 99, seconds: 15, top: 100 });
    for (const table of [s.self, s.total, s.totalJs]) {
      const rows = table.filter((f) => f.name.startsWith('scale '));
      assert.deepStrictEqual(rows.map((f) => [f.name, f.samples, f.inlined]), [[SCALE, 47, 26]]);
    }
    const text = renderText(s);
    assert.match(text, /\n +29\.9% +47 +JS +scale \/app\/test\/targets\/profile-inline\.js:14:15 {2}\(55% inlined\)\n/);
    assert.match(text, /\n +1\.9% +3 +JS +mix \S+ {2}\(inlined\)\n/);
    assert.doesNotMatch(text, /scale \(inlined\)/);
    const json = JSON.parse(renderJson(s));
    assert.deepStrictEqual(json.total.filter((f) => f.name === SCALE).map((f) => [f.samples, f.inlined]), [[47, 26]]);
    assert.strictEqual(json.self.find((f) => f.name.startsWith('coldCaller ')).inlined, 0);
  });

  it('--folded marks the frame inlined, as read (the capture again, line for line)', function () {
    assert.strictEqual(renderFolded(named, { pid: 1 }), FOLDED);
    assert.match(FOLDED, /;step \S+;scale \S+_\[i\] 26\n/);
    assert.match(FOLDED, /;coldCaller \S+;scale \S+ 21\n/);
  });

  it('pprof: one function scale; inlined, a line of step\'s location', function () {
    const p = buildPprof(named, { pid: 1, hz: 99, seconds: 15 });
    const str = (i) => p.stringTable.strings[Number(i)];
    const scale = p.function.filter((f) => str(f.name) === 'scale');
    assert.strictEqual(scale.length, 1);
    const fnName = (id) => str(p.function.find((f) => Number(f.id) === Number(id)).name);
    const shapes = p.location.map((l) => l.line.map((ln) => fnName(ln.functionId)).join('<')).filter((x) => x.includes('scale'));
    assert.deepStrictEqual(shapes.sort(), ['scale', 'scale<step']);
    // Every sample's samples add up as before: 157.
    assert.strictEqual(p.sample.reduce((n, x) => n + Number(x.value[0]), 0), 157);
  });
});

