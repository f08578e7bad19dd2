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

module.exports = { openRegular, readAt };
