'use strict';
// Which processes a target given on the command line means: '*', PIDs
// ("4242" or "4242,4343") or text found in command lines. Shared by the
// commands that take such a target (snoop, profile); what each does with the
// PIDs (probe libraries, one process only...) stays with the command. Pure:
// the facts about the host come from a `host` object (hostFacts() reads the
// real one). No shell anywhere: a name is only compared as a plain substring
// of command lines.
const { UserError, UsageError, EXIT } = require('../errors');
const proc = require('../proc');
const { safeText } = require('../terminal-safe');
const { identityOf } = require('../proc/container');
const { insideHint } = require('./containers');

// A pattern longer than this is shortened when echoed back.
const ECHO_CHARS = 60;

/**
 * "*" | "4242" | "4242,4343" | anything else (a command-line substring).
 * `command` names the command in messages.
 */
function parseTarget(text, command) {
  const s = String(text === undefined ? '' : text);
  if (s === '*') return { kind: 'all' };
  if (/^[\s0-9,]+$/.test(s) && /[0-9]/.test(s)) {
    const pids = [];
    for (const part of s.split(',')) {
      if (!part.trim()) continue;
      const pid = proc.parsePid(part, command);
      if (!pids.includes(pid)) pids.push(pid);
    }
    return { kind: 'pids', pids };
  }
  if (!s.trim()) throw new UsageError(`${command} needs a target: '*', a PID (4242,4343) or part of a command line.`);
  return { kind: 'name', pattern: s };
}

function shorten(text, n = ECHO_CHARS) {
  const chars = Array.from(text);
  return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : text;
}

// The real host, as far as finding processes goes.
function hostFacts() {
  const skip = proc.ancestors();
  return {
    isRunning: proc.isRunning,
    tgidOf: proc.stat.tgidOf,
    looksLikeNode: proc.looksLikeNode,
    executableName: proc.executableName,
    commandLine: (pid) => proc.commandLine(pid).join(' '),
    // Our own ancestors (sudo, the shell) carry the pattern in their command lines.
    findByCommandLine: (pattern) => proc.findProcessesByCommandLine(pattern).filter((pid) => !skip.has(pid)),
    // Containers (lib/targets/containers.js).
    allPids: () => proc.allPids().filter((pid) => pid !== process.pid),
    identityOf,
  };
}

// "PID command line", on one line whatever the command line holds (another
// user's newline must not make a row of a list of candidates).
function describeProcess(host, pid) {
  const argv = safeText(host.commandLine(pid), { oneLine: true });
  return `${pid} ${argv.length > 60 ? argv.slice(0, 57) + '...' : argv}`;
}

function describePids(pids) {
  if (pids.length === 1) return `PID ${pids[0]}`;
  if (pids.length <= 6) return `PIDs ${pids.join(', ')}`;
  return `${pids.length} processes`;
}

/**
 * The processes a PID list or a name (from parseTarget) means; errors when
 * there are none: a PID not running -> exit 3, a thread's ID or a name
 * nothing matches -> exit 2.
 * @param {object} o { command: for messages, everyHint: said when a name matches nothing }
 */
function matchingPids(t, host, { command, everyHint = '' }) {
  if (t.kind === 'pids') {
    for (const pid of t.pids) {
      const tgid = host.tgidOf(pid);
      if (tgid === null || !host.isRunning(pid)) {
        // A PID as a container knows it: said with the host PIDs that have it.
        const inside = host.allPids ? insideHint(pid, host, { command }) : null;
        throw new UserError(`no process with PID ${pid} is running${inside ? ' on this host' : ''}.`,
          { hint: inside || 'Find Node processes with: pgrep -a node', exitCode: EXIT.NOT_FOUND });
      }
      if (tgid !== pid) throw new UsageError(`${pid} is a thread of process ${tgid}, not a process.`, `Give the process: nodetrace ${command} ${tgid}`);
    }
    return t.pids;
  }
  const matches = host.findByCommandLine(t.pattern);
  if (!matches.length) {
    throw new UsageError(`no running process has "${shorten(t.pattern)}" in its command line.`,
      `The pattern is a plain substring of the command line (see: pgrep -a node)${everyHint ? `; ${everyHint}` : '.'}`);
  }
  return matches;
}

module.exports = { parseTarget, shorten, hostFacts, describeProcess, describePids, matchingPids };
