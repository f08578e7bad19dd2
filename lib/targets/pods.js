'use strict';
// Targets as the operator of pods names them (--pod): the processes of one
// pod, Kubernetes' or podman's, by its name or its UID (a Kubernetes pod's
// UID, a podman pod's ID; 8 characters of it or more). Found from /proc
// alone (lib/proc/pod.js): no API server, no runtime's socket. Pure: the
// host's facts come from a `host` object (lib/targets/resolve.js hostFacts:
// allPids, identityOf).
//
// A pod's name is what its processes' environment or the kubelet's file
// says: another user's word. A match is strict (the whole name, or a UID
// prefix), and where two pods answer to what was asked, both are listed
// with their UIDs and none is taken.
const { EXIT, UsageError, UserError } = require('../errors');
const { podText } = require('../proc/container');
const { safeText } = require('../terminal-safe');

const LIST_MAX = 10;
const UID_PREFIX_MIN = 8;

/** Every pod with a process on this host: [{ pod, pids }], in PID order; a pod's name is its first process's that says one. */
function podsOn(host) {
  const byUid = new Map();
  for (const pid of [...host.allPids()].sort((a, b) => a - b)) {
    const who = host.identityOf(pid);
    if (!who || !who.pod) continue;
    const key = `${who.pod.kind}:${who.pod.uid}`;
    if (!byUid.has(key)) byUid.set(key, { pod: { ...who.pod }, pids: [] });
    const entry = byUid.get(key);
    if (!entry.pod.name && who.pod.name) entry.pod.name = who.pod.name;
    entry.pids.push(pid);
  }
  return [...byUid.values()];
}

/** Pure: whether `text` names `pod`: its whole name, or its UID or the first 8 or more characters of it. */
function matchesPod(pod, text) {
  const t = String(text).trim();
  if (pod.name && pod.name === t) return true;
  const uid = t.toLowerCase();
  return /^[0-9a-f][0-9a-f-]*$/.test(uid) && uid.length >= UID_PREFIX_MIN && pod.uid.startsWith(uid);
}

function listPods(pods) {
  return pods.slice(0, LIST_MAX).map((p) => `${podText(p.pod)}: ${p.pids.length} ${p.pids.length === 1 ? 'process' : 'processes'}`).join('\n  ')
    + (pods.length > LIST_MAX ? `\n  (and ${pods.length - LIST_MAX} more)` : '');
}

/**
 * The processes of the one pod `text` names -> { pod, pids }. No such pod:
 * exit 3 (nothing matched, as for --container and -p), listing those there
 * are, with `nodetrace ps` as the hint; several: exit 2 (usage: give more),
 * listing them.
 */
function podProcesses(text, host, { command }) {
  const all = podsOn(host);
  const found = all.filter((p) => matchesPod(p.pod, text));
  const asked = safeText(String(text), { oneLine: true });
  if (!found.length) {
    throw new UserError(`no pod with a process on this host is named "${asked}" or has a UID that starts so (8 characters or more).`,
      { hint: all.length ? `Pods running here:\n  ${listPods(all)}\nSee their processes with: nodetrace ps` : 'No process on this host runs in a pod nodetrace recognizes (Kubernetes, podman); see: nodetrace ps',
        exitCode: EXIT.NOT_FOUND });
  }
  if (found.length > 1) {
    throw new UsageError(`"${asked}" names ${found.length} pods:\n  ${listPods(found)}`, `Give the pod's UID: nodetrace ${command} --pod UID`);
  }
  return found[0];
}

module.exports = { podsOn, podProcesses, matchesPod, UID_PREFIX_MIN };
