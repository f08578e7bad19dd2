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

// bpftrace -c forks the command and lets it exec only once the probes are
// attached: it has started when the tracer's child runs another program.
function commandStarted(tracerPid) {
  const pid = childPidOf(tracerPid);
  if (!pid) return false;
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`) !== fs.readlinkSync(`/proc/${tracerPid}/exe`);
  } catch {
    return false;
  }
}

module.exports = { resolveCommand, childPidOf, commandStarted };
