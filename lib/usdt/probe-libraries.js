'use strict';
// Finding the probe libraries of one provider on this host, for commands
// that attach to them (snoop: bunyan's provider). On Linux a provider's
// probes live in the probe library that lib/usdt generates: one file per
// provider definition per user, the same file for every process of that
// user, in a per-user directory. A tracer attached to the file by path covers
// every process that maps it, including processes started later.
//
// These files belong to other users: they are only read here, never run,
// and a file qualifies only as a regular file of bounded size that declares
// the provider.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const proc = require('../proc');
const paths = require('./paths');
const { openRegular, readAt } = require('../safe-open');

const MAX_LIBRARY_BYTES = 1 << 20;

// The provider definition embedded in a probe library's bytes (lib/usdt/
// elf.js puts it in a .nodetrace.usdt section as one JSON line), or null.
function definitionIn(buf) {
  const start = buf.indexOf('{"format":');
  if (start < 0) return null;
  const end = buf.indexOf('\n', start);
  try {
    return JSON.parse(buf.toString('utf8', start, end < 0 ? buf.length : end));
  } catch (err) {
    return null;
  }
}

function declares(def, provider) {
  if (!def || def.provider !== provider.name || !Array.isArray(def.probes)) return false;
  const names = new Set(def.probes.map((p) => p && p.name));
  return provider.probes.every(([name]) => names.has(name));
}

/**
 * A probe library another user's process maps, checked before a tracer is
 * pointed at it: a regular file (not a link, FIFO or device; opened without
 * blocking) of at most 1 MB, owned by the owner of its directory, writable by
 * no one else, whose name is the hash of its bytes (lib/usdt names every
 * library so), declaring the provider. -> { fd, path, inode, uid } (keep the
 * fd open: a tracer is given /proc/<our PID>/fd/<fd>, that very file, so
 * nothing swapped in at the path afterwards is ever opened) or { refused }.
 */
function openVerified(file, provider) {
  const name = path.basename(file);
  if (!name.startsWith(paths.FILE_PREFIX) || !name.endsWith('.so')) return { refused: 'not a probe library name' };
  const opened = openRegular(file, { maxBytes: MAX_LIBRARY_BYTES, followLinks: false });
  if (opened.refused) return opened;
  const { fd } = opened;
  const refuse = (why) => {
    fs.closeSync(fd);
    return { refused: why };
  };
  const st = fs.fstatSync(fd);
  let dir;
  try { dir = fs.statSync(path.dirname(file)); } catch (err) { return refuse('its directory is gone'); }
  if (st.uid !== dir.uid) return refuse(`it belongs to uid ${st.uid}, its directory to uid ${dir.uid}`);
  if (st.mode & 0o022) return refuse('others may write to it');
  const bytes = readAt(fd, 0, st.size);
  if (paths.libraryFileName(bytes) !== name) return refuse('its name is not the hash of its bytes');
  if (!declares(definitionIn(bytes), provider)) return refuse(`it does not declare the ${provider.name} provider`);
  return { fd, path: file, inode: `${st.dev}:${st.ino}`, uid: st.uid };
}

// Does the file declare `provider` ({ name, probes: [[name, ...types]] })
// with every one of its probes, and pass openVerified()'s checks?
function declaresProvider(file, provider) {
  const v = openVerified(file, provider);
  if (v.refused) return false;
  fs.closeSync(v.fd);
  return true;
}

// The definition a library file declares, or null (for tests and doctor).
function libraryDefinition(file) {
  const opened = openRegular(file, { maxBytes: MAX_LIBRARY_BYTES });
  if (opened.refused) return null;
  try {
    return definitionIn(readAt(opened.fd, 0, opened.size));
  } finally {
    fs.closeSync(opened.fd);
  }
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
// may live in another mount namespace, as in a container).
function reachablePath(pid, file) {
  const viaRoot = `/proc/${pid}/root${file}`;
  const a = inode(file);
  if (a && a === inode(viaRoot)) return file;
  return inode(viaRoot) ? viaRoot : null;
}

// The provider's libraries mapped by a live process.
function librariesOf(pid, provider) {
  const out = [];
  for (const file of paths.loadedProbeLibraries(pid)) {
    const p = reachablePath(pid, file.replace(/ \(deleted\)$/, ''));
    if (p && declaresProvider(p, provider)) out.push(p);
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

// Users who may own a probe library: every account, and whoever runs a
// process now (containers have uids /etc/passwd does not list).
function candidateUids() {
  const uids = new Set([paths.currentUid()]);
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f.length >= 7 && /^[0-9]+$/.test(f[2])) uids.add(Number(f[2]));
    }
  } catch (err) { /* no passwd */ }
  for (const pid of proc.allPids()) {
    const uid = proc.stat.uidOf(pid);
    if (uid !== null) uids.add(uid);
  }
  return [...uids];
}

