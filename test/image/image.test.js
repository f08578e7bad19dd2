'use strict';
// The built image (Containerfile, `make image`; docs/image.md): its doctor
// run as a pod spec would run it, and the DaemonSet's pod of
// deploy/kubernetes/ run by its manifest's fields, tracing a pod by name
// as docs/kubernetes.md's first recipe does. Not part of `make test` nor of CI (the
// image takes minutes and Debian's mirror to build): it lives outside
// test/*.test.js, which the matrix runs, and is tagged @tracer, which
// `make unit` leaves out. Run it after `make image`, as root:
//   npx mocha test/image/image.test.js        (NODETRACE_IMAGE=NAME for another image)
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { requireTracing } = require('../support/harness');
const { TRACING_FLAGS } = require('../support/image-flags');
const { pods } = require('../support/kubernetes-manifests');
const { startPod } = require('../support/pods');
const { containerUnavailableReason } = require('../support/containers');
const { doctorLines } = require('../support/doctor-lines');

const IMAGE = process.env.NODETRACE_IMAGE || 'localhost/nodetrace:latest';
// This host's podman needs these (docs/platforms.md, "Containers").
const HOST_FLAGS = ['--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

function podmanRun(flags, args) {
  return spawnSync('podman', ['run', '--rm', ...HOST_FLAGS, ...flags, IMAGE, ...args], { encoding: 'utf8', timeout: 120000 });
}

// A pod's fields as podman run flags: what podman kube play cannot run
// here (it ignores hostPID; test/kubernetes-pod.test.js). The node's
// directories under /var (ebadf's cores, the kubelet's) made in `scratch`,
// not on this machine. -> { flags, command }
function runFlagsOfPod(spec, scratch) {
  const [c] = spec.containers;
  const flags = [];
  if (c.securityContext && c.securityContext.privileged === true) flags.push('--privileged');
  if (spec.hostPID === true) flags.push('--pid=host');
  for (const m of c.volumeMounts) {
    let from = spec.volumes.find((v) => v.name === m.name).hostPath.path;
    if (from.startsWith('/var/')) fs.mkdirSync(from = path.join(scratch, m.name));
    flags.push('-v', `${from}:${m.mountPath}${m.readOnly ? ':ro' : ''}`);
  }
  return { flags, command: c.command };
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
    // The image has no source for the USDT addon: no rebuild to suggest.
    assert.match(got.usdt.detail, /no source to build it from, and tracing needs none/, got.usdt.detail);
  });

  it('ps from the image names a podman container of the host as the host\'s ps does (its store read in the host\'s root)', function () {
    const name = `nodetrace-image-ps-${process.pid}`;
    const started = spawnSync('podman', ['run', '-d', '--rm', ...HOST_FLAGS, '--network', 'none', '--name', name,
      'localhost/nodetrace-test-node22:1', 'node', '-e', 'setInterval(() => {}, 1000)'], { encoding: 'utf8' });
    if (started.status !== 0) this.skip();
    try {
      const id = started.stdout.trim().slice(0, 12);
      const r = podmanRun(TRACING_FLAGS, ['ps']);
      assert.strictEqual(r.status, 0, r.stderr);
      const line = r.stdout.split('\n').find((l) => l.includes(id));
      assert(line, r.stdout);
      assert(line.includes(`podman container ${name} (${id})`), line);
    } finally {
      spawnSync('podman', ['rm', '-f', '-t', '0', name]);
    }
  });

  it('the DaemonSet\'s pod, by its manifest\'s fields: doctor in its log, then kubectl exec\'s latency --pod NAME --json', async function () {
    requireTracing(this, { also: containerUnavailableReason });   // the target pod: the tests' image
    const [daemonset] = pods();
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-image-'));
    const name = `nodetrace-test-image-${process.pid}`;
    const target = await startPod('crypto-loop.js');
    try {
      const { flags, command } = runFlagsOfPod(daemonset.spec, scratch);
      const r = spawnSync('podman', ['run', '-d', '--name', name, ...HOST_FLAGS, ...flags, '--entrypoint', command[0], IMAGE,
        ...command.slice(1)], { encoding: 'utf8', timeout: 120000 });
      assert.strictEqual(r.status, 0, r.stderr);
      let logged = '';
      for (const deadline = Date.now() + 60000; !/^\S+\s+usdt\s/m.test(logged); await new Promise((res) => setTimeout(res, 200))) {
        assert(Date.now() < deadline, `no doctor in ${name}'s log: ${logged}`);
        logged = spawnSync('podman', ['logs', name], { encoding: 'utf8' }).stdout || '';
      }
      const got = doctorLines(logged);
      for (const check of ['privilege', 'hostPID', 'tracer', 'tracefs', 'uprobes']) assert.strictEqual(got[check].mark, 'ok', `${check}: ${logged}`);
      // The recipe: its standard output the JSON alone, nodetrace's messages apart.
      const e = spawnSync('podman', ['exec', name, 'nodetrace', 'latency', '--pod', target.name, '-d', '3', '--json'],
        { encoding: 'utf8', timeout: 180000 });
      assert.strictEqual(e.status, 0, e.stderr);
      const json = JSON.parse(e.stdout);
      assert.strictEqual(json.process.pid, target.pid);
      assert.deepStrictEqual([json.process.pod.uid, json.process.pod.name], [target.podId, target.name]);
      const pbkdf2 = json.kinds.find((k) => k.name === 'crypto.pbkdf2');
      assert(pbkdf2 && pbkdf2.count > 5, JSON.stringify(json.kinds.map((k) => [k.name, k.count])));
      assert.match(e.stderr, new RegExp(`tracing the Node process of pod ${target.name} `));
    } finally {
      spawnSync('podman', ['rm', '--force', '--time', '0', name]);
      target.remove();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
