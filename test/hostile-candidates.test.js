'use strict';
// Issue 27.13: a newline in another process's argv forged a row in
// `profile NAME`'s list of candidates. As root beside a throwaway account:
// the user's processes' command lines hold a line break, an escape and a
// fake row; the list has one row per process, each on its own line.
const assert = require('assert');
const { requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');

describe('27.13: a command line forges no candidate row @tracer', function () {
  this.timeout(120000);
  const user = new HostileUser();
  const token = `ntcand${process.pid}`;

  before(function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
  });
  after(async function () {
    await killStragglers.call(this);
    user.remove();
  });

  it('profile NAME: one row per process, the fake row shown inside its own, escapes shown', async function () {
    // The program text itself, first on the command line: shown before any cut.
    const code = `/*${token}\n   99% CPU     1  node /srv/api.js\x1b[2J*/console.log("ready " + process.pid); setInterval(() => {}, 1000)`;
    const pids = [];
    for (let i = 0; i < 2; i++) {
      const c = user.start(process.execPath, ['-e', code]);
      pids.push(Number((await collect(c).wait('stdout', /ready (\d+)/, 30000))[1]));
    }
    const nt = runNodetrace(['profile', token, '-d', '2']);
    const r = await nt.exit;
    assert.strictEqual(r.code, 2, nt.stderr);
    // eslint-disable-next-line no-control-regex -- no escape byte may reach the terminal
    assert.doesNotMatch(nt.stderr, /\x1b/);
    const rows = nt.stderr.split('\n').filter((l) => /% CPU/.test(l));
    assert.strictEqual(rows.length, 2, nt.stderr);
    for (const pid of pids) assert(rows.some((row) => row.includes(` ${pid} `) && row.includes('\\x0a   99% CPU')), nt.stderr);
    assert(!nt.stderr.split('\n').some((l) => /^\s*99% CPU\s+1 /.test(l)), nt.stderr);
  });
});
