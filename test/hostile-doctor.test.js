'use strict';
// Issue 27.10: `doctor -p` printed a process's executable and object paths
// raw: a directory named with ESC[2J, an OSC title, a newline and a fake
// line reached root's terminal as such. The paths are now shown escaped,
// each on its line, and the by-hand command still runs as printed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { ROOT, requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');

const TARGETS = path.join(ROOT, 'test', 'targets');
const FAKE_LINE = 'nodetrace: all clear, nothing to see';
const HOSTILE_DIR = `d\x1b[2J\x1b]0;pwned\x07\n${FAKE_LINE}\r\x9b31m`;

describe('27.10: doctor -p shows a hostile path, never obeys it @tracer', function () {
  this.timeout(240000);
  const user = new HostileUser();
  let pid;
  let exe;

  before(async function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
    const dir = path.join(user.home, HOSTILE_DIR);
    assert.strictEqual(user.run('/bin/mkdir', [dir]).status, 0);
    exe = path.join(dir, 'node');
    assert.strictEqual(user.run('/bin/cp', [fs.realpathSync(process.execPath), exe]).status, 0);
    const target = user.start(exe, [path.join(TARGETS, 'fs-loop.js')]);
    pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 30000))[1]);
  });
  after(async function () {
    await killStragglers.call(this);
    user.remove();
  });

  it('text: every control character shown escaped, the fake line never a line of its own', async function () {
    const nt = runNodetrace(['doctor', '-p', String(pid)]);
    const r = await nt.exit;
    assert.strictEqual(r.code, 0, nt.stderr);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(nt.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/, 'a raw control character');
    assert(!nt.stdout.split('\n').some((l) => l.startsWith(FAKE_LINE)), nt.stdout);
    assert(nt.stdout.includes('d\\x1b[2J\\x1b]0;pwned\\x07\\x0anodetrace: all clear'), nt.stdout);
  });

  it('--json: the path exact, and nothing a terminal obeys', async function () {
    const nt = runNodetrace(['doctor', '-p', String(pid), '--json']);
    const r = await nt.exit;
    assert.strictEqual(r.code, 0, nt.stderr);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(nt.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    assert.strictEqual(JSON.parse(nt.stdout).executable, exe);
  });

  it('the by-hand line, run by sh as printed, attaches to the hostile user\'s node', async function () {
    const nt = runNodetrace(['doctor', '-p', String(pid)]);
    await nt.exit;
    const line = /^ {2}by hand: (.*)$/m.exec(nt.stdout);
    assert.ok(line, nt.stdout);
    const sh = spawn('sh', ['-c', line[1]], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = collect(sh);
    try {
      await out.wait('stdout', /Hit Ctrl-C to end\./, 180000);
    } finally {
      // Ended as nodetrace ends bpftrace: SIGTERM, again every second (0.17 can miss one).
      const nudge = setInterval(() => { try { process.kill(-sh.pid, 'SIGTERM'); } catch { /* gone */ } }, 1000);
      try { process.kill(-sh.pid, 'SIGTERM'); } catch { /* gone */ }
      await out.exit;
      clearInterval(nudge);
    }
    assert.match(out.stdout, /Tracing thread-pool work queued by/);
  });
});
