'use strict';
// `nodetrace latency --prometheus` end to end @tracer: the real bpftrace on
// a target that does counted bursts of fs.stat and crypto.pbkdf2
// (test/targets/pool-bursts.js), its endpoint scraped with plain http.get
// while it traces, each kind's _count held to the target's own count, then
// Ctrl-C and the usual report. One trace.
const assert = require('assert');
const http = require('http');
const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { readExposition, samplesOf, checkHistogram } = require('./support/prometheus-text');

// Attach and detach on a loaded host (test/latency.test.js says why).
const TRACE_BOUND_MS = 110000;
// Each dump is printed every second; a burst of BURST fs.stat is done in well under that.
const SCRAPE_BOUND_MS = 20000;
const BURST = 300;
const FAMILIES = ['nodetrace_latency_seconds', 'nodetrace_latency_queue_wait_seconds', 'nodetrace_latency_run_seconds', 'nodetrace_latency_loop_wait_seconds'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function scrape(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    }).on('error', reject);
  });
}

function countOf(samples, kind) {
  const c = samplesOf(samples, 'nodetrace_latency_seconds_count', kind);
  return c.length ? c[0].value : 0;
}

describe('nodetrace latency --prometheus @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 2 * SCRAPE_BOUND_MS);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('serves each kind\'s running histograms while tracing, its _count growing by what the target counted, and reports at Ctrl-C', async function () {
    const target = await startTarget('pool-bursts.js', { env: { BURST: String(BURST) } });
    let said = '';
    target.stdout.setEncoding('utf8');
    target.stdout.on('data', (c) => { said += c; });
    const burst = async (n) => {
      target.kill('SIGUSR2');
      const until = Date.now() + SCRAPE_BOUND_MS;
      let m = null;
      while (!(m = new RegExp(`^burst ${n}: fs.stat (\\d+) crypto.pbkdf2 (\\d+)$`, 'm').exec(said)) && Date.now() < until) await sleep(50);
      assert.ok(m, `the target finished burst ${n}: ${said}`);
      return { stat: Number(m[1]), pbkdf2: Number(m[2]) };
    };
    let tracer = null;
    let err = '';
    let seen = null;
    const tracing = new Promise((resolve) => { seen = resolve; });
    try {
      const run = nodetrace(['latency', '-p', String(target.pid), '--prometheus', '127.0.0.1:0', '--json'], {
        timeoutMs: TRACE_BOUND_MS + 2 * SCRAPE_BOUND_MS,
        onSpawn: (child) => {
          tracer = child;
          child.stderr.on('data', (c) => { err += c; if (/^nodetrace: tracing /m.test(err)) seen(); });
        },
      });
      await Promise.race([tracing, run]);
      const url = (/^nodetrace: serving metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(err) || [])[1];
      assert.ok(url, err);
      // A scrape until the dump shows what the target did (every second), then that one.
      const scrapeUntil = async (due) => {
        const until = Date.now() + SCRAPE_BOUND_MS;
        let last;
        do {
          last = await scrape(url);
          assert.strictEqual(last.status, 200);
          const samples = readExposition(last.body);
          if (countOf(samples, 'fs.stat') === due.stat && countOf(samples, 'crypto.pbkdf2') === due.pbkdf2) return samples;
          await sleep(200);
        } while (Date.now() < until);
        return readExposition(last.body);
      };
      const first = await burst(1);
      const a = await scrapeUntil(first);
      const second = await burst(2);
      const b = await scrapeUntil(second);
      // Exactly the target's counts (its work is all inside the window: it idles between bursts).
      assert.deepStrictEqual([countOf(a, 'fs.stat'), countOf(a, 'crypto.pbkdf2')], [first.stat, first.pbkdf2], 'after burst 1');
      assert.deepStrictEqual([countOf(b, 'fs.stat'), countOf(b, 'crypto.pbkdf2')], [second.stat, second.pbkdf2], 'after burst 2');
      assert.deepStrictEqual([second.stat - first.stat, second.pbkdf2 - first.pbkdf2], [BURST, BURST / 10]);
      for (const samples of [a, b]) {
        for (const family of FAMILIES) for (const kind of ['fs.stat', 'crypto.pbkdf2']) checkHistogram(samples, family, kind);
        for (const s of samples) assert.strictEqual(s.labels.pid, String(target.pid), JSON.stringify(s));
      }
      // Ctrl-C: the report as ever, its counts those the endpoint served last.
      tracer.kill('SIGINT');
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      const kind = (name) => json.kinds.find((k) => k.name === name);
      assert.deepStrictEqual([kind('fs.stat').count, kind('crypto.pbkdf2').count], [second.stat, second.pbkdf2]);
    } finally {
      stopTarget(target);
    }
  });
});
