'use strict';
// The latency program (d-scripts/addon-latency.bt) for one process's probe
// points (./probe-points.js): its arguments by name (their table:
// lib/tracer/program-arguments.js), and the program itself where it
// differs from the script. `nodetrace latency` plans with it, and `doctor
// -p` prints its by-hand command from it. Pure but for reading the script.
const { readScript } = require('../tracer/plan');
const { instantiateSlot, withoutOptional, uprobesAtAddresses } = require('../tracer/template');
const { unseenPoolWork, WRAPPER, FS_WORK, GAI_WORK, NAPI, LIBUV } = require('./probe-points');

const SCRIPT = 'addon-latency';

// The pool's functions (libuv's statics), by the program's argument names.
const POOL_ARGUMENTS = Object.freeze({
  SUBMIT: 'uv__work_submit',
  FS_WORK: 'uv__fs_work',
  DNS_WORK: 'uv__getaddrinfo_work',
  NAME_WORK: 'uv__getnameinfo_work',
  RANDOM_WORK: 'uv__random_work',
  FS_DONE: 'uv__fs_done',
  DNS_DONE: 'uv__getaddrinfo_done',
  NAME_DONE: 'uv__getnameinfo_done',
  RANDOM_DONE: 'uv__random_done',
});

// Where a probe goes: the symbol's address in its file where known.
// bpftrace 0.17 reads a file's whole symbol table for each probe it finds by
// name, which on the large official binaries takes many seconds
// (docs/platforms.md, "bpftrace 0.17 attaches slowly").
function probeLocation(point) {
  return point.value !== undefined ? '0x' + point.value.toString(16) : point.location;
}

// The functions the program names itself (N-API's in NAPI_FILE, $1;
// libuv's exported ones in UV_FILE, $3), by argument: given by address
// too, as the rest, where every one's symbol value is known.
const NAMED_IN_PROGRAM = Object.freeze([['$1', NAPI], ['$3', LIBUV]]);

function namedAtAddresses(text, points) {
  let out = text;
  for (const [file, names] of NAMED_IN_PROGRAM) {
    if (!names.every((n) => points[n] && points[n].value > 0)) continue;
    out = uprobesAtAddresses(out, file, new Map(names.map((n) => [n, points[n].value])),
      `instantiated by nodetrace latency: each function by its address in ${file === '$1' ? 'NAPI_FILE' : 'UV_FILE'}, where bpftrace finds it at once`);
  }
  return out;
}

/**
 * @param {object} points  role -> point (./probe-points.js), none missing
 * @param {object} o
 * @param {number} o.pid       the traced process (0 with -c)
 * @param {boolean} [o.cpid]   -c: the program keeps bpftrace's cpid (the
 *                             command it starts) instead of PID
 * @param {number} [o.names]   which names to read (./report/named-kinds.js namesMask)
 * @param {boolean} [o.byName] the functions the script names, left by name:
 *                             the script as its file says, to run by hand
 *                             (doctor -p); slower for bpftrace 0.17 to attach
 * @returns {{script, args, without, programText, notes, unseen, extra, names}}
 *   programText: undefined where the script runs as it is. Without the
 *   pool's functions (a stripped libuv) the @pool and @names parts are left
 *   out and `unseen` says what is not seen; names are then 0.
 */
function latencyProgram(points, { pid, cpid = false, names = 0, byName = false }) {
  let text = cpid
    ? instantiateSlot(readScript(SCRIPT, 'bpftrace'), 'TARGET', '/pid == cpid/',
      'instantiated by nodetrace latency -c: the command\'s own process only')
    : undefined;
  const wrapper = points[WRAPPER] && points[WRAPPER].range;
  const args = {
    NAPI_FILE: points.napi_create_async_work.file,
    PID: pid,
    UV_FILE: points.uv_queue_work.file,
    QUEUE_WORK: probeLocation(points.uv__queue_work),
    QUEUE_DONE: probeLocation(points.uv__queue_done),
    WRAP_START: wrapper ? wrapper.start : 0,
    WRAP_END: wrapper ? wrapper.end : 0,
  };
  const notes = [];
  const unseen = unseenPoolWork(points);
  let without = [];
  if (unseen) {
    text = withoutOptional(text || readScript(SCRIPT, 'bpftrace'), 'pool',
      'instantiated by nodetrace latency: the @pool part left out, libuv\'s static functions have no symbols here');
    // Names are read where the pool's functions are probed: none here.
    text = withoutOptional(text, 'names', 'instantiated by nodetrace latency: the @names part left out with the @pool part');
    without = ['pool', 'names'];
    notes.push(unseen + (names ? ', so --paths and --hosts have nothing to name' : ''));
    names = 0;
  } else {
    for (const [name, fn] of Object.entries(POOL_ARGUMENTS)) args[name] = probeLocation(points[fn]);
    Object.assign(args, {
      FS_WORK_AT: points[FS_WORK].range.start,
      QUEUE_WORK_AT: points.uv__queue_work.range.start,
      DNS_WORK_AT: points[GAI_WORK].range.start,
      // 0 leaves the @names part idle (one test of a constant per operation).
      NAMES: names,
    });
  }
  // By address: bpftrace 0.17 searched node's symbol table for each of
  // these four by name (docs/performance.md, "How long a command keeps its
  // user waiting").
  if (!byName) {
    const script = text || readScript(SCRIPT, 'bpftrace');
    const addressed = namedAtAddresses(script, points);
    if (addressed !== script) text = addressed;
  }
  let extra = [];
  if (/^0x/.test(points.uv__queue_work.location)) {
    // bpftrace 0.17 attaches to an address outside every symbol only with
    // --unsafe; these addresses are function entries (pointers libuv stores).
    extra = ['--unsafe'];
    notes.push(`${points.uv__queue_work.object} is stripped: uv__queue_work at ${points.uv__queue_work.location}, `
      + `uv__queue_done at ${points.uv__queue_done.location} (${points.uv__queue_work.how.replace(/^address: /, '')})`);
  }
  return { script: SCRIPT, args, without, programText: text, notes, unseen: unseen ? notes[0] : null, extra, names };
}

module.exports = { SCRIPT, POOL_ARGUMENTS, latencyProgram, probeLocation };
