'use strict';
// Each user mistake gets one or two lines saying what to do, and its exit code.
const assert = require('assert');
const { spawnSync } = require('child_process');
const { startTarget, stopTarget, nodetrace, tracingUnavailableReason, NODETRACE, killStragglers } = require('./support/harness');

function assertShortError(r, pattern) {
  assert.match(r.stderr, pattern);
  assert(!/\n\s+at /.test(r.stderr), 'no stack trace for a user mistake:\n' + r.stderr);
  assert(r.stderr.trim().split('\n').length <= 3, 'at most a few lines:\n' + r.stderr);
}

describe('nodetrace latency errors', function () {
  this.timeout(30000);
  afterEach(killStragglers);

  it('rejects a PID that is not a number (usage, exit 2)', async function () {
    const r = await nodetrace(['latency', '-p', 'abc']);
    assert.strictEqual(r.code, 2);
    assertShortError(r, /process ID/);
  });

  it('says so when no such process runs (exit 3)', async function () {
    const r = await nodetrace(['latency', '-p', '3999999']);
    assert.strictEqual(r.code, 3);
    assertShortError(r, /no process with PID 3999999/);
  });

  it('refuses a process that is not Node', async function () {
    const sleeper = require('child_process').spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const r = await nodetrace(['latency', '-p', String(sleeper.pid)]);
      assert.strictEqual(r.code, 1);
      assertShortError(r, /is not a Node process/);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('needs a target: no -p and no -c is a usage error', async function () {
    const r = await nodetrace(['latency']);
    assert.strictEqual(r.code, 2);
    assertShortError(r, /Give a process: a PID \(-p PID\), part of a command line, --container NAME, --pod NAME or -c COMMAND/);
  });

  it('rejects a bad duration', async function () {
    const r = await nodetrace(['latency', '-p', String(process.pid), '-d', '-4']);
    assert.strictEqual(r.code, 2);
  });

  it('says when it is not root, with how to fix it', async function () {
    if (process.getuid() !== 0) this.skip('needs root to drop to another user');
    const target = await startTarget('sqlite-loop.js');
    try {
      const asNobody = spawnSync(process.execPath, [NODETRACE, 'latency', '-p', String(target.pid)],
        { uid: 65534, gid: 65534, encoding: 'utf8' });
      assert.strictEqual(asNobody.status, 1);
      assertShortError({ stderr: asNobody.stderr }, /needs root/);
      assert.match(asNobody.stderr, /sudo/);
    } finally {
      stopTarget(target);
    }
  });

  it('says how to install a tracer when none is on the PATH', async function () {
    const target = await startTarget('sqlite-loop.js');
    try {
      const r = await nodetrace(['latency', '-p', String(target.pid)], { env: { PATH: '/nonexistent' } });
      assert.strictEqual(r.code, 1);
      assertShortError(r, /no tracer found/);
      assert.match(r.stderr, /apt-get install -y bpftrace/);
    } finally {
      stopTarget(target);
    }
  });

  it('--dry-run prints the exact command line and program without root or tracing', async function () {
    const target = await startTarget('sqlite-loop.js');
    try {
      const r = await nodetrace(['latency', '-p', String(target.pid), '-n']);
      assert.strictEqual(r.code, 0, r.stderr);
      // This machine's node is static: every probe point is in the executable,
      // by its address there ($4 $5, $8, $10..$17), with ScheduleWork's range
      // ($6 $7) and where uv__fs_work, uv__queue_work and uv__getaddrinfo_work
      // are in memory ($9, $18, $19); no names read ($20: 0).
      const exe = `/proc/${target.pid}/(map_files/[0-9a-f]+-[0-9a-f]+|root${process.execPath})`;
      const at = '0x[0-9a-f]+';
      // (0.23+ runs with --no-warnings: capabilities.js quietMapHelperArgs.)
      assert.match(r.stdout, new RegExp(`bpftrace (--no-warnings )?-p ${target.pid} \\S+/addon-latency.bt ${exe} ${target.pid} ${exe} ${at} ${at} \\d+ \\d+ ${at} \\d+( ${at}){8} \\d+ \\d+ 0\n`),
        'the probe points by address, ScheduleWork\'s range and the pool\'s functions');
      // The functions the program names itself, by address too, each said.
      for (const [file, fn] of [['$1', 'napi_create_async_work'], ['$1', 'napi_queue_async_work'],
        ['$3', 'uv_queue_work'], ['$3', 'uv_async_send']]) {
        const said = new RegExp(`^/\\* (${at}) is ${fn} \\*/$`, 'm').exec(r.stdout);
        assert(said, `the program says where ${fn} is`);
        assert(r.stdout.includes(`\nuprobe:${file}:${said[1]}\n`), `${fn} probed at ${said[1]}`);
      }
      assert.doesNotMatch(r.stdout, /^uprobe:\$[13]:[a-z]/m, 'no probe by name');
    } finally {
      stopTarget(target);
    }
  });

  it('shows the tracer\'s own message when it rejects the program @tracer', async function () {
    if (tracingUnavailableReason()) this.skip(tracingUnavailableReason());
    // A bpftrace that cannot attach: uprobes on a binary lacking the symbols.
    const target = await startTarget('sqlite-loop.js');
    const fs = require('fs');
    const os = require('os');
    const path = require('path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-fake-'));
    try {
      const fake = path.join(dir, 'bpftrace');
      fs.writeFileSync(fake, '#!/bin/sh\n[ "$1" = --version ] && { echo "bpftrace v0.17.0"; exit 0; }\necho "stdin:1:1-10: ERROR: syntax error, unexpected identifier" >&2\nexit 1\n', { mode: 0o755 });
      // The fake on the PATH, not a tier the run may name (scripts/test-matrix.sh).
      const r = await nodetrace(['latency', '-p', String(target.pid)], { env: { PATH: dir + ':' + process.env.PATH, NODETRACE_BPFTRACE: '' } });
      assert.strictEqual(r.code, 1);
      assert.match(r.stderr, /bpftrace rejected the program/);
      assert.match(r.stderr, /syntax error/);
    } finally {
      stopTarget(target);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
