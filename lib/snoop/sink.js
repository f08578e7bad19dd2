'use strict';
// Where snooped records go: bunyan's own CLI (for its output modes), or
// stdout as raw JSON lines (--json).
//
// Why a `bunyan` child process rather than bunyan's code in this process:
// node_modules/bunyan/bin/bunyan exports nothing (its emitRecord() and
// friends are private to the script), and merely loading it installs
// process-wide SIGINT/SIGTERM/SIGHUP and uncaughtException handlers that call
// process.exit(), which would fight the tracer session's own signal handling.
// Copying its ~350 lines of formatting would drift from the bunyan users
// have. Piping records to it is what `bunyan -p` itself does (dtrace | its
// line handler), keeps every output mode, colour rule (colour only when its
// stdout is a terminal) and time format exactly bunyan's, and costs one
// process. It runs with argv only (no shell), in its own session, so that the
// terminal's Ctrl-C reaches the tracer and us but not it: it prints
// everything the tracer flushed after Ctrl-C, then exits at end of input.
const { spawn } = require('child_process');
const { EventEmitter } = require('events');

function bunyanCli() {
  return require.resolve('bunyan/bin/bunyan');
}

// bunyan's -o values.
const OUTPUT_MODES = /^(long|short|simple|inspect|bunyan|json(-[0-9]+)?)$/;

function bunyanArgs({ output = 'long', color } = {}) {
  const args = [bunyanCli(), '-o', output];
  if (color === true) args.push('--color');
  if (color === false) args.push('--no-color');
  return args;
}

// Lines are batched per turn of the event loop (one write, not one syscall
// per record). write() returns false while the output is full; 'drain' says
// when it takes more; 'closed' says whatever reads it went away (EPIPE:
// `| head`, a closed pager) or, for bunyan, that bunyan exited.
class LineSink extends EventEmitter {
  constructor(stream) {
    super();
    this.stream = stream;
    this.lines = [];
    this.scheduled = false;
    this.blocked = false;
    this.closed = false;
    this.stream.on('error', (err) => this.fail(err));
    this.stream.on('drain', () => {
      this.blocked = false;
      this.emit('drain');
    });
  }

  fail(err) {
    if (this.closed) return;
    this.closed = true;
    this.emit('closed', err);
  }

  write(line) {
    if (this.closed) return true;
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return !this.blocked;
  }

  flush() {
    this.scheduled = false;
    if (!this.lines.length || this.closed) return;
    const text = this.lines.join('\n') + '\n';
    this.lines = [];
    if (!this.stream.write(text)) this.blocked = true;
  }
}

class BunyanSink extends LineSink {
  constructor(opts = {}) {
    const args = bunyanArgs(opts);
    const child = spawn(process.execPath, args, {
      stdio: ['pipe', opts.stdout || 'inherit', opts.stderr || 'inherit'],
      detached: true,
    });
    super(child.stdin);
    this.args = args;
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.on('error', (err) => { this.fail(err); resolve(null); });
      child.on('exit', (code) => {
        this.fail(null);
        resolve(code);
      });
    });
  }

  // Ends input and waits for bunyan to print the rest and exit.
  end() {
    this.flush();
    if (!this.closed) {
      this.closed = true;   // its exit is expected now, not news
      this.child.stdin.end();
    }
    return this.exited;
  }
}

class JsonSink extends LineSink {
  constructor({ stdout = process.stdout } = {}) {
    super(stdout);
  }

  end() {
    this.flush();
    return new Promise((resolve) => {
      const closed = this.closed;
      this.closed = true;
      if (closed || this.stream.writableLength === 0) return resolve(0);
      this.stream.once('drain', () => resolve(0));
      this.stream.once('error', () => resolve(0));
    });
  }
}

function createSink(outputMode, opts = {}) {
  return outputMode === 'raw' ? new JsonSink(opts) : new BunyanSink({ ...opts, output: outputMode });
}

module.exports = { createSink, BunyanSink, JsonSink, bunyanArgs, bunyanCli, OUTPUT_MODES };
