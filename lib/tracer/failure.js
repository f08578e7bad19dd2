'use strict';
// Turns a tracer that died before attaching into one clear message.
const { UserError, EXIT } = require('../errors');
const { isRunning } = require('../proc');
const { howItExited } = require('./session');

function describeTracerFailure(tracer, result, pid) {
  const text = result.errors.join('\n').trim();
  if (result.attachTimedOut) {
    const s = Math.round(result.attachTimeoutMs / 1000);
    const what = result.probesAttached ? `made no progress attaching its probes for ${s} s` : `did not attach its probes within ${s} s`;
    return new UserError(`${tracer.name} ${what}, so it was stopped${text ? `: ${firstLines(text)}` : ''}.`,
      { hint: 'Nothing was traced. Run with --dry-run to see the exact command, and try it by hand.' });
  }
  if (pid && !isRunning(pid)) {
    return new UserError(`PID ${pid} exited before ${tracer.name} could attach.`, { exitCode: EXIT.NOT_FOUND });
  }
  if (/Operation not permitted|permission denied|EPERM/i.test(text)) {
    return new UserError(`${tracer.name} was not allowed to load its probes: ${firstLines(text)}`,
      { hint: 'Run as root; in containers, bpftrace also needs CAP_SYS_ADMIN/CAP_BPF and a mounted tracefs (mount -t tracefs nodev /sys/kernel/tracing).' });
  }
  if (/uprobe_events|tracefs|debugfs/.test(text)) {
    return new UserError(`${tracer.name} could not reach tracefs: ${firstLines(text)}`,
      { hint: 'Mount it: sudo mount -t tracefs nodev /sys/kernel/tracing' });
  }
  return new UserError(`${tracer.name} rejected the program (${howItExited(result)}):\n${firstLines(text, 8) || '(it printed nothing)'}`,
    { hint: 'Run with --dry-run to see the exact command and program; `nodetrace doctor` checks what this host lacks.' });
}

function firstLines(text, n = 3) {
  return text.split('\n').filter(Boolean).slice(0, n).join('\n');
}

module.exports = { describeTracerFailure };
