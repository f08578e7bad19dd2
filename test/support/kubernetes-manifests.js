'use strict';
// deploy/kubernetes/'s manifests, parsed (js-yaml: the YAML parser mocha and
// ESLint already use), and their pods as the tests see them:
// test/kubernetes-manifests.test.js holds their fields to what is tested,
// test/kubernetes-pod.test.js plays them with podman.
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');
const { ROOT } = require('./harness');

const DIR = path.join(ROOT, 'deploy', 'kubernetes');
const FILES = { daemonset: 'nodetrace-daemonset.yaml', debugPod: 'nodetrace-debug-pod.yaml' };

/** The documents of one manifest, in order. */
function load(file) {
  return yaml.loadAll(fs.readFileSync(path.join(DIR, file), 'utf8'));
}

/** Each manifest's pod: { name, file, metadata, spec } (the DaemonSet's is its template's). */
function pods() {
  const daemonset = load(FILES.daemonset).find((d) => d.kind === 'DaemonSet');
  const debugPod = load(FILES.debugPod).find((d) => d.kind === 'Pod');
  return [
    { name: 'DaemonSet', file: FILES.daemonset, metadata: daemonset.spec.template.metadata, spec: daemonset.spec.template.spec },
    { name: 'debug pod', file: FILES.debugPod, metadata: debugPod.metadata, spec: debugPod.spec },
  ];
}

/** The volume a container mounts at `mountPath`, with its mount: { mount, volume } or null. */
function mountAt(spec, container, mountPath) {
  const mount = (container.volumeMounts || []).find((m) => m.mountPath === mountPath);
  if (!mount) return null;
  return { mount, volume: spec.volumes.find((v) => v.name === mount.name) || null };
}

module.exports = { DIR, FILES, load, pods, mountAt, yaml };
