'use strict';
// Cluster apps (36.8, outside http's wire): `ps` shows the primary and its
// workers, and `http -p PRIMARY` says that its workers serve, naming them;
// against what the primary itself knows of its workers (their PIDs and
// cluster.worker ids, test/targets/cluster-http.js).
const assert = require('assert');
const http = require('http');
const { startTarget, stopTarget, nodetrace, killStragglers, requireTracing } = require('./support/harness');

// The primary's own line: { port, workers: [{ pid, id }] }.
function clusterLine(target) {
  const m = /^cluster (\d+) (.*)$/m.exec(target.startOutput);
  return { port: Number(m[1]), workers: m[2].split(' ').map((w) => w.split(':').map(Number)).map(([pid, id]) => ({ pid, id })) };
}

describe('cluster apps', function () {
  this.timeout(120000);
  afterEach(killStragglers);

  it('ps: the primary with its workers, each worker with its id and its primary, as the primary knows them', async function () {
    if (process.getuid() !== 0) {
      if (process.env.CI) throw new Error('ps reads other processes\' /proc: run as root');
      this.skip();
    }
    const target = await startTarget('cluster-http.js');
    try {
      const { workers } = clusterLine(target);
      const r = await nodetrace(['ps', '--json']);
      assert.strictEqual(r.code, 0, r.stderr);
      const rows = new Map(JSON.parse(r.stdout).processes.map((p) => [p.pid, p]));
      assert.deepStrictEqual(rows.get(target.pid).cluster, { role: 'primary', workers });
      for (const w of workers) assert.deepStrictEqual(rows.get(w.pid).cluster, { role: 'worker', id: w.id, primary: target.pid });
      const text = await nodetrace(['ps']);
      assert.match(text.stdout, new RegExp(`^${target.pid} .* primary \\(${workers.length}\\) `, 'm'));
      assert.match(text.stdout, new RegExp(`^${workers[0].pid} .* worker ${workers[0].id} of ${target.pid} `, 'm'));
    } finally {
      stopTarget(target);
      for (const w of (target.startOutput ? clusterLine(target).workers : [])) { try { process.kill(w.pid, 'SIGKILL'); } catch { /* gone */ } }
    }
  });

  it('http -p PRIMARY: no request completes in the primary, and it says its workers serve, naming them @tracer', async function () {
    requireTracing(this);
    const target = await startTarget('cluster-http.js');
    const { port, workers } = clusterLine(target);
    let stop = false;
    const load = (async () => {
      while (!stop) {
        await new Promise((resolve) => http.get({ port, path: '/x', agent: false }, (res) => { res.resume(); res.on('end', resolve); }).on('error', resolve));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const r = await nodetrace(['http', '-p', String(target.pid), '-d', '3'], { timeoutMs: 100000 });
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, /^nodetrace: no HTTP request completed while tracing\.$/m);
      const list = workers.map((w) => `${w.pid} \\(worker ${w.id}\\)`).join(', ');
      assert.match(r.stderr, new RegExp(`^nodetrace: PID ${target.pid} is a cluster primary: its ${workers.length} workers serve the requests, PID ${list}\\. Trace them all with nodetrace http ${[target.pid, ...workers.map((w) => w.pid)].join(',')}, or one with nodetrace http -p ${workers[0].pid}\\.$`, 'm'), r.stderr);
    } finally {
      stop = true;
      await load;
      stopTarget(target);
      for (const w of workers) { try { process.kill(w.pid, 'SIGKILL'); } catch { /* gone */ } }
    }
  });
});
