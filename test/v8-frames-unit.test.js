'use strict';
// The V8 frame namer (lib/v8/) on real memory: for each Node build of the
// matrix (official 18, 20 here, 22, 24, 26 and Debian 12's 18), a stack of
// test/targets/v8-frames.js and .mjs captured by test/support/v8-capture.js
// (only the bytes the walk read), walked again here from the bytes alone.
// Names and line:column are checked against what the target's own V8 said
// of its functions (the inspector's [[FunctionLocation]], in the fixture's
// `truth`), not against a recorded answer.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { layoutFrom } = require('../lib/v8/metadata');
const { SnapshotMemory } = require('../lib/v8/memory');
const { V8Namer } = require('../lib/v8/namer');
const { walkStack } = require('../lib/v8/walk');

const FIXTURES = path.join(__dirname, 'fixtures');
const BUILDS = [
  { label: 'node18', v8: '10.2' }, { label: 'debian18', v8: '10.2' }, { label: 'host', v8: '11.3' },
  { label: 'node22', v8: '12.4' }, { label: 'node24', v8: '13.6' }, { label: 'node26', v8: '14.6' },
];

function load(name) {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
}

// Walks a fixture again: its memory, its metadata, what the symbolizer said.
function walkFixture(fx) {
  const layout = layoutFrom(fx.symbols);
  const memory = new SnapshotMemory(fx);
  const namer = new V8Namer({ memory, layout });
  const natives = new Map(fx.natives.map((n) => [n.pc, n]));
  const classify = (pcs) => pcs.map((pc) => natives.get(pc.toString(16)) || { kind: 'unknown' });
  return { layout, namer, memory, ...walkStack({ memory, registers: fx.registers, classify, namer, layout }) };
}

const jsFrames = (frames) => frames.filter((f) => f.kind === 'js');

function assertAtTruth(frame, truth, name) {
  const t = truth.find((x) => x.name === name);
  assert.ok(t, `the target said where ${name} starts`);
  assert.strictEqual(frame.line, t.line + 1, `${name}: line`);
  assert.strictEqual(frame.column, t.column + 1, `${name}: column`);
}

