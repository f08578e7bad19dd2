'use strict';
// A -c command's memory map is what names latency's and profile's addresses
// after it exits. DTrace for Linux lets the command run once its probes are
// enabled, before its ready line reaches the output file: the pool mix ran
// and exited in 150 ms, unseen, and all its work came out as bare addresses
// (2026-11-30). So the map is read from the tracer's spawn, but only once
// the tracer's child runs the command: before its exec() that child is a
// copy of the tracer, and a tracer started by a script (the tiers' wrapper)
// first runs dirname and readlink, whose maps would name nothing (profile
// -c's frames all [unknown] once, the tiers' cells side by side).
const assert = require('assert');
const fs = require('fs');
const { spawn } = require('child_process');
const { TracedProcess } = require('../lib/tracer/run-command');
const { TracerSession } = require('../lib/tracer/session');
const { TargetSnapshots } = require('../lib/target-snapshots');
const { findOnPath } = require('../lib/tracer/detect');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a -c command, watched from the tracer\'s spawn', function () {
  this.timeout(20000);

  // Stand-in tracers (bash): one forks a copy of itself, which runs the
  // command after a second; the other first runs another program as its
  // child (as the tiers' wrapper script runs dirname and readlink), then
  // the command.
  for (const [what, script] of [
    ['a copy of the tracer', '(sleep 1; exec tail -f /dev/null) & wait'],
    ['another program the tracer runs first', 'sleep 1; tail -f /dev/null & wait'],
  ]) {
    it(`is learned only once the tracer's child runs the command, not ${what}; its binary stat'ed once`, async function () {
      const tail = fs.realpathSync(findOnPath('tail'));
      // Counts the stats of the command's binary: once for the run, not at every look.
      const statSync = fs.statSync;
      let binaryStats = 0;
      fs.statSync = (file, ...rest) => { if (file === tail) binaryStats++; return statSync(file, ...rest); };
      const tracer = spawn('bash', ['-c', script], { stdio: 'ignore' });
      const target = new TracedProcess({ command: `${tail} -f /dev/null` });
      const session = new TracerSession({ tracer: { name: 'bpftrace' }, command: `${tail} -f /dev/null` });
      session.child = tracer;   // as run() sets it
      let looks = 0;
      try {
        await sleep(400);
        target.learn(session);
        assert.strictEqual(target.pid, null, `${what} is not the command`);
        const deadline = Date.now() + 10000;
        while (!target.pid && Date.now() < deadline) {
          await sleep(100);
          target.learn(session);
          looks++;
        }
        assert(target.pid, 'the command was never learned');
        assert.strictEqual(fs.realpathSync(`/proc/${target.pid}/exe`), tail);
        assert.strictEqual(target.alive(), true);
        assert.strictEqual(session.commandPid(), target.pid);
        assert(looks >= 2, `looked ${looks} times`);
        assert.strictEqual(binaryStats, 1, `the binary stat'ed ${binaryStats} times in ${looks + 2} looks`);
      } finally {
        fs.statSync = statSync;
        tracer.kill('SIGKILL');
        if (target.pid) try { process.kill(target.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    });
  }

  it('is read every 20 ms for its first seconds however late it appears, and start() is taken once', async function () {
    let pid = null;
    const snaps = new TargetSnapshots(() => pid);
    let reads = 0;
    const refresh = snaps.refresh.bind(snaps);
    snaps.refresh = () => { const seen = refresh(); if (seen) reads++; return seen; };
    try {
      snaps.start();
      snaps.start();
      await sleep(2500);   // longer than the fast phase, had it counted from the start
      assert.strictEqual(reads, 0);
      pid = process.pid;
      await sleep(500);
      assert(reads >= 10, `read ${reads} times in 500 ms`);
      assert(snaps.latest && snaps.latest.maps.length > 0);
    } finally {
      snaps.stop();
      snaps.release();
    }
  });
});
