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
const fs = require('fs');
const path = require('path');
const proc = require('../proc');
const paths = require('../usdt/paths');
const { checkLibrary } = require('./library-check');
const { openRegular, readAt } = require('../safe-open');
const { parseMaps } = require('../symbolize');
const { LIMITS } = require('../limits');

// One library's bytes at most (lib/limits.js says why).
const MAX_LIBRARY_BYTES = LIMITS.MAX_PROBE_LIBRARY_BYTES;

// A library named by its mapping (/proc/PID/map_files/RANGE: reachablePath
// below) has the name the process maps it by, kept here: the checks read
// its file name. The link itself is the kernel's, safe to open.
const MAP_FILE = /^\/proc\/[0-9]+\/map_files\/[0-9a-f]+-[0-9a-f]+$/;
const mappedNames = new Map();   // /proc/PID/map_files/RANGE -> its path in the process

function isMapFile(file) {
  return MAP_FILE.test(file);
}

// A library's file name, as lib/usdt named it.
function nameOf(file) {
  return path.basename(mappedNames.get(file) || file);
}

// The provider definition embedded in a probe library's bytes (lib/usdt/
// elf.js puts it in a .nodetrace.usdt section as one JSON line), or null.
function definitionIn(buf) {
  const start = buf.indexOf('{"format":');
  if (start < 0) return null;
  const end = buf.indexOf('\n', start);
  try {
    return JSON.parse(buf.toString('utf8', start, end < 0 ? buf.length : end));
  } catch {
    return null;
  }
}

function declares(def, provider) {
  if (!def || def.provider !== provider.name || !Array.isArray(def.probes)) return false;
  const names = new Set(def.probes.map((p) => p && p.name));
  return provider.probes.every(([name]) => names.has(name));
}

// The provider a library's definition is checked against: `provider` itself
// where it declares it, or, where `provider` is a function (nodetrace probes:
// any provider, or those a glob names), what it makes of the definition
// (null: not one wanted).
function wantedProvider(def, provider) {
  if (typeof provider === 'function') return provider(def);
  return declares(def, provider) ? provider : null;
}

function providerText(provider) {
  return typeof provider === 'function' ? 'a provider nodetrace was asked for' : `the ${provider.name} provider`;
}

/**
 * A probe library another user's process maps, checked before a tracer is
 * pointed at it: a regular file (not a link, FIFO or device; opened without
 * blocking) of at most 64 KB, owned by the owner of its directory, writable
 * by no one else, whose name is the hash of its bytes (lib/usdt names every
 * library so), declaring the provider, with probe sites a tracer can attach
 * to (library-check.js). -> { fd, path, inode, uid, provider: what its
 * notes were checked against } (keep the
 * fd open: a tracer is given /proc/<our PID>/fd/<fd>, that very file, so
 * nothing swapped in at the path afterwards is ever opened) or { refused }.
 */
function openVerified(file, provider) {
  const name = nameOf(file);
  if (!paths.isProbeLibraryName(name)) return { refused: 'not a probe library name' };
  // A mapping's link (map_files, whose directory the process's user owns) is the kernel's: followed.
  const opened = openRegular(file, { maxBytes: MAX_LIBRARY_BYTES, followLinks: isMapFile(file) });
  if (opened.refused) return opened;
  const { fd } = opened;
  const refuse = (why) => {
    fs.closeSync(fd);
    return { refused: why };
  };
  let dir;
  try { dir = fs.statSync(path.dirname(file)); } catch { return refuse('its directory is gone'); }
  const st = fs.fstatSync(fd);
  if (st.uid !== dir.uid) return refuse(`it belongs to uid ${st.uid}, its directory to uid ${dir.uid}`);
  const verdict = bytesVerdict(fd, name, provider);
  if (verdict.refused) return { ...refuse(verdict.refused), declared: verdict.declared };
  return { fd, path: file, inode: `${st.dev}:${st.ino}`, uid: st.uid, provider: verdict.provider };
}

