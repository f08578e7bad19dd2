'use strict';
// Where node's AsyncWrap functions are in one Node process, for `nodetrace
// async`: the object that defines them (the node executable in official
// builds; libnode.so in Debian's), its Node version (read from the file,
// never by running it), and from that version the AsyncWrap layout and the
// provider names. Measured on official Node 18 to 26 and Debian's 18 (docs/programs.md#async):
//
//   created    AsyncWrap::AsyncReset(Local<Object>, double[, bool]): every new
//              async ID (the constructor's, and a reused object's)
//   callback   AsyncWrap::MakeCallback(Local<Function>, int, Local<Value>*)
//   destroyed  AsyncWrap::EmitDestroy(bool) (explicit ends, reuse) and
//              ~AsyncWrap() D2 and D0, which inline their own copy of it in
//              official builds and call it in Debian's (the program counts
//              an operation, object and async ID, once)
const { findElfSymbols, parseMaps } = require('../symbolize');
const { readProcFile } = require('../proc');
const { codeObjects, objectFiles, mapFile } = require('../proc/code-objects');
const { nodeVersionOf } = require('../latency/probe-points');
const { providersOf } = require('./providers');

// AsyncReset lost its bool in Node 24: either is the same function.
const RESET_24 = '_ZN4node9AsyncWrap10AsyncResetEN2v85LocalINS1_6ObjectEEEd';
const FUNCTIONS = Object.freeze({
  RESET: '_ZN4node9AsyncWrap10AsyncResetEN2v85LocalINS1_6ObjectEEEdb',
  CALLBACK: '_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE',
  DESTROY: '_ZN4node9AsyncWrap11EmitDestroyEb',
  DTOR: '_ZN4node9AsyncWrapD2Ev',
  DELETING_DTOR: '_ZN4node9AsyncWrapD0Ev',
});

// Where an AsyncWrap keeps its provider type (int32) and async ID (a
// double), per Node major: read from AsyncWrap::MakeCallback's code on each
// build (test/async-unit.test.js holds this table to the builds of the matrix).
const LAYOUTS = Object.freeze({
  18: { TYPE_AT: 32, ID_AT: 40 },
  20: { TYPE_AT: 32, ID_AT: 40 },
  22: { TYPE_AT: 32, ID_AT: 40 },
  24: { TYPE_AT: 48, ID_AT: 56 },
  26: { TYPE_AT: 48, ID_AT: 56 },
});

function layoutOf(version) {
  const major = /^(\d+)\./.exec(String(version || ''));
  return major && LAYOUTS[major[1]] ? LAYOUTS[major[1]] : null;
}

/**
 * -> { file (what the tracer attaches to: /proc/PID/map_files/RANGE), object
 *    (its path in the process), version, layout, providers (a table, or null),
 *    functions: { RESET, CALLBACK, DESTROY, DTOR, DELETING_DTOR }, addresses
 *    (the same roles -> each function's start in the file, 0x..., or null) }
 *    or { missing: why } (one sentence: which build, what is missing).
 */
function locateAsyncWrap(pid, host = realHost()) {
  const maps = parseMaps(host.maps(pid) || '');
  for (const o of codeObjects(maps, host.exePath(pid))) {
    let found = null;
    let readFrom = null;
    for (const f of objectFiles(pid, o)) {
      found = host.findSymbols(f, [...Object.values(FUNCTIONS), RESET_24]);
      if (found) { readFrom = f; break; }
    }
    if (!found || !found.found.has(FUNCTIONS.CALLBACK)) continue;
    const functions = { ...FUNCTIONS };
    if (!found.found.has(FUNCTIONS.RESET) && found.found.has(RESET_24)) functions.RESET = RESET_24;
    const missing = Object.entries(functions).filter(([, name]) => !found.found.has(name)).map(([role]) => role);
    if (missing.length) return { missing: `${o.path} defines AsyncWrap::MakeCallback but not ${missing.join(', ')} (see docs/programs.md#async)` };
    const version = host.nodeVersion(readFrom);
    const layout = layoutOf(version);
    if (!layout) {
      return { missing: `${o.path} is Node ${version ? 'v' + version : 'of an unknown version'}, whose AsyncWrap layout nodetrace does not know (it knows Node ${Object.keys(LAYOUTS).join(', ')})` };
    }
    return { file: mapFile(pid, o), object: o.path, version, layout, providers: providersOf(version), functions,
      addresses: addressesOf(functions, found) };
  }
  return { missing: 'no object of the process defines node::AsyncWrap::MakeCallback (not Node, or a build without symbols)' };
}

// Each function's start in the file (its symbol's value), by role: what
// bpftrace is given instead of the name, which bpftrace 0.17 looked up in
// node's whole symbol table for each probe (docs/performance.md, "How
// long a command keeps its user waiting"). null where one is not known:
// the probes then go by name.
function addressesOf(functions, table) {
  const addresses = {};
  for (const [role, name] of Object.entries(functions)) {
    const sym = table.found.get(name);
    if (!sym || !(sym.value > 0)) return null;
    addresses[role] = `0x${sym.value.toString(16)}`;
  }
  return addresses;
}

function realHost() {
  const fs = require('fs');
  return {
    maps: (pid) => readProcFile(pid, 'maps'),
    exePath: (pid) => { try { return fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { return null; } },
    findSymbols: (file, names) => findElfSymbols(file, names, { followLinks: true }),
    nodeVersion: (file) => nodeVersionOf(file),
  };
}

module.exports = { locateAsyncWrap, layoutOf, FUNCTIONS, RESET_24, LAYOUTS };
