'use strict';
// `-c COMMAND` (latency, profile): the command the tracer starts, and how to
// find it and its process.
const fs = require('fs');
const path = require('path');
const { UsageError } = require('../errors');
const { findOnPath } = require('./detect');
const { readProcText } = require('../proc/read-bounded');

// The command's words; the first resolved to a path: bpftrace refuses a bare
// name that more than one PATH directory holds, and its probes name a binary.
function resolveCommand(command) {
  const [argv0, ...rest] = command.trim().split(/\s+/);
  const file = argv0.includes('/') ? path.resolve(argv0) : findOnPath(argv0);
  if (!file) throw new UsageError(`cannot find "${argv0}" on the PATH for -c.`);
  return { binary: file, command: [file, ...rest].join(' ') };
}

// The tracer forks the command: its only child (forked by whichever of its
// threads, so look at them all).
function childPidOf(tracerPid) {
  try {
    for (const task of fs.readdirSync(`/proc/${tracerPid}/task`)) {
      const kids = (readProcText(`/proc/${tracerPid}/task/${task}/children`) || '').trim();
      if (kids) return Number(kids.split(/\s+/)[0]);
    }
  } catch { /* tracer gone */ }
  return null;
}

// The binary a resolved command runs (resolveCommand's first word).
const commandBinary = (command) => (command ? command.trim().split(/\s+/)[0] : null);

function statOrNull(file) {
  try { return fs.statSync(file); } catch { return null; }
}

// Whether process `pid` runs `binary` (`file`: its stat): its executable is
// that file, or, for a script, the kernel put the script's path among the
// interpreter's first words (`node /app/server.js`).
function runsBinary(pid, binary, file) {
  const exe = file && statOrNull(`/proc/${pid}/exe`);
  if (exe && exe.dev === file.dev && exe.ino === file.ino) return true;
  const words = (readProcText(`/proc/${pid}/cmdline`) || '').split('\0').slice(0, 3);
  return words.includes(binary);
}

/**
 * Finds a -c command's process (`command`: resolveCommand's string): the
 * result, given the tracer's PID, is the tracer's child once it runs the
 * command, or null. bpftrace -c forks the command and lets it exec only
 * once the probes are attached: before that the child is a copy of the
 * tracer. And a tracer started through a shell script (the test tiers'
 * wrapper, a user's) first has other children: `dirname`, `readlink`, taken
 * for the command when any child running another program was. The binary
 * is stat'ed once, here: each look then reads only the child's.
 */
function commandFinder(command) {
  const binary = commandBinary(command);
  const file = binary ? statOrNull(binary) : null;
  return (tracerPid) => {
    const pid = binary ? childPidOf(tracerPid) : null;
    return pid && runsBinary(pid, binary, file) ? pid : null;
  };
}

module.exports = { resolveCommand, commandFinder };
