'use strict';
// `nodetrace http --prometheus` end to end @tracer: the real bpftrace
// reading an unprepared process off the wire (test/targets/http-steady.js,
// a server and its own keep-alive client: "go N" makes N requests to
// /checkout/<i> and says "done N" once all completed), its endpoint scraped
// after each batch, then Ctrl-C and the usual lines. One trace.
const assert = require('assert');
const path = require('path');
const { spawn } = require('child_process');
const { ROOT, requireTracing, stopTarget, killStragglers } = require('./support/harness');
const { startLiveTrace, valueOf, scrapeAfterBursts } = require('./support/live-trace');

const TRACE_BOUND_MS = 60000;
const WAIT_BOUND_MS = 20000;
const BATCH = 25;
const FAMILY = 'nodetrace_http_request_duration_seconds';
const ROUTE = { method: 'GET', route: '/checkout/:id' };

function startSteady() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'test', 'targets', 'http-steady.js')], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.said = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c) => { child.said += c; if (/^ready \d+$/m.test(child.said)) resolve(child); });
    child.on('exit', (code) => reject(new Error(`http-steady.js exited (${code})`)));
  });
}

describe('nodetrace http --prometheus @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 4 * WAIT_BOUND_MS);
  let target;
  let scrapes;
  let report;

  before(async function () {
    requireTracing(this);
    target = await startSteady();
    const live = await startLiveTrace(['http', '-p', String(target.pid), '--source', 'wire', '--json'], { timeoutMs: TRACE_BOUND_MS + 3 * WAIT_BOUND_MS });
    const served = (s) => valueOf(s, `${FAMILY}_count`, undefined, { direction: 'server', ...ROUTE });
    ({ scrapes, report } = await scrapeAfterBursts(live, {
      start: () => target.stdin.write(`go ${BATCH}\n`),
      finished: (n) => (target.said.split('\n').filter((l) => l === `done ${BATCH}`).length >= n ? BATCH : null),
      // The wire lets a request out within 100 ms of its response (lib/http/runner.js WIRE_FLUSH_MS).
      shown: (samples, n) => served(samples) >= n * BATCH,
      waitMs: WAIT_BOUND_MS,
      settleMs: 300,
    }));
  });

  after(async function () {
    stopTarget(target);
    await killStragglers.call(this);
  });

  it('serves each route\'s histogram by direction, its _count exactly the requests the target made, served and made', function () {
    for (const [i, s] of scrapes.entries()) {
      // A request made keeps its origin in its route (lib/http/histograms.js routeOf).
      const made = s.find((x) => x.name === `${FAMILY}_count` && x.labels.direction === 'client');
      assert.ok(made, JSON.stringify(s.filter((x) => x.name === `${FAMILY}_count`)));
      assert.match(made.labels.route, /^http:\/\/127\.0\.0\.1:\d+\/checkout\/:id$/);
      for (const direction of ['server', 'client']) {
        const labels = { direction, ...ROUTE, ...(direction === 'client' ? { route: made.labels.route } : {}) };
        const count = valueOf(s, `${FAMILY}_count`, undefined, labels);
        assert.strictEqual(count, (i + 1) * BATCH, `${direction} after batch ${i + 1}`);
        assert.strictEqual(valueOf(s, `${FAMILY}_bucket`, undefined, { ...labels, le: '+Inf' }), count);
        assert.strictEqual(valueOf(s, 'nodetrace_http_requests_total', undefined, labels), count);
        assert.ok(valueOf(s, `${FAMILY}_sum`, undefined, labels) > 0);
      }
      for (const x of s) assert.strictEqual(x.labels.pid, String(target.pid), JSON.stringify(x));
    }
  });

  it('prints the usual lines at Ctrl-C, one per request, as many as the endpoint served', function () {
    assert.strictEqual(report.code, 0, report.stderr);
    const lines = report.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.strictEqual(lines.filter((r) => r.direction === 'server').length, 2 * BATCH);
  });
});
