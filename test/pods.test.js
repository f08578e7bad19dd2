'use strict';
// --pod against a real pod @tracer: one `podman kube play` pod
// (test/support/pods.js) running node with crypto-loop.js, found from /proc
// alone, by its name, its ID and 8 characters of it; the truth is the host
// PID podman gives for the pod's container. Then one trace through --pod,
// whose report names the same process; and pods of their own for snoop and
// probes (one pod with the hook: bunyan's records and its provider) and for
// http (a server whose requests curl makes from the host, in the pod's
// network namespace: the truth is what curl had).
const assert = require('assert');
const { requireTracing, nodetrace, killStragglers } = require('./support/harness');
const { containerUnavailableReason } = require('./support/containers');
const { startPod } = require('./support/pods');
const httpWire = require('./support/http-wire');

describe('--pod: a pod played by podman kube play, traced from the host @tracer', function () {
  this.timeout(600000);
  let pod;
  before(async function () {
    requireTracing(this, { also: containerUnavailableReason });
    pod = await startPod('crypto-loop.js');
  });
  afterEach(killStragglers);
  after(() => pod && pod.remove());

  it('ps --pod by name, by ID and by 8 characters of it: the pod\'s one Node process, its container and pod', async function () {
    for (const asked of [pod.name, pod.podId, pod.podId.slice(0, 8)]) {
      const r = await nodetrace(['ps', '--pod', asked, '--json'], { timeoutMs: 120000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const rows = JSON.parse(r.stdout).processes;
      assert.deepStrictEqual(rows.map((p) => p.pid), [pod.pid], `${asked}: ${r.stdout}`);
      assert.deepStrictEqual(rows[0].pod, { uid: pod.podId, kind: 'podman', qos: null, name: pod.name });
      const { pid_inside: inside, container } = rows[0];
      assert.deepStrictEqual([inside, container.id, container.name], [1, pod.id, pod.container]);
    }
    const text = await nodetrace(['ps', '--pod', pod.name], { timeoutMs: 120000 });
    assert.match(text.stdout, /^PID +INSIDE +CONTAINER +POD +NODE /m);
    const container = `podman container ${pod.container} \\(${pod.id.slice(0, 12)}\\)`;
    assert.match(text.stdout, new RegExp(`^${pod.pid} +1 +${container} +${pod.name} \\(${pod.podId.slice(0, 12)}\\) +v22`, 'm'));
  });

  it('latency --pod: the pod\'s node traced by its host PID, its pbkdf2 work counted', async function () {
    const r = await nodetrace(['latency', '--pod', pod.name, '-d', '3', '--json'], { timeoutMs: 300000 });
    assert.strictEqual(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    assert.strictEqual(json.process.pid, pod.pid);
    assert.deepStrictEqual(json.process.pod, { uid: pod.podId, kind: 'podman', qos: null, name: pod.name });
    const pbkdf2 = json.kinds.find((k) => k.name === 'crypto.pbkdf2');
    assert(pbkdf2 && pbkdf2.count > 5, JSON.stringify(json.kinds.map((k) => [k.name, k.count])));
    assert.match(r.stderr, new RegExp(`tracing the Node process of pod ${pod.name} \\(${pod.podId.slice(0, 12)}\\): ${pod.pid} `));
  });

  it('doctor --pod: the pod\'s node, not its infra container\'s pause beside it', async function () {
    const r = await nodetrace(['doctor', '--pod', pod.name, '--json'], { timeoutMs: 300000 });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(JSON.parse(r.stdout).process.pid, pod.pid);
  });

  describe('a pod whose node runs with the hook: bunyan\'s provider', function () {
    let hooked;
    before(async function () { hooked = await startPod('bunyan-debug-loop.js', { hook: true, env: { INTERVAL: '20' } }); });
    after(() => hooked && hooked.remove());

    it('snoop --pod: all the pod\'s Node processes (here its one), its bunyan records every one in order', async function () {
      const r = await nodetrace(['snoop', '--pod', hooked.name, '-d', '3', '-m', 'short'], { timeoutMs: 120000 });
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^nodetrace: snooping the Node process of pod ${hooked.name} \\(${hooked.podId.slice(0, 12)}\\): PID ${hooked.pid}$`, 'm'));
      // Each round logs an error record, numbered: every one in order, none lost.
      const errors = [...r.stdout.matchAll(new RegExp(`^\\S+ +ERROR snoop-target/${hooked.pid} in .*\\(seq=(\\d+)\\)$`, 'gm'))].map((m) => Number(m[1]));
      assert(errors.length >= 10, r.stdout.slice(0, 2000));
      assert.deepStrictEqual(errors, errors.map((_, i) => errors[0] + i));
    });

    it('probes --pod: the pod\'s providers listed, then log-error traced, each firing once in order with its record', async function () {
      const list = await nodetrace(['probes', '--pod', hooked.name, '--json'], { timeoutMs: 120000 });
      assert.strictEqual(list.code, 0, list.stderr);
      const procs = JSON.parse(list.stdout).processes;
      assert.deepStrictEqual(procs.map((p) => p.pid), [hooked.pid], list.stdout.slice(0, 2000));
      const bunyan = procs[0].providers.find((p) => p.provider === 'bunyan' && p.api);
      assert(bunyan && bunyan.probes.some((p) => p.name === 'log-error'), list.stdout.slice(0, 2000));

      const r = await nodetrace(['probes', '--pod', hooked.name, 'bunyan:log-error', '--json', '-d', '3'], { timeoutMs: 120000 });
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^nodetrace: tracing the Node process of pod ${hooked.name} \\(${hooked.podId.slice(0, 12)}\\): PID ${hooked.pid}\\.$`, 'm'));
      const firings = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      assert(firings.length >= 10, r.stdout.slice(0, 2000));
      for (const f of firings) assert.deepStrictEqual([f.pid, f.provider, f.probe], [hooked.pid, 'bunyan', 'log-error']);
      // The record as bunyan wrote it inside the pod (its PID 1 there); rounds numbered: none lost, none twice.
      const records = firings.map((f) => JSON.parse(f.arguments[0]));
      assert(records.every((x) => x.level === 50 && x.pid === 1 && x.msg === `error record ${x.seq}`), JSON.stringify(records[0]));
      const seqs = records.map((x) => x.seq);
      assert.deepStrictEqual(seqs, seqs.map((_, i) => seqs[0] + i));
    });
  });

  it('http --pod: a server in the pod, curl from the host in its network, each request traced once as curl had it', async function () {
    const server = await startPod('http-wire-server.js');
    try {
      const port = Number(/^ready \d+ (\d+)/m.exec(server.output())[1]);
      let tracer;
      let go;
      const attached = new Promise((r) => { go = r; });
      const traced = nodetrace(['http', '--pod', server.name, '-d', '60', '--json'], {
        timeoutMs: 120000,
        onSpawn: (c) => { tracer = c; c.stderr.on('data', (d) => { if (/tracing HTTP/.test(d)) go(); }); },
      });
      const early = await Promise.race([attached.then(() => null), traced]);
      assert(!early, early && `nodetrace http ended before it attached (${early.code}): ${early.stderr}`);
      // The pod has no network (--network none): curl runs in its network
      // namespace, where the server listens on 127.0.0.1.
      const paths = ['/fast/p1', '/slow/p2', '/missing/p3', '/mid/p4', '/fast/p5'];
      const measured = await httpWire.curl(port, paths, 'http', { netOf: server.pid });
      assert.deepStrictEqual(measured.map((m) => m.status), [200, 200, 404, 200, 200]);
      setTimeout(() => tracer.kill('SIGINT'), 1000);   // the last batch shown (within 100 ms, held 400 ms)
      const r = await traced;
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^nodetrace: tracing the Node process of pod ${server.name} \\(${server.podId.slice(0, 12)}\\): PID ${server.pid}$`, 'm'));
      assert.match(r.stderr, new RegExp(`tracing HTTP on the sockets of PID ${server.pid} \\(PID 1 in podman container ${server.container} \\(${server.id.slice(0, 12)}\\) of pod ${server.name} `));
      const lines = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      httpWire.eachOnceAsMeasured(lines, measured, { port, child: { pid: server.pid } }, r.stdout);
      assert.strictEqual(lines.length, paths.length, r.stdout);
    } finally {
      server.remove();
    }
  });

  it('a pod that is not here, or 7 characters of an ID: exit 3 (as --container), saying so, with nodetrace ps', async function () {
    for (const asked of ['no-such-pod', pod.podId.slice(0, 7)]) {
      const r = await nodetrace(['gc', '--pod', asked, '-d', '1'], { timeoutMs: 120000 });
      assert.strictEqual(r.code, 3, r.stderr);
      assert.match(r.stderr, /no pod with a process on this host is named/);
      assert.match(r.stderr, new RegExp(`pod ${pod.name} \\(${pod.podId.slice(0, 12)}\\): 2 processes`));   // its infra (pause) and node
      assert.match(r.stderr, /nodetrace ps/);
    }
  });
});
