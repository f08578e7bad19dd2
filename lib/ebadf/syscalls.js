'use strict';
// System call names for --syscall, checked against what this kernel can
// trace: on Linux a name is valid when tracefs has the tracepoint
// syscalls:sys_exit_NAME. tracefs is readable by root only, so a --dry-run
// as another user can only check the spelling, and says so.
const fs = require('fs');
const path = require('path');
const { UsageError } = require('../errors');
const { closest } = require('./errno');

const TRACEFS_DIRS = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];
const NAME = /^[a-z_][a-z0-9_]{0,63}$/;

function syscallEventsDir(dirs = TRACEFS_DIRS) {
  for (const dir of dirs) {
    const events = path.join(dir, 'events', 'syscalls');
    try {
      fs.readdirSync(events);
      return events;
    } catch { /* not mounted, or not readable by us */ }
  }
  return null;
}

function howToList(tracerName) {
  return tracerName === 'dtrace'
    ? 'List them with: sudo dtrace -l -P syscall -n \'syscall:::return\''
    : 'List them with: sudo bpftrace -l \'tracepoint:syscalls:sys_exit_*\'';
}

/**
 * "close,dup2" -> { names: ['close', 'dup2'], checked: bool }.
 * Names are checked against the kernel's tracepoints when `eventsDir` is
 * readable (bpftrace on Linux); DTrace checks its own probe names when the
 * program loads.
 */
function parseSyscallList(text, { tracerName = 'bpftrace', eventsDir, flag = '--syscall' } = {}) {
  const items = String(text).split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`${flag} expects system call names, e.g. ${flag} close,dup2.`, howToList(tracerName));
  const names = [];
  for (const item of items) {
    if (!NAME.test(item)) {
      const shown = /^[\x20-\x7e]{1,64}$/.test(item) ? `"${item}"` : 'that name';
      throw new UsageError(`${flag}: ${shown} is not a system call name (lower-case letters, digits and _).`, howToList(tracerName));
    }
    if (!names.includes(item)) names.push(item);
  }
  const dir = tracerName === 'bpftrace' ? (eventsDir === undefined ? syscallEventsDir() : eventsDir) : null;
  if (!dir) return { names, checked: false };
  const known = fs.readdirSync(dir).filter((e) => e.startsWith('sys_exit_')).map((e) => e.slice('sys_exit_'.length));
  for (const name of names) {
    if (!known.includes(name)) {
      const guess = closest(name, known);
      throw new UsageError(`${flag}: unknown system call "${name}": this kernel has no tracepoint syscalls:sys_exit_${name}`
        + (guess ? ` (did you mean ${guess}?)` : '') + '.', howToList(tracerName));
    }
  }
  return { names, checked: true };
}

module.exports = { parseSyscallList, syscallEventsDir, TRACEFS_DIRS };
