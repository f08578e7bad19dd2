'use strict';
// The signals that end a trace the way Ctrl-C does: Ctrl-C itself, a kill
// (SIGTERM), and the terminal going away (SIGHUP). Handling them keeps Node
// from dying at once, so that what was gathered can still be printed.
const TERMINATION_SIGNALS = Object.freeze(['SIGINT', 'SIGTERM', 'SIGHUP']);

// Calls fn(signalName) for each; returns the function that stops that.
function onTerminationSignals(fn) {
  for (const s of TERMINATION_SIGNALS) process.on(s, fn);
  return () => { for (const s of TERMINATION_SIGNALS) process.removeListener(s, fn); };
}

module.exports = { TERMINATION_SIGNALS, onTerminationSignals };
