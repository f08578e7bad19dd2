'use strict';
// Turns a provider definition into live probe sites: builds the bytes,
// installs them safely in the first usable per-user directory, dlopens them
// through the addon, and hands back the semaphores and site numbers. One
// entry per distinct definition per thread, kept for the life of the thread
// (the library itself stays mapped for the life of the process).
//
// Failures never throw: load() returns null, and the process gets one clear
// warning saying why its probes are no-ops.

const path = require('path');
const { loadAddon } = require('./native');
const { libraryFor, candidateDirs } = require('./paths');
const store = require('./store');

const loaded = new Map();     // file name -> { path, base, semaphores }
const warned = new Set();
let lastFailure = null;

function warnOnce(key, message) {
  if (warned.has(key)) return;
  warned.add(key);
  process.emitWarning(message, { code: 'NODETRACE_USDT' });
}

// dlopen() of a file on a noexec mount fails with "failed to map segment
// from shared object" (EPERM); any dlopen failure just means: next directory.
function openLibrary(addon, file, layout) {
  const r = addon.open(file, layout.count, layout.stride);
  return { path: file, base: r.base, semaphores: new Uint16Array(r.semaphores) };
}

function load(providerName, probes, module) {
  const native = loadAddon();
  const { def, bytes, layout, fileName } = libraryFor(providerName, probes, module);
  if (def.truncated.length) {
    warnOnce('args:' + providerName, `USDT provider "${providerName}": probes ${def.truncated.join(', ')} ` +
      'declare more than 12 arguments; the rest are ignored');
  }
  if (!native.ok) {
    lastFailure = native.reason;
    if (!native.quiet) warnOnce('native', `USDT probes are disabled (no-ops): ${native.reason}`);
    return null;
  }
  const hit = loaded.get(fileName);
  if (hit) return { ...hit, def };

  const failures = [];
  const refusals = [];
  for (const candidate of candidateDirs()) {
    let file;
    try {
      const dir = store.prepareDir(candidate);
      file = store.install(dir, fileName, bytes);
    } catch (err) {
      failures.push(err.message);
      if (err.refused) refusals.push(err.message);
      continue;
    }
    let entry;
    try {
      entry = openLibrary(native.addon, file, layout);
    } catch (err) {
      failures.push(`cannot load ${file}: ${err.message}`);
      continue;
    }
    loaded.set(fileName, entry);
    if (refusals.length) {
      warnOnce('refused:' + refusals.join(), `USDT: refused ${refusals.join('; ')}; using ${file} instead`);
    }
    return { ...entry, def };
  }
  lastFailure = failures.join('; ') || 'no candidate directory';
  warnOnce('disabled', `USDT probes for provider "${providerName}" are disabled (no-ops): ` +
    `no safe place to load a probe library from: ${lastFailure}. ` +
    'Set NODETRACE_USDT_DIR to a private directory on an exec-mounted file system.');
  return null;
}

// First candidate directory that exists and passes the checks, without
// creating anything; for status().
function usableDir() {
  for (const candidate of candidateDirs()) {
    try { return store.prepareDir(candidate, { create: false }); } catch { /* next */ }
  }
  return null;
}

function status() {
  const native = loadAddon();
  const libraries = [...loaded.values()].map((e) => e.path);
  const dir = libraries.length ? path.dirname(libraries[libraries.length - 1]) : usableDir();
  return {
    native: native.ok,
    reason: native.ok ? lastFailure : native.reason,
    dir,
    libraries,
    addon: native.file || null,
  };
}

module.exports = { load, status, warnOnce };
