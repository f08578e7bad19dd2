'use strict';
const { safeText } = require('./terminal-safe');
// Errors a user can act on. The CLI prints `message` (and `hint`) without a
// stack trace and exits with `exitCode`; anything else is a bug and keeps its
// stack.

const EXIT = Object.freeze({
  OK: 0,
  FAILURE: 1,     // the trace could not run or failed
  USAGE: 2,       // bad arguments: fix the command line
  NOT_FOUND: 3,   // no such process / nothing matched
});

class UserError extends Error {
  constructor(message, { hint, exitCode = EXIT.FAILURE } = {}) {
    super(message);
    this.name = 'UserError';
    this.hint = hint;
    this.exitCode = exitCode;
  }
}

class UsageError extends UserError {
  constructor(message, hint) {
    super(message, { hint, exitCode: EXIT.USAGE });
    this.name = 'UsageError';
  }
}

// Messages quote names others chose (processes, files, patterns): made safe
// for the terminal here, once for every error.
function formatUserError(err) {
  return safeText('nodetrace: ' + err.message + (err.hint ? '\n' + err.hint : ''));
}

module.exports = { EXIT, UserError, UsageError, formatUserError };
