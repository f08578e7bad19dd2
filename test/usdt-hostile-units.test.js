'use strict';
// The pure parts of the USDT commands' defences (docs/security.md; the
// end-to-end tests beside a hostile user are in hostile-usdt.test.js):
// probe libraries checked before a tracer reads them, histograms within
// bounds and per process, requests that cannot be requests, loss by cause.
const assert = require('assert');
const { checkLibrary, MAX_NOTES } = require('../lib/probe-libraries/library-check');
const { libraryFor } = require('../lib/usdt/paths');
const { HTTP_PROVIDER } = require('../lib/http/probes');
const { BUNYAN_PROVIDER } = require('../lib/usdt');
const crafted = require('./support/crafted-library');
const { LatencyStats, statsOf, routeOf, renderHistograms, histogramsJSON } = require('../lib/http/histograms');
const { RequestReader, batchRecords } = require('../lib/http/records');
const { lossLines, addTo } = require('../lib/render/loss');
const { LibraryFollower, Generation } = require('../lib/probe-libraries/library-follower');
const { lineFor } = require('../lib/snoop/format');
const { Reassembler } = require('../lib/snoop/reassemble');

const SERVER = 'http-server-request-done';

function own(provider) {
  return libraryFor(provider.name, provider.probes, provider.module).bytes;
}

