'use strict';
const { UserError } = require('./errors');
const { displayCommand } = require('./tracer/plan');

// Both tracers need root (or CAP_BPF/CAP_PERFMON and friends, which is rarer
// than sudo on the hosts we target); say so before the tracer says it worse.
function requireRoot(what) {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new UserError(`${what} needs root privileges to load kernel probes.`,
      { hint: 'Run it again with sudo, e.g.: sudo ' + displayCommand('nodetrace', process.argv.slice(2)) });
  }
}

module.exports = { requireRoot };
