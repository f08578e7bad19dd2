'use strict';
// `nodetrace latency --paths --hosts` @tracer: fs work split by path and
// dns.lookup by host name, each counted as the target counted it, with a
// hostile path (quote, comma, newline, escape sequences) carried exactly in
// JSON and shown harmlessly in text, and a flood of distinct paths folded
// rather than kept. Target: test/targets/pool-names.js, under -c so that
// every operation is seen.
const assert = require('assert');
const path = require('path');
const { requireTracing, nodetrace, killStragglers, ROOT } = require('./support/harness');
const { binaryProbePoints, POOL } = require('../lib/latency/probe-points');
const { NAMES_SHOWN } = require('../lib/latency/report/named-kinds');

const TARGET = `${process.execPath} test/targets/pool-names.js`;
// Paths need not exist: a stat of a missing path runs on the pool all the same.
const HOSTILE = '/nonexistent/a",b\n\u001b[2J\u001b]0;pwned\u0007\u009b31m c';

// With -c the binary is read before it runs: the pool's functions must be in it.
function noPoolReason() {
  const found = binaryProbePoints(process.execPath);
  return POOL.every((n) => found.points[n]) ? null : `${process.execPath} has no symbols for libuv's pool functions`;
}

const doneOf = (text) => JSON.parse(/^done (\{.*\})$/m.exec(text)[1]);

describe('nodetrace latency --paths --hosts @tracer', function () {
  this.timeout(240000);
  before(function () { requireTracing(this, { also: noPoolReason }); });
  afterEach(killStragglers);

  it('splits fs work by path and dns.lookup by host name, each counted as the target counted it @core', async function () {
    const r = await nodetrace(['latency', '-c', TARGET, '--paths', '--hosts', '--json'],
      { env: { ROUNDS: '40', HOSTILE_PATHS: JSON.stringify([HOSTILE]) }, timeoutMs: 230000 });
    assert.strictEqual(r.code, 0, r.stderr);
    const own = doneOf(r.stderr);
    const kinds = JSON.parse(r.stdout).kinds;
    const list = () => kinds.map((k) => `${k.name} ${JSON.stringify(k.path || k.host || null)} (${k.count})`).join('; ');
    const expect = (name, field, value, count) => {
      const k = kinds.find((x) => x.name === name && x[field] === value);
      assert(k, `no ${name} ${JSON.stringify(value)} in ${list()}`);
      assert.strictEqual(k.count, count, `${name} ${JSON.stringify(value)}`);
      assert(k.breakdown && k.breakdown.run, `${name} ${value}: no breakdown`);
    };
    assert.strictEqual(Object.keys(own.stat).length, 3);
    for (const [p, n] of Object.entries(own.stat)) expect('fs.stat', 'path', p, n);
    for (const [p, n] of Object.entries(own.open)) expect('fs.open', 'path', p, n);
    assert.strictEqual(Object.keys(own.lookup).length, 2);
    for (const [h, n] of Object.entries(own.lookup)) expect('dns.lookup', 'host', h, n);
    // fs.close is on a file descriptor: its plain kind, one a round.
    const close = kinds.find((k) => k.name === 'fs.close');
    assert(close && !('path' in close) && close.count === own.open[path.join(ROOT, 'test', 'targets', 'pool-names.js')], list());
  });

  it('folds a flood of distinct paths into "(other paths)", counting every operation, and shows a hostile path harmlessly', async function () {
    const distinct = 1500;   // more than the program keeps (1,024)
    const r = await nodetrace(['latency', '-c', TARGET, '--paths'],
      { env: { ROUNDS: '5', DISTINCT: String(distinct), HOSTILE_PATHS: JSON.stringify([HOSTILE]) }, timeoutMs: 230000 });
    assert.strictEqual(r.code, 0, r.stderr);
    // The target's own "done" line shares our stdout (-c, text): the report is the rest.
    const report = r.stdout.split('\n').filter((l) => !l.startsWith('done ')).join('\n');
    const own = doneOf(r.stdout);
    // eslint-disable-next-line no-control-regex
    assert(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(report), 'no control character reaches the terminal');
    assert(report.split('\n').includes('fs.stat /nonexistent/a",b\\x0a\\x1b[2J\\x1b]0;pwned\\x07\\u009b31m c'), 'the hostile path, on one line');
    // Every fs.stat heading, and the count under it.
    const stats = [...report.matchAll(/^fs\.stat (.*)\n(?:.*\n)*? {2}count (\d+),/gm)]
      .map((m) => ({ name: m[1], count: Number(m[2]) }));
    assert(stats.length <= NAMES_SHOWN + 1, `${stats.length} fs.stat kinds`);
    const other = stats.find((s) => s.name === '(other paths)');
    assert(other, stats.map((s) => s.name).join('; '));
    const made = Object.values(own.stat).reduce((a, b) => a + b, 0) + own.distinct;
    assert.strictEqual(own.distinct, distinct);
    assert.strictEqual(stats.reduce((s, x) => s + x.count, 0), made, 'every stat counted once');
  });
});
