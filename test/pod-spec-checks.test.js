'use strict';
// doctor inside a container (the image, docs/image.md): what the run flags or
// the pod spec lack, judged from this process's own /proc files as captured
// in real podman containers (test/fixtures/pod-spec/*.json, each with the
// .cmd that made it).
const assert = require('assert');
const path = require('path');
const { judge, tracefsHint } = require('../lib/pod-spec-checks');
const { checks } = require('../lib/host-checks');

const FIXTURES = path.join(__dirname, 'fixtures', 'pod-spec');
const facts = (name) => require(path.join(FIXTURES, `${name}.json`));
const byName = (list) => Object.fromEntries(list.map((c) => [c.name, c]));

describe('pod-spec checks: what a container running nodetrace lacks', function () {
  it('an unprivileged container: no privilege, not the host\'s PIDs, each with the flag and the pod field that give it', function () {
    const { inContainer, checks: c } = judge(facts('podman-default'));
    const got = byName(c);
    assert.strictEqual(inContainer, true);
    assert.strictEqual(got.privilege.ok, false);
    assert.ok(!got.privilege.optional);
    assert.match(got.privilege.detail, /--privileged/);
    assert.match(got.privilege.detail, /securityContext\.privileged: true/);
    assert.strictEqual(got.hostPID.ok, false);
    assert.ok(!got.hostPID.optional);
    assert.match(got.hostPID.detail, /--pid=host/);
    assert.match(got.hostPID.detail, /hostPID: true/);
    assert.strictEqual(got.bpffs.ok, false);
    assert.strictEqual(got.bpffs.optional, true, 'bpftrace pins nothing: bpffs is advice, not a failure');
  });

  it('privileged with --pid=host: both held', function () {
    const got = byName(judge(facts('podman-privileged-hostpid')).checks);
    assert.strictEqual(got.privilege.ok, true);
    assert.doesNotMatch(got.privilege.detail, /seccomp/, 'a privileged container runs unfiltered');
    assert.strictEqual(got.hostPID.ok, true);
  });

  it('CAP_SYS_ADMIN alone is privilege enough, said with its seccomp filter; its PIDs are still its own', function () {
    const got = byName(judge(facts('podman-cap-sys-admin')).checks);
    assert.strictEqual(got.privilege.ok, true);
    assert.match(got.privilege.detail, /CAP_SYS_ADMIN, under a seccomp filter/);
    assert.strictEqual(got.hostPID.ok, false);
  });

  it('bpffs mounted is seen in the mount table', function () {
    const got = byName(judge(facts('podman-privileged-bpffs')).checks);
    assert.strictEqual(got.bpffs.ok, true);
    assert.strictEqual(got.hostPID.ok, false);
  });

  it('the host itself passes (root, the initial PID namespace)', function () {
    const got = byName(judge(facts('host')).checks);
    assert.strictEqual(got.privilege.ok, true);
    assert.strictEqual(got.hostPID.ok, true);
  });

  it('CAP_BPF with CAP_PERFMON is enough without CAP_SYS_ADMIN; unreadable facts are said, not guessed', function () {
    const f = facts('podman-default');
    const bpfPerfmon = (1n << 39n) | (1n << 38n);
    const status = f.status.replace(/^CapEff:\s*\S+/m, `CapEff:\t${bpfPerfmon.toString(16).padStart(16, '0')}`);
    assert.match(byName(judge({ ...f, status }).checks).privilege.detail, /CAP_BPF and CAP_PERFMON/);
    const unknown = byName(judge({ status: null, pidNamespace: null, mounts: null, containerMarks: [] }).checks);
    assert.strictEqual(unknown.privilege.ok, false);
    assert.match(unknown.privilege.detail, /cannot read/);
    assert.strictEqual(unknown.hostPID.ok, false);
    assert.match(unknown.hostPID.detail, /cannot read/);
  });

  it('doctor\'s list carries them, and words the tracefs hint for a container', function () {
    if (process.platform !== 'linux') this.skip();   // the checks are Linux's
    const got = byName(checks({ podFacts: facts('podman-default') }));
    assert.strictEqual(got.privilege.ok, false);
    assert.strictEqual(got.hostPID.ok, false);
    assert.match(tracefsHint(true), /-v \/sys\/kernel\/tracing:\/sys\/kernel\/tracing/);
    assert.match(tracefsHint(false), /mount -t tracefs/);
  });
});
