'use strict';
// The one process a command that traces one process means (latency, gc,
// loop, profile, ebadf, doctor), from its target: a PID, or text found in
// one Node process's command line (lib/targets/resolve.js parses both, as
// for every command). When a name matches several Node processes (cluster
// workers, a supervisor and its children, two deployments side by side), it
// refuses and lists them with the CPU each is using now: the engineer on call
// wants the hot one, and a trace merged over idle and busy workers would
// hide it. Pure: the host's facts come from a `host` object (hostFacts()
// reads the real one).
const { UserError, UsageError, EXIT } = require('../errors');
const proc = require('../proc');
const shared = require('./resolve');
const { targetText } = require('./options');
const { sleepSync } = require('../clock');
const { identityOf, containerText, podText } = require('../proc/container');
const { containerProcesses, refuseHostPidMeantInside } = require('./containers');
const { podProcesses } = require('./pods');

// How long the CPU use of several candidates is watched, to list them.
const CPU_WATCH_MS = 300;
const LIST_MAX = 10;

function hostFacts() {
  return { ...shared.hostFacts(), cpuTicks: proc.stat.cpuTicks, sleep: sleepSync };
}

// [{ pid, cpu }]: each process's share of one CPU over a short watch, busiest first.
function busiest(pids, host) {
  const before = pids.map((pid) => host.cpuTicks(pid));
  host.sleep(CPU_WATCH_MS);
  return pids.map((pid, i) => {
    const after = host.cpuTicks(pid);
    const ticks = after === null || before[i] === null ? 0 : after - before[i];
    return { pid, cpu: ticks / 100 / (CPU_WATCH_MS / 1000) };   // USER_HZ ticks
  }).sort((a, b) => b.cpu - a.cpu || a.pid - b.pid);
}

/**
 * @param {string} text the target: a PID or part of a command line
 * @param {object} host hostFacts()
 * @param {object} o { command: the command's name, for messages;
 *   force: take processes that do not look like Node (undefined: the command has no --force);
 *   verbing: what the command does to it ("profiling"; default "tracing") }
 * @returns {{ pid, note: string|null }} note: which process a name chose
 */
function resolveOneProcess(text, host, { command, force, verbing = 'tracing' }) {
  const t = shared.parseTarget(text, command);
  if (t.kind === 'all') {
    throw new UsageError(`nodetrace ${command} traces one process: give its PID or part of its command line, not '*'.`,
      'Find Node processes with: pgrep -a node');
  }
  if (t.kind === 'pids' && t.pids.length > 1) {
    throw new UsageError(`nodetrace ${command} traces one process, not ${t.pids.length}: run one for each.`);
  }
  const pids = shared.matchingPids(t, host, { command });
  if (t.kind === 'pids') return { pid: pids[0], note: null };
  const quoted = `"${shared.shorten(t.pattern)}"`;
  const node = force ? pids : pids.filter((pid) => host.looksLikeNode(pid));
  if (!node.length) {
    throw new UserError(`no Node process has ${quoted} in its command line; ${pids.length === 1 ? 'this one does' : 'these do'}:\n  `
      + pids.slice(0, LIST_MAX).map((p) => shared.describeProcess(host, p)).join('\n  '),
    { hint: force === undefined ? 'Give a Node process: pgrep -a node' : `Pass --force to take a process that embeds Node under another name.`, exitCode: EXIT.NOT_FOUND });
  }
  if (node.length > 1) {
    const rows = busiest(node, host).slice(0, LIST_MAX)
      .map((r) => `${(100 * r.cpu).toFixed(0).padStart(4)}% CPU  ${shared.describeProcess(host, r.pid)}`);
    throw new UsageError(`${node.length} Node processes have ${quoted} in their command lines, and nodetrace ${command} traces one process:\n`
      + `  ${'now'.padStart(4)}       PID command\n  ${rows.join('\n  ')}${node.length > LIST_MAX ? `\n  (and ${node.length - LIST_MAX} more)` : ''}`,
    `Choose one: nodetrace ${command} -p PID (the busiest is listed first).`);
  }
  return { pid: node[0], note: `${verbing} PID ${shared.describeProcess(host, node[0])}` };
}

/**
 * The one process of a container (--container) or a pod (--pod): its only
 * Node process (with force: its only process); several are listed, the
 * busiest first, and none is taken.
 */
