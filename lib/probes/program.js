'use strict';
// The bpftrace program of `nodetrace probes`: one clause per probe traced,
// each reading that probe's arguments as its types say. Pure.
//
// A clause must be the probe's own: bpftrace refuses a program that reads an
// argument a probe does not have ("couldn't get argument 3"), and a char *
// must be copied in the probe, while the string lives. So the program is
// made from d-scripts/usdt-{probes,count,latency}.bt, whose @template PROBES
// slot takes the clauses made here, out of a fixed set of statements; all a
// target chose (a library's path, a provider's and a probe's names) reaches
// the program as arguments (lib/tracer/program-arguments.js), never as text:
// each clause names its probe `usdt:$L:$P:$N`, three arguments of its own.
//
// How an argument is read (kinds: lib/probes/inventory.js):
//   int, int32, uint   an integer (the note says its size and sign: bpftrace
//                      reads it so), printed with %ld, or %lu for uint
//   string, json       a char *: str() copies the NUL-terminated string
// bpftrace before 0.24 has arg0 to arg5 only ("x86_64 doesn't support
// arg6", 0.17 and 0.23 measured). lib/usdt's probe libraries put arguments
// 7 to 12 at 8(%rsp), 16(%rsp), ... (lib/usdt/elf.js, checked for every
// library by lib/probe-libraries/library-check.js): there they are read from the stack
// at the probe, as the note says. Another object's notes may put them
// anywhere: past the sixth, they are not read there (argumentsRead()).
const { planTracer } = require('../tracer/plan');
const { withoutOptional, instantiateSlot } = require('../tracer/template');
const { readScript } = require('../tracer/plan');
const { stringLimitEnv, stringTrailerEnv, readsLongStrings, quietMapHelperArgs, usdtArgsPastSixth } = require('../tracer/capabilities');
const { attachBoundMs } = require('../tracer/attach-bounds');

const SCRIPTS = Object.freeze({ lines: 'usdt-probes', count: 'usdt-count', latency: 'usdt-latency' });
const PID_SLOTS = 8;
// A string argument is copied whole up to this (0.17: its most, 200 bytes
// with the NUL; from 0.23, where strings live in maps, 1 KB). Longer ones
// come cut and are marked so (lib/probes/firings.js).
const SHORT_STRING_BYTES = 200;
const LONG_STRING_BYTES = 1024;
// Registers an argument is in before the stack, on x86-64.
const REGISTER_ARGUMENTS = 6;

const INTEGER = new Set(['int', 'int32', 'uint']);
const STRING = new Set(['string', 'json']);

function stringBytes(tracer) {
  return readsLongStrings(tracer, LONG_STRING_BYTES) ? LONG_STRING_BYTES : SHORT_STRING_BYTES;
}

/** How many of a probe's arguments a program reads on this tracer (the rest are said to be left out). */
function argumentsRead(tracer, probe) {
  const n = probe.kinds.length;
  if (n <= REGISTER_ARGUMENTS || usdtArgsPastSixth(tracer) || probe.api) return n;
  return REGISTER_ARGUMENTS;
}

// Argument i as an expression: argN, or (a lib/usdt library, before 0.24)
// its stack slot.
function argumentExpression(tracer, probe, i) {
  if (i < REGISTER_ARGUMENTS || usdtArgsPastSixth(tracer)) return `arg${i}`;
  const type = probe.kinds[i] === 'int32' ? 'int32' : STRING.has(probe.kinds[i]) ? 'uint64' : 'int64';
  return `*uptr((${type} *)(reg("sp") + ${8 * (i - REGISTER_ARGUMENTS + 1)}))`;
}

function pidFilter() {
  const more = [];
  for (let i = 2; i <= PID_SLOTS; i++) more.push(`pid == $${i}`);
  return `/$1 == 0 || pid == $1 || ${more.join(' || ')}/`;
}

// `usdt:$L:$P:$N` for clause k (from 0): its three arguments follow the PIDs.
function probeDescription(k) {
  const first = PID_SLOTS + 1 + 3 * k;
  return `usdt:$${first}:$${first + 1}:$${first + 2}`;
}

function clause(k, body) {
  return [probeDescription(k), pidFilter(), '{', ...body.map((l) => `\t${l}`), '}'].join('\n');
}

