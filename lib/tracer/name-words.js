'use strict';
// A name a traced process chose (a path it opened, a host it looked up, an
// async_hooks type) crosses the tracer's output as numbers, never as text:
// the program prints the name's first bytes as hexadecimal 64-bit words
// (d-scripts/addon-latency.bt's NAME lines, async.bt's KIND lines), or as
// bpftrace's %rx bytes (the ebadf scripts' HIT lines; their D twins, words).
// No byte of it can then end a line, start another or pass for a map entry,
// whatever the name holds and whichever bpftrace prints it (0.17's text,
// 0.22-0.23's JSON escaping string keys twice, 0.24+'s deleting their
// spaces). Pure.

// The words' text: 1 to 16 hex digits each, as bpftrace's %lx prints them.
const WORD = /^[0-9a-f]{1,16}$/;

/**
 * The bytes a program read of a name -> { text, cut }: the name is what
 * comes before its NUL. A name with no NUL in the first (bytes - 1) and
 * more after it was longer than was read: `cut`, the first (bytes - 1)
 * kept. Bytes that are not UTF-8 become U+FFFD; the text is the process's:
 * shown escaped (lib/terminal-safe.js), never trusted.
 */
function nameFromBytes(bytes) {
  const read = bytes.subarray(0, bytes.length - 1);
  const nul = read.indexOf(0);
  const cut = nul < 0 && bytes[bytes.length - 1] !== 0;
  return { text: (nul < 0 ? read : read.subarray(0, nul)).toString('utf8'), cut };
}

/**
 * The hexadecimal words (little-endian, x86-64: the name's first byte is the
 * low byte of the first word) -> { text, cut } (nameFromBytes) or null (not
 * words). The program read words.length * 8 bytes.
 */
function nameFromWords(words) {
  if (!Array.isArray(words) || words.length === 0 || !words.every((w) => WORD.test(w))) return null;
  const bytes = Buffer.alloc(words.length * 8);
  words.forEach((word, i) => bytes.writeBigUInt64LE(BigInt('0x' + word), i * 8));
  return nameFromBytes(bytes);
}

// bpftrace's %rx of a buf(): every byte as \xNN (0.17 to 0.27 alike).
const ESCAPED_BYTES = /^(?:\\x[0-9a-f]{2})+$/;

/**
 * A name printed as bpftrace's `%rx` of `buf(NAME, N)` prints it
 * (`\x6e\x6f\x64\x65\x00...`) -> { text, cut } (nameFromBytes) or null.
 */
function nameFromEscapedBytes(text) {
  if (!ESCAPED_BYTES.test(text)) return null;
  return nameFromBytes(Buffer.from(text.replace(/\\x/g, ''), 'hex'));
}

module.exports = { nameFromWords, nameFromEscapedBytes, nameFromBytes };
