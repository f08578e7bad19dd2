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
 * -> { object, file } (file: the path the tracer attaches to, through
 *    map_files), or { why } when no mapped object defines all three.
 */
function locateTls({ pid, maps, exePath, findSymbols }) {
  const objects = codeObjects(maps, exePath);
  for (const o of objects) {
    for (const file of objectFiles(pid, o)) {
      const r = findSymbols(file, TLS_FUNCTIONS);
      if (!r) continue;
      if (TLS_FUNCTIONS.every((n) => r.found.has(n))) return { object: o.path, file: mapFile(pid, o) };
      break;
    }
  }
  return { why: `none of the ${objects.length} objects it maps with code defines ${TLS_FUNCTIONS.join(', ')}` };
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
