'use strict';
// What integration tests share: starting a target program and waiting for it
// to say it is ready, running bin/nodetrace as a user would, and skipping
// (with the reason) where this host cannot trace.
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { detectBpftrace, BPFTRACE_ENV } = require('../../lib/tracer/detect');
const { allPids, isRunning } = require('../../lib/proc');
const { readStat } = require('../../lib/proc/stat');

const ROOT = path.join(__dirname, '..', '..');

// Every process a test starts, so that a test that fails or times out
// leaves nothing running (call killStragglers() in afterEach).
const live = new Set();
function track(child) {
  live.add(child);
  child.on('exit', () => live.delete(child));
  if (child.pid && (child.spawnargs || []).includes('--perf-basic-prof')) perfMaps.add(`/tmp/perf-${child.pid}.map`);
  return child;
}

// Node never removes the perf map that --perf-basic-prof makes. The
// targets' maps go when the suite ends (not when a target exits: a trace
// still running may read its map then), each only if it is this user's
// regular file, so that a run of the suite leaves none behind in /tmp.
const perfMaps = new Set();
process.on('exit', () => {
  for (const file of perfMaps) {
    try {
      const st = fs.lstatSync(file);
      if (st.isFile() && st.uid === process.getuid()) fs.unlinkSync(file);
    } catch { /* none there */ }
  }
});
// A killed nodetrace's tracer dies with it (its parent-death signal), but
// the kernel detaches its uprobes first, each after RCU grace periods, slow
// on a busy host (docs/platforms.md, "Learned 2026-11-27"), and the next
// test's attach would wait behind that. So the tracers of a killed nodetrace
// are waited for (bounded) before the next test starts.
const dying = new Set();
const DYING_WAIT_MS = 120000;

const childPids = (ppid) => allPids().filter((pid) => (readStat(pid) || {}).ppid === ppid);

function killTracked(child) {
  if (child.pid) for (const pid of childPids(child.pid)) dying.add(pid);
  child.kill('SIGKILL');
}

// Called as a mocha hook (its `this`), it allows itself the wait.
async function killStragglers() {
  for (const child of live) killTracked(child);
  live.clear();
  if (this && typeof this.timeout === 'function' && dying.size) this.timeout(DYING_WAIT_MS + 10000);
  const until = Date.now() + DYING_WAIT_MS;
  while ([...dying].some(isRunning) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  dying.clear();
}
const NODETRACE = path.join(ROOT, 'bin', 'nodetrace');

function tracingUnavailableReason() {
  if (process.platform !== 'linux') return 'the integration tests run bpftrace on Linux';
  if (process.getuid() !== 0) return 'needs root to load kernel probes';
  // The bpftrace under test: the host's, or the tier NODETRACE_BPFTRACE names.
  const bpftrace = detectBpftrace();
  if (!bpftrace.available) {
    return process.env[BPFTRACE_ENV] ? bpftrace.reason + ' (make the tier with scripts/bpftrace-tier.sh)'
      : 'bpftrace is not installed (make test installs it)';
  }
  return null;
}

// Mocha: call in before(); skips the suite, saying why, where this host
// cannot trace (`also`: a further check of the suite's own, returning a
// reason or null). In CI nothing may be skipped: it fails instead.
function requireTracing(ctx, { also } = {}) {
  const reason = tracingUnavailableReason() || (also ? also() : null);
  if (!reason) return;
  if (process.env.CI) throw new Error('tracing tests cannot run in CI: ' + reason);
  console.log(`      skipped: ${reason}`);
  ctx.skip();
}

// Starts `node test/targets/<name>` and resolves once it printed "ready".
// `node`: another Node build's executable (test/support/node-builds.js);
// `args` go to node, `scriptArgs` after the script (words a name matches).
// What it printed up to then is the child's `startOutput`.
// `name`: a file of test/targets/, or an absolute path (a target built for the test).
function startTarget(name, { env = {}, args = [], scriptArgs = [], node = process.execPath } = {}) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(node, [...args, path.isAbsolute(name) ? name : path.join(ROOT, 'test', 'targets', name), ...scriptArgs], {
      env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${err}`)), 15000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => { err += c; });
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('ready')) { clearTimeout(timer); child.startOutput = out; resolve(child); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited (${code}) before ready: ${err}`)); });
  });
}

function stopTarget(child) {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

// Runs bin/nodetrace with args; resolves { code, signal, stdout, stderr }.
function nodetrace(args, { input, env = {}, timeoutMs = 60000, onSpawn } = {}) {
  return new Promise((resolve) => {
    const child = track(spawn(process.execPath, [NODETRACE, ...args], {
      env: { ...process.env, ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    }));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    if (input !== undefined) child.stdin.end(input);
    const timer = setTimeout(() => killTracked(child), timeoutMs);
    if (onSpawn) onSpawn(child);
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
  });
}

// A trace held to the target's own count over the same window: nodetrace
// runs without -d; when it says it is tracing (its window is open), the
// target is sent SIGUSR2 (its mark); SECONDS later, SIGUSR2 again and
// nodetrace SIGINT, as Ctrl-C. `truth(text)`: what the target said of the
// window, read from its stdout since the call (null until it has said it;
// waited for up to 10 s after nodetrace exits). Resolves nodetrace's
// { code, signal, stdout, stderr }, `truth`, and `tracerAtReport`: whether
// its tracer (its child) was still running when the report's first bytes
// came: a report printed before the probes are detached (bpftrace
// detaches them, then runs END and exits).
async function traceWindow(args, target, { seconds, timeoutMs, truth }) {
  let said = '';
  target.stdout.setEncoding('utf8');
  target.stdout.on('data', (c) => { said += c; });
  let tracerAtReport = null;
  const r = await nodetrace(args, {
    timeoutMs,
    onSpawn: (child) => {
      let marked = false;
      child.stderr.on('data', (c) => {
        if (marked || !/^nodetrace: tracing /m.test(c)) return;
        marked = true;
        target.kill('SIGUSR2');
        setTimeout(() => { target.kill('SIGUSR2'); child.kill('SIGINT'); }, seconds * 1000);
      });
      child.stdout.once('data', () => { tracerAtReport = childPids(child.pid).some(isRunning); });
    },
  });
  const until = Date.now() + 10000;
  while (truth(said) === null && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
  return { ...r, truth: truth(said), tracerAtReport };
}

/** `s` as a regular expression that matches it literally (a path in a pattern). */
function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Where V8 places a function of a file in test/targets/, as nodetrace names
 * it: `PATH:LINE:COLUMN`, the line of its `function NAME(` and the column
 * of that '(' (1-based), read from the file so that a target's edits never
 * leave a test behind. `dir`: the directory shown in its place (a
 * container's /app).
 */
function functionAt(target, name, dir = path.join(ROOT, 'test', 'targets')) {
  const lines = fs.readFileSync(path.join(ROOT, 'test', 'targets', target), 'utf8').split('\n');
  const line = lines.findIndex((l) => l.startsWith(`function ${name}(`));
  if (line < 0) throw new Error(`test/targets/${target} has no function ${name}`);
  return `${dir}/${target}:${line + 1}:${lines[line].indexOf('(') + 1}`;
}

module.exports = { ROOT, NODETRACE, functionAt, escapeRegExp, killStragglers, requireTracing, tracingUnavailableReason,
  startTarget, stopTarget, nodetrace, traceWindow };
