'use strict';
// What gdb needs to open the core of a process that ran in a container: its
// executable and the shared libraries it mapped, which live at paths the
// host does not have (or has other files at). At the hit, while the process
// is stopped, every object it maps with code is opened through
// /proc/PID/map_files (the mapped file itself, pinned by the kernel: the
// process may exit, and its container go, before the copy is done); after
// the core is saved, they are copied beside it, at their paths inside the
// container, with the names the process's loader gave them (its link map:
// lib/proc/link-map.js) as links to the copies, so that
//   gdb -iex 'set sysroot CORE.root' CORE.root/usr/local/bin/node CORE
// works as printed, also once the container is gone. lib/v8/core.js reads
// the same directory as a core's `root`.
const fs = require('fs');
const path = require('path');
const { openRegular } = require('../safe-open');
const { codeObjects, mapFile } = require('../proc/code-objects');
const { freeBytes, formatBytes } = require('./core');
const { loaderNames } = require('../proc/link-map');

// A mapped object larger than this is not copied (node is about 110 MB).
const MAX_OBJECT_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * At the hit (the process stopped): opens the code objects of process `pid`
 * from its parsed maps, and reads the names its loader gave them ->
 * { objects: [{ path (inside the process), fd, size }], names: [{ name, path }] }
 * (close with closeObjects). Names that are not plain paths are skipped.
 */
function openMappedObjects(pid, maps, exePath) {
  const objects = [];
  for (const o of codeObjects(maps, exePath)) {
    if (!safeInsidePath(o.path)) continue;
    const opened = openRegular(mapFile(pid, o), { followLinks: true, maxBytes: MAX_OBJECT_BYTES });
    if (!opened.refused) objects.push({ path: o.path, fd: opened.fd, size: opened.size });
  }
  const exe = objects.find((o) => o.path === exePath);
  const names = exe ? loaderNames(pid, maps, exe).filter((n) => n.name !== n.path && safeInsidePath(n.name)) : [];
  return { objects, names };
}

function closeObjects(captured) {
  for (const o of (captured && captured.objects) || []) {
    if (o.fd === undefined) continue;
    try { fs.closeSync(o.fd); } catch { /* already */ }
    delete o.fd;
  }
}

/** Pure: an absolute path with no empty, "." or ".." name (as /proc/PID/maps gives them). */
function safeInsidePath(p) {
  if (typeof p !== 'string' || !p.startsWith('/') || p.includes('\0')) return false;
  return p.slice(1).split('/').every((n) => n && n !== '.' && n !== '..');
}

/**
 * Copies the opened objects under `${coreFile}.root`, at their paths inside
 * the process, and links the loader's names for them to the copies (gdb
 * opens a core's libraries by those names): -> { root, bytes } or
 * { error: 'why' }. The directory is made private (0700) and filled before
 * it takes its name; every link is relative, to a copy inside it.
 */
function saveSysroot(captured, coreFile) {
  const { objects, names } = captured;
  const need = objects.reduce((n, o) => n + o.size, 0);
  const dir = path.dirname(coreFile);
  const root = `${coreFile}.root`;
  if (!objects.length) return { error: 'none of its files could be opened' };
  try {
    const free = freeBytes(dir);
    if (free < need) return { error: `${dir} has ${formatBytes(free)} free, and its files take ${formatBytes(need)}` };
  } catch (err) {
    return { error: `cannot check the room in ${dir}: ${err.code || err.message}` };
  }
  let tmp;
  try {
    tmp = fs.mkdtempSync(path.join(dir, '.nodetrace-ebadf-root-'));
    fs.chmodSync(tmp, 0o700);
    for (const o of objects) {
      const dest = path.join(tmp, o.path);
      fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o755 });
      // Our own descriptor of the pinned file: nothing is looked up by name.
      fs.copyFileSync(`/proc/self/fd/${o.fd}`, dest, fs.constants.COPYFILE_EXCL);
      fs.chmodSync(dest, 0o600);
      // Its own times: gdb warns of an executable newer than the core.
      const st = fs.fstatSync(o.fd);
      fs.utimesSync(dest, st.atime, st.mtime);
    }
    const saved = new Set(objects.map((o) => o.path));
    for (const n of names) {
      if (!saved.has(n.path)) continue;
      const link = path.join(tmp, n.name);
      try {
        fs.mkdirSync(path.dirname(link), { recursive: true, mode: 0o755 });
        fs.symlinkSync(path.relative(path.dirname(link), path.join(tmp, n.path)), link);
      } catch { /* a name that clashes with another: gdb falls back to the path */ }
    }
    fs.renameSync(tmp, root);
    return { root, bytes: need };
  } catch (err) {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    return { error: `could not copy its files beside the core: ${err.code || err.message}` };
  }
}

module.exports = { openMappedObjects, closeObjects, saveSysroot, safeInsidePath };
