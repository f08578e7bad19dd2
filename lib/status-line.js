'use strict';
// A one-line status on stderr while tracing, only when stderr is a terminal:
// what is traced, for how long so far, and what ends the trace.

class StatusLine {
  constructor(stream, describe, durationSeconds) {
    this.stream = stream;
    this.describe = describe;
    this.durationSeconds = durationSeconds;
    this.timer = null;
    this.startedAt = 0;
  }

  text(elapsedSeconds) {
    const ends = this.durationSeconds
      ? `ends in ${Math.max(0, this.durationSeconds - elapsedSeconds)}s or on Ctrl-C`
      : 'Ctrl-C to stop and print';
    return `nodetrace: tracing ${this.describe}, ${elapsedSeconds}s elapsed (${ends})`;
  }

  start() {
    if (!this.stream.isTTY || this.timer) return;
    this.startedAt = Date.now();
    const draw = () => {
      const elapsed = Math.floor((Date.now() - this.startedAt) / 1000);
      this.stream.write('\r\x1b[K' + this.text(elapsed));
    };
    draw();
    this.timer = setInterval(draw, 1000);
    this.timer.unref();
  }

  stop() {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.stream.write('\r\x1b[K');
  }
}

module.exports = { StatusLine };
