'use strict';
// The sample-time capture prototype (bench/v8-frame-sample.bt, wired into no
// command) under the bpftrace being tested (scripts/test-matrix.sh runs it
// under 0.17, 0.23 and 0.27): it must load, walk the frame pointers in
// profile:hz, and capture SharedFunctionInfo pointers that lib/v8 names as
// the hot function and its callers, at the positions the target's own V8
// gives.
const assert = require('assert');
const { requireTracing } = require('./support/harness');
const { detectBpftrace } = require('../lib/tracer/detect');
const { sample } = require('../bench/v8-frame-sample');

describe('V8 frames captured at sample time (prototype) @tracer @core', function () {
  this.timeout(120000);
  before(function () { requireTracing(this); });

  it('names the hot function and its callers from the SFIs it captured', async function () {
    const bpftrace = detectBpftrace().path;
    const r = await sample({ bpftrace, seconds: 3 });
    console.log(`      ${r.samples} samples, ${r.probeNsAvg} ns a sample on average, up to ${r.maxFrames} frames`);
    assert.ok(r.samples >= 20, `${r.samples} samples`);
    assert.ok(r.hotLoopOnTop >= r.samples * 0.8, `${r.hotLoopOnTop} of ${r.samples} samples name hotLoop first`);
    assert.ok(r.wholeChain >= r.samples * 0.8, `${r.wholeChain} of ${r.samples} samples hold the whole chain`);
    const hot = r.named.find((x) => x.name === 'hotLoop');
    const truth = r.truth.find((t) => t.name === 'hotLoop');
    assert.deepStrictEqual([hot.line, hot.column], [truth.line + 1, truth.column + 1]);
  });

  it('walks deeper than unroll allows with a bounded loop', async function () {
    const bpftrace = detectBpftrace().path;
    const r = await sample({ bpftrace, seconds: 2, loop: 'while', depth: 200, stack: 250 });
    assert.ok(r.samples >= 10, `${r.samples} samples`);
    assert.strictEqual(r.maxFrames, 200);
    assert.ok(r.hotLoopOnTop >= r.samples * 0.8, `${r.hotLoopOnTop} of ${r.samples}`);
  });
});
