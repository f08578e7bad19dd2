'use strict';
// A -c command's memory map is what names latency's and profile's addresses
// after it exits. DTrace for Linux lets the command run once its probes are
// enabled, before its ready line reaches the output file: the pool mix ran
// and exited in 150 ms, unseen, and all its work came out as bare addresses
// (2026-11-30). So the map is read from the tracer's spawn, but only once
// the tracer's child runs the command: before its exec() that child is a
// copy of the tracer, whose map would name the command's addresses wrongly.
const assert = require('assert');
const fs = require('fs');
const { spawn } = require('child_process');
const { TracedProcess } = require('../lib/tracer/run-command');
const { TargetSnapshots } = require('../lib/target-snapshots');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a -c command, watched from the tracer\'s spawn', function () {
  this.timeout(20000);

  it('is learned only once the tracer\'s child has exec()ed the command', async function () {
    // The stand-in tracer (bash) forks a copy of itself, which waits 1 s
    // and then runs the command (sleep).
    const tracer = spawn('bash', ['-c', '(sleep 1; exec sleep 30); wait'], { stdio: 'ignore' });
    const target = new TracedProcess({ command: 'sleep 30' });
    const session = { child: tracer };
    try {
      await sleep(400);
      target.learn(session);
      assert.strictEqual(target.pid, null, 'a copy of the tracer is not the command');
      const deadline = Date.now() + 10000;
      while (!target.pid && Date.now() < deadline) {
        await sleep(100);
        target.learn(session);
      }
      assert(target.pid, 'the command was never learned');
      assert.strictEqual(fs.readlinkSync(`/proc/${target.pid}/exe`), fs.realpathSync('/bin/sleep'));
      assert.strictEqual(target.alive(), true);
    } finally {
      tracer.kill('SIGKILL');
      if (target.pid) try { process.kill(target.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });

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
