'use strict';
// Facts about target processes, read from /proc (Linux) or ps (elsewhere),
// in one place. No shell is involved anywhere: names and patterns given by
// users are only ever compared as strings.
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { UserError, UsageError, EXIT } = require('../errors');
const stat = require('./stat');
const { parseNsPids } = require('./container');
const { readProcText } = require('./read-bounded');

// Linux's PID_MAX_LIMIT.
const PID_MAX = 4194304;

function parsePid(text, flag = '-p') {
  const s = String(text).trim();
  if (!/^[1-9][0-9]{0,9}$/.test(s) || Number(s) > PID_MAX) {
    throw new UsageError(`${flag} expects a process ID (a whole number from 1 to ${PID_MAX}), not "${text}".`,
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

// /proc/PID/NAME (NAME may be task/TID/status), read to its bound in
// lib/limits.js (PROC_FILE_BYTES); null when unreadable.
function readProcFile(pid, name) {
  return readProcText(`/proc/${pid}/${name}`);
}

function readLink(file) {
  try {
    return fs.readlinkSync(file);
  } catch {
    return null;
  }
}

// The command line, as the process's argv.
function commandLine(pid) {
  const raw = readProcFile(pid, 'cmdline');
  if (raw !== null) return raw.split('\0').filter(Boolean);
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/);
  } catch {
    return [];
  }
}

function executableName(pid) {
  const exe = readLink(`/proc/${pid}/exe`);
  if (exe !== null) return exe.replace(/ \(deleted\)$/, '');
  return commandLine(pid)[0] || '';
}

function processName(pid) {
  const comm = readProcFile(pid, 'comm');
  return comm === null ? '' : comm.trim();
}

const NODE_FILE = /(^|\/)(node|nodejs)[^/]*$/;

// Pure: does a process with this executable, these mapped files and this
// argv[0] look like Node? An executable named node*, a mapped libnode.so
// (distribution builds, embedders), or argv[0] saying node (nvm, electron).
function isNodeImage({ exe = '', mapPaths = [], argv0 = '' }) {
  return NODE_FILE.test(exe.replace(/ \(deleted\)$/, ''))
    || mapPaths.some((p) => /\/libnode\.so/.test(p))
    || NODE_FILE.test(argv0);
}

function looksLikeNode(pid) {
  const maps = readProcFile(pid, 'maps') || '';
  return isNodeImage({
    exe: executableName(pid),
    mapPaths: maps.includes('libnode.so') ? ['/libnode.so'] : [],
    argv0: commandLine(pid)[0] || '',
  });
}

// A PID given by a user: a running process, not a thread of one (a thread ID
// opens in /proc too, and tracers take it for a process).
function requireProcess(pid, { hint = 'Find Node processes with: pgrep -l node' } = {}) {
  const tgid = stat.tgidOf(pid);
  if (tgid === null || !isRunning(pid)) {
    throw new UserError(`no process with PID ${pid} is running.`, { hint, exitCode: EXIT.NOT_FOUND });
  }
  if (tgid !== pid) {
    throw new UsageError(`${pid} is a thread of process ${tgid}, not a process.`, `Trace the process: -p ${tgid}`);
  }
  if (stat.procState(pid) === 'Z') {
    throw new UserError(`PID ${pid} has exited (a zombie waiting for its parent): there is nothing left to trace.`,
      { exitCode: EXIT.NOT_FOUND });
  }
}

// `canForce`: the command has --force (and the hint may say so).
function requireNodeProcess(pid, { canForce = false } = {}) {
  requireProcess(pid);
  if (!looksLikeNode(pid)) {
    const name = executableName(pid) || 'unknown';
    throw new UserError(`PID ${pid} (${name}) is not a Node process.`,
      { hint: `Point nodetrace at a node process (pgrep -l node)${canForce ? ', or pass --force if it embeds Node under another name' : ''}.` });
  }
}

function numericEntries(dir) {
  try {
    return fs.readdirSync(dir).filter((e) => /^[0-9]+$/.test(e)).map(Number);
  } catch {
    return [];
  }
}

function allPids() {
  return numericEntries('/proc');
}

// Another nodetrace run by root: a Node process whose script is a file
// named nodetrace. Its command line holds the operator's pattern
// (`nodetrace loop my-service` beside `nodetrace latency my-service` made
// the second refuse "2 Node processes have my-service"). Only root's: the
// real user ID from status, which another user cannot change, so that no
// one hides a process of theirs from a name by calling it nodetrace.
function isNodetraceRun(pid, argv = commandLine(pid)) {
  return argv.length > 1 && path.basename(argv[1]) === 'nodetrace' && stat.uidOf(pid) === 0;
}

// PIDs of running processes whose command line contains `pattern` as a plain
// substring (never a regex or glob handed to another program), other
// nodetrace runs left out.
function findProcessesByCommandLine(pattern, { excludePids = [process.pid] } = {}) {
  const found = [];
  for (const pid of allPids()) {
    if (excludePids.includes(pid)) continue;
    const argv = commandLine(pid);
    if (argv.length && argv.join(' ').includes(pattern) && !isNodetraceRun(pid, argv)) found.push(pid);
  }
  return found;
}

// Our own ancestors (sudo, the shell), which carry our arguments in their
// command lines.
function ancestors(pid = process.pid) {
  const out = new Set();
  let p = pid;
  for (let i = 0; i < 64 && p > 1; i++) {
    const st = stat.readStat(p);
    if (!st || !st.ppid) break;
    out.add(st.ppid);
    p = st.ppid;
  }
  return out;
}

// The PIDs process `pid` has in each PID namespace it is in, outermost
// first (the NSpid line of /proc/PID/status): what a process in a container
// knows itself as. [] when it is gone.
function namespacePids(pid) {
  return parseNsPids(readProcFile(pid, 'status'));
}

// Whether one of the process's descriptors is what `is(link)` says of its
// /proc/PID/fd link text; null where they cannot be read. Reads at most
// `limit` of them: a process with more is not read to the end (its fd
// table is its own to make large).
function holdsDescriptor(pid, is, { limit = 4096 } = {}) {
  let fds;
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  return fds.slice(0, limit).some((fd) => {
    const link = readLink(`/proc/${pid}/fd/${fd}`);
    return link !== null && is(link);
  });
}

// Whether the process holds an io_uring (libuv >= 1.45 runs some fs requests
// there, off the thread pool, where UV_USE_IO_URING=1 or its version's
// default says so).
function usesIoUring(pid, o) {
  return holdsDescriptor(pid, (link) => link === 'anon_inode:[io_uring]', o);
}

// Whether the process holds a socket (of any family).
function holdsSocket(pid, o) {
  return holdsDescriptor(pid, (link) => link.startsWith('socket:['), o);
}

// The process's core size limit as /proc/PID/limits prints it ('0',
// 'unlimited', a number of bytes), or null.
function coreLimit(pid) {
  const m = /^Max core file size\s+(\S+)/m.exec(readProcFile(pid, 'limits') || '');
  return m ? m[1] : null;
}

module.exports = {
  namespacePids, usesIoUring, holdsSocket,
  PID_MAX, parsePid, isRunning, readProcFile, readLink, commandLine, executableName, processName,
  isNodeImage, looksLikeNode, requireProcess, requireNodeProcess, allPids, numericEntries,
  findProcessesByCommandLine, isNodetraceRun, ancestors, coreLimit, stat,
};