// What is wrong with an open library's bytes as they are now, or null.
function bytesRefusal(fd, name, provider) {
  const verdict = bytesVerdict(fd, name, provider);
  return verdict.refused ? verdict : null;
}

// An open library's bytes as they are now: { refused, declared } or
// { provider: the provider its notes were checked against }.
function bytesVerdict(fd, name, provider) {
  const st = fs.fstatSync(fd);
  if (st.mode & 0o022) return { refused: 'others may write to it' };
  if (st.size > MAX_LIBRARY_BYTES) return { refused: `it is larger than ${MAX_LIBRARY_BYTES / 1024} KB` };
  const bytes = readAt(fd, 0, st.size);
  if (paths.libraryFileName(bytes) !== name) return { refused: 'its name is not the hash of its bytes' };
  const want = wantedProvider(definitionIn(bytes), provider);
  if (!want) return { refused: `it does not declare ${providerText(provider)}` };
  // It says it is one: a refusal from here on is worth saying.
  const check = checkLibrary(bytes, want);
  return check.refused ? { refused: check.refused, declared: true } : { provider: want };
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
  const opened = openRegular(file, { maxBytes: MAX_LIBRARY_BYTES, followLinks: isMapFile(file) });
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
  } catch {
    return null;
  }
}

// A library process `pid` maps, as a path usable from here: the path it
// maps it by, when that is the same file here (a tracer attached to it by
// path covers every process that maps it); else (a container's, or a file
// replaced since) its mapping in /proc/PID/map_files, the kernel's own link
// to the mapped file. Never /proc/PID/root/<path>: that is resolved by name
// through the process's tree, where an absolute link leads to the host's
// file (lib/safe-open.js); the mapping names the file itself.
function reachablePath(pid, mapped) {
  const link = `/proc/${pid}/map_files/${mapped.range}`;
  const id = inode(link);
  if (!id) return null;
  if (inode(mapped.path) === id) return mapped.path;
  rememberName(link, mapped.path);
  return link;
}

// At most this many names kept; past it, those of mappings gone are dropped.
const MAPPED_NAMES_MAX = LIMITS.MAX_PROBE_LIBRARY_NAMES;
function rememberName(link, name) {
  if (mappedNames.size >= MAPPED_NAMES_MAX) for (const k of mappedNames.keys()) if (!inode(k)) mappedNames.delete(k);
  mappedNames.set(link, name);
}

// The probe libraries process `pid` maps: [{ path, range }], one per file
// (its first mapping's range, as /proc/PID/map_files names it).
function mappedLibraries(pid) {
  const found = new Map();
  for (const m of parseMaps(proc.readProcFile(pid, 'maps') || '')) {
    if (found.has(m.path) || !paths.isProbeLibraryName(path.basename(m.path))) continue;
    found.set(m.path, { path: m.path, range: m.range });
  }
  return [...found.values()];
}

// The provider's libraries mapped by a live process.
function librariesOf(pid, provider) {
  const out = [];
  for (const mapped of mappedLibraries(pid)) {
    const p = reachablePath(pid, mapped);
    if (p && declaresProvider(p, provider)) out.push(p);
  }
  return out;
}

// Every probe library process `pid` maps, each checked by openVerified()
// for `provider` (a definition, or a function of the library's own:
// wantedProvider()): [{ path (as reachable from here), mapped (the path the
// process maps it by), provider, uid } or { path, mapped, refused, declared }].
function verifiedLibrariesOf(pid, provider) {
  const out = [];
  for (const mapped of mappedLibraries(pid)) {
    const p = reachablePath(pid, mapped);
    if (!p) continue;
    const v = openVerified(p, provider);
    if (v.refused) {
      out.push({ path: p, mapped: mapped.path, refused: v.refused, declared: Boolean(v.declared) });
      continue;
    }
    fs.closeSync(v.fd);
    out.push({ path: p, mapped: mapped.path, provider: v.provider, uid: v.uid });
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

// Users who may own a probe library: every account in /etc/passwd (the
// others come from the processes running: containers have uids it does not
// list).
function accountUids() {
  const uids = new Set([paths.currentUid()]);
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f.length >= 7 && /^[0-9]+$/.test(f[2])) uids.add(Number(f[2]));
    }
  } catch { /* no passwd */ }
  return uids;
}

