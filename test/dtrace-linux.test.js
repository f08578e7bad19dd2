'use strict';
// The DTrace tier @tracer @dtrace: the d-scripts and `--backend dtrace` under
// a real DTrace, Oracle's DTrace for Linux 2.0 built from source by
// scripts/build-dtrace.sh (`make dtrace`) into the cache, against the same
// real workloads as the bpftrace tests.  Where it was not built (a clone
// without ../shared/vendor/), the suite is skipped and says why; in CI it
// must run.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers, ROOT, NODETRACE } = require('./support/harness');
const { tracePoolMix, checkPoolMix, traceSaturatedPool, checkSaturatedJson, checkSaturatedText } = require('./support/pool-checks');
const { compile } = require('./support/program-variants');
const gc = require('../lib/commands/gc');
const { planEbadf } = require('../lib/ebadf/program');
const wireServer = require('./support/http-wire');
const { planWire } = require('../lib/http/wire-plan');
const asyncCommand = require('../lib/commands/async');
const { traceMix, checkCounts } = require('./support/async-checks');
const { nodeBuilds, buildNamed, requireBuild } = require('./support/node-builds');
const { DTRACE, dtraceUnavailableReason } = require('./support/dtrace-build');
const { safeText } = require('../lib/terminal-safe');

const EBADF = { name: 'EBADF', number: 9 };

const ENV = { NODETRACE_DTRACE: DTRACE };
const SQLITE_KINDS = ['Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose', 'Work_BeginPrepare', 'Work_BeginRun'];
const D_SCRIPTS = path.join(ROOT, 'd-scripts');

// dtrace ARGS: -> { status, signal, stderr }.
function dtrace(args, timeout = 120000) {
  return new Promise((resolve) => {
    const child = spawn(DTRACE, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('close', (status, signal) => { clearTimeout(timer); resolve({ status, signal, stderr }); });
  });
}

// Runs nodetrace; calls `whenOut(text)` on each stderr chunk (to act once it is watching).
function nodetraceWatching(args, onStderr) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [NODETRACE, ...args], { env: { ...process.env, ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; onStderr(stderr); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 240000);
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
  });
}

function log2Bucket(us) {
  return Math.floor(Math.log2(Math.max(us, 1)));
}

