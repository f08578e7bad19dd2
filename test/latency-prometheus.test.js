'use strict';
// `nodetrace latency --prometheus` end to end @tracer: the real bpftrace on
// a target that does counted bursts of fs.stat and crypto.pbkdf2
// (test/targets/pool-bursts.js), its endpoint scraped with plain http.get
// while it traces and by a real Prometheus (Debian's, `make prometheus`)
// started on 127.0.0.1 scraping every second; then Ctrl-C and the usual
// report. One trace, asserted by each test.
const assert = require('assert');
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { readExposition, samplesOf, checkHistogram } = require('./support/prometheus-text');
const { get, waitFor: waitWithin } = require('./support/live-trace');

// Polls `probe` (-> a value, or null for not yet) until it answers or WAIT_BOUND_MS passes.
const waitFor = (probe, boundMs = WAIT_BOUND_MS) => waitWithin(probe, boundMs);

// Attach and detach on a loaded host (test/latency.test.js says why).
const TRACE_BOUND_MS = 110000;
// Each dump is printed every second and Prometheus scrapes every second;
// a burst is done in well under that.
const WAIT_BOUND_MS = 20000;
const BURST = 300;
const KINDS = ['fs.stat', 'crypto.pbkdf2'];
const FAMILIES = ['nodetrace_latency_seconds', 'nodetrace_latency_queue_wait_seconds', 'nodetrace_latency_run_seconds', 'nodetrace_latency_loop_wait_seconds'];

function countOf(samples, kind) {
  const c = samplesOf(samples, 'nodetrace_latency_seconds_count', kind);
  return c.length ? c[0].value : 0;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// A real Prometheus on 127.0.0.1, scraping `target` (host:port) every
// second, its files in `dir`: -> { child, api(query path) } once ready, or
// { reason } where it is not installed.
async function startPrometheus(dir, target) {
  if (spawnSync('prometheus', ['--version']).status !== 0) return { reason: 'prometheus is not installed (make prometheus)' };
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    'scrape_configs:',
    '  - job_name: nodetrace',
    `    static_configs: [{ targets: ['${target}'] }]`,
    '',
  ].join('\n'));
  let log = '';
  const child = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => { log = (log + c).slice(-4000); });
  const base = `http://127.0.0.1:${port}`;
  const ready = await waitFor(async () => ((await get(`${base}/-/ready`)).status === 200 ? true : null));
  assert.ok(ready, `prometheus was not ready in ${WAIT_BOUND_MS / 1000} s: ${log}`);
  const api = async (query) => {
    const r = await get(`${base}/api/v1/${query}`);
    const json = JSON.parse(r.body);
    assert.strictEqual(json.status, 'success', r.body);
    return json.data;
  };
  return { child, api, log: () => log };
}

