'use strict';
// lib/v8/inlining.js on real memory: what an optimized arrow function's code
// inlined where it ran, read from fixtures captured on Node 18, 20 and 22
// (test/fixtures/v8-inlining-*.json, with how each was made), and the
// decoding of V8's source position tables and what bounds it.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { layoutFrom } = require('../lib/v8/metadata');
const { SnapshotMemory } = require('../lib/v8/memory');
const { V8Namer } = require('../lib/v8/namer');
const { InliningReader, inliningLayout, inlinedAt, decodePositionTable } = require('../lib/v8/inlining');
const { lastAtOrBelow } = require('../lib/sorted');
const { SampleNames } = require('../lib/profile/js-frames');
const { nameStacks } = require('../lib/profile/name-stacks');
const { parseProfile } = require('../lib/profile/parse');
const { frameLines, renderStacksJson } = require('../lib/stack/render');
const { inliningLine } = require('../lib/profile/report');

const FIXTURES = path.join(__dirname, 'fixtures');
const load = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

function open(fx) {
  const layout = layoutFrom(fx.symbols);
  const namer = new V8Namer({ memory: new SnapshotMemory(fx), layout });
  return new InliningReader({ heap: namer.heap, layout, symbols: fx.symbols, namer, dispatch: fx.dispatch || null });
}
// The thread pointer the fixture's frame ran on (V8 14: where its isolate's table is).
const fsBaseOf = (fx) => (fx.fsBase ? parseInt(fx.fsBase, 16) : null);

// V8's encoding, for hand-made tables: zigzag, then 7 bits a byte.
function vlq(n) {
  let v = BigInt.asUintN(64, (BigInt(n) << 1n) ^ (BigInt(n) < 0n ? -1n : 0n));
  const out = [];
  do { let b = Number(v & 0x7fn); v >>= 7n; if (v) b |= 0x80; out.push(b); } while (v);
  return out;
}
const position = (offset, inlining) => (BigInt(inlining + 1) << 31n) | (BigInt(offset + 1) << 1n);

