'use strict';
// Loads the USDT addon (src/usdt.c, built by scripts/build-native.js) once per
// thread. Never throws: when the addon is missing or cannot work here, the
// answer says why, and probes become no-ops.

const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const CANDIDATES = [
  path.join(ROOT, 'build', 'Release', 'nodetrace_usdt.node'),
  path.join(ROOT, 'build', 'Debug', 'nodetrace_usdt.node'),
];

let result = null;

// The image (Containerfile) holds no src/ nor scripts/: the addon is for a
// traced application's side, and nodetrace traces without it.
function canBuildHere() {
  return ['scripts/build-native.js', 'src/usdt.c'].every((f) => fs.existsSync(path.join(ROOT, f)));
}

/** Why the addon is not loaded, and what to do: a rebuild only where its source is. */
function unavailableReason(errors, canBuild) {
  const what = `the native USDT addon is not available (${errors.join('; ')})`;
  return canBuild ? `${what}; rebuild it with: node scripts/build-native.js`
    : `${what}; this installation has no source to build it from, and tracing needs none `
      + '(it fires an application\'s own probes, docs/usdt.md: a dependency of the application, built there)';
}

function loadAddon() {
  if (result) return result;
  const off = String(process.env.NODETRACE_USDT || '').toLowerCase();
  if (off === '0' || off === 'off' || off === 'false') {
    result = { ok: false, quiet: true, reason: `disabled by NODETRACE_USDT=${process.env.NODETRACE_USDT}` };
  } else if (process.platform !== 'linux') {
    result = { ok: false, reason: `the USDT addon is for Linux (this is ${process.platform})` };
  } else if (process.arch !== 'x64') {
    // The generated probe libraries are x86-64 code (see elf.js).
    result = { ok: false, reason: `USDT probe libraries are only generated for x86-64 (this is ${process.arch})` };
  } else {
    const errors = [];
    for (const file of CANDIDATES) {
      try {
        const addon = require(file);
        result = { ok: true, addon, file, reason: null };
        break;
      } catch (err) {
        errors.push(err.code === 'MODULE_NOT_FOUND' ? `${file} not built` : `${file}: ${err.message}`);
      }
    }
    if (!result) result = { ok: false, reason: unavailableReason(errors, canBuildHere()) };
  }
  return result;
}

module.exports = { loadAddon, unavailableReason, ADDON_PATHS: CANDIDATES };
