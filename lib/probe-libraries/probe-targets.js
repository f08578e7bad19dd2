'use strict';
// Which processes a command that traces nodetrace's USDT probes watches
// (snoop: bunyan's provider; http: the HTTP provider), and (Linux) which
// probe libraries carry their probes. A target is '*', PIDs (4242,4343) or
// a name: a plain substring of command lines. Pure: the facts about the
// host come from a `host` object (hostFacts() reads the real one), so every
// rule here is tested without processes. No shell anywhere: a name pattern
// is only compared as a plain substring of command lines.
//
// `kind` says whose probes and in which words:
//   { command: 'snoop', provider, probes: 'bunyan probes',
//     all: 'every process with bunyan probes', hint: how to start a process
//     so that it has them, includeOwn: '*' also waits on this user's own
//     library when others exist (http: this user's processes started later
//     are then seen at once, not after a re-plan, lib/probe-libraries/library-follower.js) }
const os = require('os');
const { UserError, EXIT } = require('../errors');
const libraries = require('./index');
const proc = require('../proc');
const { ownerText } = require('../proc/identity');
const { describeIdentity } = require('../proc/container');

const shared = require('../targets/resolve');

const { parseTarget, shorten, describeProcess, describePids } = shared;

// The real host, as resolveTargets() needs to know it, for one provider.
function hostFacts(provider) {
  return {
    ...shared.hostFacts(),
    librariesOf: (pid) => libraries.librariesOf(pid, provider),
    allLibraries: () => libraries.allLibraries(provider),
    // One path per file: two processes may name one file differently.
    uniqueFiles: libraries.uniqueByInode,
    ownLibrary: ({ create }) => (create ? libraries.createOwnLibrary(provider) : libraries.ownLibraryPath(provider)),
    username: () => os.userInfo().username,
    uidOf: proc.stat.uidOf,
    ownerText,
  };
}

// One process as its operator knows it (host PID, PID inside, container),
// several by PID.
function describeTargets(host, pids) {
  return pids.length === 1 && host.identityOf ? describeIdentity(host.identityOf(pids[0])) : describePids(pids);
}

function listed(host, pids) {
  return pids.slice(0, 10).map((p) => describeProcess(host, p)).join('\n  ');
}

// '*'.
function allTargets(kind, tracerName, host, create) {
  const notes = [];
  const describe = kind.all;
  if (tracerName !== 'bpftrace') return { kind: 'all', pids: [], libraries: [], notes, describe };
  let libs = host.allLibraries();
  if (!libs.length || kind.includeOwn) {
    // Nothing to attach to yet (or includeOwn): the file a process of ours
    // would use (for a dry run, just name it).
    const own = host.ownLibrary({ create });
    if (!own && !libs.length) {
      throw new UserError(`no process with ${kind.probes} was found, and none can be waited for.`,
        { hint: `Start one with \`node -r nodetrace/register app.js\`, then run nodetrace ${kind.command} again.`, exitCode: EXIT.NOT_FOUND });
    }
    if (!libs.length) notes.push(`no process with ${kind.probes} has run yet; ${create ? 'waiting' : 'it would wait'} for ones started as ${host.username()} (probe library ${own}).`);
    // One path per file (own may be one of libs); own not made yet (a dry run) still shows.
    if (own) libs = host.uniqueFiles([own]).length ? host.uniqueFiles([...libs, own]) : [...libs, own];
  }
  return { kind: 'all', pids: [], libraries: libs, notes, describe };
}

// The processes a PID list or a name means; errors when there are none.
function matchingPids(kind, t, host) {
  return shared.matchingPids(t, host, { command: kind.command, everyHint: `'*' traces every process with ${kind.probes}.` });
}

// DTrace: providers named after the PID, which only Node processes have.
function dtraceTargets(t, pids, host) {
  const node = pids.filter((pid) => host.looksLikeNode(pid));
  if (!node.length) {
    const what = t.kind === 'name' ? `none of the processes matching "${shorten(t.pattern)}" is` : `PID ${pids.join(', ')} ${pids.length === 1 ? 'is' : 'are'}`;
    throw new UserError(`${what} not a Node process:\n  ${listed(host, pids)}`, { exitCode: EXIT.NOT_FOUND });
  }
  return { kind: 'pids', pids: node, libraries: [], notes: [], describe: describeTargets(host, node) };
}