describe('V8 frames from captured memory', function () {
  for (const build of BUILDS) {
    describe(`${build.label} (V8 ${build.v8})`, function () {
      const fx = load(`v8-frames-${build.label}.json`);
      const esm = load(`v8-frames-esm-${build.label}.json`);

      it('reads the layout from the metadata, with a measured ScopeInfo table', function () {
        const layout = layoutFrom(fx.symbols);
        assert.strictEqual(layout.unsupported, undefined);
        assert.strictEqual(`${layout.version.major}.${layout.version.minor}`, build.v8);
        assert.strictEqual(layout.scopeInfo.measuredOn, build.v8);
        assert.strictEqual(layout.frame.function, -16);
      });

      it('names every JavaScript function of the chain, in order, at V8\'s own positions', function () {
        const { frames } = walkFixture(fx);
        const js = jsFrames(frames);
        const names = js.map((f) => f.name);
        const chain = ['hotLoop', 'outer', 'manyLocals', '計算', 'handlers.onTick', '', 'map', 'arrow', 'run', 'Spinner', 'main'];
        assert.deepStrictEqual(names.slice(0, chain.length), chain, names.join(' < '));
        for (const [i, name] of [[0, 'hotLoop'], [1, 'outer'], [2, 'manyLocals'], [3, '計算'], [4, 'handlers.onTick'], [7, 'arrow'], [8, 'Worker.run'], [9, 'Spinner'], [10, 'main']]) {
          assertAtTruth(js[i], fx.truth, name);
          assert.ok(js[i].file.endsWith('test/targets/v8-frames.js'), js[i].file);
        }
        assert.strictEqual(js[0].text, `hotLoop (${js[0].file}:${js[0].line}:${js[0].column})`);
        assert.strictEqual(js[0].tier, 'compiled', 'the spinning loop runs compiled (on-stack replacement)');
      });

      it('tells inferred names, anonymous functions, class constructors and builtins apart', function () {
        const js = jsFrames(walkFixture(fx).frames);
        assert.strictEqual(js[4].inferred, true);
        assert.strictEqual(js[3].inferred, false);
        assert.strictEqual(js[5].name, '');
        assert.ok(js[5].text.startsWith('(anonymous) ('), js[5].text);
        assert.strictEqual(js[6].kind, 'js');
        assert.strictEqual(js[6].jsKind, 'builtin');
        assert.strictEqual(js[6].file, null);
        assert.strictEqual(js[9].jsKind, 'class constructor');
        assert.strictEqual(js[8].jsKind, 'function');
      });

      it('names V8\'s own frames by the type their marker says', function () {
        const { frames } = walkFixture(fx);
        const marked = frames.filter((f) => f.kind === 'v8' && f.frameType);
        if (build.label === 'debian18') {
          // Debian's libnode keeps no symbols for V8's builtins: their frames
          // are not known to be V8's, and stay addresses (never a JS name).
          assert.deepStrictEqual(marked, []);
          const between = frames.slice(frames.findIndex((f) => f.name === 'Spinner') + 1, frames.findIndex((f) => f.name === 'main'));
          assert.ok(between.length >= 1 && between.every((f) => f.kind === 'unknown'), JSON.stringify(between.map((f) => f.text)));
          return;
        }
        const types = marked.map((f) => f.frameType);
        assert.ok(types.some((t) => /ConstructFrame$/.test(t)), types.join(', '));
        assert.ok(types.includes('EntryFrame'), types.join(', '));
        const entry = marked.find((f) => f.frameType === 'EntryFrame');
        assert.strictEqual(entry.builtin, 'JSEntry');
        assert.strictEqual(entry.text, '[EntryFrame] JSEntry');
      });

      it('names a SharedFunctionInfo captured earlier, and refuses what is not one', function () {
        const { frames } = walkFixture(fx);
        const hot = jsFrames(frames)[0];
        const fresh = new V8Namer({ memory: new SnapshotMemory(fx), layout: layoutFrom(fx.symbols) });
        const again = fresh.nameSfi(BigInt(hot.sfi));
        assert.strictEqual(again.text, hot.text);
        assert.strictEqual(fresh.nameSfi(BigInt(hot.sfi) + 8n), null, 'an address inside the SFI is no SFI');
        assert.strictEqual(fresh.nameSfi(BigInt(hot.sfi) - 1n), null, 'an untagged address is no SFI');
        assert.strictEqual(fresh.nameFunction(BigInt(hot.sfi)), null, 'an SFI is no JSFunction');
      });

      it('walks an ES module: its functions, and the module\'s own code', function () {
        const js = jsFrames(walkFixture(esm).frames);
        assert.deepStrictEqual(js.slice(0, 3).map((f) => f.name), ['moduleHot', 'moduleOuter', '']);
        assertAtTruth(js[0], esm.truth, 'moduleHot');
        assertAtTruth(js[1], esm.truth, 'moduleOuter');
        assert.ok(js[0].file.startsWith('file://') && js[0].file.endsWith('test/targets/v8-frames.mjs'), js[0].file);
        assert.deepStrictEqual([js[2].line, js[2].column], [1, 1], 'module code starts at its first character');
      });

      it('on a V8 whose ScopeInfo layout is unknown, reads names from the source text, and guesses none', function () {
        const walked = walkFixture(fx);
        const layout = { ...walked.layout, scopeInfo: null };
        const fallback = new V8Namer({ memory: new SnapshotMemory(fx), layout });
        assert.match(fallback.limitation(), new RegExp(`^V8 ${build.v8.replace('.', '\\.')}\\.[0-9.]+'s ScopeInfo layout was not measured`));
        const js = jsFrames(walked.frames).slice(0, 11);
        const again = js.map((f) => fallback.nameSfi(BigInt(f.sfi)));
        // Own names as the table gives them; an anonymous function stays
        // anonymous (V8's inferred names live only in the ScopeInfo); a
        // class constructor's name is its class's, not in its text: unknown.
        assert.deepStrictEqual(again.map((x) => x.name),
          ['hotLoop', 'outer', 'manyLocals', '計算', '', '', 'map', '', 'run', null, 'main']);
        for (const i of [0, 1, 2, 3, 4, 5, 7, 8, 10]) {
          assert.deepStrictEqual([again[i].line, again[i].column], [js[i].line, js[i].column], js[i].text);
          assert.strictEqual(again[i].from, 'source');
        }
        assert.strictEqual(again[9].text, `(unknown) (${js[9].file})`);
      });

      it('reads no more than the bytes it was given, and ends the walk saying why', function () {
        const { ended, memory } = walkFixture(fx);
        assert.ok(memory.budget.used > 0);
        assert.match(ended, /outermost frame|does not climb|unreadable|no code/);
      });
    });
  }
});

describe('the registers a walk starts from (lib/v8/registers.js)', function () {
  it('reads every thread\'s rip, rsp, rbp and thread pointer (fs_base) from gdb\'s output', function () {
    const { parseRegisters } = require('../lib/v8/registers');
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'gdb-registers.out'), 'utf8');
    const threads = parseRegisters(text);
    assert.strictEqual(threads.size, 8);
    assert.deepStrictEqual(threads.get(22105),
      { rip: 0x7f910ff26cae, rsp: 0x7ffe4d89fec0, rbp: 0, fsBase: 0x7f9110256340 });
    assert.strictEqual(new Set([...threads.values()].map((r) => r.fsBase)).size, 8, 'a thread pointer each');
    // A gdb that does not give fs_base: the thread is still walked.
    const old = parseRegisters(text.split('\n').filter((l) => !l.startsWith('fs_base')).join('\n'));
    assert.deepStrictEqual(old.get(22105), { rip: 0x7f910ff26cae, rsp: 0x7ffe4d89fec0, rbp: 0 });
  });
});
