'use strict';
// Issue 35, point 3: a target that runs its code from `vm` scripts of
// 16,000,000 line breaks each made `profile` (and `loop --stacks`, the same namer)
// keep one array entry per line end for up to 1,024 scripts: with 40 such
// scripts an out-of-memory crash (4.3 GB, exit 134, nothing printed); with
// 4, 1.3 GB. Here a throwaway user's node runs 20 of them (320 M
// characters, more than the 256 M nodetrace scans for lines in a run):
// profile must stay under 512 MB, print its report, name every hot
// function, give the line the target wrote where it scanned that far, and
// say the limit where it did not.
const assert = require('assert');
const path = require('path');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { requireTracing } = require('./support/harness');
const { watchPeak } = require('./support/peak-rss');

const SCRIPTS = 20;
// As the issue's: 16 M, under the 16 MiB of one script nodetrace scans.
const LINES = 16000000;

describe('35.3: a target\'s scripts of millions of lines exhaust nothing @tracer', function () {
  this.timeout(300000);
  const user = new HostileUser();
  let pid;

  before(async function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
    const target = user.start(process.execPath, [path.join(__dirname, 'targets', 'many-lines.js')], { env: { SCRIPTS: String(SCRIPTS), LINES: String(LINES) } });
    pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 120000))[1]);
  });
  after(function () { user.remove(); });

  it('profile stays under 512 MB, names every hot function, gives the target\'s own line where it scanned and says where it did not', async function () {
    const nt = runNodetrace(['profile', '-p', String(pid), '-d', '5', '--json']);
    const peak = watchPeak(nt.child.pid);
    const end = await nt.exit;
    const peakKb = peak.stop();
    assert.strictEqual(end.code, 0, nt.stderr);
    assert.ok(peakKb < 512 * 1024, `profile peaked at ${peakKb} kB`);
    const json = JSON.parse(nt.stdout);
    const names = new Set([...json.self, ...json.totalJs].map((f) => f.name));
    const hot = [...names].filter((n) => /^hot\d+ /.test(n)).map((name) => ({ name }));
    assert.ok(hot.length >= SCRIPTS / 2, `hot functions named: ${hot.map((f) => f.name).join(', ')}`);
    for (const f of hot) {
      // Its file always; its line (the target's last, LINES + 1) where scanned, else none.
      const m = /^hot(\d+) \/srv\/lines-(\d+)\.js(?::(\d+):(\d+))?$/.exec(f.name);
      assert.ok(m && m[1] === m[2], f.name);
      if (m[3] !== undefined) assert.strictEqual(Number(m[3]), LINES + 1, f.name);
    }
    const withLines = hot.filter((f) => /:\d+:\d+$/.test(f.name)).length;
    console.log(`      profile peaked at ${Math.round(peakKb / 1024)} MB; ${withLines} of ${hot.length} hot functions with their line`);
    assert.ok(withLines > 0, `lines where it scanned: ${hot.map((f) => f.name).join(', ')}\n${nt.stderr}`);
    if (hot.some((f) => /\.js$/.test(f.name))) {
      assert.match(nt.stderr,
        /^nodetrace: V8 scripts: 268,435,456 characters of source were scanned for lines: frames further into unscanned scripts show no line$/m);
    }
  });
});
