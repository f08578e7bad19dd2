'use strict';
// nodetrace merge on real reports: two runs of each command (two processes
// of one workload, test/fixtures/merge/*.cmd say how each was made). The
// truth a merge is held to is its inputs: each histogram the bucket-wise
// sum of theirs (added here independently, by bounds), each count the sum,
// each max the larger, and with --by source each source's own count; and
// reports that do not add are refused in one line.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { mergeTexts } = require('../lib/merge');
const { nodetrace } = require('./support/harness');

const DIR = path.join(__dirname, 'fixtures', 'merge');
const read = (name) => fs.readFileSync(path.join(DIR, name), 'utf8');
const input = (name, text = read(name)) => ({ source: name, text });
const fixture = (name) => path.join(DIR, name);

// The bucket-wise sum of histograms, by their bounds: { 'lo,hi': count }.
function sumByBounds(...histograms) {
  const out = {};
  for (const h of histograms) {
    for (const b of h) out[`${b.lo},${b.hi}`] = (out[`${b.lo},${b.hi}`] || 0) + Number(b.count);
  }
  return out;
}
const byBounds = (h) => Object.fromEntries(h.map((b) => [`${b.lo},${b.hi}`, Number(b.count)]));

function mergeJson(names, o) {
  const r = mergeTexts(names.map((n) => input(n)), o);
  assert.strictEqual(r.format, 'json');
  return r.report;
}

