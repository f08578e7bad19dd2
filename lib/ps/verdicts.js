'use strict';
// What each command can and cannot do for one Node process, from its facts
// (./facts.js): pure. Each verdict is { command, can: 'yes' | 'partly' |
// 'no', why (for partly and no) }.
const path = require('path');
const { layoutOf } = require('../async/wrap-functions');

const COMMANDS = ['latency', 'gc', 'async', 'loop', 'profile', 'ebadf', 'snoop', 'http'];

// What `http -p` reads off the wire of this process: plain HTTP from its
// socket calls always; HTTPS from the object that defines OpenSSL's
// SSL_read/SSL_write (lib/http/tls-object.js), said as what it is.
function wireSources(f) {
  const tls = f.tls || { why: 'no OpenSSL found' };
  if (!tls.object) return `plain HTTP from its socket calls; no HTTPS: ${tls.why}`;
  const file = path.basename(tls.object);
  const where = /^libssl\.so/.test(file) ? `the shared ${file} (${tls.object})`
    : `the OpenSSL linked into ${tls.object === f.exe ? 'its executable' : file} (${tls.object})`;
  return `plain HTTP from its socket calls, HTTPS from ${where}`;
}

function verdicts(f) {
  const inContainer = Boolean(f.who && (f.who.container || f.who.otherMounts));
  const v = {
    latency: f.latency ? { can: 'yes', why: inContainer ? 'bpftrace is given the mapped files themselves, without -p' : null }
      : { can: 'no', why: 'its node defines no N-API and uv_queue_work symbols' },
    gc: f.gc ? { can: 'yes' } : { can: 'no', why: 'no V8 collector symbols' },
    async: !f.async ? { can: 'no', why: 'no AsyncWrap symbols' }
      : f.version && !layoutOf(f.version) ? { can: 'no', why: `Node v${f.version}'s AsyncWrap layout is not known to nodetrace` }
        : { can: 'yes' },
    loop: { can: 'yes' },
    profile: f.perfMap.path && !f.perfMap.refused ? { can: 'yes' }
      // JavaScript of every thread named from V8's metadata (lib/profile/js-frames.js).
      : f.v8Frames ? { can: 'yes', why: 'JavaScript named from V8\'s metadata, on every thread (worker threads too)' }
        : { can: 'partly', why: f.perfMap.refused ? `JavaScript unnamed: ${f.perfMap.path} is not read (${f.perfMap.refused})` : 'JavaScript unnamed: not started with --perf-basic-prof, and its V8 is not one nodetrace knows' },
    ebadf: !f.gcore ? { can: 'partly', why: '--abort only: gcore is not installed' }
      : inContainer ? { can: 'yes', why: 'its executable and libraries are saved beside the core' } : { can: 'yes' },
    snoop: f.snoop ? { can: 'yes' } : { can: 'no', why: 'no bunyan probe library: start it with node -r nodetrace/register' },
    http: f.http ? { can: 'yes', why: `its nodetrace hook; with --source wire: ${wireSources(f)}` }
      : f.tls && f.tls.object ? { can: 'yes', why: `with -p PID, off the wire: ${wireSources(f)}; '*' and names need node -r nodetrace/register` }
        : { can: 'partly', why: `with -p PID, off the wire: ${wireSources(f)}` },
  };
  return COMMANDS.map((command) => ({ command, can: v[command].can, why: v[command].why || null }));
}

module.exports = { verdicts, COMMANDS };
