'use strict';
// What ends a trace the way Ctrl-C does: Ctrl-C itself, a kill (SIGTERM),
// the terminal going away (SIGHUP), and our standard output closed by its
// reader (`nodetrace http ... | head`: the write fails with EPIPE, as Node
// ignores SIGPIPE). Handling them keeps Node from dying at once, so that what
// was gathered can still be printed, or, with no one left to read it, the
// tracer ended cleanly and nothing more said.
const TERMINATION_SIGNALS = Object.freeze(['SIGINT', 'SIGTERM', 'SIGHUP']);

const handlers = new Set();
let closed = false;

// Calls fn(signalName) for each ('EPIPE' when our output was closed);
// returns the function that stops that.
function onTerminationSignals(fn) {
  for (const s of TERMINATION_SIGNALS) process.on(s, fn);
  handlers.add(fn);
  return () => {
    for (const s of TERMINATION_SIGNALS) process.removeListener(s, fn);
    handlers.delete(fn);
  };
}

// Has our standard output's reader gone away?
function outputClosed() {
  return closed;
}

// Watches stdout (once, from the CLI): a closed pipe ends every trace and
// silences the rest of the output; any other write error stays an error.
function endOnClosedOutput(stream = process.stdout) {
  stream.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err;
    if (closed) return;
    closed = true;
    for (const fn of [...handlers]) fn('EPIPE');
  });
}

module.exports = { TERMINATION_SIGNALS, onTerminationSignals, outputClosed, endOnClosedOutput };
