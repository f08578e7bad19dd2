'use strict';
// A name a traced process chose (a path it opened, a host it looked up, an
// async_hooks type) crosses the tracer's output as numbers, never as text:
// the program prints the name's first bytes as hexadecimal 64-bit words
// (d-scripts/addon-latency.bt's NAME lines, async.bt's KIND lines). No byte
// of it can then end a line, start another or pass for a map entry, whatever
// the name holds and whichever bpftrace prints it (0.17's text, 0.22-0.23's
// JSON escaping string keys twice, 0.24+'s deleting their spaces). Pure.

// The words' text: 1 to 16 hex digits each, as bpftrace's %lx prints them.
const WORD = /^[0-9a-f]{1,16}$/;

/**
 * The hexadecimal words (little-endian, x86-64: the name's first byte is the
 * low byte of the first word) -> { text, cut } or null (not words).
 * The program read words.length * 8 bytes; the name is what comes before
 * its NUL. A name with no NUL in the first (bytes - 1) and more after it
 * was longer than was read: `cut`, the first (bytes - 1) kept. Bytes that
 * are not UTF-8 become U+FFFD; the text is the process's: shown escaped
 * (lib/terminal-safe.js), never trusted.
 */
function nameFromWords(words) {
  if (!Array.isArray(words) || words.length === 0 || !words.every((w) => WORD.test(w))) return null;
  const bytes = Buffer.alloc(words.length * 8);
  words.forEach((word, i) => bytes.writeBigUInt64LE(BigInt('0x' + word), i * 8));
  const read = bytes.subarray(0, bytes.length - 1);
  const nul = read.indexOf(0);
  const cut = nul < 0 && bytes[bytes.length - 1] !== 0;
  const text = (nul < 0 ? read : read.subarray(0, nul)).toString('utf8');
  return cut ? { text, cut: true } : { text, cut: false };
}

module.exports = { nameFromWords };
