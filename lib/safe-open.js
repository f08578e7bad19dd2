'use strict';
// Opening files that another user may control (a target's /tmp/perf-PID.map,
// files its memory map names) without letting them stall or steer us: never
// following a symbolic link, never blocking (a FIFO planted in the file's
// place would hang a blocking open, and with it a process we stopped), and
// accepting only a regular file of bounded size, owned by whom it should be.
const fs = require('fs');

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
const FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

/**
 * -> { fd, size, uid } or { refused: 'why' }. Close the fd when done.
 * @param {string} file
 * @param {object} [o]
 * @param {number[]} [o.owners] uids allowed to own it (default: anyone)
 * @param {number} [o.maxBytes] refuse a larger file
 * @param {boolean} [o.followLinks] allow the path's last component to be a link
 *   (for /proc/PID/map_files and /proc/PID/root paths, which are kernel links)
 */
function openRegular(file, { owners, maxBytes = Infinity, followLinks = false } = {}) {
  let fd;
  try {
    fd = fs.openSync(file, followLinks ? FLAGS & ~O_NOFOLLOW : FLAGS);
  } catch (err) {
    return { refused: err.code === 'ELOOP' ? 'it is a symbolic link' : `it cannot be opened (${err.code || err.message})` };
  }
  const refuse = (why) => {
    fs.closeSync(fd);
    return { refused: why };
  };
  const st = fs.fstatSync(fd);
  if (!st.isFile()) return refuse('it is not a regular file');
  if (owners && !owners.includes(st.uid)) return refuse(`it belongs to uid ${st.uid}, not to the process's user`);
  if (st.size > maxBytes) return refuse(`it is larger than ${Math.round(maxBytes / 1048576)} MB`);
  return { fd, size: st.size, uid: st.uid };
}

// ---- files of another root (a process in a container) --------------------
//
// /proc/PID/root/<path> is no safe way into a container's files: the kernel
// resolves an absolute symbolic link met on the way against the reader's
// root, so a container whose /tmp is a link to /root leads a reader of
// /proc/PID/root/tmp/perf-1.map to the host's /root/perf-1.map. openInRoot()
// does what openat2(RESOLVE_IN_ROOT) does (Node has no binding for it): it
// walks the path one name at a time from a descriptor of that root, each
// step opened through /proc/self/fd/DIRFD/NAME (the kernel jumps to the
// directory the descriptor holds and looks up one name there), reads every
// symbolic link on the way as text and follows it itself, an absolute one
// from the container's root, and never lets `..` climb above that root. So
// no link is ever followed by the kernel, and no name is looked up outside
// the container's own tree (its own mounts included: the descriptors carry
// them).

// O_PATH (Linux, every architecture nodetrace runs on): a handle for
// walking, no read access needed, no side effects.
const O_PATH = 0o10000000;
const { O_DIRECTORY } = fs.constants;
// Links followed in one resolution, as the kernel's own limit.
const MAX_LINKS = 40;

function underFd(dirFd, name) {
  return `/proc/self/fd/${dirFd}/${name}`;
}

/**
 * Opens `file`, an absolute path as the process whose root is `root` sees
 * it, inside that root and nowhere else: -> { fd, size, uid } or
 * { refused: 'why', missing } as openRegular() (never blocking; a regular
 * file; `owners`, `maxBytes`); `missing`: there is no such file.
 * @param {string} root the root directory: /proc/PID/root
 * @param {string} file the path inside it
 * @param {object} [o] openRegular()'s options; followLinks: whether the last
 *   name may itself be a link (followed inside the root; default false)
 */
function openInRoot(root, file, { owners, maxBytes = Infinity, followLinks = false } = {}) {
  let rootFd;
  try {
    rootFd = fs.openSync(root, O_PATH | O_DIRECTORY);
  } catch (err) {
    return { refused: `its root cannot be opened (${err.code || err.message})` };
  }
  const stack = [rootFd];   // the directories walked, innermost last
  const close = () => { for (const fd of stack) fs.closeSync(fd); stack.length = 0; };
  try {
    const names = String(file).split('/').filter((n) => n && n !== '.');
    let links = 0;
    while (names.length) {
      const name = names.shift();
      const dir = stack[stack.length - 1];
      if (name === '..') {
        if (stack.length > 1) fs.closeSync(stack.pop());
        continue;
      }
      const here = underFd(dir, name);
      let st;
      try {
        st = fs.lstatSync(here);
      } catch (err) {
        return { refused: `it cannot be opened (${err.code || err.message})`, missing: err.code === 'ENOENT' || err.code === 'ENOTDIR' };
      }
      if (st.isSymbolicLink()) {
        if (!names.length && !followLinks) return { refused: 'it is a symbolic link' };
        if (++links > MAX_LINKS) return { refused: 'too many symbolic links on its path' };
        let target;
        try { target = fs.readlinkSync(here); } catch (err) { return { refused: `a link on its path cannot be read (${err.code || err.message})` }; }
        if (target.startsWith('/')) while (stack.length > 1) fs.closeSync(stack.pop());
        names.unshift(...target.split('/').filter((n) => n && n !== '.'));
        continue;
      }
      if (names.length) {
        // O_NOFOLLOW: a link swapped in since the lstat is refused, not followed.
        try {
          stack.push(fs.openSync(here, O_PATH | O_DIRECTORY | fs.constants.O_NOFOLLOW));
        } catch (err) {
          return { refused: `a directory on its path cannot be opened (${err.code || err.message})` };
        }
        continue;
      }
      return openRegular(here, { owners, maxBytes });
    }
    return { refused: 'it is a directory' };
  } finally {
    close();
  }
}

function readAt(fd, offset, length) {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, done, length - done, offset + done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

module.exports = { openRegular, openInRoot, readAt };
