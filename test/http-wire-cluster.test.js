'use strict';
// `nodetrace http NAME` and `nodetrace http PID,PID` on a cluster app with no
// preparation (test/targets/cluster-express.js: Express under node's cluster
// module, a primary and 2 workers): one tracer reads every process off its
// sockets (d-scripts/http-wire.bt with a set of PIDs), each request under the
// worker that served it, against what each worker counted and timed itself.
// Plain HTTP by name, HTTPS by the PIDs list. In each, once the trace is
// attached, a worker is killed and the primary forks another (as apps under
// cluster do): that one is read from its start, by the same tracer, and
// its requests counted as it counted them. Runs under the bpftrace the
// suite is run with (NODETRACE_BPFTRACE: a tier).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const { spawn } = require('child_process');
const { requireTracing, nodetrace, killStragglers, ROOT } = require('./support/harness');
const { certificate, targets } = require('./support/http-wire');

// The app's /slow answers after 100 ms: its p50 as traced (from the
// request's read to the response's write) lies within 2% of the app's own,
// timed from its first middleware to its call of res.send() and to that
// call's return (the write is inside it; on a busy machine, HTTPS's
// encryption there took 6 ms: bpftrace 0.23, load 10 on 2 cores).
const P50_TOLERANCE = 0.02;
const REQUESTS = 40;

function startCluster(args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'test', 'targets', 'cluster-express.js'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    targets.add(child);
    const reports = [];
    let done;
    let respawned;
    const finished = new Promise((r) => { done = r; });
    const replaced = new Promise((r) => { respawned = r; });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^ready (\d+) (\d+) (\d+) (\d+)$/.exec(line);
      const r = /^respawned (\d+) (\d+)$/.exec(line);
      if (m) resolve({ child, primary: Number(m[1]), port: Number(m[2]), workers: [Number(m[3]), Number(m[4])], reports,
        finished, replaced });
      else if (r) respawned({ old: Number(r[1]), now: Number(r[2]) });
      else if (line.startsWith('{')) reports.push(JSON.parse(line));
      else if (line === 'client done') done();
    });
    child.on('exit', (code) => reject(new Error(`cluster-express exited (${code})`)));
    setTimeout(() => reject(new Error('cluster-express did not start')), 30000);
  });
}

// nodetrace http TARGET --json while the primary replaces a worker, then
// sends its requests. -> also { respawned: { old, now } }, app.workers then
// the workers that served.
async function traceWhileServing(target, app) {
  let go;
  const attached = new Promise((r) => { go = r; });
  let tracer;
  let stderr = '';
  const traced = nodetrace(['http', target, '-d', '90', '--json'], {
    timeoutMs: 150000,
    onSpawn: (c) => { tracer = c; c.stderr.on('data', (d) => { stderr += d; if (/tracing HTTP/.test(stderr)) go(); }); },
  });
  const early = await Promise.race([attached.then(() => null), traced]);
  if (early) throw new Error(`nodetrace http ended before it attached (${early.code}): ${early.stderr}`);
  app.child.stdin.write('respawn\n');
  const respawned = await app.replaced;
  app.workers = app.workers.map((w) => (w === respawned.old ? respawned.now : w));
  app.child.stdin.write(`client ${REQUESTS}\n`);
  await app.finished;
  // The last events come in a batch within 100 ms, are held 400 ms for ordering, then shown.
  await new Promise((r) => setTimeout(r, 1000));
  tracer.kill('SIGINT');
  const res = await traced;
  assert.strictEqual(res.code, 0, res.stderr);
  return { res, respawned, lines: res.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Each worker's requests served, by route and status, exactly as it counted
// them (the one forked during the trace too: said in one line as it
// started); none under the primary nor the worker killed before the
// requests; /slow's p50 as the app timed it.
function assertAsServed(app, { res, respawned, lines }) {
  const { stdout } = res;
  const served = lines.filter((l) => l.direction === 'server');
  assert.strictEqual(served.filter((l) => l.pid === app.primary || l.pid === respawned.old).length, 0, stdout);
  assert.match(res.stderr, new RegExp(`^nodetrace: PID ${respawned.now}, worker 3 of ${app.primary}, started while tracing: `
    + 'reading its HTTP off the wire too\\.$', 'm'));
  const routeOf = (url) => (/^\/(fast|slow)\/\d+$/.test(url) ? url.replace(/\/\d+$/, '') : url === '/items' ? '/items' : '(none)');
  let total = 0;
  for (const r of app.reports) {
    assert(app.workers.includes(r.worker), JSON.stringify(r));
    const traced = {};
    for (const l of served.filter((x) => x.pid === r.worker)) {
      const key = `${l.method} ${routeOf(l.url)} ${l.status}`;
      traced[key] = (traced[key] || 0) + 1;
    }
    assert.deepStrictEqual(traced, r.served, `worker ${r.worker}\n${stdout}`);
    total += Object.values(r.served).reduce((a, b) => a + b, 0);
  }
  assert.strictEqual(total, REQUESTS);
  // Both workers served (the primary deals connections out in turn).
  for (const r of app.reports) assert(Object.keys(r.served).length > 0, JSON.stringify(app.reports));
  const ownMs = app.reports.flatMap((r) => r.slowMs);
  const tracedMs = served.filter((l) => l.url.startsWith('/slow/')).map((l) => l.ms);
  assert.strictEqual(tracedMs.length, ownMs.length);
  const [before, after, seen] = [median(ownMs), median(app.reports.flatMap((r) => r.sentMs)), median(tracedMs)];
  assert(seen >= before * (1 - P50_TOLERANCE) && seen <= after * (1 + P50_TOLERANCE),
    `/slow p50: traced ${seen} ms, the app's own ${before} ms to its res.send() call, ${after} ms to its return`);
}

describe('nodetrace http on a cluster app, unprepared (the wire, several processes) @tracer', function () {
  this.timeout(200000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);
  afterEach(() => { for (const c of targets) c.kill('SIGKILL'); targets.clear(); });

  it('by name: the primary and its 2 workers read by one tracer, each request under its worker, a worker forked anew too', async function () {
    const app = await startCluster();
    const pids = [app.primary, ...app.workers].sort((a, b) => a - b);
    const traced = await traceWhileServing('cluster-express.js', app);
    const { stderr } = traced.res;
    assert.match(stderr, new RegExp(`^nodetrace: PIDs ${pids.join(', ')} have no nodetrace hook: reading their HTTP off their socket system calls`, 'm'));
    assert.match(stderr, new RegExp(`workers that PID ${app.primary}, their cluster's primary, forks later are read too, from their start\\.$`, 'm'));
    assertAsServed(app, traced);
  });

  it('by PIDs, over HTTPS: read off the OpenSSL of their one binary', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-cluster-tls-'));
    try {
      const app = await startCluster(['--tls', ...(await certificate(dir))]);
      const traced = await traceWhileServing([app.primary, ...app.workers].join(','), app);
      assert.match(traced.res.stderr, /and their HTTPS off the OpenSSL in /);
      assertAsServed(app, traced);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
