'use strict';
// lib/status-line.js: what a terminal is shown while tracing and while the
// tracer stops; logs (not a terminal) get one line only.
const assert = require('assert');
const { StatusLine } = require('../lib/status-line');

function stream(isTTY) {
  return { isTTY, written: '', write(text) { this.written += text; } };
}

describe('StatusLine', function () {
  it('says on a terminal that the tracer is detaching once the end is asked for', function () {
    const out = stream(true);
    const line = new StatusLine(out, 'PID 42', 10);
    line.start();
    assert.match(out.written, /tracing PID 42, 0s elapsed \(ends in 10s or on Ctrl-C\)/);
    line.ending('bpftrace');
    // eslint-disable-next-line no-control-regex -- the status line is erased by ESC [K
    assert.match(out.written, /\r\x1b\[Knodetrace: stopping: bpftrace is detaching its probes$/);
    line.stop();
    assert(out.written.endsWith('\r\x1b[K'), 'the line is cleared at the end');
  });

  it('with a report printed before the detach: says the tracer prints it, clears the line for it, then says the detach goes on', function () {
    const out = stream(true);
    const line = new StatusLine(out, 'PID 42', 10);
    line.start();
    line.ending('bpftrace', { reporting: true });
    // eslint-disable-next-line no-control-regex -- the status line is erased by ESC [K
    assert.match(out.written, /\r\x1b\[Knodetrace: stopping: bpftrace is printing its report$/);
    line.clear();
    assert(out.written.endsWith('\r\x1b[K'), 'cleared before the report');
    out.written = '';
    line.detaching('bpftrace');
    assert.strictEqual(out.written, '\r\x1b[Knodetrace: report complete; bpftrace is detaching its probes');
    line.stop();
    assert(out.written.endsWith('\r\x1b[K'), 'the line is cleared at the end');
    const log = stream(false);
    const logged = new StatusLine(log, 'PID 42', 0);
    logged.start();
    logged.ending('bpftrace', { reporting: true });
    logged.clear();
    logged.detaching('bpftrace');
    logged.stop();
    assert.strictEqual(log.written, 'nodetrace: tracing PID 42 (Ctrl-C to stop and print)\n', 'a log gets its one line only');
  });

  it('prints one line to a log, and nothing more when the trace ends', function () {
    const out = stream(false);
    const line = new StatusLine(out, 'PID 42', 0);
    line.start();
    line.ending('bpftrace');
    line.stop();
    assert.strictEqual(out.written, 'nodetrace: tracing PID 42 (Ctrl-C to stop and print)\n');
  });

  it('prints another\'s line above the status line on a terminal, and as it is to a log', function () {
    const tty = stream(true);
    const line = new StatusLine(tty, 'PID 42', 0);
    line.start();
    tty.written = '';
    line.printAbove('talker: hello');
    assert.strictEqual(tty.written, '\r\x1b[Ktalker: hello\n\r\x1b[Knodetrace: tracing PID 42, 0s elapsed (Ctrl-C to stop and print)');
    line.stop();
    const log = stream(false);
    const logged = new StatusLine(log, 'PID 42', 0);
    logged.start();
    logged.printAbove('talker: hello');
    assert(log.written.endsWith(')\ntalker: hello\n'), log.written);
  });
});
