'use strict';
// Targets as the operator of containers names them: the processes of one
// container, by its name or the start of its ID (--container, as podman ps
// and docker ps show them), and a PID as a container knows it (node is PID
// 1 in most containers: -p 1 names the host's init) answered with the host
// PIDs that have it inside their containers. Pure: the host's facts come
// from a `host` object (lib/targets/resolve.js hostFacts: allPids,
// identityOf, commandLine).
const { UserError, UsageError, EXIT } = require('../errors');
const { describeIdentity, containerText } = require('../proc/container');
const { safeText } = require('../terminal-safe');

const LIST_MAX = 10;

/** Every container with a process on this host: [{ container, pids }], in PID order. */
function containersOn(host) {
  const byId = new Map();
  for (const pid of [...host.allPids()].sort((a, b) => a - b)) {
    const who = host.identityOf(pid);
    if (!who || !who.container) continue;
    if (!byId.has(who.container.id)) byId.set(who.container.id, { container: who.container, pids: [] });
    byId.get(who.container.id).pids.push(pid);
  }
  return [...byId.values()];
}

function matchesContainer(container, text) {
  const t = String(text).trim();
  return container.name === t || (/^[0-9a-f]{3,64}$/i.test(t) && container.id.startsWith(t.toLowerCase()));
}

/**
 * The processes of the one container `text` names (its name, or the start
 * of its ID, 3 hex digits or more) -> { container, pids }. No such
 * container: exit 3, listing those there are; several: exit 2, listing them.
 */
function containerProcesses(text, host, { command }) {
  const all = containersOn(host);
  const found = all.filter((c) => matchesContainer(c.container, text));
  const list = (cs) => cs.slice(0, LIST_MAX).map((c) => containerText(c.container)).join('\n  ')
    + (cs.length > LIST_MAX ? `\n  (and ${cs.length - LIST_MAX} more)` : '');
  if (!found.length) {
    throw new UserError(`no container with a process on this host is named "${text}" or has an ID that starts so.`,
      { hint: all.length ? `Containers running here:\n  ${list(all)}` : 'No process on this host runs in a container nodetrace recognizes (podman, docker, containerd, CRI-O).', exitCode: EXIT.NOT_FOUND });
  }
  if (found.length > 1) {
    throw new UsageError(`"${text}" names ${found.length} containers:\n  ${list(found)}`, `Give more of the ID: nodetrace ${command} --container ID`);
  }
  return found[0];
}

/**
 * The processes (other than host PID `pid` itself) whose PID in their own
 * PID namespace is `pid`: [identity]. `only`: a further test of their host PIDs.
 */
function insideMatches(pid, host, { only = () => true } = {}) {
  const out = [];
  for (const p of host.allPids()) {
    if (p === pid) continue;
    const who = host.identityOf(p);
    if (who && who.pidInside === pid && only(p)) out.push(who);
  }
  return out.sort((a, b) => a.pid - b.pid);
}

/**
 * What to tell someone who gave a PID that, in containers, names other
 * processes than on the host: "PID 1 inside its container: 27725 (...)"
 * lines and the command to run, or null when no container has such a PID
 * (`only`: as insideMatches').
 */
function insideHint(pid, host, { command, only }) {
  const matches = insideMatches(pid, host, { only });
  if (!matches.length) return null;
  const rows = matches.slice(0, LIST_MAX).map((who) => `${describeIdentity(who)}  ${commandOf(host, who.pid)}`);
  return `${matches.length === 1 ? 'This process is' : 'These processes are'} PID ${pid} in a PID namespace of their own (a container), by the host PID nodetrace needs:\n  `
    + rows.join('\n  ') + (matches.length > LIST_MAX ? `\n  (and ${matches.length - LIST_MAX} more)` : '')
    + `\nGive the host PID: nodetrace ${command} -p ${matches[0].pid}`;
}

/**
 * Throws (exit 1, as for any process that is not Node) when host PID `pid`
 * is not Node but containers hold processes with that PID inside (`only`:
 * which of them count): someone who typed -p 1 meant a container's node,
 * not the host's init.
 */
function refuseHostPidMeantInside(pid, host, { command, only }) {
  if (!host.isRunning(pid) || host.looksLikeNode(pid)) return;
  const inside = insideHint(pid, host, { command, only });
  if (inside) throw new UserError(`PID ${pid} on this host is ${host.executableName(pid) || 'another program'}, not a Node process.`, { hint: inside });
}

/**
 * For the commands that take any program (ebadf, doctor): host PID `pid`
 * is taken as it is, but when it is not Node and containers hold Node
 * processes with that PID inside, a note says so (and how to give one).
 * -> text or null.
 */
function hostPidNote(pid, host, { command }) {
  if (!host.isRunning(pid) || host.looksLikeNode(pid)) return null;
  const inside = insideHint(pid, host, { command, only: host.looksLikeNode });
  return inside ? `PID ${pid} is ${host.executableName(pid) || 'another program'} on this host, which nodetrace ${command} takes. ${inside}` : null;
}

function commandOf(host, pid) {
  const text = host.commandLine ? safeText(host.commandLine(pid), { oneLine: true }) : '';
  return text.length > 50 ? text.slice(0, 47) + '...' : text;
}

module.exports = { containersOn, containerProcesses, insideMatches, insideHint, refuseHostPidMeantInside, hostPidNote,
  matchesContainer };
