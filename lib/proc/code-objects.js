'use strict';
// The objects of a memory map that hold code, one entry each (a file is
// mapped several times): the executable first, then libnode (where Debian's
// build keeps N-API and V8) and libuv, then the rest, so the usual cases
// read only what they need. Pure over parsed maps (lib/symbolize.js
// parseMaps).
//   -> [{ path, range (a mapping's bounds, as /proc/PID/map_files names it),
//         dev, inode, start, offset, exec: true }]
function codeObjects(maps, exePath) {
  const seen = new Map();
  for (const m of maps) {
    if (!m.path.startsWith('/') || m.inode === '0') continue;
    const key = `${m.dev}:${m.inode}`;
    // map_files names a mapping by its bounds without /proc/PID/maps' zero padding.
    const range = `${m.start.toString(16)}-${m.end.toString(16)}`;
    if (!seen.has(key)) {
      seen.set(key, { path: m.path.replace(/ \(deleted\)$/, ''), range, dev: m.dev, inode: m.inode, exec: false, start: m.start, offset: m.offset });
    }
    if (m.perms[2] === 'x') seen.get(key).exec = true;
  }
  const rank = (o) => (o.path === exePath ? 0 : /\/libnode\.so/.test(o.path) ? 1 : /\/libuv\.so/.test(o.path) ? 2 : 3);
  // (Ranked once each: a core may name 65,536 objects.)
  return [...seen.values()].filter((o) => o.exec).map((o) => [rank(o), o]).sort((a, b) => a[0] - b[0])
    .map(([, o]) => o);
}

// Where a mapped object of process `pid` can be read from here, best first:
// its mapping in /proc/PID/map_files (the mapped file itself, pinned by the
// kernel, in any mount namespace, even replaced on disk; root only), then
// its path inside the process's own root, as { root, path } (lib/safe-open.js
// openInRoot: never through a link out of that root). `o`: { range, path }.
function objectFiles(pid, o) {
  return [mapFile(pid, o), { root: `/proc/${pid}/root`, path: o.path }];
}

// The kernel's own link to the mapped file: what a tracer is given to attach
// to (lib/tracer/capabilities.js uprobeTarget).
function mapFile(pid, o) {
  return `/proc/${pid}/map_files/${o.range}`;
}

module.exports = { codeObjects, objectFiles, mapFile };
