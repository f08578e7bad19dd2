'use strict';
// Issue 35: one memory budget for a run (lib/memory-budget.js), so that
// two inputs each within their own limits cannot together take nodetrace
// past 512 MB. A throwaway user runs a copy of node whose two string
// tables (.strtab, .dynstr) claim 64 MiB each (sparse: the real names
// first, then zeros), with a copy of libc made the same way (given an
// empty .symtab: it has none), both made here at run time. Reading
// either's symbols keeps 128-131 MB (136 MB while node's are built),
// within the 256 MB budget alone, not together: `profile` must read the first it
// meets, refuse the other in one line naming it and the bound, show that
// file's frames unnamed (as its module), name everything else as usual,
// stay under 512 MB and exit 0. The same node runs a script whose source
// map (made here, dense) would hold some 166 MB parsed: within the budget
// alone, not with node's symbols: `profile` must refuse the map in one line,
// show the script's frames where V8 runs them, and exit 0 under 512 MB.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { requireTracing, escapeRegExp } = require('./support/harness');
const { watchPeak } = require('./support/peak-rss');
const { withBigStringTables } = require('./support/crafted-elf');
const { denseSourceMap } = require('./support/dense-source-map');
const { parsedBytes } = require('../lib/source-maps');

const MiB = 1024 * 1024;
const LIBC = '/lib/x86_64-linux-gnu/libc.so.6';
const TWO_LIBRARIES = path.join(__dirname, 'targets', 'two-libraries.js');

