'use strict';
// Runs one tracer process to completion: spawns it (never through a shell),
// notices when its probes are attached, ends it after a duration or on
// Ctrl-C/SIGTERM the way the tracer itself expects (so that it prints its
// aggregations), and hands back everything it printed.
const fs = require('fs');
const { spawn } = require('child_process');
const { StringDecoder } = require('string_decoder');
const { StatusLine } = require('../status-line');

// Both our D and bpftrace programs print this from BEGIN, i.e. once every
// probe is in place.
const READY_MARKER = 'Hit Ctrl-C to end.';
// And our bpftrace programs print this last thing in END: the trace is over
// and the tracer is about to print its maps.
const END_MARKER = 'Tracing ended.';
const MARKER_WINDOW = 64;
// A tracer still running this long after it was asked to end is stuck.
const GIVE_UP_MS = 90000;

// Lines tracers print on stderr that are not errors (bpftrace on hosts with a
// small RLIMIT_MEMLOCK; it works anyway on kernels that account BPF by memcg).
const NOISE = [/couldn't set RLIMIT_MEMLOCK/, /^\s*$/];

function isNoise(line) {
  return NOISE.some((re) => re.test(line));
}

// How long after our own SIGINT a terminal's Ctrl-C (which reaches the whole
// foreground process group, tracer included) should be left to work before we
// forward one ourselves: DTrace treats a second interrupt as "impatient" and
// skips printing.
const FORWARD_GRACE_MS = 1000;

/**
 * @param {object} o
 * @param {string} o.file tracer executable
 * @param {string[]} o.args argv for it
 * @param {number} [o.durationSeconds] end the trace this long after attach
 * @param {string} [o.describe] what is traced, for the status line
 * @param {function(string)} [o.onStdout] streaming consumer; when given, stdout is not accumulated
 * @param {object} [o.stdio] override stdio (e.g. to let a -c command share the terminal)
 * @param {string} [o.outputFile] read the tracer's output from this file instead of its stdout
 * @param {function(child): boolean} [o.readyWhen] polled: the probes are attached (besides READY_MARKER)
 * @param {object} [o.env] variables added to the tracer's environment
 * @param {function(child, endTrace)} [o.onReady] called once the probes are attached; endTrace() ends the trace as Ctrl-C does
 * @param {number} [o.resendEveryMs] (bpftrace) end with SIGTERM instead of SIGINT, and send it again
 *   this often until the program prints END_MARKER; SIGKILL if still running GIVE_UP_MS later
 * @param {NodeJS.WriteStream} [o.statusStream] where the status line goes (stderr)
 * @returns {Promise<{code:number|null, signal:string|null, stdout:string, errors:string[], ready:boolean, interrupted:boolean, timedOut:boolean}>}
 */
function runTracer(o) {
  return new Promise((resolve, reject) => {
    const child = spawn(o.file, o.args, {
      stdio: o.stdio || ['ignore', 'pipe', 'pipe'],
      env: o.env ? { ...process.env, ...o.env } : process.env,
    });
    const status = new StatusLine(o.statusStream || process.stderr, o.describe || '', o.durationSeconds);
    let stdout = '';
    let stderrBuf = '';
    const errors = [];
    let ready = false;
    let interrupted = false;
    let timedOut = false;
    let durationTimer = null;
    let forwardTimer = null;

    const running = () => child.exitCode === null && child.signalCode === null;
    let interruptSent = false;
    let ending = null;
    let endSeen = false;
    let tail = ''; // the end of stdout so far, to find markers split across chunks
    const endTrace = () => {
      if (!running() || interruptSent) return;
      interruptSent = true;
      if (!o.resendEveryMs) {
        child.kill('SIGINT');
        return;
      }
      // bpftrace: SIGTERM, which it handles exactly as SIGINT while tracing
      // but keeps ignoring while it prints its maps afterwards (a SIGINT
      // then, e.g. a terminal's Ctrl-C forwarded late, kills it mid-print).
      // And bpftrace (0.17 at least) loses such a signal when it lands while
      // it is not blocked in epoll_wait: the handler sets a flag that its
      // poll loop reads only when epoll_wait is interrupted. So say it again
      // until the END probe has printed END_MARKER, which our programs put
      // last in END, so that nothing END does is cut short.
      child.kill('SIGTERM');
      const since = Date.now();
      let lastSignalAt = since;
      ending = setInterval(() => {
        if (!running()) return clearInterval(ending);
        const now = Date.now();
        if (now - since >= GIVE_UP_MS) return child.kill('SIGKILL');
        if (!endSeen && now - lastSignalAt >= o.resendEveryMs) {
          child.kill('SIGTERM');
          lastSignalAt = now;
        }
      }, 250);
    };

    const markReady = () => {
      if (ready) return;
      ready = true;
      status.start();
      if (o.durationSeconds) {
        durationTimer = setTimeout(() => { timedOut = true; endTrace(); }, o.durationSeconds * 1000);
      }
      if (o.onReady) o.onReady(child, endTrace);
    };

    const onOutput = (chunk) => {
      const recent = tail + chunk;
      tail = recent.slice(-MARKER_WINDOW);
      if (!ready && recent.includes(READY_MARKER)) markReady();
      if (recent.includes(END_MARKER)) endSeen = true;
      if (o.onStdout) o.onStdout(chunk);
      else stdout += chunk;
      // Streaming: keep only what preceded readiness, to explain a failure.
      if (o.onStdout && !ready) stdout = (stdout + chunk).slice(-200);
    };
    // The tracer writes its output to o.outputFile (bpftrace -o, unbuffered)
    // when its stdout belongs to a command it runs: follow the file.
    const follower = o.outputFile ? followFile(o.outputFile, onOutput) : null;
    // bpftrace buffers a -o file whatever -B says, so the ready line shows
    // late there: the caller can tell readiness another way.
    const readyPoll = o.readyWhen ? setInterval(() => { if (!ready && o.readyWhen(child)) markReady(); }, 100) : null;
    if (!follower && child.stdout) {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', onOutput);
    }
    if (child.stderr) {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk) => {
        stderrBuf += chunk;
        let nl;
        while ((nl = stderrBuf.indexOf('\n')) >= 0) {
          const line = stderrBuf.slice(0, nl);
          stderrBuf = stderrBuf.slice(nl + 1);
          if (!isNoise(line)) errors.push(line);
        }
      });
    }

    const onSignal = (signal) => {
      interrupted = true;
      status.stop();
      if (signal === 'SIGINT' && process.stdin.isTTY) {
        forwardTimer = setTimeout(endTrace, FORWARD_GRACE_MS);
      } else {
        endTrace();
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onSignal);

    child.on('error', (err) => {
      cleanup();
      reject(err);
    });
    child.on('close', (code, signal) => {
      if (follower) follower.finish();
      clearInterval(readyPoll);
      cleanup();
      if (stderrBuf && !isNoise(stderrBuf)) errors.push(stderrBuf);
      resolve({ code, signal, stdout, errors, ready, interrupted, timedOut });
    });

    function cleanup() {
      status.stop();
      clearTimeout(durationTimer);
      clearTimeout(forwardTimer);
      clearInterval(ending);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGHUP', onSignal);
    }
  });
}

// Reads what is appended to `file` every FOLLOW_EVERY_MS, as text, to onText;
// finish() reads the rest and stops.
const FOLLOW_EVERY_MS = 100;
function followFile(file, onText) {
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.alloc(64 * 1024);
  let fd = null;
  const poll = () => {
    if (fd === null) {
      try { fd = fs.openSync(file, 'r'); } catch (err) { return; } // not created yet
    }
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      const text = decoder.write(buf.subarray(0, n));
      if (text) onText(text);
    }
  };
  const timer = setInterval(poll, FOLLOW_EVERY_MS);
  return {
    finish() {
      clearInterval(timer);
      poll();
      const rest = decoder.end();
      if (rest) onText(rest);
      if (fd !== null) fs.closeSync(fd);
    },
  };
}

module.exports = { runTracer, READY_MARKER, END_MARKER, isNoise };
