'use strict';
// latency --prometheus without a tracer: the live dumps taken from a real
// capture (test/fixtures/bpftrace-addon-latency-live.out, with its .cmd),
// rendered as Prometheus's text format, the endpoint's answers, and the
// address it listens on.
const assert = require('assert');
const fs = require('fs');
const http = require('http');
const path = require('path');
const { dumpSummary, renderMetrics, OTHER_KINDS } = require('../lib/latency/live-metrics');
const { LiveDumps, LIVE_BEGIN, LIVE_END } = require('../lib/prometheus/live-dumps');
const { admitKeys } = require('../lib/prometheus/histograms');
const { processLabels } = require('../lib/prometheus/live');
const { escapeLabelValue } = require('../lib/prometheus/exposition');
const { serveMetrics, LIMITS } = require('../lib/prometheus/server');
const { parseListen, urlOf } = require('../lib/prometheus/listen');
const { readExposition, samplesOf: find, checkHistogram } = require('./support/prometheus-text');

const CAPTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-addon-latency-live.out'), 'utf8');

function dumpsOf(text) {
  const dumps = [];
  const left = [];
  const taker = new LiveDumps((d) => dumps.push(d));
  for (const line of text.split('\n')) if (!taker.take(line)) left.push(line);
  return { dumps, left };
}

const render = (dump, o = {}) => renderMetrics(dumpSummary(dump), { labels: [['pid', '23004']], ...o });

describe('latency --prometheus: live dumps and their metrics', function () {
  const { dumps, left } = dumpsOf(CAPTURE);

  it('takes each dump the program printed between its markers, and no line of the report after it', function () {
    assert.strictEqual(dumps.length, 8);
    assert.ok(!left.includes(LIVE_BEGIN) && !left.includes(LIVE_END));
    // The report at Ctrl-C is untouched: its maps are all still there.
    const report = left.slice(left.indexOf('Tracing ended.'));
    assert.ok(report.some((l) => l.startsWith('@total_us[0x106]')), report.join('\n'));
  });

  it('counts each kind as the target counted it: fs.stat 1,000 and crypto.pbkdf2 100 after its two bursts', function () {
    const samples = readExposition(render(dumps[dumps.length - 1]).text);
    assert.deepStrictEqual(find(samples, 'nodetrace_latency_seconds_count', 'fs.stat').map((s) => s.value), [1000]);
    assert.deepStrictEqual(find(samples, 'nodetrace_latency_seconds_count', 'crypto.pbkdf2').map((s) => s.value), [100]);
    assert.deepStrictEqual(find(samples, 'nodetrace_latency_operations_total', 'fs.stat').map((s) => s.value), [1000]);
    for (const s of samples) assert.strictEqual(s.labels.pid, '23004');
  });

  it('gives every histogram cumulative buckets in increasing le, +Inf equal to _count, for total and each phase', function () {
    const samples = readExposition(render(dumps[dumps.length - 1]).text);
    const families = ['nodetrace_latency_seconds', 'nodetrace_latency_queue_wait_seconds', 'nodetrace_latency_run_seconds', 'nodetrace_latency_loop_wait_seconds'];
    for (const family of families) {
      for (const kind of ['fs.stat', 'crypto.pbkdf2']) {
        checkHistogram(samples, family, kind);
        assert.ok(find(samples, `${family}_sum`, kind)[0].value > 0);
      }
    }
    // The tracer's bucket [64, 128) µs of fs.stat ends at le 0.000128: 5 + 443 below it.
    const at = (le) => find(samples, 'nodetrace_latency_seconds_bucket', 'fs.stat', { le })[0].value;
    assert.deepStrictEqual([at('0.000064'), at('0.000128'), at('0.000256')], [5, 448, 838]);
  });

  it('never goes backwards from one dump to the next, and grows with the target\'s bursts', function () {
    const counts = dumps.map((d) => {
      const samples = readExposition(render(d).text);
      const c = find(samples, 'nodetrace_latency_seconds_count', 'fs.stat');
      return c.length ? c[0].value : 0;
    });
    for (let i = 1; i < counts.length; i++) assert.ok(counts[i] >= counts[i - 1], counts.join(' '));
    assert.strictEqual(counts[0], 0);
    assert.ok(counts.includes(500), counts.join(' '));
    assert.strictEqual(counts[counts.length - 1], 1000);
  });

  it('before the first dump, answers the families with no series', function () {
    const text = renderMetrics(null, { labels: [['pid', '1']] }).text;
    assert.deepStrictEqual(readExposition(text), []);
    assert.match(text, /^# TYPE nodetrace_latency_seconds histogram$/m);
  });

  it('shows a hostile kind name with controls visible and the format\'s quote, backslash and newline escaped', function () {
    const hostile = 'evil"\\\u001b[2J\u009b\u202e}x';
    const dump = dumps[dumps.length - 1].split('[0x106]').join(`[${hostile}]`);
    const text = render(dump).text;
    // eslint-disable-next-line no-control-regex -- no control character may reach a scraper or a terminal
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2028\u2029]/);
    const samples = readExposition(text);
    const kinds = new Set(samples.map((s) => s.labels.kind));
    assert.ok(kinds.has('evil"\\\\x1b[2J\\u009b\\u202e}x'), [...kinds].join(' | '));
    // A newline is made visible first (\x0a), and that backslash then escaped: no raw line break, ever.
    assert.strictEqual(escapeLabelValue('a"b\\c\nd'), 'a\\"b\\\\c\\\\x0ad');
  });

  it('gives the first kinds seen series of their own, up to the bound, the rest one "(other kinds)"', function () {
    const dump = dumps[dumps.length - 1];
    const first = render(dump, { maxKinds: 1 });
    assert.deepStrictEqual(first.admitted.length, 1);
    const samples = readExposition(first.text);
    const kinds = [...new Set(samples.map((s) => s.labels.kind))].sort();
    assert.deepStrictEqual(kinds, [OTHER_KINDS, first.admitted[0]].sort());
    // Admitted once, a kind keeps its series: later dumps fold only newcomers.
    assert.deepStrictEqual(admitKeys(['b'], ['a', 'b', 'c'], 2), ['b', 'a']);
    const again = render(dump, { maxKinds: 1, admitted: first.admitted });
    assert.deepStrictEqual(again.admitted, first.admitted);
    const total = (t) => readExposition(t).filter((s) => s.name === 'nodetrace_latency_seconds_count').reduce((n, s) => n + s.value, 0);
    assert.strictEqual(total(again.text), 1100);
  });

  it('never takes the report\'s own lines, even inside a dump', function () {
    const dumpsSeen = [];
    const taker = new LiveDumps((d) => dumpsSeen.push(d));
    assert.ok(taker.take(LIVE_BEGIN));
    assert.ok(taker.take('@total_us[0x106]: '));
    assert.strictEqual(taker.take('Tracing ended.'), false);
    assert.strictEqual(taker.take('@total_us[0x106]: '), false);
    assert.strictEqual(taker.take('Report printed.'), false);
    assert.deepStrictEqual([dumpsSeen, taker.abandoned], [[], 1]);
  });

  it('labels each series with the process\'s PID, and its container and pod where it has them', function () {
    assert.deepStrictEqual(processLabels({ pid: 7, container: null }), [['pid', '7']]);
    assert.deepStrictEqual(processLabels({ pid: 7, container: { id: 'abc', name: 'web' }, pod: { uid: 'u-1', name: null } }),
      [['pid', '7'], ['container', 'web'], ['pod', 'u-1']]);
  });

  it('drops a dump longer than its bound rather than hold it', function () {
    const dumpsSeen = [];
    const taker = new LiveDumps((d) => dumpsSeen.push(d), { maxLines: 3 });
    for (const line of [LIVE_BEGIN, 'a', 'b', 'c', 'd', 'e', LIVE_END, LIVE_BEGIN, 'a', LIVE_END]) assert.ok(taker.take(line));
    assert.deepStrictEqual(dumpsSeen, ['a\n']);
    assert.strictEqual(taker.overflowed, 1);
  });
});

