'use strict';
// Where one process's TLS library is: the mapped object that defines
// OpenSSL's SSL_read, SSL_write, SSL_free and SSL_set_bio (which node calls
// once on each new connection) (node itself for official
// builds, which link OpenSSL statically and export it; libnode or the
// system's libssl.so.3 for distribution builds). d-scripts/http-wire.bt's
// @tls part puts uprobes on them (facts.md, "HTTP on the wire").
const fs = require('fs');
const { findElfSymbols, parseMaps } = require('../symbolize');
const { codeObjects, objectFiles, mapFile } = require('../proc/code-objects');
const { readProcText } = require('../proc/read-bounded');

const TLS_FUNCTIONS = Object.freeze(['SSL_read', 'SSL_write', 'SSL_free', 'SSL_set_bio']);

/**
 * Pure over its inputs (the map, a symbol finder: findElfSymbols' contract).
 * -> { object, file, addresses } (file: the path the tracer attaches to,
 *    through map_files; addresses: name -> each function's start in it, its
 *    symbol's value, or null where one is not known), or { why } when no
 *    mapped object defines all four.
 */
function locateTls({ pid, maps, exePath, findSymbols }) {
  const objects = codeObjects(maps, exePath);
  for (const o of objects) {
    for (const file of objectFiles(pid, o)) {
      const r = findSymbols(file, TLS_FUNCTIONS);
      if (!r) continue;
      if (!TLS_FUNCTIONS.every((n) => r.found.has(n))) break;
      return { object: o.path, file: mapFile(pid, o), addresses: addressesOf(r) };
    }
  }
  return { why: `none of the ${objects.length} objects it maps with code defines ${TLS_FUNCTIONS.join(', ')}` };
}

// Each function's start in the file, for probes by address (what
// lib/tracer/template.js uprobesAtAddresses takes); null where one has no
// value, when the probes go by name.
function addressesOf(table) {
  const values = TLS_FUNCTIONS.map((n) => [n, table.found.get(n).value]);
  return values.every(([, v]) => v > 0) ? new Map(values) : null;
}

function findTlsObject(pid) {
  let maps;
  let exePath = '';
  try {
    maps = parseMaps(readProcText(`/proc/${pid}/maps`, { throws: true }));
  } catch (err) {
    return { why: `cannot read /proc/${pid}/maps (${err.code || err.message})` };
  }
  try { exePath = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { /* gone */ }
  return locateTls({ pid, maps, exePath,
    findSymbols: (file, names) => findElfSymbols(file, names, { followLinks: true }) });
}

module.exports = { TLS_FUNCTIONS, locateTls, findTlsObject };
