'use strict';
// A /proc file read to at most maxBytes: /proc files say size 0, so the
// bound is the buffer's, never the file's word. null when unreadable.
const fs = require('fs');

function readBounded(file, maxBytes, encoding = 'utf8') {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(maxBytes);
    let n = 0;
    for (let got = 1; got > 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, null);
    return buf.toString(encoding, 0, n);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

module.exports = { readBounded };
