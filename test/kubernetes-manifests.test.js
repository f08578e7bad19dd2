'use strict';
// deploy/kubernetes/ held to what is tested (no cluster here: docs/kubernetes.md
// says what was run and what was not). Each pod the manifests make, the
// DaemonSet's and the one-shot debug pod's, must say as pod-spec fields:
// the flags the image's tests trace with (test/support/image-flags.js), what
// `nodetrace doctor` asks a pod spec for (lib/pod-spec-checks.js, its
// tracefs hint in lib/host-checks.js), and the paths nodetrace itself reads
// or writes on the node; and nothing else of the node's. If either side
// changes without the other, a test here fails.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { ROOT } = require('./support/harness');
const { TRACING_FLAGS } = require('./support/image-flags');
const { load, pods, mountAt, FILES } = require('./support/kubernetes-manifests');
const { judge, tracefsHint } = require('../lib/pod-spec-checks');
const { TRACEFS_DIRS } = require('../lib/host-checks');
const { KUBELET_PODS } = require('../lib/proc/pod');

// Where ebadf's cores go on the node and in the pod (the same path, so that
// the paths ebadf prints hold on the node too).
const CORES = '/var/lib/nodetrace/cores';

const isPrivileged = (spec, c) => Boolean(c.securityContext) && c.securityContext.privileged === true;

// A podman/docker run flag list as the pod-spec fields it means:
// [{ field, holds(spec, container) }]. A flag this does not know fails the
// test, so that a flag added to the image's tests is added here (and to
// the manifests) or said to need no field.
function fieldsOfFlags(flags) {
  const fields = [];
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i];
    if (flag === '--privileged') {
      fields.push({ field: 'securityContext.privileged: true', holds: isPrivileged });
    } else if (flag === '--pid=host') {
      fields.push({ field: 'hostPID: true', holds: (spec) => spec.hostPID === true });
    } else if (flag === '-v' || flag === '--volume') {
      const [from, at, mode] = flags[++i].split(':');
      fields.push(hostPathField(from, at, { readOnly: mode === 'ro' }));
    } else {
      throw new Error(`a flag the manifests' test does not know: ${flag}`);
    }
  }
  return fields;
}

// A hostPath volume of `from` mounted at `at`.
function hostPathField(from, at, { readOnly = false } = {}) {
  return {
    field: `a hostPath volume of ${from} mounted at ${at}${readOnly ? ' read-only' : ''}`,
    holds: (spec, c) => {
      const m = mountAt(spec, c, at);
      return Boolean(m && m.volume && m.volume.hostPath && m.volume.hostPath.path === from
        && Boolean(m.mount.readOnly) === readOnly);
    },
  };
}

// What doctor's hints (as an unprivileged container hears them) ask a pod
// spec for, read from their words.
function fieldsDoctorAsks() {
  const { checks } = judge(require('./fixtures/pod-spec/podman-default.json'));
  const hint = (name) => checks.find((c) => c.name === name).detail;
  const fields = [];
  const privileged = /a pod's (securityContext\.privileged: true)/.exec(hint('privilege'));
  assert(privileged, hint('privilege'));
  fields.push({ field: privileged[1], holds: isPrivileged });
  const hostPid = /a pod's (hostPID: true)/.exec(hint('hostPID'));
  assert(hostPid, hint('hostPID'));
  fields.push({ field: hostPid[1], holds: (spec) => spec.hostPID === true });
  const tracefs = /a hostPath volume of (\/\S+)/.exec(tracefsHint(true));
  assert(tracefs, tracefsHint(true));
  fields.push(hostPathField(tracefs[1], tracefs[1]));
  const bpffs = /-v (\/\S+):(\/\S+)/.exec(hint('bpffs'));
  assert(bpffs, hint('bpffs'));
  fields.push(hostPathField(bpffs[1], bpffs[2]));
  return fields;
}

