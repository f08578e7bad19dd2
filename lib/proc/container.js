'use strict';
// Who a process is, as the operator knows it: its PID on this host, its PID
// inside its own PID namespace (what `ps` in its container shows: node is
// often PID 1 there), and its container: the ID and runtime its cgroup path
// carries, and the name where the runtime keeps one nodetrace can read.
// Parsing and rendering are pure (captured /proc text in the tests); read()
// gathers the facts of a live process.
//
// The cgroup paths, by runtime (every hierarchy carries the same path):
//   podman, cgroupfs manager   /libpod_parent/libpod-ID            (measured here)
//   podman, systemd manager    /machine.slice/libpod-ID.scope[/container]
//   docker                     /docker/ID, /system.slice/docker-ID.scope
//   containerd under CRI       .../cri-containerd-ID.scope, /kubepods/.../pod.../ID
//   CRI-O                      .../crio-ID.scope
// (ID: 64 hex digits.) conmon, podman's monitor, has libpod-conmon-ID: not
// the container. Names: podman's own record of its containers (root's
// storage); other runtimes' containers are named by their ID.
// The pod a container is in (Kubernetes', podman's): lib/proc/pod.js.
const fs = require('fs');
const { openRegular, openInRoot, readAt } = require('../safe-open');
const { safeText } = require('../terminal-safe');
const { readProcText } = require('./read-bounded');
const { parseStat } = require('./stat');
const { podOfCgroups, podName } = require('./pod');

const ID = '([0-9a-f]{64})';
const RUNTIMES = [
  { runtime: 'podman', re: new RegExp(`/libpod-${ID}(?:\\.scope)?(?:/|$)`) },
  { runtime: 'docker', re: new RegExp(`/docker-${ID}\\.scope(?:/|$)`) },
  { runtime: 'docker', re: new RegExp(`/docker/${ID}(?:/|$)`) },
  { runtime: 'containerd', re: new RegExp(`/cri-containerd-${ID}\\.scope(?:/|$)`) },
  { runtime: 'cri-o', re: new RegExp(`/crio-${ID}\\.scope(?:/|$)`) },
  // Kubernetes with the cgroupfs driver: the runtime is not in the path.
  { runtime: 'kubernetes', re: new RegExp(`^/kubepods/(?:[a-z]+/)?pod[0-9a-f_-]+/${ID}(?:/|$)`) },
];
const SHORT_ID = 12;
const STORE_MAX_BYTES = 16 * 1024 * 1024;
const PODMAN_STORES = ['/var/lib/containers/storage/overlay-containers/containers.json'];

/** Pure: the NSpid line of /proc/PID/status -> [PID here, ..., PID innermost], or []. */
function parseNsPids(statusText) {
  const m = /^NSpid:\s*([0-9][0-9\s]*)$/m.exec(statusText || '');
  return m ? m[1].trim().split(/\s+/).map(Number) : [];
}

/** Pure: /proc/PID/cgroup -> [{ hierarchy, controllers, path }]. */
function parseCgroup(text) {
  const out = [];
  for (const line of String(text || '').split('\n')) {
    const m = /^([0-9]+):([^:]*):(.*)$/.exec(line);
    if (m) out.push({ hierarchy: Number(m[1]), controllers: m[2], path: m[3] });
  }
  return out;
}

/** Pure: the container a process's cgroups place it in -> { id, runtime } or null. */
function containerOfCgroups(cgroups) {
  // The unified hierarchy (0::) first: on hybrid hosts the v1 ones agree.
  const ordered = [...cgroups].sort((a, b) => (a.hierarchy === 0 ? -1 : 0) - (b.hierarchy === 0 ? -1 : 0));
  for (const g of ordered) {
    for (const { runtime, re } of RUNTIMES) {
      const m = re.exec(g.path);
      if (m) return { id: m[1], runtime };
    }
  }
  return null;
}

