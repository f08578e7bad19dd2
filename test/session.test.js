'use strict';
// How runTracer ends a bpftrace that misses a signal (bpftrace 0.17 loses one
// that lands while it is not blocked in epoll_wait: CI saw `latency -d 2`
// hang until killed). The tracer here is a script that acts out bpftrace's
// ending; see test/support/deaf-tracer.js.
const assert = require('assert');
const path = require('path');
const { runTracer } = require('../lib/tracer/session');

const DEAF = path.join(__dirname, 'support', 'deaf-tracer.js');
const quiet = { isTTY: false, write() {} };

function run(extra) {
  return runTracer({ file: process.execPath, args: [DEAF], durationSeconds: 0.3, statusStream: quiet, ...extra });
}

describe('runTracer: ending a tracer', function () {
  this.timeout(20000);

  it('says it again until the END marker shows, then lets the maps print whole', async function () {
    const r = await run({ resendEveryMs: 500 });
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert(r.timedOut);
    assert.match(r.stdout, /Tracing ended\.[\s\S]*@a: 1\n@b: 2\n@c: 3\n$/);
    assert.deepStrictEqual(r.errors, [], 'nothing sent after the marker');
  });

  it('sends one signal only once the marker shows, however long the maps take', async function () {
    const r = await run({ resendEveryMs: 300, env: { DEAF_TRACER_HEARS_FIRST: '1' } });
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert.match(r.stdout, /@c: 3\n$/);
    assert.deepStrictEqual(r.errors, [], 'nothing sent after the marker');
  });

  it('without resending (DTrace, which takes a second SIGINT as impatience), signals once', async function () {
    // The deaf tracer misses that one signal, so it is still running after
    // a while: end it by hand and check it was never told twice.
    let child = null;
    const pending = run({ onReady: (c) => { child = c; } });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert(child.exitCode === null, 'a missed SIGINT is not repeated');
    child.kill('SIGTERM'); // the second signal it hears: it ends and prints
    const r = await pending;
    assert.strictEqual(r.code, 0);
    assert.match(r.stdout, /@c: 3\n$/);
  });
});
