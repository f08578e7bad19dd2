'use strict';
// An unprivileged account made for a test and removed after it: the hostile
// local user of docs/security.md. Root only (useradd/userdel).
const fs = require('fs');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const NODETRACE = path.join(__dirname, '..', '..', 'bin', 'nodetrace');

function hostileUserUnavailableReason() {
  if (process.getuid() !== 0) return 'needs root to make an unprivileged account';
  for (const tool of ['/usr/sbin/useradd', '/usr/sbin/userdel']) if (!fs.existsSync(tool)) return `needs ${tool}`;
  return null;
}

class HostileUser {
  constructor() {
    this.name = `nthostile${process.pid % 100000}`;
    this.children = new Set();
  }

  create() {
    spawnSync('/usr/sbin/userdel', ['-r', this.name], { stdio: 'ignore' });   // a leftover of a killed run
    const r = spawnSync('/usr/sbin/useradd', ['-m', '-s', '/usr/sbin/nologin', this.name], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`useradd failed: ${r.stderr}`);
    const entry = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(this.name + ':')).split(':');
    this.uid = Number(entry[2]);
    this.gid = Number(entry[3]);
    this.home = entry[5];
    return this;
  }

  env(extra = {}) {
    return { PATH: process.env.PATH, HOME: this.home, USER: this.name, ...extra };
  }

  // Runs a command as the user and waits for it: { status, stdout, stderr }.
  run(file, args, { env = {} } = {}) {
    return spawnSync(file, args, { uid: this.uid, gid: this.gid, cwd: this.home, env: this.env(env), encoding: 'utf8', timeout: 30000 });
  }

  // Starts a long-running process as the user; killed by remove().
  start(file, args, { env = {}, stdin = 'ignore' } = {}) {
    const child = spawn(file, args, { uid: this.uid, gid: this.gid, cwd: this.home, env: this.env(env), stdio: [stdin, 'pipe', 'pipe'] });
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
    return child;
  }

  remove() {
    for (const c of this.children) {
      try { process.kill(c.pid, 'SIGCONT'); c.kill('SIGKILL'); } catch { /* gone */ }
    }
    // Whatever the account left in /tmp (FIFOs, sparse files) goes with it.
    for (const f of fs.readdirSync('/tmp')) {
      const file = path.join('/tmp', f);
      try {
        if (fs.lstatSync(file).uid === this.uid) fs.rmSync(file, { recursive: true, force: true });
      } catch { /* gone */ }
    }
    spawnSync('/usr/sbin/userdel', ['-r', '-f', this.name], { stdio: 'ignore' });
  }
}

// A child's output as it comes: out.stdout, out.stderr; out.wait(stream,
// re, ms) resolves with the first match (rejects when the child exits or
// the time is up); out.exit resolves with { code, signal }.
function collect(child) {
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d) => { out.stdout += d; });
  child.stderr.on('data', (d) => { out.stderr += d; });
  out.wait = (stream, re, ms) => new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const t = setInterval(() => {
      const m = re.exec(out[stream]);
      if (m) { clearInterval(t); resolve(m); } else if (Date.now() > deadline || child.exitCode !== null) {
        clearInterval(t);
        reject(new Error(`no ${re} on ${stream} within ${ms} ms:\n${out.stdout.slice(-2000)}\n${out.stderr.slice(-2000)}`));
      }
    }, 50);
  });
  out.exit = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return out;
}

// Runs bin/nodetrace as root with `args`; -> collect()'s object, and child.
function runNodetrace(args, { env = {} } = {}) {
  const child = spawn(process.execPath, [NODETRACE, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const out = collect(child);
  out.child = child;
  return out;
}

module.exports = { HostileUser, hostileUserUnavailableReason, collect, runNodetrace };
