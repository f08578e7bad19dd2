'use strict';
// A name matches processes, never another nodetrace run by root: with
// `nodetrace loop my-service` running, `nodetrace latency my-service` refused
// "2 Node processes have my-service" (the other nodetrace is a Node process
// whose command line holds the name). Real processes, as root; another user
// who calls a script nodetrace is still matched (nothing hides that way).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const proc = require('../lib/proc');

describe('a name matches processes, not other nodetrace runs', function () {
  this.timeout(20000);
  let dir;
  const children = [];

  before(function () {
    if (process.getuid() !== 0) this.skip();   // needs root to start a process as nobody
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-names-'));
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, 'nodetrace'), 'setInterval(() => {}, 1000);\n', { mode: 0o644 });
  });

  after(function () {
    for (const c of children) c.kill('SIGKILL');
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function start(args, opts = {}) {
    const c = spawn(process.execPath, args, { stdio: 'ignore', ...opts });
    children.push(c);
    return c;
  }

  async function waitForCommandLine(pid) {
    for (let i = 0; i < 100; i++) {
      if (proc.commandLine(pid).length > 1) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`process ${pid} never showed its command line`);
  }

  it("leaves root's nodetrace out, keeps the target and another user's script named nodetrace", async function () {
    const name = `names-service-${process.pid}`;
    const target = start(['-e', 'setInterval(() => {}, 1000)', name]);
    const ours = start([path.join(dir, 'nodetrace'), 'loop', name]);
    const theirs = start([path.join(dir, 'nodetrace'), 'loop', name], { uid: 65534, gid: 65534 });
    await Promise.all([target, ours, theirs].map((c) => waitForCommandLine(c.pid)));
    assert.strictEqual(proc.isNodetraceRun(ours.pid), true);
    assert.strictEqual(proc.isNodetraceRun(theirs.pid), false);
    assert.strictEqual(proc.isNodetraceRun(target.pid), false);
    const found = proc.findProcessesByCommandLine(name).sort((a, b) => a - b);
    assert.deepStrictEqual(found, [target.pid, theirs.pid].sort((a, b) => a - b));
  });
});
