'use strict';
// A one-line status on stderr while tracing: what is traced, for how long so
// far, and what ends the trace, redrawn each second when stderr is a
// terminal, printed once when it is not. What is traced may be described
// by names others chose (a container's): kept on the line, escaped.
const { safeText } = require('./terminal-safe');

class StatusLine {
  constructor(stream, describe, durationSeconds) {
    this.stream = stream;
    this.describe = describe;
    this.durationSeconds = durationSeconds;
    this.timer = null;
    this.redraw = null;   // the line's drawing, on a terminal
  }

  text(elapsedSeconds) {
    const ends = this.durationSeconds
      ? `ends in ${Math.max(0, this.durationSeconds - elapsedSeconds)}s or on Ctrl-C`
      : 'Ctrl-C to stop and print';
    return safeText(`nodetrace: tracing ${this.describe}, ${elapsedSeconds}s elapsed (${ends})`, { oneLine: true });
  }

  start() {
    if (this.timer) return;
    if (!this.stream.isTTY) {
      // Logs and scripts get one line saying the probes are in place.
      this.stream.write(this.text(0).replace(/, 0s elapsed/, '') + '\n');
      this.timer = 'once';
      return;
    }
    this.redrawEachSecond((elapsed) => this.text(elapsed));
  }

  // Once the end is asked for: the tracer detaches its probes, which can
  // take many seconds on a busy host (docs/platforms.md, "Learned
  // 2026-11-27"); a terminal is told so rather than left silent.
  // `reporting`: the program prints its report first (its window:
  // lib/tracer/session.js), its probes still attached.
  ending(tracerName, { reporting = false } = {}) {
    if (!this.timer || this.timer === 'once') return;
    clearInterval(this.timer);
    const doing = reporting ? 'printing its report' : 'detaching its probes';
    this.redrawEachSecond((s) => `nodetrace: stopping: ${tracerName} is ${doing}${s ? `, ${s}s` : ''}`);
  }

  // The report is about to be printed (on stdout, which may be the same
  // terminal): the line is taken away first.
  clear() {
    if (!this.timer || this.timer === 'once') return;
    clearInterval(this.timer);
    this.timer = null;
    this.redraw = null;
    this.stream.write('\r\x1b[K');
    this.cleared = true;
  }

  // After the report, while the tracer detaches its probes (a terminal
  // waits for nodetrace to exit, and is told why).
  detaching(tracerName) {
    if (!this.cleared) return;
    this.cleared = false;
    this.redrawEachSecond((s) => `nodetrace: report complete; ${tracerName} is detaching its probes${s ? `, ${s}s` : ''}`);
  }

  // A terminal's line, drawn now and again each second from the seconds since.
  redrawEachSecond(textAt) {
    const since = Date.now();
    const draw = () => this.stream.write('\r\x1b[K' + textAt(Math.floor((Date.now() - since) / 1000)));
    draw();
    this.redraw = draw;
    this.timer = setInterval(draw, 1000);
    this.timer.unref();
  }

  // A line of someone else's (a -c command's stderr), printed above the
  // status line, which is drawn again under it.
  printAbove(text) {
    if (!this.redraw) {
      this.stream.write(text + '\n');
      return;
    }
    this.stream.write('\r\x1b[K' + text + '\n');
    this.redraw();
  }

  stop() {
    if (!this.timer) return;
    if (this.timer === 'once') { this.timer = null; return; }
    clearInterval(this.timer);
    this.timer = null;
    this.redraw = null;
    this.stream.write('\r\x1b[K');
  }
}

module.exports = { StatusLine };
