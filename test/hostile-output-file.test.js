'use strict';
// Issue 27.9: a 0666 /tmp/p.pb.gz that another user made first received
// root's profile and stayed theirs; a link at --folded made root write
// through it; a symbolic link was refused only after the whole trace, and
// the report was lost. As root beside a throwaway account: each is refused
// before tracing starts, in one line, and nothing is written into it.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, runNodetrace } = require('./support/hostile-user');

// Refused before the tracer starts: the check reads one lstat. A loaded
// host may take seconds to start node and find the process.
const REFUSAL_BOUND_S = 15;

describe('27.9: report files another user prepared are refused before the trace @tracer', function () {
  this.timeout(120000);
  const user = new HostileUser();
  let victim;

  before(function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
    victim = path.join(user.home, 'victim.txt');
  });
  after(async function () {
    await killStragglers.call(this);
    user.remove();
  });

  const cases = [
    ['a 0666 file of theirs at --pprof', '--pprof', 'p.pb.gz', (f) => user.run('/bin/sh', ['-c', `umask 0; : > "${f}"`]), /it belongs to another user \(uid \d+\)/],
    ['their symbolic link at --svg', '--svg', 'cpu.svg', (f) => user.run('/bin/ln', ['-s', victim, f]), /it is a symbolic link/],
    ['their hard link at --folded', '--folded', 'fold.txt', (f) => {
      user.run('/bin/sh', ['-c', `echo precious > "${victim}"`]);
      return user.run('/bin/ln', [victim, f]);
    }, /it belongs to another user|it has 2 hard links/],
  ];
  for (const [what, option, name, plant, why] of cases) {
    it(`${what}: refused in one line before tracing, nothing written`, async function () {
      const file = `/tmp/nt-${process.pid}-${name}`;
      assert.strictEqual(plant(file).status, 0);
      const before = fs.lstatSync(file);
      const started = Date.now();
      const nt = runNodetrace(['profile', '-p', String(process.pid), '-d', '20', option, file]);
      const r = await nt.exit;
      const seconds = (Date.now() - started) / 1000;
      assert.notStrictEqual(r.code, 0);
      assert(seconds < REFUSAL_BOUND_S, `refused after ${seconds} s: after the trace?`);
      assert.match(nt.stderr, new RegExp(`^nodetrace: refusing to write ${file.replace(/[.]/g, '\\.')}: ${why.source}`));
      assert.doesNotMatch(nt.stderr, /profiling|\n\s+at /);
      const after = fs.lstatSync(file);
      assert.deepStrictEqual([after.uid, after.size, after.ino, after.mtimeMs],
        [before.uid, before.size, before.ino, before.mtimeMs]);
      if (fs.existsSync(victim)) assert.strictEqual(fs.readFileSync(victim, 'utf8').trim(), 'precious');
      fs.rmSync(file, { force: true });
    });
  }
});