// One firing, as lines (d-scripts/usdt-probes.bt's OUTPUT): F with the
// integers, S per string.
function linesBody(tracer, probe, k) {
  const n = argumentsRead(tracer, probe);
  const ints = [];
  const strings = [];
  for (let i = 0; i < n; i++) {
    if (STRING.has(probe.kinds[i])) strings.push(i);
    else ints.push(i);
  }
  const formats = ints.map((i) => (probe.kinds[i] === 'uint' ? ' %lu' : ' %ld')).join('');
  const values = ints.map((i) => `, ${argumentExpression(tracer, probe, i)}`).join('');
  const body = ['$t = nsecs;', `printf("F ${k + 1} %d %d %lu${formats}\\n", pid, tid, $t${values});`];
  for (const i of strings) body.push(`printf("S ${k + 1} %d %d %lu ${i} %s\\n", pid, tid, $t, str(${argumentExpression(tracer, probe, i)}));`);
  return body;
}

// The key a latency pairs by: the argument, or its string.
function keyExpression(tracer, probe, key) {
  const e = argumentExpression(tracer, probe, key);
  return STRING.has(probe.kinds[key]) ? `str(${e})` : e;
}

function latencyBody(tracer, probe, key) {
  const k = keyExpression(tracer, probe, key);
  if (probe.role === 'start') return [`@start[pid, ${k}] = nsecs;`, '@starts[pid] = count();'];
  return [
    '@ends[pid] = count();',
    `$began = @start[pid, ${k}];`,
    'if ($began != 0) {',
    '\t$us = (uint64)(nsecs - $began) / 1000;',
    '\t@latency_us[pid] = hist($us);',
    '\t@latency_stats_us[pid] = stats($us);',
    '\t@latency_max_us[pid] = max($us);',
    `\tdelete(@start[pid, ${k}]);`,
    '}',
  ];
}

/** Why a latency cannot pair these probes by argument `key`, or null. */
function latencyKeyRefusal(tracer, probes, key) {
  const classes = new Set();
  for (const p of probes) {
    if (key >= p.kinds.length) return `${p.provider}:${p.name} has no argument ${key} (it has ${p.kinds.length})`;
    if (key >= argumentsRead(tracer, p)) return `${tracer.name} ${tracer.version} does not read argument ${key} of ${p.provider}:${p.name}`;
    classes.add(STRING.has(p.kinds[key]) ? 'string' : 'integer');
  }
  if (classes.size > 1) return `argument ${key} is a string in some of the probes and an integer in others`;
  return null;
}

/**
 * @param {object} tracer bpftrace
 * @param {object} o
 *   mode     'lines' | 'count' | 'latency'
 *   probes   [{ library (a path, or {temp}), provider, name, kinds, api, role ('start'|'end', latency) }]
 *   pids     the processes (up to PID_SLOTS; [] : every process mapping the libraries)
 *   pid      trace with -p PID (one process, libraries named as capabilities.usdtPathForPid says)
 *   key      latency: which argument pairs a start with its end
 *   sites    how many probe sites the clauses attach to (the attach bound)
 *   describe, notes
 */
function planProbes(tracer, { mode, probes, pids = [], pid, key = 0, sites = probes.length, describe = '', notes = [] }) {
  const script = SCRIPTS[mode];
  if (!script) throw new Error(`no program for mode ${mode}`);
  const bodies = probes.map((p, k) => {
    if (mode === 'count') return [`@count[pid, ${k + 1}] = count();`];
    if (mode === 'latency') return latencyBody(tracer, p, key);
    return linesBody(tracer, p, k);
  });
  let text = withoutOptional(readScript(script, 'bpftrace'), 'example');
  text = instantiateSlot(text, 'PROBES', bodies.map((b, k) => clause(k, b)).join('\n\n'));
  const slots = pids.slice(0, PID_SLOTS);
  const bytes = stringBytes(tracer);
  return planTracer(tracer, {
    script,
    programText: text,
    pid,
    args: {
      PID: slots[0] || 0,
      MORE_PIDS: slots.slice(1),
      PROBES: probes.map((p) => ({ LIBRARY: p.library, PROVIDER: p.provider, PROBE: p.name })),
    },
    env: mode === 'lines' ? { ...stringLimitEnv(tracer, bytes), ...stringTrailerEnv(tracer) } : stringLimitEnv(tracer, bytes),
    // A full map of latency's starts is counted, not warned of at each start.
    extra: mode === 'latency' ? quietMapHelperArgs(tracer) : [],
    output: 'json',
    describe,
    notes,
    // bpftrace compiles and attaches one program per probe site.
    attachTimeoutMs: attachBoundMs(tracer, { command: 'probes', sites }),
    details: { mode, probes, stringBytes: bytes, key },
  });
}

module.exports = { planProbes, argumentsRead, latencyKeyRefusal, stringBytes, SCRIPTS, PID_SLOTS, REGISTER_ARGUMENTS, INTEGER, STRING };
