'use strict';
// deploy/kubernetes/'s pods played by podman kube play @tracer (root and
// podman; no kubelet here: docs/kubernetes.md). Both manifests' pods, the
// DaemonSet's as its template, in one play, with what this machine needs
// put in, each said where it is done (playable()). What doctor says inside
// each is what the spec gives, held to the truth read on the host:
// privileged, tracefs, bpffs as the host has it mounted, and hostPID as
// podman says it ran the pod (podman 4.3's kube play ignores hostPID: the
// image's own tests run --pid=host: test/image/image.test.js).
// NODETRACE_IMAGE=NAME: the pods run that image (`make image`'s
// localhost/nodetrace:latest) as the manifests say it, not the tests' image
// with the checkout put in; by hand, as the image's own tests are.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { ROOT, requireTracing } = require('./support/harness');
const { containerImage, containerUnavailableReason } = require('./support/containers');
const { playPods, removePod, podman } = require('./support/pods');
const { pods, yaml } = require('./support/kubernetes-manifests');
const { doctorLines } = require('./support/doctor-lines');

const TIMEOUT_MS = 60000;
// Where the image has nodetrace (Containerfile: WORKDIR, ENTRYPOINT).
const IN_IMAGE = '/opt/nodetrace';
const ENTRYPOINT = `${IN_IMAGE}/bin/nodetrace`;

// A manifest's pod as podman can play it here: named `name`; the tests'
// image (node 22, no bpftrace: made by `make test` with no registry) for
// the nodetrace image, with the checkout mounted read-only where the image
// has nodetrace and its bin on PATH (the image links it into
// /usr/local/bin), and the image's entrypoint given where the manifest
// keeps it (the tests' image has none); the node's directories under /var
// (ebadf's cores, the kubelet's) made in `scratch`, not on this machine.
// /sys's stay the host's: they are what is tested.
function playable(pod, name, { image, checkout }, scratch) {
  const spec = JSON.parse(JSON.stringify(pod.spec));
  const [c] = spec.containers;
  c.image = image;
  if (checkout) {
    if (!c.command) c.command = [ENTRYPOINT];
    c.env = [...(c.env || []), { name: 'PATH', value: `${IN_IMAGE}/bin:/usr/local/bin:/usr/bin:/bin` }];
    c.volumeMounts.push({ name: 'checkout', mountPath: IN_IMAGE, readOnly: true });
    spec.volumes.push({ name: 'checkout', hostPath: { path: ROOT, type: 'Directory' } });
  }
  for (const v of spec.volumes) {
    if (!v.hostPath.path.startsWith('/var/')) continue;
    v.hostPath.path = path.join(scratch, v.name);
    fs.mkdirSync(v.hostPath.path);
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: pod.metadata.labels }, spec };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, probe) {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const got = probe();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`not in ${TIMEOUT_MS / 1000} s: ${what}`);
    await sleep(200);
  }
}

const inspect = (container, format) => (podman(['inspect', '-f', format, container]).stdout || '').trim();

// What doctor must say of a pod spec, from the host's own account of it.
function assertDoctorOnSpec(lines, container) {
  const pidMode = inspect(container, '{{.HostConfig.PidMode}}');
  assert(pidMode, `podman inspect ${container}`);
  const bpffsOnHost = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').some((l) => /^\S+ \/sys\/fs\/bpf bpf /.test(l));
  assert.strictEqual(lines.privilege.mark, 'ok', JSON.stringify(lines.privilege));
  assert.match(lines.privilege.detail, /CAP_SYS_ADMIN\)$/, 'privileged: outside the seccomp filter');
  assert.deepStrictEqual(lines.tracefs, { mark: 'ok', detail: 'mounted at /sys/kernel/tracing' });
  assert.strictEqual(lines.uprobes.mark, 'ok');
  assert.strictEqual(lines.bpffs.mark, bpffsOnHost ? 'ok' : 'warn', `the host ${bpffsOnHost ? 'has' : 'has no'} bpffs at /sys/fs/bpf: ${JSON.stringify(lines.bpffs)}`);
  assert.strictEqual(lines.hostPID.mark, pidMode === 'host' ? 'ok' : 'FAIL', `podman ran it with PID mode ${pidMode}: ${JSON.stringify(lines.hostPID)}`);
  if (pidMode !== 'host') assert.match(lines.hostPID.detail, /a pod's hostPID: true/);
}