function resolveGroup({ where, pids: node }, host, { command, verbing = 'tracing' }) {
  if (node.length > 1) {
    const rows = busiest(node, host).slice(0, LIST_MAX)
      .map((r) => `${(100 * r.cpu).toFixed(0).padStart(4)}% CPU  ${shared.describeProcess(host, r.pid)}`);
    throw new UsageError(`${where} has ${node.length} Node processes, and nodetrace ${command} traces one process:\n`
      + `  ${'now'.padStart(4)}       PID command\n  ${rows.join('\n  ')}${node.length > LIST_MAX ? `\n  (and ${node.length - LIST_MAX} more)` : ''}`,
    `Choose one: nodetrace ${command} -p PID (the busiest is listed first).`);
  }
  return { pid: node[0], note: `${verbing ? `${verbing} ` : ''}the Node process of ${where}: ${shared.describeProcess(host, node[0])}` };
}

function resolveContainer(text, host, o) {
  const { container, pids } = containerNodeProcesses(text, host, o);
  return resolveGroup({ where: containerText(container), pids }, host, o);
}

function resolvePod(text, host, o) {
  const { pod, pids } = podNodeProcesses(text, host, o);
  return resolveGroup({ where: podText(pod), pids }, host, o);
}

// The Node processes (with force: every process) of a group of processes;
// none: exit 3, listing its processes.
function nodeOf(where, pids, host, { force }) {
  const node = force ? pids : pids.filter((pid) => host.looksLikeNode(pid));
  if (!node.length) {
    throw new UserError(`${where} has no Node process; its processes:\n  `
      + pids.slice(0, LIST_MAX).map((p) => shared.describeProcess(host, p)).join('\n  '),
    { hint: force === undefined ? 'Give a Node process.' : 'Pass --force to take a process that embeds Node under another name.', exitCode: EXIT.NOT_FOUND });
  }
  return node;
}

/**
 * The Node processes (with force: every process) of the one container
 * `text` names: { container, pids }; none: exit 3, listing its processes.
 */
function containerNodeProcesses(text, host, { command, force }) {
  const { container, pids } = containerProcesses(text, host, { command });
  return { container, pids: nodeOf(containerText(container), pids, host, { force }) };
}

/**
 * The same for the one pod `text` names (lib/targets/pods.js): { pod, pids }.
 * Every pod has a process that is not Node (its infra or pause container):
 * with force (ebadf, doctor), every process is taken only where none is Node.
 */
function podNodeProcesses(text, host, { command, force }) {
  const { pod, pids } = podProcesses(text, host, { command });
  const anyNode = pids.some((pid) => host.looksLikeNode(pid));
  return { pod, pids: nodeOf(podText(pod), pids, host, { force: force && anyNode ? false : force }) };
}

/** The one process of a command's target, however it was given: { pid, note }. */
function resolveOneTarget(args, host, o) {
  if (args.container !== undefined) return resolveContainer(args.container, host, o);
  if (args.pod !== undefined) return resolvePod(args.pod, host, o);
  return resolveOneProcess(targetText(args), host, o);
}

/**
 * The one process a command's arguments name (lib/targets/options.js), made
 * sure of: it runs, and is Node unless --force. -> { pid, note, who }
 * who: the process as the operator knows it (lib/proc/container.js: host
 * PID, PID inside, container), for headers, hits and JSON.
 */
function oneProcess(args, { command, verbing, host = hostFacts() }) {
  const { pid, note } = resolveOneTarget(args, host, { command, force: args.force, verbing });
  if (args.force) proc.requireProcess(pid);
  else {
    // A PID the host gives another program, that containers give their
    // processes (-p 1): said with those processes' host PIDs.
    if (args.container === undefined && args.pod === undefined) refuseHostPidMeantInside(pid, host, { command });
    proc.requireNodeProcess(pid, { canForce: args.force !== undefined });
  }
  return { pid, note, who: identityOf(pid) };
}

/**
 * --pod in the commands that follow many processes (snoop, http, probes):
 * the pod's Node processes now, as a PID list -> { pid: '4242,4343', note }.
 */
function podPidsTarget(text, { command, verbing, host = hostFacts() }) {
  const { pod, pids } = podNodeProcesses(text, host, { command, force: undefined });
  return { pid: pids.join(','), note: `${verbing ? `${verbing} ` : ''}the Node process${pids.length === 1 ? '' : 'es'} of ${podText(pod)}: PID ${pids.join(', ')}` };
}

module.exports = {
  resolveOneProcess, resolveOneTarget, containerNodeProcesses, podNodeProcesses, podPidsTarget, oneProcess,
  hostFacts, busiest,
};
