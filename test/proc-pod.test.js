'use strict';
// The pod a process runs in (lib/proc/pod.js): its cgroup path by who made
// it, and its name from its environment or the kubelet's hosts file. The
// podman pod is captured here (test/fixtures/proc-cgroup-podman-kube-play.txt
// and its .cmd); the kubelet's layouts are written down from their source,
// each case saying where (no kubelet runs on this host). IDs are made up.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const pod = require('../lib/proc/pod');
const c = require('../lib/proc/container');

const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const CID = 'ab'.repeat(32);
const UID = '0f1e2d3c-aaaa-4bbb-8ccc-0123456789ab';
const UID_ = UID.replace(/-/g, '_');

describe('pods from cgroup paths (lib/proc/pod.js)', function () {
  it('podman kube play, cgroupfs manager (measured here): /libpod_parent/PODID/libpod-ID, named by its HOSTNAME', function () {
    const id = c.identityFrom({ pid: 24804, status: 'NSpid:\t24804\t1\n', cgroup: fixture('proc-cgroup-podman-kube-play.txt'),
      podNameOf: (p) => pod.podName(p, 'HOME=/root\0HOSTNAME=ntpodmeasure\0') });
    assert.deepStrictEqual(id.pod, { kind: 'podman', uid: '2206a28fbbf160abc08ada9fde432f10bd2ee84d1057e4aa1ba1a3466d9483ab', qos: null, name: 'ntpodmeasure' });
    assert.strictEqual(id.container.id, 'e661181a4d15ef2eb0af60402082b1e4870473c4bdbd22e1279b386b3eb020d3');
    assert.strictEqual(c.describeIdentity(id), 'PID 24804 (PID 1 in podman container e661181a4d15 of pod ntpodmeasure (2206a28fbbf1))');
    assert.deepStrictEqual(c.identityJson(id).pod, { uid: id.pod.uid, kind: 'podman', qos: null, name: 'ntpodmeasure' });
    // Another container of the same pod (its infra, podman's pause) is in the same pod.
    assert.deepStrictEqual(pod.podOfPath(`/libpod_parent/${'cd'.repeat(32)}/libpod-${CID}`).uid, 'cd'.repeat(32));
  });

  // podman pod inspect's CgroupPath under the systemd manager,
  // "machine.slice/machine-libpod_pod_<PODID>.slice" (rootless:
  // user-libpod_pod_, as podman's own system tests name the slice).
  it('podman, systemd manager: machine-libpod_pod_PODID.slice, rootless user-libpod_pod_PODID.slice', function () {
    assert.deepStrictEqual(pod.podOfPath(`/machine.slice/machine-libpod_pod_${'cd'.repeat(32)}.slice/libpod-${CID}.scope/container`),
      { kind: 'podman', uid: 'cd'.repeat(32), qos: null, containerId: CID, runtime: 'podman' });
    assert.strictEqual(pod.podOfPath(`/user.slice/user-1000.slice/user@1000.service/user.slice/user-libpod_pod_${'cd'.repeat(32)}.slice/libpod-${CID}.scope`).uid, 'cd'.repeat(32));
  });

  // kubernetes/kubernetes pkg/kubelet/cm: qos_container_manager_linux.go and
  // pod_container_manager_linux.go name kubepods/<qos>/pod<UID> (Guaranteed:
  // kubepods/pod<UID>); cgroup_manager_linux.go ToSystemd() escapes "-" as
  // "_" and nests each prefix ("kubepods-burstable-pod<UID>.slice"), and
  // SystemdPathPrefixOfRuntime() gives "cri-containerd" and "crio" for the
  // container's scope; cri-dockerd's is "docker-<ID>.scope".
  it('kubelet, systemd driver: containerd, CRI-O and docker under each QoS class', function () {
    const cases = [
      [`/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_}.slice/cri-containerd-${CID}.scope`, 'burstable', 'containerd'],
      [`/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID_}.slice/crio-${CID}.scope`, 'besteffort', 'cri-o'],
      [`/kubepods.slice/kubepods-pod${UID_}.slice/docker-${CID}.scope`, 'guaranteed', 'docker'],
    ];
    for (const [p, qos, runtime] of cases) {
      assert.deepStrictEqual(pod.podOfPath(p), { kind: 'kubernetes', uid: UID, qos, containerId: CID, runtime }, p);
    }
    // The pod's own slice (the pause process under cgroups v1's layout), and a static pod's UID (32 hex digits).
    assert.deepStrictEqual(pod.podOfPath(`/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_}.slice`),
      { kind: 'kubernetes', uid: UID, qos: 'burstable', containerId: null, runtime: null });
    assert.strictEqual(pod.podOfPath(`/kubepods.slice/kubepods-pod${'e3'.repeat(16)}.slice/crio-${CID}.scope`).uid, 'e3'.repeat(16));
  });

  it('kubelet, cgroupfs driver: /kubepods/<qos>/pod<UID>/<ID> (the runtime unnamed), Guaranteed with no QoS level', function () {
    assert.deepStrictEqual(pod.podOfPath(`/kubepods/burstable/pod${UID}/${CID}`), { kind: 'kubernetes', uid: UID, qos: 'burstable', containerId: CID, runtime: null });
    assert.deepStrictEqual(pod.podOfPath(`/kubepods/pod${UID}/${CID}`), { kind: 'kubernetes', uid: UID, qos: 'guaranteed', containerId: CID, runtime: null });
    assert.deepStrictEqual(pod.podOfPath(`/kubepods/besteffort/pod${UID}/crio-${CID}`), { kind: 'kubernetes', uid: UID, qos: 'besteffort', containerId: CID, runtime: 'cri-o' });
    // A v1 hierarchy's line, with the unified one empty (a hybrid host): the pod is found.
    const lines = `12:pids:/kubepods/burstable/pod${UID}/${CID}\n0::/\n`;
    assert.strictEqual(pod.podOfCgroups(c.parseCgroup(lines)).uid, UID);
  });

  it('no pod: the host, a plain container, a name that only looks like one', function () {
    for (const p of ['/', '/user.slice/user-0.slice/session-1.scope', `/libpod_parent/libpod-${CID}`, `/system.slice/docker-${CID}.scope`,
      '/kubepods.slice', '/kubepods/burstable', `/evil/kubepodsX/pod${UID}`, `/libpod_parent/${CID.slice(2)}/libpod-${CID}`,
      // The runtimes' monitors beside a pod's containers: podman's conmon, CRI-O's.
      `/libpod_parent/${CID}/conmon`, `/machine.slice/machine-libpod_pod_${CID}.slice/libpod-conmon-${CID}.scope`,
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_}.slice/crio-conmon-${CID}.scope`,
      `/kubepods/burstable/pod${UID}/crio-conmon-${CID}`]) {
      assert.strictEqual(pod.podOfPath(p), null, p);
    }
    assert.strictEqual(c.identityFrom({ pid: 5, status: null, cgroup: `0::/libpod_parent/libpod-${CID}` }).pod, null);
  });
});

describe('a pod\'s name (lib/proc/pod.js)', function () {
  it('HOSTNAME in the environment, as Kubernetes and podman set it; nothing else is taken for a name', function () {
    assert.strictEqual(pod.nameFromEnviron('PATH=/bin\0HOSTNAME=web-7d4b9-x2k\0'), 'web-7d4b9-x2k');
    assert.strictEqual(pod.nameFromEnviron('PATH=/bin\0'), null);
    assert.strictEqual(pod.nameFromEnviron(null), null);
    for (const bad of ['web\x1b[2J', 'a b', '', '-lead', 'x'.repeat(pod.NAME_MAX + 1), 'w\u202eeb']) {
      assert.strictEqual(pod.nameFromEnviron(`HOSTNAME=${bad}\0`), null, JSON.stringify(bad));
    }
  });

  // The kubelet's managedHostsFileContent (pkg/kubelet/kubelet_pods.go): its
  // fixed lines, the pod's "IP [FQDN] HOSTNAME", then HostAliases' entries.
  it('the kubelet\'s etc-hosts: the pod\'s line after the fixed ones; a host-network pod\'s file names none', function () {
    const fixed = '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n'
      + 'fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';
    assert.strictEqual(pod.nameFromEtcHosts(`${fixed}10.244.1.7\tweb-7d4b9-x2k\n`), 'web-7d4b9-x2k');
    assert.strictEqual(pod.nameFromEtcHosts(`${fixed}10.244.1.7\tdb-0.db.prod.svc.cluster.local\tdb-0\n\n# Entries added by HostAliases.\n1.2.3.4\tforged\n`), 'db-0');
    assert.strictEqual(pod.nameFromEtcHosts(`${fixed}# Entries added by HostAliases.\n1.2.3.4\tforged\n`), null);
    assert.strictEqual(pod.nameFromEtcHosts('# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n10.0.0.1\tnode-1\n'), null);
    assert.strictEqual(pod.nameFromEtcHosts('10.0.0.1 web\n'), null);
  });

  it('the kubelet\'s file read bounded, root\'s only, never through a link; the environment first', function () {
    const dir = fs.mkdtempSync('/tmp/nodetrace-pods-');
    try {
      fs.mkdirSync(path.join(dir, UID));
      fs.writeFileSync(path.join(dir, UID, 'etc-hosts'), '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n10.1.1.1\tapi-5c9\n');
      const k = { kind: 'kubernetes', uid: UID };
      if (process.getuid() === 0) assert.strictEqual(pod.kubeletName(UID, { podsDir: dir }), 'api-5c9');
      assert.strictEqual(pod.podName(k, 'HOSTNAME=from-env\0', { podsDir: dir }), 'from-env');
      // A link in the file's place is not followed; a UID that is no UID names no file.
      const other = '11111111-2222-3333-4444-555555555555';
      fs.mkdirSync(path.join(dir, other));
      fs.symlinkSync(path.join(dir, UID, 'etc-hosts'), path.join(dir, other, 'etc-hosts'));
      assert.strictEqual(pod.kubeletName(other, { podsDir: dir }), null);
      assert.strictEqual(pod.kubeletName('../x', { podsDir: dir }), null);
      // podman's pods have no kubelet: named by their environment or not at all.
      assert.strictEqual(pod.podName({ kind: 'podman', uid: 'cd'.repeat(32) }, '', { podsDir: dir }), null);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
