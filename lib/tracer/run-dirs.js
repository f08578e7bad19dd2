'use strict';
// The private directory a run keeps its program files in, and the sweep of
// those a killed run left behind.
//
// A run removes its directory when it ends, but SIGKILL ends it with no
// chance to: the directory stays in /tmp for good (15 were left by killed
// test runs in one day, 2026-11-30). Each directory's name carries the PID
// of the nodetrace that made it, so a later run can tell a dead run's
// directory from a live one's and remove it.
//
// /tmp is everyone's: an entry is removed only when it is a directory (not
// a link), owned by this user, named as this module names them, and its PID
// is not running. The sweep reads a bounded number of entries, so a /tmp
// that another user filled costs a bounded time.

const fs = require('fs');
const os = require('os');
const path = require('path');

const PREFIX = 'nodetrace-';
// nodetrace-<script>-p<PID>-<mkdtemp's six characters>
const RUN_DIR = /^nodetrace-[A-Za-z0-9_.-]{1,64}-p([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/;
// Entries of the temporary directory looked at per sweep.
const SWEEP_ENTRIES_MAX = 10000;

/** Makes the run's private directory (mode 0700), its name saying whose it is. */
function makeRunDir(script, { tmp = os.tmpdir(), pid = process.pid } = {}) {
  return fs.mkdtempSync(path.join(tmp, `${PREFIX}${script}-p${pid}-`));
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code !== 'ESRCH';
  }
}

/**
 * The names in `tmp` of run directories whose nodetrace is gone; pure but
 * for the checks it is given.
 */
function abandonedRunDirs(names, { statOf, running, uid }) {
  const found = [];
  for (const name of names) {
    const m = RUN_DIR.exec(name);
    if (!m || running(Number(m[1]))) continue;
    const st = statOf(name);
    if (st && st.isDirectory() && st.uid === uid) found.push(name);
  }
  return found;
}

/** Removes the run directories killed runs left in `tmp`; never throws. */
function sweepAbandonedRunDirs({ tmp = os.tmpdir(), uid = process.geteuid(), running = isRunning } = {}) {
  const names = [];
  let dir;
  try {
    dir = fs.opendirSync(tmp);
    for (let entry = dir.readSync(); entry && names.length < SWEEP_ENTRIES_MAX; entry = dir.readSync()) {
      if (entry.name.startsWith(PREFIX)) names.push(entry.name);
    }
  } catch {
    return [];
  } finally {
    if (dir) try { dir.closeSync(); } catch { /* closed */ }
  }
  const statOf = (name) => { try { return fs.lstatSync(path.join(tmp, name)); } catch { return null; } };
  const removed = [];
  for (const name of abandonedRunDirs(names, { statOf, running, uid })) {
    // rmSync removes links as links: it never follows one out of the directory.
    try { fs.rmSync(path.join(tmp, name), { recursive: true, force: true }); removed.push(name); } catch { /* raced */ }
  }
  return removed;
}

module.exports = { makeRunDir, sweepAbandonedRunDirs, abandonedRunDirs, RUN_DIR };
