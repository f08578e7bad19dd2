'use strict';
// What `nodetrace merge` is given, read and recognized: reports of one
// command (its `--json`, whose `command` and `version` say what it is) or
// folded stacks (`profile --folded`), from files others may have made (a
// node's DaemonSet pod, a colleague's laptop). Each is read whole, but
// bounded: a regular file (no FIFO to wait on), at most MAX_INPUT_BYTES
// (the largest report of the suite is under 1 MB; a profile's folded stacks
// of 65,536 distinct stacks about 30 MB), and MAX_TOTAL_BYTES together
// (JSON.parse holds several times a text's size). Recognizing is pure.
const fs = require('fs');
const { openRegular, readAt } = require('../safe-open');
const { MergeError } = require('./histogram');

const MiB = 1024 * 1024;
const LIMITS = Object.freeze({ MAX_INPUT_BYTES: 64 * MiB, MAX_TOTAL_BYTES: 256 * MiB, MAX_INPUTS: 10000 });

/** Whether `file` names standard input: "-" (which the command line hands over as /dev/stdin). */
function isStdin(file) {
  return file === '-' || file === '/dev/stdin';
}

/** Reads `file` ("-": standard input) as text, bounded: -> Promise<string>; rejects with MergeError. */
async function readInput(file, { budget, stdin = process.stdin } = {}) {
  const max = Math.min(LIMITS.MAX_INPUT_BYTES, budget);
  if (isStdin(file)) return readStream(stdin, max);
  const opened = openRegular(file, { maxBytes: max, followLinks: true });
  if (opened.refused) throw new MergeError(`cannot read it: ${opened.refused}`);
  try {
    return readAt(opened.fd, 0, opened.size).toString('utf8');
  } finally {
    fs.closeSync(opened.fd);
  }
}

function readStream(stream, max) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    stream.on('data', (chunk) => {
      size += chunk.length;
      if (size > max) {
        stream.destroy();
        reject(new MergeError(`it holds more than ${max} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', (err) => reject(new MergeError(`cannot read it: ${err.code || err.message}`)));
  });
}

const FOLDED_LINE = /^(.+) ([0-9]{1,15})$/;

/**
 * Pure: one input's text -> { format: 'json', report } | { format: 'folded', stacks: [[line, count]] };
 * throws MergeError saying what it is not.
 */
function recognize(text) {
  const trimmed = text.trim();
  if (!trimmed) throw new MergeError('it is empty');
  if (trimmed.startsWith('{')) {
    let report;
    try { report = JSON.parse(trimmed); } catch { throw new MergeError('it is not JSON (one report, as a command\'s --json prints it)'); }
    if (!report || typeof report !== 'object' || Array.isArray(report)) throw new MergeError('it is not a report');
    if (typeof report.command !== 'string') {
      throw new MergeError('it names no command ("command"): a report of a nodetrace older than merge, or not a report; run the command again with this nodetrace');
    }
    if (!Number.isSafeInteger(report.version)) throw new MergeError('its "version" is not a number');
    return { format: 'json', report };
  }
  const stacks = [];
  const lines = trimmed.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = FOLDED_LINE.exec(lines[i]);
    if (!m) throw new MergeError(`line ${i + 1} is neither JSON nor a folded stack ("frame;frame COUNT")`);
    stacks.push([m[1], Number(m[2])]);
  }
  return { format: 'folded', stacks };
}

module.exports = { readInput, recognize, isStdin, LIMITS };
