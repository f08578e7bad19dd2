'use strict';
// Facts about target processes, read from /proc (Linux) or ps (elsewhere).
// No shell is involved anywhere: names and patterns given by users are only
// ever compared as strings.
const fs = require('fs');
const { execFileSync } = require('child_process');
const { UserError, UsageError, EXIT } = require('./errors');

function parsePid(text, flag = '-p') {
  const s = String(text).trim();
  if (!/^[1-9][0-9]{0,9}$/.test(s) || Number(s) > 4194304) {
    throw new UsageError(`${flag} expects a process ID (a positive integer), not "${text}".`,
      'Find one with: pgrep -l node');
  }
  return Number(s);
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function readProcFile(pid, name) {
  try {
    return fs.readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch (err) {
    return null;
  }
}

// The command line, as the process's argv.
function commandLine(pid) {
  const raw = readProcFile(pid, 'cmdline');
  if (raw !== null) return raw.split('\0').filter(Boolean);
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/);
  } catch (err) {
    return [];
  }
}

function executableName(pid) {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch (err) {
    return commandLine(pid)[0] || '';
  }
}

// A Node process maps a binary that exports Node's own symbols; looking for
// libuv's uv_queue_work in its maps would need ELF parsing, so we look at what
// it is: an executable named node*, or any executable whose argv[0] or
// mapped files say node (electron and nvm builds included), or `--node` forced.
function looksLikeNode(pid) {
  const exe = executableName(pid);
  if (/(^|\/)(node|nodejs)[^/]*$/.test(exe)) return true;
  const maps = readProcFile(pid, 'maps');
  if (maps !== null && /\/libnode\.so/.test(maps)) return true;
  const argv0 = commandLine(pid)[0] || '';
  return /(^|\/)(node|nodejs)[^/]*$/.test(argv0);
}

function requireNodeProcess(pid) {
  if (!isRunning(pid)) {
    throw new UserError(`no process with PID ${pid} is running.`,
      { hint: 'Find Node processes with: pgrep -l node', exitCode: EXIT.NOT_FOUND });
  }
  if (!looksLikeNode(pid)) {
    const name = executableName(pid) || 'unknown';
    throw new UserError(`PID ${pid} (${name}) is not a Node process.`,
      { hint: 'Point nodetrace at a node process (pgrep -l node), or pass --force if it embeds Node under another name.' });
  }
}

// PIDs of running processes whose command line contains `pattern` as a plain
// substring (never a regex or glob handed to another program).
function findProcessesByCommandLine(pattern, { excludePids = [process.pid] } = {}) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (excludePids.includes(pid)) continue;
    const argv = commandLine(pid);
    if (argv.length && argv.join(' ').includes(pattern)) found.push(pid);
  }
  return found;
}

function processName(pid) {
  const comm = readProcFile(pid, 'comm');
  return comm === null ? '' : comm.trim();
}

module.exports = {
  parsePid, isRunning, commandLine, executableName, looksLikeNode,
  requireNodeProcess, findProcessesByCommandLine, processName,
};
