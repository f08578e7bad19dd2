'use strict';
// Every program nodetrace can make from a d-scripts/*.bt file, as the plans
// (lib/tracer/plan.js) its own planners make for one bpftrace, and a way to
// compile a plan's program with a real bpftrace without loading or
// attaching anything (lib/tracer/capabilities.js compileOnlyArgs): for
// test/programs-compile.test.js, which compiles each on every bpftrace tier.
//
// What the planners need is real: a Node process (the host's node, whose
// static binary has every probe point) started with nodetrace's provider, so
// that it maps bunyan's, nodetrace's HTTP and async probe libraries; the node
// binary for -c; sqlite3's add-on. Plans the planners make only for some
// builds (the @pool part left out for a libuv without symbols) are made
// from the same functions with those symbols taken away.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { planTracer, readScript, SCRIPT_DIR } = require('../../lib/tracer/plan');
const { withoutOptional, instantiateSlot } = require('../../lib/tracer/template');
const { compileOnlyArgs, stringLimitEnv, usdtPathForPid } = require('../../lib/tracer/capabilities');
const { findProbePoints, POOL } = require('../../lib/latency/probe-points');
const { latencyProgram } = require('../../lib/latency/program');
const latency = require('../../lib/commands/latency');
const gc = require('../../lib/commands/gc');
const asyncCommand = require('../../lib/commands/async');
const loop = require('../../lib/commands/loop');
const profile = require('../../lib/commands/profile');
const { planSnoop } = require('../../lib/snoop/plan');
const { planHttp } = require('../../lib/http/plan');
const { planWire } = require('../../lib/http/wire-plan');
const { findTlsObject } = require('../../lib/http/tls-object');
const { planEbadf } = require('../../lib/ebadf/program');
const { LINUX_ERRNO } = require('../../lib/ebadf/errno');
const { planProbes } = require('../../lib/probes/program');
const { processProbes } = require('../../lib/probes/inventory');
const { libraryFor } = require('../../lib/usdt/paths');
const store = require('../../lib/usdt/store');
const { kindOf } = require('../../lib/usdt/definition');

