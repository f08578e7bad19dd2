'use strict';
// What the namer returns is text another user chose (function names, file
// names in their memory). It is made harmless here, once, so that no caller
// can forget: bounded in length, and with every character that could
// rewrite a line or the terminal shown as an escape (\xNN or \uNNNN): C0
// controls (newline and tab too: a name must not start a new frame line),
// DEL, C1 controls, the line and paragraph separators, and the bidirectional
// overrides (which reorder what follows on screen). Lone UTF-16 surrogates
// become U+FFFD. A backslash stays a backslash: the text is for reading.
//
// What callers must still do: treat a name as data (it may hold spaces,
// parentheses or colons, so "NAME (FILE:LINE:COLUMN)" is not parseable
// back; use the fields), and pass what they print through
// lib/terminal-safe.js as everything else (idempotent here).
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const MAX_NAME = 256;
const MAX_FILE = 1024;

function escape(c) {
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

function wellFormed(s) {
  return typeof s.toWellFormed === 'function' ? s.toWellFormed()
    : s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Text safe to hold in a frame: at most `max` characters before escaping, '…' marking a cut. */
function safeName(text, { max = MAX_NAME, truncated = false } = {}) {
  let s = wellFormed(String(text));
  let cut = truncated;
  if ([...s].length > max) { s = [...s].slice(0, max).join(''); cut = true; }
  return s.replace(UNSAFE, escape) + (cut ? '…' : '');
}

module.exports = { safeName, MAX_NAME, MAX_FILE };
