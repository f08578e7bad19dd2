'use strict';
// Options that mean the same in every command, spelled once.

// setTimeout's limit is 2^31-1 ms; a longer -d would fire at once.
const MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

// The file name that means standard output, as in tar, gzip and flamegraph.pl.
const STDOUT = '-';

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

// Frames at the place the code was written, where a script has a source
// map (lib/source-maps.js); --no-source-maps: where V8 runs it.
function sourceMapsOption() {
  return {
    type: 'boolean', default: true,
    describe: 'Show a JavaScript frame where its script\'s source map puts it (src/x.ts:42:3), when it has one (--no-source-maps: the generated code\'s place)',
  };
}

// --json: the command's output as JSON; `describe` where its shape needs saying.
function jsonOption(describe = 'Print JSON instead of text (docs/json-format.md)') {
  return { type: 'boolean', default: false, describe };
}

// --backend: which tracer runs the command's program; `describe` where the
// default or what each tracer does differs from lib/tracer/detect.js's
// chooseTracer (DTrace where it is, else bpftrace).
function backendOption(describe = 'Tracer to use (default: dtrace if present, else bpftrace)') {
  return { choices: ['dtrace', 'bpftrace'], describe };
}

function dryRunOption() {
  return { alias: 'n', type: 'boolean', default: false, describe: 'Print exactly what would run (tracer command line, environment, program) as a shell script, and exit' };
}

// A file a report is written to. requiresArg: yargs then takes the next word
// as the value even when it is "-"; otherwise it reads a lone "-" as a
// positional (`profile -p 4242 --folded - > cpu.folded` was refused as a
// second target; yargs-parser 21). The description's last words are the
// promise test/cli.test.js holds every such flag to.
function outputFileOption(describe) {
  return { type: 'string', requiresArg: true, describe: `${describe} ("${STDOUT}": standard output)` };
}

// A directory files are written into (ebadf's cores): "-" cannot be one.
function outputDirOption(describe) {
  return { alias: 'o', type: 'string', requiresArg: true, describe };
}

/**
 * For .check(): each output flag given names a file, and at most one
 * output goes to standard output (--json counts as one).
 * @param {string[]} flags the command's outputFileOption()s
 * @param {{binary?: string[]}} o flags whose content is binary: never to a terminal
 */
function checkOutputFiles(a, flags, { binary = [], stdout = process.stdout } = {}) {
  const onStdout = a.json ? ['--json'] : [];
  for (const flag of flags) {
    if (a[flag] === undefined) continue;
    if (!String(a[flag]).trim()) throw new Error(`--${flag} expects a file name ("${STDOUT}": standard output).`);
    if (a[flag] !== STDOUT) continue;
    onStdout.push(`--${flag} ${STDOUT}`);
    if (binary.includes(flag) && stdout.isTTY) {
      throw new Error(`--${flag} ${STDOUT} writes binary data, not to a terminal: redirect it (> FILE) or name a file.`);
    }
  }
  if (onStdout.length > 1) throw new Error(`Only one output can go to standard output, not ${onStdout.join(' and ')}: send the others to files.`);
}

// For .check(): an output directory given is one ("-" is not).
function checkOutputDir(a, flag = '-o') {
  const dir = a.outputDir;
  if (dir === undefined) return;
  if (dir === STDOUT) throw new Error(`${flag} names a directory for files; "${STDOUT}" (standard output) cannot hold them.`);
  if (!String(dir).trim()) throw new Error(`${flag} expects a directory.`);
}

// --thread: which thread's event loop (the main thread's, or a
// worker_threads Worker's: each runs a loop of its own). One grammar in
// every command that takes it:
//   main        the main thread (the default)
//   N           the Worker whose threadId is N (as worker.threadId gives it)
//   tid:N       the thread whose TID is N (a Worker's, or the main one's)
//   NAME        the Worker given that name (new Worker(f, { name }))
// Found in the process by lib/threads/select.js.
function threadOption() {
  return {
    type: 'string',
    describe: 'The thread whose event loop to measure: main (default), a worker_threads Worker by its thread id (2) or its name, or tid:TID',
  };
}

// The --thread value parsed -> { main: true } | { threadId } | { tid } | { name }; throws a usage message.
function parseThread(text) {
  const s = String(text);
  if (s === '' || s === 'main') return { main: true };
  if (/^[0-9]{1,10}$/.test(s)) return { threadId: Number(s) };
  const tid = /^tid:([1-9][0-9]{0,9})$/.exec(s);
  if (tid) return { tid: Number(tid[1]) };
  if (/^tid:/.test(s)) throw new Error(`--thread tid:N expects a thread ID (a whole number), not "${s}".`);
  if (s.length > 64) throw new Error('--thread expects main, a Worker\'s thread id or name (64 characters at most), or tid:TID.');
  return { name: s };
}

// For .check().
function checkThread(a) {
  if (a.thread !== undefined) parseThread(a.thread);
}

module.exports = {
  MAX_SECONDS, STDOUT, durationOption, checkDuration, dryRunOption, sourceMapsOption, jsonOption, backendOption,
  outputFileOption, outputDirOption, checkOutputFiles, checkOutputDir,
  threadOption, parseThread, checkThread,
};
