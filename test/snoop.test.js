'use strict';
// `nodetrace snoop` end to end @tracer: real bpftrace, real bunyan (from npm)
// in apps started with -r register.js, records read as they stream.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { detectBpftrace } = require('../lib/tracer/detect');
const { filtersEveryProbeByPid, readsLongStrings, attachNotice, stringLimitEnv, stringTrailerEnv, quietMapHelperArgs } = require('../lib/tracer/capabilities');
const { ROOT, NODETRACE, requireTracing, startTarget, stopTarget, killStragglers, nodetrace } = require('./support/harness');

const REGISTER = path.join(ROOT, 'register.js');
const TARGET = 'bunyan-debug-loop.js';

function usdtUnavailableReason() {
  try {
    const native = require('../lib/usdt/native').loadAddon();
    return native.ok ? null : native.reason;
  } catch (err) {
    return `lib/usdt cannot load: ${err.message}`;
  }
}

function startBunyan(env = {}) {
  return startTarget(TARGET, { args: ['-r', REGISTER], env: { INTERVAL: '100', ...env } });
}

// Runs `nodetrace snoop ...args` until `done(lines)` holds for the stdout
// lines so far (or timeoutMs), then Ctrl-C (SIGINT) and waits for it to exit.
// onReady runs once it says it is snooping.
function snoop(args, done, { timeoutMs = 30000, onReady } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [NODETRACE, 'snoop', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let satisfied = false;
    let ready = false;
    // Whole lines only: a chunk may end inside one.
    const lines = () => stdout.slice(0, stdout.lastIndexOf('\n') + 1).split('\n').filter(Boolean);
    const finish = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    };
    const timer = setTimeout(finish, timeoutMs);
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 15000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => {
      stdout += c;
      if (!satisfied && done(lines())) { satisfied = true; finish(); }
    });
    child.stderr.on('data', (c) => {
      stderr += c;
      if (!ready && /nodetrace: snooping bunyan records/.test(stderr)) {
        ready = true;
        if (onReady) Promise.resolve(onReady()).catch((err) => { stderr += `\nonReady failed: ${err.stack}`; finish(); });
      }
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, lines: lines(), satisfied });
    });
  });
}

// The summary a clean snoop of N processes ends with. On bpftrace 0.24+ a
// snoop of one PID cannot stop the records before ending bpftrace (see
// lib/snoop/plan.js), which may discard the last few it had not read.
function endOfSnoop(processes) {
  const n = `\\d+ records from ${processes} process${processes === 1 ? '' : 'es'}; `;
  if (processes === 1 && filtersEveryProbeByPid(detectBpftrace())) {
    return new RegExp(`nodetrace: ${n}(none lost|\\d+ records? fired as the snoop ended and the tracer discarded (it|them) unread)\\.`);
  }
  return new RegExp(`nodetrace: ${n}none lost\\.`);
}

