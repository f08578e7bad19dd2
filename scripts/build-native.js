#!/usr/bin/env node
'use strict';
// Builds the USDT addon (src/usdt.c -> build/Release/nodetrace_usdt.node)
// with node-gyp. Run by `npm install` ("install" script) and by hand.
//
// Never fails the install: without the addon nodetrace still works, only its
// USDT provider turns into no-ops (lib/usdt status() says why). So every
// failure ends with exit code 0 and a message saying what to do.

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.join(__dirname, '..');
const say = (msg) => console.log('nodetrace: ' + msg);

function findNodeGyp() {
  const candidates = [];
  // npm points install scripts at its own bundled node-gyp.
  if (process.env.npm_config_node_gyp) candidates.push(process.env.npm_config_node_gyp);
  try { candidates.push(require.resolve('node-gyp/bin/node-gyp.js', { paths: [ROOT] })); } catch { /* not a dependency */ }
  const prefix = path.join(path.dirname(process.execPath), '..');
  candidates.push(path.join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  candidates.push('/usr/share/nodejs/node-gyp/bin/node-gyp.js');
  candidates.push('/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  return candidates.find((f) => fs.existsSync(f)) || null;
}

// node-gyp downloads Node's headers unless told where they are; hosts that
// installed node from a distribution package have them under <prefix>/include.
function localNodeDir() {
  // The user chose (node-gyp reads both; npm 11 warns about the first, so
  // the Makefile sets the second).
  if (process.env.npm_config_nodedir || process.env.npm_package_config_node_gyp_nodedir) return null;
  const prefix = path.join(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? path.resolve(prefix) : null;
}

function main() {
  if (process.platform !== 'linux') {
    say(`no native USDT addon to build on ${process.platform}: probes use the dtrace-provider package there.`);
    return;
  }
  if (process.arch !== 'x64') {
    say(`USDT probes are only generated for x86-64 (this is ${process.arch}); skipping the native addon, probes will be no-ops.`);
    return;
  }
  const gyp = findNodeGyp();
  if (!gyp) {
    say('node-gyp not found; USDT probes will be no-ops. Install node-gyp and run: node scripts/build-native.js');
    return;
  }
  const args = [gyp, 'rebuild', '--loglevel=warn'];
  const nodedir = localNodeDir();
  if (nodedir) args.push('--nodedir=' + nodedir);
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit', timeout: 5 * 60 * 1000 });
  const built = path.join(ROOT, 'build', 'Release', 'nodetrace_usdt.node');
  if (r.status !== 0 || !fs.existsSync(built)) {
    say('could not build the native USDT addon (' + (r.error ? r.error.message : `node-gyp exit code ${r.status}`) +
      '); USDT probes will be no-ops. It needs a C compiler, make and python3; then run: node scripts/build-native.js');
    return;
  }
  try {
    require(built);
  } catch (err) {
    say(`built ${built} but it does not load (${err.message}); USDT probes will be no-ops.`);
    return;
  }
  say('built the native USDT addon: ' + path.relative(process.cwd(), built));
}

try {
  main();
} catch (err) {
  say('native addon build skipped: ' + err.message);
}
process.exitCode = 0;
