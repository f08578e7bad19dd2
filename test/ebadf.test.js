'use strict';
// nodetrace ebadf against real processes, with the real tracer, as root:
// each test starts a small target (test/targets/ebadf-close.js or .py) that
// closes a descriptor twice, runs bin/nodetrace ebadf as a child process, and
// checks what it printed and what became of the target.
//
// Needs root, bpftrace and tracefs (mounted at /sys/kernel/tracing), gdb;
// skips with the reason otherwise. Cores (~700 MB each) go to temporary
// directories that are removed after each test.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const { detectBpftrace, findOnPath } = require('../lib/tracer/detect');
const { syscallEventsDir } = require('../lib/ebadf/syscalls');
const { procState } = require('../lib/ebadf/procstate');
const { safeText } = require('../lib/terminal-safe');
const { requireTracing } = require('./support/harness');
const { nodeBuilds, requireBuild } = require('./support/node-builds');

const ROOT = path.join(__dirname, '..');
const NODETRACE = path.join(ROOT, 'bin', 'nodetrace');
const TARGET_JS = path.join(__dirname, 'targets', 'ebadf-close.js');
const TARGET_PY = path.join(__dirname, 'targets', 'ebadf-close.py');
const FAKE_GCORE = path.join(__dirname, 'targets', 'ebadf-fake-gcore.sh');
const READY_TIMEOUT = 60000; // bpftrace takes seconds to attach on a busy host
// gdb writes V8's reserved (PROT_NONE) heap range into the core as zeros: a
// small node has VmSize ~710 MB, but only ~200 MB with --jitless. Tests that
// take real cores run the target jitless to keep them small and quick.
const SMALL_CORE = ['--jitless'];

function skipReason() {
  if (process.platform !== 'linux') return 'Linux only (bpftrace)';
  if (process.getuid() !== 0) return 'needs root';
  if (!detectBpftrace().available) return 'needs bpftrace';
  if (!syscallEventsDir()) return 'needs tracefs with syscall tracepoints (mount -t tracefs nodev /sys/kernel/tracing)';
  if (!findOnPath('gcore') || !findOnPath('gdb')) return 'needs gdb (gcore)';
  return null;
}

// A unique process name (comm, <= 15 chars) so that -n never matches anyone
// else's process on a shared host.
function uniqueName(prefix) {
  return (prefix + Math.random().toString(36).slice(2)).slice(0, 15);
}

function lineWaiter(stream) {
  const state = { text: '', waiters: [] };
  stream.setEncoding('utf8');
  stream.on('data', (d) => {
    state.text += d;
    state.waiters = state.waiters.filter((w) => {
      const m = w.re.exec(state.text);
      if (m) { clearTimeout(w.timer); w.resolve(m); }
      return !m;
    });
  });
  state.wait = (re, ms, what) => {
    const m = re.exec(state.text);
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const w = { re, resolve };
      w.timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what || re}; got:\n${state.text}`)), ms);
      state.waiters.push(w);
    });
  };
  return state;
}

function exited(child) {
  if (child.exitCode !== null
    || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([promise, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`timed out after ${ms} ms: ${what}`)), ms); })])
    .finally(() => clearTimeout(t));
}

const started = [];

function startTarget({ argv, env = {}, file = process.execPath }) {
  const child = spawn(file, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  const out = lineWaiter(child.stdout);
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { out.err = (out.err || '') + d; });
  return { child, out, exit: exited(child) };
}

function startNodeTarget(env = {}, { argv0File, nodeFlags = [] } = {}) {
  return startTarget({ argv: [...nodeFlags, TARGET_JS], env, file: argv0File || process.execPath });
}

function runNodetrace(args, { env = {} } = {}) {
  const child = spawn(NODETRACE, ['ebadf', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  return { child, out: lineWaiter(child.stdout), err: lineWaiter(child.stderr), exit: exited(child) };
}

async function waitFor(test, ms, what) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (test()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${ms} ms: ${what}`);
}

function tmpDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function coresIn(dir) {
  return fs.readdirSync(dir).filter((f) => f.startsWith('core.')).map((f) => path.join(dir, f));
}

// Where V8 said closeTwice starts ("at closeTwice LINE COLUMN", 0-based),
// as the walk names it (1-based).
function closerAt(targetOut) {
  const m = /^at closeTwice (\d+) (\d+)$/m.exec(targetOut);
  assert.ok(m, `the target said where closeTwice is:\n${targetOut}`);
  return `${Number(m[1]) + 1}:${Number(m[2]) + 1}`;
}

// The hit's stack names the function that closed the bad descriptor, with
// the file and the place V8 gives, below the native close: from the stopped
// process, the target started with no flag.
function assertNamesCloser(out, targetOut) {
  const at = closerAt(targetOut);
  assert.match(out, /stack {4}innermost first; walked in the stopped process, JavaScript frames named from V8's own metadata\n/,
    out);
  const stack = out.split('\n').filter((l) => /^ {6}\S/.test(l));
  const closer = stack.findIndex((l) => l.includes(`closeTwice (${TARGET_JS}:${at})  [JS`));
  assert.ok(closer > 0, `closeTwice at ${at} in:\n${out}`);
  // (Debian's libuv keeps no symbols for it: its address in libuv.)
  assert.ok(stack.slice(0, closer).some((l) => /uv_fs_close\+\d+|\(libuv\.so\.1[.\d]*\)$/.test(l)), `the native close above it:\n${out}`);
  assert.ok(stack.slice(closer + 1).some((l) => /^ {6}tick \(/.test(l)), `its caller below it:\n${out}`);
}

// `nodetrace stack CORE`, as ebadf printed it, run after the target has
// exited: the failing thread names closeTwice from the core alone.
function assertStackFromCore(ebadfOut, pid, targetOut) {
  assert.ok(procState(pid) === null, 'the target has exited');
  const line = /^ {2}nodetrace stack (.+?) {4}# every thread/m.exec(ebadfOut);
  assert.ok(line, `ebadf prints the stack command:\n${ebadfOut}`);
  const r = spawnSync(NODETRACE, ['stack', ...line[1].split(' '), '--json', '--thread', String(pid)], { encoding: 'utf8', timeout: 120000 });
  assert.strictEqual(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.strictEqual(j.pid, pid);
  const js = j.threads[0].frames.filter((f) => f.kind === 'js');
  const closer = js.find((f) => f.name === 'closeTwice');
  assert.ok(closer, r.stdout);
  assert.deepStrictEqual([closer.file, `${closer.line}:${closer.column}`], [TARGET_JS, closerAt(targetOut)]);
  assert.strictEqual(js[js.indexOf(closer) + 1].name, 'tick');
}

// A name a process may give itself (15 bytes: the kernel keeps no more)
// that, printed raw by a tracer, would end its hit's stack at once.
const FORGED_COMM = 'a\nEND pid=99999';

// The name the kernel kept, as the target said it (EBADF_COMM).
function commSaid(targetOut) {
  const m = /^comm ([0-9a-f]+)$/m.exec(targetOut);
  assert.ok(m, `the target said its name:\n${targetOut}`);
  return Buffer.from(m[1], 'hex').toString('utf8');
}

// The hit names the process as it named itself, escaped on its one line;
// its stack runs whole, from the failing call down to where the thread
// started, and no frame of it was taken for a line of the tracer's.
function assertNameIsData(nt, pid, comm) {
  const out = nt.out.text;
  assert.ok(out.includes(`process  PID ${pid} (${safeText(comm, { oneLine: true })}), thread ${pid}`), out);
  assert.ok(comm.includes('\n') && !out.includes(comm), `the name never raw:\n${out}`);
  const stack = out.split('\n').filter((l) => /^ {6}\S/.test(l));
  const close = stack.findIndex((l) => /uv_fs_close\+\d+/.test(l));
  assert.ok(close >= 0 && stack.slice(close + 1).some((l) => /\b(main|__libc_start_call_main|node::Start)\b/.test(l)),
    `the stack down to where the thread started:\n${out}`);
  assert.doesNotMatch(nt.err.text, /uv_fs_close|^END pid=/m, `no frame or END line among the messages:\n${nt.err.text}`);
}

// Never leave anything behind: resume and end what a test started, remove its directories.
function leaveNothingBehind(dirs) {
  for (const c of started.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      try { process.kill(c.pid, 'SIGCONT'); } catch { /* gone */ }
      try { c.kill('SIGKILL'); } catch { /* gone */ }
    }
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

describe('nodetrace ebadf @tracer (root, bpftrace, real processes)', function () {
  this.timeout(300000); // generous for very busy CI hosts; ~1 minute in all on an idle one
  const dirs = [];

  before(function () {
    requireTracing(this, { also: skipReason });
  });

  afterEach(() => leaveNothingBehind(dirs));

  it('-p PID: stops at the failing close(), saves an owner-only core that gdb loads, resumes the target @core', async () => {
    const cores = tmpDir('ebadf-cores-');
    dirs.push(cores);
    const t = startNodeTarget({ EBADF_ON_SIGNAL: '1', EBADF_SAY_WHERE: '1' }, { nodeFlags: SMALL_CORE });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const nt = runNodetrace(['-p', String(pid), '-o', cores]);
    await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
    t.child.kill('SIGUSR2');

    const { code } = await withTimeout(nt.exit, 150000, 'nodetrace to finish');
    assertNamesCloser(nt.out.text, t.out.text);
    const out = nt.out.text;
    assert.strictEqual(code, 0, `exit ${code}\nstdout:\n${out}\nstderr:\n${nt.err.text}`);
    assert.match(out, new RegExp(`hit 1 of 1 at \\d{4}-\\d\\d-\\d\\dT`));
    assert.match(out, new RegExp(`process  PID ${pid} \\(node\\), thread ${pid}`));
    assert.match(out, /call {5}close\(\) failed with EBADF \(errno 9/);
    assert.match(out, /uv_fs_close\+\d+ \(node\)/, 'the native stack, symbolized');
    assert.match(out, /node::fs::Close\(/, 'C++ names demangled');
    assert.doesNotMatch(out, /perf-basic-prof/, 'no advice to restart the target');
    assert.match(out, /stopped {2}[\d.]+ (ms|s)/);
    assert.match(out, new RegExp(`resumed  yes, PID ${pid} is running again`));
    assert.match(out, /Open the core:\n {2}nodetrace stack \S+core\.node\.\S+ {4}# every thread's JavaScript and native stack\n {2}gdb \S+ \S+core\.node\./);

    // The target carries on and finishes its work.
    const texit = await withTimeout(t.exit, 20000, 'target to finish');
    assert.deepStrictEqual(texit, { code: 0, signal: null });
    assert.match(t.out.text, /close failed: EBADF\n/);
    assert.match(t.out.text, /finished: \d+ ticks, 1 bad closes/);

    // One core, owner-only, named as reported, that gdb opens.
    const files = coresIn(cores);
    assert.strictEqual(files.length, 1, `cores: ${files}`);
    assert.ok(out.includes(files[0]), 'the report names the core file');
    const st = fs.statSync(files[0]);
    assert.strictEqual(st.mode & 0o777, 0o600);
    assert.ok(st.size > 10 * 1024 * 1024, `core size ${st.size}`);
    assert.deepStrictEqual(fs.readdirSync(cores).filter((f) => f.startsWith('.')), [], 'no temporary files left');
    const gdb = spawnSync('gdb', ['--batch', '-nx', '-iex', 'set debuginfod enabled off', '-ex', 'info threads', process.execPath, files[0]],
      { encoding: 'utf8', timeout: 90000 });
    assert.strictEqual(gdb.status, 0, gdb.stderr);
    assert.match(gdb.stdout, new RegExp(`LWP ${pid}\\b`), `gdb output:\n${gdb.stdout}\n${gdb.stderr}`);
    assert.doesNotMatch(gdb.stderr, /not a core dump|is truncated/);
    assertStackFromCore(out, pid, t.out.text);
  });

  it('--count 3: three hits, three cores, the target resumed after each', async () => {
    const cores = tmpDir('ebadf-cores-');
    dirs.push(cores);
    const t = startNodeTarget({ EBADF_ON_SIGNAL: '1', EBADF_TIMES: '3' }, { nodeFlags: SMALL_CORE });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const nt = runNodetrace(['-p', String(pid), '-o', cores, '--count', '3']);
    await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
    t.child.kill('SIGUSR2');

    const { code } = await withTimeout(nt.exit, 240000, 'nodetrace to finish');
    const out = nt.out.text;
    assert.strictEqual(code, 0, `exit ${code}\nstdout:\n${out}\nstderr:\n${nt.err.text}`);
    for (const n of [1, 2, 3]) assert.match(out, new RegExp(`hit ${n} of 3 at `), `hit ${n}:\n${out}`);
    assert.strictEqual(out.match(/resumed {2}yes/g).length, 3, out);
    const texit = await withTimeout(t.exit, 20000, 'target to finish');
    assert.deepStrictEqual(texit, { code: 0, signal: null });
    assert.match(t.out.text, /finished: \d+ ticks, 3 bad closes/);
    const files = coresIn(cores);
    assert.strictEqual(files.length, 3, `cores: ${files}`);
    for (const f of files) assert.ok(out.includes(f), `the report names ${f}`);
  });

  it('--abort: the target dies of SIGABRT at the failing close(); a name with a forged line ends nothing @core', async () => {
    // The target names itself with a newline and what the tracer prints
    // after a stack: its name is data, and its stack stays whole.
    const t = startNodeTarget({ EBADF_ON_SIGNAL: '1', EBADF_COMM: FORGED_COMM });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const comm = commSaid(t.out.text);
    const nt = runNodetrace(['-p', String(pid), '--abort']);
    await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
    t.child.kill('SIGUSR2');
    const texit = await withTimeout(t.exit, 30000, 'target to die');
    assert.deepStrictEqual(texit, { code: null, signal: 'SIGABRT' });
    assert.doesNotMatch(t.out.text, /close failed/, 'it died before seeing the error');
    const { code } = await withTimeout(nt.exit, 30000, 'nodetrace to finish');
    assert.strictEqual(code, 0, nt.err.text);
    assert.match(nt.out.text, /action {3}SIGABRT sent in the kernel/);
    assert.match(nt.out.text, new RegExp(`PID ${pid} is gone: killed by SIGABRT`));
    assert.match(nt.out.text, /uv_fs_close\+\d+ \(node\)/, 'the stack, though the process is gone');
    assertNameIsData(nt, pid, comm);
  });

  it('--syscall dup2,close --errno EPIPE,EBADF: the program instantiated from the script compiles and catches the second errno on the second call @core', async () => {
    const t = startNodeTarget({ EBADF_ON_SIGNAL: '1' });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const nt = runNodetrace(['-p', String(pid), '--abort', '--syscall', 'dup2,close', '--errno', 'EPIPE,EBADF']);
    await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
    assert.match(nt.err.text, /for dup2\(\), close\(\) failing with EPIPE or EBADF/);
    t.child.kill('SIGUSR2');
    const texit = await withTimeout(t.exit, 30000, 'target to die');
    assert.deepStrictEqual(texit, { code: null, signal: 'SIGABRT' });
    const { code } = await withTimeout(nt.exit, 30000, 'nodetrace to finish');
    assert.strictEqual(code, 0, nt.err.text);
    assert.match(nt.out.text, /call {5}close\(\) failed with EBADF/);
  });

  it('--name NAME: catches a process started after nodetrace attached @core', async () => {
    const cores = tmpDir('ebadf-cores-');
    dirs.push(cores);
    const name = uniqueName('ebt-');
    // The process name (comm) comes from the executed file's name.
    fs.symlinkSync(process.execPath, path.join(cores, name));
    const nt = runNodetrace(['--name', name, '-o', cores]);
    await nt.err.wait(/watching processes named /, READY_TIMEOUT, 'nodetrace to attach');
    const t = startNodeTarget({ EBADF_AFTER_TICKS: '3' }, { argv0File: path.join(cores, name), nodeFlags: SMALL_CORE });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const { code } = await withTimeout(nt.exit, 150000, 'nodetrace to finish');
    assert.strictEqual(code, 0, `stdout:\n${nt.out.text}\nstderr:\n${nt.err.text}`);
    assert.match(nt.out.text, new RegExp(`process  PID ${pid} \\(${name}\\)`));
    const texit = await withTimeout(t.exit, 20000, 'target to finish');
    assert.deepStrictEqual(texit, { code: 0, signal: null });
    assert.match(t.out.text, /finished:/);
    assert.strictEqual(coresIn(cores).length, 1);
  });

  it('--name NAME: catches a non-Node process with the same bug (Python)', async function () {
    // A real binary rather than a version manager's shell shim, when there is one.
    const python = ['/usr/bin/python3', '/usr/local/bin/python3'].find((f) => fs.existsSync(f)) || findOnPath('python3');
    if (!python) this.skip();
    const cores = tmpDir('ebadf-cores-');
    dirs.push(cores);
    const name = uniqueName('ebpy-');
    const nt = runNodetrace(['--name', name, '-o', cores]);
    await nt.err.wait(/watching processes named /, READY_TIMEOUT, 'nodetrace to attach');
    const t = startTarget({ file: python, argv: [TARGET_PY, name, '0.5'] });
    const pid = Number((await t.out.wait(/ready (\d+)/, 30000))[1]);
    const { code } = await withTimeout(nt.exit, 150000, 'nodetrace to finish');
    assert.strictEqual(code, 0, `stdout:\n${nt.out.text}\nstderr:\n${nt.err.text}`);
    assert.match(nt.out.text, new RegExp(`process  PID ${pid} \\(${name}\\)`));
    assert.match(nt.out.text, /\(libc\.so\.6\)/);
    assert.doesNotMatch(nt.out.text, /JavaScript/, 'no JavaScript notes for a non-Node process');
    const texit = await withTimeout(t.exit, 20000, 'python target to finish');
    assert.deepStrictEqual(texit, { code: 0, signal: null }, t.out.err);
    assert.match(t.out.text, /close failed: EBADF\nfinished: /);
  });

  it('a gcore that fails at dump time leaves the target running, and says why', async () => {
    const bin = tmpDir('ebadf-fakebin-');
    dirs.push(bin);
    fs.symlinkSync(FAKE_GCORE, path.join(bin, 'gcore'));
    const cores = tmpDir('ebadf-cores-');
    dirs.push(cores);
    // Here (no real core) the target also runs with the flags that name JavaScript frames.
    const t = startNodeTarget({ EBADF_ON_SIGNAL: '1' }, { nodeFlags: ['--perf-basic-prof', '--interpreted-frames-native-stack'] });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const nt = runNodetrace(['-p', String(pid), '-o', cores], { env: { PATH: `${bin}:${process.env.PATH}`, FAKE_GCORE_MODE: 'fail' } });
    await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
    t.child.kill('SIGUSR2');
    const { code } = await withTimeout(nt.exit, 60000, 'nodetrace to finish');
    assert.strictEqual(code, 1, nt.err.text);
    assert.match(nt.out.text,
      /core {5}NOT SAVED: gcore failed \(exit status 1\): fake gcore: .*No space left on device/);
    assert.match(nt.out.text, new RegExp(`resumed  yes, PID ${pid} is running again`));
    assert.match(nt.err.text, new RegExp(`the core of PID ${pid} could not be saved`));
    // Walked with V8's metadata; the perf map, there too, names the same.
    assert.match(nt.out.text, /closeTwice \(\S+ebadf-close\.js:\d+:\d+\) {2}\[JS/, 'the JavaScript function that closed twice');
    assert.match(nt.out.text, new RegExp(`/tmp/perf-${pid}\\.map names the [1-9]\\d* JavaScript frame\\(s\\) it has the same\\.`));
    const texit = await withTimeout(t.exit, 20000, 'target to finish');
    fs.rmSync(`/tmp/perf-${pid}.map`, { force: true }); // node never removes its perf map
    assert.deepStrictEqual(texit, { code: 0, signal: null });
    assert.deepStrictEqual(fs.readdirSync(cores), [], 'nothing left in the core directory');
  });

  it('a core directory that turns read-only before the hit: no core, the target runs on', async function () {
    const mnt = tmpDir('ebadf-ro-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4g', 'tmpfs', mnt]);
    if (mounted.status !== 0) { fs.rmdirSync(mnt); this.skip(); }
    try {
      const t = startNodeTarget({ EBADF_ON_SIGNAL: '1' });
      const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
      const nt = runNodetrace(['-p', String(pid), '-o', mnt]);
      await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
      assert.strictEqual(spawnSync('mount', ['-o', 'remount,ro', mnt]).status, 0);
      t.child.kill('SIGUSR2');
      const { code } = await withTimeout(nt.exit, 60000, 'nodetrace to finish');
      assert.strictEqual(code, 1, nt.err.text);
      assert.match(nt.out.text, /core {5}NOT SAVED: cannot write to .*EROFS/);
      assert.match(nt.out.text, /resumed {2}yes/);
      const texit = await withTimeout(t.exit, 20000, 'target to finish');
      assert.deepStrictEqual(texit, { code: 0, signal: null });
    } finally {
      spawnSync('umount', [mnt]);
      fs.rmdirSync(mnt);
    }
  });

  // Starts a target and nodetrace with a gcore that holds the target (gdb
  // attached: the middle of a dump), and triggers the hit.
  async function startMidDump() {
    const bin = tmpDir('ebadf-fakebin-');
    dirs.push(bin);
    fs.symlinkSync(FAKE_GCORE, path.join(bin, 'gcore'));
    const cores = tmpDir('ebadf-cores-');
    dirs.push(cores);
    const marker = path.join(bin, 'gcore.pid');
    const t = startNodeTarget({ EBADF_ON_SIGNAL: '1' });
    const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
    const nt = runNodetrace(['-p', String(pid), '-o', cores],
      { env: { PATH: `${bin}:${process.env.PATH}`, FAKE_GCORE_MODE: 'hold', FAKE_GCORE_MARKER: marker } });
    await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
    t.child.kill('SIGUSR2');
    // (Once the fake gcore has started: gdb also attaches before it, for the registers of the walk.)
    await waitFor(() => fs.existsSync(marker) && procState(pid) === 't', 30000, 'gdb to attach to the target');
    const gcorePid = Number(fs.readFileSync(marker, 'utf8'));
    return { t, pid, nt, cores, gcorePid };
  }

  it('nodetrace killed with SIGKILL mid-dump: the watchdog resumes the target within seconds', async () => {
    const { t, pid, nt, cores, gcorePid } = await startMidDump();
    nt.child.kill('SIGKILL');
    const killedAt = Date.now();
    // "Within a few seconds": ~10 ms on an idle host (the watchdog waits up
    // to 3 s for the tracer to go first); allow for a very busy one.
    const RESUME_BOUND_MS = 10000;
    await waitFor(() => !['T', 't'].includes(procState(pid)), RESUME_BOUND_MS, 'the target to run again after nodetrace was SIGKILLed');
    const resumedMs = Date.now() - killedAt;
    assert.ok(resumedMs < RESUME_BOUND_MS, `resumed after ${resumedMs} ms`);
    await waitFor(() => procState(gcorePid) === null, 5000, 'gcore (gdb) to be killed');
    await waitFor(() => /watchdog: nodetrace \(PID \d+\) went away/.test(nt.err.text), 5000, 'the watchdog to say what it did');
    // (The tracer may have exited on its own by then: it ends after its one hit.)
    assert.match(nt.err.text,
      /(killed the tracer \(PID \d+\); )?killed gcore \(process group \d+\) and removed its partial core; resumed PID \d+ with SIGCONT/);
    const texit = await withTimeout(t.exit, 20000, 'target to finish');
    assert.deepStrictEqual(texit, { code: 0, signal: null });
    assert.match(t.out.text, /finished:/);
    assert.deepStrictEqual(fs.readdirSync(cores), [], 'the partial core was removed');
  });

  it('Ctrl-C (SIGINT) mid-dump: gcore is abandoned, the target resumed at once, exit 1', async () => {
    const { t, pid, nt, cores, gcorePid } = await startMidDump();
    nt.child.kill('SIGINT');
    const { code, signal } = await withTimeout(nt.exit, 30000, 'nodetrace to finish after SIGINT');
    assert.strictEqual(code, 1, `${code} ${signal}\n${nt.err.text}\n${nt.out.text}`);
    assert.ok(!['T', 't'].includes(procState(pid)), 'target running when nodetrace exits');
    assert.strictEqual(procState(gcorePid), null, 'gcore (gdb) killed');
    assert.match(nt.out.text, /core {5}NOT SAVED: interrupted/);
    assert.match(nt.out.text, new RegExp(`resumed  yes, PID ${pid} is running again`));
    assert.match(nt.err.text, /could not be saved: interrupted/);
    const texit = await withTimeout(t.exit, 20000, 'target to finish');
    assert.deepStrictEqual(texit, { code: 0, signal: null });
    assert.deepStrictEqual(fs.readdirSync(cores), []);
  });

  it('refuses, before stopping anything, when the core would not fit', async function () {
    const mnt = tmpDir('ebadf-small-');
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt]).status !== 0) { fs.rmdirSync(mnt); this.skip(); }
    try {
      const t = startNodeTarget({ EBADF_ON_SIGNAL: '1' });
      const pid = Number((await t.out.wait(/ready (\d+)/, 10000))[1]);
      const nt = runNodetrace(['-p', String(pid), '-o', mnt]);
      const { code } = await withTimeout(nt.exit, 30000, 'nodetrace to refuse');
      assert.strictEqual(code, 1);
      assert.match(nt.err.text,
        /not enough room for a core: .* has [\d.]+ MB free, and a core of PID \d+ needs about [\d.]+ (MB|GB)/);
      assert.match(nt.err.text, /nothing was stopped/);
      assert.doesNotMatch(nt.err.text, /watching/);
    } finally {
      spawnSync('umount', [mnt]);
      fs.rmdirSync(mnt);
    }
  });

  it('errors: no such process (3), no filter (2), bad names (2)', async () => {
    const gone = runNodetrace(['-p', '4194000']);
    assert.strictEqual((await gone.exit).code, 3);
    assert.match(gone.err.text, /no process with PID 4194000 is running/);

    const none = runNodetrace([]);
    assert.strictEqual((await none.exit).code, 2);
    assert.match(none.err.text,
      /Give a process: a PID \(-p PID\), part of its command line, --container NAME, --pod NAME or --name NAME/);

    const sys = runNodetrace(['-p', '1', '--syscall', 'clsoe', '--dry-run']);
    assert.strictEqual((await sys.exit).code, 2);
    assert.match(sys.err.text, /unknown system call "clsoe".*did you mean close\?/);
    assert.match(sys.err.text, /bpftrace -l 'tracepoint:syscalls:sys_exit_\*'/);

    const err = runNodetrace(['-p', '1', '--errno', 'EBDAF', '--dry-run']);
    assert.strictEqual((await err.exit).code, 2);
    assert.match(err.err.text, /unknown errno name "EBDAF" \(did you mean EBADF\?\)/);
  });

  it('not root: says so, exit 1', async function () {
    const setpriv = findOnPath('setpriv');
    if (!setpriv) this.skip();
    const r = spawnSync(setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', NODETRACE, 'ebadf', '-p', '1'], { encoding: 'utf8', timeout: 30000 });
    assert.strictEqual(r.status, 1, r.stderr);
    assert.match(r.stderr, /nodetrace ebadf needs root privileges/);
  });
});

// Every Node build: the hit (the failing close(), the native stack, the
// target resumed), its JavaScript stack from the stopped process, the core
// saved (with its files where the target has a mount namespace of its own),
// and the same stack from the core after the process has exited, none
// started with any flag (--jitless only keeps the cores small). This
// machine's node: the suite above.
describe('nodetrace ebadf: JavaScript frames on every Node build @tracer', function () {
  this.timeout(300000);
  const dirs = [];
  before(function () {
    requireTracing(this, { also: skipReason });
  });
  afterEach(() => leaveNothingBehind(dirs));

  for (const build of nodeBuilds('all', { except: ['host'] })) {
    it(`${build.label}: stops at the failing close(), saves its core, resumes the target; the hit names the function that closed the bad descriptor, and so does its core`, async function () {
      requireBuild(this, build);
      const cores = tmpDir('ebadf-cores-');
      dirs.push(cores);
      const t = startNodeTarget({ EBADF_ON_SIGNAL: '1', EBADF_SAY_WHERE: '1' }, { nodeFlags: SMALL_CORE, argv0File: build.node });
      const pid = Number((await t.out.wait(/ready (\d+)/, 20000))[1]);
      const nt = runNodetrace(['-p', String(pid), '-o', cores]);
      await nt.err.wait(/watching PID \d+/, READY_TIMEOUT, 'nodetrace to attach');
      process.kill(pid, 'SIGUSR2');
      const { code } = await withTimeout(nt.exit, 150000, 'nodetrace to finish');
      assert.strictEqual(code, 0, `exit ${code}\nstdout:\n${nt.out.text}\nstderr:\n${nt.err.text}`);
      const out = nt.out.text;
      assert.match(out, /call {5}close\(\) failed with EBADF \(errno 9/);
      assert.match(out, new RegExp(`resumed  yes, PID ${pid} is running again`));
      if (build.shared) {
        // Debian's builds keep no frame pointers: the stack bpftrace walks
        // ends in libc (docs/platforms.md); the innermost frame is still named.
        assert.match(out, /stack {4}innermost first[^\n]*\n {6}\S+\+\d+ \(libc\.so\.6\)/, out);
      } else {
        assert.match(out, /uv_fs_close\+\d+ \(node\)/, 'the native stack, symbolized');
      }
      assertNamesCloser(out, t.out.text);
      assert.doesNotMatch(out, /perf-basic-prof/);
      const saved = fs.readdirSync(cores).filter((f) => f.startsWith('core.'));
      assert.strictEqual(saved.filter((f) => !f.endsWith('.root')).length, 1, saved.join(' '));
      if (build.shared) {
        // Its own mount namespace: its files (Debian's /usr/bin/node,
        // libnode.so.108) beside the core, and the gdb line uses them.
        assert.strictEqual(saved.filter((f) => f.endsWith('.root')).length, 1, saved.join(' '));
        assert.match(out, /^ {2}gdb -iex 'set sysroot \S+\.root' \S+\.root\/usr\/bin\/node \S+$/m);
      }
      await withTimeout(t.exit, 30000, 'target to finish');
      await waitFor(() => procState(pid) === null, 10000, 'the target to be gone');
      assertStackFromCore(nt.out.text, pid, t.out.text);
    });
  }
});
