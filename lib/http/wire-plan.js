'use strict';
// The tracer run of `nodetrace http --source wire`: d-scripts/http-wire.bt
// (or .d, with --backend dtrace) on one process, which needs no preparation
// (no hook). Pure.
const { planTracer, readScript, BATCH_QUIESCE } = require('../tracer/plan');
const { stringLimitEnv, mapKeysEnv, mapKeysFor, stringTrailerEnv, strCopiesLessOne } = require('../tracer/capabilities');
const { withoutOptional, uprobesAtAddresses } = require('../tracer/template');
const { attachBoundMs } = require('../tracer/attach-bounds');
const { LIMITS } = require('../limits');

const WIRE_SCRIPT = 'http-wire';
// What the programs copy of a call (their PIECE, HEAD_BYTES, IOVECS;
// test/http-wire-unit.test.js holds them to these): PIECE_BYTES at a time,
// the longest string bpftrace 0.17 copies (its BPF stack holds
// BPFTRACE_STRLEN=200 at most, the NUL included: str(p, 200) gave 199
// bytes there, measured), the same on every tier, so the output is the
// same; a head up to HEAD_BYTES, and a piece of each of the first IOVECS
// of a writev (lib/limits.js says why).
const PIECE_BYTES = 199;
const HEAD_BYTES = LIMITS.WIRE_HEAD_BYTES;
const IOVECS = LIMITS.WIRE_IOVECS;
// Connections followed at once (the program's maps, and the reader's:
// lib/http/wire.js MAX_CONNECTIONS; lib/limits.js).
const MAP_KEYS = LIMITS.WIRE_CONNECTIONS;
// http-wire.d's array of connections by fd (FDS): a socket of a higher fd
// is said (EVENT.UNFOLLOWED) and counted, not read (lib/limits.js).
const DTRACE_FDS = LIMITS.WIRE_DTRACE_FDS;

// The program's maps that can fill (bpftrace drops an insert into a full one
// without a word), said by lib/render/map-full.js: @conn and the threads'
// pending calls (@call, @tcall) count the keys they did not keep
// (@full_conn, @full_call: the key read back after writing it); a batch
// (@ev0, @ev1) is full when printed with as many entries as keys. @more
// holds a call only while its exit runs: one per CPU at most.
function wireBoundedMaps(keys) {
  return [
    { map: '@conn', keys, what: 'connections followed at once', lost: 'their requests were not read', raise: null },
    { map: '@call', keys, what: 'threads making socket calls', lost: 'their calls were not read', raise: null },
    { map: '@ev0/@ev1', keys, what: 'socket calls of a 100 ms batch',
      lost: 'the connections they were on were not followed after them', raise: null },
  ];
}
// Processes read by one run beside the first (a cluster's workers): the
// program checks each PID in its filters, unrolled (no loops on 0.17).
const MORE_PIDS = 7;

/**
 * -> the plan (lib/tracer/plan.js) that reads one process's HTTP off its
 *    sockets, and its HTTPS off its OpenSSL where `tls` (lib/http/tls-object.js
 *    findTlsObject: { file } or { why }) found one; without it, the program's
 *    @tls part is left out. `parent`: a cluster's primary among the PIDs,
 *    whose children are read too, from their exec on.
 */
function planWire(tracer, pidOrPids, tls = {}, { parent = 0 } = {}) {
  const pids = [].concat(pidOrPids);
  const pid = pids[0];
  if (tracer.name === 'dtrace') return planWireDtrace(tracer, pid, tls);
  if (pids.length > 1 + MORE_PIDS) throw new Error(`http-wire.bt reads at most ${1 + MORE_PIDS} processes at once`);
  const who = pids.length === 1 ? `PID ${pid}` : `PIDs ${pids.join(', ')}`;
  const keys = mapKeysFor(MAP_KEYS);
  const o = {
    script: WIRE_SCRIPT,
    // No -p: the program filters every probe on PID in the kernel itself,
    // on every bpftrace (-p filters tracepoints only from 0.24, and there
    // would filter out the signal that stops the probes, below).
    // NUL_BYTE: where str(p, n) copies n - 1 bytes and a NUL, one more is asked for.
    // PARENT: a cluster's primary among them, whose workers forked anew are
    // read too (0: none).
    args: { PID: pid, NUL_BYTE: strCopiesLessOne(tracer) ? 1 : 0, MORE_PIDS: pids.slice(1), PARENT: parent },
    env: {
      // Room for the NUL: str(p, n) asks for n + 1 on 0.17, and is given n + 1 (NUL_BYTE) from 0.23.
      ...stringLimitEnv(tracer, PIECE_BYTES + 1),
      ...stringTrailerEnv(tracer),
      ...mapKeysEnv(tracer, keys),
    },
    details: { mapKeys: keys, boundedMaps: wireBoundedMaps(keys) },
    output: 'json',
    describe: `HTTP on the sockets of ${who}`,
    // One process: its exit ends the trace; of several, none does.
    target: pids.length === 1 ? { pid } : null,
    // As http-batched.bt's (lib/http/plan.js): the probes stopped first, both
    // sets of maps printed, then bpftrace ended, which drops what it has not
    // printed when its end signal arrives.
    quiesce: BATCH_QUIESCE,
    attachTimeoutMs: attachBoundMs(tracer, { command: 'httpWire' }),
  };
  if (tls.file) {
    o.args.TLS_FILE = tls.file;
    // By address where known: bpftrace 0.17 searches the file's whole
    // symbol table (node's, 100 MB) for each probe it finds by name.
    if (tls.addresses) {
      o.programText = uprobesAtAddresses(readScript(WIRE_SCRIPT, tracer.name), '$11', tls.addresses,
        'instantiated by nodetrace http: each OpenSSL function by its address in TLS_FILE, where bpftrace finds it at once');
    }
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

module.exports = {
  WIRE_SCRIPT, PIECE_BYTES, HEAD_BYTES, IOVECS, MAP_KEYS, DTRACE_FDS, MORE_PIDS, planWire, wireBoundedMaps,
};
