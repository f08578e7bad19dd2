'use strict';
// Safe handling of probe-library files. A probe library is code that we are
// about to dlopen() into the process, so nobody else may have been able to
// plant or change it:
//
//   directory  ours (uid), not group/other-writable, not a symlink; created
//              0700 when missing; every ancestor owned by root or us and not
//              writable by others unless sticky (like /tmp), so nobody can
//              swap the directory itself;
//   file       regular (opened O_NOFOLLOW), ours, not group/other-writable,
//              and exactly the bytes we expect (compared in full);
//   creation   a fresh temp file (O_EXCL, so never someone else's), written,
//              fsync'd, then hard-linked to its final name. link() fails if
//              the name exists, so a file another process may already have
//              mapped is never replaced: a replaced file would leave that
//              process probing an unlinked inode that tracers attaching by
//              path can no longer see. We never write to a final name.
//
// Anything that fails these checks is refused (StoreError with refused=true)
// and left alone; the caller moves on to the next candidate directory.

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { currentUid } = require('./paths');

const C = fs.constants;
const FILE_MODE = 0o555;   // r-x: bcc (bpftrace) only reads USDT notes from files it may execute

class StoreError extends Error {
  constructor(message, { code = 'EUNSAFE', refused = false } = {}) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
    this.refused = refused;   // true: something unsafe was there (planted?)
  }
}

function refuse(message, code = 'EUNSAFE') {
  return new StoreError(message, { code, refused: true });
}

function describeMode(mode) {
  return '0' + (mode & 0o7777).toString(8);
}

function checkOwnedNotWritable(what, p, st, uid) {
  if (st.uid !== uid) throw refuse(`${what} ${p} is owned by uid ${st.uid}, not ${uid}`);
  if (st.mode & 0o022) throw refuse(`${what} ${p} is writable by group or others (mode ${describeMode(st.mode)})`);
}

// Every ancestor of a real (symlink-free) path must be root's or ours and,
// if others may write to it, sticky: otherwise someone could rename our
// directory away and put theirs in its place.
function checkAncestors(realDir, uid) {
  let p = path.dirname(realDir);
  for (;;) {
    const st = fs.lstatSync(p);
    if (st.uid !== 0 && st.uid !== uid) throw refuse(`ancestor directory ${p} is owned by uid ${st.uid}`);
    if ((st.mode & 0o022) && !(st.mode & 0o1000)) {   // 0o1000: sticky bit
      throw refuse(`ancestor directory ${p} is writable by others and not sticky (mode ${describeMode(st.mode)})`);
    }
    const up = path.dirname(p);
    if (up === p) return;
    p = up;
  }
}

// Makes sure candidate.dir exists and is safe; returns its real path.
// candidate: { dir, root } (see paths.candidateDirs); only `dir` and missing
// directories between `root` and `dir` are created.
function prepareDir(candidate, { create = true, uid = currentUid() } = {}) {
  const { dir, root } = candidate;
  let st;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    if (err.code !== 'ENOENT' || !create) throw new StoreError(`${dir}: ${err.code}`, { code: err.code });
    let rootSt;
    try { rootSt = fs.statSync(root); } catch { rootSt = null; }
    if (!rootSt || !rootSt.isDirectory()) throw new StoreError(`${root} does not exist`, { code: 'ENOENT' });
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new StoreError(`cannot create ${dir}: ${e.code || e.message}`, { code: e.code });
    }
    st = fs.lstatSync(dir);
  }
  if (st.isSymbolicLink()) throw refuse(`${dir} is a symbolic link`);
  if (!st.isDirectory()) throw refuse(`${dir} is not a directory`);
  checkOwnedNotWritable('directory', dir, st, uid);
  const real = fs.realpathSync(dir);
  checkAncestors(real, uid);
  return real;
}

// Throws ENOENT (plain StoreError) if missing, a refusal if anything is off.
function verifyFile(file, expected, { uid = currentUid() } = {}) {
  let fd;
  try {
    fd = fs.openSync(file, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | (C.O_CLOEXEC || 0));
  } catch (err) {
    if (err.code === 'ENOENT') throw new StoreError(`${file} does not exist`, { code: 'ENOENT' });
    if (err.code === 'ELOOP') throw refuse(`${file} is a symbolic link`);
    throw new StoreError(`cannot open ${file}: ${err.code}`, { code: err.code });
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw refuse(`${file} is not a regular file`);
    checkOwnedNotWritable('file', file, st, uid);
    if (st.size !== expected.length) throw refuse(`${file} does not hold the expected probe library (size ${st.size}, expected ${expected.length})`, 'EMISMATCH');
    const actual = Buffer.alloc(expected.length);
    let off = 0;
    while (off < actual.length) {
      const n = fs.readSync(fd, actual, off, actual.length - off, off);
      if (n === 0) break;
      off += n;
    }
    if (off !== expected.length || !actual.equals(expected)) {
      throw refuse(`${file} does not hold the expected probe library (content differs)`, 'EMISMATCH');
    }
    return st;
  } finally {
    fs.closeSync(fd);
  }
}

function fsyncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, C.O_RDONLY | (C.O_DIRECTORY || 0));
    fs.fsyncSync(fd);
  } catch { /* best effort: durability only, not safety */ } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// Puts `bytes` at dir/name (dir from prepareDir) unless already there;
// returns the path, verified.
function install(dir, name, bytes, { uid = currentUid() } = {}) {
  const file = path.join(dir, name);
  try {
    verifyFile(file, bytes, { uid });
    return file;
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  const tmp = path.join(dir, `.${name}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  let fd;
  try {
    fd = fs.openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | (C.O_CLOEXEC || 0), FILE_MODE);
  } catch (err) {
    throw new StoreError(`cannot create a file in ${dir}: ${err.code || err.message}`, { code: err.code });
  }
  try {
    try {
      fs.fchmodSync(fd, FILE_MODE);   // whatever the umask
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off, off);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.linkSync(tmp, file);
    } catch (err) {
      if (err.code === 'EEXIST') {
        // Another process won the race; its file is checked below.
      } else if (['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK'].includes(err.code)) {
        // No hard links here: rename, which only replaces a file created in
        // the same instant by a process doing the same thing (same bytes).
        if (!fs.existsSync(file)) fs.renameSync(tmp, file);
      } else {
        throw new StoreError(`cannot create ${file}: ${err.code || err.message}`, { code: err.code });
      }
    }
  } catch (err) {
    throw err instanceof StoreError ? err : new StoreError(`cannot write ${file}: ${err.code || err.message}`, { code: err.code });
  } finally {
    try { fs.unlinkSync(tmp); } catch { /* renamed, or already gone */ }
  }
  fsyncDir(dir);
  verifyFile(file, bytes, { uid });
  return file;
}

module.exports = { prepareDir, verifyFile, install, checkAncestors, StoreError, FILE_MODE };