describe('usdt: a probe library is checked before a tracer reads it', function () {
  it('takes the libraries lib/usdt makes', function () {
    assert.deepStrictEqual(checkLibrary(own(HTTP_PROVIDER), HTTP_PROVIDER), { ok: true, sites: 2 });
    assert.deepStrictEqual(checkLibrary(own(BUNYAN_PROVIDER), BUNYAN_PROVIDER), { ok: true, sites: 6 });
  });

  it('refuses a site outside the file\'s code, or not on a nop', function () {
    assert.match(checkLibrary(crafted.siteAt(HTTP_PROVIDER, SERVER, 0x7fffffff).bytes, HTTP_PROVIDER).refused,
      /site at 0x7fffffff, outside the file's code/);
    assert.match(checkLibrary(crafted.siteAt(HTTP_PROVIDER, SERVER, 0x1001).bytes, HTTP_PROVIDER).refused,
      /site at 0x1001, not on a nop/);
    assert.match(checkLibrary(crafted.siteAt(HTTP_PROVIDER, SERVER, 0x10).bytes, HTTP_PROVIDER).refused, /outside the file's code/, 'in the file, not in code');
  });

  it('refuses too many sites, a second site of a probe, and a probe the provider does not have', function () {
    assert.match(checkLibrary(crafted.manySites(HTTP_PROVIDER, SERVER, 1000).bytes, HTTP_PROVIDER).refused, new RegExp(`more than ${MAX_NOTES} probe sites`));
    assert.match(checkLibrary(crafted.manySites(HTTP_PROVIDER, SERVER, 200).bytes, HTTP_PROVIDER).refused,
      /more than 64 probe sites/);
    assert.match(checkLibrary(crafted.manySites(HTTP_PROVIDER, SERVER, 2).bytes, HTTP_PROVIDER).refused,
      /has more than one site/);
    const extra = libraryFor('bunyan', [...BUNYAN_PROVIDER.probes, ['log-extra', 'char *']]).bytes;
    assert.match(checkLibrary(extra, BUNYAN_PROVIDER).refused,
      /declares probe bunyan:log-extra, which the bunyan provider does not have/);
  });

  it('refuses a semaphore outside the file\'s data, a moved base, other argument places, a missing probe', function () {
    const patch = (fn) => {
      const bytes = Buffer.from(own(HTTP_PROVIDER));
      fn(bytes, crafted.notesOf(bytes).find((n) => n.name === SERVER));
      return checkLibrary(bytes, HTTP_PROVIDER).refused;
    };
    assert.match(patch((b, n) => b.writeBigUInt64LE(0x1000n, n.at + 16)),
      /semaphore at 0x1000, outside the file's data/);
    assert.match(patch((b, n) => b.writeBigUInt64LE(0n, n.at + 8)), /base that is not its .stapsdt.base/);
    assert.match(patch((b, n) => b.write('8@%rsi', n.nameAt + SERVER.length + 1, 'latin1')), /reads its arguments from other places/);
    assert.match(checkLibrary(own(BUNYAN_PROVIDER), HTTP_PROVIDER).refused,
      /no site for probe nodetrace:http-client-request-done/);
    assert.match(checkLibrary(Buffer.from('not an ELF file at all, not at all, no, not at all, not at all....'), HTTP_PROVIDER).refused, /not an ELF64/);
  });
});

describe('http: histograms per process, within bounds', function () {
  const req = (pid, url, us = 1000, direction = 'server') => ({ pid, url, us, direction, method: 'GET', status: 200, error: null, ns: 1n });

  it('routes any URL: a line break or U+2028 is a character like another', function () {
    assert.strictEqual(routeOf('/a\nb?x'), '/a\nb');
    assert.strictEqual(routeOf('/e\u2028f/12'), '/e\u2028f/:id');
    assert.strictEqual(routeOf('/q\r\n#x'), '/q\r\n');
    assert.strictEqual(routeOf(''), '/');
  });

  it('keeps processes apart unless merged, each named by PID and user', function () {
    const identify = (pid) => ({ pid, uid: pid === 1 ? 0 : 1001, user: pid === 1 ? 'root' : 'mallory', pidInside: null, container: null });
    const stats = new LatencyStats({ identify });
    for (let i = 0; i < 5; i++) stats.add(req(1, '/checkout', 1000));
    for (let i = 0; i < 3; i++) stats.add(req(2, '/checkout', 4000000));
    const text = renderHistograms(stats);
    assert.match(text, /^PID 1 \(root\): 5 requests$/m);
    assert.match(text, /^PID 2 \(mallory\): 3 requests$/m);
    const json = JSON.parse(histogramsJSON(stats));
    assert.strictEqual(json.version, 2);
    assert.deepStrictEqual(json.processes.map((p) => [p.pid, p.user, p.groups[0].count, p.groups[0].max]), [[1, 'root', 5, 1000], [2, 'mallory', 3, 4000000]]);
    const merged = JSON.parse(histogramsJSON(statsOf([req(1, '/checkout'), req(2, '/checkout', 4000000)])));
    assert.deepStrictEqual([merged.version, merged.groups.length, merged.groups[0].count, merged.groups[0].max],
      [1, 1, 2, 4000000]);
  });

  it('folds routes beyond a process\'s bound and processes beyond the bound, counting what it folded', function () {
    const stats = new LatencyStats({ limits: { processes: 2, groupsPerProcess: 3 } });
    for (let i = 0; i < 10; i++) stats.add(req(1, `/r${i}z`));
    stats.add(req(1, '/r0z', 5, 'client'));
    for (const pid of [2, 3, 4]) stats.add(req(pid, '/x'));
    const json = JSON.parse(histogramsJSON(stats));
    const p1 = json.processes.find((p) => p.pid === 1);
    assert.strictEqual(p1.groups.length, 3 + 2, 'three routes, and one fold per direction');
    assert.strictEqual(p1.folded_requests, 8);
    assert.deepStrictEqual(p1.groups.filter((g) => g.route === '(other routes)').map((g) => [g.direction, g.count]), [['server', 7], ['client', 1]]);
    assert.deepStrictEqual(json.processes.map((p) => p.pid), [1, 2]);
    assert.strictEqual(json.other_processes.requests, 2);
    assert.match(renderHistograms(stats), /^Other processes \(beyond the first 2\): 2 requests$/m);
  });
});

describe('http: requests no process can have made, and what the probes counted', function () {
  it('refuses a negative latency or status, says why, per process', function () {
    const refused = [];
    const got = batchRecords({ '7,7,1,0,-1,5': 'GET', '7,7,2,0,200,-5': 'GET', '8,8,3,0,1000,5': 'GET', '9,9,4,0,200,5': 'GET', 'x,1,2,0,200,1': 'GET' },
      {}, (pid, why) => refused.push([pid, why]));
    assert.deepStrictEqual(got.map((r) => r.pid), [9]);
    assert.deepStrictEqual(refused, [[7, 'a status that is no HTTP status'], [7, 'a negative latency'], [8, 'a status that is no HTTP status'], [null, 'an entry not as the program writes it']]);
  });

  it('reads per-process counts, the larger of two prints of one (END, then exit)', function () {
    const reader = new RequestReader();
    reader.push({ type: 'map', data: { '@requests': { 7: 10, 8: 3 } } });
    reader.push({ type: 'map', data: { '@over': { 7: 6 } } });
    reader.push({ type: 'map', data: { '@requests': { 7: 10, 8: 3 } } });
    reader.push({ type: 'map', data: { '@requests': {} } });
    reader.push({ type: 'map', data: { '@req0': { '7,7,1,0,200,-3': 'GET' } } });
    assert.deepStrictEqual([...reader.firedBy], [[7, 10], [8, 3]]);
    assert.strictEqual(reader.fired, 13);
    assert.deepStrictEqual([...reader.overBy], [[7, 6]]);
    assert.deepStrictEqual([...reader.malformedBy], [[7, 1]]);
    assert.strictEqual(reader.malformedWhy.get(7), 'a negative latency');
  });
});

describe('usdt: loss said per process, by cause', function () {
  const o = { describe: (pid) => `PID ${pid}`, noun: 'request', nouns: 'requests', share: 'the share', lostWhy: 'the map was full' };

  it('says each cause: over its share, malformed, lost on the way; nothing for a process that lost nothing', function () {
    const counts = new Map();
    addTo(counts, 1, 'fired', 1000);
    addTo(counts, 1, 'over', 900);
    addTo(counts, 1, 'arrived', 90);
    addTo(counts, 2, 'fired', 50);
    addTo(counts, 2, 'arrived', 40);
    addTo(counts, 2, 'malformed', 10).why = 'a negative latency';
    addTo(counts, 3, 'fired', 5);
    addTo(counts, 3, 'arrived', 5);
    assert.deepStrictEqual(lossLines(counts, o), [
      'PID 1: 900 of 1,000 requests left out: it was over its share of a crowded batch (the share); 10 of 1,000 requests seen by the probes but not reported (the map was full).',
      'PID 2: 10 requests refused as malformed (a negative latency).',
    ]);
  });

  it('names at most 10 processes, and sums the rest', function () {
    const counts = new Map();
    for (let pid = 1; pid <= 13; pid++) {
      addTo(counts, pid, 'fired', 20);
      addTo(counts, pid, 'over', pid);
      addTo(counts, pid, 'arrived', 20 - pid);
    }
    const lines = lossLines(counts, o);
    assert.strictEqual(lines.length, 11);
    assert.match(lines[0], /^PID 13: 13 of 20 requests left out/);
    assert.strictEqual(lines[10], 'and 3 more processes lost 6 requests.');
  });
});

describe('usdt: the follower names the library a tracer could not attach to', function () {
  function follower() {
    return new LibraryFollower({ tracer: { name: 'bpftrace' }, provider: HTTP_PROVIDER, say: () => {} });
  }

  it('reads the link bpftrace names back to the library', function () {
    const gen = new Generation({ script: 'http-batched', links: [{ name: '0.so' }, { name: '1.so' }] }, ['/home/a/lib.so', '/home/m/lib.so']);
    gen.result = { ready: false, errors: ['ERROR: Could not resolve symbol: /tmp/nodetrace-http-batched-Ab3dE/1.so:http-server-request-done'] };
    assert.deepStrictEqual(follower().culprit(gen), { path: '/home/m/lib.so', error: gen.result.errors[0] });
  });

  it('names none when the error names no link of its plan, or the tracer attached', function () {
    const gen = new Generation({ script: 'http-batched', links: [{ name: '0.so' }] }, ['/home/a/lib.so']);
    gen.result = { ready: false, errors: ['ERROR: /tmp/nodetrace-log-snoop-x/0.so: no', 'ERROR: /tmp/nodetrace-http-batched-x/7.so: no'] };
    assert.strictEqual(follower().culprit(gen), null);
    gen.result = { ready: true, errors: ['ERROR: /tmp/nodetrace-http-batched-x/0.so: no'] };
    assert.strictEqual(follower().culprit(gen), null);
  });
});

describe('snoop: processes told apart in bunyan\'s text modes, and loss per process', function () {
  const rec = JSON.stringify({ name: 'app', hostname: 'c0ffee', pid: 1, level: 30, msg: 'hi', time: '2026-01-01T00:00:00Z', v: 0 });
  const ev = (pid) => ({ type: 'record', pid, tid: pid, text: rec });
  const own = (pid) => [pid, 1];

  it('short: the name carries the host PID (and the container, where known); long: the host PID beside the PID inside', function () {
    assert.strictEqual(JSON.parse(lineFor(ev(27878), 'short', own)).name, 'app/27878');
    assert.strictEqual(JSON.parse(lineFor(ev(27878), 'short', own, () => 'web-1')).name, 'app/27878 in web-1');
    assert.strictEqual(JSON.parse(lineFor(ev(27878), 'long', own)).pid, '27878 (1 inside)');
    assert.strictEqual(JSON.parse(lineFor(ev(27878), 'long', own, () => 'web-1')).pid, '27878 (1 in web-1)');
    assert.strictEqual(lineFor(ev(27878), 'raw', own), rec, '--json is the record as logged');
    assert.strictEqual(lineFor(ev(27878), 'json', own), rec);
  });

  it('counts per process what the probes fired, what was over its share, and what arrived', function () {
    const r = new Reassembler();
    r.push({ kind: 'batch', map: '@pieces0', pieces: [{ pid: 5, tid: 5, id: '1', idx: 0, bytes: Buffer.from('{"a":1}') }], cuts: [] });
    r.push({ kind: 'fired', records: 13, byPid: new Map([[5, 3], [6, 10]]) });
    r.push({ kind: 'over', records: 9, byPid: new Map([[6, 9]]) });
    r.push({ kind: 'fired', records: 13, byPid: new Map([[5, 3], [6, 10]]) });
    assert.deepStrictEqual([[...r.firedBy], [...r.overBy], [...r.arrivedBy]], [[[5, 3], [6, 10]], [[6, 9]], [[5, 1]]]);
    assert.strictEqual(r.lostRecords(), 13 - 9 - 1);
  });
});
