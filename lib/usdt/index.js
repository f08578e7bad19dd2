'use strict';
// USDT probes for Node programs, with node-dtrace-provider's API.
//
// On systems with DTrace (illumos, macOS, FreeBSD) this is the real
// `dtrace-provider` package, which registers DOF with the kernel; if that
// package is not installed, probes are no-ops. On Linux, probes are real
// USDT probes in a probe library generated at run time (see provider.js,
// elf.js, docs/usdt.md), visible to bpftrace, bcc, perf and systemtap.

const path = require('path');
const paths = require('./paths');

// bunyan's provider, as bunyan (lib/bunyan.js) declares it: one probe per
// level, one 'char *' argument (the JSON log record). Every bunyan process
// declares exactly this, so they all share one probe library.
const BUNYAN_PROVIDER = Object.freeze({
  name: 'bunyan',
  module: undefined,
  probes: Object.freeze(['trace', 'debug', 'info', 'warn', 'error', 'fatal']
    .map((level) => Object.freeze(['log-' + level, 'char *']))),
});

function noopStub() {
  function DTraceProviderStub() {}
  DTraceProviderStub.prototype.addProbe = function (name) {
    const p = { fire() {} };
    this[name] = p;
    return p;
  };
  DTraceProviderStub.prototype.enable = function () {};
  DTraceProviderStub.prototype.disable = function () {};
  DTraceProviderStub.prototype.fire = function () {};
  return DTraceProviderStub;
}

let impl;
let statusFn;
if (process.platform === 'linux') {
  const provider = require('./provider');
  const library = require('./library');
  impl = { DTraceProvider: provider.DTraceProvider, DTraceProbe: provider.DTraceProbe };
  statusFn = library.status;
} else {
  // register.js does not redirect 'dtrace-provider' on these systems, so
  // this is the package itself, not us.
  let dtp = null;
  let reason;
  try {
    dtp = require('dtrace-provider');
  } catch {
    reason = 'the dtrace-provider package is not installed';
  }
  const Stub = dtp ? null : noopStub();
  impl = { DTraceProvider: dtp ? dtp.DTraceProvider : Stub, DTraceProbe: null };
  const real = dtp && dtp.DTraceProvider && dtp.DTraceProvider.name !== 'DTraceProviderStub';
  statusFn = () => ({
    native: Boolean(real),
    reason: real ? null : (reason || 'dtrace-provider could not load its native binding'),
    dir: null,
    libraries: [],
  });
}

function createDTraceProvider(name, module) {
  return arguments.length >= 2 ? new impl.DTraceProvider(name, module) : new impl.DTraceProvider(name);
}

// status() -> { native, reason, dir, libraries }: for `nodetrace doctor`.
//   native   probes can really fire here
//   reason   why not, or why the last probe library could not be loaded
//   dir      where probe libraries are (or would be) kept
function status() {
  return statusFn();
}

// Path of the probe library for a definition, computed without creating
// anything (see paths.js): probeLibraryPath('bunyan', BUNYAN_PROVIDER.probes).
function probeLibraryPath(providerName, probes, opts) {
  return paths.probeLibraryPath(providerName, probes, opts);
}

module.exports = {
  createDTraceProvider,
  DTraceProvider: impl.DTraceProvider,
  DTraceProbe: impl.DTraceProbe,
  status,
  probeLibraryPath,
  probeLibraryPaths: paths.probeLibraryPaths,
  loadedProbeLibraries: paths.loadedProbeLibraries,
  BUNYAN_PROVIDER,
  REGISTER_PATH: path.join(__dirname, '..', '..', 'register.js'),
};
