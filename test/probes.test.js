'use strict';
// nodetrace probes against a real bpftrace (each tier: scripts/test-matrix.sh
// runs @core) and an application with a provider of its own, run
// unprepared (test/targets/usdt-app.js), and a second process of it: its
// list held to what bpftrace -l lists and to the provider's own definition,
// '*' listing both; its firings to the values the application passed; the
// counts of both, traced by '*', to each one's own count; a probe the
// application adds once the trace began, followed; a provider it makes
// while a trace waits (--wait), traced. Traced once per kind of
// report; the JSON asserted.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { Target, bpftraceList, bpftraceUnavailable, tempRoot } = require('./targets/usdt-harness');
const { requireTracing, killStragglers, nodetrace } = require('./support/harness');

const APP = path.join(__dirname, 'targets', 'usdt-app.js');
const urlOf = (id) => `/orders/${id}?q="a b"\n\u001b[31m\u202e`;

// Runs nodetrace with its output as it comes: out.wait(stream, re, ms), out.stop() (SIGINT, then its end).
function tracing(args) {
  const out = { stdout: '', stderr: '' };
  out.done = nodetrace(args, {
    timeoutMs: 180000,
    onSpawn: (child) => {
      out.child = child;
      child.stdout.on('data', (d) => { out.stdout += d; });
      child.stderr.on('data', (d) => { out.stderr += d; });
    },
  });
  out.wait = async (stream, re, ms = 90000) => {
    const until = Date.now() + ms;
    for (;;) {
      const m = re.exec(out[stream]);
      if (m) return m;
      if (Date.now() > until || out.child.exitCode !== null) throw new Error(`no ${re} on ${stream} within ${ms} ms:\n${out.stdout.slice(-3000)}\n${out.stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  out.stop = async () => {
    out.child.kill('SIGINT');
    return out.done;
  };
  return out;
}

const jsonLines = (text) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

describe('nodetrace probes: an application\'s own provider @tracer @core', function () {
  this.timeout(300000);
  let root;
  let app;
  let other;   // a second process of the application: '*' names both

  before(async function () {
    requireTracing(this, { also: bpftraceUnavailable });
    root = tempRoot('probes');
    app = await Target.start({ script: APP, env: { NODETRACE_USDT_DIR: path.join(root, 'lib') } });
    other = await Target.start({ script: APP, env: { NODETRACE_USDT_DIR: path.join(root, 'lib') } });
  });

  after(async function () {
    if (app) await app.stop();
    if (other) await other.stop();
    await killStragglers.call(this);
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('lists its provider as declared, and every stapsdt probe bpftrace -l lists (a library\'s own: libstdc++\'s)', async function () {
    const r = await nodetrace(['probes', '-p', String(app.pid), '--json']);
    assert.strictEqual(r.code, 0, r.stderr);
    const [proc] = JSON.parse(r.stdout).processes;
    assert.strictEqual(proc.pid, app.pid);
    const listed = new Set();
    for (const g of proc.providers) for (const p of g.probes) listed.add(`${path.basename(g.file)}:${g.provider}:${p.name}`);
    // bpftrace names each probe usdt:PATH:PROVIDER:PROBE (PATH as the process maps it, under /proc/PID/root).
    const bt = new Set(bpftraceList(['-l', 'usdt:*', '-p', String(app.pid)]).split('\n').filter((l) => l.startsWith('usdt:'))
      .map((l) => { const f = l.split(':'); return `${path.basename(f[1])}:${f[2]}:${f[3]}`; }));
    assert.deepStrictEqual([...listed].sort(), [...bt].sort());

    const own = proc.providers.find((g) => g.provider === 'myapp');
    assert.strictEqual(own.api, true);
    assert.match(own.file, /nodetrace-usdt-[0-9a-f]{20}\.so$/);
    // The file is the one probe library the application itself loaded.
    assert.deepStrictEqual([own.file], (await app.request('counts')).status.libraries);
    assert.deepStrictEqual(own.probes.map((p) => [p.name, p.arguments, p.enabled]),
      [['request-done', ['int', 'char *', 'json', 'int'], false], ['request-start', ['int', 'char *'], false]]);
    const lib = proc.providers.find((g) => g.provider === 'libstdcxx');
    assert.ok(lib && !lib.api && /libstdc\+\+/.test(lib.file), JSON.stringify(proc.providers));
    assert.ok(lib.probes.some((p) => p.name === 'throw'));

    const text = await nodetrace(['probes', String(app.pid)]);
    assert.strictEqual(text.code, 0, text.stderr);
    assert.match(text.stdout, /^ {2}myapp \(dtrace-provider API\) {2}\S+nodetrace-usdt-[0-9a-f]{20}\.so$/m);
    assert.match(text.stdout, /^ {4}request-start +int, char \* +off$/m);

    // '*': every process with a provider made with the API, each under its PID.
    const all = await nodetrace(['probes', '*', '--json']);
    assert.strictEqual(all.code, 0, all.stderr);
    const everyOne = JSON.parse(all.stdout).processes;
    for (const pid of [app.pid, other.pid]) {
      const one = everyOne.find((p) => p.pid === pid);
      assert.ok(one, `PID ${pid} not listed by '*': ${everyOne.map((p) => p.pid)}`);
      assert.deepStrictEqual(one.providers.find((g) => g.provider === 'myapp').probes.map((p) => [p.name, p.arguments]),
        [['request-done', ['int', 'char *', 'json', 'int']], ['request-start', ['int', 'char *']]]);
    }
  });

  it('traces it unprepared: each firing with its arguments as declared, and a probe added once the trace began', async function () {
    const nt = tracing(['probes', '-p', String(app.pid), 'myapp:*', '--json']);
    await nt.wait('stderr', /nodetrace: tracing .* with bpftrace/);
    // A tracer has the probes on now, as the list says.
    const listed = JSON.parse((await nodetrace(['probes', '-p', String(app.pid), '--json'])).stdout).processes[0];
    assert.deepStrictEqual(listed.providers.find((g) => g.provider === 'myapp').probes.map((p) => p.enabled), [true, true]);
    await app.request('requests', { n: 3, from: 1 });
    await app.request('late');
    await nt.wait('stderr', /nodetrace: also tracing myapp:cache-miss, myapp:request-done, myapp:request-start/);
    await app.request('misses', { n: 2 });
    await app.request('requests', { n: 1, from: 10 });
    await nt.wait('stdout', /"probe":"request-done","arguments":\[10,/);
    const r = await nt.stop();
    assert.strictEqual(r.code, 0, r.stderr);
    const seen = jsonLines(r.stdout);
    assert.ok(seen.every((f) => f.pid === app.pid && f.provider === 'myapp'));
    const of = (probe) => seen.filter((f) => f.probe === probe).map((f) => f.arguments);
    assert.deepStrictEqual(of('request-start'), [1, 2, 3, 10].map((id) => [id, urlOf(id)]));
    assert.deepStrictEqual(of('request-done'), [1, 2, 3, 10].map((id) => [id, urlOf(id), { id, user: 'o"brien', ms: 12.5 }, 200]));
    assert.deepStrictEqual(of('cache-miss'), [['user:0'], ['user:1']]);
    // The raw output carries the escapes, not the characters.
    // eslint-disable-next-line no-control-regex -- no escape byte may reach the terminal
    assert.ok(!/[\u001b\u202e]/.test(r.stdout));
  });

  it('\'*\' counts the firings of both its processes, each as it counted them', async function () {
    const nt = tracing(['probes', '*', 'myapp:*', '--count', '--json']);
    await nt.wait('stderr', /nodetrace: tracing .* with bpftrace/);
    const before = [(await app.request('counts')).fired, (await other.request('counts')).fired];
    await app.request('requests', { n: 500, from: 1000 });
    await app.request('misses', { n: 7 });
    await other.request('requests', { n: 3, from: 1 });
    const after = [(await app.request('counts')).fired, (await other.request('counts')).fired];
    const r = await nt.stop();
    assert.strictEqual(r.code, 0, r.stderr);
    // Other processes of the host with provider myapp (other tests') are
    // counted too, under their PIDs: only these two are asserted.
    const counts = JSON.parse(r.stdout).counts;
    const got = (pid) => Object.fromEntries(counts.filter((c) => c.pid === pid && c.count > 0)
      .map((c) => [c.probe, c.count]));
    const want = (i) => Object.fromEntries(Object.keys(after[i])
      .map((k) => [k, after[i][k] - (before[i][k] || 0)]).filter(([, n]) => n > 0));
    assert.deepStrictEqual([got(app.pid), got(other.pid)], [want(0), want(1)]);
    assert.deepStrictEqual([want(0), want(1)],
      [{ 'request-start': 500, 'request-done': 500, 'cache-miss': 7 }, { 'request-start': 3, 'request-done': 3 }]);
  });

  it('--latency pairs request-start with request-done by their first argument', async function () {
    const nt = tracing(['probes', '-p', String(app.pid), '--latency', 'myapp:request-start', 'myapp:request-done', '--json']);
    await nt.wait('stderr', /nodetrace: tracing .* with bpftrace/);
    const own = await app.request('requests', { n: 20, from: 5000, gapMs: 50 });
    const r = await nt.stop();
    assert.strictEqual(r.code, 0, r.stderr);
    const [p] = JSON.parse(r.stdout).processes;
    assert.deepStrictEqual([p.pid, p.starts, p.ends, p.paired], [app.pid, 20, 20, 20]);
    // The application's own measure of each start to its done (around the
    // fires, so a little longer than the kernel's): the mean and the longest
    // agree within 2 ms, and every pair lies in a histogram row that holds it.
    assert.ok(Math.abs(p.mean_us - own.meanUs) < 2000, `${p.mean_us} µs, the application's ${own.meanUs}`);
    assert.ok(p.max_us <= own.maxUs + 100 && own.maxUs - p.max_us < 2000, `${p.max_us} µs, the application's ${own.maxUs}`);
    const filled = p.histogram_us.filter((b) => b.count > 0);
    assert.ok(filled.every((b) => b.hi > 50000 && b.lo <= own.maxUs), JSON.stringify(filled));
  });

  it('--wait: a provider the application makes once the trace began is waited for, then traced', async function () {
    const nt = tracing(['probes', '-p', String(app.pid), 'laterapp:tick', '--wait', '60', '--json']);
    await nt.wait('stderr', /nodetrace: no probe of .* matches "laterapp:tick" yet: waiting up to 60 s/);
    await app.request('second');
    await nt.wait('stderr', /nodetrace: "laterapp:tick" now names probes of .*\n(.*\n)*nodetrace: tracing .* with bpftrace/);
    await app.request('ticks', { n: 3 });
    await nt.wait('stdout', /"probe":"tick","arguments":\[3\]/);
    const r = await nt.stop();
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(jsonLines(r.stdout).map((f) => [f.pid, f.provider, f.probe, f.arguments]),
      [1, 2, 3].map((i) => [app.pid, 'laterapp', 'tick', [i]]));
  });
});
