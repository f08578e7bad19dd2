'use strict';
// A program's live dumps: with --prometheus, its LIVE clause prints its
// maps every second, uncleared (values cumulative since its window opened),
// between two marker lines. LiveDumps takes those lines from the session
// (none is kept for the final report: a trace of hours would otherwise grow
// without bound) and hands over each whole dump. Pure but for its callback.
const { END_MARKER, REPORT_MARKER } = require('../tracer/output-formats');

const LIVE_BEGIN = 'Live maps.';
const LIVE_END = 'Live maps printed.';
// The lines of one dump: a program's maps are bounded by bpftrace's map
// keys (4,096 each) and a histogram is ~40 lines; past this, the dump is
// not read (a map that grew past anything an endpoint shows).
const MAX_DUMP_LINES = 100000;

/**
 * Takes a session's lines (TracerSession's takeLine): those of each live
 * dump, markers included, are taken, and onDump(text) gets each whole dump.
 */
class LiveDumps {
  constructor(onDump, { maxLines = MAX_DUMP_LINES } = {}) {
    this.onDump = onDump;
    this.maxLines = maxLines;
    this.lines = null;
    this.overflowed = 0;
    this.abandoned = 0;
  }

  take(line) {
    if (line === LIVE_BEGIN) {
      this.lines = [];
      return true;
    }
    if (this.lines === null) return false;
    // The report's lines are never taken: the window's clause, run on
    // another CPU at the very moment a dump is printed, could interleave
    // with it (a dump is printed by one clause, so its lines otherwise come
    // together). That dump is given up.
    if (line === END_MARKER || line === REPORT_MARKER) {
      this.lines = null;
      this.abandoned++;
      return false;
    }
    if (line === LIVE_END) {
      const lines = this.lines;
      this.lines = null;
      if (lines.length > this.maxLines) this.overflowed++;
      else this.onDump(lines.join('\n') + '\n');
      return true;
    }
    if (this.lines.length <= this.maxLines) this.lines.push(line);
    return true;
  }
}

module.exports = { LIVE_BEGIN, LIVE_END, MAX_DUMP_LINES, LiveDumps };
