'use strict';
// The built image (Containerfile, `make image`; docs/image.md): its doctor
// run as a pod spec would run it. Not part of `make test` nor of CI (the
// image takes minutes and Debian's mirror to build): it lives outside
// test/*.test.js, which the matrix runs, and is tagged @tracer, which
// `make unit` leaves out. Run it after `make image`, as root:
//   npx mocha test/image/image.test.js        (NODETRACE_IMAGE=NAME for another image)
const assert = require('assert');
const { spawnSync } = require('child_process');
const { requireTracing } = require('../support/harness');
const { TRACING_FLAGS } = require('../support/image-flags');

const IMAGE = process.env.NODETRACE_IMAGE || 'localhost/nodetrace:latest';
// This host's podman needs these (docs/platforms.md, "Containers").
const HOST_FLAGS = ['--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

function podmanRun(flags, args) {
  return spawnSync('podman', ['run', '--rm', ...HOST_FLAGS, ...flags, IMAGE, ...args], { encoding: 'utf8', timeout: 120000 });
}

// doctor's lines by check name: { mark, detail }
function doctorLines(stdout) {
  const lines = {};
  for (const line of stdout.split('\n')) {
    const m = /^(ok|warn|FAIL)\s+(\S+)\s+(.*)$/.exec(line);
    if (m) lines[m[2]] = { mark: m[1], detail: m[3] };
  }
  return lines;
}

describe('the image: doctor says what the pod spec lacks @tracer @image', function () {
  this.timeout(300000);

  before(function () {
    requireTracing(this, {
      also: () => (spawnSync('podman', ['image', 'exists', IMAGE]).status === 0 ? null : `no image ${IMAGE}: make image first`),
    });
  });

  it('run without privilege: says each missing flag and exits 1', function () {
    const r = podmanRun([], ['doctor']);
    assert.strictEqual(r.status, 1, r.stdout + r.stderr);
    const got = doctorLines(r.stdout);
    assert.strictEqual(got.privilege.mark, 'FAIL');
    assert.match(got.privilege.detail, /--privileged/);
    assert.strictEqual(got.hostPID.mark, 'FAIL');
    assert.match(got.hostPID.detail, /--pid=host/);
    assert.strictEqual(got.tracefs.mark, 'FAIL');
    assert.match(got.tracefs.detail, /-v \/sys\/kernel\/tracing:\/sys\/kernel\/tracing/);
    assert.strictEqual(got.tracer.mark, 'ok', 'the image brings its tracer');
    assert.strictEqual(got.gcore.mark, 'ok', 'and gdb for ebadf');
  });

  it('run privileged in the host\'s PID namespace with tracefs: nothing essential missing, exit 0', function () {
    const r = podmanRun(TRACING_FLAGS, ['doctor']);
    assert.strictEqual(r.status, 0, r.stdout + r.stderr);
    const got = doctorLines(r.stdout);
    for (const name of ['root', 'privilege', 'hostPID', 'tracer', 'tracefs', 'uprobes']) assert.strictEqual(got[name].mark, 'ok', `${name}: ${JSON.stringify(got[name])}`);
    assert.match(got.bpftrace.detail, /^bpftrace 0\.23\./, 'Debian 13\'s bpftrace');
  });
});
