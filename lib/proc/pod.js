'use strict';
// The pod a process runs in, from /proc alone (no API server, no runtime's
// socket): its cgroup path says the pod's UID, its QoS class and the
// container; its name is what the pod's own files or environment say.
// Parsing is pure (cgroup paths, an environment, an etc-hosts file as text);
// podName() reads a live pod's.
//
// The cgroup paths, by who makes them (the unified hierarchy's, or any v1
// hierarchy's: every one carries the same path):
//   kubelet, systemd driver   /kubepods.slice/kubepods-burstable.slice/
//                             kubepods-burstable-pod<UID, - as _>.slice/
//                             cri-containerd-<ID>.scope (crio-, docker-)
//   kubelet, cgroupfs driver  /kubepods/burstable/pod<UID>/<ID>
//   (Guaranteed pods have no QoS level: /kubepods.slice/kubepods-pod<UID>.slice,
//   /kubepods/pod<UID>. kubernetes/kubernetes pkg/kubelet/cm: qos_container_manager
//   and pod_container_manager name the levels, cgroup_manager_linux.go's
//   ToSystemd() turns "-" into "_" and nests each prefix as a slice, and
//   SystemdPathPrefixOfRuntime() gives containerd's and CRI-O's scope prefixes.)
//   podman, cgroupfs manager  /libpod_parent/<PODID>/libpod-<ID>   (measured here:
//                             podman 4.3.1 kube play, test/fixtures)
//   podman, systemd manager   /machine.slice/machine-libpod_pod_<PODID>.slice/
//                             libpod-<ID>.scope (rootless: user-libpod_pod_)
//                             (podman pod inspect's CgroupPath; not measured here)
// (ID, PODID: 64 hex digits; a Kubernetes UID: a UUID, or 32 hex digits for
// a static pod.) A process is in a pod where it is in one of the pod's
// containers (podman's infra and Kubernetes' pause are containers too), or
// in the kubelet's pod cgroup itself; the runtimes' monitors beside them
// (podman's and CRI-O's conmon: libpod-conmon-ID.scope,
// crio-conmon-ID.scope) are not the pod's.
const fs = require('fs');
const { openRegular, readAt } = require('../safe-open');

const ID = '[0-9a-f]{64}';
const KUBE_UID = '[0-9a-f][0-9a-f_-]{7,63}';
const QOS = '(burstable|besteffort)';
const SCOPE_RUNTIMES = { 'cri-containerd': 'containerd', crio: 'cri-o', docker: 'docker' };

const LAYOUTS = [
  {
    driver: 'systemd',
    re: new RegExp(`(?:^|/)kubepods\\.slice/(?:kubepods-${QOS}\\.slice/)?kubepods-(?:[a-z]+-)?pod(${KUBE_UID})\\.slice(?:/(cri-containerd|crio|docker)-(${ID})\\.scope(?:/|$)|$)`),
    pod: (m) => ({ kind: 'kubernetes', uid: m[2].replace(/_/g, '-'), qos: m[1] || 'guaranteed',
      containerId: m[4] || null, runtime: m[3] ? SCOPE_RUNTIMES[m[3]] : null }),
  },
  {
    driver: 'cgroupfs',
    re: new RegExp(`(?:^|/)kubepods/(?:${QOS}/)?pod(${KUBE_UID})(?:/(?:(cri-containerd|crio|docker)-)?(${ID})(?:/|$)|$)`),
    pod: (m) => ({ kind: 'kubernetes', uid: m[2], qos: m[1] || 'guaranteed',
      containerId: m[4] || null, runtime: m[3] ? SCOPE_RUNTIMES[m[3]] : null }),
  },
  {
    driver: 'podman-cgroupfs',
    re: new RegExp(`(?:^|/)libpod_parent/(${ID})/libpod-(${ID})(?:/|$)`),
    pod: (m) => ({ kind: 'podman', uid: m[1], qos: null, containerId: m[2], runtime: 'podman' }),
  },
  {
    driver: 'podman-systemd',
    re: new RegExp(`(?:^|/)(?:machine|user)-libpod_pod_(${ID})\\.slice/libpod-(${ID})\\.scope(?:/|$)`),
    pod: (m) => ({ kind: 'podman', uid: m[1], qos: null, containerId: m[2], runtime: 'podman' }),
  },
];

