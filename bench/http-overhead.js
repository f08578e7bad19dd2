#!/usr/bin/env node
'use strict';
// What `node -r nodetrace/register` costs an HTTP server, side by side:
//   none      the server alone
//   register  started with the register hook, no tracer attached
//   traced    started with the hook while `nodetrace http -p PID --json`
//             reports every request (Linux, root, bpftrace;
//             NODETRACE_BPFTRACE picks one: 0.17 runs d-scripts/http.bt, an
//             output event per request; 0.23+ http-batched.bt)
//
//   wire      (--wire) a server started plain (no hook) while `nodetrace
//             http -p PID --json` reads its requests off its socket system
//             calls and, with --tls, its OpenSSL (d-scripts/http-wire.bt:
//             each call on a connection it follows, its length and first
//             bytes, in maps printed every 100 ms)
//   wirefloor (--wire) a server started plain while a bpftrace program
//             that only counts the wire's probes is attached (the same
//             syscall tracepoints for its PID; with --tls the same uprobes
//             on its OpenSSL): the wire's floor. The wire's two servers run
//             their own copies of node (bench/node-copy.js), so that their
//             uprobes trap nowhere else.
//
//   floor     (--floor; bpftrace 0.20+, whose -p filters uprobes in the
//             kernel) started with the hook while a bpftrace program that
//             only counts the probe is attached: the probe firing alone (the
//             uprobe, the hook's enabled path), which no tracer program can
//             make cheaper
//
//   --tls     every server speaks HTTPS (a self-signed certificate made by
//             openssl in a temporary directory), the load too
//
//   node bench/http-overhead.js [--rate 5000] [--seconds 3] [--rounds 9] [--sockets 32] [--floor] [--wire] [--tls]
//
// THE MEASURE: the server's CPU time per request, at a fixed request rate
// (--rate, on loopback, keep-alive). A fixed rate, not the most the server
// can do: on this 2-core host the load and the server share the CPUs, and
// throughput measures the scheduler as much as the server. CPU time is read
// in nanoseconds from /proc/PID/task/*/schedstat (every thread of the
// server: its main thread, libuv's pool, V8's GC helpers) before and after
// each round. The three servers run all along (the tracer stays attached to
// its one); rounds take the cases in turn, in a rotated order, and the
// median round of each case counts, and the median of its ratios to the
// untraced server's round (paired, with the quartiles). Each line says the rate reached too: a
// round that fell short of --rate by more than 2% is flagged.
const fs = require('fs');
const path = require('path');
const http = require('http');
const { spawn } = require('child_process');

const ROOT = path.join(__dirname, '..');
const options = require('./options');
const { nodeCopy } = require('./node-copy');
const { enableStats, bpftraceChild, runTimeOf } = require('./bpf-run-time');
const { load, measure: measureRound, median } = require('./http-load');
const RATE = options.number('rate', 5000);
const SECONDS = options.number('seconds', 3);
const ROUNDS = options.number('rounds', 9);
const SOCKETS = options.number('sockets', 32);
const FLOOR = options.flag('floor');
const WIRE = options.flag('wire');
const TLS = options.flag('tls');

