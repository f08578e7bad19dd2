'use strict';
// Source maps made at run time, as large and as dense as a test needs:
// what Node's module.SourceMap keeps most of per byte (lib/source-maps.js
// parsedBytes, docs/security.md). Kinds:
//   dense  200 four-field segments a line, small deltas (as esbuild writes)
//   pairs  one-field segments (`A,A,...`): the most entries per byte
//   big    four-field segments whose generated column and original line and
//          column leave V8's small integers: the most bytes per entry
// Every segment but the pairs maps to sources[0] ('src/app.ts' unless given).
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Pure: an integer as a source map's base64 VLQ. */
function vlq(n) {
  let v = n < 0 ? ((-n) * 2) + 1 : n * 2;
  let out = '';
  do {
    let digit = v % 32;
    v = Math.floor(v / 32);
    if (v) digit += 32;
    out += B64[digit];
  } while (v);
  return out;
}

function line(kind) {
  if (kind === 'pairs') return 'A' + ',A'.repeat(999);
  const segments = [];
  if (kind === 'big') {
    const far = vlq(2 ** 30 - 1);
    segments.push(far + 'A' + far + far, far + 'A' + far + far);
    for (let k = 0; k < 198; k++) segments.push('AAAA');
  } else {
    for (let k = 0; k < 200; k++) segments.push(vlq(3 + (k % 7)) + 'A' + vlq(k % 3 ? 0 : 1) + vlq((k % 5) - 2));
  }
  return segments.join(',');
}

/**
 * A map's text of at least `bytes` of mappings, of `kind` -> JSON text.
 */
function denseSourceMap(bytes, { kind = 'dense', sources = ['src/app.ts'] } = {}) {
  const lines = [];
  let n = 0;
  while (n < bytes) {
    const l = line(kind);
    lines.push(l);
    n += l.length + 1;
  }
  return JSON.stringify({ version: 3, sources, names: [], mappings: lines.join(';') });
}

module.exports = { denseSourceMap, vlq };
