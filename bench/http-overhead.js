#!/usr/bin/env node
'use strict';
// What `node -r nodetrace/register` costs an HTTP server, side by side:
//   none      the server alone
//   register  started with the register hook, no tracer attached
//   traced    the same while `d-scripts/http.bt` prints every request
//             (Linux, root, bpftrace)
//
//   node bench/http-overhead.js [--seconds 3] [--rounds 3] [--connections 16]
//
// A load process keeps --connections keep-alive requests in flight (http.get
// with an Agent) for --seconds; the server's CPU time (utime + stime from
// /proc) is read before and after. Two figures per case: requests per second
// and the server's CPU microseconds per request, the cost that matters on a
// busy host where throughput depends on what else runs. Cases are
// interleaved round by round; the median round counts.
const fs = require('fs');
const path = require('path');
const http = require('http');
const { spawn } = require('child_process');

const ROOT = path.join(__dirname, '..');
const options = require('./options');
const SECONDS = options.number('seconds', 3);
const ROUNDS = options.number('rounds', 3);
const CONNECTIONS = options.number('connections', 16);
const TICKS = 100;   // USER_HZ: /proc/PID/stat counts CPU time in 1/100 s

if (process.argv[2] === '--server') {
  const server = http.createServer((req, res) => res.end('ok'));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${server.address().port}\n`));
  return;
}

function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

function startServer(withRegister) {
  return new Promise((resolve, reject) => {
    const args = [...(withRegister ? ['-r', path.join(ROOT, 'register.js')] : []), __filename, '--server'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (d) => {
      const m = /ready (\d+)/.exec(d);
      if (m) resolve({ child, port: Number(m[1]) });
      else reject(new Error(d));
    });
  });
}

function startTracer(pid) {
  return new Promise((resolve, reject) => {
    const lib = fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')
      .map((l) => l.split(/\s+/)[5]).find((f) => f && /nodetrace-usdt-.*\.so$/.test(f) && require('../lib/usdt/probe-libraries')
        .declaresProvider(f, require('../lib/http/probes').HTTP_PROVIDER));
    const child = spawn('bpftrace', ['-p', String(pid), path.join(ROOT, 'd-scripts', 'http.bt'), lib, String(pid), '0'], {
      env: { ...process.env, BPFTRACE_STRLEN: '200' }, stdio: ['ignore', 'pipe', 'ignore'],
    });
    let lines = 0;
    let ready = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      if (!ready && d.includes('Hit Ctrl-C')) { ready = true; resolve({ child, lines: () => lines }); }
      lines += d.split('\n').length - 1;
    });
    child.on('exit', () => { if (!ready) reject(new Error('bpftrace did not start')); });
  });
}

function load(port) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let done = 0;
  let stop = false;
  return new Promise((resolve) => {
    let inFlight = 0;
    const one = () => {
      if (stop) { if (--inFlight === 0) { agent.destroy(); resolve(done); } return; }
      http.get({ port, host: '127.0.0.1', path: '/x', agent }, (res) => {
        res.resume();
        res.on('end', () => { done++; one(); });
      }).on('error', () => one());
    };
    for (let i = 0; i < CONNECTIONS; i++) { inFlight++; one(); }
    setTimeout(() => { stop = true; }, SECONDS * 1000);
  });
}

async function runCase(name) {
  const { child, port } = await startServer(name !== 'none');
  let tracer = null;
  try {
    if (name === 'traced') tracer = await startTracer(child.pid);
    await load(port);   // warm up the server's JIT
    const cpu0 = cpuSeconds(child.pid);
    const t0 = process.hrtime.bigint();
    const n = await load(port);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = cpuSeconds(child.pid) - cpu0;
    return { rps: n / secs, cpuUsPerReq: (cpu * 1e6) / n, traced: tracer ? tracer.lines() : null };
  } finally {
    if (tracer) tracer.child.kill('SIGKILL');
    child.kill('SIGKILL');
  }
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

(async () => {
  const cases = ['none', 'register'];
  if (process.platform === 'linux' && process.getuid() === 0) cases.push('traced');
  const results = Object.fromEntries(cases.map((c) => [c, []]));
  for (let r = 0; r < ROUNDS; r++) for (const c of cases) results[c].push(await runCase(c));
  const base = median(results.none.map((x) => x.rps));
  const baseCpu = median(results.none.map((x) => x.cpuUsPerReq));
  console.log(`${SECONDS} s per case, ${ROUNDS} rounds, ${CONNECTIONS} connections, node ${process.version}; medians:`);
  for (const c of cases) {
    const rps = median(results[c].map((x) => x.rps));
    const cpu = median(results[c].map((x) => x.cpuUsPerReq));
    console.log(`  ${c.padEnd(9)} ${rps.toFixed(0).padStart(7)} req/s (x${(rps / base).toFixed(3)})  `
      + `${cpu.toFixed(1).padStart(6)} µs CPU/req (x${(cpu / baseCpu).toFixed(3)})`
      + (c === 'traced' ? `  (${median(results[c].map((x) => x.traced))} lines traced)` : ''));
  }
})();