const ROOT = path.join(__dirname, '..', '..');
const ADDON = path.join(ROOT, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
const errno = (name) => ({ name, number: LINUX_ERRNO[name] });
// A tracer object for planning as that version would (the binary compiling is another matter).
const bpftraceOf = (version, file = '/usr/bin/bpftrace') => ({ name: 'bpftrace', path: file, version, versionParts: null });

/**
 * The variants of every .bt file for `tracer`, each { name, plan }.
 * @param {object} tracer  from lib/tracer/detect.js (its version decides what the planners choose)
 * @param {object} ctx     { pid: a node process mapping bunyanLib and httpLib, bunyanLib, httpLib }
 */
function bpftraceVariants(tracer, { pid, bunyanLib, httpLib }) {
  const out = [];
  const add = (name, plan) => out.push({ name, plan });
  const p = String(pid);
  const command = `${process.execPath} ${path.join(ROOT, 'test', 'targets', 'sqlite-loop.js')}`;

  // latency: as it runs, with --paths --hosts, with -c (cpid); without the
  // pool's symbols (@pool and @names left out), alone and with -c; each
  // optional part left out alone.
  add('latency -p', latency.plan({ pid: p }, tracer));
  add('latency -p --paths --hosts', latency.plan({ pid: p, paths: true, hosts: true }, tracer));
  add('latency -p --prometheus', latency.plan({ pid: p, prometheus: '0' }, tracer));
  add('latency -c', latency.plan({ command }, tracer));
  const points = findProbePoints(pid).points;
  const noPool = Object.fromEntries(Object.entries(points).filter(([name]) => !POOL.includes(name)));
  const fromProgram = (program, extra = {}) => planTracer(tracer, {
    script: program.script, pid, args: program.args, without: program.without, programText: program.programText,
    extra: program.extra, ...extra,
  });
  add('latency -p, libuv without pool symbols', fromProgram(latencyProgram(noPool, { pid })));
  add('latency -c, libuv without pool symbols', fromProgram(latencyProgram(noPool, { pid: 0, cpid: true }), { pid: undefined, command, outputFile: 'out' }));
  // @names alone: its arguments stay, unused. (@pool cannot go without
  // @names, part of which it holds: pool.alone, below, does not compile.)
  add('latency, @names alone left out', latencyWithout(tracer, pid, points, ['names']));

  // The article's way (bench/latency-overhead.js runs it, not the CLI): as its header says.
  add('addon-latency-every-function', planTracer(tracer, {
    script: 'addon-latency-every-function', pid, args: { NODE_FILE: `/proc/${pid}/exe`, ADDON },
  }));

  add('gc -p (IncrementalMarking::Step filled in)', gc.plan({ pid: p }, tracer));
  add('gc -p --prometheus', gc.plan({ pid: p, prometheus: '0' }, tracer));
  // The target has the register hook: the @hook part in, unless --no-hook.
  add('async -p (the register hook: @hook)', asyncCommand.plan({ pid: p }, tracer));
  add('async -p --stacks (the register hook: @hook)', asyncCommand.plan({ pid: p, stacks: true }, tracer));
  add('async -p --no-hook', asyncCommand.plan({ pid: p, hook: false }, tracer));
  add('async -p --stacks --no-hook', asyncCommand.plan({ pid: p, stacks: true, hook: false }, tracer));
  add('async -p --prometheus', asyncCommand.plan({ pid: p, prometheus: '0' }, tracer));
  add('loop -p --stacks', loop.plan({ pid: p, over: '100ms', stacks: true }, tracer));
  add('loop -p --prometheus', loop.plan({ pid: p, over: '100ms', prometheus: '0' }, tracer));
  add('profile -p (JavaScript frames from V8\'s metadata: profile-js.bt)', profile.plan({ pid: p, frequency: 99 }, tracer));
  // The stacks kept by the program itself (profile plans it on 0.17-0.20,
  // capabilities.js walksUserStacks), on every tier: by hand it runs on any.
  // And each way on this tier: the script as it is (both, the walk dead)
  // and without the walk's part (as 0.21 on plan it).
  const jsArgs = { HZ: 99, PID: pid, SHARED: 24, CODE: 48 };
  const profileJs = readScript('profile-js', 'bpftrace');
  add('profile -p, the user stacks walked (WALK slot)', planTracer(tracer, { script: 'profile-js', args: jsArgs,
    programText: instantiateSlot(profileJs, 'WALK', '#define WALK_USER_STACK 1') }));
  add('profile -p, profile-js.bt as it is', planTracer(tracer, { script: 'profile-js', args: jsArgs }));
  add('profile -p, ustack (the walk\'s part left out)', planTracer(tracer, { script: 'profile-js', args: jsArgs,
    programText: withoutOptional(profileJs, 'walk'), without: ['walk'] }));
  add('profile -p --no-v8-frames (profile.bt)', profile.plan({ pid: p, frequency: 99, v8Frames: false }, tracer));
  add('profile -c (cpid; its executable\'s V8: profile-js.bt)', profile.plan({ command, frequency: 99 }, tracer));
  add('profile -c --no-v8-frames (cpid; profile.bt)', profile.plan({ command, frequency: 99, v8Frames: false }, tracer));
  add('profile --off-cpu -p --all-threads', profile.plan({ pid: p, offCpu: true, allThreads: true }, tracer));
  add('profile --off-cpu -c (cpid, SHARED)', profile.plan({ command, offCpu: true }, tracer));
  // V8 13 and 14 (leap-tiering): each frame's code through the dispatch
  // table, as official Node 24.11.0 (the isolate group's, at an address)
  // and 26.10.0 (the thread's isolate's, below its thread pointer) plan it
  // (test/fixtures/v8-dispatch-table.json); the host's node plans neither.
  const leap = {
    'V8 13.6': { SHARED: 32, CODE: 24, DISPATCH_AT: 0x3268, DISPATCH_ROOT: 0x6e99908, DISPATCH_TLS: 0, DISPATCH_SHIFT: 8 },
    'V8 14.6': { SHARED: 32, CODE: 24, DISPATCH_AT: 0x268, DISPATCH_ROOT: 0, DISPATCH_TLS: 0x178, DISPATCH_SHIFT: 8 },
  };
  for (const [v8, js] of Object.entries(leap)) {
    add(`profile -p, ${v8}'s dispatch table (profile-js.bt)`, planTracer(tracer, { script: 'profile-js', args: { HZ: 99, PID: pid, ...js } }));
    add(`profile --off-cpu -p, ${v8}'s dispatch table`, planTracer(tracer, { script: 'offcpu', args: { PID: pid, ALL: 1, ...js } }));
    add(`loop -p --stacks, ${v8}'s dispatch table`, planTracer(tracer, { script: 'loop', args: { PID: pid, OVER_US: 100000, STACKS: 1, TID: pid, ...js } }));
  }

  for (const mode of ['stop', 'abort']) {
    const o = { tracer, mode, errnos: [errno('EBADF')], count: 1 };
    add(`ebadf ${mode} -p`, planEbadf({ ...o, pid, syscalls: ['close'] }));
    add(`ebadf ${mode} --name, --syscall close,dup2, four errnos (PROBES filled in)`,
      planEbadf({ ...o, name: 'node', syscalls: ['close', 'dup2'], errnos: ['EBADF', 'EPIPE', 'EIO', 'EINTR'].map(errno) }));
  }

  // snoop: the script this version gets (log-snoop-whole.bt from 0.23),
  // and the other one as the version that gets it plans it, so that each
  // file compiles everywhere.
  const bunyan = { kind: 'pids', pids: [pid], libraries: [bunyanLib], describe: `PID ${pid}` };
  const everyBunyan = { kind: 'all', pids: [], libraries: [bunyanLib], describe: 'every process' };
  const scripts = new Set();
  for (const planner of [tracer, bpftraceOf('0.17.0', tracer.path), bpftraceOf('0.23.2', tracer.path)]) {
    const script = planSnoop(planner, bunyan, 40).script;
    if (scripts.has(script)) continue;
    scripts.add(script);
    add(`snoop PID -l warn (${script}, as ${planner.version} plans it)`, planSnoop(planner, bunyan, 40));
    add(`snoop '*' (${script}, as ${planner.version} plans it)`, planSnoop(planner, everyBunyan, 10));
  }

  const http = { kind: 'pids', pids: [pid], libraries: [httpLib], describe: `PID ${pid}` };
  add('http -p', planHttp(tracer, http, 0));
  add('http \'*\' --slower-than 100', planHttp(tracer, { kind: 'all', pids: [], libraries: [httpLib], describe: 'every process' }, 100000));
  // http.bt, kept for reading by eye (nodetrace runs http-batched.bt), with the same arguments.
  add('http.bt -p', planTracer(tracer, {
    script: 'http', pid, args: { LIBRARY: usdtPathForPid(tracer, pid, httpLib), PID: pid, MIN_US: 0 }, env: stringLimitEnv(tracer, 200),
  }));
  // The wire: with the process's OpenSSL (the host's node exports it), and without (@tls left out).
  const tls = findTlsObject(pid);
  if (!tls.file) throw new Error(`the compile test's node has no OpenSSL the wire can probe: ${tls.why}`);
  add('http --source wire -p (TLS in node)', planWire(tracer, pid, tls));
  add('http --source wire -p, no OpenSSL (@tls left out)', planWire(tracer, pid, {}));
  out.push(...probesVariants(tracer, { pid, httpLib }));
  return out;
}

// nodetrace probes (lib/probes/program.js): firings of the HTTP provider's
// probes (integers and strings), of a library's own note (unsigned
// integers: libstdc++'s, where the target maps one with notes), and of a
// probe with 12 arguments (past the sixth read from the stack before
// bpftrace 0.24); --count; --latency paired by an integer and by a string.
function probesVariants(tracer, { pid, httpLib }) {
  const out = [];
  const add = (name, plan) => out.push({ name, plan });
  const api = (library, provider, name, types) => ({ library, provider, name, kinds: types.map(kindOf), api: true });
  const httpTypes = ['int', 'int', 'char *', 'char *', 'char *'];
  const server = api(httpLib, 'nodetrace', 'http-server-request-done', httpTypes);
  const client = api(httpLib, 'nodetrace', 'http-client-request-done', httpTypes);
  const wideTypes = ['int', 'int32_t', 'char *', 'int', 'json', 'int', 'int', 'int32_t', 'char *', 'int', 'json', 'int'];
  const wide = libraryFor('nt_wide', [['twelve', ...wideTypes]]);
  const dir = path.dirname(httpLib);
  const wideLib = store.install(store.prepareDir({ dir, root: path.dirname(dir) }), wide.fileName, wide.bytes);
  const twelve = api(wideLib, 'nt_wide', 'twelve', wideTypes);
  const noted = (processProbes(pid) || { objects: [] }).objects.find((o) => !o.api && !o.refused && o.probes.length);
  const foreign = noted ? [{ ...noted.probes[0], library: noted.file }] : [];
  add('probes PID (lines: ints and strings, 12 arguments, a library\'s own note)', planProbes(tracer, { mode: 'lines', pids: [pid], probes: [server, client, twelve, ...foreign] }));
  add('probes PID --count', planProbes(tracer, { mode: 'count', pids: [pid], probes: [server, client, twelve, ...foreign] }));
  add('probes PID --latency (an integer key)', planProbes(tracer, { mode: 'latency', pids: [pid], key: 0, probes: [{ ...client, role: 'start' }, { ...server, role: 'end' }, { ...twelve, role: 'end' }] }));
  add('probes PID --latency --key 2 (a string key)', planProbes(tracer, { mode: 'latency', pids: [pid], key: 2, probes: [{ ...client, role: 'start' }, { ...server, role: 'end' }] }));
  add('probes \'*\' --latency --key 8 (past the sixth)', planProbes(tracer, { mode: 'latency', key: 8, probes: [{ ...twelve, role: 'start' }, { ...twelve, role: 'end' }] }));
  return out;
}

// The latency program with some of its optional parts left out, and every
// argument given (names read: 3).
function latencyWithout(tracer, pid, points, parts) {
  const full = latencyProgram(points, { pid, names: 3 });
  let text = readScript('addon-latency', 'bpftrace');
  for (const part of parts) text = withoutOptional(text, part);
  return planTracer(tracer, { script: 'addon-latency', pid, args: full.args, programText: text, env: stringLimitEnv(tracer, 128) });
}

// The plan's program as it would run: the file, or the instantiated text.
function programOf(plan) {
  return plan.programText !== null ? plan.programText : fs.readFileSync(plan.scriptFile, 'utf8');
}

/**
 * Compiles a plan's program with `tracer` (a bpftrace binary) and its own
 * arguments, environment and options, loading and attaching nothing.
 * Resolves { status, stderr, ms }.
 */
function compile(tracer, plan, { timeoutMs = 180000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-compile-'));
  for (const f of plan.files) fs.writeFileSync(path.join(dir, f.name), f.text, { mode: 0o600 });
  for (const l of plan.links) fs.symlinkSync(l.target, path.join(dir, l.name));
  const argv = plan.argv.map((a) => (typeof a === 'object' ? path.join(dir, a.temp) : a));
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(tracer.path, [...compileOnlyArgs(tracer), ...argv], {
      env: { ...process.env, ...plan.env }, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ status, signal, stderr, ms: Date.now() - started });
    });
  });
}

// The optional parts of a script (/* @NAME */ markers), each with the parts
// marked inside its blocks (leaving it out leaves out some of those too).
function partsOf(text) {
  const parts = new Map();
  const open = [];
  for (const line of text.split('\n')) {
    const m = /\/\* @([a-z]+)( begin| end)? \*\/\s*$/.exec(line);
    if (!m) continue;
    const [, name, edge] = m;
    if (!parts.has(name)) parts.set(name, new Set());
    for (const outer of open) if (outer !== name) parts.get(outer).add(name);
    if (edge === ' begin') open.push(name);
    if (edge === ' end') open.splice(open.lastIndexOf(name), 1);
  }
  return parts;
}

function bpftraceScripts() {
  return fs.readdirSync(SCRIPT_DIR).filter((f) => f.endsWith('.bt')).sort();
}

module.exports = { bpftraceVariants, latencyWithout, compile, programOf, partsOf, bpftraceScripts, bpftraceOf };
