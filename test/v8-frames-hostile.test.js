'use strict';
// The V8 frame namer reads another user's memory and files: what it finds
// there must not make it spin, read without bound, forge a frame or guess
// a name. Objects are laid out here by hand in a memory of our own, with
// the layout of a real build (node22's metadata, from its fixture); cores
// are written here as small ELF files.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { layoutFrom } = require('../lib/v8/metadata');
const { RangeMemory, ProcessMemory, MAX_READ } = require('../lib/v8/memory');
const { Heap } = require('../lib/v8/heap');
const { readString } = require('../lib/v8/strings');
const { V8Namer } = require('../lib/v8/namer');
const { walkStack } = require('../lib/v8/walk');
const { openCore } = require('../lib/v8/core-file');
const { openCoreForWalk } = require('../lib/v8/core');
const { safeName } = require('../lib/v8/names');
const { nameFromSource, ScriptReader, CHECKPOINT_BYTES } = require('../lib/v8/script');
const { MemoryBudget } = require('../lib/memory-budget');
const { LIMITS, setLimitSink } = require('../lib/limits');
const { UserError } = require('../lib/errors');

const SYMBOLS = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'v8-frames-node22.json'), 'utf8')).symbols;
const LAYOUT = layoutFrom(SYMBOLS);
const BASE = 0x10000000;
const ONE_BYTE_SEQ = 0x08;     // internalized, one-byte, sequential
const TWO_BYTE_SEQ = 0x00;     // internalized, two-byte, sequential
const ONE_BYTE_CONS = 0x29;    // cons (representation 1), one-byte

// A heap of our own: objects placed one after another in one range.
class FakeHeap {
  constructor(size = 1 << 20) {
    this.bytes = Buffer.alloc(size);
    this.next = 0;
    this.meta = this.alloc(16);
    this.put(this.meta, 0, this.meta + 1);
    this.bytes.writeUInt16LE(LAYOUT.types.map, this.meta - BASE + LAYOUT.map.instanceType);
    this.maps = new Map();
  }

  alloc(n) {
    const at = BASE + this.next;
    this.next += Math.ceil(n / 8) * 8;
    return at;
  }

  put(at, offset, value) {
    this.bytes.writeBigUInt64LE(BigInt(value), at - BASE + offset);
  }

  mapOf(type) {
    if (!this.maps.has(type)) {
      const m = this.alloc(16);
      this.put(m, 0, this.meta + 1);
      this.bytes.writeUInt16LE(type, m - BASE + LAYOUT.map.instanceType);
      this.maps.set(type, m);
    }
    return this.maps.get(type);
  }

  object(type, size) {
    const at = this.alloc(size);
    this.put(at, 0, this.mapOf(type) + 1);
    return at;
  }

  string(text, { twoByte = false, length } = {}) {
    const chars = Buffer.from(text, twoByte ? 'utf16le' : 'latin1');
    const at = this.object(twoByte ? TWO_BYTE_SEQ : ONE_BYTE_SEQ, 16 + chars.length);
    this.bytes.writeInt32LE(length === undefined ? text.length : length, at - BASE + LAYOUT.string.length);
    chars.copy(this.bytes, at - BASE + 16);
    return at + 1;
  }

  // A SharedFunctionInfo holding its name as a string, with no script.
  sfi(nameTagged) {
    const at = this.object(LAYOUT.types.sharedFunctionInfo, 64);
    this.put(at, LAYOUT.sfi.nameOrScopeInfo, nameTagged);
    this.put(at, LAYOUT.sfi.script, 0);
    return at + 1;
  }

  jsFunction(sfiTagged) {
    const at = this.object(LAYOUT.types.jsFunctionFirst, 64);
    this.put(at, LAYOUT.jsFunction.shared, sfiTagged);
    return at + 1;
  }

  memory() {
    return new RangeMemory([{ address: BASE, bytes: this.bytes }]);
  }
}

