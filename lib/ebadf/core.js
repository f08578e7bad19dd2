'use strict';
// Taking the core: where it goes, whether it fits, and running gcore (from
// gdb) safely.
//
// - Size: gcore (gdb 13) writes every mapping of the process, reserved but
//   untouched regions included, as zeros, and the file is not sparse. A Node
//   process with 40 MB resident and 711 MB of address space (VmSize) gave a
//   657 MB core. So the check is against VmSize, not RSS, plus 5%.
// - Secrets: gcore runs with umask 077 and writes into a private (0700)
//   directory next to the final place; the core is chmod 0600 and linked into
//   place under a new name (never over an existing file, never through a
//   symlink someone planted in a shared directory such as /tmp).
// - Control: gcore runs in its own process group, so that a terminal's Ctrl-C
//   does not hit it half-way and so that it (and its gdb) can be killed as one,
//   by us or by the watchdog.
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { UserError, UsageError } = require('../errors');
const { findOnPath } = require('../tracer/detect');
const { statusBytes } = require('../proc/stat');

const MARGIN = 0.05;

function formatBytes(n) {
  if (n == null) return '?';
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return i === 0 ? `${n} bytes` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

function requireGcore({ find = findOnPath } = {}) {
  const gcore = find('gcore');
  if (!gcore) {
    throw new UserError('gcore is not installed: nodetrace ebadf needs it to save a core without killing the process.',
      { hint: 'Install gdb, which provides gcore (Debian/Ubuntu: sudo apt-get install -y gdb; Fedora/RHEL: sudo dnf install gdb); or use --abort in development.' });
  }
  // Debian's and Fedora's gcore are scripts that run gdb from the PATH.
  if (!find('gdb')) {
    throw new UserError(`${gcore} is there but gdb is not: gcore needs gdb.`,
      { hint: 'Install gdb (Debian/Ubuntu: sudo apt-get install -y gdb; Fedora/RHEL: sudo dnf install gdb).' });
  }
  return gcore;
}

// The directory exists, is a directory, and we can create files in it (as
// root, access(2) says yes to read-only mounts' neighbours; only trying tells).
function checkCoreDir(dir) {
  const abs = path.resolve(dir);
  let st;
  try {
    st = fs.statSync(abs);
  } catch {
    throw new UsageError(`-o ${dir}: no such directory.`, 'Create it first (mkdir -p), or point -o at an existing directory.');
  }
  if (!st.isDirectory()) throw new UsageError(`-o ${dir}: not a directory.`);
  try {
    fs.rmdirSync(fs.mkdtempSync(path.join(abs, '.nodetrace-ebadf-check-')));
  } catch (err) {
    throw new UserError(`cannot write cores to ${abs}: ${err.code || err.message}${err.code === 'EROFS' ? ' (read-only file system)' : ''}.`,
      { hint: 'Choose a writable directory with -o DIR; nothing was stopped.' });
  }
  return abs;
}

// Bytes the core of `pid` will need, or null if the process is gone.
function coreEstimate(pid) {
  const vmSize = statusBytes(pid, 'VmSize');
  if (vmSize == null) return null;
  return { vmSize, rss: statusBytes(pid, 'VmRSS'), need: Math.ceil(vmSize * (1 + MARGIN)) };
}

function freeBytes(dir) {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

/** null if there is room, else a sentence saying why not. */
function roomProblem(dir, pid) {
  const est = coreEstimate(pid);
  if (!est) return null;
  const free = freeBytes(dir);
  if (free >= est.need) return null;
  return `${dir} has ${formatBytes(free)} free, and a core of PID ${pid} needs about ${formatBytes(est.need)} `
    + `(its virtual size, VmSize ${formatBytes(est.vmSize)}, which gcore writes in full, + 5%)`;
}

function requireRoom(dir, pid) {
  const problem = roomProblem(dir, pid);
  if (problem) {
    throw new UserError(`not enough room for a core: ${problem}.`,
      { hint: 'Free some space or choose another directory with -o DIR; nothing was stopped.' });
  }
}

function safeName(comm) {
  return (comm || 'process').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 32) || 'process';
}

function stamp(date = new Date()) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}T${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}Z`;
}

// Links `file` into `dir` under base(.N), never replacing anything.
function publish(file, dir, base) {
  for (let n = 0; n < 1000; n++) {
    const dest = path.join(dir, n === 0 ? base : `${base}.${n}`);
    try {
      fs.linkSync(file, dest);
      fs.unlinkSync(file);
      return dest;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`too many cores named ${base} in ${dir}`);
}

// The lines that say why gcore failed: gdb's last words ("You can't do that
// without a process to debug") follow the one that matters ("ptrace: ...
// already traced by process N"), so those reasons come first.
const WHY = /ptrace|already traced|not permitted|denied|No such process|Couldn't|Could not|Unable/i;
function lastLines(text, n = 3) {
  const lines = String(text).split('\n').map((l) => l.trim()).filter(Boolean)
    .filter((l) => !/^(\[New LWP|\[Thread debugging|Using host libthread_db|warning: Memory read failed for corefile section, 4096 bytes at 0xffffffffff600000)/.test(l));
  const reasons = lines.filter((l) => WHY.test(l));
  const last = lines.slice(-n).filter((l) => !reasons.includes(l));
  return [...reasons.slice(0, 3), ...last].join('; ');
}

/**
 * Runs gcore on a (stopped) process.
 * @param {object} o { gcore, pid, comm, dir, timeoutMs, onSpawn(child, tmpDir), signal: AbortSignal }
 * @returns {Promise<{ok: true, file, size, ms} | {ok: false, reason, ms}>}
 */
function runGcore(o) {
  const started = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
  let tmp;
  try {
    tmp = fs.mkdtempSync(path.join(o.dir, '.nodetrace-ebadf-'));
    fs.chmodSync(tmp, 0o700);
  } catch (err) {
    return Promise.resolve({ ok: false, reason: `cannot write to ${o.dir}: ${err.code || err.message}`, ms: ms() });
  }
  const cleanup = () => { try { fs.rmSync(tmp, { recursive: true, force: true }); } catch { /* best effort */ } };
  const problem = roomProblem(o.dir, o.pid);
  if (problem) {
    cleanup();
    return Promise.resolve({ ok: false, reason: `not enough room: ${problem}`, ms: ms() });
  }
  const prefix = path.join(tmp, 'core');
  const oldMask = process.umask(0o077);
  let child;
  try {
    child = spawn(o.gcore, ['-o', prefix, String(o.pid)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  } finally {
    process.umask(oldMask);
  }
  return new Promise((resolve) => {
    let output = '';
    let killedWhy = null;
    const collect = (d) => { output = (output + d).slice(-8192); };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const killGroup = (why) => {
      if (killedWhy) return;
      killedWhy = why;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    };
    const timer = setTimeout(() => killGroup(`gcore took longer than ${Math.round(o.timeoutMs / 1000)} s`), o.timeoutMs);
    const onAbort = () => killGroup('interrupted');
    if (o.signal) o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.onSpawn && child.pid) o.onSpawn(child, tmp);
    child.on('error', (err) => { killedWhy = killedWhy || `cannot run ${o.gcore}: ${err.code || err.message}`; });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (o.signal) o.signal.removeEventListener('abort', onAbort);
      // gdb may leave children in the group; make sure none survive.
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* none */ }
      const produced = `${prefix}.${o.pid}`;
      let size = 0;
      try { size = fs.statSync(produced).size; } catch { /* none */ }
      if (killedWhy || code !== 0 || size === 0) {
        cleanup();
        const why = killedWhy || (sig ? `gcore was killed by ${sig}` : `gcore failed (exit status ${code})`);
        const said = lastLines(output);
        resolve({ ok: false, reason: said ? `${why}: ${said}` : why, ms: ms() });
        return;
      }
      try {
        fs.chmodSync(produced, 0o600);
        const file = publish(produced, o.dir, `core.${safeName(o.comm)}.${o.pid}.${stamp()}`);
        cleanup();
        resolve({ ok: true, file, size, ms: ms() });
      } catch (err) {
        cleanup();
        resolve({ ok: false, reason: `could not move the core into ${o.dir}: ${err.code || err.message}`, ms: ms() });
      }
    });
  });
}

module.exports = {
  requireGcore, checkCoreDir, coreEstimate, freeBytes, roomProblem, requireRoom, runGcore, formatBytes, safeName, stamp,
  publish,
};
