'use strict';
// What a finished watch (lib/ebadf/watch.js) comes to for the user: the
// lines said on stderr and how the command ends. Pure: watch()'s result and
// the watch's words in, { notes, error } out, where `error` is
// { message, hint, exitCode } (the handler throws it as a UserError) or null.
const { EXIT } = require('../errors');
const { howItExited } = require('../tracer/session');
const { seconds } = require('./hit-report');

function ctrlC(signal) {
  return signal === 'SIGINT' ? 'Ctrl-C' : signal;
}

/**
 * @param {object} result watch()'s result, once the probes were in place (result.ready)
 * @param {object} w { count: hits to handle, pid: -p's PID or null, describe: 'PID 4242 (node)',
 *   watches: 'close() failing with EBADF', elapsedMs: how long it watched, duration: -d or undefined }
 */
function watchOutcome(result, w) {
  const notes = [];
  const fail = (message, o = {}) => ({ notes, error: { message, hint: o.hint, exitCode: o.exitCode || EXIT.FAILURE } });
  if (result.missedResumed.length) {
    notes.push(`also resumed PID ${result.missedResumed.join(', ')}, stopped by hits whose reports were lost.`);
  }
  if (result.stillStopped.length) {
    return fail(`PID ${result.stillStopped.join(', ')} could not be resumed.`, { hint: `Resume it by hand: kill -CONT ${result.stillStopped.join(' ')}` });
  }
  if (result.watchdogDied) return fail('the watchdog died, so nodetrace stopped watching; no process was left stopped.');
  if (result.gcoreFailed) {
    const bad = result.records.find((r) => r.core && !r.core.ok);
    const why = result.interrupted
      ? `nodetrace was interrupted (${ctrlC(result.interrupted)}) and abandoned the dump.`
      : 'nodetrace stopped watching so as not to stop it again for nothing.';
    return fail(`the core of PID ${bad.hit.pid} could not be saved: ${bad.core.reason}.`,
      { hint: `PID ${bad.hit.pid} was resumed (${bad.resumeText}). ${why}` });
  }
  if (result.handled >= w.count) {
    const stops = result.records.filter((r) => r.stoppedMs != null && !r.beyondCount);
    if (stops.length) {
      notes.push(`done: ${stops.length} hit(s); ${stops.map((r) => `PID ${r.hit.pid} stopped for ${seconds(r.stoppedMs)}, running again`).join('; ')}.`);
    }
    return { notes, error: null };
  }
  const progress = `${result.handled} of ${w.count} hit(s)`;
  if (result.targetExited) {
    return fail(`PID ${w.pid} exited after ${progress}: no more ${w.watches} to catch.`, { exitCode: EXIT.NOT_FOUND });
  }
  if (result.interrupted || result.timedOut) {
    const why = result.interrupted ? ctrlC(result.interrupted) : `-d ${w.duration}`;
    return fail(`stopped watching after ${seconds(w.elapsedMs)} (${why}) with ${progress}: ${result.handled ? 'no more' : 'no'} ${w.watches} in ${w.describe}.`);
  }
  const last = result.errors.length ? ': ' + result.errors.slice(-3).join('; ') : '';
  return fail(`${w.tracerName} ${howItExited(result.tracerExit || {})} after ${progress}${last}.`);
}

module.exports = { watchOutcome };
