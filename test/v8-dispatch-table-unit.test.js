'use strict';
// lib/v8/dispatch-table.js: where V8 13 and 14 keep a function's code (a
// handle into a JSDispatchTable), read from the real bytes of official Node
// 24 and 26 (test/fixtures/v8-dispatch-table.json, with how it was made),
// and what it refuses.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const {
  locationFrom, decodeTableAddress, tlsDistance, handleShift, dispatchArguments, DispatchTable, ENTRY,
} = require('../lib/v8/dispatch-table');
const { Heap } = require('../lib/v8/heap');
const { STT_FUNC, ET_DYN } = require('../lib/elf-constants');

const FIXTURE = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'v8-dispatch-table.json'), 'utf8'));
const PROGRAMS = path.join(__dirname, '..', 'd-scripts');

// The fixture's entry as findElfData gives it.
function found(label) {
  const fx = FIXTURE[label];
  return {
    type: fx.type, tls: fx.tls,
    found: new Map(Object.entries(fx.symbols).map(([n, s]) => [n, { value: s.value, type: s.type, bytes: Buffer.from(s.bytes, 'hex') }])),
  };
}

describe('V8 13 and 14: where a function\'s code is, through the dispatch table (lib/v8/dispatch-table.js)', function () {
  it('reads from V8\'s own js_dispatch_table_address() where the table is: the isolate group on 13.6, the isolate on 14.6', function () {
    // 24.11.0: mov rax, [rip + default_isolate_group_] (0x6e99908, its
    // symbol's address); mov rax, [rax + 0x3268]. 24.22.3 moved the field to
    // 0x3270 within the same V8 minor: a table per version would have read
    // the wrong word.
    assert.deepStrictEqual(locationFrom(found('node24')), { at: 0x3268, shift: 8, root: 0x6e99908 });
    assert.deepStrictEqual(locationFrom(found('node24.22.3')), { at: 0x3270, shift: 8, root: 0x6bbe928 });
    // 26.10.0 and 26.12.1: mov rax, [rdi + 0x268]; g_current_isolate_ at
    // 0x128 in a TLS block of 0x2a0 bytes: 0x178 below the thread pointer,
    // as v8::Isolate::GetCurrent() reads it (mov rax, fs:-0x178).
    for (const label of ['node26', 'node26.12.1']) assert.deepStrictEqual(locationFrom(found(label)), { at: 0x268, shift: 8, tls: 0x178 }, label);
    // 24's g_current_isolate_ (0xc8 of 0x150): fs:-0x88, as its GetCurrent() reads it.
    const iso24 = FIXTURE.node24.symbols._ZN2v88internal18g_current_isolate_E;
    assert.strictEqual(tlsDistance(iso24.value, FIXTURE.node24.tls), 0x88);
    // 12.4 has no table.
    assert.match(locationFrom(found('node22')).unsupported, /no symbol for js_dispatch_table_address/);
  });

  it('the programs\' arguments say it, and the programs\' entry layout is the table\'s', function () {
    assert.deepStrictEqual(dispatchArguments(locationFrom(found('node24'))), { DISPATCH_AT: 0x3268, DISPATCH_ROOT: 0x6e99908, DISPATCH_TLS: 0, DISPATCH_SHIFT: 8 });
    assert.deepStrictEqual(dispatchArguments(locationFrom(found('node26'))), { DISPATCH_AT: 0x268, DISPATCH_ROOT: 0, DISPATCH_TLS: 0x178, DISPATCH_SHIFT: 8 });
    assert.deepStrictEqual(dispatchArguments({ unsupported: 'x' }), {});
    assert.deepStrictEqual(dispatchArguments(null), {});
    for (const file of ['profile-js.bt', 'offcpu.bt', 'loop.bt']) {
      const text = fs.readFileSync(path.join(PROGRAMS, file), 'utf8');
      const defined = Object.fromEntries([...text.matchAll(/^#define (JS_DISPATCH_[A-Z_]+) (\d+)$/gm)]
        .map((m) => [m[1], Number(m[2])]));
      assert.deepStrictEqual(defined,
        { JS_DISPATCH_ENTRY_BYTES: ENTRY.bytes, JS_DISPATCH_CODE_AT: ENTRY.codeAt,
          JS_DISPATCH_CODE_SHIFT: ENTRY.codeShift }, file);
    }
  });

  it('a handle\'s shift from the table\'s reservation: 256 MiB of 16-byte entries, 24 bits of index', function () {
    assert.strictEqual(handleShift(256 << 20), 8);
    assert.strictEqual(handleShift(128 << 20), 9);
    assert.strictEqual(handleShift(3 << 20), null);
    assert.strictEqual(handleShift(16), null);
  });

  it('refuses code it does not know, a field out of bounds, a position-independent or stripped node, in a few words', function () {
    const at = 0x1000;
    const bytes = (hex) => Buffer.concat([Buffer.from(hex, 'hex'), Buffer.alloc(16)]);
    assert.deepStrictEqual(decodeTableAddress(bytes('488b4768'), at), { isolate: true, at: 0x68 });
    assert.strictEqual(decodeTableAddress(bytes('488b8769020000'), at), null, 'not a word\'s offset');
    assert.strictEqual(decodeTableAddress(bytes('488b87000000f0'), at), null, 'negative');
    assert.strictEqual(decodeTableAddress(bytes('488b87000010'), at), null, 'too far');
    assert.strictEqual(decodeTableAddress(bytes('4889f8c3'), at), null);
    assert.strictEqual(decodeTableAddress(bytes('488b0500000000488b8868320000'), at), null, 'another register');
    assert.deepStrictEqual(decodeTableAddress(bytes('488b0510000000488b4010'), at), { root: at + 7 + 16, at: 16 });
    assert.strictEqual(decodeTableAddress(Buffer.from('488b87', 'hex'), at), null, 'cut short');

    const pie = found('node26');
    pie.type = ET_DYN;
    assert.match(locationFrom(pie).unsupported, /position-independent/);
    const stripped = found('node26');
    for (const n of [...stripped.found.keys()]) if (n.includes('js_dispatch_table_address')) stripped.found.delete(n);
    assert.match(locationFrom(stripped).unsupported, /stripped/);
    const noTls = found('node26');
    noTls.tls = null;
    assert.match(locationFrom(noTls).unsupported, /isolate is kept/);
    const twoSizes = found('node26');
    twoSizes.found.set('_ZN2v88internal19ExternalEntityTableINS0_15JSDispatchEntryELm134217728EE4FreeEv', { value: 1, type: STT_FUNC, bytes: Buffer.alloc(32) });
    assert.match(locationFrom(twoSizes).unsupported, /size of its dispatch table/);
    assert.match(locationFrom(null).unsupported, /could not be read/);
    assert.strictEqual(tlsDistance(0x400, { vaddr: 0, memsz: 0x100, align: 8 }), null, 'outside the block');
  });

  it('a handle leads to the Code word its entry holds, in the isolate\'s table (14) or the group\'s (13); nothing where the chain breaks', function () {
    // A memory laid out by hand: a thread pointer, the isolate below it, the table.
    const words = new Map();
    const put = (a, v) => words.set(a, BigInt(v));
    const memory = {
      read: (a, n) => {
        if (!words.has(a)) return null;
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(words.get(a));
        return b.subarray(0, n);
      },
    };
    const heap = new Heap(memory, {});
    const fsBase = 0x7f0000001000;
    const isolate = 0x50000000;
    const base = 0x7e0000000000;
    put(fsBase - 0x178, isolate);
    put(isolate + 0x268, base);
    const code = 0x3dc02bb038e1n;   // tagged
    put(base + 0x2b80 * 16 + 8, (code << 16n) | 0x10003n);   // marked, 3 parameters
    const t14 = new DispatchTable(heap, { at: 0x268, shift: 8, tls: 0x178 });
    assert.strictEqual(t14.base({ fsBase }), base);
    assert.strictEqual(t14.code(t14.base({ fsBase }), 0x2b8000), code);
    assert.strictEqual(t14.base({}), null, 'no thread pointer');
    assert.strictEqual(t14.base({ fsBase: fsBase + 8 }), null, 'no isolate there');
    assert.strictEqual(t14.code(base, 0x2b9000), null, 'an entry not in memory');
    assert.strictEqual(t14.code(null, 0x2b8000), null);
    const group = 0x6e99908;
    put(group, isolate);
    const t13 = new DispatchTable(heap, { at: 0x268, shift: 8, root: group });
    assert.strictEqual(t13.code(t13.base(), 0x2b8000), code);
    put(isolate + 0x268, 12);
    assert.strictEqual(t13.base(), null, 'a base below user space');
  });
});
