'use strict';
// Where probe libraries live and what they are called. Nothing here creates
// or changes anything on disk (lookups only), so the CLI can compute the path
// a process would use, e.g. to attach `bpftrace -e 'usdt:<path>:bunyan:*'`
// before, or without, starting the process.

const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildElf } = require('./elf');
const { normalizeDefinition } = require('./definition');
const { readProcText } = require('../proc/read-bounded');

const FILE_PREFIX = 'nodetrace-usdt-';

// Content-addressed: the name is a hash of the exact bytes, so a definition
// always maps to one name, and a file under that name either has those bytes
// or is refused (see store.js).
function libraryFileName(bytes) {
  return FILE_PREFIX + crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 20) + '.so';
}

function currentUid() {
  return typeof process.getuid === 'function' ? process.getuid() : -1;
}

function homeOf(uid) {
  if (uid === currentUid()) return os.homedir();
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f.length >= 7 && Number(f[2]) === uid) return f[5];
    }
  } catch { /* no passwd file: no home candidate */ }
  return null;
}

// Per-user directories, best first. Each is { dir, root }: `root` must exist
// already; only `dir` (below it) is ever created, with mode 0700. We never
// create /run/user/<uid> ourselves: that one belongs to the login manager.
//   NODETRACE_USDT_DIR=dir[:dir...]  replaces the list (tests, odd hosts)
//   $XDG_RUNTIME_DIR/nodetrace       tmpfs, per-user, cleaned at logout
//   /run/user/<uid>/nodetrace        same, when XDG_RUNTIME_DIR is not set
//   ~/.cache/nodetrace/usdt          persistent, usually exec-mounted
//   <tmpdir>/nodetrace-<uid>         last resort
function candidateDirs({ uid = currentUid(), env = process.env } = {}) {
  const out = [];
  const add = (dir, root) => {
    if (!out.some((c) => c.dir === dir)) out.push({ dir, root });
  };
  if (env.NODETRACE_USDT_DIR) {
    for (const d of env.NODETRACE_USDT_DIR.split(':')) {
      if (d && path.isAbsolute(d)) add(path.resolve(d), path.dirname(path.resolve(d)));
    }
    return out;
  }
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && path.isAbsolute(xdg) && uid === currentUid()) add(path.join(xdg, 'nodetrace'), xdg);
  add(`/run/user/${uid}/nodetrace`, `/run/user/${uid}`);
  const home = homeOf(uid);
  if (home && path.isAbsolute(home)) add(path.join(home, '.cache', 'nodetrace', 'usdt'), home);
  add(path.join(os.tmpdir(), `nodetrace-${uid}`), os.tmpdir());
  return out;
}

// The bytes of the library for a definition (and the canonical definition).
function libraryFor(providerName, probes, module) {
  const def = normalizeDefinition(providerName, probes, module);
  const elf = buildElf(def);
  return { def, bytes: elf.bytes, layout: elf.layout, fileName: libraryFileName(elf.bytes) };
}

function lstatOrNull(p) {
  try { return fs.lstatSync(p); } catch { return null; }
}

// Every path a process of user `uid` could use for this definition, best
// first. `probes` as for addProbe: [[name, ...types], ...].
function probeLibraryPaths(providerName, probes, opts = {}) {
  const { fileName } = libraryFor(providerName, probes, opts.module);
  return candidateDirs(opts).map((c) => path.join(c.dir, fileName));
}

// The path a process of user `uid` (default: this one) uses for this
// definition, without creating anything: an existing file if there is one,
// else the file in the first existing candidate directory, else in the first
// candidate. (A process may still fall back further, e.g. from a noexec
// mount; `bpftrace -p PID -l 'usdt:*'` shows what a live process has.)
function probeLibraryPath(providerName, probes, opts = {}) {
  const all = probeLibraryPaths(providerName, probes, opts);
  const file = all.find((p) => { const st = lstatOrNull(p); return st && st.isFile(); });
  if (file) return file;
  const inDir = all.find((p) => { const st = lstatOrNull(path.dirname(p)); return st && st.isDirectory(); });
  return inDir || all[0];
}

// A file name that lib/usdt gives a probe library (libraryFileName's shape).
function isProbeLibraryName(name) {
  return name.startsWith(FILE_PREFIX) && name.endsWith('.so');
}

// Probe libraries mapped by a live process, from /proc/PID/maps.
function loadedProbeLibraries(pid) {
  let maps;
  maps = readProcText(`/proc/${pid}/maps`);
  if (maps === null) return [];
  const found = new Set();
  for (const line of maps.split('\n')) {
    const i = line.indexOf('/');
    if (i < 0) continue;
    const file = line.slice(i);
    if (isProbeLibraryName(path.basename(file))) found.add(file);
  }
  return [...found];
}

module.exports = {
  libraryFileName, candidateDirs, libraryFor, probeLibraryPath, probeLibraryPaths,
  loadedProbeLibraries, isProbeLibraryName, currentUid, FILE_PREFIX,
};