// Every library of the provider on this host: in the directories lib/usdt
// would use for any user, plus those mapped by running processes (which may
// have been told NODETRACE_USDT_DIR). Regular files only, one path per file.
function allLibraries(provider) {
  const files = [];
  const dirs = new Set();
  for (const c of paths.probeLibraryPaths(provider.name, provider.probes)) dirs.add(path.dirname(c));
  for (const uid of candidateUids()) {
    for (const c of paths.probeLibraryPaths(provider.name, provider.probes, { uid, env: {} })) dirs.add(path.dirname(c));
  }
  for (const dir of dirs) {
    let entries;
    try { entries = fs.readdirSync(dir); } catch (err) { continue; }
    for (const e of entries) {
      if (!e.startsWith(paths.FILE_PREFIX) || !e.endsWith('.so')) continue;
      const file = path.join(dir, e);
      let st;
      try { st = fs.lstatSync(file); } catch (err) { continue; }
      if (st.isFile() && declaresProvider(file, provider)) files.push(file);
    }
  }
  for (const pid of proc.allPids()) {
    if (pid === process.pid) continue;
    files.push(...librariesOf(pid, provider));
  }
  return uniqueByInode(files);
}

// The processes that map any of these libraries now. /proc/PID/maps gives
// each mapping's inode; the file name (content-addressed) rules out another
// file system's file with the same inode number.
function pidsMapping(files) {
  const wanted = new Set();
  for (const f of files) {
    try { wanted.add(`${fs.statSync(f).ino} ${path.basename(f)}`); } catch (err) { /* gone */ }
  }
  const out = new Set();
  if (!wanted.size) return out;
  for (const pid of proc.allPids()) {
    const maps = proc.readProcFile(pid, 'maps');
    if (!maps || !maps.includes(paths.FILE_PREFIX)) continue;
    for (const line of maps.split('\n')) {
      const f = line.split(/\s+/);
      if (f.length >= 6 && wanted.has(`${f[4]} ${path.basename(f[5])}`)) { out.add(pid); break; }
    }
  }
  return out;
}

// Libraries held open (and verified) for the length of a trace; see
// openVerified().
class OpenedLibraries {
  constructor(provider) {
    this.provider = provider;
    this.fds = new Map();   // path -> fd
    this.refused = [];      // { path, why }
  }

  // Opens the paths not yet open; returns those that passed the checks.
  open(files) {
    const ok = [];
    for (const file of files) {
      if (this.fds.has(file)) { ok.push(file); continue; }
      const v = openVerified(file, this.provider);
      if (v.refused) {
        this.refused.push({ path: file, why: v.refused });
        continue;
      }
      this.fds.set(file, v.fd);
      ok.push(file);
    }
    return ok;
  }

  closeAll() {
    for (const fd of this.fds.values()) {
      try { fs.closeSync(fd); } catch (err) { /* already */ }
    }
    this.fds.clear();
  }
}

// Tracks which libraries a trace covers, to find the ones that appear later:
// a user's first process with the provider creates its library after the
// trace has attached to the others.
class LibraryWatch {
  constructor(provider, libraries) {
    this.provider = provider;
    this.covered = new Set(libraries.map(inode).filter(Boolean));
  }

  // Libraries not seen before (and now counted as seen).
  newLibraries() {
    const out = [];
    for (const file of allLibraries(this.provider)) {
      const id = inode(file);
      if (!id || this.covered.has(id)) continue;
      this.covered.add(id);
      out.push(file);
    }
    return out;
  }
}

// Creates the provider's library where a process of this user started now
// would put it, so that a trace can wait for processes that do not exist
// yet. Returns its path, or null. (Uses lib/usdt's safe store.)
function createOwnLibrary(provider) {
  const store = require('./store');
  const { bytes, fileName } = paths.libraryFor(provider.name, provider.probes, provider.module);
  for (const candidate of paths.candidateDirs()) {
    try {
      return store.install(store.prepareDir(candidate), fileName, bytes);
    } catch (err) { /* next directory */ }
  }
  return null;
}

// The path createOwnLibrary() would use, without creating anything.
function ownLibraryPath(provider) {
  return paths.probeLibraryPath(provider.name, provider.probes);
}

module.exports = {
  libraryDefinition, declaresProvider, openVerified, OpenedLibraries, librariesOf, allLibraries, uniqueByInode, candidateUids, pidsMapping,
  LibraryWatch, createOwnLibrary, ownLibraryPath,
};