if (process.argv[2] === '--server') {
  const handler = (req, res) => res.end('ok');
  const server = process.argv[3] ? require('https').createServer({ key: fs.readFileSync(process.argv[3]), cert: fs.readFileSync(process.argv[4]) }, handler)
    : http.createServer(handler);
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${server.address().port}\n`));
  return;
}

// --tls: a self-signed certificate for the servers, in a directory removed at exit.
const CERT = (() => {
  if (!TLS) return null;
  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'nodetrace-bench-tls-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  require('child_process').execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  return { key, cert };
})();

// A server: with the register hook or not, run by `node`.
function startServer(withRegister, node = process.execPath) {
  return new Promise((resolve, reject) => {
    const args = [...(withRegister ? ['-r', path.join(ROOT, 'register.js')] : []), __filename, '--server', ...(CERT ? [CERT.key, CERT.cert] : [])];
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (d) => {
      const m = /ready (\d+)/.exec(d);
      if (m) resolve({ child, port: Number(m[1]) });
      else reject(new Error(d));
    });
  });
}

// `nodetrace http -p PID --json`, as a user runs it (the bpftrace that
// NODETRACE_BPFTRACE names, else the host's), its lines counted.
function startTracer(pid) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'nodetrace'), 'http', '-p', String(pid), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let ready = false;
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { for (let i = d.indexOf('\n'); i >= 0; i = d.indexOf('\n', i + 1)) lines++; });
    child.stderr.on('data', (d) => {
      err += d;
      const m = /tracing HTTP (?:requests of|on the sockets of) PID \d+ with (\S+ \S+)/.exec(err);
      if (!ready && m) { ready = true; resolve({ child, tracer: m[1], lines: () => lines }); }
    });
    child.on('exit', () => { if (!ready) reject(new Error(`nodetrace http did not start: ${err}`)); });
  });
}

// Ends `nodetrace http` as Ctrl-C does; resolves once it has exited.
function endTracer({ child }) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGINT');
  return exited;
}

// A bpftrace program that only counts the server probe of `pid` (-p).
function startFloor(pid) {
  const { detectBpftrace } = require('../lib/tracer/detect');
  const { usdtPathForPid } = require('../lib/tracer/capabilities');
  const { librariesOf } = require('../lib/probe-libraries');
  const { HTTP_PROVIDER } = require('../lib/http/probes');
  const tracer = detectBpftrace();
  if (!tracer.available || !(tracer.versionParts.major > 0 || tracer.versionParts.minor >= 20)) {
    throw new Error(`--floor needs bpftrace 0.20+ (its -p filters uprobes in the kernel; found ${tracer.version || tracer.reason})`);
  }
  const file = usdtPathForPid(tracer, pid, librariesOf(pid, HTTP_PROVIDER)[0]);
  return attachedBpftrace(tracer, ['-p', String(pid), '-e', `usdt:${file}:nodetrace:http-server-request-done { @fired = count(); }`], 'the floor');
}

// bpftrace run with `argv`, once it has attached its probes: { child }.
function attachedBpftrace(tracer, argv, what) {
  const child = spawn(tracer.path, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const take = (d) => { out += d; if (/Attach/.test(out)) resolve({ child }); };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('exit', () => reject(new Error(`${what}'s bpftrace ended: ${out}`)));
  });
}

// The wire's floor: a bpftrace program that only counts, for `pid`, the
// probes d-scripts/http-wire.bt attaches (its syscall tracepoints; with
// --tls its uprobes on the OpenSSL in `node`, the server's own copy).
function startWireFloor(pid, node) {
  const { detectBpftrace } = require('../lib/tracer/detect');
  const tracer = detectBpftrace();
  if (!tracer.available) throw new Error(`the wire's floor needs bpftrace: ${tracer.reason}`);
  const calls = ['enter_read', 'exit_read', 'enter_write', 'exit_write', 'enter_writev', 'exit_writev', 'enter_close'];
  const probes = calls.map((c) => `tracepoint:syscalls:sys_${c}`);
  if (CERT) probes.push(...['uprobe', 'uretprobe'].flatMap((k) => ['SSL_read', 'SSL_write'].map((f) => `${k}:${node}:${f}`)), `uprobe:${node}:SSL_free`);
  return attachedBpftrace(tracer, ['-e', `${probes.join(',\n')}\n/pid == ${Number(pid)}/ { @fired = count(); }`], 'the wire floor');
}

// Requests at RATE a second for `seconds` over keep-alive sockets; resolves
// the requests completed and the seconds it took.
const loadOf = (server, seconds) => ({ port: server.port, seconds, rate: RATE, sockets: SOCKETS, tls: Boolean(CERT) });
const measure = (server) => measureRound(server.child.pid, loadOf(server, SECONDS));