describe('latency --prometheus: where it listens', function () {
  it('takes PORT, HOST:PORT and [IPv6]:PORT, the loopback address by default', function () {
    assert.deepStrictEqual(parseListen('9464'), { host: '127.0.0.1', port: 9464 });
    assert.deepStrictEqual(parseListen('0.0.0.0:9464'), { host: '0.0.0.0', port: 9464 });
    assert.deepStrictEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
    assert.strictEqual(urlOf({ host: '::1', port: 80 }), 'http://[::1]:80/metrics');
  });

  it('refuses anything else as a usage error', function () {
    for (const bad of ['', 'x', '65536', '::1:80', 'a b:80', '$(id):80', 'host:', ':80', '-1']) {
      assert.throws(() => parseListen(bad), (err) => err.name === 'UsageError', bad);
    }
  });
});

describe('latency --prometheus: the endpoint', function () {
  let served;
  const ask = (o) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: served.address.port, path: '/metrics', ...o }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });

  let fail = false;
  before(async function () {
    served = await serveMetrics({ host: '127.0.0.1', port: 0 }, () => {
      if (fail) throw new Error('unreadable dump');
      return 'm 1\n';
    });
  });
  after(async function () {
    if (served) await served.close();
  });

  it('answers GET /metrics with the text format, anything else with an error and no metrics', async function () {
    const ok = await ask({});
    assert.deepStrictEqual([ok.status, ok.type, ok.body], [200, 'text/plain; version=0.0.4; charset=utf-8', 'm 1\n']);
    assert.strictEqual((await ask({ path: '/' })).status, 404);
    assert.strictEqual((await ask({ path: '/metrics/../x' })).status, 404);
    assert.strictEqual((await ask({ method: 'DELETE' })).status, 405);
    const withBody = await ask({ method: 'GET', headers: { 'Content-Length': '5' }, body: 'hello' });
    assert.strictEqual(withBody.status, 400);
    assert.doesNotMatch(withBody.body, /m 1/);
  });

  it('answers 500 where the metrics cannot be rendered, and goes on serving', async function () {
    fail = true;
    try {
      assert.strictEqual((await ask({})).status, 500);
    } finally {
      fail = false;
    }
    assert.strictEqual((await ask({})).status, 200);
  });

  it('refuses a request head past its bound', async function () {
    const big = await ask({ headers: { 'X-Big': 'x'.repeat(LIMITS.headerBytes + 1) } });
    assert.strictEqual(big.status, 431);
  });

  it('says a port taken as an error of its own', async function () {
    await assert.rejects(serveMetrics({ host: '127.0.0.1', port: served.address.port }, () => ''), /EADDRINUSE/);
  });
});