describe('35: two crafted files, each within the run\'s memory budget alone, not together @tracer', function () {
  this.timeout(300000);
  const user = new HostileUser();
  let pid;
  let node;
  let libc;

  before(async function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() || (fs.existsSync(LIBC) ? null : `no ${LIBC}`) });
    user.create();
    node = withBigStringTables(fs.realpathSync(process.execPath), path.join(user.home, 'node'), { bytes: 64 * MiB });
    fs.mkdirSync(path.join(user.home, 'lib'));
    libc = withBigStringTables(LIBC, path.join(user.home, 'lib', 'libc.so.6'), { bytes: 64 * MiB });
    for (const f of [node, libc]) assert.ok(fs.statSync(f).blocks * 512 < 128 * MiB, `${f} is sparse`);
    const target = user.start(node, [TWO_LIBRARIES],
      { env: { LD_LIBRARY_PATH: path.dirname(libc) } });
    pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 60000))[1]);
    const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
    assert.ok(maps.includes(node) && maps.includes(libc), 'the target runs both crafted files');
  });
  after(function () { user.remove(); });

  it('profile reads one table, refuses the other in one line, names the rest, under 512 MB, exit 0', async function () {
    const nt = runNodetrace(['profile', '-p', String(pid), '-d', '8', '--json']);
    const peak = watchPeak(nt.child.pid);
    const end = await nt.exit;
    const peakKb = peak.stop();
    assert.strictEqual(end.code, 0, nt.stderr);
    assert.ok(peakKb < 512 * 1024, `profile peaked at ${peakKb} kB`);
    const refusals = nt.stderr.split('\n').filter((l) => /its symbols were not read/.test(l));
    assert.strictEqual(refusals.length, 1, nt.stderr);
    const m = /^nodetrace: (\S+) \(\/proc\/\d+\/map_files\/[0-9a-f-]+\): its symbols were not read \((\d+) MB\): nodetrace's memory for this run is bounded to 256 MB, and (\d+) MB of it is held already$/
      .exec(refusals[0]);
    assert.ok(m && (m[1] === node || m[1] === libc), refusals[0]);
    const [refused, read] = m[1] === node ? ['node', 'libc.so.6'] : ['libc.so.6', 'node'];
    assert.ok(Number(m[2]) <= 256 && Number(m[2]) + Number(m[3]) > 256, `${m[2]} MB refused with ${m[3]} MB held: it fits alone, not with the other`);

    const json = JSON.parse(nt.stdout);
    const self = json.self.filter((f) => f.samples > 0);
    // The refused file's frames: its module, unnamed.
    const unnamed = self.find((f) => f.name === `[${refused}]`);
    assert.ok(unnamed && unnamed.category === 'unknown', JSON.stringify(self.slice(0, 10)));
    // The other's: named by its own symbols (V8's JSON functions in node; memset/memmove in libc).
    const named = read === 'node' ? self.filter((f) => /^v8::internal::Json|^v8::internal::/.test(f.name) && f.category === 'v8')
      : self.filter((f) => /^__mem(set|move|cpy)/.test(f.name));
    assert.ok(named.length > 0, `no frame of ${read} named: ${JSON.stringify(self.slice(0, 10))}`);
    assert.ok(!self.some((f) => f.name === `[${read}]`), `${read}'s frames are named`);
    // JavaScript named as usual, at the target's own lines.
    const js = new Set(json.totalJs.map((f) => f.name));
    const script = TWO_LIBRARIES;
    for (const fn of ['tick /', 'spinNative /', 'copyBytes /']) {
      assert.ok([...js].some((n) => n.startsWith(fn) && n.includes(script)), `${fn}: ${[...js].join(', ')}`);
    }
    console.log(`      ${refused} refused (${m[2]} MB with ${m[3]} MB held), ${read} read; peak ${Math.round(peakKb / 1024)} MB; ${json.samples} samples`);
  });

  it('profile refuses a source map that fits alone, not with node\'s symbols, in one line; frames where V8 runs them; under 512 MB, exit 0', async function () {
    // The target's own script, in the user's home, its map beside it; node's symbols read, libc's real ones.
    const script = path.join(user.home, 'app.js');
    const text = fs.readFileSync(TWO_LIBRARIES, 'utf8');
    fs.writeFileSync(script, `${text}//# sourceMappingURL=app.js.map\n`);
    const map = denseSourceMap(5.5 * MiB);
    fs.writeFileSync(`${script}.map`, map);
    for (const f of [script, `${script}.map`]) fs.chownSync(f, user.uid, user.gid);
    const parsed = parsedBytes(JSON.parse(map), map);
    assert.ok(parsed > 150 * MiB && parsed < 192 * MiB, `the map holds ${parsed} bytes parsed: within the maps kept alone, not beside 128 MB`);
    const target = user.start(node, [script]);
    const mapped = Number((await collect(target).wait('stdout', /ready (\d+)/, 60000))[1]);

    const nt = runNodetrace(['profile', '-p', String(mapped), '-d', '8', '--json']);
    const peak = watchPeak(nt.child.pid);
    const end = await nt.exit;
    const peakKb = peak.stop();
    assert.strictEqual(end.code, 0, nt.stderr);
    assert.ok(peakKb < 512 * 1024, `profile peaked at ${peakKb} kB`);
    assert.ok(!/its symbols were not read/.test(nt.stderr), nt.stderr);
    const refusals = nt.stderr.split('\n').filter((l) => l.includes('source map'));
    assert.strictEqual(refusals.length, 1, nt.stderr);
    const m = new RegExp(`^nodetrace: the source map of ${escapeRegExp(script)}: its map ${escapeRegExp(script)}\\.map was not read \\((\\d+) MB parsed\\): nodetrace's memory for this run is bounded to 256 MB, and (\\d+) MB of it is held already$`)
      .exec(refusals[0]);
    assert.ok(m, refusals[0]);
    assert.ok(Number(m[1]) <= 256 && Number(m[1]) + Number(m[2]) > 256, `${m[1]} MB refused with ${m[2]} MB held: it fits alone, not with node's symbols`);

    const json = JSON.parse(nt.stdout);
    // The script's functions where V8 runs them: its own lines (the map would put them in src/app.ts).
    const lines = fs.readFileSync(script, 'utf8').split('\n');
    const names = json.totalJs.map((f) => f.name);
    for (const fn of ['tick', 'spinNative', 'copyBytes']) {
      const line = lines.findIndex((l) => l.startsWith(`function ${fn}(`)) + 1;
      assert.ok(names.some((n) => n.startsWith(`${fn} ${script}:${line}:`)), `${fn} at ${script}:${line}: ${names.join(', ')}`);
    }
    assert.ok(!names.some((n) => n.includes('src/app.ts')), names.join(', '));
    assert.ok(!json.totalJs.some((f) => f.generated), 'no frame was mapped');
    // node's own frames named by its symbols.
    assert.ok(json.self.some((f) => f.samples > 0 && /^v8::internal::/.test(f.name)), JSON.stringify(json.self.slice(0, 10)));
    console.log(`      map refused (${m[1]} MB parsed with ${m[2]} MB held); peak ${Math.round(peakKb / 1024)} MB; ${json.samples} samples`);
  });
});
