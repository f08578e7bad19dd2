'use strict';
// Which tracer this host has, and which version. A `dtrace` on the PATH is
// not always DTrace: on many Linux hosts it is systemtap's header/object
// generator (systemtap-sdt-dev), which only knows -G and -h.  Real DTraces
// say which they are in `dtrace -V`: illumos, macOS and FreeBSD print
// "dtrace: Sun D 1.x"; Oracle's DTrace for Linux prints "dtrace: Oracle D 2.0".
//
// A tracer binary can be chosen explicitly (one not on the PATH, such as the
// DTrace for Linux the test suite builds into its cache):
//   NODETRACE_DTRACE=/path/to/dtrace   NODETRACE_BPFTRACE=/path/to/bpftrace
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
    } catch { /* not here */ }
  }
  return null;
}

// 30 s: a bpftrace from a tier root loads its LLVM libraries first, which
// took over 10 s on this host under a load of 30 (0.1 s idle).
const VERSION_TIMEOUT_MS = 30000;

// What `file args` printed; `timedOut` when it did not answer in time (a
// loaded host: never to be read as "not a tracer").
function runForOutput(file, args, timeoutMs = VERSION_TIMEOUT_MS) {
  try {
    return { text: execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs }) };
  } catch (err) {
    // dtrace -V prints to stdout and exits 0; systemtap's prints usage and fails.
    return { text: String(err.stdout || '') + String(err.stderr || ''), timedOut: err.code === 'ETIMEDOUT' };
  }
}

function noAnswer(file, args, timeoutMs = VERSION_TIMEOUT_MS) {
  return `${file} ${args.join(' ')} did not answer within ${timeoutMs / 1000} s (a heavily loaded host?); try again`;
}

// Pure: what `dtrace -V` printed says about it: { flavor, version } or null.
//   flavor 'sun':    illumos, macOS, FreeBSD ("Sun D 1.13")
//   flavor 'oracle': DTrace for Linux 2.x ("Oracle D 2.0")
// systemtap's stub prints its usage, which names neither.
function parseDtraceVersion(output) {
  const m = /^dtrace: (Sun|Oracle) D ([0-9][0-9.]*)/m.exec(String(output || ''));
  if (!m) return null;
  const [major, minor] = m[2].split('.').map(Number);
  return { flavor: m[1] === 'Oracle' ? 'oracle' : 'sun', version: m[2], major, minor: minor || 0 };
}

// The binary to use: the one named in `envName` if set (it must exist and be
// executable: a wrong path is reported, never replaced by another tracer),
// else the first on the PATH.
function chosenBinary(name, envName, env = process.env) {
  const explicit = env[envName];
  if (!explicit) return { file: findOnPath(name) };
  try {
    fs.accessSync(explicit, fs.constants.X_OK);
    if (fs.statSync(explicit).isFile()) return { file: explicit, explicit: true };
  } catch { /* reported below */ }
  return { file: null, reason: `${envName}=${explicit} is not an executable file` };
}

// Pure: `bpftrace --version` prints "bpftrace v0.17.0" (or v0.21.2-foo).
function parseBpftraceVersion(output) {
  const m = /bpftrace v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?/.exec(output);
  if (!m) return null;
  return { text: m[0].replace(/^bpftrace v?/, ''), major: +m[1], minor: +m[2], patch: +(m[3] || 0) };
}

const DTRACE_FLAVORS = {
  sun: 'DTrace (illumos/macOS/FreeBSD)',
  oracle: 'DTrace for Linux',
};

function detectDtrace() {
  const { file, reason } = chosenBinary('dtrace', 'NODETRACE_DTRACE');
  if (!file) return { name: 'dtrace', available: false, reason: reason || 'not installed' };
  const out = runForOutput(file, ['-V']);
  const parsed = parseDtraceVersion(out.text);
  if (!parsed && out.timedOut) return { name: 'dtrace', available: false, path: file, reason: noAnswer(file, ['-V']) };
  if (!parsed) {
    return { name: 'dtrace', available: false, path: file,
      reason: `${file} is not DTrace (systemtap's dtrace(1) stub for -G/-h, probably)` };
  }
  return {
    name: 'dtrace', available: true, path: file, version: parsed.version, flavor: parsed.flavor,
    describe: DTRACE_FLAVORS[parsed.flavor],
    versionParts: { major: parsed.major, minor: parsed.minor, patch: 0 },
  };
}

// NODETRACE_BPFTRACE names the bpftrace to run instead of the one on the
// PATH (NODETRACE_DTRACE the same for dtrace): another version
// (scripts/bpftrace-tier.sh makes Debian 13's and Debian unstable's runnable
// here; scripts/build-dtrace.sh builds DTrace for Linux) or a build of one's
// own. Everything that runs a tracer takes its path from here (plans carry
// it, dry runs print it).
const BPFTRACE_ENV = 'NODETRACE_BPFTRACE';

function detectBpftrace(env = process.env, { timeoutMs = VERSION_TIMEOUT_MS } = {}) {
  const { file, reason, explicit } = chosenBinary('bpftrace', BPFTRACE_ENV, env);
  if (!file) return { name: 'bpftrace', available: false, reason: reason || 'not installed' };
  const out = runForOutput(file, ['--version'], timeoutMs);
  const version = parseBpftraceVersion(out.text);
  if (!version) {
    return { name: 'bpftrace', available: false, path: file, reason: out.timedOut ? noAnswer(file, ['--version'], timeoutMs) : `${file} --version printed no version` };
  }
  return { name: 'bpftrace', available: true, path: file, version: version.text, versionParts: version,
    chosenBy: explicit ? BPFTRACE_ENV : null };
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
  findOnPath, chosenBinary, parseDtraceVersion, parseBpftraceVersion, detectDtrace, detectBpftrace,
  chooseTracer, INSTALL_HINT, BPFTRACE_ENV,
};

// The tracer to run, or a UserError saying how to get one.
function requireTracer(requested) {
  const { UserError } = require('../errors');
  const { tracer, seen } = chooseTracer(requested);
  if (tracer) return tracer;
  const why = seen.map((t) => `${t.name}: ${t.reason}`).join('; ');
  const slow = seen.some((t) => t.path && /did not answer/.test(t.reason));
  throw new UserError(requested ? `${requested} is not usable here (${why}).` : `no tracer ${slow ? 'answered' : 'found'} (${why}).`,
    { hint: slow ? 'The host is busy: run the command again.' : INSTALL_HINT });
}

module.exports.requireTracer = requireTracer;
