'use strict';
// Which tracer this host has, and which version. A `dtrace` on the PATH is
// not always DTrace: on many Linux hosts it is systemtap's header/object
// generator (systemtap-sdt-dev), which only knows -G and -h.
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

function findOnPath(name, envPath = process.env.PATH || '') {
  // sudo's secure_path and some shells leave out the sbin directories, where
  // dtrace(1M) lives on illumos and macOS.
  const dirs = envPath.split(path.delimiter).concat(['/usr/sbin', '/sbin']);
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch (err) { /* not here */ }
  }
  return null;
}

function runForOutput(file, args) {
  try {
    // 30 s: a bpftrace from a tier root loads its LLVM libraries first, which
    // took over 10 s on this host under a load of 30 (0.1 s idle).
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30000 });
  } catch (err) {
    // dtrace -V prints to stdout and exits 0; systemtap's prints usage and fails.
    return String(err.stdout || '') + String(err.stderr || '');
  }
}

// Pure: what `dtrace -V` printed says about it.
function parseDtraceVersion(output) {
  const m = /Sun D ([0-9][0-9.]*)/.exec(output);
  return m ? m[1] : null;
}

// Pure: `bpftrace --version` prints "bpftrace v0.17.0" (or v0.21.2-foo).
function parseBpftraceVersion(output) {
  const m = /bpftrace v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?/.exec(output);
  if (!m) return null;
  return { text: m[0].replace(/^bpftrace v?/, ''), major: +m[1], minor: +m[2], patch: +(m[3] || 0) };
}

function detectDtrace() {
  const file = findOnPath('dtrace');
  if (!file) return { name: 'dtrace', available: false, reason: 'not installed' };
  const version = parseDtraceVersion(runForOutput(file, ['-V']));
  if (!version) {
    return { name: 'dtrace', available: false, path: file,
      reason: `${file} is not DTrace (systemtap's dtrace(1) stub for -G/-h, probably)` };
  }
  return { name: 'dtrace', available: true, path: file, version };
}

// NODETRACE_BPFTRACE names the bpftrace to run instead of the one on the
// PATH: another version (scripts/bpftrace-tier.sh makes Debian 13's and
// Debian unstable's runnable here) or a build of one's own. Everything that
// runs bpftrace takes its path from here (plans carry it, dry runs print it).
const BPFTRACE_ENV = 'NODETRACE_BPFTRACE';

function chosenBpftrace(env = process.env) {
  const value = env[BPFTRACE_ENV];
  if (value === undefined || value === '') return null;
  const file = path.resolve(value);
  try {
    fs.accessSync(file, fs.constants.X_OK);
    if (fs.statSync(file).isFile()) return { file };
  } catch (err) { /* said below */ }
  return { file: null, reason: `${BPFTRACE_ENV}=${value} is not an executable file` };
}

function detectBpftrace(env = process.env) {
  const chosen = chosenBpftrace(env);
  if (chosen && !chosen.file) return { name: 'bpftrace', available: false, reason: chosen.reason };
  const file = chosen ? chosen.file : findOnPath('bpftrace');
  if (!file) return { name: 'bpftrace', available: false, reason: 'not installed' };
  const version = parseBpftraceVersion(runForOutput(file, ['--version']));
  if (!version) return { name: 'bpftrace', available: false, path: file, reason: `${file} --version printed no version` };
  return { name: 'bpftrace', available: true, path: file, version: version.text, versionParts: version,
    chosenBy: chosen ? BPFTRACE_ENV : null };
}

const INSTALL_HINT = process.platform === 'linux'
  ? 'Install bpftrace (Debian/Ubuntu: sudo apt-get install -y bpftrace; Fedora/RHEL: sudo dnf install bpftrace), or DTrace for Linux.'
  : 'DTrace ships with illumos, macOS and FreeBSD; make sure dtrace(1M) is on the PATH.';

// Picks the backend: the one asked for, else dtrace first, else bpftrace;
// bpftrace first when NODETRACE_BPFTRACE names one (that is asking for it).
function chooseTracer(requested, detectors = { dtrace: detectDtrace, bpftrace: detectBpftrace }, env = process.env) {
  const order = requested ? [requested] : env[BPFTRACE_ENV] ? ['bpftrace', 'dtrace'] : ['dtrace', 'bpftrace'];
  const seen = [];
  for (const name of order) {
    const found = detectors[name]();
    if (found.available) return { tracer: found, seen };
    seen.push(found);
  }
  return { tracer: null, seen };
}

module.exports = {
  findOnPath, parseDtraceVersion, parseBpftraceVersion, detectDtrace, detectBpftrace,
  chooseTracer, INSTALL_HINT, BPFTRACE_ENV,
};

// The tracer to run, or a UserError saying how to get one.
function requireTracer(requested) {
  const { UserError } = require('../errors');
  const { tracer, seen } = chooseTracer(requested);
  if (tracer) return tracer;
  const why = seen.map((t) => `${t.name}: ${t.reason}`).join('; ');
  throw new UserError(requested ? `${requested} is not usable here (${why}).` : `no tracer found (${why}).`,
    { hint: INSTALL_HINT });
}

module.exports.requireTracer = requireTracer;