describe('deploy/kubernetes: the manifests hold to what the tests run', function () {
  const all = pods();
  const container = (pod) => {
    assert.strictEqual(pod.spec.containers.length, 1, `${pod.name}: one container`);
    return pod.spec.containers[0];
  };

  it('parse: a namespace that admits privileged pods, a DaemonSet whose selector is its pods\' labels, a Pod', function () {
    const [namespace, daemonset, ...rest] = load(FILES.daemonset);
    assert.deepStrictEqual([namespace.kind, daemonset.kind, rest.length], ['Namespace', 'DaemonSet', 0]);
    assert.strictEqual(namespace.metadata.labels['pod-security.kubernetes.io/enforce'], 'privileged');
    assert.strictEqual(daemonset.metadata.namespace, namespace.metadata.name);
    for (const [k, v] of Object.entries(daemonset.spec.selector.matchLabels)) {
      assert.strictEqual(daemonset.spec.template.metadata.labels[k], v, `the API server refuses a selector its template does not match: ${k}`);
    }
    const [pod, ...more] = load(FILES.debugPod);
    assert.deepStrictEqual([pod.kind, pod.apiVersion, more.length], ['Pod', 'v1', 0]);
    assert.strictEqual(pod.metadata.namespace, namespace.metadata.name, 'the debug pod goes where privileged pods are admitted');
  });

  for (const pod of all) {
    describe(`${pod.name} (${pod.file})`, function () {
      it('says, as fields, the flags the image\'s tests trace with', function () {
        for (const f of fieldsOfFlags(TRACING_FLAGS)) assert(f.holds(pod.spec, container(pod)), `${pod.name} lacks ${f.field}`);
      });

      it('gives what doctor asks a pod spec for, tracefs where doctor looks for it', function () {
        for (const f of fieldsDoctorAsks()) assert(f.holds(pod.spec, container(pod)), `${pod.name} lacks ${f.field}`);
        const tracefs = (container(pod).volumeMounts || []).filter((m) => TRACEFS_DIRS.includes(m.mountPath));
        assert.strictEqual(tracefs.length, 1, `one of ${TRACEFS_DIRS.join(', ')} mounted`);
      });

      it('ebadf\'s cores to a writable directory of the node at the same path; the kubelet\'s pod files where nodetrace reads them, read-only', function () {
        const cores = mountAt(pod.spec, container(pod), CORES);
        assert(cores && cores.volume.hostPath, `${pod.name}: no hostPath at ${CORES}`);
        assert.deepStrictEqual([cores.volume.hostPath.path, Boolean(cores.mount.readOnly)], [CORES, false]);
        assert.strictEqual(cores.volume.hostPath.type, 'DirectoryOrCreate', 'made on a node that has none');
        const kubelet = mountAt(pod.spec, container(pod), KUBELET_PODS);
        assert(kubelet && kubelet.volume.hostPath, `${pod.name}: no hostPath at ${KUBELET_PODS}`);
        assert.deepStrictEqual([kubelet.volume.hostPath.path, kubelet.mount.readOnly], [KUBELET_PODS, true]);
      });

      it('mounts nothing else of the node', function () {
        const known = new Set([...TRACEFS_DIRS, '/sys/fs/bpf', CORES, KUBELET_PODS]);
        for (const m of container(pod).volumeMounts || []) {
          const v = pod.spec.volumes.find((vol) => vol.name === m.name);
          assert(v, `${pod.name}: mount ${m.name} has no volume`);
          const from = v.hostPath && v.hostPath.path;
          assert(known.has(from), `${pod.name}: ${JSON.stringify(v)}: not one this test accounts for`);
        }
        assert.strictEqual(pod.spec.volumes.length, (container(pod).volumeMounts || []).length, 'no volume left unmounted');
        assert.strictEqual(pod.spec.hostNetwork, undefined, 'nodetrace needs no host network');
        assert.strictEqual(pod.spec.automountServiceAccountToken, false, 'nor the API server');
      });

      it('tolerates every taint: it goes on every node', function () {
        assert(pod.spec.tolerations.some((t) => t.operator === 'Exists' && !t.key && !t.effect), JSON.stringify(pod.spec.tolerations));
      });
    });
  }

  it('the two pods ask the node for the same things', function () {
    const [a, b] = all.map((pod) => {
      const c = container(pod);
      return { hostPID: pod.spec.hostPID, image: c.image, securityContext: c.securityContext,
        volumeMounts: c.volumeMounts, volumes: pod.spec.volumes, tolerations: pod.spec.tolerations };
    });
    assert.deepStrictEqual(a, b);
  });

  it('the debug pod runs one nodetrace command by the image\'s entrypoint, once; the DaemonSet\'s says doctor and stays', function () {
    const containerfile = fs.readFileSync(path.join(ROOT, 'Containerfile'), 'utf8');
    assert.match(containerfile, /^ENTRYPOINT \["\/opt\/nodetrace\/bin\/nodetrace"\]$/m);
    const [daemonset, debugPod] = all;
    const debug = container(debugPod);
    assert.strictEqual(debug.command, undefined, 'the entrypoint kept: args are nodetrace\'s');
    assert(fs.existsSync(path.join(ROOT, 'lib', 'commands', `${debug.args[0]}.js`)), `not a nodetrace command: ${debug.args[0]}`);
    assert.strictEqual(debugPod.spec.restartPolicy, 'Never');
    // The DaemonSet's shell calls nodetrace by name: the image puts it on PATH.
    assert.match(containerfile, /ln -s \/opt\/nodetrace\/bin\/nodetrace \/usr\/local\/bin\/nodetrace/);
    assert.deepStrictEqual(container(daemonset).command, ['/bin/sh', '-c', 'nodetrace doctor; exec sleep infinity']);
  });

  it('docs/kubernetes.md\'s recipes use the manifests\' paths and names', function () {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'kubernetes.md'), 'utf8');
    assert.match(doc, new RegExp(`ebadf [^\\n]*-o ${CORES}`), 'ebadf\'s cores to the mounted directory');
    for (const file of Object.values(FILES)) assert(doc.includes(`deploy/kubernetes/${file}`), file);
    const [namespace] = load(FILES.daemonset);
    assert(doc.includes(`-n ${namespace.metadata.name}`), 'kubectl in the manifests\' namespace');
  });
});
