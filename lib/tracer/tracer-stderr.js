'use strict';
// What a tracer prints on its stderr, sorted: its noise, its news and
// warnings, its errors, and (with -c, whose command shares the tracer's
// stderr) the command's own lines, which are the user's to see.

// Lines tracers print on stderr that are not errors (bpftrace on hosts with a
// small RLIMIT_MEMLOCK; it works anyway on kernels that account BPF by memcg).
const BLANK = /^\s*$/;
const NOISE = [/couldn't set RLIMIT_MEMLOCK/, BLANK];

function isNoise(line) {
  return NOISE.some((re) => re.test(line));
}

// bpftrace 0.27 says "Attached N probes" on stderr; 0.23+ follow a warning
// or error that has a place in the program (file:line:col) with an excerpt
// of the program (lines of it, often a row of ~ under them).
const NEWS = /^Attach(ed|ing) \d+ probes?/;
const WARNING = /\bWARNING: /;
const ERROR = /\bERROR: /;
const EXCERPT_MARK = /^\s*[~^]+\s*$/;
const PLACED = /^\S+?:\d+[-:\d]*: (WARNING|ERROR): /;
// A message of the tracer's starts so (DTrace's and libbpf's say whose they
// are). A command's line that starts so is taken for one, and is kept with
// the tracer's complaints: shown if the tracer fails.
const MESSAGE = /^((WARNING|ERROR): |(dtrace|libbpf|bpftrace): )/;

/**
 * What a tracer said that explains its end: its error lines, without its
 * news or warnings, which 0.27 prints for a healthy program, each followed
 * by an excerpt up to the next message.
 */
function tracerComplaints(lines) {
  const out = [];
  let inExcerpt = false;
  for (const line of lines) {
    if (WARNING.test(line) || NEWS.test(line)) { inExcerpt = true; continue; }
    if (ERROR.test(line)) { out.push(line); inExcerpt = true; continue; }
    if (inExcerpt || EXCERPT_MARK.test(line) || isNoise(line)) continue;
    out.push(line);
  }
  return out;
}

/**
 * The lines of a stderr that a tracer shares with its -c command, sorted one
 * by one: 'noise', 'tracer' (its messages, and the program excerpts that
 * follow them while it loads) or 'command'. The command can write only once
 * it runs, so before that only an unmarked line that is no excerpt goes to
 * the command (one whose start was missed: it exited within the moment).
 */
class StderrSorter {
  constructor() {
    this.inExcerpt = false;
  }

  sort(line, commandRuns) {
    if (BLANK.test(line)) return commandRuns ? 'command' : 'noise';
    if (isNoise(line)) return 'noise';
    if (NEWS.test(line) || MESSAGE.test(line) || PLACED.test(line)) {
      this.inExcerpt = PLACED.test(line);
      return 'tracer';
    }
    if (commandRuns) this.inExcerpt = false;
    if (this.inExcerpt) {
      if (EXCERPT_MARK.test(line)) this.inExcerpt = false;
      return 'tracer';
    }
    return 'command';
  }
}

module.exports = { isNoise, tracerComplaints, StderrSorter };
