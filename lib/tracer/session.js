'use strict';
// Runs one tracer process to completion: spawns it (never through a shell),
// notices when its probes are attached, ends it after a duration or on
// Ctrl-C/SIGTERM the way the tracer itself expects (so that it prints its
// aggregations), and hands back everything it printed.
const fs = require('fs');
const { spawn } = require('child_process');
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

// Collects a tracer's stderr into `errors`, a line at a time, leaving out
// NOISE. Returns a function to call once it has closed: it adds an
// unfinished last line.
function collectErrorLines(stream, errors) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    partial += chunk;
    let nl;
    while ((nl = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      if (!isNoise(line)) errors.push(line);
    }
  });
  return () => {
    if (partial && !isNoise(partial)) errors.push(partial);
    partial = '';
  };
}

// How long after our own SIGINT a terminal's Ctrl-C (which reaches the whole
// foreground process group, tracer included) should be left to work before we
// forward one ourselves: DTrace treats a second interrupt as "impatient" and
// skips printing.
const FORWARD_GRACE_MS = 1000;

// runTracer's resendEveryMs for a tracer: bpftrace may not hear the first
// signal (see endTrace); DTrace must not be told twice.
function resendEveryMsFor(tracerName) {
  return tracerName === 'bpftrace' ? 2000 : undefined;
}

/**
 * @param {object} o
 * @param {string} o.file tracer executable
 * @param {string[]} o.args argv for it
 * @param {number} [o.durationSeconds] end the trace this long after attach
 * @param {string} [o.describe] what is traced, for the status line
 * @param {function(string)} [o.onStdout] streaming consumer; when given, stdout is not accumulated
 * @param {object} [o.stdio] override stdio (e.g. to let a -c command share the terminal)
 * @param {string} [o.outputFile] the tracer's output is in this file, read when it exits, not on its stdout
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
    // The tracer writes its output to o.outputFile (bpftrace -o) when its
    // stdout belongs to a command it runs. bpftrace buffers that file whatever
    // -B says, so it is read once the tracer has exited, and the caller tells
    // readiness another way.
    const readyPoll = o.readyWhen ? setInterval(() => { if (!ready && o.readyWhen(child)) markReady(); }, 100) : null;
    if (!o.outputFile && child.stdout) {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', onOutput);
    }
    const finishErrors = child.stderr ? collectErrorLines(child.stderr, errors) : () => {};

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
      if (o.outputFile) onOutput(readIfThere(o.outputFile));
      clearInterval(readyPoll);
      cleanup();
      finishErrors();
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

function readIfThere(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    return ''; // the tracer failed before writing anything
  }
}

module.exports = { runTracer, resendEveryMsFor, READY_MARKER, END_MARKER, isNoise, collectErrorLines };
