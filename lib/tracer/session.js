'use strict';
// Runs one tracer process to completion: spawns it (never through a shell),
// notices when its probes are attached, ends it after a duration or on
// Ctrl-C/SIGTERM the way the tracer itself expects (SIGINT, so it prints its
// aggregations), and hands back everything it printed.
const { spawn } = require('child_process');
const { StatusLine } = require('../status-line');

// Both our D and bpftrace programs print this from BEGIN, i.e. once every
// probe is in place.
const READY_MARKER = 'Hit Ctrl-C to end.';

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
 * @param {object} [o.env] variables added to the tracer's environment
 * @param {function(child, endTrace)} [o.onReady] called once the probes are attached; endTrace() ends the trace as Ctrl-C does
 * @param {{quietMs?: number, everyMs?: number}} [o.repeatInterrupt] repeat SIGINT until the tracer ends
 *   (bpftrace): after quietMs without output, or every everyMs; SIGTERM at 60 s, SIGKILL at 75 s
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
    let escalation = null;
    let lastOutputAt = Date.now();
    const endTrace = () => {
      if (!running() || escalation) return;
      child.kill('SIGINT');
      // bpftrace 0.17 sometimes misses a SIGINT and runs on: say it again,
      // then insist. Not for DTrace, which takes a second SIGINT as
      // "impatient" and skips printing. And not while bpftrace is printing
      // its maps (it can spend seconds naming symbols first): a SIGINT then
      // cuts the output short. `quiet` repeats only after that long without
      // output; otherwise every `everyMs`.
      const repeat = o.repeatInterrupt;
      if (!repeat) return;
      const since = Date.now();
      let lastSignalAt = since;
      escalation = setInterval(() => {
        if (!running()) return clearInterval(escalation);
        const now = Date.now();
        if (now - since >= 75000) return child.kill('SIGKILL');
        if (now - since >= 60000) return child.kill('SIGTERM');
        const quietFor = now - Math.max(lastOutputAt, lastSignalAt);
        if (repeat.quietMs ? quietFor >= repeat.quietMs : now - lastSignalAt >= repeat.everyMs) {
          child.kill('SIGINT');
          lastSignalAt = now;
        }
      }, 500);
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

    if (child.stdout) {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk) => {
        lastOutputAt = Date.now();
        if (!ready && (stdout + chunk).includes(READY_MARKER)) markReady();
        if (o.onStdout) o.onStdout(chunk);
        else stdout += chunk;
        if (o.onStdout && !ready) stdout = (stdout + chunk).slice(-200);
      });
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
      cleanup();
      if (stderrBuf && !isNoise(stderrBuf)) errors.push(stderrBuf);
      resolve({ code, signal, stdout, errors, ready, interrupted, timedOut });
    });

    function cleanup() {
      status.stop();
      clearTimeout(durationTimer);
      clearTimeout(forwardTimer);
      clearInterval(escalation);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGHUP', onSignal);
    }
  });
}

module.exports = { runTracer, READY_MARKER, isNoise };
