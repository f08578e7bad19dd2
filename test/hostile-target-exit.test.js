'use strict';
// Issue 27.7: profile, loop and gc went on tracing a PID after its process
// exited (40 s later still running), and when another user's process got
// the PID, profile reported that process's samples as the target's. A
// single-process command now ends when its target exits, saying so, and a
// PID that now names another process (its start time changed) is never
// the target.
const assert = require('assert');
const path = require('path');
const { ROOT, requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { TracedProcess } = require('../lib/tracer/run-command');
const { startTime } = require('../lib/proc/stat');

const TARGETS = path.join(ROOT, 'test', 'targets');
// From the target's exit to nodetrace's: the check every 500 ms
// (run-command.js TARGET_CHECK_MS), then ending the tracer and printing,
// which bpftrace 0.17 takes seconds for on a loaded host.
const END_BOUND_S = 30;

describe('27.7: a target\'s exit ends its trace @tracer', function () {
  this.timeout(400000);
  const user = new HostileUser();

  before(function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
  });
  after(async function () {
    await killStragglers.call(this);
    user.remove();
  });

  for (const words of [['profile'], ['loop', '--stacks'], ['gc']]) {
    it(`${words.join(' ')} -p PID, no -d: ends when the other user's process exits, saying so`, async function () {
      const target = user.start(process.execPath, ['--expose-gc', path.join(TARGETS, 'gc-churn.js')]);
      const pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 30000))[1]);
      const nt = runNodetrace([...words, '-p', String(pid)]);
      await nt.wait('stderr', /^nodetrace: tracing|^nodetrace: profiling|with bpftrace [\d.]+ \(/m, 240000);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const killedAt = Date.now();
      target.kill('SIGKILL');
      const r = await nt.exit;
      const seconds = (Date.now() - killedAt) / 1000;
      assert(seconds < END_BOUND_S, `ended ${seconds} s after the target`);
      assert.strictEqual(r.code, 0, `exit ${r.code}\n${nt.stdout.slice(-1500)}\n${nt.stderr}`);
      assert.match(nt.stderr, new RegExp(`PID ${pid} exited; here is what was gathered`));
    });
  }

  it('a PID whose start time changed is not the process planned for (PID reuse)', function () {
    assert.strictEqual(new TracedProcess({ target: { pid: process.pid } }).alive(), true);
    const reused = new TracedProcess({ target: { pid: process.pid,
      startTime: String(Number(startTime(process.pid)) - 1) } });
    assert.strictEqual(reused.alive(), false);
  });
});
