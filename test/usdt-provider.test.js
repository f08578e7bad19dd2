'use strict';
// node-dtrace-provider's API semantics, without a tracer attached.
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { tempRoot } = require('./targets/usdt-harness');

describe('usdt: provider API (no tracer)', function () {
  this.timeout(20000);
  let root;
  let usdt;
  let savedDir;
  before(function () {
    root = tempRoot('usdt-api');
    savedDir = process.env.NODETRACE_USDT_DIR;
    process.env.NODETRACE_USDT_DIR = path.join(root, 'lib');
    usdt = require('../lib/usdt');
  });
  after(function () {
    if (savedDir === undefined) delete process.env.NODETRACE_USDT_DIR; else process.env.NODETRACE_USDT_DIR = savedDir;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('creates providers and probes as dtrace-provider does', function () {
    assert.throws(() => usdt.createDTraceProvider(), TypeError);
    assert.throws(() => usdt.createDTraceProvider('x', 42), TypeError);
    const dtp = usdt.createDTraceProvider('nt_api', 'mod');
    const p = dtp.addProbe('p1', 'int', 'char *');
    assert.strictEqual(dtp.p1, p);
    assert.strictEqual(p.__prov__, dtp);
    assert.ok(!Object.keys(p).includes('__prov__'));
    assert.throws(() => usdt.createDTraceProvider('nt_api').enable(), /no probes defined/);
  });

  it('never runs callbacks unless a tracer enabled the probe', function () {
    const dtp = usdt.createDTraceProvider('nt_api');
    const p = dtp.addProbe('p1', 'int');
    let calls = 0;
    const cb = () => { calls++; return [1]; };
    assert.strictEqual(p.fire(cb), undefined, 'before enable');
    dtp.enable();
    dtp.enable();   // again: not an error
    assert.strictEqual(p.fire(cb), undefined);
    assert.strictEqual(dtp.fire('p1', cb), true, 'provider.fire: the probe exists');
    assert.strictEqual(dtp.fire('nope', cb), undefined);
    dtp.disable();
    assert.strictEqual(p.fire(cb), undefined);
    assert.strictEqual(calls, 0);
    assert.throws(() => p.fire('not a function'), /Must give probe value callback/);
    assert.throws(() => dtp.fire(1, cb), /Must give probe name/);
    assert.throws(() => dtp.fire('p1'), /Must give probe value callback/);
  });

  it('keeps the first probe of a name; removeProbe() removes it', function () {
    const dtp = usdt.createDTraceProvider('nt_api');
    const first = dtp.addProbe('p', 'int');
    const second = dtp.addProbe('p', 'char *');
    assert.strictEqual(dtp.p, second);
    assert.strictEqual(dtp.removeProbe(first), true);
    assert.throws(() => dtp.removeProbe(first), /failed to remove probe/);
  });

  it('converts values like dtrace-provider', function () {
    const { toArg } = require('../lib/usdt/provider');
    assert.deepStrictEqual(['int', 'int', 'int', 'int', 'int'].map((k, i) => toArg(k, [undefined, '12', 5, 10n, null][i])), [0, 12, 5, 10n, 0]);
    assert.deepStrictEqual([2 ** 31, -1, 2n ** 32n + 7n].map((v) => toArg('int32', v)), [-(2 ** 31), -1, 7]);
    assert.deepStrictEqual([undefined, null, 1, 'é'].map((v) => toArg('string', v)), ['undefined', 'null', '1', 'é']);
    const circular = {};
    circular.self = circular;
    assert.deepStrictEqual([undefined, { a: [1] }, () => 1, circular].map((v) => toArg('json', v)),
      ['undefined', '{"a":[1]}', 'undefined', '{ "error": "stringify failed" }']);
  });

  it('shares one probe library between providers with the same definition', function () {
    if (!usdt.status().native) this.skip();
    const a = usdt.createDTraceProvider('nt_same');
    a.addProbe('x', 'int');
    a.enable();
    const b = usdt.createDTraceProvider('nt_same');
    b.addProbe('x', 'int');
    b.enable();
    assert.deepStrictEqual(usdt.status().libraries.filter((l) => fs.readFileSync(l).includes('nt_same')).length, 1);
    assert.deepStrictEqual(usdt.loadedProbeLibraries(process.pid).filter((l) => l.startsWith(root)).length,
      usdt.status().libraries.length);
  });
});

describe('usdt: on DTrace systems', function () {
  this.timeout(20000);
  it('hands over to the dtrace-provider package and register.js does nothing', function () {
    const out = execFileSync(process.execPath, ['-e', `
      Object.defineProperty(process, 'platform', { value: 'darwin' });
      const Module = require('module');
      const before = Module._resolveFilename;
      require(${JSON.stringify(path.join(__dirname, '..', 'register.js'))});
      const usdt = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'usdt'))});
      const dtp = usdt.createDTraceProvider('x');
      dtp.addProbe('p', 'int').fire(() => { throw new Error('called'); });
      dtp.enable();
      console.log(JSON.stringify({ same: Module._resolveFilename === before,
        real: usdt.DTraceProvider === require('dtrace-provider').DTraceProvider, status: usdt.status() }));
    `], { encoding: 'utf8' });
    const r = JSON.parse(out);
    assert.strictEqual(r.same, true);
    assert.strictEqual(r.real, true);
    assert.strictEqual(r.status.native, false);   // this package's stub, on Linux
  });
});
