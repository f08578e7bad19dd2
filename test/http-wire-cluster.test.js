'use strict';
// `nodetrace http NAME` and `nodetrace http PID,PID` on a cluster app with no
// preparation (test/targets/cluster-express.js: Express under node's cluster
// module, a primary and 2 workers): one tracer reads every process off its
// sockets (d-scripts/http-wire.bt with a set of PIDs), each request under the
// worker that served it, against what each worker counted and timed itself.
// Plain HTTP by name, HTTPS by the PIDs list. Runs under the bpftrace the
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
    const finished = new Promise((r) => { done = r; });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^ready (\d+) (\d+) (\d+) (\d+)$/.exec(line);
      if (m) resolve({ child, primary: Number(m[1]), port: Number(m[2]), workers: [Number(m[3]), Number(m[4])], reports,
        finished });
      else if (line.startsWith('{')) reports.push(JSON.parse(line));
      else if (line === 'client done') done();
    });
    child.on('exit', (code) => reject(new Error(`cluster-express exited (${code})`)));
    setTimeout(() => reject(new Error('cluster-express did not start')), 30000);
  });
}

// nodetrace http TARGET --json while the primary sends its requests.
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
  app.child.stdin.write(`client ${REQUESTS}\n`);
  await app.finished;
  // The last events come in a batch within 100 ms, are held 400 ms for ordering, then shown.
  await new Promise((r) => setTimeout(r, 1000));
  tracer.kill('SIGINT');
  const res = await traced;
  assert.strictEqual(res.code, 0, res.stderr);
  return { res, lines: res.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Each worker's requests served, by route and status, exactly as it counted
// them; none under the primary; /slow's p50 as the app timed it.
function assertAsServed(app, lines, stdout) {
  const served = lines.filter((l) => l.direction === 'server');
  assert.strictEqual(served.filter((l) => l.pid === app.primary).length, 0, stdout);
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

  it('by name: the primary and its 2 workers read by one tracer, each request under its worker', async function () {
    const app = await startCluster();
    const { res, lines } = await traceWhileServing('cluster-express.js', app);
    const pids = [app.primary, ...app.workers].sort((a, b) => a - b);
    assert.match(res.stderr, new RegExp(`^nodetrace: PIDs ${pids.join(', ')} have no nodetrace hook: reading their HTTP off their socket system calls`, 'm'));
    assert.match(res.stderr, /processes started later \(a worker forked anew\) are not read/);
    assertAsServed(app, lines, res.stdout);
  });

  it('by PIDs, over HTTPS: read off the OpenSSL of their one binary', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-cluster-tls-'));
    try {
      const app = await startCluster(['--tls', ...(await certificate(dir))]);
      const { res, lines } = await traceWhileServing([app.primary, ...app.workers].join(','), app);
      assert.match(res.stderr, /and their HTTPS off the OpenSSL in /);
      assertAsServed(app, lines, res.stdout);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
