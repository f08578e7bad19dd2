'use strict';
// Which Node processes are a cluster's primary and which its workers, from
// /proc: node's cluster module forks each worker with NODE_UNIQUE_ID (the
// worker's id, cluster.worker.id) in its environment and an IPC channel
// (NODE_CHANNEL_FD) to its parent, the primary (lib/internal/cluster/
// primary.js createWorkerProcess, Node 18 to 26). /proc/PID/environ keeps
// the environment the process started with: the worker's JavaScript may
// delete the variable, its environ still has it.
//
// The environment is the process's own: read bounded, and only a worker id
// of digits is taken from it; a process can claim to be a worker of its
// parent, nothing more (docs/security.md).
const fs = require('fs');
const { readStat } = require('./stat');
const { readProcText } = require('./read-bounded');

const WORKER_ID = /(?:^|\0)NODE_UNIQUE_ID=([0-9]{1,9})(?:\0|$)/;

/** The cluster worker id an environment (NUL-separated, as /proc/PID/environ) holds, or null. Pure. */
function workerIdIn(environ) {
  const m = WORKER_ID.exec(environ);
  return m ? Number(m[1]) : null;
}

function readEnviron(pid) {
  return readProcText(`/proc/${pid}/environ`, { encoding: 'latin1' });
}

/**
 * Cluster roles among processes: [{ pid, ppid, workerId }] -> Map(pid ->
 * { role: 'worker', id, primary } | { role: 'primary', workers: [{ pid, id }] }).
 * A worker is a process with a worker id whose parent is among them; its
 * parent is then a primary. Pure.
 */
function clusterRoles(processes) {
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const roles = new Map();
  for (const p of processes) {
    if (p.workerId === null || !byPid.has(p.ppid)) continue;
    roles.set(p.pid, { role: 'worker', id: p.workerId, primary: p.ppid });
    const primary = roles.get(p.ppid) && roles.get(p.ppid).role === 'primary' ? roles.get(p.ppid) : { role: 'primary', workers: [] };
    primary.workers.push({ pid: p.pid, id: p.workerId });
    roles.set(p.ppid, primary);
  }
  for (const r of roles.values()) if (r.role === 'primary') r.workers.sort((a, b) => a.id - b.id || a.pid - b.pid);
  return roles;
}

/** What /proc says of one process for clusterRoles: { pid, ppid, workerId }, or null (gone). */
function clusterFacts(pid) {
  const st = readStat(pid);
  if (!st) return null;
  const environ = readEnviron(pid);
  return { pid, ppid: st.ppid, workerId: environ === null ? null : workerIdIn(environ) };
}

// The children of a process (every thread's), from /proc/PID/task/TID/children.
function childrenOf(pid) {
  const out = [];
  let tasks = [];
  try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const t of tasks.slice(0, 4096)) {
    try {
      for (const c of (readProcText(`/proc/${pid}/task/${t}/children`) || '').trim().split(/\s+/)) if (/^[0-9]+$/.test(c)) out.push(Number(c));
    } catch { /* gone */ }
  }
  return out;
}

/** One process's cluster role (looking at its parent and its children), or null. */
function clusterOf(pid) {
  const self = clusterFacts(pid);
  if (!self) return null;
  const around = [self, ...childrenOf(pid).map(clusterFacts).filter(Boolean)];
  if (self.workerId !== null && self.ppid > 0) {
    const parent = clusterFacts(self.ppid);
    if (parent) around.push(parent);
  }
  return clusterRoles(around).get(pid) || null;
}

module.exports = { workerIdIn, clusterRoles, clusterFacts, clusterOf, childrenOf };
