'use strict';
// `nodetrace async`, pure parts: provider names per Node version, the
// AsyncWrap layout per version, finding the functions in a made-up process,
// and the report from real captured output (test/fixtures/bpftrace-async-mix.out).
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { PROVIDERS, providersOf, providerName } = require('../lib/async/providers');
const { locateAsyncWrap, layoutOf, FUNCTIONS, RESET_24, LAYOUTS } = require('../lib/async/wrap-functions');
const { parseAsync, functionAddresses } = require('../lib/async/report/build-model');
const { isGrowing } = require('../lib/async/report/alive-samples');
const { groupLiveStacks, lostLiveStacks, STACKS_PER_KIND } = require('../lib/async/report/live-stacks');
const { renderAsyncText } = require('../lib/async/report/text');
const { renderAsyncJSON } = require('../lib/async/report/json');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const { totalCount } = require('../lib/aggregation/model');
const { nodeBuilds, requireBuild } = require('./support/node-builds');
const { mapFullLines } = require('../lib/render/map-full');

const FIXTURE = path.join(__dirname, 'fixtures', 'bpftrace-async-mix.out');
const STACKS_FIXTURE = path.join(__dirname, 'fixtures', 'bpftrace-async-stacks.out');

// A KIND line as async.bt prints it: the key, then the type's first 128
// bytes (NUL-padded) as 16 little-endian words in hex.
function kindLine(key, name) {
  const bytes = Buffer.alloc(128);
  Buffer.from(name, 'utf8').copy(bytes);
  const words = Array.from({ length: 16 }, (_, i) => bytes.readBigUInt64LE(i * 8).toString(16));
  return `KIND ${key} ${words.join(' ')}`;
}

describe('nodetrace async: provider names and layouts', function () {
  it('names a provider by its Node major\'s table, and an unknown one by its number', function () {
    assert.strictEqual(providerName(providersOf('20.20.2'), 8), 'FSREQCALLBACK');
    assert.strictEqual(providerName(providersOf('22.12.0'), 40), 'TCPWRAP');
    assert.strictEqual(providerName(providersOf('20.20.2'), 40), 'SIGINTWATCHDOG');
    assert.strictEqual(providerName(providersOf('20.20.2'), 99), 'provider 99');
    assert.strictEqual(providersOf('99.0.0'), null);
    assert.strictEqual(providerName(null, 8), 'provider 8');
    assert.strictEqual(layoutOf('21.0.0'), null, 'no layout guessed for a major not measured');
  });

  // Each trusted build of the matrix: its own Providers list (run here, in
  // the test only: nodetrace never runs the target's binary) is the table,
  // and its MakeCallback reads provider_type_ and async_id_ where LAYOUTS says.
  for (const build of nodeBuilds('all')) {
    it(`${build.label}: the table names the build's own Providers, the layout is its MakeCallback's`, function () {
      requireBuild(this, build);
      // (process.binding('async_wrap') is refused from Node 24: the internal binding.)
      const r = spawnSync(build.node, ['--expose-internals', '--no-warnings', '-e',
        'const p = require("internal/test/binding").internalBinding("async_wrap").Providers; console.log(JSON.stringify({ v: process.versions.node, p }))'],
      { encoding: 'utf8', timeout: 20000 });
      assert.strictEqual(r.status, 0, r.stderr);
      const { v, p } = JSON.parse(r.stdout);
      const table = providersOf(v);
      assert(table, `no provider table for Node ${v} (lib/async/providers.js)`);
      for (const [name, n] of Object.entries(p)) assert.strictEqual(providerName(table, n), name, `Node ${v}: provider ${n}`);
      if (build.shared) return; // libnode: the layout is checked by the @tracer counts
      const dis = spawnSync('sh', ['-c', `objdump -d --no-show-raw-insn "$0" | awk '/<${FUNCTIONS.CALLBACK}>:/{f=1} f&&/^$/{exit} f'`, build.node],
        { encoding: 'utf8', maxBuffer: 1 << 26, timeout: 120000 });
      const hex = (n) => `0x${n.toString(16)}(`;
      assert(new RegExp(`mov +${hex(layoutOf(v).TYPE_AT).replace(/[()]/g, '\\$&')}%r\\w+\\),%(r\\w+d|e[a-d]x|e[sd]i)`).test(dis.stdout), `provider_type_ at ${layoutOf(v).TYPE_AT}:\n${dis.stdout.slice(0, 1500)}`);
      assert(dis.stdout.includes(`movsd  ${hex(layoutOf(v).ID_AT)}`), `async_id_ at ${layoutOf(v).ID_AT}`);
    });
  }
});

