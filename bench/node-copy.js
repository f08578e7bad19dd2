'use strict';
// A private copy of this node for one benchmarked process, so that no other
// process maps the file a uprobe is set on: bpftrace before 0.20 sets a
// uprobe on the file, and it traps in every process that maps it, whatever
// the program's PID filter (the other servers, the load generator).
const fs = require('fs');
const os = require('os');
const path = require('path');

let dir = null;

/**
 * -> the path of a copy of process.execPath named `name`, in `into` (the
 * caller's directory), or in a directory of its own removed at exit.
 */
function nodeCopy(name, into = null) {
  if (!into && !dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-bench-node-'));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  const file = path.join(into || dir, name);
  fs.copyFileSync(process.execPath, file);
  fs.chmodSync(file, 0o755);
  return file;
}

module.exports = { nodeCopy };
