'use strict';
// Options that mean the same in every command, spelled once.

// setTimeout's limit is 2^31-1 ms; a longer -d would fire at once.
const MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

function durationOption(describe) {
  return { alias: 'd', type: 'number', describe };
}

// For .check(): -d is a whole number of seconds that a timer can hold.
function checkDuration(a, flag = '-d') {
  const d = a.duration;
  if (d === undefined) return;
  if (!(Number.isInteger(d) && d > 0 && d <= MAX_SECONDS)) {
    throw new Error(`${flag} expects a whole number of seconds from 1 to ${MAX_SECONDS} (about 24 days).`);
  }
}

function dryRunOption() {
  return { alias: 'n', type: 'boolean', default: false, describe: 'Print exactly what would run (tracer command line, environment, program) as a shell script, and exit' };
}

module.exports = { MAX_SECONDS, durationOption, checkDuration, dryRunOption };