describe('nodetrace async: finding the AsyncWrap functions', function () {
  const valueOf = (name) => 0x1000 + name.length;
  function host({ names = Object.values(FUNCTIONS), version = '20.20.2', value = valueOf } = {}) {
    return {
      maps: () => '00400000-00500000 r-xp 00000000 fe:00 11 /usr/bin/node',
      exePath: () => '/usr/bin/node',
      findSymbols: (file, wanted) => ({ loads: [],
        found: new Map(wanted.filter((n) => names.includes(n)).map((n) => [n, { value: value(n), size: 1 }])) }),
      nodeVersion: () => version,
    };
  }
  it('finds them, the layout and the names by the Node version read from the file', function () {
    const r = locateAsyncWrap(7, host());
    assert.strictEqual(r.file, '/proc/7/map_files/400000-500000');
    assert.deepStrictEqual(r.layout, LAYOUTS[20]);
    assert.strictEqual(r.providers, PROVIDERS[20]);
    // Node 24 dropped AsyncReset's bool.
    const names24 = [...Object.values(FUNCTIONS).filter((n) => n !== FUNCTIONS.RESET), RESET_24];
    const r24 = locateAsyncWrap(7, host({ names: names24, version: '24.11.0' }));
    assert.strictEqual(r24.functions.RESET, RESET_24);
    assert.deepStrictEqual(r24.layout, { TYPE_AT: 48, ID_AT: 56 });
  });
  it('gives each function\'s start in the file, by role, for bpftrace to probe at; none where one has no value', function () {
    const r = locateAsyncWrap(7, host());
    assert.deepStrictEqual(r.addresses, Object.fromEntries(Object.entries(FUNCTIONS).map(([role, name]) => [role, `0x${valueOf(name).toString(16)}`])));
    const names24 = [...Object.values(FUNCTIONS).filter((n) => n !== FUNCTIONS.RESET), RESET_24];
    assert.strictEqual(locateAsyncWrap(7, host({ names: names24, version: '24.11.0' })).addresses.RESET, `0x${valueOf(RESET_24).toString(16)}`);
    // (The names stay: async.d and the pid provider take them.)
    assert.deepStrictEqual(r.functions, FUNCTIONS);
    assert.strictEqual(locateAsyncWrap(7, host({ value: (n) => (n === FUNCTIONS.DTOR ? 0 : 16) })).addresses, null);
  });
  it('says in one sentence which build and what is missing', function () {
    assert.match(locateAsyncWrap(7, host({ version: '30.1.0' })).missing,
      /^\/usr\/bin\/node is Node v30\.1\.0, whose AsyncWrap layout nodetrace does not know \(it knows Node 18, 20, 22, 24, 26\)$/);
    assert.match(locateAsyncWrap(7, host({ names: [FUNCTIONS.CALLBACK] })).missing,
      /defines AsyncWrap::MakeCallback but not RESET, DESTROY, DTOR, DELETING_DTOR/);
    assert.match(locateAsyncWrap(7, host({ names: [] })).missing, /^no object of the process defines/);
  });
});

