'use strict';
// The V8 frame namer against real processes of every Node build, started
// with no flag: test/targets/v8-frames.js spins in hotLoop; it is stopped
// (SIGSTOP), its main thread walked live (registers from gdb, memory from
// /proc/PID/mem), and resumed, always; then stopped again, saved with gcore,
// killed, and its core walked after it is gone. Names and line:column are
// checked against what the target's own V8 said of its functions.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { requireTracing } = require('./support/harness');
const { nodeBuilds, CACHE, missingReason } = require('./support/node-builds');
const { startSpinning, stop } = require('./support/v8-capture');
const { openProcess } = require('../lib/v8/process');
const { openCoreForWalk } = require('../lib/v8/core');
const { registersOf } = require('../lib/v8/registers');
const { findOnPath } = require('../lib/tracer/detect');
const { readProcFile } = require('../lib/proc');

const TARGET = path.join(__dirname, 'targets', 'v8-frames.js');
const CHAIN = ['hotLoop', 'outer', 'manyLocals', '計算', 'handlers.onTick', '', 'map', 'arrow', 'run', 'Spinner', 'main'];
const AT_TRUTH = { 0: 'hotLoop', 1: 'outer', 2: 'manyLocals', 3: '計算', 4: 'handlers.onTick', 7: 'arrow', 8: 'Worker.run', 9: 'Spinner', 10: 'main' };

// The chain from hotLoop down (a stop may also land in V8's or libc's code
// that hotLoop's loop calls now and then: those frames come first).
function assertChain(frames, truth) {
  const all = frames.filter((f) => f.kind === 'js');
  const js = all.slice(Math.max(0, all.findIndex((f) => f.name === 'hotLoop')));
  const names = js.map((f) => f.name);
  assert.deepStrictEqual(names.slice(0, CHAIN.length), CHAIN, frames.map((f) => f.text).join('\n'));
  for (const [i, name] of Object.entries(AT_TRUTH)) {
    const t = truth.find((x) => x.name === name);
    assert.deepStrictEqual([js[i].line, js[i].column], [t.line + 1, t.column + 1], `${name}: ${js[i].text}`);
    assert.ok(js[i].file.endsWith('test/targets/v8-frames.js'), js[i].file);
  }
  assert.strictEqual(js[9].jsKind, 'class constructor');
  assert.strictEqual(js[4].inferred, true);
}

// Lets the loop run long enough to be compiled (on-stack replacement), as
// in a process that has been running.
const settle = () => new Promise((r) => setTimeout(r, 500));
const state = (pid) => (/\) (\S) /.exec(readProcFile(pid, 'stat') || '') || [])[1];

for (const build of nodeBuilds('all')) {
  describe(`V8 frames: ${build.label} @tracer`, function () {
    this.timeout(120000);
    let gdb;
    before(function () {
      requireTracing(this, { also: () => missingReason(build) || (findOnPath('gdb') ? null : 'gdb is not installed (make deps installs it)') });
      gdb = findOnPath('gdb');
    });

    it('walks a stopped process live, then lets it run again', async function () {
      const { child, truth } = await startSpinning(build.node, TARGET);
      let walked;
      let resumedState;
      try {
        await settle();
        await stop(child.pid);
        try {
          const threads = await registersOf(child.pid, { gdb });
          assert.ok(!threads.error, threads.error);
          const p = openProcess(child.pid);
          try {
            assert.strictEqual(p.note, null);
            walked = p.walk(threads.get(child.pid));
          } finally {
            p.close();
          }
        } finally {
          process.kill(child.pid, 'SIGCONT');
        }
        for (let i = 0; i < 100 && (resumedState = state(child.pid)) === 'T'; i++) await new Promise((r) => setTimeout(r, 10));
      } finally {
        child.kill('SIGKILL');
      }
      assertChain(walked.frames, truth);
      assert.notStrictEqual(resumedState, 'T', 'the target runs again after the walk');
    });

    it('walks the core gcore saved, after the process is gone', async function () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-v8-frames-'));
      try {
        const { child, truth } = await startSpinning(build.node, TARGET);
        const core = path.join(dir, 'core');
        try {
          await settle();
          await stop(child.pid);
          const r = spawnSync(findOnPath('gcore'), ['-o', core, String(child.pid)], { encoding: 'utf8', timeout: 90000 });
          assert.strictEqual(r.status, 0, r.stderr);
        } finally {
          child.kill('SIGKILL');
          await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', resolve)));
        }
        // Debian's node ran in a mount namespace of its own: its files are
        // under the extracted root on this host.
        const root = build.shared ? path.join(CACHE, build.name, 'root') : null;
        const c = openCoreForWalk(`${core}.${child.pid}`, { root });
        try {
          assert.strictEqual(c.pid, child.pid);
          assert.deepStrictEqual(c.notes, []);
          assertChain(c.walk(c.threads[0].registers).frames, truth);
        } finally {
          c.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
