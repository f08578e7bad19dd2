'use strict';
// Which /tmp/perf-PID.map nodetrace reads for a process (lib/symbolize.js):
// V8 never removes its map and PIDs come round again, so a map left by an
// earlier process with the same PID must not name this one's JIT frames.
const assert = require('assert');
const fs = require('fs');
const { spawn } = require('child_process');
const { openPerfMap } = require('../lib/symbolize');

describe('perf map of a process', function () {
  let child;
  let file;
  before(function () {
    child = spawn('sleep', ['60'], { stdio: 'ignore' });
    file = `/tmp/perf-${child.pid}.map`;
    // Made by this test's user, who is the process's: only its age differs.
    fs.writeFileSync(file, '7f0000001000 40 JS:*hot /app.js:1:1\n', { mode: 0o600 });
  });
  after(function () {
    child.kill('SIGKILL');
    fs.rmSync(file, { force: true });
  });

  it('reads a map written since the process started', function () {
    const now = new Date();
    fs.utimesSync(file, now, now);
    const m = openPerfMap(child.pid);
    assert(m && m.fd !== undefined, JSON.stringify(m));
    fs.closeSync(m.fd);
  });

  it('takes a map last written before the process started for none (an earlier process with its PID left it)', function () {
    const hourAgo = new Date(Date.now() - 3600 * 1000);
    fs.utimesSync(file, hourAgo, hourAgo);
    assert.strictEqual(openPerfMap(child.pid), null);
  });
});