function records(lines) {
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

describe('nodetrace snoop @tracer', function () {
  this.timeout(60000);
  const started = [];
  before(function () {
    requireTracing(this);
    const reason = usdtUnavailableReason();
    if (reason) {
      if (process.env.CI) throw new Error('USDT probes unavailable in CI: ' + reason);
      this.skip(`bunyan's probes cannot fire here: ${reason}`);
    }
  });
  afterEach(() => {
    while (started.length) stopTarget(started.pop());
    killStragglers();
  });

  it('shows the debug records of an app logging at level info, formatted by bunyan @core', async function () {
    const app = await startBunyan({ NAME: 'snoop-debug' });
    started.push(app);
    const r = await snoop([String(app.pid)],
      (lines) => lines.some((l) => / DEBUG: snoop-debug\/\d+ on .*: something went wrong \d+/.test(l)));
    assert(r.satisfied, `no DEBUG record appeared:\n${r.stdout}\n${r.stderr}`);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\[\d{4}-\d\d-\d\dT[\d:.]+Z\] DEBUG: snoop-debug\/\d+ on \S+: something went wrong \d+ \(seq=\d+\)$/m);
    assert.match(r.stderr, endOfSnoop(1));
  });

  // bpftrace discards what it has not read when told to end; the snoop stops
  // the records first (lib/tracer/session.js quiesce), so that a record fired
  // just before Ctrl-C or the end of -d is shown, not counted as lost.
  it('shows every record fired up to the end of -d, from a process logging 5,000 a second @core', async function () {
    const RATE = 5000;
    const apps = [await startTarget('bunyan-throughput.js', { args: ['-r', REGISTER], env: { RATE: String(RATE), DURATION: '60' } })];
    started.push(apps[0]);
    // With one PID, 0.24+ filters the signal's tracepoint out (-p): two PIDs run without -p.
    if (filtersEveryProbeByPid(detectBpftrace())) {
      apps.push(await startTarget('bunyan-throughput.js', { args: ['-r', REGISTER], env: { RATE: '100', DURATION: '60' } }));
      started.push(apps[1]);
    }
    for (let run = 0; run < 3; run++) {
      const r = await nodetrace(['snoop', apps.map((a) => a.pid).join(','), '-d', '1', '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      const m = /nodetrace: (\d+) records from \d+ process(es)?; none lost\./.exec(r.stderr);
      assert(m, `run ${run + 1}: ${r.stderr}`);
      // Only that it ran at a high rate: a loaded host slows the target, so a fifth of its rate will do.
      assert(+m[1] > RATE / 5, `run ${run + 1}: only ${m[1]} records in 1 s`);
    }
  });

  it('\'*\' catches a process started after the snoop', async function () {
    const name = `late-${process.pid}-${Date.now()}`;
    const r = await snoop(['*', '--json', '-l', 'debug'],
      (lines) => records(lines).some((o) => o.name === name && o.level === 20),
      { onReady: async () => { started.push(await startBunyan({ NAME: name })); } });
    assert(r.satisfied, `no record from the process started later:\n${r.stderr}`);
    assert(records(r.lines).every((o) => o.level >= 20));
  });

  it('\'*\' also catches a process whose probe library appeared after the snoop began', async function () {
    // As a user's first bunyan process would: its library is new, in a
    // directory no one had used (NODETRACE_USDT_DIR stands in for the user's).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-snoop-late-'));
    const name = `late-lib-${process.pid}-${Date.now()}`;
    try {
      const r = await snoop(['*', '--json'],
        (lines) => records(lines).some((o) => o.name === name && o.level === 20),
        { onReady: async () => { started.push(await startBunyan({ NAME: name, NODETRACE_USDT_DIR: path.join(dir, 'usdt') })); } });
      assert(r.satisfied, `no record from the process with a new library:\n${r.stderr}`);
      assert.match(r.stderr, new RegExp(`also snooping ${dir}/usdt/nodetrace-usdt-\\w+\\.so`));
      assert.strictEqual(r.code, 0, r.stderr);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows the debug records of an ES module app started with --import register.js', async function () {
    const app = await startTarget('bunyan-esm.mjs', { args: ['--import', REGISTER], env: { NAME: 'snoop-esm' } });
    started.push(app);
    const r = await snoop([String(app.pid), '--json'], (lines) => records(lines).some((o) => o.name === 'snoop-esm'));
    assert(r.satisfied, `no record from the ES module app:\n${r.stderr}`);
    const rec = records(r.lines).find((o) => o.name === 'snoop-esm');
    assert.strictEqual(rec.level, 20);
    assert.strictEqual(rec.msg, 'debug from an ES module');
  });

  it('snoops two processes at once @core', async function () {
    const a = await startBunyan({ NAME: 'snoop-a' });
    const b = await startBunyan({ NAME: 'snoop-b' });
    started.push(a, b);
    const r = await snoop([`${a.pid},${b.pid}`, '--json'], (lines) => {
      const names = new Set(records(lines).map((o) => o.name));
      return names.has('snoop-a') && names.has('snoop-b');
    });
    assert(r.satisfied, r.stderr);
    const pids = new Set(records(r.lines).map((o) => o.pid));
    assert.deepStrictEqual([...pids].sort(), [a.pid, b.pid].sort());
    assert.match(r.stderr, /from 2 processes/);
  });

  // One snoop of an app whose warn records alternate a 3.9 KB blob and a
  // 10 KiB one, at -l warn: the level filter and the record sizes, from
  // the same records.
  describe('-l warn --json, an app logging records of nearly 4 KB and of 10 KiB @core', function () {
    let app;
    let r;
    before(async function () {
      // 1500 characters of 1- to 4-byte UTF-8 (3.9 KB): the cuts fall inside characters.
      app = await startBunyan({ NAME: 'snoop-big', BIG: '1500,10240', BLOB: 'é€😀x' });
      r = await snoop([String(app.pid), '--json', '-l', 'warn'], (lines) => {
        const recs = records(lines);
        return recs.length >= 8 && recs.some((o) => o.blob) && recs.some((o) => o.nodetrace === 'truncated');
      });
    });
    after(() => stopTarget(app));

    it('shows only warn and above', function () {
      assert(r.satisfied, r.stderr);
      const recs = records(r.lines);
      assert(recs.every((o) => o.level >= 40), `levels seen: ${[...new Set(recs.map((o) => o.level))]}`);
      assert(recs.some((o) => o.level === 40) && recs.some((o) => o.level === 50));
    });

    it('delivers a record of nearly 4 KB whole and marks a 10 KiB one as truncated', function () {
      assert(r.satisfied, r.stderr);
      const recs = records(r.lines);   // every line parsed as JSON
      const whole = recs.find((o) => o.blob);
      assert.strictEqual(whole.blob, Array.from('é€😀x'.repeat(1500)).slice(0, 1500).join(''));
      const cut = recs.find((o) => o.nodetrace === 'truncated');
      assert.strictEqual(cut.pid, app.pid);
      assert.strictEqual(cut.level, 40);
      assert(cut.bytes_seen >= 4096, `only ${cut.bytes_seen} bytes`);
      assert(cut.prefix.startsWith('{"name":"snoop-big"'), cut.prefix);
      assert(!recs.some((o) => o.name === 'snoop-big' && o.blob && o.blob.length !== whole.blob.length), 'no cut record passed off as whole');
      assert.match(r.stderr, /too long for the tracer \(marked TRUNCATED\)/);
    });
  });

  it('shows a truncated record as a marked line in bunyan\'s text modes', async function () {
    const app = await startBunyan({ NAME: 'snoop-huge', BIG: '10240' });
    started.push(app);
    const r = await snoop([String(app.pid), '-l', 'warn', '-o', 'short'], (lines) => lines.some((l) => l.includes('TRUNCATED')));
    assert(r.satisfied, r.stderr);
    assert.match(r.stdout, /^\[nodetrace\] PID \d+: WARN record TRUNCATED: longer than the \d+ bytes the tracer reads; it began: \{"name":"snoop-huge"/m);
    // short names the process by its host PID (bunyan's short mode shows none).
    assert.match(r.stdout, new RegExp(`^\\d\\d:\\d\\d:[\\d.]+Z ERROR snoop-huge/${app.pid}: error record \\d+ \\(seq=\\d+\\)$`, 'm'));
  });

  it('matches a name pattern as plain text: shell metacharacters are harmless', async function () {
    const marker = path.join(os.tmpdir(), `snoop-pwned-${process.pid}`);
    for (const pattern of [`x; touch ${marker}`, `$(touch ${marker})`, `\`touch ${marker}\``, `' | touch ${marker} #`]) {
      const r = await nodetrace(['snoop', pattern, '-d', '1']);
      assert.strictEqual(r.code, 2, `${pattern}: ${r.stderr}`);
      assert.match(r.stderr, /no running process has ".*" in its command line/);
    }
    assert(!fs.existsSync(marker), 'a pattern reached a shell');
  });

  it('finds processes by a part of their command line', async function () {
    const app = await startBunyan({ NAME: 'snoop-by-name' });
    started.push(app);
    const r = await snoop([TARGET, '--json'], (lines) => records(lines).some((o) => o.name === 'snoop-by-name'));
    assert(r.satisfied, r.stderr);
    assert.match(r.stderr, /snooping bunyan records \(all levels\) of (PID|PIDs|\d+ processes)/);
  });
});

// Mistakes found by looking at processes: that needs root (other users'
// /proc/PID/maps), so these run as root.
describe('nodetrace snoop errors @tracer', function () {
  this.timeout(30000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('says so when no process matches the name (exit 2)', async function () {
    const r = await nodetrace(['snoop', 'no-such-service-' + process.pid]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /^nodetrace: no running process has "no-such-service-\d+" in its command line\.$/m);
    assert(!/\n\s+at /.test(r.stderr), r.stderr);
  });

  it('says so when no such PID runs (exit 3)', async function () {
    const r = await nodetrace(['snoop', '3999999']);
    assert.strictEqual(r.code, 3);
    assert.match(r.stderr, /no process with PID 3999999 is running/);
  });

  it('explains how to get probes into a bunyan app started without register.js (exit 3)', async function () {
    if (process.platform !== 'linux') this.skip();
    const app = await startTarget(TARGET, { env: { NAME: 'no-register' } });
    try {
      const r = await nodetrace(['snoop', String(app.pid), '--backend', 'bpftrace']);
      assert.strictEqual(r.code, 3, r.stderr);
      assert.match(r.stderr, new RegExp(`PID ${app.pid} has no bunyan probes`));
      assert.match(r.stderr, /node -r nodetrace\/register app\.js/);
    } finally {
      stopTarget(app);
    }
  });

});

// Mistakes caught before looking at any process: no root needed.
describe('nodetrace snoop usage errors', function () {
  this.timeout(30000);
  afterEach(killStragglers);

  it('rejects a PID that is not one (exit 2)', async function () {
    const bad = await nodetrace(['snoop', '12,0']);
    assert.strictEqual(bad.code, 2);
    assert.match(bad.stderr, /expects a process ID/);
  });

  it('rejects unknown output modes and --json with -o (exit 2)', async function () {
    assert.strictEqual((await nodetrace(['snoop', '*', '-o', 'fancy'])).code, 2);
    assert.strictEqual((await nodetrace(['snoop', '*', '-o', 'short', '--json'])).code, 2);
    assert.strictEqual((await nodetrace(['snoop', '*', '-l', 'loud'])).code, 2);
  });

  it('says when no tracer is installed', async function () {
    const r = await nodetrace(['snoop', '*'], { env: { PATH: '/nonexistent' } });
    if (require('../lib/tracer/detect').findOnPath('bpftrace', '/nonexistent')) this.skip();
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, process.platform === 'linux' ? /snoop needs bpftrace on Linux/ : /no tracer found/);
  });

  it('needs root', async function () {
    if (process.getuid() !== 0) {
      const r = await nodetrace(['snoop', '*', '--backend', 'bpftrace']);
      assert.strictEqual(r.code, 1);
      assert.match(r.stderr, /needs root/);
      return;
    }
    // As root: run it as nobody.
    const r = await new Promise((resolve) => {
      const child = spawn(process.execPath, [NODETRACE, 'snoop', '*', '--backend', 'bpftrace'],
        { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: '/nonexistent' } });
      let stderr = '';
      child.stderr.on('data', (c) => { stderr += c; });
      child.on('close', (code) => resolve({ code, stderr }));
    });
    if (/EACCES|permission denied/i.test(r.stderr) && !/needs root/.test(r.stderr)) this.skip();
    assert.strictEqual(r.code, 1, r.stderr);
    assert.match(r.stderr, /nodetrace snoop needs root/);
  });

  it('prints the exact command line and program with -n', async function () {
    const r = await nodetrace(['snoop', '*', '-n', '-l', 'warn', '--backend', 'bpftrace']);
    if (r.code === 1 && /bpftrace is not usable|no bunyan process/.test(r.stderr)) this.skip();
    assert.strictEqual(r.code, 0, r.stderr);
    // What the bpftrace it runs under needs (lib/tracer/capabilities.js):
    // 0.17 reads a record in 200-byte pieces with log-snoop.bt, 0.23 and
    // later in one string (log-snoop-whole.bt), each limit by the name its
    // version reads, with no trailer and no map warnings on 0.23+.
    const tracer = detectBpftrace();
    const whole = readsLongStrings(tracer, 4180);
    const script = whole ? 'log-snoop-whole.bt' : 'log-snoop.bt';
    const strlen = whole ? 4180 : 200;
    const env = { ...attachNotice(tracer).env, ...stringLimitEnv(tracer, strlen), ...stringTrailerEnv(tracer) };
    const envWords = Object.entries(env).map(([k, v]) => `${k}=${v === '' ? "''" : v}`);
    const tracerWords = [tracer.path, '-f json', ...quietMapHelperArgs(tracer), path.join(ROOT, 'd-scripts', script),
      '"$tmp"/\'*.so\' log-warn log-error log-fatal \'none*\' \'none*\' \'none*\''];
    // Through setpriv --pdeathsig where the host has it (lib/tracer/plan.js).
    const expected = [[], ['/usr/bin/setpriv --pdeathsig KILL --'], ['/bin/setpriv --pdeathsig KILL --']]
      .map((launcher) => [...envWords, ...launcher, ...tracerWords].join(' '));
    const command = r.stdout.split('\n').find((line) => line.includes(' -f json '));
    assert(expected.includes(command), `${command}\nis none of\n${expected.join('\n')}`);
    // The program, as the file holds it, after the commands.
    const program = `exit\n# program (${path.join(ROOT, 'd-scripts', script)}):\n`;
    assert(r.stdout.endsWith(program + fs.readFileSync(path.join(ROOT, 'd-scripts', script), 'utf8')), r.stdout.slice(0, 2000));
  });
});