/**
 * Pure: one cgroup path -> { kind: 'kubernetes'|'podman', uid, qos, containerId, runtime } or null.
 * qos: 'guaranteed'|'burstable'|'besteffort' (Kubernetes), null (podman);
 * containerId, runtime: null where the path does not say (the pod's own
 * cgroup; the cgroupfs driver names no runtime).
 */
function podOfPath(path) {
  for (const { re, pod } of LAYOUTS) {
    const m = re.exec(String(path || ''));
    if (m) return pod(m);
  }
  return null;
}

/** Pure: a process's cgroups (lib/proc/container.js parseCgroup) -> its pod (podOfPath) or null. */
function podOfCgroups(cgroups) {
  // The unified hierarchy (0::) first: on hybrid hosts the v1 ones agree.
  const ordered = [...cgroups].sort((a, b) => (a.hierarchy === 0 ? -1 : 0) - (b.hierarchy === 0 ? -1 : 0));
  for (const g of ordered) {
    const pod = podOfPath(g.path);
    if (pod) return pod;
  }
  return null;
}

// A pod's name, as Kubernetes allows one (a DNS label or subdomain: 253
// characters at most) and podman too. Whatever else a file or an
// environment holds is not taken for a name.
const NAME_MAX = 253;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function plausibleName(text) {
  return typeof text === 'string' && text.length <= NAME_MAX && NAME_RE.test(text) ? text : null;
}

/** Pure: HOSTNAME in an environment (NUL-separated, as /proc/PID/environ) -> a name or null. */
function nameFromEnviron(environ) {
  for (const entry of String(environ || '').split('\0')) {
    if (entry.startsWith('HOSTNAME=')) return plausibleName(entry.slice('HOSTNAME='.length));
  }
  return null;
}

/**
 * Pure: the kubelet's hosts file of a pod (/var/lib/kubelet/pods/UID/etc-hosts)
 * -> the pod's name or null. The kubelet writes its fixed lines (localhost,
 * the IPv6 names), then "IP [FQDN] HOSTNAME" for the pod, then "# Entries
 * added by HostAliases."; a pod on the host's network gets the host's file
 * ("(host network)" in its first line), which names no pod.
 */
function nameFromEtcHosts(text) {
  const lines = String(text || '').split('\n');
  if (!/^# Kubernetes-managed hosts file\.\s*$/.test(lines[0] || '')) return null;
  const fixed = new Set(['localhost', 'ip6-localhost', 'ip6-loopback', 'ip6-localnet', 'ip6-mcastprefix', 'ip6-allnodes', 'ip6-allrouters']);
  for (const line of lines.slice(1)) {
    if (line.startsWith('#')) return null;
    const fields = line.trim().split(/\s+/).filter(Boolean);
    if (fields.length < 2 || fields.slice(1).some((f) => fixed.has(f))) continue;
    return plausibleName(fields[fields.length - 1]);
  }
  return null;
}

// ---- reading a live pod's name ---------------------------------------------

const KUBELET_PODS = '/var/lib/kubelet/pods';
const ETC_HOSTS_MAX_BYTES = 64 * 1024;

/** The kubelet's name of pod `uid` (a root-owned regular file, no link followed), or null. */
function kubeletName(uid, { podsDir = KUBELET_PODS } = {}) {
  if (!/^[0-9a-f-]+$/.test(uid)) return null;
  const opened = openRegular(`${podsDir}/${uid}/etc-hosts`, { owners: [0], maxBytes: ETC_HOSTS_MAX_BYTES });
  if (opened.refused) return null;
  try {
    return nameFromEtcHosts(readAt(opened.fd, 0, opened.size).toString('utf8'));
  } finally {
    fs.closeSync(opened.fd);
  }
}

/**
 * The name of a process's pod: its environment's HOSTNAME (Kubernetes and
 * podman set it to the pod's name), else the kubelet's file, else null
 * (the pod is then known by its UID). `environ`: the process's environment text.
 */
function podName(pod, environ, o) {
  return nameFromEnviron(environ) || (pod.kind === 'kubernetes' ? kubeletName(pod.uid, o) : null);
}

module.exports = {
  podOfPath, podOfCgroups, nameFromEnviron, nameFromEtcHosts, kubeletName, podName, NAME_MAX, KUBELET_PODS,
};
