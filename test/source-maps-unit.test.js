'use strict';
// lib/source-maps.js: a generated place to the original one, on tsc's real
// output (test/fixtures/source-maps/, with how it was made), in a root laid
// out here as a container's would be; and what a hostile map gets: one line.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { SourceMaps, sourceMappingUrlIn, scriptPath, mapPlace, inside, entriesIn, parsedBytes } = require('../lib/source-maps');
const { atOriginal } = require('../lib/v8/namer');
const { setLimitSink, LIMITS } = require('../lib/limits');
const { MemoryBudget } = require('../lib/memory-budget');
const { HitReaders } = require('../lib/ebadf/hit-readers');
const { denseSourceMap } = require('./support/dense-source-map');

const FIXTURES = path.join(__dirname, 'fixtures', 'source-maps');
const SCORE_JS = fs.readFileSync(path.join(FIXTURES, 'score.js'), 'utf8');
const SCORE_MAP = fs.readFileSync(path.join(FIXTURES, 'score.js.map'), 'utf8');

describe('source maps: frames where the code was written (lib/source-maps.js)', function () {
  let root;
  let said;
  let sink;
  const put = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  beforeEach(function () {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-maps-'));
    said = [];
    sink = setLimitSink((line) => said.push(line));
  });
  afterEach(function () {
    setLimitSink(sink);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('reads a script\'s reference from its last line, as tsc and esbuild write it', function () {
    assert.strictEqual(sourceMappingUrlIn(SCORE_JS), 'score.js.map');
    assert.strictEqual(sourceMappingUrlIn(`${SCORE_JS}\n\n  \n`), 'score.js.map', 'blank lines after it');
    assert.strictEqual(sourceMappingUrlIn('x();\n/*# sourceMappingURL=a.css.map */'), 'a.css.map');
    assert.strictEqual(sourceMappingUrlIn('x();\n//@ sourceMappingURL=old.map'), 'old.map');
    assert.strictEqual(sourceMappingUrlIn('//# sourceMappingURL=a.map\nx();'), null, 'code after it: not the script\'s');
    assert.strictEqual(sourceMappingUrlIn('const s = "//# sourceMappingURL=a.map";'), null);
    assert.strictEqual(sourceMappingUrlIn(null), null);
    assert.strictEqual(scriptPath('file:///app/dist/x.mjs'), '/app/dist/x.mjs');
    assert.strictEqual(scriptPath('file:///app/dist/a%20b.mjs'), '/app/dist/a b.mjs');
    assert.strictEqual(scriptPath('node:internal/timers'), null);
    assert.strictEqual(scriptPath('evalmachine.<anonymous>'), null);
  });

  it('finds a map beside the script, or inline, or at a path in the root; nothing else', function () {
    assert.deepStrictEqual(mapPlace('/app/dist/x.js', 'x.js.map'), { path: '/app/dist/x.js.map' });
    assert.deepStrictEqual(mapPlace('/app/dist/x.js', '../maps/x.js.map?v=2'), { path: '/app/maps/x.js.map' });
    assert.deepStrictEqual(mapPlace('/app/dist/x.js', '/srv/maps/x.map'), { path: '/srv/maps/x.map' });
    assert.deepStrictEqual(mapPlace('/app/dist/x.js', 'file:///srv/x.map'), { path: '/srv/x.map' });
    assert.deepStrictEqual(mapPlace('/app/x.js', `data:application/json;charset=utf-8;base64,${Buffer.from('{"a":1}').toString('base64')}`), { data: Buffer.from('{"a":1}') });
    assert.deepStrictEqual(mapPlace('/app/x.js', 'data:application/json,%7B%22a%22%3A1%7D'), { data: Buffer.from('{"a":1}') });
    assert.match(mapPlace('/app/x.js', 'data:text/html,<b>').refused, /not JSON/);
    assert.match(mapPlace('/app/x.js', 'https://evil.example/x.map').refused, /URL \(https:\), which nodetrace does not fetch/);
    assert.match(mapPlace('/app/dist/x.js', '../../../../etc/shadow').refused, /leads out of the process's root/);
    assert.match(mapPlace('/app/dist/x.js', '%2e%2e/%2e%2e/%2e%2e/%2e%2e/x.map').refused, /leads out of the process's root/);
    assert.strictEqual(inside('/a/b', '../../..'), null);
    assert.strictEqual(inside('/a/b', '../c'), '/a/c');
  });

  it('tsc\'s output: scoreOrder\'s start in dist/orders/score.js (4:20) is src/orders/score.ts:5:27, its declaration', function () {
    put('app/dist/orders/score.js', SCORE_JS);
    put('app/dist/orders/score.js.map', SCORE_MAP);
    const maps = new SourceMaps({ root });
    // The reference as V8's copy of the source ends, or none (the map beside it).
    for (const mapUrl of ['score.js.map', null]) {
      const m = new SourceMaps({ root });
      assert.deepStrictEqual(m.original({ file: '/app/dist/orders/score.js', line: 4, column: 20, mapUrl }),
        { file: '/app/src/orders/score.ts', line: 5, column: 27 }, String(mapUrl));
    }
    // A line with no entry of its own is not mapped (Node's findEntry would give an earlier line's).
    assert.strictEqual(maps.original({ file: '/app/dist/orders/score.js', line: 13, column: 1, mapUrl: 'score.js.map' }), null);
    assert.strictEqual(maps.original({ file: 'node:internal/timers', line: 4, column: 20, mapUrl: null }), null);
    assert.deepStrictEqual(maps.summary(), { found: ['/app/dist/orders/score.js'], refused: [] });
    // The same map inline.
    const inline = `data:application/json;base64,${Buffer.from(SCORE_MAP).toString('base64')}`;
    assert.deepStrictEqual(new SourceMaps({ root }).original({ file: 'file:///app/dist/orders/score.js', line: 4, column: 20, mapUrl: inline }),
      { file: '/app/src/orders/score.ts', line: 5, column: 27 });
    // A namer result, or a walked frame: the original's place and text, V8's kept.
    const r = { name: 'scoreOrder', file: '/app/dist/orders/score.js', line: 4, column: 20, kind: 'function', text: 'scoreOrder (/app/dist/orders/score.js:4:20)', sourceMapUrl: 'score.js.map' };
    assert.deepStrictEqual(atOriginal(r, maps), {
      name: 'scoreOrder', file: '/app/src/orders/score.ts', line: 5, column: 27, kind: 'function', text: 'scoreOrder (/app/src/orders/score.ts:5:27)',
      generated: { file: '/app/dist/orders/score.js', line: 4, column: 20 },
    });
    assert.strictEqual(atOriginal(r, null), r, 'maps off');
    assert.deepStrictEqual(said, []);
    // Checked from the script's own file (doctor -p).
    assert.deepStrictEqual(new SourceMaps({ root }).check('/app/dist/orders/score.js'), { found: true, map: '/app/dist/orders/score.js.map' });
    assert.deepStrictEqual(new SourceMaps({ root }).check('/app/dist/none.js'), { found: false, why: null });
  });

  it('a hostile map is refused in one line: huge, out of the root, a link out, cyclic sections, not a map; the script keeps V8\'s place', function () {
    const js = (url) => `f();\n//# sourceMappingURL=${url}\n`;
    put('app/huge.js.map', '');
    fs.truncateSync(path.join(root, 'app/huge.js.map'), LIMITS.MAX_SOURCE_MAP_BYTES + 1);
    put('app/cyclic.js.map', JSON.stringify({ version: 3, sections: [{ offset: { line: 0, column: 0 }, url: 'cyclic.js.map' }] }));
    put('app/nested.js.map', JSON.stringify({ version: 3, sections: [{ offset: { line: 0, column: 0 }, map: { version: 3, sections: [] } }] }));
    put('app/notmap.js.map', '{"version":3,"mappings":42}');
    put('app/notjson.js.map', 'root:x:0:0::/root:/bin/bash\n');
    fs.symlinkSync('/etc/passwd', path.join(root, 'app/link.js.map'));
    const cases = {
      '/app/huge.js': [js('huge.js.map'), /^nodetrace: the source map of \/app\/huge\.js: its map \/app\/huge\.js\.map is more than the 16 MB nodetrace reads$/],
      '/app/out.js': [js('../../../../../etc/passwd'), /^nodetrace: the source map of \/app\/out\.js: its map's path leads out of the process's root: not followed$/],
      '/app/http.js': [js('http://169.254.169.254/x.map'), /map is at a URL \(http:\), which nodetrace does not fetch$/],
      '/app/cyclic.js': [js('cyclic.js.map'), /a section names another map \(url\): not followed$/],
      '/app/nested.js': [js('nested.js.map'), /an index map within an index map\): not followed$/],
      '/app/notmap.js': [js('notmap.js.map'), /its mappings are no string$/],
      '/app/notjson.js': [js('notjson.js.map'), /was not read: it is not JSON$/],
      // A link is followed inside the root only (lib/safe-open.js openInRoot): /etc/passwd there does not exist.
      '/app/link.js': [js('link.js.map'), /its map \/app\/link\.js\.map was not read: it cannot be opened \(ENOENT\)$/],
    };
    const maps = new SourceMaps({ root });
    for (const [file, [text, re]] of Object.entries(cases)) {
      put(file, text);
      const mapUrl = sourceMappingUrlIn(text);
      assert.strictEqual(maps.original({ file, line: 1, column: 1, mapUrl }), null, file);
      assert.strictEqual(maps.original({ file, line: 1, column: 1, mapUrl }), null, `${file}, asked again`);
      const lines = said.filter((l) => l.includes(`of ${file}:`));
      assert.strictEqual(lines.length, 1, `${file}: said once: ${JSON.stringify(said)}`);
      assert.match(lines[0], re);
      assert(!lines[0].includes('\n'));
    }
    assert.deepStrictEqual(maps.summary().found, []);
    assert.strictEqual(maps.summary().refused.length, Object.keys(cases).length);
    // Nothing of the file read shows (/etc/passwd's text was never read: the link led nowhere).
    assert(!said.some((l) => /root:x:0/.test(l)));
  });

  it('counts the entries of mappings as Node\'s parser makes them, hostile forms too', function () {
    assert.deepStrictEqual(entriesIn(''), { pairs: 0, full: 0 });
    assert.deepStrictEqual(entriesIn(';;;'), { pairs: 0, full: 0 });
    assert.deepStrictEqual(entriesIn('AAAA,CAAC;;AACA'), { pairs: 0, full: 3 });
    // The last segment, with no separator after it, is read as a full one.
    assert.deepStrictEqual(entriesIn('A,C;E'), { pairs: 2, full: 1 });
    assert.deepStrictEqual(entriesIn('A,C;E;'), { pairs: 3, full: 0 });
    assert.deepStrictEqual(entriesIn('AAAAC,gBAAgBA'), { pairs: 0, full: 2 }, 'five fields; a field of two digits');
    // Node reads four fields across a separator where a segment has two or
    // three: 'AB,C' is one entry, and an unknown character ends a field.
    assert.deepStrictEqual(entriesIn('AB,C'), { pairs: 0, full: 1 });
    assert.deepStrictEqual(entriesIn('A,!,A;'), { pairs: 3, full: 0 });
    assert.deepStrictEqual(entriesIn('gggg'), { pairs: 0, full: 1 }, 'a field that never ends ends with the text');
  });

  it('estimates from above what a parsed map holds, for the densest mappings (Node\'s own heap, measured)', function () {
    this.timeout(60000);
    // Each kind in a process of its own, its heap measured after full collections.
    const probe = `
      const { denseSourceMap } = require(${JSON.stringify(path.join(__dirname, 'support', 'dense-source-map'))});
      const { parsedBytes } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'source-maps'))});
      const { SourceMap } = require('module');
      const text = denseSourceMap(1 << 20, { kind: process.argv[1] });
      const payload = JSON.parse(text);
      const estimate = parsedBytes(payload, text);
      const payloadCopy = JSON.parse(text);
      gc(); gc();
      const before = process.memoryUsage().heapUsed;
      globalThis.kept = new SourceMap(payloadCopy);
      gc(); gc();
      console.log(JSON.stringify({ estimate, held: process.memoryUsage().heapUsed - before }));`;
    const seen = [];
    for (const kind of ['dense', 'pairs', 'big']) {
      const { estimate, held } = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', probe, kind], { encoding: 'utf8', timeout: 30000 }));
      assert.ok(held > 8 << 20, `${kind}: ${held} bytes held: the map was parsed`);
      assert.ok(estimate >= held, `${kind}: estimated ${estimate} bytes, ${held} held`);
      seen.push(`${kind} ${(estimate / held).toFixed(2)}`);
    }
    console.log(`      estimate / held: ${seen.join(', ')}`);
  });

  it('charges the run\'s budget for each map kept, gives it back when a map is dropped and at close()', function () {
    const one = parsedBytes(JSON.parse(SCORE_MAP), SCORE_MAP);
    for (const dir of ['a', 'b']) {
      put(`${dir}/dist/orders/score.js`, SCORE_JS);
      put(`${dir}/dist/orders/score.js.map`, SCORE_MAP);
    }
    const budget = new MemoryBudget(1 << 30);
    // Room for one map at a time.
    const maps = new SourceMaps({ root, budget, cacheBytes: one + 1 });
    const at = (dir) => maps.original({ file: `/${dir}/dist/orders/score.js`, line: 4, column: 20, mapUrl: null });
    assert.deepStrictEqual(at('a'), { file: '/a/src/orders/score.ts', line: 5, column: 27 });
    assert.strictEqual(budget.held(), one);
    assert.deepStrictEqual(at('a'), { file: '/a/src/orders/score.ts', line: 5, column: 27 });
    assert.strictEqual(budget.held(), one, 'used again: charged once');
    assert.deepStrictEqual(at('b'), { file: '/b/src/orders/score.ts', line: 5, column: 27 });
    assert.strictEqual(budget.held(), one, 'a dropped for b: its charge given back');
    assert.deepStrictEqual(at('a'), { file: '/a/src/orders/score.ts', line: 5, column: 27 }, 'read again');
    assert.strictEqual(budget.held(), one);
    maps.close();
    assert.strictEqual(budget.held(), 0);
    assert.deepStrictEqual(at('b'), { file: '/b/src/orders/score.ts', line: 5, column: 27 }, 'usable after close()');
    maps.close();
    assert.strictEqual(budget.held(), 0);
    assert.deepStrictEqual(said, []);
  });

  it('a map the run\'s budget has no room for: one line naming it and the bound, the frame where V8 put it', function () {
    const one = parsedBytes(JSON.parse(SCORE_MAP), SCORE_MAP);
    put('app/dist/orders/score.js', SCORE_JS);
    put('app/dist/orders/score.js.map', SCORE_MAP);
    const budget = new MemoryBudget(one + 1000);
    assert.ok(budget.charge(2000), 'held by another reader');
    const maps = new SourceMaps({ root, budget });
    const place = { file: '/app/dist/orders/score.js', line: 4, column: 20, mapUrl: 'score.js.map' };
    assert.strictEqual(maps.original(place), null);
    assert.strictEqual(maps.original(place), null, 'asked again');
    assert.strictEqual(budget.held(), 2000, 'nothing taken');
    assert.strictEqual(said.length, 1, JSON.stringify(said));
    assert.match(said[0], /^nodetrace: the source map of \/app\/dist\/orders\/score\.js: its map \/app\/dist\/orders\/score\.js\.map was not read \(\d+ KB parsed\): nodetrace's memory for this run is bounded to \d+ KB, and 2 KB of it is held already$/);
    // The same map alone fits; one larger than the maps kept at most is refused before the budget is asked.
    assert.deepStrictEqual(new SourceMaps({ root, budget: new MemoryBudget(one) }).original(place),
      { file: '/app/src/orders/score.ts', line: 5, column: 27 });
    const small = new SourceMaps({ root, budget: new MemoryBudget(1 << 30), cacheBytes: one - 1 });
    assert.strictEqual(small.original(place), null);
    assert.match(said[1] || '', /its map \/app\/dist\/orders\/score\.js\.map was not read \(\d+ KB parsed\): more than the \d+ KB of parsed maps nodetrace keeps$/, JSON.stringify(said));
  });

  it('ebadf\'s hit readers: a map that would hold more than a worker\'s heap is refused, not the worker\'s death', async function () {
    this.timeout(120000);
    put('app/dist/orders/score.js', SCORE_JS);
    put('app/dist/orders/score.js.map', SCORE_MAP);
    // 4 MB of dense mappings: some 90 MB parsed, near the worker's whole heap.
    put('big/app.js', 'f();\n');
    put('big/app.js.map', denseSourceMap(4 << 20));
    const frame = (file, line, column) => ({ kind: 'js', name: 'f', file, line, column, text: 'f', sourceMapUrl: null });
    const readers = new HitReaders({ maxWorkers: 1 });
    try {
      const big = await readers.run('u', { op: 'original', frames: [frame('/big/app.js', 1, 10)], root }, { deadlineMs: 60000 });
      assert.ok(big.value, JSON.stringify(big));
      const [f] = big.value;
      assert.deepStrictEqual([f.file, f.line, f.column, f.generated], ['/big/app.js', 1, 10, undefined], 'where V8 put it');
      const small = await readers.run('u', { op: 'original', frames: [frame('/app/dist/orders/score.js', 4, 20)], root }, { deadlineMs: 60000 });
      assert.ok(small.value, JSON.stringify(small));
      assert.strictEqual(`${small.value[0].file}:${small.value[0].line}`, '/app/src/orders/score.ts:5', 'the same worker maps the next');
    } finally {
      readers.close();
    }
  });
});
