'use strict';
// lib/tracer/attach-progress.js against the real bpftrace @tracer: what it
// counts grows from nothing as bpftrace attaches its probes.
const assert = require('assert');
const fs = require('fs');
const { spawn } = require('child_process');
const { requireTracing, startTarget, stopTarget, killStragglers } = require('./support/harness');
const { collect } = require('./support/hostile-user');
const { detectBpftrace } = require('../lib/tracer/detect');
const { attachedProbeCount } = require('../lib/tracer/attach-progress');

describe('attachedProbeCount @tracer', function () {
  this.timeout(120000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('is 0 before bpftrace attaches, and counts its uprobes once they are attached @core', async function () {
    const target = await startTarget('fs-loop.js');
    const node = fs.realpathSync(`/proc/${target.pid}/exe`);
    const functions = ['uv_fs_open', 'uv_fs_close', 'uv_fs_read'];
    const program = functions.map((f) => `uprobe:${node}:${f}`).join(',') + ' /pid == $1/ { @[probe] = count(); }';
    const bpftrace = spawn(detectBpftrace().path, ['-p', String(target.pid), '-e', program, String(target.pid)], {
      env: { ...process.env, __BPFTRACE_NOTIFY_PROBES_ATTACHED: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      assert.strictEqual(attachedProbeCount(bpftrace.pid), 0, 'probes counted before bpftrace attached any');
      // The notice is on stderr up to bpftrace 0.20, on stdout from 0.21.
      const out = collect(bpftrace);
      const notice = /__BPFTRACE_NOTIFY_PROBES_ATTACHED/;
      await Promise.any([out.wait('stdout', notice, 60000), out.wait('stderr', notice, 60000)]);
      const n = attachedProbeCount(bpftrace.pid);
      // A perf event each (0.17), or BPF links (one may hold them all),
      // and 0.17's output buffers, a perf event per CPU, opened first.
      assert(n >= 1, `counted ${n} for ${functions.length} uprobes`);
    } finally {
      // Not SIGINT: bpftrace 0.17 can miss one sent just after it attached
      // (seen here: it went on waiting for events), which is why nodetrace
      // sends its signal again each second (lib/tracer/capabilities.js).
      bpftrace.kill('SIGKILL');
      await new Promise((resolve) => bpftrace.once('close', resolve));
      stopTarget(target);
    }
  });
});