// Issue 35: a map that fills is said (lib/render/map-full.js), on a real
// capture: 3,000 fs.stat calls alive at once against a @born of 1,024 keys.
describe('nodetrace async: a full @born, said', function () {
  const result = splitAtEndMarker(fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-async-full.out'), 'utf8').split('\n'));
  const r = parseAsync(result, { providers: PROVIDERS[20] });

  it('reads the inserts @born did not keep, and says them in one line naming the bound and how to raise it', function () {
    assert.strictEqual(r.fullBorn, 1976);
    const fsKind = r.kinds.find((k) => k.name === 'FSREQCALLBACK');
    assert.strictEqual(fsKind.created, 3000n, 'the counts are whole');
    assert.strictEqual(totalCount(fsKind.wait), 1024n, 'only the kept ones have a wait');
    const bounded = [{ map: '@born', keys: 1024, what: 'operations alive at once', lost: 'their wait for a first callback was not measured', raise: null }];
    assert.deepStrictEqual(mapFullLines(bounded, { '@born': { refused: r.fullBorn } }), [
      'warning: the tracer\'s map of operations alive at once (@born) filled at 1,024 keys: 1,976 more were not kept, their wait for a first callback was not measured; raise the bound with NODETRACE_MAP_KEYS=N (now 1,024)',
    ]);
  });

  it('says nothing where no map filled (a capture with no @full_born)', function () {
    const mix = parseAsync(splitAtEndMarker(fs.readFileSync(FIXTURE, 'utf8').split('\n')), { providers: PROVIDERS[20] });
    assert.strictEqual(mix.fullBorn, 0);
    assert.deepStrictEqual(mapFullLines([{ map: '@born', keys: 65536, what: 'x', lost: 'y', raise: null }], { '@born': { refused: mix.fullBorn } }), []);
  });

  it('a map printed whole (profile\'s stacks) is full at its bound, not before', function () {
    const b = [{ map: '@samples', keys: 4, what: 'distinct stacks', lost: 'samples of stacks past it were dropped', raise: 'trace for less time' }];
    assert.deepStrictEqual(mapFullLines(b, { '@samples': { held: 3 } }), []);
    assert.deepStrictEqual(mapFullLines(b, { '@samples': { held: 4 } }), [
      'warning: the tracer\'s map of distinct stacks (@samples) filled at 4 keys: more were not kept, samples of stacks past it were dropped; trace for less time, or raise the bound with NODETRACE_MAP_KEYS=N (now 4)',
    ]);
  });

  // The hook's maps and the callbacks' functions, printed whole: full at
  // their bound (a real capture: two threads' hook kinds, 7 keys; 11
  // functions by kind), held against the plan's bounded maps.
  it('the hook\'s kinds and the functions called back, printed whole, are said full at their bound, not before', function () {
    const { boundedMaps } = require('../lib/commands/async');
    const hooked = parseAsync(splitAtEndMarker(fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-async-hook-worker.out'), 'utf8').split('\n')),
      { providers: PROVIDERS[20], hook: true });
    assert.deepStrictEqual(hooked.keysHeld, { hook_created: 7, function_ns: 11, thread_created: 0 });
    const seen = { '@hook_created': { held: hooked.keysHeld.hook_created }, '@function_ns': { held: hooked.keysHeld.function_ns } };
    assert.deepStrictEqual(mapFullLines(boundedMaps(65536, { stacks: true, hook: true }), seen), []);
    assert.deepStrictEqual(mapFullLines(boundedMaps(7, { stacks: false, hook: true }), seen), [
      'warning: the tracer\'s map of the register hook\'s kinds, by thread (@hook_created) filled at 7 keys: more were not kept, the resources of the kinds past it were not counted; raise the bound with NODETRACE_MAP_KEYS=N (now 7)',
      'warning: the tracer\'s map of functions called back, by kind (@function_ns) filled at 7 keys: more were not kept, the callbacks of the functions past it were not counted by function; raise the bound with NODETRACE_MAP_KEYS=N (now 7)',
    ]);
    assert.deepStrictEqual(boundedMaps(65536, { stacks: true, hook: false }).map((b) => b.map), ['@born', '@js_sfi', '@function_ns', '@thread_created']);
    // The operations by thread and kind (a capture with the maps: 5 keys, two threads).
    const byThread = parseAsync(splitAtEndMarker(fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-async-worker-threads.out'), 'utf8').split('\n')),
      { providers: PROVIDERS[20], hook: true });
    const held = { '@thread_created': { held: byThread.keysHeld.thread_created } };
    assert.deepStrictEqual(mapFullLines(boundedMaps(6, { stacks: false, hook: true }), held), []);
    assert.deepStrictEqual(mapFullLines(boundedMaps(5, { stacks: false, hook: true }), held), [
      'warning: the tracer\'s map of operations by thread and kind (@thread_created) filled at 5 keys: more were not kept, the operations past it were not counted by thread; raise the bound with NODETRACE_MAP_KEYS=N (now 5)',
    ]);
  });
});

describe('nodetrace async: the report', function () {
  const result = splitAtEndMarker(fs.readFileSync(FIXTURE, 'utf8').split('\n'));
  const r = parseAsync(result, { providers: PROVIDERS[20] });
  const kind = (name) => r.kinds.find((k) => k.name === name);

  it('counts each kind the target did 100 of (and the 10 HTTP requests), by name', function () {
    for (const name of ['FSREQCALLBACK', 'GETADDRINFOREQWRAP', 'ZLIB', 'PBKDF2REQUEST']) assert.strictEqual(kind(name).created, 100n, name);
    assert.strictEqual(kind('PBKDF2REQUEST').callbacks, 100n);
    assert.strictEqual(kind('ZLIB').callbacks, 200n, 'a gzip stream calls back for its write and its end');
    assert.strictEqual(kind('TCPWRAP').created, 10n);
    assert.strictEqual(kind('HTTPINCOMINGMESSAGE').created, 10n);
    assert.strictEqual(kind('FSREQCALLBACK').alive, 0n);
    assert.strictEqual(kind('ZLIB').alive, 16n, 'gzip streams not yet collected');
    assert.strictEqual(r.samples, 11);
    assert(r.loopBusyNs > 0n);
  });

  it('orders kinds by loop time and keeps every histogram whole', function () {
    for (let i = 1; i < r.kinds.length; i++) assert(r.kinds[i - 1].loopCallbackNs >= r.kinds[i].loopCallbackNs);
    const fsKind = kind('FSREQCALLBACK');
    assert.strictEqual(fsKind.callback.buckets.reduce((n, b) => n + b.count, 0n), 100n);
    assert.strictEqual(fsKind.wait.buckets.reduce((n, b) => n + b.count, 0n), 100n);
  });

  it('calls growing only what rose through the trace', function () {
    assert.strictEqual(isGrowing([0, 2, 4, 6, 8, 10, 12, 14]), true, 'a steady leak');
    assert.strictEqual(isGrowing([0, 10, 10, 10, 10, 10, 10, 10]), false, 'a plateau');
    assert.strictEqual(isGrowing([0, 5, 0, 5, 0, 5, 0, 5]), false, 'churn');
    assert.strictEqual(isGrowing([1, 2, 3]), false, 'too short');
    assert(!r.kinds.some((k) => k.growing), 'nothing leaks in the fixture');
  });

  it('keeps each kind\'s callback functions, most time first, named or by address', function () {
    const maps = [
      '@function_ns[46, 1000]: 5000', '@function_ns[46, 2000]: 90000', '@function_ns[8, 0]: 10',
      '@function_calls[46, 1000]: 3', '@function_calls[46, 2000]: 1', '@function_calls[8, 0]: 2',
      '@created[46]: 4', '@created[8]: 2',
    ].join('\n') + '\n';
    const withFns = parseAsync({ during: [], maps }, { providers: PROVIDERS[20] });
    const pb = withFns.kinds.find((k) => k.name === 'PBKDF2REQUEST');
    assert.deepStrictEqual(pb.functions.map((f) => [f.sfi, f.ns, f.calls]), [['2000', 90000n, 1n], ['1000', 5000n, 3n]]);
    assert.deepStrictEqual(functionAddresses(withFns).sort(), ['1000', '2000'], 'an SFI not read (0) is not named');
    assert.strictEqual(pb.callbackTotalNs, 95000n, 'every thread\'s callback time: the sum over its functions');
    pb.functions[0].name = 'job.ondone (node:internal/crypto/pbkdf2:52:16)';
    const text = renderAsyncText(withFns, { pid: 1 });
    assert.match(text, /PBKDF2REQUEST +90 us +1 calls +job\.ondone \(node:internal\/crypto\/pbkdf2:52:16\)/);
    assert.match(text, /5 us +3 calls +\(function at 0x3e8\)/);
    assert.match(text, /\(function not read\)/);
    const json = JSON.parse(renderAsyncJSON(withFns, { pid: 1, tracer: 'bpftrace' }));
    assert.deepStrictEqual(json.kinds.find((k) => k.provider === 46).callback.functions[1],
      { function: null, address: '0x3e8', calls: 3, total_ns: 5000 });
  });

  it('renders text and JSON; an unknown provider as its number', function () {
    const text = renderAsyncText(r, { pid: 1562, version: '20.20.2' });
    assert.match(text, /^Asynchronous operations of PID 1562 \(Node v20\.20\.2\)/);
    assert.match(text, /\nFSREQCALLBACK +\S+ +100 /);
    assert.match(text, /No kind is growing\./);
    const json = JSON.parse(renderAsyncJSON(r, { pid: 1562, tracer: 'bpftrace', version: '20.20.2' }));
    const fsKind = json.kinds.find((k) => k.name === 'FSREQCALLBACK');
    assert.strictEqual(fsKind.created, 100);
    assert.strictEqual(fsKind.provider, 8);
    assert(fsKind.callback.p50_us <= fsKind.callback.p99_us);
    const unnamed = parseAsync(result, { providers: null });
    assert(unnamed.kinds.some((k) => k.name === 'provider 8'));
    assert.match(renderAsyncText(unnamed, { pid: 1, top: 3 }), /\.\.\. 6 more kinds \(--top 9 shows all\)/);
  });
});

describe('nodetrace async on DTrace: async.d\'s output', function () {
  // test/fixtures/dtrace-async-mix.out: the same target and rounds as the
  // bpftrace fixture (how made: its .cmd).
  const result = splitAtEndMarker(fs.readFileSync(path.join(__dirname, 'fixtures', 'dtrace-async-mix.out'), 'utf8').split('\n'));
  const r = parseAsync(result, { providers: PROVIDERS[20], tracer: 'dtrace' });
  const kind = (name) => r.kinds.find((k) => k.name === name);

  it('counts each kind the target did 100 of (and the 10 HTTP requests), histograms whole', function () {
    for (const name of ['FSREQCALLBACK', 'GETADDRINFOREQWRAP', 'ZLIB', 'PBKDF2REQUEST']) assert.strictEqual(kind(name).created, 100n, name);
    assert.strictEqual(kind('ZLIB').callbacks, 200n);
    assert.strictEqual(kind('TCPWRAP').created, 10n);
    assert.strictEqual(kind('HTTPINCOMINGMESSAGE').created, 10n);
    assert.strictEqual(kind('FSREQCALLBACK').alive, 0n);
    assert.strictEqual(kind('FSREQCALLBACK').callback.buckets.reduce((n, b) => n + b.count, 0n), 100n);
    assert.strictEqual(kind('FSREQCALLBACK').wait.buckets.reduce((n, b) => n + b.count, 0n), 100n);
    assert(kind('FSREQCALLBACK').waitMaxUs > 0n && r.loopBusyNs > 0n && r.tracedNs > 0n);
  });

  it('keeps one function per kind, by a whole SFI (48 bits), and its calls', function () {
    const fsKind = kind('FSREQCALLBACK');
    assert.strictEqual(fsKind.functions.length, 1);
    assert.strictEqual(fsKind.functions[0].calls, 100n);
    assert(BigInt(fsKind.functions[0].sfi) > 0xffffffffn, `SFI ${fsKind.functions[0].sfi}: not cut to 32 bits`);
  });

  it('takes one sample a second: a second printed twice (two CPUs at once) counts once', function () {
    assert.deepStrictEqual(result.during.filter((l) => /^ALIVE /.test(l)), ['ALIVE 1098', 'ALIVE 2098', 'ALIVE 3070', 'ALIVE 4098', 'ALIVE 5098', 'ALIVE 5098']);
    assert.strictEqual(r.samples, 5);
    assert.deepStrictEqual(kind('ZLIB').series, [0, 0, 4, 4, 4]);
  });

  it('names the functions every build has as lib/async/wrap-functions.js does; AsyncReset is a slot', function () {
    const text = fs.readFileSync(path.join(__dirname, '..', 'd-scripts', 'async.d'), 'utf8');
    for (const role of ['CALLBACK', 'DESTROY', 'DTOR', 'DELETING_DTOR']) assert.ok(text.includes(`pid$1::${FUNCTIONS[role]}:`), role);
    assert.match(text, /^pid\$1::ASYNC_RESET:entry$/m);
  });
});

describe('nodetrace async with the register hook: the kinds that are not AsyncWraps', function () {
  // The target (test/targets/async-hook-mix.js, -r register) did 50 rounds
  // and said so: Timeout 50, Immediate 50, promises 102 (51 then()
  // callbacks: one made in the first read's callback, busy 20 ms),
  // NodetraceJob 50, fs.read 50 (an AsyncWrap: the uprobes').
  const HOOK_FIXTURE = path.join(__dirname, 'fixtures', 'bpftrace-async-hook.out');
  const FORGED = 'Y\n@created[1]: 4242424242';
  const result = splitAtEndMarker(fs.readFileSync(HOOK_FIXTURE, 'utf8').split('\n'));
  const r = parseAsync(result, { providers: PROVIDERS[20], hook: true });
  const kind = (name) => r.kinds.filter((k) => k.name === name);

  it('names the hook\'s kinds by their types, beside the AsyncWraps, each once', function () {
    const one = (name, source) => {
      const found = kind(name);
      assert.strictEqual(found.length, 1, `${name}: ${found.length} kinds`);
      assert.strictEqual(found[0].source, source, name);
      return found[0];
    };
    for (const name of ['Timeout', 'Immediate', 'NodetraceJob']) {
      const k = one(name, 'async_hooks');
      assert.deepStrictEqual([k.created, k.callbacks, k.destroyed], [50n, 50n, 50n], name);
      assert.strictEqual(totalCount(k.wait), 50n, `${name}: each waited once`);
    }
    const promise = one('PROMISE', 'async_hooks');
    assert.deepStrictEqual([promise.created, promise.callbacks], [102n, 51n]);
    const fsKind = one('FSREQCALLBACK', 'AsyncWrap');
    assert.deepStrictEqual([fsKind.number, fsKind.created, fsKind.callbacks], [8, 50n, 50n]);
    // The promise's 20 ms in a read's callback are PROMISE's, not the read's.
    assert(promise.callbackMaxUs >= 19000n && fsKind.callbackMaxUs < 10000n, `${promise.callbackMaxUs} ${fsKind.callbackMaxUs}`);
    assert.deepStrictEqual(kind('Immediate')[0].functions, [], 'the hook reads no function');
    // The Immediate that busy-waited 20 ms (by Date.now(), whole
    // milliseconds: 19 and a bit at least) is its kind's max.
    assert(kind('Immediate')[0].callbackMaxUs >= 19000n);
    assert.strictEqual(r.hook, true);
  });

  it('takes a type that looks like a map line as a name, and nothing out of it (35.8)', function () {
    // The target also ran 50 AsyncResources of the type FORGED: once printed
    // by bpftrace as text, `@created[1]: 4242424242` became a DIRHANDLE row.
    const forged = kind(FORGED);
    assert.strictEqual(forged.length, 1);
    assert.deepStrictEqual([forged[0].source, forged[0].created, forged[0].callbacks, forged[0].destroyed], ['async_hooks', 50n, 50n, 50n]);
    assert.deepStrictEqual(r.kinds.filter((k) => k.source === 'AsyncWrap').map((k) => k.name).sort(), ['FSREQCALLBACK', 'SIGNALWRAP']);
    assert(!r.kinds.some((k) => k.created === 4242424242n));
    // On one line of text, the line break shown; in JSON, the name as it is.
    const text = renderAsyncText(r, { pid: 1, version: '20.20.2' });
    assert.match(text, /\nY\\x0a@created\[1\]: 4242424242 +\S+ +50 /);
    assert.doesNotMatch(text, /^@created/m);
    const json = JSON.parse(renderAsyncJSON(r, { pid: 1, tracer: 'bpftrace', version: '20.20.2' }));
    assert.strictEqual(json.kinds.filter((k) => k.name === FORGED).length, 1);
  });

  it('says in text and JSON which kinds came through the hook', function () {
    // (The capture's target was PID 7515.)
    const text = renderAsyncText(r, { pid: 7515, version: '20.20.2' });
    assert.match(text, /\nTimeout +\S+ +50 /);
    assert.match(text, /callbacks \(AsyncWraps and the hook's kinds\)/);
    assert.match(text, /Through the register hook \(async_hooks in the main thread, on within 100 ms of the attach\): .*Timeout/);
    assert.doesNotMatch(text, /not counted here/);
    const json = JSON.parse(renderAsyncJSON(r, { pid: 1, tracer: 'bpftrace', version: '20.20.2' }));
    assert.strictEqual(json.hook, true);
    const timeout = json.kinds.find((k) => k.name === 'Timeout');
    assert.deepStrictEqual([timeout.provider, timeout.source, timeout.created, timeout.threads], [null, 'async_hooks', 50, 1]);
    assert.deepStrictEqual(json.kinds.find((k) => k.name === 'FSREQCALLBACK').source, 'AsyncWrap');
    assert.strictEqual(json.kinds.find((k) => k.name === 'FSREQCALLBACK').threads, null);
    // Without the hook the report says what it leaves out, and where to get it.
    const plain = renderAsyncText(parseAsync(splitAtEndMarker(fs.readFileSync(FIXTURE, 'utf8').split('\n')), { providers: PROVIDERS[20] }), { pid: 1 });
    assert.match(plain, /not counted here\n\(node -r nodetrace\/register counts them/);
  });

  it('shows a type the process named as text, escaped; an unnamed kind by its number', function () {
    const maps = ['@created[32769]: 3', '@created[32770]: 1', '@created[8]: 1'].join('\n');
    const hostile = parseAsync({ during: [kindLine(32769, 'evil\x1b[2Jname')], maps }, { providers: PROVIDERS[20], hook: true });
    assert.deepStrictEqual(hostile.kinds.map((k) => k.name).sort(), ['FSREQCALLBACK', 'async_hooks type 2', 'evil\x1b[2Jname']);
    const text = renderAsyncText(hostile, { pid: 1 });
    assert(!text.includes('\x1b'), 'no escape reaches the terminal');
    assert.match(text, /evil\\x1b\[2Jname|evil.\[2Jname/);
  });

  // A worker's hook numbers its kinds apart: async.bt keys them by thread.
  // The target (test/targets/async-hook-worker.js) said what each thread did:
  // main (PID 8138) Timeout, Immediate, NodetraceJob 120 each; its worker
  // (thread 8648) the same 200 each and NodetraceWorkerJob 200, made in
  // another order (its kind 1 is NodetraceWorkerJob, the main thread's Timeout).
  const WORKER_FIXTURE = path.join(__dirname, 'fixtures', 'bpftrace-async-hook-worker.out');
  const workerRun = () => parseAsync(splitAtEndMarker(fs.readFileSync(WORKER_FIXTURE, 'utf8').split('\n')), { providers: PROVIDERS[20], hook: true });

  it('counts a type over every thread\'s hook, one row, though each thread numbers it apart', function () {
    const w = workerRun();
    const rows = (name) => w.kinds.filter((k) => k.name === name);
    for (const name of ['Timeout', 'Immediate', 'NodetraceJob']) {
      assert.strictEqual(rows(name).length, 1, `${name} once`);
      const [k] = rows(name);
      assert.deepStrictEqual([k.source, k.created, k.callbacks, k.destroyed], ['async_hooks', 320n, 320n, 320n], name);
      assert.strictEqual(totalCount(k.wait), 320n, `${name}: each waited once, in either thread`);
      assert.deepStrictEqual(k.threads.slice().sort(), [8138, 8648], name);
      // The series add up: nothing alive at the end in either thread.
      assert.strictEqual(k.series[k.series.length - 1], 0, name);
    }
    const [workerOnly] = rows('NodetraceWorkerJob');
    assert.deepStrictEqual([workerOnly.created, workerOnly.callbacks, workerOnly.threads], [200n, 200n, [8648]]);
    // The worker's callbacks are not the main thread's loop time.
    assert.strictEqual(workerOnly.loopCallbackNs, 0n);
    const text = renderAsyncText(w, { pid: 8138, version: '20.20.2' });
    assert.match(text, /\nTimeout +\S+ +320 /);
    assert.match(text, /Through the register hook \(async_hooks in the main thread and 1 worker thread, on within 100 ms of the attach\)/);
    // Given another PID, neither thread is its main one: two workers.
    assert.match(renderAsyncText(w, { pid: 1, version: '20.20.2' }), /\(async_hooks in 2 worker threads, on within/);
    const json = JSON.parse(renderAsyncJSON(w, { pid: 8138, tracer: 'bpftrace', version: '20.20.2' }));
    const timeout = json.kinds.find((k) => k.name === 'Timeout');
    assert.deepStrictEqual([timeout.created, timeout.threads, timeout.provider], [320, 2, null]);
    assert.strictEqual(timeout.wait.histogram.reduce((n, b) => n + b.count, 0), 320);
  });

  // Issue 36: each thread's own operations. The target said what each
  // thread did and what its own async_hooks init hook saw created over its
  // rounds (test/fixtures/bpftrace-async-worker-threads.out.cmd): main (PID
  // 19864) FSREQCALLBACK 120 and Timeout, Immediate, NodetraceJob 120 each;
  // its Worker (threadId 1, TID 20193) FSREQCALLBACK 200 and the same 200
  // each, and NodetraceWorkerJob 200.
  const THREADS_FIXTURE = path.join(__dirname, 'fixtures', 'bpftrace-async-worker-threads.out');
  const threadsRun = () => parseAsync(splitAtEndMarker(fs.readFileSync(THREADS_FIXTURE, 'utf8').split('\n')), { providers: PROVIDERS[20], hook: true });
  const identities = new Map([[19864, { tid: 19864, role: 'main' }], [20193, { tid: 20193, role: 'worker', worker: { threadId: 1, name: null } }]]);
  const identityOf = (tid) => identities.get(tid) || null;

  it('tells each thread\'s operations apart, as each thread counted them itself', function () {
    const r = threadsRun();
    const own = (tid) => Object.fromEntries(r.threads.find((t) => t.tid === tid).kinds.map((k) => [`${k.source}:${k.name}`, Number(k.created)]));
    assert.deepStrictEqual(r.threads.map((t) => t.tid), [20193, 19864], 'most created first');
    const main = own(19864);
    const worker = own(20193);
    assert.strictEqual(main['AsyncWrap:FSREQCALLBACK'], 120);
    assert.strictEqual(worker['AsyncWrap:FSREQCALLBACK'], 200);
    for (const name of ['Timeout', 'Immediate', 'NodetraceJob']) {
      assert.deepStrictEqual([main[`async_hooks:${name}`], worker[`async_hooks:${name}`]], [120, 200], name);
    }
    assert.deepStrictEqual([main['async_hooks:NodetraceWorkerJob'], worker['async_hooks:NodetraceWorkerJob']], [undefined, 200]);
    // The threads together are the kinds, created and called back.
    for (const k of r.kinds) {
      const sum = (f) => r.threads.reduce((n, t) => n + t.kinds
        .filter((x) => x.name === k.name && x.source === k.source).reduce((m, x) => m + x[f], 0n), 0n);
      assert.deepStrictEqual([sum('created'), sum('callbacks')], [k.created, k.callbacks], k.name);
    }
    const json = JSON.parse(renderAsyncJSON(r, { pid: 19864, tracer: 'bpftrace', version: '20.20.2', identityOf }));
    const shown = json.threads.map(({ tid, role, label, worker: w, created }) => ({ tid, role, label, w, created }));
    assert.deepStrictEqual(shown, [
      { tid: 20193, role: 'worker', label: 'Worker 1', w: { thread_id: 1, name: null }, created: 1003 },
      { tid: 19864, role: 'main', label: 'main thread', w: undefined, created: 486 },
    ]);
    const text = renderAsyncText(r, { pid: 19864, version: '20.20.2', identityOf });
    assert.match(text, /^ {2}Worker 1 \(TID 20193\) {2}1,003 created, 1,003 callbacks: FSREQCALLBACK 200, /m);
    assert.match(text, /^ {2}main thread {11}486 created, 486 callbacks: FSREQCALLBACK 120, /m);
  });

  it('says no thread apart where only the main thread worked, and null for a capture older than the maps', function () {
    const main = parseAsync({ during: [], maps: '@created[8]: 3\n@callbacks[8]: 3\n@thread_created[42, 8]: 3\n@thread_callbacks[42, 8]: 3' }, { providers: PROVIDERS[20] });
    assert.deepStrictEqual(main.threads.map((t) => [t.tid, t.created, t.callbacks]), [[42, 3n, 3n]]);
    assert.doesNotMatch(renderAsyncText(main, { pid: 42 }), /By the thread/);
    const older = parseAsync({ during: [], maps: '@created[8]: 3' }, { providers: PROVIDERS[20] });
    assert.strictEqual(older.threads, null);
    assert.strictEqual(JSON.parse(renderAsyncJSON(older, { pid: 42, tracer: 'bpftrace' })).threads, null);
    // A thread that exited: by its TID, no role.
    const gone = JSON.parse(renderAsyncJSON(main, { pid: 1, tracer: 'bpftrace' })).threads;
    assert.deepStrictEqual(gone, [{ tid: 42, role: null, label: null, created: 3, callbacks: 3,
      kinds: [{ name: 'FSREQCALLBACK', source: 'AsyncWrap', provider: 8, created: 3, callbacks: 3 }] }]);
    // In text, a thread looked up and gone is said so; one never looked up
    // (`format` of a capture: no identityOf) is named by its TID alone.
    const other = parseAsync({ during: [], maps: '@created[8]: 3\n@callbacks[8]: 3\n@thread_created[43, 8]: 3\n@thread_callbacks[43, 8]: 3' }, { providers: PROVIDERS[20] });
    assert.match(renderAsyncText(other, { pid: 42, identityOf: () => null }), /^ {2}a thread that exited \(TID 43\) {2}3 created/m);
    assert.match(renderAsyncText(other, { pid: 42 }), /^ {2}thread \(TID 43\) {2}3 created/m);
  });

  it('merges hook kinds by name, never by number; an unnamed one stays its thread\'s', function () {
    // Thread 7's kind 1 is Timeout, thread 9's kind 1 is Job; thread 9's kind 2 is not named.
    const key = (tid, kind) => String(tid * 65536 + 32768 + kind);
    const during = [kindLine(key(7, 1), 'Timeout'), kindLine(key(9, 1), 'Job')];
    const maps = [
      // A KIND line of another CPU may come after END's: among the maps.
      kindLine(key(9, 3), 'Timeout'),
      `@hook_created[${key(7, 1)}]: 5`, `@hook_created[${key(9, 1)}]: 4`, `@hook_created[${key(9, 3)}]: 2`, `@hook_created[${key(9, 2)}]: 1`,
      `@callback_max_us[${key(7, 1)}]: 10`, `@callback_max_us[${key(9, 3)}]: 30`,
      '@created[8]: 1',
    ].join('\n');
    const m = parseAsync({ during, maps }, { providers: PROVIDERS[20], hook: true });
    const byName = Object.fromEntries(m.kinds.map((k) => [k.name, [k.created, k.callbackMaxUs]]));
    assert.deepStrictEqual(byName, {
      Timeout: [7n, 30n], Job: [4n, null], 'async_hooks type 2 (thread 9)': [1n, null], FSREQCALLBACK: [1n, null],
    });
  });
});

describe('nodetrace async --stacks: where the live operations were created', function () {
  // The target opened 12 loopback connections and never closed them (both
  // ends are TCPWRAPs: 24 alive), and read its file 12 times (all ended).
  const lines = fs.readFileSync(STACKS_FIXTURE, 'utf8').split('\n');
  const parse = () => parseAsync(splitAtEndMarker(lines), { providers: PROVIDERS[20], stacks: true });
  const kind = (r, name) => r.kinds.find((k) => k.name === name);

  it('keeps each live operation by kind and raw stack; the released ones have none', function () {
    const r = parse();
    const tcp = r.liveStacks.filter((g) => g.kind === String(kind(r, 'TCPWRAP').number));
    assert.strictEqual(tcp.reduce((n, g) => n + g.count, 0), 24);
    assert.strictEqual(kind(r, 'TCPWRAP').alive, 24n);
    assert.strictEqual(r.liveStacks.reduce((n, g) => n + g.count, 0), 24, 'nothing alive but the connections');
    assert.strictEqual(kind(r, 'FSREQCALLBACK').created, 12n);
    // The client ends were created from JavaScript (a chain of SFIs), the
    // server ends from node's accept (none); every frame an address.
    const fromJs = tcp.filter((g) => g.stack.chain).reduce((n, g) => n + g.count, 0);
    assert.strictEqual(fromJs, 12);
    for (const g of tcp) assert(g.stack.frames.length > 3 && g.stack.frames.every((f) => /^0x[0-9a-f]+$/.test(f)), g.stack.frames.join(' '));
    // The other maps are read as before, the live ones kept out of them.
    assert(r.kinds.every((k) => k.number >= 0) && r.samples >= 4);
  });

  it('reads 0.27\'s raw stacks (bare hex, ending in 0) the same way', function () {
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-0.27-async-stacks.out'), 'utf8');
    const r = parseAsync(splitAtEndMarker(text.split('\n')), { providers: PROVIDERS[20], stacks: true });
    const tcp = r.liveStacks.filter((g) => g.kind === String(kind(r, 'TCPWRAP').number));
    assert.strictEqual(tcp.reduce((n, g) => n + g.count, 0), 24);
    assert.strictEqual(tcp.filter((g) => g.stack.chain).reduce((n, g) => n + g.count, 0), 12);
    for (const g of tcp) assert(g.stack.frames.length > 3 && g.stack.frames.every((f) => /^0x[0-9a-f]+$/.test(f)), g.stack.frames.join(' '));
    assert.strictEqual(kind(r, 'FSREQCALLBACK').created, 12n);
  });

  it('counts the operations whose creation stack bpftrace 0.17 lost as "[no stack]", and says them once (real capture)', function () {
    // test/fixtures/bpftrace-async-no-ustack-0.17.out(.cmd): 1,004 operations alive
    // from 1,000 distinct stacks; two stacks lost, each printed as its key
    // alone, the next entry's key on the same line.
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-async-no-ustack-0.17.out'), 'utf8');
    const r = parseAsync(splitAtEndMarker(text.split('\n')), { providers: PROVIDERS[20], stacks: true });
    const printed = (text.match(/^@live_kind\[/gm) || []).length;
    assert.strictEqual(r.liveStacks.reduce((n, g) => n + g.count, 0), printed, 'every live operation kept, the lost ones too');
    assert.strictEqual(lostLiveStacks(r.liveStacks), 2);
    assert.strictEqual(kind(r, 'FSREQCALLBACK').alive, 1000n);
    assert.strictEqual(kind(r, 'PBKDF2REQUEST').alive, 4n);
    // The entry after a lost one on its line keeps its frames.
    for (const g of r.liveStacks.filter((x) => !x.lost)) assert(g.stack.frames.length > 3 && g.stack.frames.every((f) => /^0x[0-9a-f]+$/.test(f)), g.stack.frames.join(' '));
    assert.strictEqual(r.liveStacks.filter((g) => !g.lost).reduce((n, g) => n + g.count, 0), (text.match(/@live_stack\[\d+\]: *$/gm) || []).length);
    groupLiveStacks(r);
    const fsLive = kind(r, 'FSREQCALLBACK').live;
    assert.strictEqual(fsLive.tracked, 1000);
    assert.deepStrictEqual(fsLive.stacks.filter((st) => st.frames[0] === '[no stack]').map((st) => [st.count, st.frames.length]), [[2, 1]]);
    assert.match(renderAsyncText(r, { pid: 1 }), /\n +2 {2}\[no stack\]\n/);
    assert.strictEqual(lostLiveStacks(parse().liveStacks), 0, 'the other capture lost none');
    // Declared where bpftrace keeps stacks in a map of its own, said once.
    const { boundedMaps } = require('../lib/commands/async');
    const tracer = (version) => ({ name: 'bpftrace', path: '/usr/bin/bpftrace', version });
    const planned = (version, stacks = true) => boundedMaps(65536, { stacks, hook: false, tracer: tracer(version) });
    assert.deepStrictEqual(mapFullLines(planned('0.17.0'), { ustack: { refused: 2 } }), [
      'warning: 2 operations had no user stack: the tracer lost them from its map of stacks (131,072 places: it keeps no stack '
      + 'whose place another holds); they are counted, as "[no stack]"; trace for less time, '
      + 'or use bpftrace 0.25 or later, which keeps each stack with its sample']);
    assert.deepStrictEqual(mapFullLines(planned('0.17.0'), { ustack: { refused: 0 } }), []);
    assert(!planned('0.27.1').some((b) => b.map === 'ustack'), 'nothing to lose from 0.25');
    assert(!planned('0.17.0', false).some((b) => b.map === 'ustack'), 'no stacks, no stack map');
  });

  it('groups stacks that name alike, keeps the most per kind, counts the rest', function () {
    const r = parse();
    // Named (here: each raw stack by its first distinct frames), some alike.
    for (const g of r.liveStacks) g.stack = { frames: [g.stack.chain ? 'openLeakedConnection app.js:1:1' : 'node::TCPWrap::New+1', 'x+0'] };
    groupLiveStacks(r);
    const live = kind(r, 'TCPWRAP').live;
    assert.deepStrictEqual(live.stacks.map((s) => s.count), [12, 12]);
    assert.strictEqual(live.tracked, 24);
    assert.strictEqual(kind(r, 'FSREQCALLBACK').live.tracked, 0);
    const text = renderAsyncText(r, { pid: 1 });
    assert.match(text, /TCPWRAP +24 alive\n/);
    assert.match(text, /\n +12 {2}openLeakedConnection app\.js:1:1\n/);
    const json = JSON.parse(renderAsyncJSON(r, { pid: 1, tracer: 'bpftrace' }));
    assert.deepStrictEqual(json.live_stacks_kept.per_kind, STACKS_PER_KIND);
    const tcp = json.kinds.find((k) => k.name === 'TCPWRAP').live_stacks;
    assert.strictEqual(tcp.alive, 24);
    assert.deepStrictEqual(tcp.stacks[0].frames.length, 2);
    // Past STACKS_PER_KIND distinct stacks: counted, said.
    const many = parse();
    many.liveStacks.forEach((g, i) => { g.stack = { frames: [`f${i}+0`] }; });
    groupLiveStacks(many);
    const m = kind(many, 'TCPWRAP').live;
    assert.strictEqual(m.stacks.length, Math.min(STACKS_PER_KIND, many.liveStacks.length));
    assert.strictEqual(m.stacks.reduce((n, s) => n + s.count, 0) + m.otherCount, 24);
    assert.strictEqual(m.stacks.length + m.otherStacks, many.liveStacks.length);
  });

  it('text: from the first JavaScript frame, or past the constructors; stacks that show alike are one', function () {
    const native = ['node::AsyncWrap::AsyncReset(v8::Local<v8::Object>, double, bool)+0',
      'node::HandleWrap::HandleWrap(node::Environment*, v8::Local<v8::Object>, uv_handle_s*, node::AsyncWrap::ProviderType)+44',
      'node::ConnectionWrap<node::TCPWrap, uv_tcp_s>::ConnectionWrap(node::Environment*, v8::Local<v8::Object>, node::AsyncWrap::ProviderType)+27',
      'node::TCPWrap::New(v8::FunctionCallbackInfo<v8::Value> const&)+235', 'node::TCPWrap::Instantiate(node::Environment*, node::AsyncWrap*, node::TCPWrap::SocketType)+128'];
    const js = [...native, 'Socket.connect node:net:1202:36', 'openLeakedConnection /app/leak.js:93:30'];
    const r = parse();
    r.liveStacks = r.liveStacks.map((g, i) => ({ ...g, stack: { frames: g.stack.chain ? (i % 2 ? js : ['Builtins_JSBuiltinsConstructStub+207', ...js]) : native } }));
    groupLiveStacks(r);
    const text = renderAsyncText(r, { pid: 1 });
    assert.match(text, /\n +12 {2}\(node's and V8's own frames above this one: --json has them\)\n +Socket\.connect node:net:1202:36\n +openLeakedConnection \/app\/leak\.js:93:30\n/);
    assert.match(text, /\n +12 {2}\(node's and V8's own frames above this one: --json has them\)\n +node::TCPWrap::New\(/);
    assert.doesNotMatch(text, /more stack/);
  });

  it('without --stacks: no live stacks, in text or JSON', function () {
    const r = parseAsync(splitAtEndMarker(lines), { providers: PROVIDERS[20] });
    groupLiveStacks(r);
    assert.strictEqual(r.liveStacks, null);
    assert.doesNotMatch(renderAsyncText(r, { pid: 1 }), /creation stack/);
    const json = JSON.parse(renderAsyncJSON(r, { pid: 1, tracer: 'bpftrace' }));
    assert(!('live_stacks_kept' in json) && json.kinds.every((k) => !('live_stacks' in k)));
  });
});