/** Pure: podman's containers.json -> Map(id -> name). */
function parsePodmanStore(text) {
  const names = new Map();
  let list;
  try { list = JSON.parse(text); } catch { return names; }
  if (!Array.isArray(list)) return names;
  for (const c of list) {
    if (c && typeof c.id === 'string' && Array.isArray(c.names) && typeof c.names[0] === 'string') names.set(c.id, c.names[0]);
  }
  return names;
}

/**
 * Pure: one process's identity from its /proc text.
 * @param {object} o { pid, status, cgroup (texts), names: Map(id -> name),
 *   otherMounts: whether it sees other mounts than nodetrace (null: unknown),
 *   podNameOf: (pod) -> its name or null (lib/proc/pod.js podName) }
 * @returns {{ pid, pidInside: number|null, nsPids: number[], container: {id, runtime, name}|null,
 *   pod: {kind, uid, qos, name}|null, otherMounts }}
 *   pidInside: its PID in its own PID namespace, null when it has none
 */
function identityFrom({ pid, status, cgroup, names = new Map(), otherMounts = null, podNameOf = () => null }) {
  const nsPids = parseNsPids(status);
  const cgroups = parseCgroup(cgroup);
  const c = containerOfCgroups(cgroups);
  const pod = podOfCgroups(cgroups);
  return {
    pid,
    pidInside: nsPids.length > 1 ? nsPids[nsPids.length - 1] : null,
    nsPids,
    container: c ? { ...c, name: names.get(c.id) || null } : null,
    pod: pod ? { kind: pod.kind, uid: pod.uid, qos: pod.qos, name: podNameOf(pod) } : null,
    otherMounts,
  };
}

/** Pure: "pod web-7d4 (2206a28fbbf1)" | "pod 0f1e2d3c-aaaa-...": a pod as messages say it. */
// The name is the pod's own to choose: on one line, escaped.
function podText(pod) {
  if (!pod) return null;
  const short = pod.kind === 'podman' ? shortId(pod.uid) : pod.uid;
  return pod.name ? `pod ${safeText(pod.name, { oneLine: true })} (${short})` : `pod ${short}`;
}

function shortId(id) {
  return id.slice(0, SHORT_ID);
}

/** Pure: "podman container web-frontend (2548ee601a87)", or null for none. */
// A container's name and a user's are others' to choose: on one line, escaped.
function containerText(container) {
  if (!container) return null;
  const name = container.name ? safeText(container.name, { oneLine: true }) : null;
  return `${safeText(container.runtime, { oneLine: true })} container ${name ? `${name} (${shortId(container.id)})` : shortId(container.id)}`;
}

/**
 * Pure: the process as the operator knows it, for headers and messages:
 *   "PID 4242" | "PID 16441 (PID 1 in podman container web-frontend (2548ee601a87))"
 *   | "PID 16489 (PID 1 in its own PID namespace)" | "PID 4242 (in docker container 2548ee601a87)"
 */
function describeIdentity(id) {
  if (!id) return '';
  const container = containerText(id.container);
  const where = (container && id.pod ? `${container} of ${podText(id.pod)}` : container || (id.pod && podText(id.pod)))
    || (id.pidInside !== null ? 'its own PID namespace' : null);
  // Where several users' processes are traced at once, whose each is (lib/proc/identity.js).
  const owner = 'uid' in id ? (id.user && safeText(id.user, { oneLine: true })) || (id.uid === null ? 'gone' : `uid ${id.uid}`) : null;
  const inside = where ? `${id.pidInside !== null ? `PID ${id.pidInside} ` : ''}in ${where}` : null;
  const said = [owner, inside].filter(Boolean);
  return said.length ? `PID ${id.pid} (${said.join('; ')})` : `PID ${id.pid}`;
}

/**
 * Pure: the identity in JSON reports: { pid, pid_inside, container: { id,
 * runtime, name } | null }, pod: { uid, kind, qos, name } where it is in
 * one, and uid and user where the identity has them.
 */
