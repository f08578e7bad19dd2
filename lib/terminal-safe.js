'use strict';
// Text that others control (log records, process names, file names, what a
// tracer printed about them) reaches root's terminal only with its control
// characters made visible: an escape sequence in a record must not clear the
// screen, retitle the window or rewrite what was printed before. Pure.
//
// C0 controls but tab and newline, DEL, and the C1 controls (U+0080..U+009F,
// which some terminals read as escape sequences too) are shown as \xNN or
// \u00NN, and a backslash before them stays a plain backslash: the output is
// for reading, not for parsing (use --json for that).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_NEWLINE = /[\x00-\x08\x0a-\x1f\x7f\u0080-\u009f]/g;

function visible(c) {
  const n = c.charCodeAt(0);
  return n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

// Control characters made visible; tab and newline kept (a multi-line
// message stays multi-line) unless `oneLine`.
function safeText(text, { oneLine = false } = {}) {
  return String(text).replace(oneLine ? CONTROL_OR_NEWLINE : CONTROL, visible);
}

function hasControls(text) {
  CONTROL.lastIndex = 0;
  return CONTROL.test(String(text));
}

// A parsed JSON value with every string (keys too) made safe.
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

module.exports = { safeText, safeValue, hasControls };
