'use strict';
// /proc files read to a bound: they say size 0, so the bound is the
// reader's, never the file's word. A target writes much of what its /proc
// files hold (its argv and environment, a mapping per mmap, the file names
// it maps), so each file's bound is in lib/limits.js (PROC_FILE_BYTES).
const fs = require('fs');
const path = require('path');
const { LIMITS, overLimit, formatBytes } = require('../limits');

const CHUNK_BYTES = 64 * 1024;

/**
 * Reads `file` to at most `maxBytes`, in chunks (most /proc files are a few
 * KB: no buffer of the bound's size is made up front).
 * -> { text, truncated } (truncated: the file held more), or null when
 * unreadable (`throws`: the error thrown instead, for callers that name it).
 */
function readUpTo(file, maxBytes, encoding = 'utf8', { throws = false } = {}) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const chunks = [];
    let total = 0;
    let truncated = false;
    for (;;) {
      // One byte past the bound tells a file of exactly maxBytes from a longer one.
      const want = Math.min(CHUNK_BYTES, maxBytes + 1 - total);
      const buf = Buffer.allocUnsafe(want);
      const got = fs.readSync(fd, buf, 0, want, null);
      if (got === 0) break;
      chunks.push(got === want ? buf : buf.subarray(0, got));
      total += got;
      if (total > maxBytes) {
        truncated = true;
        break;
      }
    }
    const all = Buffer.concat(chunks, total);
    return { text: all.toString(encoding, 0, Math.min(total, maxBytes)), truncated };
  } catch (err) {
    if (throws) throw err;
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The bound of a /proc file, by its name (maps, status, task/TID/stat...). */
function procFileBound(file) {
  const bounds = LIMITS.PROC_FILE_BYTES;
  const name = path.basename(file);
  return Object.prototype.hasOwnProperty.call(bounds, name) ? bounds[name] : bounds.other;
}

/**
 * A /proc file of another process, read to its bound (procFileBound). Past
 * the bound: one line naming the file and the bound (lib/limits.js
 * overLimit), and the text up to its last whole line or NUL-ended string,
 * so that no reader takes a cut line for a whole one. Null when unreadable
 * (`throws`: the error thrown instead).
 */
function readProcText(file, { encoding = 'utf8', bound = procFileBound(file), throws = false } = {}) {
  const r = readUpTo(file, bound, encoding, { throws });
  if (r === null) return null;
  if (!r.truncated) return r.text;
  overLimit(file, `larger than ${formatBytes(bound)}: only its first ${formatBytes(bound)} was read`);
  const end = Math.max(r.text.lastIndexOf('\n'), r.text.lastIndexOf('\0'));
  return end < 0 ? '' : r.text.slice(0, end + 1);
}

module.exports = { readUpTo, readProcText, procFileBound };