describe('V8 frames: what another user\'s memory may hold', function () {
  describe('strings', function () {
    it('ends a cons string that points at itself, having read a bounded amount', function () {
      const h = new FakeHeap();
      const cons = h.object(ONE_BYTE_CONS, 32);
      h.bytes.writeInt32LE(100, cons - BASE + LAYOUT.string.length);
      h.put(cons, LAYOUT.string.consFirst, cons + 1);
      h.put(cons, LAYOUT.string.consSecond, cons + 1);
      const memory = h.memory();
      const heap = new Heap(memory, LAYOUT);
      assert.strictEqual(readString(heap, heap.object(BigInt(cons + 1))), null);
      assert.ok(memory.budget.used < 1 << 20, `read ${memory.budget.used} bytes`);
    });

    it('reads a cons string of two parts, a two-byte string, and only as much of a long one as asked', function () {
      const h = new FakeHeap();
      const a = h.string('hello, ');
      const b = h.string('wörld');
      const cons = h.object(ONE_BYTE_CONS, 32);
      h.bytes.writeInt32LE(12, cons - BASE + LAYOUT.string.length);
      h.put(cons, LAYOUT.string.consFirst, a);
      h.put(cons, LAYOUT.string.consSecond, b);
      const two = h.string('計算', { twoByte: true });
      const long = h.string('x'.repeat(100000));
      const memory = h.memory();
      const heap = new Heap(memory, LAYOUT);
      assert.strictEqual(readString(heap, heap.object(BigInt(cons + 1))).text, 'hello, wörld');
      assert.deepStrictEqual(readString(heap, heap.object(BigInt(cons + 1)), { start: 5, maxChars: 4 }), { text: ', wö', length: 12, truncated: true });
      assert.strictEqual(readString(heap, heap.object(BigInt(two))).text, '計算');
      const before = memory.budget.used;
      const r = readString(heap, heap.object(BigInt(long)), { maxChars: 256 });
      assert.deepStrictEqual([r.text.length, r.length, r.truncated], [256, 100000, true]);
      assert.ok(memory.budget.used - before < 1024, 'the rest of a long string is not read');
    });

    it('reads sliced, thin and external strings, and refuses an uncached external one', function () {
      const h = new FakeHeap();
      const parent = h.string('hello world');
      const sliced = h.object(0x2b, 32);            // sliced (3), one-byte
      h.bytes.writeInt32LE(5, sliced - BASE + LAYOUT.string.length);
      h.put(sliced, LAYOUT.string.slicedParent, parent);
      h.put(sliced, LAYOUT.string.slicedOffset, 6n << 32n);
      const thin = h.object(0x2d, 24);              // thin (5), one-byte
      h.bytes.writeInt32LE(11, thin - BASE + LAYOUT.string.length);
      h.put(thin, LAYOUT.string.thinActual, parent);
      const chars = h.alloc(16);
      h.bytes.write('outside', chars - BASE, 'latin1');
      const external = h.object(0x2a, 32);          // external (2), one-byte
      h.bytes.writeInt32LE(7, external - BASE + LAYOUT.string.length);
      h.put(external, LAYOUT.string.externalResource, 0x1234560);
      h.put(external, LAYOUT.string.externalResource + 8, chars);
      const uncached = h.object(0x3a, 32);          // the same, uncached (0x10)
      h.bytes.writeInt32LE(7, uncached - BASE + LAYOUT.string.length);
      h.put(uncached, LAYOUT.string.externalResource + 8, chars);
      const heap = new Heap(h.memory(), LAYOUT);
      const text = (at) => { const r = readString(heap, heap.object(BigInt(at + 1))); return r && r.text; };
      assert.strictEqual(text(sliced), 'world');
      assert.strictEqual(text(thin), 'hello world');
      assert.strictEqual(text(external), 'outside');
      assert.strictEqual(text(uncached), null);
    });

    it('refuses a string whose length is out of range, and what is not a string', function () {
      const h = new FakeHeap();
      const bad = h.string('abc', { length: -5 });
      const sfi = h.sfi(h.string('f'));
      const heap = new Heap(h.memory(), LAYOUT);
      assert.strictEqual(readString(heap, heap.object(BigInt(bad))), null);
      assert.strictEqual(readString(heap, heap.object(BigInt(sfi))), null);
    });
  });

  describe('names', function () {
    it('never returns a control character raw: a name cannot start another frame line', function () {
      const h = new FakeHeap();
      const evil = h.sfi(h.string('evil\n[EntryFrame] JSEntry\x1b[2J\r\u0085'));
      const fn = h.jsFunction(evil);
      const named = new V8Namer({ memory: h.memory(), layout: LAYOUT }).nameFunction(BigInt(fn));
      assert.strictEqual(named.name, 'evil\\x0a[EntryFrame] JSEntry\\x1b[2J\\x0d\\u0085');
      assert.strictEqual(named.text, 'evil\\x0a[EntryFrame] JSEntry\\x1b[2J\\x0d\\u0085 (native)');
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(named.text, /[\x00-\x1f\x7f-\x9f]/);
    });

    it('bounds a name\'s length and marks the cut; escapes bidi overrides and lone surrogates', function () {
      const h = new FakeHeap();
      const long = h.sfi(h.string('n'.repeat(5000)));
      const bidi = h.sfi(h.string('abc\u202edcba', { twoByte: true }));
      const lone = h.sfi(h.string('a\ud800b', { twoByte: true }));
      const namer = new V8Namer({ memory: h.memory(), layout: LAYOUT });
      assert.strictEqual(namer.nameSfi(BigInt(long)).name, 'n'.repeat(256) + '…');
      assert.strictEqual(namer.nameSfi(BigInt(bidi)).name, 'abc\\u202edcba');
      assert.strictEqual(namer.nameSfi(BigInt(lone)).name, 'a\ufffdb');
      assert.strictEqual(safeName('\u2028x'), '\\u2028x');
    });

    it('trusts no object whose map is not a map, and no pointer outside the memory', function () {
      const h = new FakeHeap();
      const name = h.string('f');
      const sfi = h.sfi(name);
      // An "SFI" whose map's own map has another type: not a map.
      const fakeMap = h.alloc(16);
      h.put(fakeMap, 0, name);
      h.bytes.writeUInt16LE(LAYOUT.types.sharedFunctionInfo, fakeMap - BASE + LAYOUT.map.instanceType);
      const forged = h.alloc(64);
      h.put(forged, 0, fakeMap + 1);
      h.put(forged, LAYOUT.sfi.nameOrScopeInfo, name);
      const wild = h.jsFunction(0x7fff00000001);
      const namer = new V8Namer({ memory: h.memory(), layout: LAYOUT });
      assert.strictEqual(namer.nameSfi(BigInt(sfi)).name, 'f');
      assert.strictEqual(namer.nameSfi(BigInt(forged + 1)), null);
      assert.strictEqual(namer.nameFunction(BigInt(wild)), null);
      assert.strictEqual(namer.nameFunction(0x7fff00000001n), null);
      assert.strictEqual(namer.nameFunction(BigInt(sfi)), null, 'an SFI is not a JSFunction');
    });

    it('checks a cached name again: an SFI that changed is named again, one that went is not', function () {
      const h = new FakeHeap();
      const sfi = h.sfi(h.string('before'));
      const namer = new V8Namer({ memory: h.memory(), layout: LAYOUT });
      assert.strictEqual(namer.nameSfi(BigInt(sfi)).name, 'before');
      h.put(sfi - 1, LAYOUT.sfi.nameOrScopeInfo, h.string('after'));
      assert.strictEqual(namer.nameSfi(BigInt(sfi)).name, 'after');
      h.put(sfi - 1, 0, h.mapOf(LAYOUT.types.script) + 1);
      assert.strictEqual(namer.nameSfi(BigInt(sfi)), null);
    });

    it('reads a function\'s name from source text only where the text is a function\'s start', function () {
      assert.strictEqual(nameFromSource('function hot(n) {'), 'hot');
      assert.strictEqual(nameFromSource('async function* gen() {'), 'gen');
      assert.strictEqual(nameFromSource('static async run(a) {'), 'run');
      assert.strictEqual(nameFromSource('get size() {'), 'size');
      assert.strictEqual(nameFromSource('function (x) {'), '');
      assert.strictEqual(nameFromSource('(a, b) => a'), '');
      assert.strictEqual(nameFromSource('x => x'), '');
      assert.strictEqual(nameFromSource('constructor(n) {'), null);
      assert.strictEqual(nameFromSource('// a comment'), null);
      assert.strictEqual(nameFromSource('return 1;'), null);
    });
  });

  describe('script lines (issue 35.3: one array entry per line end took 1.3 GB for 4 scripts of 16 M lines)', function () {
    // V8's rule, counted the plain way: the terminators before a position.
    function oracle(text, position) {
      let line = 1;
      let lastEnd = -1;
      for (let i = 0; i < position; i++) {
        const c = text.charCodeAt(i);
        if (c === 10 || c === 0x2028 || c === 0x2029
          || (c === 13 && text.charCodeAt(i + 1) !== 10)) { line++; lastEnd = i; }
      }
      return { line, column: position - lastEnd };
    }
    const STRIDE = LIMITS.LINE_INDEX_STRIDE;

    function scriptOf(h, text) {
      const at = h.object(LAYOUT.types.script, 64);
      h.put(at, LAYOUT.script.name, h.string('/srv/big.js'));
      h.put(at, LAYOUT.script.source, h.string(text, { twoByte: true }));
      return at + 1;
    }

    it('counts lines as V8 does across its checkpoints: \\r\\n, a lone \\r, U+2028/9, a \\r\\n cut by a stride', function () {
      const pieces = [];
      let n = 0;
      const breaks = ['\n', '\r\n', '\r', '\u2028', '\u2029'];
      while (n < 3 * STRIDE + 100) {
        const piece = 'x'.repeat((n * 7919) % 300) + breaks[n % breaks.length];
        pieces.push(piece);
        n += piece.length;
      }
      let text = pieces.join('');
      // A \r\n across the first stride's end, a lone \r at the second's.
      text = text.slice(0, STRIDE - 1) + '\r\n' + text.slice(STRIDE + 1, 2 * STRIDE - 1) + '\ry' + text.slice(2 * STRIDE + 1);
      const h = new FakeHeap(4 << 20);
      const script = scriptOf(h, text);
      const heap = new Heap(h.memory(), LAYOUT);
      const reader = new ScriptReader(heap);
      const info = reader.script(heap.object(BigInt(script)));
      const positions = [0, 1, 500, STRIDE - 2, STRIDE - 1, STRIDE, STRIDE + 1, 2 * STRIDE - 1, 2 * STRIDE,
        2 * STRIDE + 1, 3 * STRIDE - 5, text.length - 1];
      for (const p of [...positions].reverse()) assert.deepStrictEqual(reader.fromSource(info, p), oracle(text, p), `position ${p}`);
      assert.ok(info.checkpoints.length <= 4, 'one checkpoint a stride, no entry per line');
    });

    it('scans at most its budget of characters in all: further positions get no line, said once', function () {
      const said = [];
      const restore = setLimitSink((line) => said.push(line));
      try {
        const h = new FakeHeap(4 << 20);
        const text = 'a\n'.repeat(STRIDE * 2);
        const script = scriptOf(h, text);
        const heap = new Heap(h.memory(), LAYOUT);
        const reader = new ScriptReader(heap);
        reader.scanBudget = STRIDE;
        const info = reader.script(heap.object(BigInt(script)));
        assert.deepStrictEqual(reader.fromSource(info, 11), { line: 6, column: 2 });
        assert.strictEqual(reader.fromSource(info, 3 * STRIDE), null);
        assert.strictEqual(reader.fromSource(info, 3 * STRIDE + 2), null);
        assert.deepStrictEqual(said, [`nodetrace: V8 scripts: ${LIMITS.SCRIPT_SCAN_BUDGET_CHARS.toLocaleString('en-US')} characters of source were scanned for lines: frames further into unscanned scripts show no line`]);
      } finally {
        setLimitSink(restore);
      }
    });

    it('charges the run\'s memory for its checkpoints, gives them back at close(); past the budget a position gets no line, said once', function () {
      const said = [];
      const restore = setLimitSink((line) => said.push(line));
      try {
        const h = new FakeHeap(4 << 20);
        const text = 'a\n'.repeat(STRIDE * 2);
        const script = scriptOf(h, text);
        const heap = new Heap(h.memory(), LAYOUT);
        // Room for two checkpoints' charges: the first two strides are read, not the third.
        const budget = new MemoryBudget(2 * CHECKPOINT_BYTES);
        const reader = new ScriptReader(heap, { budget });
        const info = reader.script(heap.object(BigInt(script)));
        assert.deepStrictEqual(reader.fromSource(info, 2 * STRIDE - 1), oracle(text, 2 * STRIDE - 1));
        assert.strictEqual(budget.held(), 2 * CHECKPOINT_BYTES, 'two checkpoints kept, charged');
        assert.strictEqual(reader.fromSource(info, 3 * STRIDE), null);
        assert.strictEqual(reader.fromSource(info, 3 * STRIDE + 2), null);
        assert.deepStrictEqual(said, [`nodetrace: script /srv/big.js: lines past its first ${(2 * STRIDE).toLocaleString('en-US')} characters are not counted: nodetrace's memory for this run is bounded to ${2 * CHECKPOINT_BYTES} bytes, and ${2 * CHECKPOINT_BYTES} bytes of it is held already`]);
        reader.close();
        assert.strictEqual(budget.held(), 0);
        const again = reader.script(heap.object(BigInt(script)));
        assert.deepStrictEqual(reader.fromSource(again, 11), { line: 6, column: 2 }, 'read again after close()');
      } finally {
        setLimitSink(restore);
      }
    });
  });

  describe('frame walks', function () {
    // A stack of our own: frames at `fps`, each [fp] = the next, [fp+8] a
    // return address; the classifier says every pc is native code.
    function stack(links) {
      const bytes = Buffer.alloc(1 << 16);
      const base = 0x7ff000000000;
      for (const [fp, saved, ret] of links) {
        bytes.writeBigUInt64LE(BigInt(saved), fp - base);
        bytes.writeBigUInt64LE(BigInt(ret), fp - base + 8);
      }
      return { memory: new RangeMemory([{ address: base, bytes }]), base };
    }
    const native = (pcs) => pcs.map(() => ({ kind: 'native', symbol: 'f', offset: 0 }));

    it('ends at a frame pointer that points at itself (a cycle)', function () {
      const base = 0x7ff000000000;
      const { memory } = stack([[base + 0x100, base + 0x200, 0x401000], [base + 0x200, base + 0x200, 0x401000]]);
      const r = walkStack({ memory, registers: { rip: 0x401000, rbp: base + 0x100 }, classify: native });
      assert.strictEqual(r.frames.length, 2);
      assert.match(r.ended, /does not climb the stack/);
    });

    it('ends at a frame pointer that goes down, jumps beyond the stack, or points at nothing', function () {
      const base = 0x7ff000000000;
      const down = stack([[base + 0x200, base + 0x100, 0x401000]]);
      assert.match(walkStack({ memory: down.memory, registers: { rip: 0x401000, rbp: base + 0x200 }, classify: native })
        .ended, /does not climb/);
      const far = stack([[base + 0x200, base + 0x10000000, 0x401000]]);
      assert.match(walkStack({ memory: far.memory, registers: { rip: 0x401000, rbp: base + 0x200 }, classify: native })
        .ended, /beyond the stack/);
      const gone = walkStack({ memory: down.memory, registers: { rip: 0x401000, rbp: 0x12345678 }, classify: native });
      assert.match(gone.ended, /unreadable frame pointer \(0x12345678\)/);
      const low = stack([[base + 0x200, base + 0x300, 0x10]]);
      assert.match(walkStack({ memory: low.memory, registers: { rip: 0x401000, rbp: base + 0x200 }, classify: native })
        .ended, /no code/);
    });

    it('finds the caller of a native function without a frame pointer from the top of the stack', function () {
      const base = 0x7ff000000000;
      const { memory } = stack([[base + 0x200, base + 0x300, 0x402000], [base + 0x300, 0, 0]]);
      memory.ranges[0].bytes.writeBigUInt64LE(0x1234n, 0x100);              // a local
      memory.ranges[0].bytes.writeBigUInt64LE(BigInt(base + 0x200), 0x108);  // the caller's rbp, saved
      memory.ranges[0].bytes.writeBigUInt64LE(0x401234n, 0x110);             // the return address
      const isCode = (a) => a >= 0x400000 && a < 0x500000;
      const registers = { rip: 0x7f1234567000, rsp: base + 0x100, rbp: 1 };
      const r = walkStack({ memory, registers, classify: native, isCode });
      assert.deepStrictEqual(r.frames.map((f) => f.pc), [0x7f1234567000, 0x401234, 0x402000]);
      assert.strictEqual(r.ended, 'the outermost frame');
      const without = walkStack({ memory, registers, classify: native });
      assert.deepStrictEqual(without.frames.map((f) => f.pc), [0x7f1234567000], 'without isCode, rbp alone');
    });

    it('goes on past native code without frame pointers from the next frame record that leads on, marked, never a stale one', function () {
      const base = 0x7ff000000000;
      const isCode = (a) => a >= 0x400000 && a < 0x500000;
      // The real frames further up: records, each returning into code.
      const { memory } = stack([[base + 0x200, base + 0x300, 0x402000], [base + 0x300, base + 0x400, 0x403000],
        [base + 0x400, base + 0x500, 0x404000], [base + 0x500, base + 0x600, 0x405000], [base + 0x600, 0, 0x406000],
        // A stale record below them that leads nowhere (one frame).
        [base + 0x140, base + 0x160, 0x401000], [base + 0x160, 0, 0x401000]]);
      memory.ranges[0].bytes.writeBigUInt64LE(0x480000n, 0x100);  // the return address of a function that keeps no frame pointer
      const registers = { rip: 0x4f0000, rsp: base + 0x100, rbp: 1 };
      const r = walkStack({ memory, registers, classify: native, isCode });
      // (The first record's own return address, 0x402000, is left out: an
      // earlier call's record would look the same.)
      assert.deepStrictEqual(r.frames.map((f) => f.pc), [0x4f0000, 0x480000, 0x403000, 0x404000, 0x405000]);
      assert.deepStrictEqual(r.frames.map((f) => Boolean(f.afterGap)), [false, false, true, false, false]);
      assert.strictEqual(r.ended, 'the outermost frame');
      // Nothing that leads on above: the walk ends where it broke.
      const junk = stack([[base + 0x140, base + 0x160, 0x401000], [base + 0x160, 0, 0x401000]]);
      junk.memory.ranges[0].bytes.writeBigUInt64LE(0x480000n, 0x100);
      const j = walkStack({ memory: junk.memory, registers, classify: native, isCode });
      assert.deepStrictEqual(j.frames.map((f) => f.pc), [0x4f0000, 0x480000]);
      assert.ok(!j.frames.some((f) => f.afterGap));
    });

    it('stops after maxDepth frames of a stack that never ends', function () {
      const base = 0x7ff000000000;
      const links = [];
      for (let i = 0; i < 1000; i++) links.push([base + 0x100 + 32 * i, base + 0x100 + 32 * (i + 1), 0x401000]);
      const { memory } = stack(links);
      const r = walkStack({ memory, registers: { rip: 0x401000, rbp: base + 0x100 }, classify: native, maxDepth: 64 });
      assert.strictEqual(r.frames.length, 64);
      assert.strictEqual(r.ended, 'stopped at 64 frames');
    });

    it('believes a frame marker only in V8\'s code, and names no function in a frame of unknown code that has one', function () {
      const h = new FakeHeap();
      const fn = h.jsFunction(h.sfi(h.string('looksLikeJs')));
      const frame = h.alloc(64) + 32;
      h.put(frame, 0, 0);                  // outermost
      h.put(frame, 8, 0x401000);
      h.put(frame, LAYOUT.frame.context, 2 * 3);   // a marker (type 3)
      h.put(frame, LAYOUT.frame.function, fn);
      const namer = new V8Namer({ memory: h.memory(), layout: LAYOUT });
      const walk = (kind, symbol) => walkStack({
        memory: h.memory(), registers: { rip: 0x401000, rbp: frame }, namer, layout: LAYOUT,
        classify: (pcs) => pcs.map(() => ({ kind, symbol })),
      }).frames[0];
      assert.strictEqual(walk('native', 'Builtins_JSEntry').text, `[${LAYOUT.frameTypes[3]}] JSEntry`);
      assert.strictEqual(walk('native', 'uv_run').kind, 'native');
      assert.strictEqual(walk('unknown').kind, 'unknown');
      h.put(frame, LAYOUT.frame.context, 0x123456789001);  // a context: a JS frame
      assert.strictEqual(walk('unknown').name, 'looksLikeJs');
      assert.strictEqual(walk('native', 'uv_run').kind, 'native', 'a native symbol wins over what the slots hold');
    });
  });

  describe('memory', function () {
    it('reads nothing past its bounds: too long, too low, too high, or after its budget', function () {
      const memory = new RangeMemory([{ address: 0x10000, bytes: Buffer.alloc(4 << 20) }], { budget: (3 << 20) + 8 });
      assert.strictEqual(memory.read(0x10000, MAX_READ + 1), null);
      assert.strictEqual(memory.read(0x10, 8), null);
      assert.strictEqual(memory.read(2 ** 48 - 4, 8), null);
      assert.strictEqual(memory.read(0x10000 + (4 << 20) - 4, 8), null, 'across the end of a range (an attempt the budget counts)');
      assert.ok(memory.read(0x10000, MAX_READ));
      assert.ok(memory.read(0x10000, MAX_READ));
      assert.ok(memory.read(0x10000, MAX_READ));
      assert.strictEqual(memory.read(0x10000, 8), null, 'the budget is spent');
    });

    it('reads a live process\'s memory, and nothing where it maps nothing', function () {
      const vdso = /^([0-9a-f]+)-[0-9a-f]+ .*\[vdso\]$/m.exec(fs.readFileSync('/proc/self/maps', 'utf8'));
      if (!vdso) this.skip();
      const memory = new ProcessMemory(process.pid);
      try {
        assert.deepStrictEqual(memory.read(parseInt(vdso[1], 16), 4), Buffer.from('\x7fELF', 'latin1'), 'the vDSO is an ELF image');
        assert.strictEqual(memory.read(0x1000, 8), null);
      } finally {
        memory.close();
      }
      assert.strictEqual(memory.read(parseInt(vdso[1], 16), 4), null, 'closed');
    });
  });

  describe('metadata', function () {
    it('says in one line what it cannot read: compressed pointers, another tagging, a missing field', function () {
      const compressed = layoutFrom({ ...SYMBOLS, v8dbg_TaggedSize: 4 });
      assert.match(compressed.unsupported, /^V8 12\.4\.254\.21 compresses its pointers \(tagged size 4\)/);
      const tags = layoutFrom({ ...SYMBOLS, v8dbg_SmiShiftSize: 0 });
      assert.match(tags.unsupported, /^V8 12\.4\.254\.21 tags its values in a way nodetrace does not know/);
      const lacking = { ...SYMBOLS };
      for (const k of Object.keys(lacking)) if (k.startsWith('v8dbg_class_SharedFunctionInfo__name_or_scope_info')) delete lacking[k];
      assert.strictEqual(layoutFrom(lacking).unsupported, 'V8 12.4.254.21\'s metadata lacks sfi.nameOrScopeInfo');
      for (const u of [compressed, tags, layoutFrom(lacking)]) assert.doesNotMatch(u.unsupported, /\n/);
    });

    it('on a V8 version it has not measured, names from the source text and says so', function () {
      const future = layoutFrom({ ...SYMBOLS, _ZN2v88internal7Version6major_E: 15,
        _ZN2v88internal7Version6minor_E: 1 });
      assert.strictEqual(future.scopeInfo, null);
      const namer = new V8Namer({ memory: new RangeMemory([]), layout: future });
      assert.strictEqual(namer.limitation(), 'V8 15.1.254.21\'s ScopeInfo layout was not measured by nodetrace: function names are read from the source text, and unnamed where that fails');
    });
  });

  describe('cores', function () {
    let dir;
    before(function () { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-v8-core-')); });
    after(function () { fs.rmSync(dir, { recursive: true, force: true }); });

    // A small x86-64 ELF core: one thread (NT_PRSTATUS), optional NT_FILE,
    // one PT_LOAD of `memory` bytes at `vaddr`.
    function writeCore(name,
      { type = 4, machine = 62, files = [], memory = Buffer.alloc(4096, 0xab), vaddr = 0x7f0000000000, cut = 0 } = {}) {
      const note = (ntype, ownerName, desc) => {
        const owner = Buffer.from(ownerName + '\0');
        const head = Buffer.alloc(12);
        head.writeUInt32LE(owner.length, 0);
        head.writeUInt32LE(desc.length, 4);
        head.writeUInt32LE(ntype, 8);
        const pad = (b) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
        return Buffer.concat([head, pad(owner), pad(desc)]);
      };
      const prstatus = Buffer.alloc(336);
      prstatus.writeInt32LE(4242, 32);
      prstatus.writeBigUInt64LE(0x7f0000000100n, 112 + 8 * 4);   // rbp
      prstatus.writeBigUInt64LE(0x401000n, 112 + 8 * 16);        // rip
      prstatus.writeBigUInt64LE(0x7f0000000080n, 112 + 8 * 19);  // rsp
      const psinfo = Buffer.alloc(136);
      psinfo.writeInt32LE(4242, 24);
      psinfo.write('node', 40);
      let fileNote = Buffer.alloc(0);
      if (files.length) {
        const head = Buffer.alloc(16 + 24 * files.length);
        head.writeBigUInt64LE(BigInt(files.length), 0);
        head.writeBigUInt64LE(4096n, 8);
        files.forEach((f, i) => {
          head.writeBigUInt64LE(BigInt(f.start), 16 + 24 * i);
          head.writeBigUInt64LE(BigInt(f.end), 24 + 24 * i);
          head.writeBigUInt64LE(0n, 32 + 24 * i);
        });
        fileNote = note(0x46494c45, 'CORE', Buffer.concat([head, Buffer.from(files.map((f) => f.path).join('\0') + '\0')]));
      }
      const notes = Buffer.concat([note(1, 'CORE', prstatus), note(3, 'CORE', psinfo), fileNote]);
      const ehdr = Buffer.alloc(64);
      ehdr.writeUInt32BE(0x7f454c46, 0);
      ehdr[4] = 2; ehdr[5] = 1; ehdr[6] = 1;
      ehdr.writeUInt16LE(type, 16);
      ehdr.writeUInt16LE(machine, 18);
      ehdr.writeBigUInt64LE(64n, 32);
      ehdr.writeUInt16LE(56, 54);
      ehdr.writeUInt16LE(2, 56);
      const notesAt = 64 + 2 * 56;
      const loadAt = Math.ceil((notesAt + notes.length) / 4096) * 4096;
      const ph = Buffer.alloc(2 * 56);
      ph.writeUInt32LE(4, 0);
      ph.writeBigUInt64LE(BigInt(notesAt), 8);
      ph.writeBigUInt64LE(BigInt(notes.length), 32);
      ph.writeUInt32LE(1, 56);
      ph.writeUInt32LE(6, 60);
      ph.writeBigUInt64LE(BigInt(loadAt), 64);
      ph.writeBigUInt64LE(BigInt(vaddr), 72);
      ph.writeBigUInt64LE(BigInt(memory.length), 88);
      ph.writeBigUInt64LE(BigInt(memory.length), 96);
      const whole = Buffer.concat([ehdr, ph, notes, Buffer.alloc(loadAt - notesAt - notes.length), memory]);
      const file = path.join(dir, name);
      fs.writeFileSync(file, whole.subarray(0, whole.length - cut));
      return file;
    }

    const oneLine = (fn, re) => assert.throws(fn, (err) => err instanceof UserError && re.test(err.message) && !err.message.includes('\n'));

    it('reads a core\'s thread, registers, command and memory', function () {
      const core = openCore(writeCore('ok.core'));
      try {
        assert.deepStrictEqual(core.threads,
          [{ tid: 4242, registers: { rip: 0x401000, rsp: 0x7f0000000080, rbp: 0x7f0000000100, fsBase: 0 } }]);
        assert.strictEqual(core.command, 'node');
        assert.strictEqual(core.truncated, 0);
        assert.deepStrictEqual(core.memory.read(0x7f0000000010, 2), Buffer.from([0xab, 0xab]));
        assert.strictEqual(core.memory.read(0x7f0000001000, 8), null, 'past the segment');
      } finally {
        core.close();
      }
    });

    it('says in one line that a file is not a core, or not an x86-64 one', function () {
      const text = path.join(dir, 'text');
      fs.writeFileSync(text, 'hello\n');
      oneLine(() => openCore(text), /is not an ELF file \(not a core\)/);
      oneLine(() => openCore(writeCore('exec.core', { type: 2 })), /is an ELF file but not a core/);
      oneLine(() => openCore(writeCore('arm.core', { machine: 183 })), /core of another architecture/);
      oneLine(() => openCore(path.join(dir, 'missing')), /cannot read the core/);
    });

    it('opens a truncated core saying how much is missing, and reads nothing of the missing part', function () {
      const core = openCore(writeCore('cut.core', { cut: 1024 }));
      try {
        assert.strictEqual(core.truncated, 1024);
        assert.ok(core.memory.read(0x7f0000000000, 8));
        assert.strictEqual(core.memory.read(0x7f0000000c08, 8), null);
      } finally {
        core.close();
      }
      oneLine(() => openCore(writeCore('headless.core', { cut: 1 << 20 })), /truncated core|not an ELF file/);
    });

    it('says in one line that a core is not a Node process\'s', function () {
      oneLine(() => openCoreForWalk(writeCore('not-node.core', { files: [{ start: 0x400000, end: 0x401000, path: '/bin/true' }] })),
        /is the core of node \(PID 4242\), in which no mapped file on this host carries V8's metadata: not a Node process's core/);
    });
  });
});
