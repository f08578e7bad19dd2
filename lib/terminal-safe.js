'use strict';
// Text that others control (log records, process and thread names, file
// names, function names, URLs, what a tracer printed about them) reaches
// root's terminal, and any JSON nodetrace writes, only with the characters
// that could rewrite the screen or what is read made visible. One set, one
// escaping, for every command's output (docs/security.md, 35.9). Pure.
//
// The set: the C0 controls (tab and newline are kept in multi-line text, and
// escaped with `oneLine`), DEL, the C1 controls (U+0080..U+009F: some
// terminals obey U+009B as CSI and U+009D as OSC), the line and paragraph
// separators (U+2028, U+2029) and the bidirectional controls, which reorder
// what follows them on screen (Trojan Source, CVE-2021-42574): the embeddings
// and overrides U+202A..U+202E, the isolates U+2066..U+2069, and the marks
// U+200E, U+200F and U+061C.
//
// In text they are shown as \xNN (below U+0080) or \uNNNN, and a backslash
// before them stays a plain backslash: the text is for reading, not for
// parsing (use --json for that). In JSON they are written as \uNNNN escapes,
// which JSON.stringify leaves out for all but C0: the same value for a
// parser, nothing raw for a terminal that shows the file.
const BIDI_AND_SEPARATORS = '\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${BIDI_AND_SEPARATORS}]`, 'g');
const UNSAFE_ONE_LINE = new RegExp(`[\\x00-\\x1f\\x7f-\\x9f${BIDI_AND_SEPARATORS}]`, 'g');
// What JSON.stringify leaves raw of the set (it escapes every C0 control).
const UNSAFE_IN_JSON = new RegExp(`[\\x7f-\\x9f${BIDI_AND_SEPARATORS}]`, 'g');

function visible(c) {
  const n = c.charCodeAt(0);
  return n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

function jsonEscape(c) {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

// Those characters made visible; tab and newline kept (a multi-line
// message stays multi-line) unless `oneLine`.
function safeText(text, { oneLine = false } = {}) {
  return String(text).replace(oneLine ? UNSAFE_ONE_LINE : UNSAFE, visible);
}

function hasControls(text) {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(String(text));
}

/**
 * JSON text of a value, as JSON.stringify(value, null, indent) writes it,
 * with every character of the set escaped as \uNNNN: parsed back, the same
 * value. Every JSON output of nodetrace is written through this.
 */
function safeJson(value, indent = 2) {
  const text = JSON.stringify(value, null, indent);
  return text === undefined ? text : text.replace(UNSAFE_IN_JSON, jsonEscape);
}

/**
 * JSON text another wrote (a log record), as it was written but with every
 * character of the set written as a \uNNNN escape: the same value for a
 * parser (outside its strings, JSON holds ASCII only). null when the text is
 * not JSON: the caller says so rather than pass it on.
 */
function safeJsonText(text) {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  return String(text).replace(UNSAFE_IN_JSON, jsonEscape);
}

// A parsed JSON value with every string (keys too) made safe as text.
function safeValue(value) {
  if (typeof value === 'string') return safeText(value);
  if (Array.isArray(value)) return value.map(safeValue);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[safeText(k, { oneLine: true })] = safeValue(v);
    return out;
  }
  return value;
}

module.exports = { safeText, safeJson, safeJsonText, safeValue, hasControls };
