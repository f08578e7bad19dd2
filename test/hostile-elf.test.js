'use strict';
// Issue 35, points 1 and 2: an unprivileged user runs a copy of node whose
// section header table claims 65,000 symbol tables of 256 MiB each at
// offset 0 (a sparse file that still runs as node). Whoever read its
// symbols read for ever: `ps` was still running at 120 s (938 MB), and
// `ebadf --name` kept root's process stopped while it read. Each command
// must end on time, within its memory bound, say the file in one line and
// report the honest processes as usual.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { withSections } = require('./support/crafted-elf');

// nodetrace's own memory, whatever a file holds (lib/limits.js).
const RSS_BOUND_KB = 512 * 1024;

// The peak resident size (VmHWM) of a running process, sampled until it exits.
function watchPeak(pid) {
  let peak = 0;
  const t = setInterval(() => {
    try {
      const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch (err) { /* exited */ }
  }, 50);
  return { stop: () => { clearInterval(t); return peak; } };
}

describe('35: executables a hostile user crafts stall nothing', function () {
  this.timeout(180000);
  const user = new HostileUser();
  let hostileNode;
  let hostile;
  let honest;

  before(async function () {
    const reason = hostileUserUnavailableReason();
    if (reason) {
      if (process.env.CI) throw new Error(`cannot run in CI: ${reason}`);
      this.skip(reason);
    }
    user.create();
    hostileNode = path.join(user.home, 'node');
    withSections(process.execPath, hostileNode, { count: 65000 });
    fs.chownSync(hostileNode, user.uid, user.gid);
    const h = user.start(hostileNode, ['-e', 'console.log("ready " + process.pid); setInterval(() => {}, 1000)']);
    hostile = Number((await collect(h).wait('stdout', /ready (\d+)/, 30000))[1]);
    honest = spawn(process.execPath, ['-e', 'console.log("ready " + process.pid); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    await collect(honest).wait('stdout', /ready/, 30000);
  });

  after(function () {
    if (honest) honest.kill('SIGKILL');
    user.remove();
  });

  it('35.2: ps ends within seconds, under 512 MB, says the file once and lists every process as usual', async function () {
    const t0 = Date.now();
    const nt = runNodetrace(['ps', '--json']);
    const peak = watchPeak(nt.child.pid);
    const end = await nt.exit;
    const peakKb = peak.stop();
    const seconds = (Date.now() - t0) / 1000;
    assert.strictEqual(end.code, 0, nt.stderr);
    assert.ok(seconds < 60, `ps took ${seconds} s`);
    assert.ok(peakKb < RSS_BOUND_KB, `ps peaked at ${peakKb} kB`);
    const lines = nt.stderr.split('\n').filter((l) => l.includes(hostileNode));
    assert.strictEqual(lines.length, 1, nt.stderr);
    assert.match(lines[0], new RegExp(`^nodetrace: ${hostileNode} \\(/proc/${hostile}/map_files/[0-9a-f]+-[0-9a-f]+\\): its symbols were not read: it has 65\\d\\d\\d sections, more than the 4096 nodetrace reads$`));
    const rows = JSON.parse(nt.stdout).processes;
    const byPid = (pid) => rows.find((r) => r.pid === pid);
    assert.ok(byPid(hostile), 'the hostile process is listed');
    assert.strictEqual(byPid(hostile).commands.latency.can, 'no');
    const own = byPid(honest.pid);
    assert.strictEqual(own.node, process.versions.node);
    assert.deepStrictEqual([own.commands.latency.can, own.commands.gc.can, own.commands.async.can, own.commands.profile.can], ['yes', 'yes', 'yes', 'yes']);
  });
});
