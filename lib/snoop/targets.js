'use strict';
// Which processes `nodetrace snoop` watches, and (Linux) which probe
// libraries carry their bunyan probes. No shell anywhere: a name pattern is
// only compared as a plain substring of command lines.
//
// On Linux, bunyan's probes live in the probe library that
// `node -r nodetrace/register` generates (lib/usdt): one file per provider
// definition per user, the same file for every process of that user, in a
// per-user directory. Attaching to the file by path covers every process that
// maps it, including processes started later.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { UserError, UsageError, EXIT } = require('../errors');
const proc = require('../proc');
const usdt = require('../usdt');

const MAX_LIBRARY_BYTES = 1 << 20;

// "*" | "4242" | "4242,4343" | anything else (a command-line substring).
function parseTarget(text) {
  const s = String(text === undefined ? '' : text);
  if (s === '*') return { kind: 'all' };
  if (/^[\s0-9,]+$/.test(s) && /[0-9]/.test(s)) {
    const pids = [];
    for (const part of s.split(',')) {
      if (!part.trim()) continue;
      const pid = proc.parsePid(part, 'snoop');
      if (!pids.includes(pid)) pids.push(pid);
    }
    return { kind: 'pids', pids };
  }
  if (!s.trim()) throw new UsageError('snoop needs a target: \'*\', a PID (4242,4343) or part of a command line.');
  return { kind: 'name', pattern: s };
}

// The provider definition embedded in a probe library (lib/usdt/elf.js puts
// it in a .nodetrace.usdt section as one JSON line), or null.
function libraryDefinition(file) {
  let buf;
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > MAX_LIBRARY_BYTES) return null;
    buf = fs.readFileSync(file);
  } catch (err) {
    return null;
  }
  const start = buf.indexOf('{"format":');
  if (start < 0) return null;
  const end = buf.indexOf('\n', start);
  try {
    return JSON.parse(buf.toString('utf8', start, end < 0 ? buf.length : end));
  } catch (err) {
    return null;
  }
}

// bunyan's definition: provider "bunyan" with all six log-* probes.
function isBunyanLibrary(file) {
  const def = libraryDefinition(file);
  if (!def || def.provider !== 'bunyan' || !Array.isArray(def.probes)) return false;
  const names = new Set(def.probes.map((p) => p && p.name));
  return usdt.BUNYAN_PROVIDER.probes.every(([name]) => names.has(name));
}

function inode(file) {
  try {
    const st = fs.statSync(file);
    return `${st.dev}:${st.ino}`;
  } catch (err) {
    return null;
  }
}

// A path for `file` as process `pid` sees it, usable from here (the process
// may live in another mount namespace).
function reachablePath(pid, file) {
  const viaRoot = `/proc/${pid}/root${file}`;
  const a = inode(file);
  if (a && a === inode(viaRoot)) return file;
  return inode(viaRoot) ? viaRoot : null;
}

// bunyan probe libraries mapped by a live process.
function bunyanLibrariesOf(pid) {
  const out = [];
  for (const file of usdt.loadedProbeLibraries(pid)) {
    const p = reachablePath(pid, file.replace(/ \(deleted\)$/, ''));
    if (p && isBunyanLibrary(p)) out.push(p);
  }
  return out;
}

function uniqueByInode(files) {
  const seen = new Set();
  const out = [];
  for (const f of files) {
    const id = inode(f);
    if (!id || seen.has(id)) continue;
    seen.add(id);
    out.push(f);
  }
  return out;
}

function numericDirs(dir) {
  try {
    return fs.readdirSync(dir).filter((e) => /^[0-9]+$/.test(e)).map(Number);
  } catch (err) {
    return [];
  }
}

function processUid(pid) {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch (err) {
    return null;
  }
}

// Users who may own a probe library: every account, and whoever runs a
// process now (containers have uids /etc/passwd does not list).
function candidateUids() {
  const uids = new Set([typeof process.getuid === 'function' ? process.getuid() : 0]);
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f.length >= 7 && /^[0-9]+$/.test(f[2])) uids.add(Number(f[2]));
    }
  } catch (err) { /* no passwd */ }
  for (const pid of numericDirs('/proc')) {
    const uid = processUid(pid);
    if (uid !== null) uids.add(uid);
  }
  return [...uids];
}

