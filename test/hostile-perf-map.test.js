'use strict';
// Issue 27.8: a FIFO at /tmp/perf-PID.map, made by the target's own user,
// used to hang `loop --stacks` (bpftrace 0.17's symbolizer opened it and
// blocked: 95 s, then killed, and a report of 0 turns and no stalls though
// there were four of 200 ms). Every command that takes user stacks runs on
// such a target, with the bpftrace under test (the matrix runs this on each
// tier) and with DTrace where it is built; each ends on time and reports
// what the target really did.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { ROOT, requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');

const { DTRACE, requireDtrace } = require('./support/dtrace-build');
const TARGETS = path.join(ROOT, 'test', 'targets');
const DURATION_S = 6;
// A run ends DURATION_S after its probes are attached; attaching takes up to
// tens of seconds on this loaded 2-core host. The hang this guards against
// lasted until nodetrace's own kill, 95 s.
const ATTACH_SLACK_S = 45;
// loop-stall.js blocks its loop 200 ms every second: about DURATION_S
// stalls; a loaded host may start or end the trace mid-interval.
const MIN_STALLS = DURATION_S - 4;

// @core on the bpftrace runs only: the tiers run those, DTrace's run in the
// main cell, where DTrace is.
describe('27.8: a FIFO at the target\'s /tmp/perf-PID.map hangs no command @tracer', function () {
  this.timeout(600000);
  const user = new HostileUser();
  let pid;
  let fifo;

  before(async function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
    // The hostile user's own node (no --perf-basic-prof: it would block on
    // its own FIFO), its loop blocked 200 ms every second.
    const target = user.start(process.execPath, [path.join(TARGETS, 'loop-stall.js')]);
    pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 30000))[1]);
    fifo = `/tmp/perf-${pid}.map`;
    const r = user.run('/usr/bin/mkfifo', [fifo]);
    assert.strictEqual(r.status, 0, r.stderr);
  });
  after(async function () {
    await killStragglers.call(this);
    user.remove();
  });

  async function run(args, env = {}) {
    const started = Date.now();
    const nt = runNodetrace([...args, '-p', String(pid), '-d', String(DURATION_S), '--json'], { env });
    const r = await nt.exit;
    const seconds = (Date.now() - started) / 1000;
    assert.strictEqual(r.code, 0, `exit ${r.code} after ${seconds} s\n${nt.stdout.slice(-2000)}\n${nt.stderr}`);
    assert(seconds < DURATION_S + ATTACH_SLACK_S, `took ${seconds} s`);
    assert(fs.lstatSync(fifo).isFIFO(), 'the FIFO is still there: the runs met it');
    return JSON.parse(nt.stdout);
  }

  const backends = [
    ['bpftrace', {}],
    ['dtrace', { NODETRACE_DTRACE: DTRACE }],
  ];
  for (const [backend, env] of backends) {
    const core = backend === 'bpftrace' ? ' @core' : '';
    const skipUnlessBuilt = (ctx) => { if (backend === 'dtrace') requireDtrace(ctx); };

    it(`loop --stacks (${backend}) ends on time and reports the stalls${core}`, async function () {
      skipUnlessBuilt(this);
      const json = await run(['loop', '--stacks', '--backend', backend], env);
      assert(json.stalls.length >= MIN_STALLS, `${json.stalls.length} stalls in ${DURATION_S} s`);
      assert(json.stalls.every((s) => s.busy_us >= 200000));
    });

    it(`profile (${backend}) ends on time and reports samples${core}`, async function () {
      skipUnlessBuilt(this);
      const json = await run(['profile', '--backend', backend], env);
      assert(json.samples > 0, JSON.stringify(json).slice(0, 500));
    });
  }

  it('profile --off-cpu (bpftrace) ends on time and reports the waits @core', async function () {
    const json = await run(['profile', '--off-cpu', '--backend', 'bpftrace']);
    assert(JSON.stringify(json).length > 100, JSON.stringify(json));
  });
});