describe('deploy/kubernetes: its pods played by podman kube play @tracer', function () {
  this.timeout(300000);
  const names = {};
  let scratch;

  // The image the pods run: { image, checkout (the tests' image, nodetrace put in) }.
  let run;

  before(async function () {
    const named = process.env.NODETRACE_IMAGE;
    requireTracing(this, { also: named
      ? () => (podman(['image', 'exists', named]).status === 0 ? null : `no image ${named}: make image first`)
      : containerUnavailableReason });
    run = named ? { image: named, checkout: false } : { image: containerImage().name, checkout: true };
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-k8s-'));
    const [daemonset, debugPod] = pods();
    names.daemonset = `nodetrace-test-k8s-${process.pid}-daemonset`;
    names.debugPod = `nodetrace-test-k8s-${process.pid}-debug`;
    const docs = [playable(daemonset, names.daemonset, run, fs.mkdtempSync(path.join(scratch, 'ds-'))),
      playable(debugPod, names.debugPod, run, fs.mkdtempSync(path.join(scratch, 'debug-')))];
    playPods(docs.map((d) => yaml.dump(d)).join('---\n'), Object.values(names));
  });
  after(function () {
    for (const name of Object.values(names)) removePod(name);
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('the debug pod runs its one command, doctor, and ends: privileged, tracefs, bpffs and hostPID as the spec gives them', async function () {
    const container = `${names.debugPod}-nodetrace`;
    // 'stopped' while its pod's infra container runs on, 'exited' after.
    await until(`${container} ended`, () => ['exited', 'stopped'].includes(inspect(container, '{{.State.Status}}')));
    const logs = podman(['logs', container]);
    const lines = doctorLines(logs.stdout);
    assertDoctorOnSpec(lines, container);
    // The tests' image has no tracer, and says so; the image brings one.
    if (run.checkout) assert.strictEqual(lines.tracer.mark, 'FAIL');
    else assert.match(lines.bpftrace.detail, /^bpftrace 0\.23\./, 'Debian 13\'s bpftrace');
    // The exit is doctor's own (1 where an essential check failed), not
    // the pod's start failing.
    const failed = Object.values(lines).some((l) => l.mark === 'FAIL');
    assert.strictEqual(inspect(container, '{{.State.ExitCode}}'), failed ? '1' : '0', logs.stdout + logs.stderr);
  });

  it('the DaemonSet\'s pod logs doctor, stays up, and runs nodetrace by kubectl exec\'s way in (podman exec)', async function () {
    const container = `${names.daemonset}-nodetrace`;
    const logged = await until(`doctor's last line in ${container}'s log`, () => {
      const out = podman(['logs', container]).stdout || '';
      return /^\S+\s+usdt\s/m.test(out) && out;
    });
    assertDoctorOnSpec(doctorLines(logged), container);
    await sleep(1000);
    assert.strictEqual(inspect(container, '{{.State.Status}}'), 'running', 'kept alive after doctor');
    const r = podman(['exec', container, 'nodetrace', 'ps', '--json']);
    assert.strictEqual(r.status, 0, r.stderr);
    // In kube play's own PID namespace the pod sees its own processes, none
    // of them Node (its shell became sleep); on a node, the node's.
    const { processes } = JSON.parse(r.stdout);
    if (inspect(container, '{{.HostConfig.PidMode}}') !== 'host') assert.deepStrictEqual(processes, []);
  });
});
