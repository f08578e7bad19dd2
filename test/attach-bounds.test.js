'use strict';
// lib/tracer/attach-bounds.js: every bound on attaching in one table, and
// no other module with a bound of its own.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { ATTACH_BOUNDS_MS, attachBoundMs } = require('../lib/tracer/attach-bounds');

describe('attach bounds', function () {
  const bpftrace = { name: 'bpftrace', version: '0.17.0' };
  const dtrace = { name: 'dtrace', flavor: 'oracle', version: '2.0' };

  it('gives each command its row, USDT commands more per library, DTrace for Linux its own', function () {
    assert.strictEqual(attachBoundMs(bpftrace), ATTACH_BOUNDS_MS.default);
    assert.strictEqual(attachBoundMs(bpftrace, { command: 'latency' }), ATTACH_BOUNDS_MS.latency);
    assert.strictEqual(attachBoundMs(bpftrace, { command: 'gc' }), ATTACH_BOUNDS_MS.gc);
    assert.strictEqual(attachBoundMs(bpftrace, { command: 'snoop', libraries: 3 }), ATTACH_BOUNDS_MS.default + 2 * ATTACH_BOUNDS_MS.usdtPerLibrarySnoop);
    assert.strictEqual(attachBoundMs(bpftrace, { command: 'http', libraries: 1 }), ATTACH_BOUNDS_MS.default);
    assert.strictEqual(attachBoundMs(bpftrace, { command: 'httpWire' }), ATTACH_BOUNDS_MS.httpWire);
    const { planWire } = require('../lib/http/wire-plan');
    assert.strictEqual(planWire({ ...bpftrace, path: '/usr/bin/bpftrace' }, 4242).attachTimeoutMs, ATTACH_BOUNDS_MS.httpWire, 'the wire\'s plan carries its row');
    assert.strictEqual(attachBoundMs(bpftrace, { command: 'probes', sites: 4 }), ATTACH_BOUNDS_MS.default + 3 * ATTACH_BOUNDS_MS.usdtPerSiteProbes);
    assert.strictEqual(attachBoundMs(dtrace, { command: 'latency' }), ATTACH_BOUNDS_MS.dtraceForLinux);
  });

  it('is the only place in lib/ that sets one', function () {
    const lib = path.join(__dirname, '..', 'lib');
    const files = fs.readdirSync(lib, { recursive: true }).filter((f) => f.endsWith('.js') && f !== path.join('tracer', 'attach-bounds.js'));
    // (How often progress is looked at is no bound.)
    const found = files.filter((f) => /ATTACH_(?!POLL)\w*MS\s*=\s*\d|attachTimeoutMs\s*[:=]\s*\d/.test(fs.readFileSync(path.join(lib, f), 'utf8')));
    assert.deepStrictEqual(found, []);
  });
});
