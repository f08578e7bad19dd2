'use strict';
// The unprepared HTTP(S) server of the wire tests (test/http-wire.test.js,
// test/node-builds.test.js), its clients, and the check of what was traced
// against what they measured.
const assert = require('assert');
const path = require('path');
const readline = require('readline');
const { spawn, execFile } = require('child_process');
const { nodetrace, ROOT } = require('./harness');

// The server answers /slow from a setTimeout(150), which may fire up to
// 2 ms early by a fresh clock (test/http.test.js says why).
const SLOW_MS = 150;
const TIMER_EARLY_MS = 2;
// The traced latency ends at the response's write (server) or its head's
// read (client); the client's clock stops later, after a wakeup: 1 ms of
// slack for the order of two clocks read in two processes.
const CLOCK_SLACK_MS = 1;

// Every server started, for the tests' afterEach to kill.
const targets = new Set();

// A self-signed certificate for the HTTPS server, made by openssl in `dir`.
async function certificate(dir) {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1']);
  return [key, cert];
}

// test/targets/http-wire-server.js with `args`, run by `node` (a build of
// the matrix): { child, port, plainPort (with --tls: its plain server's),
// results (what its own client measured), finished (its client's end),
// closed (what its closing client counted, once stopped) }.
function startServer(args = [], { node = process.execPath } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [path.join(ROOT, 'test', 'targets', 'http-wire-server.js'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    targets.add(child);
    const results = [];
    let clientDone;
    const finished = new Promise((r) => { clientDone = r; });
    let closingDone;
    const closed = new Promise((r) => { closingDone = r; });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^ready (\d+) (\d+)(?: (\d+))?$/.exec(line);
      if (m) resolve({ child, port: Number(m[2]), plainPort: m[3] ? Number(m[3]) : null, results, finished, closed });
      else if (line === 'client done') clientDone();
      else if (line.startsWith('{"closing"')) closingDone(JSON.parse(line));
      else if (line.startsWith('{')) results.push(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`http-wire-server exited (${code})`)));
    setTimeout(() => reject(new Error('http-wire-server did not start')), 30000);
  });
}

function run(file, args) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 30000 }, (err, stdout, stderr) => (err ? reject(new Error(`${file}: ${err.message} ${stderr}`)) : resolve(stdout)));
  });
}

// curl over one keep-alive connection: per URL, its status and time to the response's first byte.
// netOf: the host's curl run in that process's network namespace (nsenter), where
// 127.0.0.1 is that process's loopback: a pod's or container's with no network.
async function curl(port, paths, scheme = 'http', { netOf = null } = {}) {
  const args = ['-s', '-k'];
  for (const p of paths) args.push('-o', '/dev/null', '-w', '%{http_code} %{time_starttransfer}\\n', `${scheme}://127.0.0.1:${port}${p}`);
  const out = netOf ? await run('nsenter', [`--net=/proc/${netOf}/ns/net`, 'curl', ...args]) : await run('curl', args);
  return out.trim().split('\n').map((l, i) => {
    const [status, s] = l.split(' ');
    return { via: 'curl', method: 'GET', path: paths[i], status: Number(status), ms: Number(s) * 1000 };
  });
}

// `nodetrace http -p PID --json` (its environment and `env`) once it says it
// is tracing: { tracer (its process, to end with SIGINT), traced (its
// result) }; throws if it ended first.
async function traceAttached(pid, { env = {} } = {}) {
  let go;
  const attached = new Promise((r) => { go = r; });
  let tracer;
  const traced = nodetrace(['http', '-p', String(pid), '-d', '60', '--json'], {
    env,
    timeoutMs: 100000,
    onSpawn: (c) => { tracer = c; c.stderr.on('data', (d) => { if (/tracing HTTP/.test(d)) go(); }); },
  });
  const early = await Promise.race([attached.then(() => null), traced]);
  if (early) throw new Error(`nodetrace http ended before it attached (${early.code}): ${early.stderr}`);
  return { tracer, traced };
}

// Each request the clients measured, traced once on the server (and once on
// the client for the server's own http.get), with its method, path and
// status, and a latency the client's encloses. -> only(direction, path):
// the one line of that request.
function eachOnceAsMeasured(lines, measured, s, stdout, { scheme = 'http', port = s.port } = {}) {
  const base = `${scheme}://127.0.0.1:${port}`;
  const pathOf = (l) => (l.url.startsWith(base) ? l.url.slice(base.length) : l.url);
  const only = (direction, p) => {
    const found = lines.filter((l) => l.direction === direction && pathOf(l) === p);
    assert.strictEqual(found.length, 1, `${direction} ${p}: ${found.length} lines in\n${stdout}`);
    assert.strictEqual(found[0].pid, s.child.pid);
    return found[0];
  };
  for (const c of measured) {
    const server = only('server', c.path);
    assert.deepStrictEqual([server.method, server.status, server.error], [c.method, c.status, null], c.path);
    // The client's request encloses the server's handling of it.
    assert(server.ms <= c.ms + CLOCK_SLACK_MS, `${c.via} ${c.path}: server ${server.ms} ms, client measured ${c.ms} ms`);
    if (c.path.startsWith('/slow')) assert(server.ms >= SLOW_MS - TIMER_EARLY_MS, `${c.path}: server ${server.ms} ms`);
    if (c.via === 'http.get') {
      const client = only('client', c.path);
      assert.strictEqual(client.url, base + c.path);
      assert.deepStrictEqual([client.method, client.status], ['GET', c.status]);
      assert(client.ms <= c.ms + CLOCK_SLACK_MS && client.ms + CLOCK_SLACK_MS >= server.ms,
        `${c.path}: client traced ${client.ms} ms, measured ${c.ms} ms, server ${server.ms} ms`);
    }
  }
  return only;
}

module.exports = { SLOW_MS, TIMER_EARLY_MS, CLOCK_SLACK_MS, targets, certificate, startServer, run, curl, traceAttached,
  eachOnceAsMeasured };
