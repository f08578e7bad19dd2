'use strict';
// nodetrace's side of the watchdog (lib/ebadf/watchdog.js): start it, tell it
// what would need undoing, and say goodbye when everything is undone.
const path = require('path');
const { spawn } = require('child_process');
const { UserError } = require('../errors');

const WATCHDOG = path.join(__dirname, 'watchdog.js');
// nodetrace says it is alive this often; the watchdog resumes what it
// stopped once it has been silent for `silentMs` (watchdog.js).
const HEARTBEAT_MS = 500;

class Guard {
  constructor(child) {
    this.child = child;
    this.alive = true;
    this.onDeath = null;
    child.on('exit', () => {
      this.alive = false;
      clearInterval(this.heartbeat);
      if (this.onDeath && !this.closing) this.onDeath();
    });
    child.stdin.on('error', () => { /* exit handler reports it */ });
    this.heartbeat = setInterval(() => this.send('alive'), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * Starts the watchdog and waits until it is ready.
   * @param {object} cfg { pid, name, maxStopMs (longest one stop may
   *   last, by the watchdog's clock), silentMs (longest nodetrace may be
   *   silent while something is stopped) }
   */
  static start(cfg, { timeoutMs = 15000 } = {}) {
    const config = { parent: process.pid, pid: cfg.pid || 0, name: cfg.name || null, maxStopMs: cfg.maxStopMs || 0,
      silentMs: cfg.silentMs || 0 };
    const child = spawn(process.execPath, [WATCHDOG, JSON.stringify(config)], {
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    return new Promise((resolve, reject) => {
      let out = '';
      const fail = (why) => {
        clearTimeout(timer);
        try { child.kill('SIGKILL'); } catch { /* gone */ }
        reject(new UserError(`could not start the watchdog that resumes stopped processes if nodetrace dies (${why}); nothing was stopped.`));
      };
      const timer = setTimeout(() => fail('it did not answer'), timeoutMs);
      child.on('error', (err) => fail(err.code || err.message));
      child.on('exit', (code) => { if (!out.includes('ready')) fail(`it exited with status ${code}`); });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('ready\n')) {
          clearTimeout(timer);
          child.stdout.destroy();
          child.removeAllListeners('exit');
          resolve(new Guard(child));
        }
      });
    });
  }

  send(line) {
    if (!this.alive) return false;
    try {
      this.child.stdin.write(line + '\n');
      return true;
    } catch {
      return false;
    }
  }

  // Orderly end: nothing is left to undo.
  close() {
    this.closing = true;
    clearInterval(this.heartbeat);
    if (!this.alive) return Promise.resolve();
    this.send('bye');
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.child.unref(); resolve(); }, 5000);
      this.child.on('exit', () => { clearTimeout(t); resolve(); });
      this.child.stdin.end();
    });
  }
}

module.exports = { Guard, WATCHDOG, HEARTBEAT_MS };