describe('DTrace for Linux @tracer @dtrace', function () {
  this.timeout(300000);
  before(function () { requireTracing(this, { also: dtraceUnavailableReason }); });
  afterEach(killStragglers);

  it('is recognised as DTrace for Linux, not as systemtap\'s stub', async function () {
    const r = await nodetrace(['doctor'], { env: ENV });
    assert.match(r.stdout, /^ok +dtrace +DTrace for Linux 2\.0 at /m, r.stdout);
  });

  it('snoop --backend dtrace says in one line that DTrace for Linux cannot see USDT probes, and fails', async function () {
    const r = await nodetrace(['snoop', '*', '--backend', 'dtrace'], { env: ENV });
    assert.notStrictEqual(r.code, 0);
    assert.match(r.stderr, /^nodetrace: DTrace for Linux 2\.0 cannot see bunyan's probes: they are USDT probes in the stapsdt format/);
    assert.strictEqual(r.stdout, '');
  });

  describe('every d-script compiles (dtrace -e)', function () {
    // Each script's options and arguments as its header gives them (a live
    // node's PID for those that take one).
    const cases = {
      'addon-latency.d': (pid) => ['-p', pid],
      'addon-latency-every-function.d': (pid) => ['-p', pid],
      'ebadf-stop-gcore.d': (pid) => ['-w', pid],
      'ebadf-abort.d': (pid) => ['-w', pid],
      'log-snoop.d': (pid) => ['-Z', pid, 'log-*'],
      'loop.d': (pid) => ['-q', pid, '100000', '0', pid],
      // Its IncrementalMarking::Step probes are a template slot nodetrace fills: -Z.
      'gc.d': (pid) => ['-Z', pid],
      'profile.d': (pid) => ['-p', pid, '99'],
      'offcpu.d': (pid) => ['-p', pid, '0'],
      // USDT probes, which DTrace for Linux cannot see: -Z lets it compile with none.
      'http.d': () => ['-Z', '0', '0'],
      'http-wire.d': (pid) => ['-q', pid],
      // Its AsyncReset probe is a template slot nodetrace fills: -Z.
      'async.d': (pid) => ['-Z', pid, '32', '40', '24', pid],
    };
    const scripts = fs.readdirSync(D_SCRIPTS).filter((f) => f.endsWith('.d'));

    // The programs nodetrace instantiates from a .d file, as its planners make them.
    const oracle = { name: 'dtrace', path: DTRACE, version: '2.0', flavor: 'oracle' };
    const instantiated = {
      'gc.d, IncrementalMarking::Step filled in (nodetrace gc)': (pid) => gc.plan({ pid: String(pid) }, oracle),
      'http-wire.d, the @tls part left out (a process with no OpenSSL)': (pid) => planWire(oracle, pid, { why: 'none' }),
      'async.d, AsyncReset filled in (nodetrace async --backend dtrace)': (pid) => asyncCommand.plan({ pid: String(pid) }, oracle),
      ...Object.fromEntries(['stop', 'abort'].map((mode) => [`${planEbadf({ tracer: oracle, mode, pid: 1, syscalls: ['close'], errnos: [EBADF], count: 1 }).script}.d, `
        + 'PROBES filled in (nodetrace ebadf --syscall close,dup2)',
      (pid) => planEbadf({ tracer: oracle, mode, pid, syscalls: ['close', 'dup2'], errnos: [EBADF], count: 1 })])),
    };

    // Every compile once, before the tests, one a CPU at once (each is one
    // CPU-bound dtrace, about 1.5 s; one after another with a node started
    // for each, 29 s in CI), each worker against a live node of its own
    // (dtrace -p grabs the process: two at once on one fail, "not a
    // dynamically-linked executable"): name -> { status, stderr }.
    const compiled = new Map();
    before(async function () {
      const jobs = [];
      for (const script of scripts.filter((f) => f in cases)) {
        jobs.push([script, (pid) => {
          const [first, ...rest] = cases[script](pid);
          return dtrace(first === '-p' ? ['-e', '-s', path.join(D_SCRIPTS, script), '-p', ...rest] : ['-e', first, '-s', path.join(D_SCRIPTS, script), ...rest]);
        }]);
      }
      for (const [name, planFor] of Object.entries(instantiated)) {
        jobs.push([name, (pid) => {
          const p = planFor(Number(pid));
          assert.ok(p.programText, `${name}: an instantiated program`);
          return compile(oracle, p);
        }]);
      }
      jobs.push(['log-snoop.d PID', (pid) => dtrace(['-e', '-Z', '-s', path.join(D_SCRIPTS, 'log-snoop.d'), pid])]);
      jobs.push(['log-snoop.d * PATTERN', () => dtrace(['-e', '-Z', '-s', path.join(D_SCRIPTS, 'log-snoop.d'), '*', 'log-[ef]*'])]);
      const worker = async () => {
        const target = await startTarget('sqlite-loop.js');
        try {
          for (let job = jobs.shift(); job; job = jobs.shift()) compiled.set(job[0], await job[1](String(target.pid)));
        } finally {
          stopTarget(target);
        }
      };
      await Promise.all(os.cpus().map(worker));
    });

    for (const script of scripts) {
      it(script, function () {
        assert.ok(script in cases, `a case for ${script}`);
        const r = compiled.get(script);
        assert.strictEqual(r.status, 0, `${script}: ${r.stderr}`);
      });
    }

    for (const name of Object.keys(instantiated)) {
      it(name, function () {
        const r = compiled.get(name);
        assert.strictEqual(r.status, 0, r.stderr);
      });
    }

    it('log-snoop.d compiles with one argument, as its header says it runs (PID only)', function () {
      for (const name of ['log-snoop.d PID', 'log-snoop.d * PATTERN']) {
        const r = compiled.get(name);
        assert.strictEqual(r.status, 0, r.stderr);
      }
    });
  });

  // One process running the sqlite3 loop and, beside it (-r), the
  // crypto.pbkdf2 loop: traced by each tracer once.
  describe('latency on the sqlite3 and crypto.pbkdf2 loops, beside bpftrace', function () {
    let target;
    let d;
    let b;
    before(async function () {
      target = await startTarget('sqlite-loop.js', { args: ['-r', path.join(ROOT, 'test', 'targets', 'crypto-loop.js')] });
      const dr = await nodetrace(['latency', '--backend', 'dtrace', '-p', String(target.pid), '-d', '5', '--json'], { env: ENV, timeoutMs: 240000 });
      assert.strictEqual(dr.code, 0, dr.stderr);
      const br = await nodetrace(['latency', '--backend', 'bpftrace', '-p', String(target.pid), '-d', '5', '--json'], { timeoutMs: 120000 });
      assert.strictEqual(br.code, 0, br.stderr);
      d = JSON.parse(dr.stdout);
      b = JSON.parse(br.stdout);
    });
    after(() => stopTarget(target));

    it('names the same five kinds, in the same unit, with nothing set apart as impossible', function () {
      assert.strictEqual(d.tracer, 'dtrace');
      assert.strictEqual(d.unit, 'us');
      assert.strictEqual(d.unit, b.unit, 'one unit whichever tracer ran');
      for (const kind of SQLITE_KINDS) {
        const dk = d.kinds.find((k) => k.name.includes('::' + kind + '('));
        assert(dk, `dtrace: no ${kind} in ${d.kinds.map((k) => k.name).join(', ')}`);
        assert(dk.count > 50, `dtrace: only ${dk.count} ${kind}`);
      }
      assert.deepStrictEqual(d.kinds.map((k) => k.name).sort(), b.kinds.map((k) => k.name).sort());
      assert.strictEqual(d.discarded.out_of_order, 0, 'no negative durations (the race fixed)');
      assert(!d.kinds.some((k) => /^0x/.test(k.name)), 'no kind named by a stray address');
    });

    it('gives medians within one power-of-2 bucket of bpftrace\'s', function () {
      for (const kind of SQLITE_KINDS) {
        const dk = d.kinds.find((k) => k.name.includes('::' + kind + '('));
        const bk = b.kinds.find((k) => k.name.includes('::' + kind + '('));
        assert(Math.abs(log2Bucket(dk.p50) - log2Bucket(bk.p50)) <= 1, `${kind}: p50 ${dk.p50} us (dtrace) vs ${bk.p50} us (bpftrace)`);
        for (const part of ['queue_wait', 'run', 'loop_wait']) {
          assert(dk.breakdown[part] && dk.breakdown[part].p50 >= 0, `${kind}: ${part}`);
        }
      }
    });

    it('names Node\'s own crypto.pbkdf2 work, with no kind 0x0 and no negative time', function () {
      const pbkdf2 = d.kinds.find((k) => k.name === 'crypto.pbkdf2');
      assert(pbkdf2, 'no crypto.pbkdf2 kind in ' + d.kinds.map((k) => k.name).join(', '));
      assert(pbkdf2.symbols.some((sym) => /CryptoJob<node::crypto::PBKDF2Traits>::Run/.test(sym)), `found from ${pbkdf2.symbols} (demangled)`);
      assert(pbkdf2.count > 5);
      assert.deepStrictEqual(d.kinds.map((k) => k.name).filter((n) => /^0x/.test(n)), []);
      assert.strictEqual(d.discarded.out_of_order, 0);
      // the race made maxima of 549 s and 7,147 s; this trace lasts under 100 s with attaching
      assert(pbkdf2.max < 100e6, `max ${pbkdf2.max} us is longer than the trace`);
    });
  });

  // The same target and the same checks as test/latency-pool.test.js's
  // bpftrace run (test/support/pool-mix.js): addon-latency.d sees the whole
  // thread pool too.
  it('latency -c on the pool mix: fs by type, dns.lookup, zlib, crypto.pbkdf2 and sqlite3, counted as the target counted, and the pool', async function () {
    const { report, own } = await tracePoolMix({ args: ['--backend', 'dtrace'], env: ENV, timeoutMs: 240000 });
    assert.strictEqual(report.tracer, 'dtrace');
    checkPoolMix(report, own);
    assert.strictEqual(report.discarded.out_of_order, 0, 'no negative durations');
    assert.deepStrictEqual(report.kinds.map((k) => k.name).filter((n) => /^0x/.test(n)), [], 'no kind named by a stray address or an unknown code');
    assert.strictEqual(report.kinds.find((k) => k.name === 'fs.stat').count, own['fs.stat'], 'under -c not one fs.stat is missed');
    assert(report.pool.waiting_share !== null && report.pool.queued_at_start, JSON.stringify(report.pool));
  });

  it('latency -c shows the command\'s stdout and stderr, and traces its work (dtrace -o, read as it grows)', async function () {
    const r = await nodetrace(['latency', '--backend', 'dtrace', '-c', `${process.execPath} test/targets/stderr-talker.js`],
      { env: ENV, timeoutMs: 120000 });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^talker: on stdout$/m);
    assert.match(r.stderr, /^talker: first line on stderr$/m);
    assert.match(r.stderr, /^talker: 20 stats done$/m);
    assert.match(r.stdout, /^fs\.stat\n(?:.*\n)*? {2}count 20,/m);
  });

  describe('latency -p on a pool of 2 threads kept busy by crypto.pbkdf2 while fs.stat waits behind it', function () {
    let reports;
    before(async function () {
      reports = await traceSaturatedPool({ args: ['--backend', 'dtrace'], env: ENV, timeoutMs: 240000 });
    });

    it('says the pool was saturated, by what, with 2 threads and a queue', function () {
      assert.strictEqual(reports.json.tracer, 'dtrace');
      checkSaturatedJson(reports.json);
    });

    it('says so in one line of the text report', function () {
      checkSaturatedText(reports.text);
    });
  });

  // loop.d bounds each turn of the loop by its thread's epoll_wait/
  // epoll_pwait system calls (syscall provider), which DTrace for Linux has;
  // it needs no USDT probe.
  describe('loop.d on a loop blocked 200 ms every second', function () {
    const STALL_US = 200000;
    // As in test/loop.test.js: a loaded host may lengthen a stall, by no promised bound.
    const LOADED_TURN_SLACK_US = STALL_US;
    let target;
    let json;
    before(async function () {
      target = await startTarget('loop-stall.js', { args: ['--perf-basic-prof'] });
      const r = await nodetrace(['loop', '--backend', 'dtrace', '-p', String(target.pid), '-d', '8', '--json', '--stacks'], { env: ENV, timeoutMs: 240000 });
      assert.strictEqual(r.code, 0, r.stderr);
      json = JSON.parse(r.stdout);
    });
    after(() => stopTarget(target));

    it('reports the stalls, each at least the busy-wait and the median within one log2 bucket of it, at wall-clock times', function () {
      assert.strictEqual(json.tracer, 'dtrace');
      assert(json.stalls.length >= 5 && json.stalls.length <= 9, `${json.stalls.length} stalls`);
      for (const s of json.stalls) assert(s.busy_us >= STALL_US, `a stall of ${s.busy_us} µs is shorter than the busy-wait`);
      const median = json.stalls.map((s) => s.busy_us).sort((a, b) => a - b)[Math.floor(json.stalls.length / 2)];
      assert(median < STALL_US + LOADED_TURN_SLACK_US, `median stall ${median} µs`);
      for (const s of json.stalls) assert(Math.abs(Date.parse(s.ended_at) - Date.now()) < 240000, `${s.ended_at} is not a time of this run`);
    });

    it('counts them in the histogram, in the 131-262 ms bucket', function () {
      const bucket = json.busy.histogram.find((b) => b.lo <= STALL_US && STALL_US < b.hi);
      assert(bucket && bucket.count >= 2, JSON.stringify(json.busy.histogram));
      assert.strictEqual(json.busy.histogram.reduce((n, b) => n + b.count, 0), json.turns);
    });

    it('samples the loop thread\'s stack during the stalls: the timer that runs the busy-wait (native frames; JIT frames stay addresses)', function () {
      assert(json.stacks.length > 0, 'no stack sampled during a stall');
      assert(json.stacks.some((s) => s.frames.some((f) => /uv__run_timers|RunTimers/.test(f))),
        JSON.stringify(json.stacks.slice(0, 2), null, 1));
    });
  });

  it('gc --backend dtrace: the pid provider on V8\'s collector sees the forced full GCs', async function () {
    const target = await startTarget('gc-churn.js', { args: ['--expose-gc'], env: { GC_FULL_MS: '500' } });
    try {
      const r = await nodetrace(['gc', '--backend', 'dtrace', '-p', String(target.pid), '-d', '5', '--json'], { env: ENV, timeoutMs: 240000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      assert.strictEqual(json.tracer, 'dtrace');
      const full = json.kinds.find((k) => k.name === 'mark-compact');
      assert(full && full.count >= 2, r.stdout);
      assert.strictEqual(full.histogram.reduce((n, b) => n + b.count, 0), full.count);
    } finally {
      stopTarget(target);
    }
  });

  // http-wire.d: the socket calls (syscall provider) and node's own
  // SSL_read/SSL_write (pid provider) of an unprepared server, against what
  // its clients measured (test/http-wire.test.js's checks on bpftrace).
  describe('http --backend dtrace on an unprepared server (the wire)', function () {
    // /slow answers after a setTimeout(150), which may fire up to 2 ms early
    // (test/http.test.js); the client's clock stops after the traced write or
    // read: 1 ms of slack for two clocks read in two processes.
    const SLOW_MS = 150;
    const TIMER_EARLY_MS = 2;
    const CLOCK_SLACK_MS = 1;
    afterEach(() => { for (const c of wireServer.targets) c.kill('SIGKILL'); wireServer.targets.clear(); });

    // nodetrace http --backend dtrace -p PID --json, once it says it is tracing.
    async function traceAttached(pid) {
      let go;
      const attached = new Promise((r) => { go = r; });
      let tracer;
      const traced = nodetrace(['http', '--backend', 'dtrace', '-p', String(pid), '-d', '90', '--json'], {
        env: ENV,
        timeoutMs: 200000,
        onSpawn: (c) => { tracer = c; c.stderr.on('data', (d) => { if (/tracing HTTP/.test(d)) go(); }); },
      });
      const early = await Promise.race([attached.then(() => null), traced]);
      if (early) throw new Error(`nodetrace http ended before it attached (${early.code}): ${early.stderr}`);
      return { tracer, traced };
    }

    // Ends the trace once the last events are out (read 10 times a second,
    // held 400 ms for ordering): its JSON lines.
    async function linesOf({ tracer, traced }) {
      await new Promise((r) => setTimeout(r, 1000));
      tracer.kill('SIGINT');
      const res = await traced;
      assert.strictEqual(res.code, 0, res.stderr);
      return { res, lines: res.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
    }

    function checkServed(lines, measured, stdout, url = (c) => c.path) {
      for (const c of measured) {
        const server = lines.filter((l) => l.direction === 'server' && l.url === url(c));
        assert.strictEqual(server.length, 1, `server ${c.path}:\n${stdout}`);
        assert.deepStrictEqual([server[0].method, server[0].status], [c.method, c.status], c.path);
        assert(server[0].ms <= c.ms + CLOCK_SLACK_MS, `${c.via} ${c.path}: server ${server[0].ms} ms, client measured ${c.ms} ms`);
        if (c.path.startsWith('/slow')) assert(server[0].ms >= SLOW_MS - TIMER_EARLY_MS, `${c.path}: server ${server[0].ms} ms`);
      }
    }

    it('plain HTTP: curl, http.get (both ends), pipelined and split requests, each once with its status and latency', async function () {
      const s = await wireServer.startServer();
      const trace = await traceAttached(s.child.pid);
      const byCurl = await wireServer.curl(s.port, ['/fast/curl', '/missing/curl', '/slow/curl']);
      s.child.stdin.write('client 4\n');
      await s.finished;
      await wireServer.run(process.execPath, [path.join(ROOT, 'test', 'targets', 'http-wire-clients.js'), String(s.port)]);
      const { res, lines } = await linesOf(trace);
      assert.match(res.stderr, /reading its HTTP off its socket system calls/);
      assert.match(res.stderr, /with dtrace 2\.0/);
      const measured = [...byCurl, ...s.results];
      assert.strictEqual(measured.length, 7);
      checkServed(lines, measured, res.stdout);
      const base = `http://127.0.0.1:${s.port}`;
      for (const c of s.results) {
        const client = lines.filter((l) => l.direction === 'client' && l.url === base + c.path);
        assert.strictEqual(client.length, 1, `client ${c.path}:\n${res.stdout}`);
        assert.strictEqual(client[0].status, c.status);
        assert(client[0].ms <= c.ms + CLOCK_SLACK_MS, `${c.path}: client traced ${client[0].ms} ms, measured ${c.ms} ms`);
      }
      // Pipelined in one write, one split across three writes 50 ms apart, a literal \x0d\x0a in a path.
      const served = (p) => lines.filter((l) => l.direction === 'server' && l.url === p);
      assert.deepStrictEqual(['/p1', '/slow/p2', '/missing/p3', '/split/s1', '/fake\\x0d\\x0aHTTP/1.1'].map((p) => served(p).map((l) => l.status)),
        [[200], [200], [404], [200], [200]], res.stdout);
      // At least one of its two 50 ms gaps (a busy server reads its first piece late).
      assert(served('/split/s1')[0].ms >= 50 - TIMER_EARLY_MS, 'timed from its first byte');
      assert.strictEqual(lines.length, 7 + 4 + 5, res.stdout);
      assert(!/refused|not reported|left out|DTrace lost data/.test(res.stderr), res.stderr);
    });

    it('HTTPS through node\'s own OpenSSL (pid provider on SSL_read/SSL_write): curl and https.get, each once', async function () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-dtrace-tls-'));
      try {
        const s = await wireServer.startServer(['--tls', ...(await wireServer.certificate(dir))]);
        const trace = await traceAttached(s.child.pid);
        const byCurl = await wireServer.curl(s.port, ['/fast/curl', '/missing/curl', '/slow/curl'], 'https');
        s.child.stdin.write('client 2\n');
        await s.finished;
        const { res, lines } = await linesOf(trace);
        assert.match(res.stderr, /and its HTTPS off the OpenSSL in /);
        checkServed(lines, [...byCurl, ...s.results], res.stdout);
        const base = `https://127.0.0.1:${s.port}`;
        for (const c of s.results) {
          const client = lines.filter((l) => l.direction === 'client' && l.url === base + c.path);
          assert.strictEqual(client.length, 1, `client ${c.path}:\n${res.stdout}`);
          assert.strictEqual(client[0].status, c.status);
        }
        assert.strictEqual(lines.length, 3 + 2 + 2, res.stdout);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses the hook\'s probes in one line: DTrace for Linux cannot see them', async function () {
      const r = await nodetrace(['http', '*', '--backend', 'dtrace'], { env: ENV });
      assert.notStrictEqual(r.code, 0);
      assert.match(r.stderr, /^nodetrace: nodetrace http reads the hook's probes on bpftrace only/);
    });
  });

  // async.d: the pid provider on node's AsyncWrap functions, the
  // AsyncWrap's fields read with copyin, against the target's own counts
  // (test/async.test.js's checks on bpftrace, the same).
  describe('async --backend dtrace', function () {
    it('counts each kind of operation the target counted itself; the busy callback is its kind\'s max, named', async function () {
      const r = await traceMix(process.execPath, { more: ['--backend', 'dtrace'], env: ENV });
      assert.strictEqual(r.json.tracer, 'dtrace');
      checkCounts(r);
    });

    it('calls a kind that leaks TCP connections growing, and no other', async function () {
      const target = await startTarget('async-mix.js', { env: { LEAK: '20' } });
      try {
        const SECONDS = 8;
        const r = await nodetraceWatching(['async', '--backend', 'dtrace', '-p', String(target.pid), '-d', String(SECONDS), '--json'], (err) => {
          if (!target.leaking && /tracing the asynchronous operations/.test(err)) { target.leaking = true; target.kill('SIGUSR2'); }
        });
        assert.strictEqual(r.code, 0, r.stderr);
        const json = JSON.parse(r.stdout);
        const tcp = json.kinds.find((k) => k.name === 'TCPWRAP');
        assert(tcp && tcp.growing, `TCPWRAP not growing: ${JSON.stringify(tcp && tcp.alive_each_second)}`);
        // As in test/async.test.js: 20 a second, a quarter of that on a loaded host.
        assert(tcp.alive_delta >= (20 * SECONDS) / 4, `${tcp.alive_delta} TCPWRAPs alive`);
        assert.deepStrictEqual(json.kinds.filter((k) => k.growing && k.name !== 'TCPWRAP').map((k) => k.name), []);
      } finally {
        stopTarget(target);
      }
    });

    // The official builds of the matrix: AsyncReset without its bool from
    // Node 24, the layout at 48/56 there, SFIs at 24 (V8 11) or 32.
    for (const build of nodeBuilds('official')) {
      it(`counts each kind the target counted itself on ${build.label}`, async function () {
        requireBuild(this, build);
        const r = await traceMix(build.node, { more: ['--backend', 'dtrace'], env: ENV });
        assert.strictEqual(r.json.node_version.split('.')[0], build.version);
        checkCounts(r);
      });
    }

    // Debian's node 18 runs in its own mount tree (test/support/node-builds.js):
    // its libnode.so.108 is no file of the host's, where DTrace looks for it.
    it('refuses, in one line, a process whose node is in another mount namespace (Debian\'s node 18)', async function () {
      const debian = buildNamed('debian18');
      requireBuild(this, debian);
      const target = await startTarget('async-mix.js', { node: debian.node });
      try {
        const r = await nodetrace(['async', '--backend', 'dtrace', '-p', String(target.pid), '-d', '1'], { env: ENV });
        assert.strictEqual(r.code, 3, r.stderr);
        assert.match(r.stderr, /^nodetrace: cannot trace PID \d+'s asynchronous operations with DTrace: it runs in another mount namespace, where \/usr\/lib\/x86_64-linux-gnu\/libnode\.so\.108 is not the host's file/);
        assert.match(r.stderr, /Use --backend bpftrace\./);
        assert.strictEqual(r.stderr.trim().split('\n').length, 2, r.stderr);
      } finally {
        stopTarget(target);
      }
    });

    it('refuses --stacks in one line: async.d has no creation stacks', async function () {
      const r = await nodetrace(['async', '-p', '1', '--backend', 'dtrace', '--stacks'], { env: ENV });
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, /--stacks needs bpftrace/);
    });
  });

  describe('ebadf', function () {
    let dir;
    beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-dtrace-ebadf-')); });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('stops at the failing close(), saves an owner-only core with gcore, resumes the target, demangled stack from the core', async function () {
      const target = await startTarget('ebadf-close.js', { env: { EBADF_ON_SIGNAL: '1', TICKS_AFTER: '5' }, args: ['--jitless'] });
      const exited = new Promise((resolve) => target.on('exit', (code) => resolve(code)));
      let signalled = false;
      const r = await nodetraceWatching(['ebadf', '--backend', 'dtrace', '-p', String(target.pid), '-o', dir], (err) => {
        if (!signalled && /watching PID/.test(err)) { signalled = true; target.kill('SIGUSR2'); }
      });
      assert.strictEqual(r.code, 0, r.stderr + r.stdout);
      // dtrace's ustack() holds the target under ptrace: the stack is walked in the core.
      assert.match(r.stdout, /stack {4}innermost first; walked in the core, JavaScript frames named from V8's own metadata/);
      assert.match(r.stdout, /closeTwice \(\S+\/ebadf-close\.js:\d+:\d+\) {2}\[JS/, 'the JavaScript that closed it, no flag on the target');
      assert.match(r.stdout, /node::fs::Close\(v8::FunctionCallbackInfo<v8::Value> const&\)/, 'a demangled frame');
      assert.doesNotMatch(r.stdout, /_ZN4node/, 'nothing mangled');
      const core = /core +(\S+) \(/.exec(r.stdout);
      assert(core, r.stdout);
      assert.strictEqual(fs.statSync(core[1]).mode & 0o777, 0o600);
      assert.match(r.stdout, /resumed +yes/);
      assert.strictEqual(await exited, 0, 'the target finished its work after the resume');
    });

    it('--abort: the target dies of SIGABRT at the failing close(), stack demangled; a name with a forged line ends nothing', async function () {
      // The target names itself with a newline and what the program prints
      // after a stack: its name is data, and its stack stays whole.
      const target = await startTarget('ebadf-close.js', { env: { EBADF_ON_SIGNAL: '1', EBADF_COMM: 'a\nEND pid=99999' }, args: ['--jitless'] });
      const comm = Buffer.from(/^comm ([0-9a-f]+)$/m.exec(target.startOutput)[1], 'hex').toString();
      const exited = new Promise((resolve) => target.on('exit', (code, signal) => resolve(signal)));
      let signalled = false;
      const r = await nodetraceWatching(['ebadf', '--backend', 'dtrace', '--abort', '-p', String(target.pid)], (err) => {
        if (!signalled && /watching PID/.test(err)) { signalled = true; target.kill('SIGUSR2'); }
      });
      assert.strictEqual(r.code, 0, r.stderr + r.stdout);
      assert.strictEqual(await exited, 'SIGABRT');
      assert.doesNotMatch(r.stdout, /_ZN4node/, 'nothing mangled');
      assert.match(r.stdout, /uv_fs_close|node::fs::Close/);
      assert.ok(r.stdout.includes(`process  PID ${target.pid} (${safeText(comm, { oneLine: true })}), thread`), r.stdout);
      const stack = r.stdout.split('\n').filter((l) => /^ {6}\S/.test(l));
      const close = stack.findIndex((l) => /uv_fs_close|node::fs::Close/.test(l));
      assert.ok(close >= 0 && stack.slice(close + 1).some((l) => /\b(main|__libc_start_call_main|node::Start)\b/.test(l)),
        `the stack down to where the thread started:\n${r.stdout}`);
      assert.doesNotMatch(r.stderr, /uv_fs_close|^END pid=/m, r.stderr);
    });
  });
});