function identityJson(id) {
  return {
    pid: id.pid,
    ...('uid' in id ? { uid: id.uid, user: id.user } : {}),
    pid_inside: id.pidInside,
    container: id.container ? { id: id.container.id, runtime: id.container.runtime, name: id.container.name } : null,
    ...(id.pod ? { pod: { uid: id.pod.uid, kind: id.pod.kind, qos: id.pod.qos, name: id.pod.name } } : {}),
  };
}

// ---- reading a live process ----------------------------------------------

const readText = readProcText;

function mountNamespace(pid) {
  try { return fs.readlinkSync(`/proc/${pid}/ns/mnt`); } catch { return null; }
}

/** Whether process `pid` sees another mount tree than nodetrace (a container), or null when unknown. */
function otherMountNamespace(pid) {
  const theirs = mountNamespace(pid);
  const ours = mountNamespace('self');
  return theirs && ours ? theirs !== ours : null;
}

const PF_KTHREAD = 0x00200000;

/** Pure: whether /proc/PID/stat's text is a kernel thread's (its flags, the 9th field). */
function isKernelThreadStat(text) {
  const { flags } = parseStat(String(text || ''));
  return Number.isInteger(flags) && (flags & PF_KTHREAD) !== 0;
}

// The host's root where nodetrace runs in a container of its own that sees
// the host's processes (the image run with --pid=host, hostPID on
// Kubernetes), or null where ours is the host's. PID 1 is the host's init
// there, but a privileged podman container was refused its /proc/1/root
// (EACCES: init holds a capability the container's root does not); PID 2,
// the kernel's kthreadd, has the host's root and was readable. PID 2 is
// taken only if the kernel says it is one of its threads (a flag no process
// can set), not a process of some container's PID namespace.
function hostRootIfOther() {
  let ours;
  try { ours = fs.statSync('/'); } catch { return null; }
  for (const pid of [1, 2]) {
    if (pid === 2 && !isKernelThreadStat(readText('/proc/2/stat'))) continue;
    try {
      const theirs = fs.statSync(`/proc/${pid}/root/`);
      return theirs.dev === ours.dev && theirs.ino === ours.ino ? null : `/proc/${pid}/root`;
    } catch {
      // not readable: the next
    }
  }
  return null;
}

// Container names, read once per run: podman's record of root's containers
// (a file root owns: read as a regular file of bounded size, no links),
// in the host's root when nodetrace runs in a container (each name in the
// path looked up there, as lib/safe-open.js openInRoot does, so a link on
// the way leads nowhere outside it): from the image, a podman container
// was shown with no name.
function namesFromStores(hostRoot) {
  const names = new Map();
  for (const file of PODMAN_STORES) {
    const opened = hostRoot ? openInRoot(hostRoot, file, { owners: [0], maxBytes: STORE_MAX_BYTES })
      : openRegular(file, { owners: [0], maxBytes: STORE_MAX_BYTES });
    if (opened.refused) continue;
    try {
      for (const [id, name] of parsePodmanStore(readAt(opened.fd, 0, opened.size).toString('utf8'))) names.set(id, name);
    } finally {
      fs.closeSync(opened.fd);
    }
  }
  return names;
}

let namesCache = null;
function containerNames() {
  if (!namesCache) namesCache = namesFromStores(hostRootIfOther());
  return namesCache;
}

/** The identity of live process `pid` (identityFrom's shape); its fields are null/empty when it is gone. */
function identityOf(pid) {
  return identityFrom({
    pid,
    status: readText(`/proc/${pid}/status`),
    cgroup: readText(`/proc/${pid}/cgroup`),
    names: containerNames(),
    otherMounts: otherMountNamespace(pid),
    // The environment is read only for a process in a pod (its HOSTNAME).
    podNameOf: (pod) => podName(pod, readText(`/proc/${pid}/environ`)),
  });
}

module.exports = {
  parseNsPids, parseCgroup, containerOfCgroups, parsePodmanStore, identityFrom, describeIdentity, identityJson,
  containerText, podText, shortId,
  identityOf, otherMountNamespace, containerNames, namesFromStores, isKernelThreadStat,
};