(async () => {
  const cases = ['none', 'register'];
  if (process.platform === 'linux' && process.getuid() === 0) cases.push('traced', ...(FLOOR ? ['floor'] : []), ...(WIRE ? ['wire', 'wirefloor'] : []));
  const servers = {};
  let tracer = null;
  let floor = null;
  let wire = null;
  let wireFloor = null;
  const nodes = { wire: WIRE && nodeCopy('node-wire'), wirefloor: WIRE && nodeCopy('node-wirefloor') };
  try {
    for (const c of cases) servers[c] = await startServer(!['none', 'wire', 'wirefloor'].includes(c), nodes[c] || process.execPath);
    if (servers.traced) tracer = await startTracer(servers.traced.child.pid);
    if (servers.wire) wire = await startTracer(servers.wire.child.pid);
    if (servers.floor) floor = await startFloor(servers.floor.child.pid);
    if (servers.wirefloor) wireFloor = await startWireFloor(servers.wirefloor.child.pid, nodes.wirefloor);
    for (const c of cases) await load(loadOf(servers[c], 1));   // warm up each server's JIT
    // The bpftrace behind each wire case, whose programs' run time the kernel counts.
    const bpftraceOf = { wire: wire && bpftraceChild(wire.child.pid), wirefloor: wireFloor && wireFloor.child.pid };
    const restoreStats = WIRE ? enableStats() : () => {};
    const results = Object.fromEntries(cases.map((c) => [c, []]));
    try {
      for (let r = 0; r < ROUNDS; r++) {
        for (let i = 0; i < cases.length; i++) {
          const c = cases[(r + i) % cases.length];
          if (bpftraceOf[c]) {
            const { result: round, ns } = await runTimeOf(bpftraceOf[c], () => measure(servers[c]));
            round.bpfNsPerReq = ns / round.done;
            results[c].push(round);
          } else {
            results[c].push(await measure(servers[c]));
          }
        }
      }
    } finally {
      restoreStats();
    }
    // The tracers ended (as Ctrl-C does) before their lines are counted:
    // the last batch (100 ms) is printed at the end.
    await Promise.all([tracer, wire].filter(Boolean).map(endTracer));
    const baseCpu = median(results.none.map((x) => x.cpuUsPerReq));
    console.log(`${CERT ? 'HTTPS, ' : ''}${RATE} requests/s for ${SECONDS} s per case, ${ROUNDS} interleaved rounds, node ${process.version}`
      + `${tracer ? `, ${tracer.tracer}` : ''}; the server's CPU time per request (all threads), median round:`);
    for (const c of cases) {
      const cpu = median(results[c].map((x) => x.cpuUsPerReq));
      const rps = median(results[c].map((x) => x.rps));
      const short = results[c].filter((x) => x.rps < RATE * 0.98).length;
      // Each round's ratio to the untraced server's in the same round: the
      // host's drift (±15% between rounds here) cancels out.
      const paired = results[c].map((x, r) => x.cpuUsPerReq / results.none[r].cpuUsPerReq).sort((a, b) => a - b);
      const q = (f) => paired[Math.floor(f * (paired.length - 1))].toFixed(3);
      console.log(`  ${c.padEnd(9)} ${cpu.toFixed(2).padStart(7)} µs CPU/req  x${(cpu / baseCpu).toFixed(3)}`
        + (c === 'none' ? '' : `, paired x${median(paired).toFixed(3)} [${q(0.25)}, ${q(0.75)}]`)
        + `  (${rps.toFixed(0)} req/s`
        + `${short ? `; ${short} rounds under ${RATE * 0.98}` : ''})`
        + (c === 'traced' ? `  ${tracer.lines()} requests traced` : '')
        + (c === 'wire' ? `  ${wire.lines()} requests traced` : '')
        + (bpftraceOf[c] ? `; its BPF programs ${median(results[c].map((x) => x.bpfNsPerReq)).toFixed(0)} ns/req` : ''));
    }
    if (WIRE) {
      console.log('  (BPF ns/req: the run time of the tracer\'s programs by the kernel\'s statistics, per request, median round;'
        + ' the load generator\'s own system calls, filtered out in those programs, included)');
    }
    console.log(`  rounds (µs CPU/req): ${cases.map((c) => `${c} ${results[c].map((x) => x.cpuUsPerReq.toFixed(1)).join(' ')}`).join('; ')}`);
  } finally {
    if (tracer) tracer.child.kill('SIGINT');
    if (floor) floor.child.kill('SIGINT');
    if (wire) wire.child.kill('SIGINT');
    if (wireFloor) wireFloor.child.kill('SIGINT');
    for (const s of Object.values(servers)) s.child.kill('SIGKILL');
  }
})();
