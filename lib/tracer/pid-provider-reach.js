'use strict';
// Whether DTrace for Linux's pid provider reaches one mapped object of a
// process. It finds a function by the object's path in /proc/PID/maps and
// opens that path in its own mount namespace (it cannot be given
// /proc/PID/map_files/RANGE, as bpftrace is): for a process in another
// mount namespace (a container, Debian's node in its own tree here) the
// path leads to no file ("Failed to enable probe": libnode.so.108 of the
// debian18 build, measured 2026-11-27) or to another file, the host's,
// whose probes the process never fires. It reaches the object only where
// the path, as nodetrace resolves it, is the very file mapped: the same
// device and inode as the kernel's own link to it. Only metadata is read.
const fs = require('fs');
const { otherMountNamespace } = require('../proc/container');

/**
 * @param {number} pid
 * @param {{ object: string, file: string }} o  the object's path in the
 *        process and its /proc/PID/map_files/RANGE link
 * -> null when the pid provider reaches it, else why not (one clause).
 */
function pidProviderMisses(pid, { object, file }) {
  if (otherMountNamespace(pid) === false) return null;
  const id = (p) => { try { const s = fs.statSync(p); return `${s.dev}:${s.ino}`; } catch { return null; } };
  const mapped = id(file);
  if (mapped && mapped === id(object)) return null;
  return `it runs in another mount namespace, where ${object} is not the host's file of that name, `
    + 'and DTrace for Linux\'s pid provider opens it by that name';
}

module.exports = { pidProviderMisses };