// Existing bunyan probe libraries in the directories lib/usdt would use for
// any user, plus those mapped by running processes (which may have been told
// NODETRACE_USDT_DIR). Regular files only, one path per file.
function allBunyanLibraries() {
  const files = [];
  const dirs = new Set();
  for (const c of usdt.probeLibraryPaths('bunyan', usdt.BUNYAN_PROVIDER.probes)) dirs.add(path.dirname(c));
  for (const uid of candidateUids()) {
    for (const c of usdt.probeLibraryPaths('bunyan', usdt.BUNYAN_PROVIDER.probes, { uid, env: {} })) dirs.add(path.dirname(c));
  }
  for (const dir of dirs) {
    let entries;
    try { entries = fs.readdirSync(dir); } catch (err) { continue; }
    for (const e of entries) {
      if (!e.startsWith('nodetrace-usdt-') || !e.endsWith('.so')) continue;
      const file = path.join(dir, e);
      let st;
      try { st = fs.lstatSync(file); } catch (err) { continue; }
      if (st.isFile() && isBunyanLibrary(file)) files.push(file);
    }
  }
  for (const pid of numericDirs('/proc')) {
    if (pid === process.pid) continue;
    files.push(...bunyanLibrariesOf(pid));
  }
  return uniqueByInode(files);
}

// Tracks which probe libraries a snoop covers, to find the ones that appear
// later: a user's first bunyan process creates its library after snoop '*'
// has attached to the others.
class LibraryWatch {
  constructor(libraries) {
    this.covered = new Set(libraries.map(inode).filter(Boolean));
  }

  // Bunyan probe libraries not seen before (and now counted as seen).
  newLibraries() {
    const out = [];
    for (const file of allBunyanLibraries()) {
      const id = inode(file);
      if (!id || this.covered.has(id)) continue;
      this.covered.add(id);
      out.push(file);
    }
    return out;
  }
}

// Creates bunyan's probe library where a bunyan process of this user started
// now would put it, so `snoop '*'` can wait for processes that do not exist
// yet. Returns its path, or null. (Uses lib/usdt's safe store.)
function createOwnBunyanLibrary() {
  try {
    const paths = require('../usdt/paths');
    const store = require('../usdt/store');
    const { bytes, fileName } = paths.libraryFor('bunyan', usdt.BUNYAN_PROVIDER.probes, usdt.BUNYAN_PROVIDER.module);
    for (const candidate of paths.candidateDirs()) {
      try {
        return store.install(store.prepareDir(candidate), fileName, bytes);
      } catch (err) { /* next directory */ }
    }
  } catch (err) { /* lib/usdt changed shape: say nothing was found instead */ }
  return null;
}

// Our own ancestors (sudo, the shell) carry the pattern in their command line.
function ancestors(pid = process.pid) {
  const out = new Set();
  let p = pid;
  for (let i = 0; i < 64 && p > 1; i++) {
    let stat;
    try { stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); } catch (err) { break; }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!ppid) break;
    out.add(ppid);
    p = ppid;
  }
  return out;
}

function describeProcess(pid) {
  const argv = proc.commandLine(pid).join(' ');
  return `${pid} ${argv.length > 60 ? argv.slice(0, 57) + '...' : argv}`;
}

const REGISTER_HINT = 'Its bunyan probes only fire on Linux when it runs with nodetrace\'s provider:\n'
  + '  node -r nodetrace/register app.js     (or NODE_OPTIONS="--require nodetrace/register")';

/**
 * Resolves the target for the tracer.
 * -> { kind: 'all'|'pids', pids: number[], libraries: string[] (Linux/bpftrace),
 *      notes: string[], describe }
 * Errors: a PID not running -> exit 3; a name nothing matches -> exit 2;
 * processes without bunyan probes -> exit 3.
 */