// What one scan of the host may cost (lib/limits.js says why).
const VERIFY_PER_SCAN = LIMITS.PROBE_SCAN_FILES_READ;                   // files read and checked in one scan
const ENTRIES_PER_DIR = LIMITS.PROBE_SCAN_DIRECTORY_ENTRIES;            // entries of one directory looked at
const YOUNG_PROCESS_MS = LIMITS.PROBE_SCAN_YOUNG_PROCESS_MS;            // a process this young has its maps read every scan
const OLDER_PROCESSES_PER_SCAN = LIMITS.PROBE_SCAN_OLDER_PROCESSES;     // older processes whose maps are read again, in turn
const FULL_CHECK_EVERY = LIMITS.PROBE_SCAN_FULL_CHECK_EVERY;            // scans: every file is stat'ed again this often

// A file's identity and version, from lstat: what a verdict is kept for.
function stampOf(st) {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

// A mapping's link is followed (the kernel's): the file it maps.
function lstatStamp(file) {
  try {
    return isMapFile(file) ? fs.statSync(file, { bigint: true }) : fs.lstatSync(file, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * The provider's libraries on this host, found again and again at a bounded
 * cost: in the directories lib/usdt would use for any user, and those
 * mapped by running processes (which may have been told NODETRACE_USDT_DIR,
 * or live in a container). One scan reads at most VERIFY_PER_SCAN new or
 * changed files; the others wait for the next scans, taken in turn from
 * every directory (files that processes map first), so none waits behind
 * another user's thousands.
 */
class LibraryScan {
  constructor(provider, { verifyPerScan = VERIFY_PER_SCAN } = {}) {
    this.provider = provider;
    this.verifyPerScan = verifyPerScan;
    this.verdicts = new Map();    // path -> { stamp, ok }
    this.dirs = new Map();        // dir -> { stamp, files: [path] }
    this.processes = new Map();   // pid -> { startedAtMs, uid, files: [path] }
    this.turn = 0;
    this.scans = 0;
    this.last = { verified: 0, waiting: 0, crowded: [] };   // what the last scan did
    this.refusals = [];           // { path, why }: files refused that were worth saying, not yet said
  }

  // Files refused since last asked that are worth saying: libraries that
  // declare the provider but failed its checks, and files named as
  // libraries that are too large or not regular files (not those of other
  // providers, nor ones not named by their hash).
  takeRefusals() {
    return this.refusals.splice(0);
  }

  /** Every library found, verified (one path per file). */
  scan() {
    this.last = { verified: 0, waiting: 0, crowded: [] };
    this.budget = this.verifyPerScan;
    this.readProcesses();
    const mapped = [];
    for (const p of this.processes.values()) mapped.push(...p.files);
    const found = mapped.filter((f) => this.verdict(f) === true);
    // Files of a directory that did not change keep their verdicts without
    // a stat, but for one scan in FULL_CHECK_EVERY (a file changed in place).
    const full = this.scans++ % FULL_CHECK_EVERY === 0;
    const byDir = [];
    for (const dir of this.candidateDirs()) {
      const { files, changed } = this.listed(dir);
      if (files.length) byDir.push({ files, trust: !changed && !full });
    }
    // One file from each directory in turn until the budget is spent.
    const undecided = [];
    for (const { files, trust } of byDir) {
      const waiting = [];
      for (const f of files) {
        const known = trust ? this.verdicts.get(f) : null;
        const v = known ? known.ok : this.cached(f);
        if (v === true) found.push(f);
        else if (v === null) waiting.push(f);
      }
      if (waiting.length) undecided.push(waiting);
    }
    for (let i = 0; undecided.some((w) => i < w.length); i++) {
      for (const w of undecided) {
        if (i >= w.length) continue;
        if (this.verdict(w[i]) === true) found.push(w[i]);
      }
    }
    return uniqueByInode(found);
  }

  // The cached verdict of a file as it is now: true, false, or null (not
  // read yet, or changed since).
  cached(file) {
    const st = lstatStamp(file);
    if (!st) return false;
    const v = this.verdicts.get(file);
    return v && v.stamp === stampOf(st) ? v.ok : this.quickVerdict(file, st);
  }

  // What lstat alone decides (no read): not a regular file, too large.
  quickVerdict(file, st) {
    if (st.isFile() && st.size <= BigInt(MAX_LIBRARY_BYTES)) return null;
    this.verdicts.set(file, { stamp: stampOf(st), ok: false });
    this.refusals.push({ path: file, why: st.isFile() ? `it is larger than ${MAX_LIBRARY_BYTES / 1024} KB (lib/usdt's are about 10 KB)` : 'it is not a regular file' });
    return false;
  }

  // The verdict, reading the file if it is new or changed and the scan's
  // budget allows (null: not this scan).
  verdict(file) {
    const v = this.cached(file);
    if (v !== null) return v;
    if (this.budget <= 0) {
      this.last.waiting++;
      return null;
    }
    this.budget--;
    this.last.verified++;
    const st = lstatStamp(file);
    const opened = openVerified(file, this.provider);
    if (!opened.refused) fs.closeSync(opened.fd);
    else if (opened.declared) this.refusals.push({ path: file, why: opened.refused });
    if (st) this.verdicts.set(file, { stamp: stampOf(st), ok: !opened.refused });
    return !opened.refused;
  }

  // The directories lib/usdt would use for each user (worked out again only
  // when the users change).
  candidateDirs() {
    const uids = accountUids();
    for (const p of this.processes.values()) if (p.uid !== null) uids.add(p.uid);
    const key = [...uids].sort((a, b) => a - b).join(',');
    if (this.dirsFor && this.dirsFor.key === key) return this.dirsFor.dirs;
    const dirs = new Set(paths.candidateDirs().map((c) => c.dir));
    for (const uid of uids) for (const c of paths.candidateDirs({ uid, env: {} })) dirs.add(c.dir);
    this.dirsFor = { key, dirs };
    return dirs;
  }

  // The library-named entries of a directory (not a link: lib/usdt never
  // uses one), listed again only when it changed.
  listed(dir) {
    const st = lstatStamp(dir);
    if (!st || !st.isDirectory()) {
      this.dirs.delete(dir);
      return { files: [], changed: true };
    }
    const stamp = stampOf(st);
    const known = this.dirs.get(dir);
    if (known && known.stamp === stamp) return { files: known.files, changed: false };
    const files = [];
    let d;
    try { d = fs.opendirSync(dir, { bufferSize: 1024 }); } catch { return { files: [], changed: true }; }
    try {
      for (let n = 0; ; n++) {
        const e = d.readSync();
        if (!e) break;
        if (n >= ENTRIES_PER_DIR) { this.last.crowded.push(dir); break; }
        if (paths.isProbeLibraryName(e.name)) files.push(path.join(dir, e.name));
      }
    } finally {
      d.closeSync();
    }
    this.dirs.set(dir, { stamp, files });
    return { files, changed: true };
  }

  // The libraries each process maps: read for new and young processes at
  // every scan, for older ones in turn.
  readProcesses() {
    const now = Date.now();
    const bootMs = bootTimeMs();
    const pids = proc.allPids().filter((pid) => pid !== process.pid);
    const alive = new Set(pids);
    for (const pid of this.processes.keys()) if (!alive.has(pid)) this.processes.delete(pid);
    const older = [];
    for (const pid of pids) {
      let p = this.processes.get(pid);
      if (!p) {
        const start = proc.stat.startTime(pid);
        p = { startedAtMs: start === null || bootMs === null ? null : bootMs + Number(start) * 10,
          uid: proc.stat.uidOf(pid), files: [] };
        this.processes.set(pid, p);
        this.readMaps(pid, p);
      } else if (p.startedAtMs === null || now - p.startedAtMs < YOUNG_PROCESS_MS) {
        this.readMaps(pid, p);
      } else {
        older.push(pid);
      }
    }
    const n = Math.min(older.length, OLDER_PROCESSES_PER_SCAN);
    for (let i = 0; i < n; i++) {
      const pid = older[(this.turn + i) % older.length];
      this.readMaps(pid, this.processes.get(pid));
    }
    this.turn = older.length ? (this.turn + n) % older.length : 0;
  }

  readMaps(pid, p) {
    p.files = [];
    for (const mapped of mappedLibraries(pid)) {
      const reachable = reachablePath(pid, mapped);
      if (reachable) p.files.push(reachable);
    }
  }
}

// When the host booted, in ms since the epoch (/proc/stat btime), or null;
// a process's start (clock ticks since boot, USER_HZ 100) adds to it.
function bootTimeMs() {
  let text = '';
  try { text = fs.readFileSync('/proc/stat', 'utf8'); } catch { /* not Linux */ }
  const m = /^btime (\d+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : null;
}

// One scan per provider for the whole run: the trace's start and the
// follower's watch share what is known.
const scans = new Map();
function scanFor(provider) {
  if (!scans.has(provider)) scans.set(provider, new LibraryScan(provider));
  return scans.get(provider);
}

// Every library of the provider on this host found so far (the first scan
// reads at most VERIFY_PER_SCAN files; the follower's scans take the rest).
function allLibraries(provider) {
  return scanFor(provider).scan();
}

// The processes that map any of these libraries now. /proc/PID/maps gives
// each mapping's inode; the file name (content-addressed) rules out another
// file system's file with the same inode number.
function pidsMapping(files) {
  const wanted = new Set();
  for (const f of files) {
    try { wanted.add(`${fs.statSync(f).ino} ${nameOf(f)}`); } catch { /* gone */ }
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

  // Why a library held open no longer passes the checks (its owner changed
  // its bytes in place since), or null: asked again before each re-plan.
  changed(file) {
    if (!this.fds.has(file)) return null;
    const why = bytesRefusal(this.fds.get(file), nameOf(file), this.provider);
    return why ? why.refused : null;
  }

  close(file) {
    if (!this.fds.has(file)) return;
    try { fs.closeSync(this.fds.get(file)); } catch { /* already */ }
    this.fds.delete(file);
  }

  closeAll() {
    for (const fd of this.fds.values()) {
      try { fs.closeSync(fd); } catch { /* already */ }
    }
    this.fds.clear();
  }
}

// Tracks which libraries a trace covers, to find the ones that appear later:
// a user's first process with the provider creates its library after the
// trace has attached to the others.
class LibraryWatch {
  constructor(provider, libraries, scan = scanFor(provider)) {
    this.scan = scan;
    this.covered = new Set(libraries.map(inode).filter(Boolean));
  }

  // Libraries not seen before (and now counted as seen).
  newLibraries() {
    const out = [];
    for (const file of this.scan.scan()) {
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
  const store = require('../usdt/store');
  const { bytes, fileName } = paths.libraryFor(provider.name, provider.probes, provider.module);
  for (const candidate of paths.candidateDirs()) {
    try {
      return store.install(store.prepareDir(candidate), fileName, bytes);
    } catch { /* next directory */ }
  }
  return null;
}

// The path createOwnLibrary() would use, without creating anything.
function ownLibraryPath(provider) {
  return paths.probeLibraryPath(provider.name, provider.probes);
}

module.exports = {
  libraryDefinition, declaresProvider, openVerified, OpenedLibraries, librariesOf, verifiedLibrariesOf, allLibraries,
  uniqueByInode, pidsMapping,
  LibraryScan, LibraryWatch, scanFor, createOwnLibrary, ownLibraryPath, isMapFile, reachablePath, mappedLibraries,
  inode, MAX_LIBRARY_BYTES, VERIFY_PER_SCAN,
};
