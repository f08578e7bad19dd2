'use strict';
// The tracer run of `nodetrace http --source wire`: d-scripts/http-wire.bt
// (or .d, with --backend dtrace) on one process, which needs no preparation
// (no hook). Pure.
const { planTracer, readScript } = require('../tracer/plan');
const { stringLimitEnv, stringTrailerEnv, strCopiesLessOne } = require('../tracer/capabilities');
const { withoutOptional } = require('../tracer/template');

const WIRE_SCRIPT = 'http-wire';
// The bytes copied of a call that starts an HTTP message: a request line
// and the first headers. 200: the longest buffer bpftrace 0.17 copies (its
// BPF stack); the same on every tier, so the output is the same.
const PREFIX_BYTES = 200;

/**
 * -> the plan (lib/tracer/plan.js) that reads one process's HTTP off its
 *    sockets, and its HTTPS off its OpenSSL where `tls` (lib/http/tls-object.js
 *    findTlsObject: { file } or { why }) found one; without it, the program's
 *    @tls part is left out.
 */
function planWire(tracer, pid, tls = {}) {
  if (tracer.name === 'dtrace') return planWireDtrace(tracer, pid, tls);
  const o = {
    script: WIRE_SCRIPT,
    // No -p: the program filters every probe on PID in the kernel itself,
    // on every bpftrace (-p filters tracepoints only from 0.24, and there
    // would filter out the signal that stops the probes, below).
    // NUL_BYTE: where str(p, n) copies n - 1 bytes and a NUL, one more is asked for.
    args: { PID: pid, NUL_BYTE: strCopiesLessOne(tracer) ? 1 : 0 },
    env: { ...stringLimitEnv(tracer, PREFIX_BYTES + (strCopiesLessOne(tracer) ? 1 : 0)), ...stringTrailerEnv(tracer) },
    output: 'json',
    describe: `HTTP on the sockets of PID ${pid}`,
    target: { pid },
    // As http-batched.bt's (lib/http/plan.js): the probes stopped first, both
    // sets of maps printed, then bpftrace ended, which drops what it has not
    // printed when its end signal arrives.
    quiesce: { signal: 'SIGURG', line: 'Tracing stopped.' },
  };
  if (tls.file) {
    o.args.TLS_FILE = tls.file;
  } else {
    o.without = ['tls'];
    o.programText = withoutOptional(readScript(WIRE_SCRIPT, tracer.name), 'tls', 'the @tls part left out: no OpenSSL found in the process');
  }
  return planTracer(tracer, o);
}

// http-wire.d: its events printed as they come, length-prefixed (output
// 'wire'); DTrace prints what it holds at its one SIGTERM, so no quiesce.
// Its @tls part names no file: the pid provider finds SSL_read and
// SSL_write in whichever of the process's objects defines them; left out
// where none does (a pid-provider probe that matches nothing does not compile).
function planWireDtrace(tracer, pid, tls) {
  const o = {
    script: WIRE_SCRIPT,
    args: { PID: pid },
    output: 'wire',
    describe: `HTTP on the sockets of PID ${pid}`,
    target: { pid },
  };
  if (!tls.file) {
    o.without = ['tls'];
    o.programText = withoutOptional(readScript(WIRE_SCRIPT, tracer.name), 'tls', 'the @tls part left out: no OpenSSL found in the process');
  }
  return planTracer(tracer, o);
}

module.exports = { WIRE_SCRIPT, PREFIX_BYTES, planWire };
