'use strict';
// A pod as Kubernetes describes one, run here by `podman kube play` (no
// kubelet, no registry): one container of the tests' image
// (test/support/containers.js) running `node /app/<target>`, test/targets/
// mounted read-only at /app. podman 4.3 starts it only with the open-file
// and process limits given in a containers.conf named by CONTAINERS_CONF
// (root here lacks CAP_SYS_RESOURCE to raise podman's defaults: issue 39's
// note), and runc (docs/platforms.md, "Containers").
//
// Every pod a test starts is removed: by its remove() (call it in after())
// and, should the test process end first, at its exit.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { ROOT } = require('./harness');
const { containerImage } = require('./containers');

const START_TIMEOUT_MS = 60000;
const CONTAINERS_CONF = '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n\n[engine]\nruntime = "runc"\n';

const live = new Set();   // names of pods started and not yet removed
let counter = 0;          // pods started by this process: each a name of its own

function podman(args, { env, timeout = 120000 } = {}) {
  return spawnSync('podman', args, { encoding: 'utf8', timeout, env: env ? { ...process.env, ...env } : process.env });
}

// The manifest: what a Deployment's pod template would hold for this
// container. hook: the checkout mounted at /nodetrace and node started with
// its register hook (as test/support/containers.js does); env: its
// environment (names and values of the tests' own choosing).
function manifest(name, image, target, { hook = false, env = {} } = {}) {
  const command = hook ? ['/usr/local/bin/node', '-r', '/nodetrace/register.js', `/nodetrace/test/targets/${target}`]
    : ['/usr/local/bin/node', `/app/${target}`];
  const volume = (n, at, from) => ({ mount: `    - name: ${n}\n      mountPath: ${at}\n      readOnly: true\n`,
    volume: `  - name: ${n}\n    hostPath:\n      path: ${from}\n      type: Directory\n` });
  const volumes = [volume('app', '/app', path.join(ROOT, 'test', 'targets')), ...(hook ? [volume('checkout', '/nodetrace', ROOT)] : [])];
  const envs = Object.entries(env).map(([k, v]) => `    - name: ${k}\n      value: ${JSON.stringify(String(v))}\n`).join('');
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  restartPolicy: Never
  containers:
  - name: node
    image: ${image}
    command: ${JSON.stringify(command)}
${envs ? `    env:\n${envs}` : ''}    volumeMounts:
${volumes.map((v) => v.mount).join('')}  volumes:
${volumes.map((v) => v.volume).join('')}`;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Plays a pod running `node /app/<target>` (options: manifest's) and resolves once node printed
 * "ready": { name (the pod's), podId, container (its container's name),
 * id (the container's ID), pid (node's host PID, as podman says it), remove(),
 * output() (what node printed so far) }.
 */
async function startPod(target, { hook = false, env = {}, timeoutMs = START_TIMEOUT_MS } = {}) {
  const img = containerImage();
  if (img.reason) throw new Error(img.reason);
  const name = `nodetrace-test-pod-${process.pid}-${counter++}`;
  const remove = () => removePod(name);
  try {
    playPods(manifest(name, img.name, target, { hook, env }), [name]);
    const container = `${name}-node`;
    const deadline = Date.now() + timeoutMs;
    while (!/^ready \d+/m.test(podman(['logs', container]).stdout || '')) {
      if (Date.now() > deadline) throw new Error(`pod ${name} did not print ready: ${podman(['logs', container]).stderr}`);
      await sleep(200);
    }
    const r = podman(['inspect', '-f', '{{.State.Pid}} {{.Id}}', container]);
    const [pid, id] = (r.stdout || '').trim().split(' ');
    const podId = (podman(['pod', 'inspect', '-f', '{{.Id}}', name]).stdout || '').trim();
    if (r.status !== 0 || !/^[1-9][0-9]*$/.test(pid) || !/^[0-9a-f]{64}$/.test(podId)) throw new Error(`podman inspect ${container}: ${r.stderr}`);
    return { name, podId, container, id, pid: Number(pid), remove, output: () => podman(['logs', container]).stdout || '' };
  } catch (err) {
    remove();
    throw err;
  }
}

/**
 * Plays `yaml` (one or more documents) with `podman kube play`, on no
 * network, with this host's containers.conf; `names`: the pods it makes,
 * removed by removePod(name) or at this process's exit, also if the play fails.
 */
function playPods(yaml, names) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-pod-'));
  const file = path.join(dir, 'pod.yaml');
  const conf = path.join(dir, 'containers.conf');
  fs.writeFileSync(file, yaml);
  fs.writeFileSync(conf, CONTAINERS_CONF);
  for (const name of names) live.add(name);
  try {
    const played = podman(['kube', 'play', '--network', 'none', file], { env: { CONTAINERS_CONF: conf } });
    if (played.status !== 0) throw new Error(`podman kube play: ${(played.stderr || String(played.error)).trim()}`);
  } catch (err) {
    for (const name of names) removePod(name);
    throw err;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function removePod(name) {
  if (!live.has(name)) return;
  podman(['pod', 'rm', '--force', '--time', '0', name]);
  live.delete(name);
}

process.on('exit', () => { for (const name of [...live]) removePod(name); });

module.exports = { startPod, manifest, playPods, removePod, podman };
