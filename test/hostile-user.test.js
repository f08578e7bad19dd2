'use strict';
// docs/security.md, held by tests: a hostile local user (an unprivileged
// account this file makes, and removes after) against a root operator
// running nodetrace. @tracer: real bpftrace, gdb and processes.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { ROOT, requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { findOnPath } = require('../lib/tracer/detect');

const REGISTER = path.join(ROOT, 'register.js');
const TARGETS = path.join(ROOT, 'test', 'targets');
// The bound this file holds nodetrace to: a target stopped at a hit runs
// again within this time of the hit, whatever the hostile user planted (the
// time is gcore's, for a --jitless node of ~200 MB, on a loaded 2-core host).
const STOP_BOUND_S = 30;

// Children of `pid` that are bpftrace (setpriv execs it: a direct child).
function bpftraceChildren(pid) {
  let n = 0;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      if (ppid === pid && comm === 'bpftrace') n++;
    } catch { /* gone */ }
  }
  return n;
}

describe('a hostile local user @tracer', function () {
  this.timeout(240000);
  const user = new HostileUser();
  const dirs = [];

  before(function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() || (findOnPath('gcore') ? null : 'needs gdb (gcore)') });
    user.create();
  });
  after(() => user.remove());
  afterEach(() => {
    killStragglers();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  // Runs ebadf on a target that does its bad close on SIGUSR2, after `plant`
  // had its go at /tmp/perf-PID.map; -> the report and the target's fate.
  async function ebadfWith(target, plant) {
    const t = collect(target);
    const pid = Number((await t.wait('stdout', /ready (\d+)/, 20000))[1]);
    plant(pid);
    const cores = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-cores-'));
    dirs.push(cores);
    const nt = runNodetrace(['ebadf', '-p', String(pid), '-o', cores]);
    await nt.wait('stderr', /watching PID \d+/, 60000);
    target.kill('SIGUSR2');
    const r = await nt.exit;
    const texit = await t.exit;
    return { r, nt, pid, texit, t };
  }

  function assertResumedWithinBound({ r, nt, pid, texit, t }) {
    assert.strictEqual(r.code, 0, `exit ${r.code}\n${nt.stdout}\n${nt.stderr}`);
    assert.match(nt.stdout, new RegExp(`resumed  yes, PID ${pid} is running again`));
    const m = /stopped {2}([\d.]+) (ms|s)/.exec(nt.stdout);
    assert(m, nt.stdout);
    const seconds = Number(m[1]) / (m[2] === 'ms' ? 1000 : 1);
    assert(seconds < STOP_BOUND_S, `the target was stopped ${seconds} s`);
    assert.deepStrictEqual(texit, { code: 0, signal: null }, 'the target finished its work');
    assert.match(t.stdout, /finished: \d+ ticks, 1 bad closes/);
  }

  it('a FIFO planted at /tmp/perf-PID.map never keeps an ebadf target stopped', async function () {
    const target = spawn(process.execPath, ['--jitless', path.join(TARGETS, 'ebadf-close.js')],
      { env: { ...process.env, EBADF_ON_SIGNAL: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const res = await ebadfWith(target, (pid) => {
      const r = user.run('/usr/bin/mkfifo', [`/tmp/perf-${pid}.map`]);
      assert.strictEqual(r.status, 0, r.stderr);
    });
    assertResumedWithinBound(res);
    assert.match(res.nt.stdout, new RegExp(`/tmp/perf-${res.pid}\\.map was not read: (it is not a regular file|it belongs to uid ${user.uid})`));
  });

  it('an oversized (sparse) perf map of the target\'s own user is not read, and the target runs on', async function () {
    // The target is the hostile user's own process: its map is its to write.
    const target = user.start(process.execPath, ['--jitless', path.join(TARGETS, 'ebadf-close.js')], { env: { EBADF_ON_SIGNAL: '1' } });
    const res = await ebadfWith(target, (pid) => {
      const r = user.run('/usr/bin/truncate', ['-s', '2G', `/tmp/perf-${pid}.map`]);
      assert.strictEqual(r.status, 0, r.stderr);
    });
    assertResumedWithinBound(res);
    assert.match(res.nt.stdout, new RegExp(`/tmp/perf-${res.pid}\\.map was not read: it is larger than \\d+ MB`));
  });

  it('records forged inside a probe\'s text are one record of the forger: no other PID, no loss, no early end', async function () {
    const forger = user.start(process.execPath, ['-r', REGISTER, path.join(TARGETS, 'usdt-forger.js')]);
    const f = collect(forger);
    const pid = Number((await f.wait('stdout', /ready (\d+)/, 20000))[1]);
    const nt = runNodetrace(['snoop', String(pid), '--json', '-d', '4']);
    const r = await nt.exit;
    assert.strictEqual(r.code, 0, nt.stderr);
    const lines = nt.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert(lines.length >= 5, `only ${lines.length} records in 4 s:\n${nt.stderr}`);
    for (const o of lines) {
      assert.strictEqual(o.pid, pid, `a record attributed to PID ${o.pid}: ${JSON.stringify(o)}`);
      assert.notStrictEqual(o.name, 'sshd', 'a record claiming PID 1 printed as its own');
    }
    assert(lines.some((o) => o.nodetrace === 'pid-mismatch' && o.claimed_pid === 1), 'the claim is shown for what it is');
    assert(lines.some((o) => o.nodetrace === 'not-json'), 'the forged lines are one record\'s text');
    assert.match(nt.stderr, /from 1 process\b/);
    assert.match(nt.stderr, /; none lost\./);
    assert.doesNotMatch(nt.stderr, /dropping|could not keep up/i);
    forger.kill('SIGKILL');
  });

  it('snoop \'*\' stays bounded: at most 2 tracers and 4 libraries per user, whatever the user makes, and a FIFO swapped in is never opened', async function () {
    const maker = user.start(process.execPath, ['-r', REGISTER, path.join(TARGETS, 'usdt-library-maker.js')], { env: { COUNT: '10' } });
    const m = collect(maker);
    await m.wait('stdout', /made 10/, 30000);
    const nt = runNodetrace(['snoop', '*', '--json', '-d', '8']);
    let most = 0;
    const sampler = setInterval(() => { most = Math.max(most, bpftraceChildren(nt.child.pid)); }, 100);
    try {
      await nt.wait('stderr', /snooping bunyan records/, 60000);
      // Now swap a FIFO in at the path of every library the user has.
      const dir = path.join(user.home, '.cache', 'nodetrace', 'usdt');
      for (const f of fs.readdirSync(dir).filter((e) => e.endsWith('.so'))) {
        const r = user.run('/bin/sh', ['-c', 'mkfifo "$1.fifo" && mv -f "$1.fifo" "$1"', 'sh', path.join(dir, f)]);
        assert.strictEqual(r.status, 0, r.stderr);
      }
      const started = Date.now();
      const r = await nt.exit;
      assert.strictEqual(r.code, 0, nt.stderr);
      // -d 8 counts from the attach, before this; the rest is slack for ending on a loaded host.
      const END_BOUND_MS = 30000;
      assert(Date.now() - started < END_BOUND_MS, 'the snoop ended on time (-d 8), whatever was swapped in');
    } finally {
      clearInterval(sampler);
    }
    assert(most >= 1 && most <= 2, `${most} tracers at once`);
    assert.match(nt.stderr, new RegExp(`already 4 bunyan probe libraries of uid ${user.uid}`));
    assert.doesNotMatch(nt.stderr, /MaxListenersExceeded/);
  });
});