function resolveTargets(text, tracerName, { create = true } = {}) {
  const t = parseTarget(text);
  const notes = [];
  if (t.kind === 'all') {
    if (tracerName !== 'bpftrace') return { kind: 'all', pids: [], libraries: [], notes, describe: 'every process with bunyan probes' };
    let libraries = allBunyanLibraries();
    if (!libraries.length) {
      // Nothing to attach to yet: make the file a bunyan process of ours
      // would use (for a dry run, just name it).
      const own = create ? createOwnBunyanLibrary() : usdt.probeLibraryPath('bunyan', usdt.BUNYAN_PROVIDER.probes);
      if (!own) {
        throw new UserError('no bunyan process with probes was found, and none can be waited for.',
          { hint: 'Start one with `node -r nodetrace/register app.js`, then snoop again.', exitCode: EXIT.NOT_FOUND });
      }
      libraries = [own];
      notes.push(`no bunyan process with probes has run yet; ${create ? 'waiting' : 'it would wait'} for ones started as ${os.userInfo().username} (probe library ${own}).`);
    }
    return { kind: 'all', pids: [], libraries, notes, describe: 'every process with bunyan probes' };
  }

  let pids;
  if (t.kind === 'pids') {
    for (const pid of t.pids) {
      if (!proc.isRunning(pid)) {
        throw new UserError(`no process with PID ${pid} is running.`,
          { hint: 'Find Node processes with: pgrep -a node', exitCode: EXIT.NOT_FOUND });
      }
    }
    pids = t.pids;
  } else {
    const skip = ancestors();
    const matches = proc.findProcessesByCommandLine(t.pattern).filter((pid) => !skip.has(pid));
    if (!matches.length) {
      throw new UsageError(`no running process has "${t.pattern}" in its command line.`,
        'The pattern is a plain substring of the command line (see: pgrep -a node); \'*\' snoops every process.');
    }
    pids = matches;
  }

  if (tracerName !== 'bpftrace') {
    // DTrace: bunyan<PID> providers; -Z lets a PID without them match nothing.
    const node = pids.filter((pid) => proc.looksLikeNode(pid));
    if (!node.length) {
      const what = t.kind === 'name' ? `none of the processes matching "${t.pattern}" is` : `PID ${pids.join(', ')} ${pids.length === 1 ? 'is' : 'are'}`;
      throw new UserError(`${what} not a Node process:\n  ${pids.slice(0, 10).map(describeProcess).join('\n  ')}`,
        { exitCode: EXIT.NOT_FOUND });
    }
    return { kind: 'pids', pids: node, libraries: [], notes, describe: describePids(node) };
  }

  const withProbes = [];
  const without = [];
  const libraries = [];
  for (const pid of pids) {
    const libs = bunyanLibrariesOf(pid);
    if (libs.length) {
      withProbes.push(pid);
      libraries.push(...libs);
    } else {
      without.push(pid);
    }
  }
  if (!withProbes.length) {
    if (t.kind === 'pids' && pids.length === 1) {
      const pid = pids[0];
      const what = proc.looksLikeNode(pid) ? `PID ${pid} has no bunyan probes` : `PID ${pid} (${proc.executableName(pid) || 'unknown'}) is not a Node process with bunyan probes`;
      throw new UserError(`${what}.`, { hint: REGISTER_HINT, exitCode: EXIT.NOT_FOUND });
    }
    const which = t.kind === 'name' ? `${pids.length === 1 ? 'the process' : `the ${pids.length} processes`} matching "${t.pattern}"` : 'those processes';
    throw new UserError(`none of ${which} has bunyan probes:\n  ${pids.slice(0, 10).map(describeProcess).join('\n  ')}`,
      { hint: REGISTER_HINT, exitCode: EXIT.NOT_FOUND });
  }
  if (without.length && t.kind === 'pids') {
    throw new UserError(`PID ${without.join(', ')} ${without.length === 1 ? 'has' : 'have'} no bunyan probes.`,
      { hint: REGISTER_HINT, exitCode: EXIT.NOT_FOUND });
  }
  if (without.length) {
    const nodeWithout = without.filter((pid) => proc.looksLikeNode(pid));
    if (nodeWithout.length) {
      notes.push(`skipping ${nodeWithout.length === 1 ? 'a Node process' : `${nodeWithout.length} Node processes`} matching "${t.pattern}" without bunyan probes (not started with -r nodetrace/register?): ${nodeWithout.join(', ')}.`);
    }
  }
  return { kind: 'pids', pids: withProbes, libraries: uniqueByInode(libraries), notes, describe: describePids(withProbes) };
}

function describePids(pids) {
  if (pids.length === 1) return `PID ${pids[0]}`;
  if (pids.length <= 6) return `PIDs ${pids.join(', ')}`;
  return `${pids.length} processes`;
}

module.exports = {
  parseTarget, resolveTargets, libraryDefinition, isBunyanLibrary, bunyanLibrariesOf, allBunyanLibraries,
  createOwnBunyanLibrary, ancestors, candidateUids, LibraryWatch,
};
