'use strict';
// Node in real podman containers, as production runs it: an image imported
// from a Debian root (scripts/container-image.sh: the official Node 22 at
// /usr/local/bin/node), node as PID 1, test/targets/ mounted read-only at
// /app. The flags are the ones this host needs (docs/platforms.md,
// "Containers"): runc (crun cannot run on hybrid cgroups), the open-file
// and process limits given outright (root here lacks CAP_SYS_RESOURCE to
// raise podman's defaults), and no network.
//
// Every container a test starts is removed: by removeContainers() (call it
// in afterEach/after) and, should the test process end first, at its exit.
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const { ROOT } = require('./harness');

const PODMAN = 'podman';
const RUN_FLAGS = ['--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096', '--network', 'none'];
const START_TIMEOUT_MS = 30000;

const live = new Set();   // names of containers started and not yet removed
let image;                 // { name } or { reason }

function podman(args, { timeout = 60000 } = {}) {
  return spawnSync(PODMAN, args, { encoding: 'utf8', timeout });
}

// The image's name, made if needed (cached; a fresh NODETRACE_CACHE makes it
// from nothing, which `make test` does before the tests): { name } or { reason }.
function containerImage() {
  if (image) return image;
  if (process.getuid() !== 0) return (image = { reason: 'podman containers need root here' });
  if (podman(['--version']).status !== 0) return (image = { reason: 'podman is not installed (make podman installs it)' });
  const r = spawnSync(path.join(ROOT, 'scripts', 'container-image.sh'), { encoding: 'utf8', timeout: 600000 });
  if (r.status !== 0) return (image = { reason: `scripts/container-image.sh failed: ${(r.stderr || r.error || '').toString().trim().split('\n').pop()}` });
  removeOrphans();
  return (image = { name: r.stdout.trim() });
}

// Containers an earlier test run left (it was killed before its exit hook
// ran): their names carry the PID of the run that started them.
function removeOrphans() {
  const r = podman(['ps', '--all', '--filter', 'name=^nodetrace-test-', '--format', '{{.Names}}']);
  for (const name of (r.stdout || '').split('\n').filter(Boolean)) {
    const m = /^nodetrace-test-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try { process.kill(Number(m[1]), 0); continue; } catch { /* its run is gone */ }
    podman(['rm', '--force', '--time', '0', name]);
  }
}

/** For requireTracing(ctx, { also }): why containers cannot run here, or null. */
function containerUnavailableReason() {
  return containerImage().reason || null;
}

/**
 * Starts `node [nodeArgs] /app/<target> [args]` as PID 1 of a new container
 * and resolves once the target printed "ready":
 *   { name, id, pid (on the host), inside (its PID in the container),
 *     stdout, output() (what it printed so far), kill(signal), remove() }
 * @param {string} target a file of test/targets/
 * @param {object} [o] { nodeArgs, args, env, tmpLinkTo: make the container's
 *   /tmp a symbolic link to this absolute path (made inside it too) before
 *   node starts: a hostile user's container, whose link names a host
 *   directory to whoever follows it from the host; timeoutMs }
 */
// hook: the checkout mounted at /nodetrace (read-only) and node started
// with its register hook, the target run from there (its node_modules:
// bunyan), as a service that ships nodetrace in its image would.
// checkout: the same mount and the target run from there, with no hook (an
// application that requires nodetrace/lib/usdt itself: usdt-app.js).
// capAdd: capabilities the container is given beyond podman's (a hostile
// one that mounts over its own directories: SYS_ADMIN).
function startContainer(target,
  { nodeArgs = [], args = [], env = {}, tmpLinkTo = null, hook = false, checkout = hook, capAdd = [],
    timeoutMs = START_TIMEOUT_MS } = {}) {
  const img = containerImage();
  if (img.reason) return Promise.reject(new Error(img.reason));
  const name = `nodetrace-test-${process.pid}-${live.size}-${Date.now().toString(36)}`;
  const node = checkout
    ? ['/usr/local/bin/node', ...(hook ? ['-r', '/nodetrace/register.js'] : []), ...nodeArgs, `/nodetrace/test/targets/${target}`, ...args]
    : ['/usr/local/bin/node', ...nodeArgs, `/app/${target}`, ...args];
  const mounts = [...(checkout ? ['--volume', `${ROOT}:/nodetrace:ro`] : []), ...capAdd.flatMap((cap) => ['--cap-add', cap])];
  // With tmpLinkTo, a shell as root in the container swaps /tmp for a link
  // to that path (made in the container too, so that node writes there)
  // and then becomes node (exec: node stays PID 1).
  const command = tmpLinkTo
    ? ['/bin/sh', '-c', 'rm -rf /tmp && mkdir -p "$0" && ln -s "$0" /tmp && exec "$@"', tmpLinkTo, ...node]
    : node;
  const envFlags = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  live.add(name);
  const child = spawn(PODMAN, ['run', '--rm', '--name', name, ...RUN_FLAGS, ...envFlags, ...mounts,
    '--volume', `${path.join(ROOT, 'test', 'targets')}:/app:ro`, img.name, ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => { err += c; });
  // Quacks like a target of test/support/harness.js where tests need it:
  // its output, and signals sent to it (by its host PID).
  const c = {
    name, child, pid: null, id: null, inside: null,
    exec: (argv) => podman(['exec', name, ...argv]),
    stdout: child.stdout,
    output: () => out,
    kill: (signal) => process.kill(c.pid, signal),
    remove: () => removeContainer(name),
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { removeContainer(name); reject(new Error(`container ${target} did not start: ${err}`)); }, timeoutMs);
    child.stdout.on('data', (chunk) => {
      const before = out;
      out += chunk;
      const m = /^ready (\d+)/m.exec(out);
      if (!m || /^ready (\d+)/m.test(before)) return;
      clearTimeout(timer);
      const r = podman(['inspect', '-f', '{{.State.Pid}} {{.Id}}', name]);
      const [pid, id] = r.stdout.trim().split(' ');
      if (r.status !== 0 || !/^[1-9][0-9]*$/.test(pid)) {
        removeContainer(name);
        reject(new Error(`podman inspect ${name}: ${r.stderr}`));
        return;
      }
      Object.assign(c, { pid: Number(pid), id, inside: Number(m[1]) });
      resolve(c);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (c.pid === null) { live.delete(name); reject(new Error(`container ${target} exited (${code}) before ready: ${err}`)); }
    });
  });
}

function removeContainer(name) {
  if (!live.has(name)) return;
  podman(['rm', '--force', '--time', '0', name]);
  live.delete(name);
}

function removeContainers() {
  for (const name of [...live]) removeContainer(name);
}

process.on('exit', removeContainers);

module.exports = { containerImage, containerUnavailableReason, startContainer, removeContainers, RUN_FLAGS };
