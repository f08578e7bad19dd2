'use strict';
// nodetrace stack: how a core's stacks read (pure), and what the command
// says of a file that is no Node core (no tracer, no root needed).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { frameLine, frameLines, endWorthSaying, renderStacksText, renderStacksJson } = require('../lib/stack/render');

const NODETRACE = path.join(__dirname, '..', 'bin', 'nodetrace');

// Frames as lib/v8/walk.js gives them (the ebadf target on Node 20).
const frames = [
  { kind: 'native', pc: 0x1000, text: 'uv_fs_close+180', symbol: 'uv_fs_close', offset: 180, module: 'node' },
  { kind: 'v8', pc: 0x2000, text: '[BuiltinExitFrame] CEntry_Return1_ArgvOnStack_BuiltinExit', module: 'node', frameType: 'BuiltinExitFrame' },
  { kind: 'js', pc: 0x3000, name: 'closeTwice', inferred: false, file: '/a.js', line: 39, column: 20, jsKind: 'function', text: 'closeTwice (/a.js:39:20)', tier: 'interpreted' },
  { kind: 'jit', pc: 0x4000, text: '0x4000' },
  { kind: 'native', pc: 0x5000, text: 'uv_run+756', symbol: 'uv_run', offset: 756, module: 'node' },
];
const model = {
  file: '/c/core.node.42', pid: 42, command: 'node', object: '/usr/bin/node', v8: '11.3.244.8', notes: [],
  threads: [{ tid: 42, frames, ended: 'the outermost frame' }, { tid: 43, frames: frames.slice(0, 3), ended: 'an unreadable frame pointer (0x10)' }],
};

describe('stack: rendering (pure)', () => {
  it('one line a frame: JavaScript with file:line:column and tier, native with its module', () => {
    assert.deepStrictEqual(frames.map(frameLine), [
      'uv_fs_close+180 (node)', '[BuiltinExitFrame] CEntry_Return1_ArgvOnStack_BuiltinExit (node)',
      'closeTwice (/a.js:39:20)  [JS, interpreted]', '0x4000  [JIT code, not named]', 'uv_run+756 (node)']);
    assert.strictEqual(frameLine({ kind: 'native', text: 'x'.repeat(300), module: 'node' }).length, 160, 'bounded');
  });

  it('says where the walk went past code without frame pointers', () => {
    const lines = frameLines([frames[0], { ...frames[2], afterGap: true }]);
    assert.deepStrictEqual(lines, ['uv_fs_close+180 (node)', '… (frames of code that keeps no frame pointer: not shown)', 'closeTwice (/a.js:39:20)  [JS, interpreted]']);
    assert.strictEqual(JSON.parse(renderStacksJson({ ...model, threads: [{ tid: 42, frames: [{ ...frames[2], afterGap: true }], ended: 'x' }] })).threads[0].frames[0].afterGap, true);
  });

  it('says how a walk ended only where it ended inside V8\'s frames or at the bound', () => {
    assert.strictEqual(endWorthSaying({ frames, ended: 'a frame pointer that does not climb the stack' }), false);
    assert.strictEqual(endWorthSaying({ frames: frames.slice(0, 3), ended: 'a frame pointer that does not climb the stack' }), true);
    assert.strictEqual(endWorthSaying({ frames, ended: 'stopped at 256 frames' }), true);
  });

  it('text: the core, then each thread, main first, innermost frame first', () => {
    const text = renderStacksText(model);
    assert.match(text, /^core \/c\/core\.node\.42: PID 42 \(node\), 2 thread\(s\), V8 11\.3\.244\.8 in \/usr\/bin\/node\n\n/);
    assert.match(text, /thread 42 \(main\): 5 frame\(s\), 1 JavaScript, innermost first\n {2}uv_fs_close\+180 \(node\)\n/);
    assert.match(text, /thread 43: 3 frame\(s\), 1 JavaScript, innermost first\n(.*\n){3} {2}\(the walk ended at an unreadable frame pointer \(0x10\)\)\n$/);
  });

  it('JSON: a JavaScript frame by its fields, never parsed back from text', () => {
    const j = JSON.parse(renderStacksJson(model));
    assert.deepStrictEqual(j.threads[0].frames[2], {
      kind: 'js', text: 'closeTwice (/a.js:39:20)', pc: '0x3000', name: 'closeTwice', inferred: false, file: '/a.js', line: 39, column: 20, jsKind: 'function', tier: 'interpreted',
    });
    assert.strictEqual(j.threads[0].main, true);
    assert.strictEqual(j.threads[1].main, false);
  });
});

describe('stack: a file that is no Node core', () => {
  let dir;
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-stack-')); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (...args) => spawnSync(NODETRACE, ['stack', ...args], { encoding: 'utf8', timeout: 30000 });

  it('not an ELF file, not a core, missing: one line each, exit 1; no core named: exit 2', () => {
    const text = path.join(dir, 'text');
    fs.writeFileSync(text, 'hello\n');
    for (const [file, why] of [[text, /is not an ELF file \(not a core\)/], [process.execPath, /is an ELF file but not a core/], [path.join(dir, 'none'), /cannot read the core/]]) {
      const r = run(file);
      assert.strictEqual(r.status, 1, r.stderr);
      assert.match(r.stderr, why);
      assert.ok(r.stderr.trim().split('\n').length <= 2, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    const usage = run();
    assert.strictEqual(usage.status, 2, usage.stderr);
  });
});
