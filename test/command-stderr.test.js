'use strict';
// A -c command shares the tracer's stderr (bpftrace runs it): its lines must
// reach the user as it wrote them, not be kept as the tracer's complaints,
// on every bpftrace tier (0.27 also says "Attached N probes" there).
// @tracer: the real tracer runs the command.
const assert = require('assert');
const { requireTracing, nodetrace, killStragglers } = require('./support/harness');

describe('a -c command\'s stderr @tracer', function () {
  this.timeout(120000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('passes a running command\'s stderr lines on, in order, and traces its work @core', async function () {
    const r = await nodetrace(['latency', '-c', `${process.execPath} test/targets/stderr-talker.js`, '--json'], { timeoutMs: 110000 });
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stderr.split('\n');
    const first = lines.indexOf('talker: first line on stderr');
    const last = lines.indexOf('talker: 20 stats done');
    assert(first >= 0 && last > first, `the command's two lines, in order, in:\n${r.stderr}`);
    // Its stdout too, on stderr beside --json.
    assert(lines.includes('talker: on stdout'), r.stderr);
    assert.doesNotMatch(r.stdout, /talker:/);
    const stat = JSON.parse(r.stdout).kinds.find((k) => k.name === 'fs.stat');
    assert(stat, `no fs.stat in ${r.stdout}`);
    assert.strictEqual(stat.count, 20, 'each of the command\'s stats');
  });

  it('shows why a command failed at once (node\'s "Cannot find module") @core', async function () {
    const r = await nodetrace(['latency', '-c', `${process.execPath} test/targets/no-such-target.js`], { timeoutMs: 110000 });
    assert.match(r.stderr, /Error: Cannot find module '.*no-such-target\.js'/);
    assert.match(r.stderr, /no thread-pool work completed/);
  });
});
