'use strict';
// http --prometheus without a tracer: http's own histograms (LatencyStats,
// lib/http/histograms.js) rendered as Prometheus's text format, within its
// bounds, the client's text escaped and cut.
const assert = require('assert');
const { LatencyStats } = require('../lib/http/histograms');
const { renderHttpMetrics, liveMetricsOf, MAX_LABEL_CHARS, OTHER_PROCESSES } = require('../lib/http/live-metrics');
const { readExposition } = require('./support/prometheus-text');

const FAMILY = 'nodetrace_http_request_duration_seconds';
const identify = (pid) => ({ pid, uid: 0, user: 'root', pidInside: null, container: pid === 2 ? { id: 'abc', name: 'web' } : null });
const request = (o) => ({ pid: 1, direction: 'server', method: 'GET', url: '/', status: 200, error: null, us: 1000, ...o });
const counts = (text) => readExposition(text).filter((s) => s.name === `${FAMILY}_count`);

describe('http --prometheus: its histograms as metrics', function () {
  it('a histogram per process, direction, method and route: _count the requests, _sum their exact total, le on the fixed bounds', function () {
    const stats = new LatencyStats({ identify });
    for (const us of [100, 1500, 3000]) stats.add(request({ url: `/users/${us}?x=1`, us }));
    stats.add(request({ pid: 2, direction: 'client', method: 'POST', url: 'http://db:80/q', us: 70 }));
    const samples = readExposition(renderHttpMetrics(stats));
    const users = { pid: '1', direction: 'server', method: 'GET', route: '/users/:id' };
    const at = (name, extra) => samples.filter((s) => s.name === name
      && Object.entries(extra).every(([k, v]) => s.labels[k] === v)).map((s) => s.value);
    assert.deepStrictEqual(at(`${FAMILY}_count`, users), [3]);
    assert.deepStrictEqual(at(`${FAMILY}_sum`, users), [0.0046]);
    // 100 µs in [64, 128): at le 0.000128; 1,500 in [1024, 2048): at 0.002048.
    assert.deepStrictEqual([at(`${FAMILY}_bucket`, { ...users, le: '0.000128' }), at(`${FAMILY}_bucket`, { ...users, le: '0.002048' })], [[1], [2]]);
    assert.deepStrictEqual(at('nodetrace_http_requests_total', users), [3]);
    assert.deepStrictEqual(at(`${FAMILY}_count`, { pid: '2', container: 'web', direction: 'client', method: 'POST', route: 'http://db:80/q' }), [1]);
  });

  it('shows a hostile route with controls visible and quotes escaped, and cuts a long one, those alike so far one series', function () {
    const stats = new LatencyStats({ identify });
    stats.add(request({ url: '/a"}\n\u001b[2J\u202e' }));
    const long = '/x'.repeat(MAX_LABEL_CHARS);
    stats.add(request({ url: `${long}/a` }));
    stats.add(request({ url: `${long}/b` }));
    const text = renderHttpMetrics(stats);
    // eslint-disable-next-line no-control-regex -- no control character may reach a scraper or a terminal
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    const routes = counts(text).map((s) => [s.labels.route, s.value]);
    assert.ok(routes.some(([r]) => r.startsWith('/a\\"}') || r.startsWith('/a"}')), JSON.stringify(routes));
    const cut = routes.filter(([r]) => r.endsWith('…'));
    assert.deepStrictEqual(cut.map(([r, n]) => [r.length, n]), [[MAX_LABEL_CHARS + 1, 2]]);
  });

  it('holds http\'s bounds: routes past its limit in "(other routes)", processes past it in pid "(other processes)"', function () {
    const stats = new LatencyStats({ identify, limits: { processes: 1, groupsPerProcess: 2 } });
    for (const url of ['/a', '/b', '/c', '/d']) stats.add(request({ url }));
    stats.add(request({ pid: 9, url: '/a' }));
    const seen = counts(renderHttpMetrics(stats)).map((s) => `${s.labels.pid} ${s.labels.method} ${s.labels.route} ${s.value}`).sort();
    assert.deepStrictEqual(seen, ['(other processes) GET /a 1', '1 * (other routes) 2', '1 GET /a 1', '1 GET /b 1'].sort());
    assert.strictEqual(OTHER_PROCESSES, '(other processes)');
  });

  it('--by status labels status, not route; before the first request, the families with no series', function () {
    const stats = new LatencyStats({ identify, by: 'status' });
    stats.add(request({ status: 404 }));
    assert.deepStrictEqual(counts(renderHttpMetrics(stats)).map((s) => [s.labels.status, s.labels.route]), [['404', undefined]]);
    const none = liveMetricsOf({ stats: null });
    const text = none.render(none.current()).text;
    assert.deepStrictEqual(readExposition(text), []);
    assert.match(text, /^# TYPE nodetrace_http_requests_total counter$/m);
  });
});
