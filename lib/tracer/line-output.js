'use strict';
// Where a command's lines go: our stdout, with back-pressure. While stdout
// is full the tracers are not read (http's batch maps fill and the loss is
// counted; a tracer's output events are lost and it says how many), so
// nodetrace holds no more than what one read brings, however fast the
// traced processes fire (http's requests, probes' firings).
const { outputClosed } = require('./signals');

// generations(): the tracers whose output is read (each { session }).
class LineOutput {
  constructor(generations) {
    this.generations = generations;
    this.paused = false;
  }

  streams() {
    return this.generations().map((g) => g.session && g.session.child && g.session.child.stdout).filter(Boolean);
  }

  write(text) {
    if (outputClosed() || process.stdout.write(text) || this.paused || this.ending) return;
    this.paused = true;
    for (const s of this.streams()) s.pause();
    process.stdout.once('drain', () => this.resume());
  }

  // The trace is ending: the tracers are read to their end (a tracer whose
  // output is not read never gets to its END), whatever our stdout does.
  resume() {
    this.paused = false;
    for (const s of this.streams()) s.resume();
  }
}

module.exports = { LineOutput };