describe('V8 inlining: what optimized code inlined where it ran (lib/v8/inlining.js)', function () {
  it('knows where V8 10.2 to 14.6 keep a function\'s code (13 and 14: its dispatch handle), and says in one line why not without the table\'s place', function () {
    const expected = { node18: 48, host: 48, node22: 24, debian18: 48 };
    for (const [label, code] of Object.entries(expected)) {
      const fx = load(`v8-frames-${label}.json`);
      assert.strictEqual(inliningLayout(layoutFrom(fx.symbols), fx.symbols).code, code, label);
    }
    for (const label of ['node24', 'node26']) {
      const fx = load(`v8-inlining-${label}.json`);
      const l = inliningLayout(layoutFrom(fx.symbols), fx.symbols, { dispatch: fx.dispatch });
      assert.strictEqual(l.code, 24, label);
      assert.strictEqual(l.handle, true, label);
      // Where the metadata gives the Code's fields, the measured table agrees.
      assert.deepStrictEqual([l.start.field, l.size, l.flags],
        [fx.symbols.v8dbg_class_Code__instruction_start__Address, fx.symbols.v8dbg_class_Code__instruction_size__int,
          fx.symbols.v8dbg_class_Code__flags__uint32_t], label);
      assert.match(inliningLayout(layoutFrom(fx.symbols), fx.symbols).unsupported,
        /^V8 1[34]\.\d+\.\d+\.\d+ \(its functions hold a handle into its dispatch table, not their code, and where that table is was not read\): a function its optimizing compiler inlined is counted as its caller$/);
      assert.match(inliningLayout(layoutFrom(fx.symbols), fx.symbols, { dispatch: { unsupported: 'its binary keeps no symbol for js_dispatch_table_address (stripped)' } }).unsupported,
        /not their code, and its binary keeps no symbol for js_dispatch_table_address \(stripped\)\): a function/);
    }
    const fx = load('v8-frames-node22.json');
    const future = { ...layoutFrom(fx.symbols), version: { major: 12, minor: 9 }, versionText: '12.9.1.1' };
    assert.match(inliningLayout(future, fx.symbols).unsupported,
      /^V8 12\.9\.1\.1 \(nodetrace has not measured where its code keeps them\)/);
  });

  for (const label of ['node18', 'host', 'node22', 'node24', 'node26']) {
    it(`${label}: names the function inlined at the sampled pc of step's code, at its own line:column, the code checked to be step's`, function () {
      const fx = load(`v8-inlining-${label}.json`);
      const reader = open(fx);
      const record = reader.describe(reader.codeOf(BigInt('0x' + fx.function), { fsBase: fsBaseOf(fx) }));
      assert(record, 'step\'s code is read');
      assert.strictEqual(record.shared, BigInt('0x' + fx.sfi), 'the code is the function\'s own');
      // Every entry of the position table lies in the code (V8 14 writes
      // code offsets shifted left by two flags: read as 13's, they ran to
      // 1,029 in step's 596 bytes).
      assert(record.offsets.length > 10 && record.offsets.every((o) => o >= 0 && o < record.end - record.start), `${record.offsets}`);
      // scale, mix and clampTo, each inlined once into step.
      const names = record.inlined.map((x) => x.name && x.name.name).sort();
      assert.deepStrictEqual(names, ['clampTo', 'mix', 'scale']);
      assert(record.inlined.every((x) => x.parent === -1), 'each inlined into step itself');
      const pc = BigInt('0x' + fx.made.pc);
      const at = inlinedAt(record, pc);
      assert.deepStrictEqual(at.map((r) => r.text), fx.made.inlined);
      assert.match(at[0].text, /^(scale|mix|clampTo) \(.*profile-inline\.js:(10:15|14:13|18:17)\)$/);
      // Not in this code: not known (never another function's inlining).
      assert.strictEqual(inlinedAt(record, BigInt(record.end) + 16n), null);
      assert.strictEqual(inlinedAt(record, BigInt(record.start) - 1n), null);
      // The code's first instruction is step's own (no inlining yet).
      assert.deepStrictEqual(inlinedAt(record, BigInt(record.start)), []);
      // Not code: a JSFunction word read as code, a Smi.
      assert.strictEqual(reader.describe(BigInt('0x' + fx.function)), null);
      assert.strictEqual(reader.describe(42n << 32n), null);
    });
  }

  it('decodes a source position table as V8 writes it: code offset and position deltas, a statement by the sign', function () {
    const bytes = Buffer.from([
      ...vlq(0), ...vlq(position(10, -1)),                                  // offset 0, statement, step's own
      ...vlq(-(20 - 0) - 1), ...vlq(position(30, 0) - position(10, -1)),     // offset 20, an expression, inlining 0
      ...vlq(100), ...vlq(position(40, 1) - position(30, 0)),                // offset 120, inlining 1
    ]);
    const t = decodePositionTable(bytes);
    assert.deepStrictEqual([...t.offsets], [0, 20, 120]);
    assert.deepStrictEqual([...t.inlinings], [-1, 0, 1]);
    assert.strictEqual(lastAtOrBelow(t.offsets, 19), 0);
    assert.strictEqual(lastAtOrBelow(t.offsets, 20), 1);
    assert.strictEqual(lastAtOrBelow(t.offsets, 5000), 2);
    // A return address: its call, one byte before, is what ran.
    const record = { start: 0x1000, end: 0x1100, offsets: t.offsets, inlinings: t.inlinings,
      inlined: [{ parent: -1, name: { text: 'outerInlined' } }, { parent: 0, name: { text: 'innerInlined' } }] };
    assert.deepStrictEqual(inlinedAt(record, 0x1000 + 120).map((r) => r.text), ['innerInlined', 'outerInlined']);
    assert.deepStrictEqual(inlinedAt(record, 0x1000 + 120, { returnAddress: true }).map((r) => r.text), ['outerInlined']);
    assert.deepStrictEqual(inlinedAt(record, 0x1000 + 20, { returnAddress: true }), []);
  });

  it('decodes V8 14\'s table: the code offset\'s delta unsigned, above two flag bits (a statement in bit 0)', function () {
    const unsigned = (n) => {
      const out = [];
      let v = BigInt(n);
      do { let b = Number(v & 0x7fn); v >>= 7n; if (v) b |= 0x80; out.push(b); } while (v);
      return out;
    };
    const bytes = Buffer.from([
      ...unsigned((12 << 2) | 2), ...vlq(position(10, -1)),                    // offset 12, an expression
      ...unsigned((14 << 2) | 3), ...vlq(position(30, 0) - position(10, -1)),  // offset 26, a statement
      ...unsigned((200 << 2) | 0), ...vlq(position(40, 1) - position(30, 0)),  // offset 226
    ]);
    const t = decodePositionTable(bytes, { flagBits: 2 });
    assert.deepStrictEqual([...t.offsets], [12, 26, 226]);
    assert.deepStrictEqual([...t.inlinings], [-1, 0, 1]);
    // The same bytes read as V8 13 writes them: offsets twice as far and more, past the code.
    assert.deepStrictEqual([...decodePositionTable(bytes).offsets], [25, 54, 454]);
  });

  it('a hostile table ends: a last byte that says more follows, a cycle of parents made by hand', function () {
    assert.strictEqual(decodePositionTable(Buffer.from([0x80, 0x80, 0x80])), null);
    assert.strictEqual(decodePositionTable(Buffer.alloc(12, 0xff)), null);
    const cyclic = { start: 0, end: 100, offsets: Int32Array.from([0]), inlinings: Int32Array.from([1]),
      inlined: [{ parent: 1, name: null }, { parent: 0, name: null }] };
    assert.strictEqual(inlinedAt(cyclic, 10).length, 2);
  });

  it('profile says once how inlined functions are shown: above their caller, where not (1% of the samples or more), or why never', function () {
    const summary = (inlining) => ({ samples: 200, categories: [{ category: 'js', samples: 150 }], jit: { v8: inlining === undefined ? null : { inlining } } });
    assert.strictEqual(inliningLine(summary({ read: true, shown: 90, unknown: 1, note: null })), 'A function V8\'s optimizing compiler inlined into its caller is shown above it in the stacks; its row says how much of it ran inlined ("(inlined)", "(40% inlined)").');
    assert.match(inliningLine(summary({ read: true, shown: 0, unknown: 150, note: null })),
      /ran inlined \("\(inlined\)", "\(40% inlined\)"\)\. Not in 75\.0% of the samples: there a frame ran optimized code that is not its function's own \(a loop V8 optimized while it ran, on-stack replacement; or code replaced since\)/);
    assert.strictEqual(inliningLine(summary({ read: false, shown: 0, unknown: 0, note: 'V8 14.6.202.34 (why): a function its optimizing compiler inlined is counted as its caller' })),
      'Not shown apart: V8 14.6.202.34 (why): a function its optimizing compiler inlined is counted as its caller.');
    assert.match(inliningLine(summary(undefined)), /is counted as that caller \(not shown apart\)\.$/, 'the perf map only');
    assert.strictEqual(inliningLine({ ...summary(undefined), categories: [{ category: 'node', samples: 200 }] }), null, 'no JavaScript ran');
  });

  it('a walked stack (ebadf\'s hit, nodetrace stack): the functions inlined above their frame, marked; in JSON with the frame', function () {
    const step = { kind: 'js', pc: 0x5000, text: 'step (/app/x.js:22:14)', name: 'step', file: '/app/x.js', line: 22, column: 14, jsKind: 'function', tier: 'compiled',
      inlined: [{ name: 'scale', file: '/app/x.js', line: 10, column: 15, text: 'scale (/app/x.js:10:15)' }, null] };
    assert.deepStrictEqual(frameLines([step]), ['scale (/app/x.js:10:15)  [JS, inlined]', '(unknown)  [JS, inlined]', 'step (/app/x.js:22:14)  [JS, compiled]']);
    const json = JSON.parse(renderStacksJson({ file: 'core', pid: 1, command: 'node', v8: '11.3', object: 'node', notes: [], threads: [{ tid: 1, ended: 'x', frames: [step] }] }));
    assert.deepStrictEqual(json.threads[0].frames[0].inlined, [{ name: 'scale', file: '/app/x.js', line: 10, column: 15, text: 'scale (/app/x.js:10:15)' }, null]);
  });

  it('profile: each frame\'s code read at its print, the functions inlined shown above the frame, marked, only where the code is the frame\'s function\'s', function () {
    const STEP = { name: 'step', file: '/app/x.js', line: 22, column: 14, kind: 'function', sfi: 0x1001 };
    const SCALE = { name: 'scale', file: '/app/x.js', line: 10, column: 15, kind: 'function', sfi: 0x2001 };
    const namer = { limitation: () => null, nameSfi: (w) => (w === 0x1001n ? STEP : null) };
    const record = { start: 0x50000000, end: 0x50001000, shared: 0x1001n, optimized: true,
      offsets: Int32Array.from([0, 0x100]), inlinings: Int32Array.from([-1, 0]),
      inlined: [{ parent: -1, name: SCALE }] };
    const reads = [];
    const inlining = { limitation: () => null,
      describe: (w) => { reads.push(w); return w === 0x7001n ? record : null; } };
    const names = new SampleNames(namer, { close() {} }, inlining);
    names.take('@js_sfi[5]: 4097');
    names.take('@js_code[5]: 28673');
    assert.deepStrictEqual(reads, [0x7001n], 'read as printed');
    // Printed again once the code is gone: what was read is kept.
    names.take('@js_code[5]: 28673');
    assert.deepStrictEqual(names.inlinedAt('5', 0, '0x50000200', { sfi: 0x1001 }).map((r) => r.name), ['scale']);
    assert.strictEqual(names.inlinedAt('5', 0, '0x50000200', { sfi: 0x3001 }), null, 'not the frame\'s function\'s code');
    assert.strictEqual(names.inlinedAt('5', 1, '0x50000200', { sfi: 0x1001 }), null, 'no frame at that depth');
    const parsed = parseProfile('@samples[42, node, \n, \n        0x50000200\n        0x401000\n, 5]: 7\n@threads[42, node]: 7\n', 'profile-js');
    const symbolizer = {
      symbolize: (snap, addrs) => ({
        frames: addrs.map((a) => (parseInt(a, 16) >= 0x50000000 ? { kind: 'jit', text: a, module: '[anon]' } : { kind: 'native', symbol: 'uv_run', offset: 1, text: 'uv_run+1', module: 'node' })),
        perfMapUsed: false,
      }),
    };
    const named = nameStacks(parsed, symbolizer, { maps: [] }, { js: names });
    // Inlined, a function keeps its own name (one row in the tables), marked.
    assert.deepStrictEqual(named.stacks[0].frames.map((f) => f.name), ['uv_run', 'step /app/x.js:22:14', 'scale /app/x.js:10:15']);
    assert.strictEqual(named.stacks[0].frames[2].inlined, true);
    assert.deepStrictEqual(named.v8.inlining, { read: true, shown: 7, unknown: 0, note: null });
    // A sample in generated code that is not the function's code now
    // (on-stack replacement, or replaced since): counted as not known.
    const osr = parseProfile('@samples[42, node, \n, \n        0x50002000\n        0x401000\n, 5]: 3\n@threads[42, node]: 3\n', 'profile-js');
    const unknown = nameStacks(osr, symbolizer, { maps: [] }, { js: names });
    assert.deepStrictEqual(unknown.stacks[0].frames.map((f) => f.name), ['uv_run', 'step /app/x.js:22:14']);
    assert.deepStrictEqual(unknown.v8.inlining, { read: true, shown: 0, unknown: 3, note: null });
  });
});
