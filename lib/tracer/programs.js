'use strict';
// The tracer programs live in d-scripts/ (users run the same files by hand);
// this module finds them and builds the exact argv that runs one, with every
// value we add validated by the caller and passed as an argument, never
// pasted into program text.
const fs = require('fs');
const path = require('path');

const SCRIPT_DIR = path.join(__dirname, '..', '..', 'd-scripts');
const EXTENSION = { dtrace: '.d', bpftrace: '.bt' };

function scriptPath(name, tracerName) {
  return path.join(SCRIPT_DIR, name + EXTENSION[tracerName]);
}

function readScript(name, tracerName) {
  return fs.readFileSync(scriptPath(name, tracerName), 'utf8');
}

/**
 * argv for running d-scripts/<name> under the tracer.
 * @param {object} tracer from detect.js ({name, path})
 * @param {object} o { script, pid, command, macros: string[] ($1.. for dtrace, positional for bpftrace),
 *                    destructive: bool, outputFile, extra: string[] }
 */
function tracerArgs(tracer, o) {
  const args = [];
  if (tracer.name === 'dtrace') {
    if (o.destructive) args.push('-w');
    if (o.outputFile) args.push('-o', o.outputFile);
    args.push(...(o.extra || []));
    args.push('-s', scriptPath(o.script, 'dtrace'));
    if (o.pid) args.push('-p', String(o.pid));
    if (o.command) args.push('-c', o.command);
    args.push(...(o.macros || []).map(String));
  } else {
    if (o.destructive) args.push('--unsafe');
    if (o.outputFile) args.push('-o', o.outputFile);
    args.push(...(o.extra || []));
    if (o.pid) args.push('-p', String(o.pid));
    if (o.command) args.push('-c', o.command);
    args.push(scriptPath(o.script, 'bpftrace'));
    args.push(...(o.macros || []).map(String));
  }
  return args;
}

// For display only (--dry-run): quote like a POSIX shell would need, so a
// user can paste it. Nothing we run goes through a shell.
function displayCommand(file, args) {
  return [file, ...args].map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

module.exports = { SCRIPT_DIR, scriptPath, readScript, tracerArgs, displayCommand };
