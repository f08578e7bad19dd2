'use strict';
// Files the operator names for a report (--svg, --pprof, --folded), written
// as root where other users may have been first (/tmp): never through a
// link, never into a file someone else holds. A path is checked before the
// trace begins (a report that cannot be written is said at once, not after
// minutes of tracing), and the report is written to a new file of its own
// (O_EXCL, a name no one had) renamed over the path: whatever stands there
// then, a link or another user's file, is replaced, never written into.
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { UserError } = require('./errors');

const HINT = 'Name another path, or remove what is there first.';

// Why `file` cannot be written as it stands, or null. `st`: its lstat, or null.
function refusal(file, st, uid = process.getuid()) {
  if (!st) return null;
  if (st.isSymbolicLink()) return 'it is a symbolic link';
  if (!st.isFile()) return 'it is not a regular file';
  if (st.uid !== uid) return `it belongs to another user (uid ${st.uid})`;
  if (st.nlink !== 1) return `it has ${st.nlink} hard links`;
  return null;
}

function lstatOrNull(file) {
  try {
    return fs.lstatSync(file);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw new UserError(`cannot write ${file}: ${err.code || err.message}.`, { hint: HINT });
  }
}

// A new file beside `file`, created exclusively: -> { name, fd }.
function createBeside(file, mode) {
  const dir = path.dirname(path.resolve(file));
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  for (let tries = 0; ; tries++) {
    const name = path.join(dir, `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
    try {
      return { name, fd: fs.openSync(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode) };
    } catch (err) {
      if (err.code === 'EEXIST' && tries < 10) continue;
      throw new UserError(`cannot write ${file}: ${err.code === 'ENOENT' ? 'no such directory' : err.code || err.message}.`, { hint: HINT });
    }
  }
}

/** Throws a UserError now if `file` could not be written after the trace. */
function checkOutputFile(file) {
  const why = refusal(file, lstatOrNull(file));
  if (why) throw new UserError(`refusing to write ${file}: ${why}.`, { hint: HINT });
  // The directory takes a new file (it exists, is writable, has room for a name).
  const probe = createBeside(file, 0o600);
  fs.closeSync(probe.fd);
  fs.unlinkSync(probe.name);
}

/** Writes `data` to `file`: a new file, then renamed over the path. */
function writeOutputFile(file, data, { mode = 0o644 } = {}) {
  const why = refusal(file, lstatOrNull(file));
  if (why) throw new UserError(`refusing to write ${file}: ${why}.`, { hint: HINT });
  const out = createBeside(file, mode);
  try {
    try {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(String(data));
      for (let at = 0; at < bytes.length;) at += fs.writeSync(out.fd, bytes, at);
    } finally {
      fs.closeSync(out.fd);
    }
    fs.renameSync(out.name, file);
  } catch (err) {
    try { fs.unlinkSync(out.name); } catch { /* already gone */ }
    throw err instanceof UserError ? err : new UserError(`cannot write ${file}: ${err.code || err.message}.`, { hint: HINT });
  }
}

module.exports = { checkOutputFile, writeOutputFile, refusal };
