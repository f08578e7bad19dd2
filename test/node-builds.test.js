'use strict';
// The matrix of real Node builds @tracer: latency, snoop and http off the wire against
// this machine's node, official Node 22/24/26 and Debian 12's own nodejs 18
// (shared libnode and a stripped shared libuv, run in its own mount namespace
// as in a container). The builds come from `make node-builds`
// (scripts/node-builds.sh); one missing is skipped with the reason, and in CI
// it fails instead. The sqlite3 and USDT add-ons are N-API: one build serves all.
// ebadf on each build: test/ebadf.test.js ("JavaScript frames on every Node build").
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const { ROOT, NODETRACE, requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { nodeBuilds, buildNamed, missingReason } = require('./support/node-builds');
const httpWire = require('./support/http-wire');
const { findProbePoints } = require('../lib/latency/probe-points');
const { parseMaps } = require('../lib/symbolize');

const SQLITE_KINDS = ['Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose', 'Work_BeginPrepare', 'Work_BeginRun'];
const PLUMBING = /napi_queue_async_work|ThreadPoolWork::ScheduleWork/;
const REGISTER = path.join(ROOT, 'register.js');
const names = (kinds) => kinds.map((k) => `${k.name} (${k.count})`).join(', ');

// Runs `nodetrace <args>` until `done(text)` holds for its stdout (or timeoutMs).
function runUntil(args, { done = () => false, timeoutMs = 60000 }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [NODETRACE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 20000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => {
      stdout += c;
      if (done(stdout)) child.kill('SIGINT');
    });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

for (const build of nodeBuilds('all', { except: ['node18'] })) {
  describe(`Node build: ${build.label} @tracer`, function () {
    this.timeout(120000);
    before(function () { requireTracing(this, { also: () => missingReason(build) }); });
    afterEach(killStragglers);

    // One trace per build (bpftrace 0.17 takes seconds per uprobe to attach to
    // a large official binary), shared by the three latency tests below: one
    // process runs both the sqlite3 loop and the crypto.pbkdf2 loop (-r loads
    // the second beside the first).
    describe('latency -p on one process running the sqlite3 and crypto.pbkdf2 loops', function () {
      let kinds;
      let pool;
      let stderr;
      before(async function () {
        const target = await startTarget('sqlite-loop.js', { node: build.node, args: ['-r', path.join(ROOT, 'test', 'targets', 'crypto-loop.js')] });
        try {
          const r = await nodetrace(['latency', '-p', String(target.pid), '-d', '3', '--json'], { timeoutMs: 110000 });
          assert.strictEqual(r.code, 0, r.stderr);
          kinds = JSON.parse(r.stdout).kinds;
          pool = JSON.parse(r.stdout).pool;
          stderr = r.stderr;
          console.log(`      ${build.name}: ${names(kinds)}`);
        } finally {
          stopTarget(target);
        }
      });

      it('names the sqlite3 loop\'s five N-API kinds by the add-on\'s functions', function () {
        for (const kind of SQLITE_KINDS) {
          const found = kinds.find((k) => k.name.includes('::' + kind + '('));
          assert(found, `no kind named ${kind} in ${names(kinds)}`);
        }
        assert(kinds.find((k) => k.name.includes('Work_BeginRun')).count > 20, names(kinds));
      });

      it('names crypto.pbkdf2 work so, found by its C++ job class, with plausible latencies', function () {
        // CryptoJob<PBKDF2Traits>::Run where it queues the work itself; from
        // Node 26 (ScheduleWork reached by a tail call) by the job's class,
        // DeriveBitsJob<PBKDF2Traits>::DoThreadPoolWork().
        const pbkdf2 = kinds.find((k) => k.name === 'crypto.pbkdf2');
        assert(pbkdf2, `no crypto.pbkdf2 kind in ${names(kinds)}`);
        assert(pbkdf2.symbols.some((sym) =>
          /^node::crypto::(CryptoJob|DeriveBitsJob)<node::crypto::PBKDF2Traits>::/.test(sym)),
          `crypto.pbkdf2 found from ${pbkdf2.symbols}`);
        assert(pbkdf2.count > 5, names(kinds));
        // 2,000 iterations of PBKDF2-SHA256 take about a millisecond of CPU;
        // two at a time on a loaded 2-core machine: a total between 10 µs and 5 s.
        assert(pbkdf2.p50 > 10 && pbkdf2.p50 < 5e6, `p50 ${pbkdf2.p50} us`);
        assert(pbkdf2.p50 <= pbkdf2.p90 && pbkdf2.p90 <= pbkdf2.p99, 'percentiles in order');
        assert(pbkdf2.breakdown.run && pbkdf2.breakdown.run.p50 > 0, 'the run time on a pool thread was seen');
        const h = pbkdf2.histogram.reduce((n, b) => n + Number(b.count), 0);
        assert.strictEqual(h, pbkdf2.count);
        console.log(`      ${build.name}: PBKDF2 ${pbkdf2.count} ops in 3 s, p50 ${Math.round(pbkdf2.p50)} µs, p99 ${Math.round(pbkdf2.p99)} µs, run p50 ${Math.round(pbkdf2.breakdown.run.p50)} µs`);
      });

      it('names no kind after N-API\'s or Node\'s scheduling plumbing', function () {
        assert(!kinds.some((k) => PLUMBING.test(k.name)), `a kind named after the plumbing: ${names(kinds)}`);
      });

      it(build.shared ? 'says that fs and dns work cannot be seen (stripped shared libuv)' : 'measures the pool as a whole (threads, queue)', function () {
        if (build.shared) {
          assert.match(stderr, /fs, dns\.lookup and dns\.lookupService work is not seen: libuv\.so\.1[.0-9]* has no symbols/);
          assert.strictEqual(pool, null, 'no pool figures without uv__work_submit');
        } else {
          assert(pool && pool.threads >= 1 && pool.threads <= 4, JSON.stringify(pool));
          assert(pool.run_share_by_kind.some((k) => k.name === 'crypto.pbkdf2'), JSON.stringify(pool));
        }
      });
    });

    if (build.shared) {
      it('the stripped libuv\'s statics found from its code are what a queued request really holds', async function () {
        const target = await startTarget('crypto-loop.js', { node: build.node });
        try {
          const found = findProbePoints(target.pid);
          assert.deepStrictEqual(found.missing, []);
          const work = found.points.uv__queue_work;
          assert.match(work.how, /^address: /, 'Debian\'s libuv is stripped: found by address');
          // bpftrace reads the request's work_req (88: work, 96: done) once
          // uv_queue_work filled it in: at the uv_mutex_lock it calls next.
          const program = [
            'uprobe:$1:uv_queue_work /pid == $2/ { @req[tid] = arg1; }',
            'uprobe:$1:uv_mutex_lock /@req[tid]/ { $r = @req[tid]; delete(@req[tid]);',
            '  if (*(uint64 *)($r + 88) != 0) { printf("work_req %lx %lx\\n", *(uint64 *)($r + 88), *(uint64 *)($r + 96)); exit(); } }',
            'interval:s:20 { exit(); }',
          ].join('\n');
          const bt = spawnSync('bpftrace', ['-e', program, found.points.uv_queue_work.file, String(target.pid)], { encoding: 'utf8', timeout: 60000 });
          const m = /work_req ([0-9a-f]+) ([0-9a-f]+)/.exec(bt.stdout);
          assert(m, `bpftrace saw no queued request:\n${bt.stdout}\n${bt.stderr}`);
          // Runtime address - the library's load base = the file's address (its first PT_LOAD is at 0).
          const maps = parseMaps(fs.readFileSync(`/proc/${target.pid}/maps`, 'utf8'));
          const base = maps.find((x) => x.path === work.object && x.offset === 0).start;
          assert.strictEqual('0x' + (parseInt(m[1], 16) - base).toString(16), work.location);
          assert.strictEqual('0x' + (parseInt(m[2], 16) - base).toString(16), found.points.uv__queue_done.location);
        } finally {
          stopTarget(target);
        }
      });
    }

    it('snoop PID: a bunyan app\'s debug records', async function () {
      const app = await startTarget('bunyan-debug-loop.js', { node: build.node, args: ['-r', REGISTER], env: { INTERVAL: '100', NAME: `matrix-${build.name}` } });
      try {
        const re = new RegExp(` DEBUG: matrix-${build.name}/${app.pid} on .*: something went wrong \\d+`);
        const r = await runUntil(['snoop', String(app.pid)], { done: (out) => re.test(out), timeoutMs: 45000 });
        assert.match(r.stdout, re, r.stderr);
        assert.strictEqual(r.code, 0, r.stderr);
      } finally {
        stopTarget(app);
      }
    });

    it('http -p: plain HTTP and HTTPS read off the wire, served and made, each request once', async function () {
      // One unprepared process serving both (test/targets/http-wire-server.js
      // --tls): HTTPS through the OpenSSL this build uses (linked into node,
      // or Debian's shared libssl.so.3: SSL_read/SSL_write), plain HTTP
      // through its socket calls; curl and node's https.get (the server's own
      // client), each once (on this machine's node too: http-wire.test.js
      // leaves this to it).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `matrix-${build.name}-wire-`));
      try {
        const s = await httpWire.startServer(['--tls', ...(await httpWire.certificate(dir))], { node: build.node });
        const { tracer, traced } = await httpWire.traceAttached(s.child.pid);
        const plain = await httpWire.curl(s.plainPort, ['/fast/plain', '/missing/plain', '/slow/plain']);
        const tls = await httpWire.curl(s.port, ['/fast/tls', '/missing/tls', '/slow/tls'], 'https');
        s.child.stdin.write('client 2\n');
        await s.finished;
        await new Promise((r) => setTimeout(r, 1000));   // the last batch: within 100 ms, held 400 ms
        tracer.kill('SIGINT');
        const res = await traced;
        assert.strictEqual(res.code, 0, res.stderr);
        assert.match(res.stderr, build.shared ? /its HTTPS off the OpenSSL in \S*libssl\.so\.3 /
          : /its HTTPS off the OpenSSL in \S*\/bin\/node /);
        const lines = res.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
        httpWire.eachOnceAsMeasured(lines, plain, s, res.stdout, { port: s.plainPort });
        httpWire.eachOnceAsMeasured(lines, [...tls, ...s.results], s, res.stdout, { scheme: 'https' });
        assert.strictEqual(lines.length, 3 + 3 + 2 * 2, res.stdout);
      } finally {
        for (const c of httpWire.targets) c.kill('SIGKILL');
        httpWire.targets.clear();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

describe('nodetrace doctor -p on Debian\'s nodejs 18 in its own mount namespace @tracer', function () {
  this.timeout(60000);
  const build = buildNamed('debian18');
  before(function () { requireTracing(this, { also: () => missingReason(build) }); });
  afterEach(killStragglers);

  it('says which build it is, where each probe point is, and what will not work', async function () {
    const target = await startTarget('crypto-loop.js', { node: build.node });
    try {
      const r = await nodetrace(['doctor', '-p', String(target.pid), '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.strictEqual(report.nodeVersion, '18.20.4');
      assert.strictEqual(report.node, 'shared libnode.so.108');
      assert.match(report.libuv, /^shared libuv\.so\.1.* \(stripped\)$/);
      assert.strictEqual(report.otherMountNamespace, true);
      assert(report.probes.every((p) => p.found), JSON.stringify(report.probes));
      assert.deepStrictEqual(report.probes.filter((p) => p.location.startsWith('0x')).map((p) => p.name), ['uv__queue_work', 'uv__queue_done']);
      assert(report.wontWork.some((w) => /sees other mounts than nodetrace/.test(w)));
      // latency instantiates its program here (the stripped libuv: no @pool part): its dry run, run by a shell.
      assert.match(report.latencyByHand, new RegExp(`^\\S+/bin/nodetrace latency -p ${target.pid} -n \\| sh$`));
      const text = await nodetrace(['doctor', '-p', String(target.pid)]);
      assert.match(text.stdout, /Node {5}v18\.20\.4; N-API shared libnode\.so\.108/);
      // JavaScript frames: named from the metadata in Debian's libnode, with no flag on the process.
      assert.match(text.stdout,
        /^ {2}JS {7}named with no flag, from V8 10\.2\.154\.26's metadata in \/usr\/lib\/x86_64-linux-gnu\/libnode\.so\.108 /m);
      assert.match(report.javascript, /^named with no flag, from V8 10\.2\.154\.26's metadata/);
      // HTTPS off the wire: Debian's node links the system's OpenSSL.
      const http = report.commands.find((c) => c.command === 'http');
      assert.match(http.why, /^with -p PID, off the wire: plain HTTP from its socket calls, HTTPS from the shared libssl\.so\.3 \(\S+\/libssl\.so\.3\);/);
    } finally {
      stopTarget(target);
    }
  });
});
