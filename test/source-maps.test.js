'use strict';
// Frames where the code was written: a TypeScript app (test/targets/ts-app)
// compiled by tsc here, started with no flag on Node 24 and 26, profiled;
// its hot functions must be named at the .ts line where the app's own
// stack traces put them when it runs with --enable-source-maps (the
// oracle: Node's own mapping). One build keeps its maps beside the .js
// files (Node 24), the other inline, as data: URLs (Node 26). What a
// hostile map gets is in test/source-maps-unit.test.js.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { requireTracing, startTarget, stopTarget, ROOT, escapeRegExp } = require('./support/harness');
const { nodeBuilds, missingReason } = require('./support/node-builds');
const { profileUntilSamples } = require('./support/profile-runs');

const APP = path.join(ROOT, 'test', 'targets', 'ts-app');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');
const HOT = ['scoreOrder', 'parseOrder'];

// The app compiled into a directory of its own: { dir, main } (dist/main.js).
function compile(inline) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nodetrace-ts-${inline ? 'inline' : 'files'}-`));
  fs.cpSync(APP, dir, { recursive: true, filter: (f) => !/[/\\]dist/.test(f.slice(APP.length)) });
  execFileSync(process.execPath, [TSC, '-p', dir, ...(inline ? ['--sourceMap', 'false', '--inlineSourceMap'] : [])], { stdio: 'pipe', timeout: 600000 });
  return { dir, main: path.join(dir, 'dist', 'main.js') };
}

// Where the app's own stack traces put each hot function, run with
// --enable-source-maps: Map(name -> { file, line }).
function truthOf(node, main) {
  const out = execFileSync(node, ['--enable-source-maps', main], { env: { ...process.env, WHERE: '1' }, encoding: 'utf8', timeout: 60000 });
  const truth = new Map();
  for (const m of out.matchAll(/^where (\S+) (.*):(\d+):(\d+)$/gm)) truth.set(m[1], { file: m[2], line: Number(m[3]) });
  return truth;
}

describe('source maps: a TypeScript app profiled at its .ts lines @tracer', function () {
  const builds = { node24: false, node26: true };   // name -> inline maps
  const made = [];
  after(() => { for (const m of made) fs.rmSync(m.dir, { recursive: true, force: true }); });

  for (const build of nodeBuilds(Object.keys(builds))) {
    const inline = builds[build.name];
    it(`${build.label}, no flag, ${inline ? 'maps inline' : 'maps beside the files'}: scoreOrder and parseOrder at the .ts lines its own --enable-source-maps stack traces give`, async function () {
      this.timeout(900000);
      requireTracing(this, { also: () => missingReason(build) || (fs.existsSync(TSC) ? null : 'tsc is not installed (npm ci installs it)') });
      const app = compile(inline);
      made.push(app);
      const truth = truthOf(build.node, app.main);
      assert.deepStrictEqual([...truth.keys()].sort(), [...HOT].sort(), JSON.stringify([...truth]));
      for (const t of truth.values()) assert.match(t.file, /[/\\]src[/\\]orders[/\\]\w+\.ts$/);
      const target = await startTarget(app.main, { node: build.node });
      try {
        await new Promise((r) => setTimeout(r, 2000));
        const { json } = await profileUntilSamples(target, async () => null, { minSamples: 200 });
        const rows = json.total.slice(0, 12).map((f) => `${f.samples} ${f.name} (${f.generated || ''})`).join('\n');
        for (const name of HOT) {
          const t = truth.get(name);
          // (Inlined into turn once it is hot, as V8 does: marked so.)
          const re = new RegExp(`^${name}( \\(inlined\\))? ${escapeRegExp(t.file)}:${t.line}:\\d+$`);
          const f = json.total.find((x) => re.test(x.name));
          assert(f, `${name} at ${t.file}:${t.line}:\n${rows}`);
          assert(f.samples >= 0.05 * json.samples, `${name}: ${f.samples} of ${json.samples} samples\n${rows}`);
          // V8's own place kept: the .js tsc wrote.
          assert.match(f.generated, new RegExp(`^${escapeRegExp(path.join(app.dir, 'dist'))}[/\\\\]orders[/\\\\]\\w+\\.js:\\d+:\\d+$`), rows);
          assert(!json.total.some((x) => new RegExp(`^${name}( \\(inlined\\))? .*\\.js:`).test(x.name)), `${name} also at a .js place:\n${rows}`);
        }
        assert.strictEqual(json.jit.v8.sourceMaps.refused.length, 0, JSON.stringify(json.jit.v8.sourceMaps));
        assert(json.jit.v8.sourceMaps.found.includes(app.main), JSON.stringify(json.jit.v8.sourceMaps));
        console.log(`      ${build.name}: ${HOT.map((n) => `${n} ${json.total.find((x) => x.name.startsWith(n)).samples}`).join(', ')} of ${json.samples} samples, at ${HOT.map((n) => truth.get(n).line).join(', ')}`);
      } finally {
        stopTarget(target);
      }
    });
  }
});