// The users who run `pids`: [{ uid, pids }], most processes first.
function usersOf(pids, host) {
  if (!host.uidOf) return [];
  const by = new Map();
  for (const pid of pids) {
    const uid = host.uidOf(pid);
    if (!by.has(uid)) by.set(uid, []);
    by.get(uid).push(pid);
  }
  return [...by].map(([uid, p]) => ({ uid, pids: p })).sort((a, b) => b.pids.length - a.pids.length);
}

// bpftrace: the probe libraries the processes map.
function bpftraceTargets(kind, t, pids, host) {
  const notes = [];
  const withProbes = [];
  const without = [];
  const libs = [];
  for (const pid of pids) {
    const found = host.librariesOf(pid);
    if (found.length) {
      withProbes.push(pid);
      libs.push(...found);
    } else {
      without.push(pid);
    }
  }
  if (!withProbes.length) {
    if (t.kind === 'pids' && pids.length === 1) {
      const pid = pids[0];
      const what = host.looksLikeNode(pid) ? `PID ${pid} has no ${kind.probes}` : `PID ${pid} (${host.executableName(pid) || 'unknown'}) is not a Node process with ${kind.probes}`;
      throw new UserError(`${what}.`, { hint: kind.hint, exitCode: EXIT.NOT_FOUND });
    }
    const which = t.kind === 'name' ? `${pids.length === 1 ? 'the process' : `none of the ${pids.length} processes`} matching "${shorten(t.pattern)}"` : 'none of those processes';
    throw new UserError(`${which} ${pids.length === 1 ? 'has no' : 'has'} ${kind.probes}:\n  ${listed(host, pids)}`, { hint: kind.hint, exitCode: EXIT.NOT_FOUND });
  }
  if (without.length && t.kind === 'pids') {
    throw new UserError(`PID ${without.join(', ')} ${without.length === 1 ? 'has' : 'have'} no ${kind.probes}.`, { hint: kind.hint, exitCode: EXIT.NOT_FOUND });
  }
  if (t.kind === 'name') {
    const users = usersOf(withProbes, host);
    if (users.length > 1) {
      notes.push(`"${shorten(t.pattern)}" matches processes of ${users.length} users: `
        + `${users.map((u) => `${host.ownerText(u.uid)}, ${describePids(u.pids)}`).join('; ')}; each process is shown apart.`);
    }
  }
  const nodeWithout = without.filter((pid) => host.looksLikeNode(pid));
  if (nodeWithout.length) {
    notes.push(`skipping ${nodeWithout.length === 1 ? 'a Node process' : `${nodeWithout.length} Node processes`} matching "${shorten(t.pattern)}" without ${kind.probes} (not started with -r nodetrace/register?): ${nodeWithout.join(', ')}.`);
  }
  return { kind: 'pids', pids: withProbes, libraries: host.uniqueFiles(libs), notes, describe: describeTargets(host, withProbes) };
}

/**
 * What a target means on this host.
 * -> { kind: 'all'|'pids', pids: number[], libraries: string[] (bpftrace),
 *      notes: string[], describe }
 * Errors: a PID not running -> exit 3; a name nothing matches -> exit 2;
 * processes without the probes -> exit 3.
 */
function resolveTargets(kind, text, tracerName, host, { create = true } = {}) {
  const t = parseTarget(text, kind.command);
  if (t.kind === 'all') return allTargets(kind, tracerName, host, create);
  const pids = matchingPids(kind, t, host);
  return tracerName === 'bpftrace' ? bpftraceTargets(kind, t, pids, host) : dtraceTargets(t, pids, host);
}

// bpftrace takes one library path per probe, but globs it: several
// libraries are linked from the run's private directory (lib/tracer/plan.js
// `links`) and named by one glob. A library nodetrace has opened and
// verified (probe-libraries.OpenedLibraries: path -> fd) is linked as
// /proc/<nodetrace>/fd/<fd>, that very file, so a file swapped in at the
// path later (a FIFO, to hang the tracer) is never opened.
function libraryLinks(libs, opened = new Map()) {
  return libs.map((file, i) => ({ name: `${i}.so`, target: opened.has(file) ? `/proc/${process.pid}/fd/${opened.get(file)}` : file }));
}

module.exports = { parseTarget, resolveTargets, hostFacts, shorten, describePids, libraryLinks };