describe('nodetrace merge', function () {
  it('latency: each kind\'s histograms (total and phases) added by bucket, counts added, max the larger', function () {
    const [a, b] = ['latency-a.json', 'latency-b.json'].map((n) => JSON.parse(read(n)));
    const m = mergeJson(['latency-a.json', 'latency-b.json']);
    assert.strictEqual(m.command, 'latency');
    assert.strictEqual(m.merged, 2);
    const ka = a.kinds.find((k) => k.name === 'crypto.pbkdf2');
    const kb = b.kinds.find((k) => k.name === 'crypto.pbkdf2');
    const km = m.kinds.find((k) => k.name === 'crypto.pbkdf2');
    assert(ka && kb && km, 'both runs saw crypto.pbkdf2');
    assert.deepStrictEqual(byBounds(km.histogram), sumByBounds(ka.histogram, kb.histogram));
    assert.strictEqual(km.count, ka.count + kb.count);
    assert.strictEqual(km.max, Math.max(ka.max, kb.max));
    for (const phase of ['queue_wait', 'run', 'loop_wait']) {
      assert.deepStrictEqual(byBounds(km.breakdown[phase].histogram),
        sumByBounds(ka.breakdown[phase].histogram, kb.breakdown[phase].histogram), phase);
    }
    // The percentiles read again from the sum: p99 inside the bucket that holds the 99th rank.
    const rank = 0.99 * km.count;
    let below = 0;
    const holder = km.histogram.find((x) => (below += x.count) >= rank);
    assert(km.p99 >= holder.lo && km.p99 <= Math.min(holder.hi, km.max), `p99 ${km.p99} not in [${holder.lo}, ${holder.hi})`);
    assert.deepStrictEqual(m.sources.map((s) => s.process.pid), [a.process.pid, b.process.pid]);
    assert.strictEqual(m.pool, null, 'the pool\'s shares are per process');
    assert(m.sources.every((s) => s.pool), 'each source keeps its pool');
  });

  it('gc: each kind\'s pauses added by bucket, total time added; --by source keeps each run\'s count', function () {
    const [a, b] = ['gc-a.json', 'gc-b.json'].map((n) => JSON.parse(read(n)));
    const m = mergeJson(['gc-a.json', 'gc-b.json'], { bySource: true });
    const names = new Set([...a.kinds, ...b.kinds].map((k) => k.name));
    assert.deepStrictEqual(new Set(m.kinds.map((k) => k.name)), names);
    for (const km of m.kinds) {
      const parts = [a, b].map((r) => r.kinds.find((k) => k.name === km.name)).filter(Boolean);
      assert.deepStrictEqual(byBounds(km.histogram), sumByBounds(...parts.map((k) => k.histogram)), km.name);
      assert.strictEqual(km.total_us, parts.reduce((n, k) => n + k.total_us, 0), km.name);
      assert.deepStrictEqual(km.by_source.map((s) => [s.source, s.count]), [a, b].flatMap((r, i) => {
        const k = r.kinds.find((x) => x.name === km.name);
        return k ? [[['gc-a.json', 'gc-b.json'][i], k.count]] : [];
      }));
    }
  });

  it('loop: busy turns added, every stall kept with its source, longest first', function () {
    const [a, b] = ['loop-a.json', 'loop-b.json'].map((n) => JSON.parse(read(n)));
    const m = mergeJson(['loop-a.json', 'loop-b.json']);
    assert.deepStrictEqual(byBounds(m.busy.histogram), sumByBounds(a.busy.histogram, b.busy.histogram));
    assert.strictEqual(m.turns, a.turns + b.turns);
    assert.strictEqual(m.busy_total_us, a.busy_total_us + b.busy_total_us);
    assert.strictEqual(m.stalls.length, a.stalls.length + b.stalls.length);
    assert.deepStrictEqual(m.stalls.map((s) => s.busy_us), [...a.stalls, ...b.stalls].map((s) => s.busy_us)
      .sort((x, y) => y - x));
    assert(m.stalls.every((s) => ['loop-a.json', 'loop-b.json'].includes(s.source)));
  });

  it('loop: reports of different --over are refused, saying so', function () {
    const b = JSON.parse(read('loop-b.json'));
    b.over_us = 5000;
    assert.throws(() => mergeTexts([input('loop-a.json'), { source: 'loop-b.json', text: JSON.stringify(b) }]), /different --over \(100 ms, 5 ms\)/);
  });

  it('async: each kind\'s counts and histograms added; what does not add left to each source', function () {
    const [a, b] = ['async-a.json', 'async-b.json'].map((n) => JSON.parse(read(n)));
    const m = mergeJson(['async-a.json', 'async-b.json'], { bySource: true });
    const id = (k) => `${k.source} ${k.provider} ${k.name}`;
    assert(m.kinds.length >= 4, m.kinds.map(id).join(', '));
    for (const km of m.kinds) {
      const parts = [a, b].map((r) => r.kinds.find((k) => id(k) === id(km))).filter(Boolean);
      assert.strictEqual(km.created, parts.reduce((n, k) => n + k.created, 0), id(km));
      assert.strictEqual(km.callbacks, parts.reduce((n, k) => n + k.callbacks, 0), id(km));
      assert.deepStrictEqual(byBounds(km.callback.histogram), sumByBounds(...parts.map((k) => k.callback.histogram)),
        id(km));
      assert.deepStrictEqual(byBounds(km.wait.histogram), sumByBounds(...parts.map((k) => k.wait.histogram)), id(km));
      assert.strictEqual(km.callback.functions, null, 'top-10 lists do not add');
      assert.strictEqual(km.by_source.length, parts.length);
    }
    assert.strictEqual(m.loop_busy_ns, a.loop_busy_ns + b.loop_busy_ns);
  });

  it('http: each route\'s latencies added by bucket (per-process reports into one set of groups)', function () {
    const [a, b] = ['http-a.json', 'http-b.json'].map((n) => JSON.parse(read(n)));
    const m = mergeJson(['http-a.json', 'http-b.json'], { bySource: true });
    assert.strictEqual(m.version, 1);
    const groups = (r) => r.processes.flatMap((p) => p.groups);
    const id = (g) => `${g.direction} ${g.method} ${g.route}`;
    for (const gm of m.groups) {
      const parts = [...groups(a), ...groups(b)].filter((g) => id(g) === id(gm));
      assert.deepStrictEqual(byBounds(gm.histogram), sumByBounds(...parts.map((g) => g.histogram)), id(gm));
      assert.strictEqual(gm.count, parts.reduce((n, g) => n + g.count, 0));
      assert.strictEqual(gm.max, Math.max(...parts.map((g) => g.max)));
      assert.strictEqual(gm.by_source.reduce((n, s) => n + s.count, 0), gm.count);
    }
    assert.strictEqual(m.requests, [...groups(a), ...groups(b)].reduce((n, g) => n + g.count, 0));
  });

  it('folded stacks: samples added by stack; --by source puts each under a root frame of its own', function () {
    const m = mergeTexts([input('profile-a.folded'), input('profile-b.folded')]);
    assert.strictEqual(m.format, 'folded');
    const parse = (t) => t.trim().split('\n').map((l) => /^(.*) (\d+)$/.exec(l)).map((x) => [x[1], Number(x[2])]);
    const total = (lines) => lines.reduce((n, [, c]) => n + c, 0);
    const a = parse(read('profile-a.folded'));
    const b = parse(read('profile-b.folded'));
    const merged = parse(m.text);
    assert.strictEqual(total(merged), total(a) + total(b));
    const want = new Map();
    for (const [l, c] of [...a, ...b]) want.set(l, (want.get(l) || 0) + c);
    assert.deepStrictEqual(new Map(merged), want);
    const bySource = parse(mergeTexts([input('profile-a.folded'), input('profile-b.folded')], { bySource: true }).text);
    assert.strictEqual(total(bySource.filter(([l]) => l.startsWith('profile-a.folded;'))), total(a));
    assert.strictEqual(total(bySource.filter(([l]) => l.startsWith('profile-b.folded;'))), total(b));
  });

  describe('refusals, each in one line', function () {
    const cases = [
      ['different commands', [input('gc-a.json'), input('loop-a.json')], /loop-a\.json is a report of loop, gc-a\.json of gc: merge reports of one command/],
      ['a version this nodetrace does not merge', [input('gc-a.json'), { source: 'gc-b.json', text: read('gc-b.json').replace('"version": 1', '"version": 7') }], /gc-b\.json is a gc report of version 7; this nodetrace merges version 1/],
      ['histograms of different buckets', [input('gc-a.json'), { source: 'gc-b.json', text: JSON.stringify(shiftBuckets(JSON.parse(read('gc-b.json')))) }], /buckets differ .* so their counts do not add/],
      ['profile --json (top lists do not add)', [input('profile-a.json'), input('profile-b.json')], /merge its folded stacks \(profile --folded FILE\)/],
      ['JSON and folded stacks together', [input('gc-a.json'), input('profile-a.folded')], /some inputs are JSON reports and some folded stacks/],
      ['the same report twice', [input('gc-a.json'), { source: 'copy.json', text: read('gc-a.json') }], /copy\.json is the same report as gc-a\.json/],
      ['a report with a forged count', [input('gc-a.json'), { source: 'gc-b.json', text: JSON.stringify(forgeCount(JSON.parse(read('gc-b.json')))) }], /gc-b\.json: kinds\[0\]\.histogram\[0\]\.count is not an integer/],
      ['a report of no command', [input('gc-a.json'), { source: 'old.json', text: '{"version": 1, "kinds": []}' }], /old\.json: it names no command/],
      ['http grouped by route and by status', [input('http-a.json'), { source: 'status.json', text: JSON.stringify(byStatus(JSON.parse(read('http-b.json')))) }], /by route in one and by status in another/],
    ];
    for (const [what, inputs, message] of cases) {
      it(what, function () {
        assert.throws(() => mergeTexts(inputs), (err) => {
          assert.match(err.message, message);
          assert(!err.message.includes('\n'), err.message);
          return true;
        });
      });
    }
  });

  it('the command: files and "-", the merged JSON on stdout; a refusal on one line, exit 1', async function () {
    const ok = await nodetrace(['merge', fixture('gc-a.json'), '-'], { input: read('gc-b.json') });
    assert.strictEqual(ok.code, 0, ok.stderr);
    const m = JSON.parse(ok.stdout);
    assert.deepStrictEqual(m.sources.map((s) => s.source), [fixture('gc-a.json'), '-']);
    const refused = await nodetrace(['merge', fixture('gc-a.json'), fixture('loop-a.json')]);
    assert.strictEqual(refused.code, 1);
    assert.strictEqual(refused.stdout, '');
    assert.strictEqual(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    const usage = await nodetrace(['merge', fixture('gc-a.json')]);
    assert.strictEqual(usage.code, 2, usage.stderr);
    const fifo = await nodetrace(['merge', fixture('gc-a.json'), '/dev/null']);
    assert.strictEqual(fifo.code, 1);
    assert.match(fifo.stderr, /\/dev\/null: cannot read it: it is not a regular file/);
  });
});

// A copy of a gc report whose first histogram's buckets start one off: a layout of its own.
function shiftBuckets(report) {
  const k = report.kinds[0];
  k.histogram = k.histogram.map((b) => ({ ...b, lo: b.lo + 1, hi: b.hi + 1 }));
  return report;
}

function forgeCount(report) {
  report.kinds[0].histogram[0].count = 'lots';
  return report;
}

// The http report as `--by status` would have grouped the same requests.
function byStatus(report) {
  report.by = 'status';
  for (const p of report.processes) p.groups = p.groups.map(({ route, ...g }) => ({ ...g, status: '200' }));
  return report;
}
