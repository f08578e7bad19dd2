'use strict';
// register.js + stock bunyan: bunyan's log-* probes fire on Linux, and a
// tracer attached to the shared probe library by path sees debug records of
// a logger at level info, only while it is attached.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { HTTP_PROVIDER } = require('../lib/http/probes');
const { ASYNC_PROVIDER } = require('../lib/async/probes');
const usdt = require('../lib/usdt');
const { Target, startBpftrace, bpftraceUnavailable, tempRoot, eventually } = require('./targets/usdt-harness');
const { requireTracing } = require('./support/harness');

const REGISTER = path.join(__dirname, '..', 'register.js');
const TARGET = path.join(__dirname, 'targets', 'usdt-bunyan.js');

describe('usdt: register.js with stock bunyan @tracer', function () {
  this.timeout(60000);
  let root;
  let env;
  let target;

  before(async function () {
    requireTracing(this, { also: bpftraceUnavailable });
    root = tempRoot('usdt-bunyan');
    env = { NODETRACE_USDT_DIR: path.join(root, 'lib') };
    target = await Target.start({ env, script: TARGET, execArgv: ['-r', REGISTER] });
  });

  after(async function () {
    if (target) await target.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("resolves require('dtrace-provider') to nodetrace's provider", async function () {
    const r = await target.request('status');
    assert.strictEqual(r.resolved, path.join(__dirname, '..', 'lib', 'usdt', 'index.js'));
    assert.strictEqual(r.status.native, true);
    const expected = usdt.probeLibraryPath(usdt.BUNYAN_PROVIDER.name, usdt.BUNYAN_PROVIDER.probes, { env });
    // register.js also loads nodetrace's own HTTP and async probes
    // (lib/http/probes.js, lib/async/probes.js): their files are not bunyan's.
    const own = [HTTP_PROVIDER, ASYNC_PROVIDER].map((p) => usdt.probeLibraryPath(p.name, p.probes, { env }));
    assert.deepStrictEqual(r.status.libraries.filter((f) => !own.includes(f)), [expected], 'bunyan and the same definition share one file');
  });

  it('log.debug() records reach bpftrace only while it is attached', async function () {
    const lib = usdt.probeLibraryPath(usdt.BUNYAN_PROVIDER.name, usdt.BUNYAN_PROVIDER.probes, { env });
    let r = await target.request('debug', { n: 1, msg: 'before attach' });
    assert.strictEqual(r.probeRecords, 0, 'no record built for the probe while nobody listens');

    // One record of up to 199 bytes (bpftrace 0.17's maximum string size).
    const bt = await startBpftrace(['-e', `usdt:${lib}:bunyan:log-* { printf("%s %s\\n", probe, str(arg0)); }`],
      { env: { BPFTRACE_STRLEN: '200' } });
    try {
      await target.request('waitEnabled');
      r = await target.request('debug', { n: 2, msg: 'while attached' });
      assert.strictEqual(r.probeRecords, 1);
      await target.request('info', { n: 3, msg: 'info too' });
      await bt.waitFor(/log-info .*"info too"/);
      await bt.waitFor(/log-debug .*"while attached"/);
    } finally {
      await bt.stop();
    }
    const line = bt.stdout.split('\n').find((l) => l.includes('while attached'));
    assert.ok(line.startsWith(`usdt:${lib}:bunyan:log-debug {`), line);
    const rec = JSON.parse(line.slice(line.indexOf('{')));
    assert.strictEqual(rec.name, 'usdt-test');
    assert.strictEqual(rec.level, 20);
    assert.strictEqual(rec.n, 2);
    assert.ok(!bt.stdout.includes('before attach'));
    assert.ok(!target.stdout.includes('while attached'), 'debug records are not written to the info-level stream');

    // Detached again: no record is built for the probe any more.
    await eventually(async () => {
      const a = (await target.request('debug', { n: 4, msg: 'after' })).probeRecords;
      const b = (await target.request('debug', { n: 5, msg: 'after' })).probeRecords;
      return a === b;
    }, { timeout: 20000 });
  });
});
