'use strict';
// Where the tests find DTrace for Linux: built by scripts/build-dtrace.sh
// (`make dtrace`) into ${NODETRACE_CACHE:-/var/cache/nodetrace}/dtrace, the
// cache `make test` (and CI, a cache of its own) builds it in.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { parseDtraceVersion } = require('../../lib/tracer/detect');

const DTRACE = path.join(process.env.NODETRACE_CACHE || '/var/cache/nodetrace', 'dtrace', 'bin', 'dtrace');

/** Why DTrace for Linux cannot run here, in one line, or null. */
function dtraceUnavailableReason() {
  if (!fs.existsSync(DTRACE)) return `DTrace for Linux is not built (${DTRACE} is missing: run make dtrace, which builds it from vendor/)`;
  const v = spawnSync(DTRACE, ['-V'], { encoding: 'utf8' });
  const parsed = parseDtraceVersion(v.stdout + v.stderr);
  if (!parsed || parsed.flavor !== 'oracle') return `${DTRACE} -V does not say Oracle D: ${(v.stdout + v.stderr).trim()}`;
  return null;
}

/** Skips a test where DTrace for Linux is not built, saying why; in CI (which builds it) fails instead. */
function requireDtrace(ctx) {
  const reason = dtraceUnavailableReason();
  if (!reason) return;
  if (process.env.CI) throw new Error('DTrace tests cannot run in CI: ' + reason);
  console.log(`      skipped: ${reason}`);
  ctx.skip();
}

module.exports = { DTRACE, dtraceUnavailableReason, requireDtrace };
