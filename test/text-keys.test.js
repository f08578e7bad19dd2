'use strict';
// Map keys that hold a traced process's own text (lib/aggregation/text-keys.js):
// the table held to the programs, and the parsers reading real captures whose
// text holds the separator the tracer joins a key's parts with. No tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { TEXT_KEYS } = require('../lib/aggregation/text-keys');
const { parse } = require('../lib/aggregation/parse');
const { parseBpftraceText, parseBpftraceJson } = require('../lib/aggregation/parse-bpftrace');
const { parseDtrace } = require('../lib/aggregation/parse-dtrace');
const { totalCount } = require('../lib/aggregation/model');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const { parseProfile, parseOffCpu } = require('../lib/profile/parse');
const { buildModel } = require('../lib/latency/report/build-model');
const { readProgram } = require('./support/map-key-forms');

const SCRIPTS = path.join(__dirname, '..', 'd-scripts');
const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const mapsOf = (name) => splitAtEndMarker(fixture(name).split('\n')).maps;

// A key part that is the process's text: a thread's or function's name, a
// string read from it. (Stacks are not: nodetrace asks bpftrace for raw
// frames, numbers, and reads DTrace's one frame a line.)
const TEXT = /^(?:(?:comm|execname|func|probefunc|probename|probemod|probeprov)\b|(?:usym|ufunc|ksym|str|copyinstr|buf|cgroup_path)\s*\()/;

function isText(part, clause) {
  if (TEXT.test(part)) return true;
  const variable = /^\$(\w+)$/.exec(part);
  return Boolean(variable) && (clause.vars.get(variable[1]) || []).some((value) => TEXT.test(value));
}

// program -> map -> { parts, at }, from every d-scripts/ file; a problem for
// a key with two text parts or a .bt and .d that disagree.
function textKeysOfPrograms() {
  const found = {};
  const problems = [];
  for (const file of fs.readdirSync(SCRIPTS).filter((f) => /\.(bt|d)$/.test(f)).sort()) {
    const program = file.replace(/\.(bt|d)$/, '');
    const read = readProgram(fs.readFileSync(path.join(SCRIPTS, file), 'utf8'));
    for (const site of read.sites) {
      const at = site.parts.map((part, i) => (isText(part, read.clauses[site.clause]) ? i : -1)).filter((i) => i >= 0);
      if (at.length === 0) continue;
      if (at.length > 1) problems.push(`${file} @${site.map}: ${at.length} text parts (line ${site.line})`);
      // A thread's name crosses as buf(comm, 16), escaped (a bare comm's line break forged map lines).
      if (file.endsWith('.bt') && /^comm$/.test(site.parts[at[0]])) problems.push(`${file} @${site.map}: a bare comm (line ${site.line}): key by buf(comm, 16)`);
      const shape = { parts: site.parts.length, at: at[0], ...(/^buf\s*\(/.test(site.parts[at[0]]) ? { buf: true } : {}) };
      const maps = (found[program] = found[program] || {});
      if (maps[site.map] && JSON.stringify(maps[site.map]) !== JSON.stringify(shape)) {
        problems.push(`${file} @${site.map}: ${JSON.stringify(shape)} here, ${JSON.stringify(maps[site.map])} elsewhere`);
      }
      maps[site.map] = shape;
    }
  }
  return { found, problems };
}

describe('text keys: every map a program keys by a process\'s text is in lib/aggregation/text-keys.js', function () {
  it('lists each such map of d-scripts/*.bt and *.d with its parts and the text\'s place, one text part a key, and no other map', function () {
    const { found, problems } = textKeysOfPrograms();
    assert.deepStrictEqual(problems, []);
    assert.deepStrictEqual(found, TEXT_KEYS);
  });
});

describe('text keys: a thread named "a, do_evil" (profile.bt, offcpu.bt: real captures)', function () {
  // Before: five parts where the map has four; the name read as "a" and a
  // kernel frame "do_evil" forged in every stack, the kernel stack taken for
  // the user stack; @threads and @blocks dropped as the wrong shape.
  for (const [file, version] of [['bpftrace-profile-comm-comma-0.17.out', '0.17'], ['bpftrace-profile-comm-comma-0.27.out', '0.27.1']]) {
    it(`profile: the name whole in every stack and thread, the stacks as sampled (bpftrace ${version})`, function () {
      const p = parseProfile(mapsOf(file), 'profile');
      assert.deepStrictEqual(p.threads.map((t) => t.comm), ['a, do_evil']);
      assert.ok(p.stacks.length > 20, `${p.stacks.length} stacks`);
      assert.strictEqual(p.stacks.reduce((n, s) => n + s.count, 0), p.threads[0].count, 'the stacks add up to the thread');
      for (const s of p.stacks) {
        assert.strictEqual(s.comm, 'a, do_evil');
        assert.strictEqual(s.tid, p.threads[0].tid);
        assert.ok(s.kernel.every((f) => f !== 'do_evil'), s.kernel.join(' '));
        assert.ok(s.user.length > 3 && s.user.every((f) => /^0x[0-9a-f]+$/.test(f)), s.user.join(' '));
      }
    });
  }

  it('profile-js.bt\'s six parts: the name whole, the chain and leaf return in their places', function () {
    const text = '@samples[42, a, b, , \n        0x7f0000000010\n        0x401000\n, -5, 268435504]: 3\n@threads[42, a, b]: 3\n';
    const p = parseProfile(text, 'profile-js');
    assert.deepStrictEqual(p.stacks.map((s) => [s.comm, s.kernel, s.user, s.chain, s.leafRet]),
      [['a, b', [], ['0x7f0000000010', '0x401000'], '-5', '0x10000030']]);
    assert.deepStrictEqual(p.threads, [{ tid: 42, comm: 'a, b', count: 3 }]);
  });

  it('profile --off-cpu: the thread named whole, each wait under it', function () {
    const o = parseOffCpu(mapsOf('bpftrace-offcpu-comm-comma-0.17.out'));
    assert.deepStrictEqual(o.threads.map((t) => [t.comm, t.blocks]), [['a, do_evil', 97]]);
    assert.ok(o.stacks.length > 0);
    for (const s of o.stacks) assert.strictEqual(s.comm, 'a, do_evil');
  });
});

describe('text keys: a thread named "a<LF>@x[1, q]: 9" (profile.bt, offcpu.bt as buf(comm, 16): real captures)', function () {
  // A bare comm key printed the line break raw: "@threads[TID, a" and then
  // a forged map line "@x[1, q]: 9]: 48", the thread's samples lost. As
  // buf(comm, 16) bpftrace escapes it: the key is one line, read back as
  // the name itself (each renderer escapes it as it shows any name).
  const NAME = 'a\n@x[1, q]: 9';
  for (const [file, version] of [['bpftrace-profile-comm-line-break-0.17.out', '0.17'], ['bpftrace-profile-comm-line-break-0.27.out', '0.27.1']]) {
    it(`profile: the name whole, read back from its escapes, in every stack and thread; no map forged (bpftrace ${version})`, function () {
      const maps = mapsOf(file);
      assert.ok(!/^@x\[/m.test(maps), 'the capture holds no forged line');
      const p = parseProfile(maps, 'profile');
      assert.deepStrictEqual(p.threads.map((t) => t.comm), [NAME]);
      assert.ok(p.threads[0].count >= 10, `${p.threads[0].count} samples`);
      assert.ok(p.stacks.length >= 5, `${p.stacks.length} stacks`);
      assert.strictEqual(p.stacks.reduce((n, s) => n + s.count, 0), p.threads[0].count, 'the stacks add up to the thread');
      for (const s of p.stacks) {
        assert.strictEqual(s.comm, NAME);
        assert.strictEqual(s.tid, p.threads[0].tid);
        assert.ok(s.user.length > 0 && s.user.every((f) => /^(0x)?[0-9a-f]+$/.test(f)), s.user.join(' '));
      }
    });
  }

  it('profile --off-cpu: the thread named whole, each wait under it (bpftrace 0.17)', function () {
    const o = parseOffCpu(mapsOf('bpftrace-offcpu-comm-line-break-0.17.out'));
    assert.deepStrictEqual(o.threads.map((t) => [t.comm, t.blocks]), [[NAME, 133]]);
    assert.ok(o.stacks.length > 0);
    for (const s of o.stacks) assert.strictEqual(s.comm, NAME);
  });

  it('a buf() part: the bytes its escapes stand for, up to the first NUL, read as UTF-8', function () {
    const text = '@threads[7, node\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00]: 2\n'
      + '@threads[8, libuv-worker\\x00\\x00\\x00\\x00]: 1\n@threads[9, a\\x00\\x1b[2J\\x00]: 1\n'
      + '@threads[10, caf\\xc3\\xa9 \\xff\\x1b[2J\\x00\\x00]: 1\n';
    const model = parseBpftraceText(text, { textKeys: TEXT_KEYS.profile });
    assert.deepStrictEqual(model.aggregations[0].entries.map((e) => e.key),
      [['7', 'node'], ['8', 'libuv-worker'], ['9', 'a'], ['10', 'caf\u00e9 \ufffd\u001b[2J']]);
  });
});

describe('text keys: functions named with ", ", U+00A0 or tabs (usym()/ufunc() keys, as latency\'s: real captures)', function () {
  const NAMES = ['f\u00a0\u00a0g', 'k\t\tl', 'a, b', 'plain'];
  const countOf = (e) => Number(e.value === undefined ? totalCount(e) : e.value);
  const keysAndCounts = (aggregation) => aggregation.entries.map((e) => [e.key, countOf(e)]);

  it('bpftrace 0.17: "a, b" is one part, not two (it was read as ["a", "b"])', function () {
    const shapes = { calls: { parts: 1, at: 0 }, lat_us: { parts: 1, at: 0 } };
    const model = parseBpftraceText(fixture('bpftrace-usym-separator-keys.out'), { textKeys: shapes });
    const byName = Object.fromEntries(model.aggregations.map((a) => [a.name, a]));
    for (const name of ['calls', 'lat_us']) {
      assert.deepStrictEqual(keysAndCounts(byName[name]).map(([key]) => key).sort(), NAMES.map((n) => [n]).sort());
    }
    assert.deepStrictEqual(keysAndCounts(byName.calls).find(([key]) => key[0] === 'a, b'), [['a, b'], 10]);
  });

  it('latency reads its kinds by their shape: a function "a, b" is one kind named "a, b"', function () {
    // The capture's maps renamed to latency's (same keys: usym() of one part).
    const maps = fixture('bpftrace-usym-separator-keys.out').replace(/^@calls\[/gm, '@max_us[').replace(/^@lat_us\[/gm, '@total_us[');
    const model = buildModel({ maps }, { tracer: 'bpftrace' });
    const total = model.aggregations.find((a) => a.name === 'total_us');
    assert.deepStrictEqual(total.entries.map((e) => e.key).sort(), NAMES.map((n) => [n]).sort());
  });

  it('DTrace for Linux: a name holding two spaces\' worth of padding stays one part by the map\'s shape', function () {
    // The default printa() pads with spaces only (dtrace-ufunc-whitespace-keys.out):
    // a name with two ASCII spaces is told from padding only by the map's shape.
    const text = '\n@total_us\n\n  syms`a  b                                                        10\n  syms`plain                                                       10\n';
    const shaped = parse(text, { tracer: 'dtrace', textKeys: TEXT_KEYS['addon-latency'] });
    assert.deepStrictEqual(keysAndCounts(shaped.aggregations[0]), [[['syms`a  b'], 10], [['syms`plain'], 10]]);
    const real = parseDtrace(fixture('dtrace-ufunc-whitespace-keys.out'), { textKeys: { calls: { parts: 1, at: 0 } } });
    assert.deepStrictEqual(keysAndCounts(real.aggregations[0]).map(([key]) => key), NAMES.map((n) => [`syms\`${n}`]));
  });

  it('JSON keys (",", no space) and printa() keys (", ") are read by the shape too', function () {
    const json = '{"type": "map", "data": {"@threads": {"42,a,b": 3, "43,node": 1}}}';
    const model = parseBpftraceJson(json, { textKeys: TEXT_KEYS.profile });
    assert.deepStrictEqual(model.aggregations[0].entries.map((e) => e.key), [['42', 'a,b'], ['43', 'node']]);
    const printa = '@threads[42, a, b] = 3\n@threads[43, node] = 1\n';
    const d = parseDtrace(printa, { textKeys: TEXT_KEYS.profile });
    assert.deepStrictEqual(d.aggregations[0].entries.map((e) => e.key), [['42', 'a, b'], ['43', 'node']]);
  });
});
