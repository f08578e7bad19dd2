'use strict';
// What the namer returns is text another user chose (function names, file
// names in their memory). It is made harmless here, once, so that no caller
// can forget: bounded in length, and with every character that could
// rewrite a line or the terminal shown as an escape, as everywhere
// (lib/terminal-safe.js, one line: newline and tab too, so that a name
// cannot start a new frame line). Lone UTF-16 surrogates become U+FFFD.
//
// What callers must still do: treat a name as data (it may hold spaces,
// parentheses or colons, so "NAME (FILE:LINE:COLUMN)" is not parseable
// back; use the fields), and pass what they print through
// lib/terminal-safe.js as everything else (idempotent here).
const { safeText } = require('../terminal-safe');

const MAX_NAME = 256;
const MAX_FILE = 1024;

function wellFormed(s) {
  return typeof s.toWellFormed === 'function' ? s.toWellFormed()
    : s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Text safe to hold in a frame: at most `max` characters before escaping, '…' marking a cut. */
function safeName(text, { max = MAX_NAME, truncated = false } = {}) {
  let s = wellFormed(String(text));
  let cut = truncated;
  if ([...s].length > max) { s = [...s].slice(0, max).join(''); cut = true; }
  return safeText(s, { oneLine: true }) + (cut ? '…' : '');
}

module.exports = { safeName, MAX_NAME, MAX_FILE };
