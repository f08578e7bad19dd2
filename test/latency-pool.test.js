'use strict';
// `nodetrace latency` sees the whole of libuv's thread pool @tracer: fs,
// dns.lookup, zlib, crypto and an add-on (sqlite3) in one process, each
// named as its users know it and counted as the process counted itself; and
// a pool kept saturated by one kind of work is reported so, naming it.
const assert = require('assert');
const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { tracePoolMix, checkPoolMix } = require('./support/pool-mix');
const { findProbePoints, POOL } = require('../lib/latency/probe-points');

// The official build's libuv keeps its symbols; a stripped one has no pool
// probes (test/node-builds.test.js checks that it says so).
function poolUnavailableReason(pid) {
  const found = findProbePoints(pid);
  const missing = POOL.filter((n) => !found.points[n]);
  return missing.length ? `this node's libuv has no symbols for ${missing.join(', ')}` : null;
}

describe('nodetrace latency: the whole thread pool @tracer', function () {
  this.timeout(180000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('names fs, dns.lookup, zlib, crypto and sqlite3 work as users know it, counted as the target counted @core', async function () {
    const { report, own } = await tracePoolMix();
    checkPoolMix(report, own);
  });

  describe('a pool of 2 threads kept busy by crypto.pbkdf2 while fs.stat waits behind it', function () {
    let target;
    let json;
    let text;
    before(async function () {
      target = await startTarget('pool-saturate.js', { env: { UV_THREADPOOL_SIZE: '2', ITERATIONS: '20000' } });
      const reason = poolUnavailableReason(target.pid);
      if (reason) {
        if (process.env.CI) throw new Error(reason);
        this.skip(reason);
      }
      const j = await nodetrace(['latency', '-p', String(target.pid), '-d', '4', '--json'], { timeoutMs: 170000 });
      assert.strictEqual(j.code, 0, j.stderr);
      json = JSON.parse(j.stdout);
      const t = await nodetrace(['latency', '-p', String(target.pid), '-d', '4'], { timeoutMs: 170000 });
      assert.strictEqual(t.code, 0, t.stderr);
      text = t.stdout;
    });
    after(() => stopTarget(target));

    it('says the pool was saturated, by what, with 2 threads and a queue', function () {
      const pool = json.pool;
      assert.strictEqual(pool.saturated, true, JSON.stringify(pool));
      assert.strictEqual(pool.threads, 2, JSON.stringify(pool));
      assert(pool.waiting_share >= 0.5, `waiting ${pool.waiting_share}`);
      assert.strictEqual(pool.run_share_by_kind[0].name, 'crypto.pbkdf2', JSON.stringify(pool.run_share_by_kind));
      assert(pool.queued_at_start.p50 >= 1, JSON.stringify(pool.queued_at_start));
      const stat = json.kinds.find((k) => k.name === 'fs.stat');
      assert(stat && stat.breakdown.queue_wait.p50 > stat.breakdown.run.p50 * 10, 'fs.stat waits behind the pbkdf2 work');
    });

    it('says so in one line of the text report', function () {
      assert.match(text, /^ {2}the thread pool was saturated \d+% of the time: 2 threads, mostly crypto\.pbkdf2; consider UV_THREADPOOL_SIZE/m);
    });
  });
});
