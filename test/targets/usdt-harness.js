'use strict';
// Not a target: helpers shared by the test/usdt-*.test.js files to run
// targets (usdt-target.js, over IPC) and a real bpftrace next to them.

const { fork, spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const TARGET = path.join(__dirname, 'usdt-target.js');
// The bpftrace under test: NODETRACE_BPFTRACE's (a tier), else the PATH's.
const { detectBpftrace } = require('../../lib/tracer/detect');
const { stringLimitEnv } = require('../../lib/tracer/capabilities');
const BPFTRACE_FOUND = detectBpftrace();
const BPFTRACE = BPFTRACE_FOUND.path || 'bpftrace';
const ADDON = path.join(__dirname, '..', '..', 'build', 'Release', 'nodetrace_usdt.node');

// Why real-tracer tests cannot run here, or null.
function bpftraceUnavailable() {
  if (process.platform !== 'linux' || process.arch !== 'x64') return 'needs Linux on x86-64';
  if (process.getuid() !== 0) return 'needs root to run bpftrace';
  try {
    execFileSync(BPFTRACE, ['--version'], { stdio: 'ignore', timeout: 10000 });
  } catch {
    return BPFTRACE_FOUND.reason || 'bpftrace is not installed';
  }
  if (!fs.existsSync(ADDON)) return 'the native addon is not built (node scripts/build-native.js)';
  if (!fs.existsSync('/sys/kernel/tracing/uprobe_events') && !fs.existsSync('/sys/kernel/debug/tracing/uprobe_events')) {
    try { execFileSync('mount', ['-t', 'tracefs', 'nodev', '/sys/kernel/tracing'], { stdio: 'ignore' }); } catch { /* below */ }
    if (!fs.existsSync('/sys/kernel/tracing/uprobe_events')) return 'tracefs is not mounted';
  }
  return null;
}

// A private directory for probe libraries (NODETRACE_USDT_DIR), fresh per
// test file so runs do not see each other's files.
function tempRoot(tag) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `nodetrace-${tag}-`));
}

class Target {
  constructor(child) {
    this.child = child;
    this.pid = child.pid;
    this.nextId = 1;
    this.pending = new Map();
    this.stderr = '';
    this.stdout = '';
    child.stderr.on('data', (d) => { this.stderr += d; });
    child.stdout.on('data', (d) => { this.stdout += d; });
    child.on('message', (m) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m); else p.reject(new Error('target: ' + m.error));
    });
    child.on('exit', (code, signal) => {
      this.exited = { code, signal };
      for (const p of this.pending.values()) p.reject(new Error(`target exited (${code}, ${signal}): ${this.stderr}`));
      this.pending.clear();
    });
  }

  static start({ env = {}, execArgv = [], script = TARGET, args = [] } = {}) {
    const child = fork(script, args, {
      env: { ...process.env, ...env },
      execArgv,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const t = new Target(child);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('target did not start: ' + t.stderr)), 20000);
      child.once('message', (m) => { if (m.ready) { clearTimeout(timer); resolve(t); } });
      child.once('exit', () => { clearTimeout(timer); reject(new Error('target died: ' + t.stderr)); });
    });
  }

  request(cmd, fields = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, cmd, ...fields });
    });
  }

  async stop() {
    if (this.exited) return;
    const done = new Promise((resolve) => this.child.once('exit', resolve));
    try { this.child.send({ id: 0, cmd: 'exit' }); } catch { /* gone */ }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await done;
    clearTimeout(timer);
  }
}

// Runs bpftrace and resolves once it printed "Attaching N probe(s)..." on
// stdout, i.e. once the probes are live.
function startBpftrace(args, { env = {}, timeout = 45000 } = {}) {
  const proc = spawn(BPFTRACE, args, {
    env: { ...process.env, ...(BPFTRACE_FOUND.available ? stringLimitEnv(BPFTRACE_FOUND, 100) : { BPFTRACE_STRLEN: '100' }), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const bt = {
    proc,
    stdout: '',
    stderr: '',
    exited: null,
    // Resolves when stdout matches `re` (polled as output arrives).
    waitFor(re, ms = 15000, { orStderr = false } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(bt.stdout) || (orStderr ? re.exec(bt.stderr) : null);
          if (m) { cleanup(); resolve(m); return true; }
          if (bt.exited) { cleanup(); reject(new Error(`bpftrace exited: ${bt.stderr}\n${bt.stdout}`)); return true; }
          return false;
        };
        const timer = setTimeout(() => { cleanup(); reject(new Error(`timed out waiting for ${re}: ${bt.stdout}\n${bt.stderr}`)); }, ms);
        const onData = () => check();
        const cleanup = () => { clearTimeout(timer); proc.stdout.off('data', onData); proc.off('exit', onData); };
        proc.stdout.on('data', onData);
        proc.on('exit', onData);
        check();
      });
    },
    // SIGINT (bpftrace 0.17 now and then needs a second one), then SIGKILL.
    stop() {
      if (bt.exited) return Promise.resolve(bt.stdout);
      return new Promise((resolve) => {
        const again = setInterval(() => proc.kill('SIGINT'), 2000);
        const kill = setTimeout(() => proc.kill('SIGKILL'), 12000);
        proc.once('exit', () => { clearInterval(again); clearTimeout(kill); setImmediate(() => resolve(bt.stdout)); });
        proc.kill('SIGINT');
      });
    },
  };
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  proc.stdout.on('data', (d) => { bt.stdout += d; });
  proc.stderr.on('data', (d) => { bt.stderr += d; });
  proc.on('exit', (code, signal) => { bt.exited = { code, signal }; });
  process.once('exit', () => { if (!bt.exited) proc.kill('SIGKILL'); });
  // "Attaching N probes..." on stdout up to 0.23, "Attached N probes" on
  // stderr on 0.27.
  return bt.waitFor(/Attach(?:ing|ed) \d+ probes?/, timeout, { orStderr: true }).then(() => bt, (err) => {
    proc.kill('SIGKILL');
    throw err;
  });
}

function bpftraceList(args) {
  return execFileSync(BPFTRACE, args, { encoding: 'utf8', timeout: 30000, stdio: ['ignore', 'pipe', 'pipe'] });
}

// Polls until fn() resolves truthy.
async function eventually(fn, { timeout = 10000, interval = 100 } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, interval));
  }
}

module.exports = { Target, startBpftrace, bpftraceList, bpftraceUnavailable, tempRoot, eventually };
