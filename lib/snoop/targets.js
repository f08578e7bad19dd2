'use strict';
// Which processes `nodetrace snoop` watches, and (Linux) which probe
// libraries carry their bunyan probes. Pure: the facts about the host come
// from a `host` object (hostFacts() reads the real one), so every rule here
// is tested without processes. PIDs and names are resolved as for every
// command (lib/targets/resolve.js); what is snoop's own is bunyan's probes.
const os = require('os');
const { UserError, EXIT } = require('../errors');
const shared = require('../targets/resolve');
const usdt = require('../usdt');
const libraries = require('../usdt/probe-libraries');

const { shorten, describeProcess, describePids, matchingPids } = shared;

function parseTarget(text) {
  return shared.parseTarget(text, 'snoop');
}

const BUNYAN = usdt.BUNYAN_PROVIDER;

// The real host, as resolveTargets() needs to know it.
function hostFacts() {
  return {
    ...shared.hostFacts(),
    librariesOf: (pid) => libraries.librariesOf(pid, BUNYAN),
    allLibraries: () => libraries.allLibraries(BUNYAN),
    // One path per file: two processes may name one file differently.
    uniqueFiles: libraries.uniqueByInode,
    ownLibrary: ({ create }) => (create ? libraries.createOwnLibrary(BUNYAN) : libraries.ownLibraryPath(BUNYAN)),
    username: () => os.userInfo().username,
  };
}

const REGISTER_HINT = 'Its bunyan probes only fire on Linux when it runs with nodetrace\'s provider:\n'
  + '  node -r nodetrace/register app.js     (or NODE_OPTIONS="--require nodetrace/register")';

// snoop '*'.
function allTargets(tracerName, host, create) {
  const notes = [];
  const describe = 'every process with bunyan probes';
  if (tracerName !== 'bpftrace') return { kind: 'all', pids: [], libraries: [], notes, describe };
  let libs = host.allLibraries();
  if (!libs.length) {
    // Nothing to attach to yet: make the file a bunyan process of ours
    // would use (for a dry run, just name it).
    const own = host.ownLibrary({ create });
    if (!own) {
      throw new UserError('no bunyan process with probes was found, and none can be waited for.',
        { hint: 'Start one with `node -r nodetrace/register app.js`, then snoop again.', exitCode: EXIT.NOT_FOUND });
    }
    libs = [own];
    notes.push(`no bunyan process with probes has run yet; ${create ? 'waiting' : 'it would wait'} for ones started as ${host.username()} (probe library ${own}).`);
  }
  return { kind: 'all', pids: [], libraries: libs, notes, describe };
}

// DTrace: bunyan<PID> providers, which only Node processes have.
function dtraceTargets(t, pids, host) {
  const node = pids.filter((pid) => host.looksLikeNode(pid));
  if (!node.length) {
    const what = t.kind === 'name' ? `none of the processes matching "${shorten(t.pattern)}" is` : `PID ${pids.join(', ')} ${pids.length === 1 ? 'is' : 'are'}`;
    throw new UserError(`${what} not a Node process:\n  ${pids.slice(0, 10).map((p) => describeProcess(host, p)).join('\n  ')}`,
      { exitCode: EXIT.NOT_FOUND });
  }
  return { kind: 'pids', pids: node, libraries: [], notes: [], describe: describePids(node) };
}

// bpftrace: the probe libraries the processes map.
function bpftraceTargets(t, pids, host) {
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
      const what = host.looksLikeNode(pid) ? `PID ${pid} has no bunyan probes` : `PID ${pid} (${host.executableName(pid) || 'unknown'}) is not a Node process with bunyan probes`;
      throw new UserError(`${what}.`, { hint: REGISTER_HINT, exitCode: EXIT.NOT_FOUND });
    }
    const which = t.kind === 'name' ? `${pids.length === 1 ? 'the process' : `the ${pids.length} processes`} matching "${shorten(t.pattern)}"` : 'those processes';
    throw new UserError(`none of ${which} has bunyan probes:\n  ${pids.slice(0, 10).map((p) => describeProcess(host, p)).join('\n  ')}`,
      { hint: REGISTER_HINT, exitCode: EXIT.NOT_FOUND });
  }
  if (without.length && t.kind === 'pids') {
    throw new UserError(`PID ${without.join(', ')} ${without.length === 1 ? 'has' : 'have'} no bunyan probes.`,
      { hint: REGISTER_HINT, exitCode: EXIT.NOT_FOUND });
  }
  const nodeWithout = without.filter((pid) => host.looksLikeNode(pid));
  if (nodeWithout.length) {
    notes.push(`skipping ${nodeWithout.length === 1 ? 'a Node process' : `${nodeWithout.length} Node processes`} matching "${shorten(t.pattern)}" without bunyan probes (not started with -r nodetrace/register?): ${nodeWithout.join(', ')}.`);
  }
  return { kind: 'pids', pids: withProbes, libraries: host.uniqueFiles(libs), notes, describe: describePids(withProbes) };
}

/**
 * What a snoop target means on this host.
 * -> { kind: 'all'|'pids', pids: number[], libraries: string[] (bpftrace),
 *      notes: string[], describe }
 * Errors: a PID not running -> exit 3; a name nothing matches -> exit 2;
 * processes without bunyan probes -> exit 3.
 */
function resolveTargets(text, tracerName, host, { create = true } = {}) {
  const t = parseTarget(text);
  if (t.kind === 'all') return allTargets(tracerName, host, create);
  const pids = matchingPids(t, host, { command: 'snoop', everyHint: '\'*\' snoops every process.' });
  return tracerName === 'bpftrace' ? bpftraceTargets(t, pids, host) : dtraceTargets(t, pids, host);
}

module.exports = { parseTarget, resolveTargets, hostFacts, shorten, BUNYAN };