describe('nodetrace latency --prometheus @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 4 * WAIT_BOUND_MS);
  let target;
  let dir;
  let prom = null;
  const bursts = [];
  const scrapes = [];
  let report;
  const fromPrometheus = {};

  before(async function () {
    requireTracing(this);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-prometheus-'));
    target = await startTarget('pool-bursts.js', { env: { BURST: String(BURST) } });
    let said = '';
    target.stdout.setEncoding('utf8');
    target.stdout.on('data', (c) => { said += c; });
    const burst = async (n) => {
      target.kill('SIGUSR2');
      const m = await waitFor(async () => new RegExp(`^burst ${n}: fs.stat (\\d+) crypto.pbkdf2 (\\d+)$`, 'm').exec(said));
      assert.ok(m, `the target finished burst ${n}: ${said}`);
      return { 'fs.stat': Number(m[1]), 'crypto.pbkdf2': Number(m[2]) };
    };
    let tracer = null;
    let err = '';
    let tracing = null;
    const said_tracing = new Promise((resolve) => { tracing = resolve; });
    const run = nodetrace(['latency', '-p', String(target.pid), '--prometheus', '127.0.0.1:0', '--json'], {
      timeoutMs: TRACE_BOUND_MS + 3 * WAIT_BOUND_MS,
      onSpawn: (child) => {
        tracer = child;
        child.stderr.on('data', (c) => { err += c; if (/^nodetrace: tracing /m.test(err)) tracing(); });
      },
    });
    await Promise.race([said_tracing, run]);
    const where = /^nodetrace: serving metrics at http:\/\/(127\.0\.0\.1:\d+)\/metrics$/m.exec(err);
    assert.ok(where, err);
    const url = `http://${where[1]}/metrics`;
    prom = await startPrometheus(dir, where[1]);
    // Scraped until the endpoint shows what the target counted (dumps come every second), then that one.
    const scrapeUntil = async (due) => {
      let last = null;
      const samples = await waitFor(async () => {
        last = await get(url);
        const s = readExposition(last.body);
        return KINDS.every((k) => countOf(s, k) === due[k]) ? s : null;
      });
      return { status: last.status, type: last.type, samples: samples || readExposition(last.body) };
    };
    for (const n of [1, 2]) {
      bursts.push(await burst(n));
      scrapes.push(await scrapeUntil(bursts[n - 1]));
    }
    // Prometheus has scraped the last counts: its answers, then Ctrl-C.
    if (prom.api) {
      const last = bursts[1];
      const seen = await waitFor(async () => {
        const data = await prom.api(`query?query=${encodeURIComponent('nodetrace_latency_seconds_count{kind="fs.stat"}')}`);
        return data.result.length && Number(data.result[0].value[1]) === last['fs.stat'] ? true : null;
      });
      assert.ok(seen, `prometheus never saw ${last['fs.stat']} fs.stat: ${prom.log()}`);
      for (const kind of KINDS) {
        const q = `histogram_quantile(0.99, nodetrace_latency_seconds_bucket{kind="${kind}"})`;
        fromPrometheus[kind] = (await prom.api(`query?query=${encodeURIComponent(q)}`)).result;
      }
      fromPrometheus.series = await prom.api(`series?${encodeURIComponent('match[]')}=${encodeURIComponent('nodetrace_latency_operations_total')}`);
    }
    tracer.kill('SIGINT');
    report = await run;
  });

  after(async function () {
    stopTarget(target);
    if (prom && prom.child) {
      prom.child.kill('SIGTERM');
      if (prom.child.exitCode === null) await new Promise((resolve) => { prom.child.once('exit', resolve); setTimeout(resolve, 5000); });
      if (prom.child.exitCode === null && prom.child.signalCode === null) prom.child.kill('SIGKILL');
    }
    await killStragglers.call(this);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves each kind\'s running histograms, its _count growing by exactly what the target counted', function () {
    for (const [i, scrape] of scrapes.entries()) {
      assert.deepStrictEqual([scrape.status, scrape.type], [200, 'text/plain; version=0.0.4; charset=utf-8']);
      assert.deepStrictEqual(KINDS.map((k) => countOf(scrape.samples, k)), KINDS.map((k) => bursts[i][k]), `after burst ${i + 1}`);
      for (const family of FAMILIES) for (const kind of KINDS) checkHistogram(scrape.samples, family, kind);
      for (const s of scrape.samples) assert.strictEqual(s.labels.pid, String(target.pid), JSON.stringify(s));
    }
    assert.deepStrictEqual(KINDS.map((k) => bursts[1][k] - bursts[0][k]), [BURST, BURST / 10]);
  });

  it('prints the usual report at Ctrl-C, its counts those the endpoint served last', function () {
    assert.strictEqual(report.code, 0, report.stderr);
    const json = JSON.parse(report.stdout);
    const counted = KINDS.map((k) => json.kinds.find((x) => x.name === k).count);
    assert.deepStrictEqual(counted, KINDS.map((k) => bursts[1][k]));
  });

  it('a real Prometheus scraping it every second: histogram_quantile(0.99) is nodetrace\'s own p99 to within one bucket, the series labelled pid and kind', function () {
    if (prom.reason) {
      if (process.env.CI) throw new Error(prom.reason);
      console.log(`      skipped: ${prom.reason}`);
      this.skip();
    }
    const json = JSON.parse(report.stdout);
    // hist()'s buckets are powers of two microseconds: the bucket of a value is its log2's floor.
    const bucket = (us) => Math.floor(Math.log2(Math.max(us, 1)));
    for (const kind of KINDS) {
      const ours = json.kinds.find((k) => k.name === kind);
      assert.strictEqual(ours.unit, 'us');
      assert.strictEqual(fromPrometheus[kind].length, 1, JSON.stringify(fromPrometheus[kind]));
      const theirsUs = Number(fromPrometheus[kind][0].value[1]) * 1e6;
      assert.ok(Math.abs(bucket(theirsUs) - bucket(ours.p99)) <= 1,
        `${kind}: Prometheus's p99 ${theirsUs} µs, nodetrace's ${ours.p99} µs`);
    }
    const labels = fromPrometheus.series.map((s) => Object.keys(s).sort().join(',')).sort();
    assert.deepStrictEqual(labels, KINDS.map(() => '__name__,instance,job,kind,pid'));
    assert.deepStrictEqual(fromPrometheus.series.map((s) => s.kind).sort(), [...KINDS].sort());
    for (const s of fromPrometheus.series) assert.strictEqual(s.pid, String(target.pid));
  });
});
