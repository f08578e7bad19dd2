'use strict';
// A stopped process walked as ebadf's hit and `nodetrace stack` walk it
// (lib/v8/walk.js): the functions an optimized frame's code inlined where
// it ran are put above it, as lib/v8/inlining.js reads them, on every build
// (V8 13.6 and 14.6: the code found through the dispatch table, 14.6's
// through the stopped thread's own isolate).
const assert = require('assert');
const { requireTracing, functionAt, escapeRegExp } = require('./support/harness');
const { nodeBuilds, missingReason } = require('./support/node-builds');
const { findOnPath } = require('../lib/tracer/detect');
const { capture } = require('./support/inlining-capture');

for (const build of nodeBuilds('all')) {
  describe(`V8 inlining in a stopped process: ${build.label} @tracer`, function () {
    it('stopped in an optimized arrow function: the function inlined at its pc above it, named at its own line:column', async function () {
      this.timeout(120000);
      requireTracing(this, { also: () => missingReason(build) || (findOnPath('gdb') ? null : 'gdb is not installed (make deps installs it)') });
      const fx = await capture({ node: build.node, label: build.name });
      const at = ['scale', 'mix', 'clampTo'].map((f) => `${f} \\(.*test/targets${escapeRegExp(functionAt('profile-inline.js', f, ''))}\\)`);
      assert.match(fx.made.inlined[0], new RegExp(`^(${at.join('|')})$`));
      assert.deepStrictEqual(fx.made.walked, fx.made.inlined);
    });
  });
}
