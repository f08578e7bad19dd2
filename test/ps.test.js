'use strict';
// `nodetrace ps`: what each command can do for a process (lib/ps/verdicts.js)
// and the listing (lib/ps/render.js), over made-up facts; the real listing
// of real containers is in test/containers.test.js.
const assert = require('assert');
const { verdicts } = require('../lib/ps/verdicts');
const { renderText, renderJson } = require('../lib/ps/render');

const WEB = { id: 'ab'.repeat(32), runtime: 'podman', name: 'web' };
function facts(o = {}) {
  return {
    pid: 500, who: { pid: 500, pidInside: 1, container: WEB, otherMounts: true }, uid: 0, user: 'root',
    exe: '/usr/local/bin/node', command: 'node /app/server.js', version: '22.12.0', latency: true, gc: true, async: true,
    perfMap: { path: '/proc/500/root/tmp/perf-1.map', refused: null }, snoop: false, http: true, gcore: true, ...o,
  };
}
const can = (f) => Object.fromEntries(verdicts(f).map((v) => [v.command, v.can]));

describe('ps: what each command can do for a process', function () {
  it('a container\'s node with a perf map and the HTTP hook: all but snoop, saying how latency and ebadf do it', function () {
    assert.deepStrictEqual(can(facts()), { latency: 'yes', gc: 'yes', async: 'yes', loop: 'yes', profile: 'yes', ebadf: 'yes', snoop: 'no', http: 'yes' });
    const v = verdicts(facts());
    assert.match(v.find((x) => x.command === 'ebadf').why, /saved beside the core/);
    assert.match(v.find((x) => x.command === 'snoop').why, /node -r nodetrace\/register/);
  });

  it('no perf map, a refused one, no symbols, no gcore: said as partly or no, with why', function () {
    const v = verdicts(facts({ perfMap: { path: null, refused: null }, latency: false, gc: false, async: false,
      gcore: false, http: false }));
    const by = Object.fromEntries(v.map((x) => [x.command, x]));
    assert.deepStrictEqual([by.profile.can, by.latency.can, by.gc.can, by.ebadf.can, by.http.can], ['partly', 'no', 'no', 'partly', 'partly']);
    assert.strictEqual(by.http.why, 'with -p PID, off the wire: plain HTTP from its socket calls; no HTTPS: no OpenSSL found');
    // Where HTTPS is read: OpenSSL linked into node (official builds), libnode, or the system's libssl.
    const http = (o) => verdicts(facts({ http: false, ...o })).find((x) => x.command === 'http');
    const official = http({ exe: '/usr/local/bin/node', tls: { object: '/usr/local/bin/node' } });
    assert.deepStrictEqual([official.can, official.why], ['yes', 'with -p PID, off the wire: plain HTTP from its socket calls, HTTPS from the OpenSSL '
      + 'linked into its executable (/usr/local/bin/node); \'*\' and names need node -r nodetrace/register']);
    assert.match(http({ tls: { object: '/usr/lib/libnode.so.115' } }).why, /HTTPS from the OpenSSL linked into libnode\.so\.115 \(\/usr\/lib\/libnode\.so\.115\);/);
    assert.match(http({ tls: { object: '/usr/lib/x86_64-linux-gnu/libssl.so.3' } }).why, /HTTPS from the shared libssl\.so\.3 \(\/usr\/lib\/x86_64-linux-gnu\/libssl\.so\.3\);/);
    const hooked = verdicts(facts({ tls: { object: '/usr/local/bin/node' } })).find((x) => x.command === 'http');
    assert.match(hooked.why, /^its nodetrace hook; with --source wire: plain HTTP from its socket calls, HTTPS from/);
    assert.match(by.profile.why, /not started with --perf-basic-prof/);
    assert.deepStrictEqual([by.async.can, by.async.why], ['no', 'no AsyncWrap symbols'], 'no AsyncWrap symbols');
    const unknown = verdicts(facts({ version: '30.0.0' })).find((x) => x.command === 'async');
    assert.deepStrictEqual([unknown.can, unknown.why], ['no', 'Node v30.0.0\'s AsyncWrap layout is not known to nodetrace']);
    // No perf map, but a V8 nodetrace knows: named from its metadata.
    const known = verdicts(facts({ perfMap: { path: null, refused: null }, v8Frames: true })).find((x) => x.command === 'profile');
    assert.deepStrictEqual(known, { command: 'profile', can: 'yes', why: 'JavaScript named from V8\'s metadata, on every thread (worker threads too)' });
    assert.match(verdicts(facts({ perfMap: { path: '/tmp/perf-9.map', refused: 'it is a symbolic link' } }))
      .find((x) => x.command === 'profile').why, /\/tmp\/perf-9\.map is not read \(it is a symbolic link\)/);
  });

  it('lists one line per process, then each reason once, with the processes it holds for', function () {
    const host = facts({ pid: 700, who: { pid: 700, pidInside: null, container: null, otherMounts: false }, perfMap: { path: null, refused: null }, http: false, command: 'node batch.js\nforged line', version: null });
    const rows = [facts(), host].map((f) => ({ facts: f, verdicts: verdicts(f) }));
    const lines = renderText(rows).split('\n');
    assert.match(lines[0], /^PID +INSIDE +CONTAINER +NODE +USER +CLUSTER +PROBES +PERF MAP +NOT \/ PARTLY~ +COMMAND$/);
    assert.match(lines[1], /^500 +1 +podman container web \(abababababab\) +v22\.12\.0 +root +- +http +yes +snoop +node \/app\/server\.js$/);
    assert.match(lines[2], /^700 +- +- +\? +root +- +- +- +profile~ snoop http~ +node batch\.js/);
    assert.strictEqual(lines.length, 9, 'a command line\'s newline makes no line of its own');
    assert(lines.includes('  snoop: no bunyan probe library: start it with node -r nodetrace/register (PID 500, 700)'));
    const json = JSON.parse(renderJson(rows));
    assert.deepStrictEqual(json.processes[0].container, WEB);
    assert.strictEqual(json.processes[0].pid_inside, 1);
    assert.deepStrictEqual(json.processes[1].commands.profile, { can: 'partly', why: 'JavaScript unnamed: not started with --perf-basic-prof, and its V8 is not one nodetrace knows' });
    assert.strictEqual(renderText([]), 'No Node process is running on this host.\n');
  });
});

describe('ps: cluster primaries and their workers (lib/proc/cluster.js)', function () {
  const { clusterRoles, workerIdIn } = require('../lib/proc/cluster');

  it('a worker is a process with NODE_UNIQUE_ID whose parent is listed; its parent is the primary', function () {
    assert.strictEqual(workerIdIn('PATH=/bin\0NODE_UNIQUE_ID=2\0NODE_CHANNEL_FD=3\0'), 2);
    assert.strictEqual(workerIdIn('NODE_UNIQUE_ID=7'), 7);
    assert.strictEqual(workerIdIn('X=NODE_UNIQUE_ID=3\0'), null, 'only a variable of its own');
    assert.strictEqual(workerIdIn('NODE_UNIQUE_ID=1;rm\0'), null, 'digits only');
    const roles = clusterRoles([
      { pid: 100, ppid: 1, workerId: null }, { pid: 101, ppid: 100, workerId: 2 }, { pid: 102, ppid: 100, workerId: 1 },
      { pid: 200, ppid: 1, workerId: 3 },   // its parent is no Node process listed: not a worker here
      { pid: 300, ppid: 100, workerId: null },   // a child without the variable: not a worker
    ]);
    assert.deepStrictEqual(Object.fromEntries(roles), {
      100: { role: 'primary', workers: [{ pid: 102, id: 1 }, { pid: 101, id: 2 }] },
      101: { role: 'worker', id: 2, primary: 100 },
      102: { role: 'worker', id: 1, primary: 100 },
    });
    const rows = [100, 101].map((pid) => facts({ pid,
      who: { pid, pidInside: null, container: null, otherMounts: false }, cluster: roles.get(pid) }));
    const lines = renderText(rows.map((f) => ({ facts: f, verdicts: verdicts(f) }))).split('\n');
    assert.match(lines[1], /^100 .* root +primary \(2\) +http /);
    assert.match(lines[2], /^101 .* root +worker 2 of 100 +http /);
    assert.deepStrictEqual(JSON.parse(renderJson(rows.map((f) => ({ facts: f, verdicts: verdicts(f) }))))
      .processes.map((p) => p.cluster),
      [roles.get(100), roles.get(101)]);
  });
});

describe('ps: user names from /etc/passwd (lib/proc/users.js)', function () {
  const { parsePasswd } = require('../lib/proc/users');
  it('maps each uid to its first name, and skips lines that are not accounts', function () {
    const names = parsePasswd('root:x:0:0:root:/root:/bin/bash\n# comment\nmallory:x:1001:1001::/home/m:/bin/sh\n'
      + 'alias:x:1001:1001::/:/bin/sh\nbroken:x:abc:1::/:/bin/sh\nshort:x:5\n');
    assert.deepStrictEqual([...names], [[0, 'root'], [1001, 'mallory']]);
  });
});

describe('ps --json and doctor --json as docs/json-format.md documents them', function () {
  const fs = require('fs');
  const path = require('path');
  const { hostNeighbourNote } = require('../lib/tracer/neighbours');
  const processChecks = require('../lib/process-checks');
  const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'json-format.md'), 'utf8');
  // The text of one "## " section, by its heading.
  const section = (heading) => {
    const at = doc.indexOf(`\n## ${heading}\n`);
    assert.notStrictEqual(at, -1, `docs/json-format.md has "## ${heading}"`);
    const next = doc.indexOf('\n## ', at + 1);
    return doc.slice(at, next === -1 ? undefined : next);
  };
  const named = (text, key) => new RegExp('`[^`]*\\b' + key + '\\b[^`]*`').test(text);
  const missing = (text, keys) => keys.filter((k) => !named(text, k));
  // The names in backticks that match a pattern (a field's, not a value's).
  const listedNames = (text, pattern) => [...new Set([...text.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1].match(/[A-Za-z_]+/g) || []))]
    .filter((w) => pattern.test(w));

  it('every key ps --json writes is named in its section, and what the section lists is written', function () {
    const text = section('`nodetrace ps --json`');
    const cost = { tracer: 'bpftrace 0.17.0', ...hostNeighbourNote({ name: 'bpftrace', version: '0.17.0' }) };
    const rows = [facts()].map((f) => ({ facts: { ...f, cluster: null }, verdicts: verdicts(f) }));
    const json = JSON.parse(renderJson(rows, { tracerCost: cost }));
    const row = json.processes[0];
    assert.deepStrictEqual(missing(text, [...Object.keys(json), ...Object.keys(json.others_cost), ...Object.keys(row),
      ...Object.keys(row.probe_libraries), ...Object.keys(row.perf_map), ...Object.keys(row.commands)]), []);
    // The other way: every snake_case name the section gives is a key written.
    const written = new Set([json, json.others_cost, row, row.probe_libraries, row.perf_map].flatMap(Object.keys));
    assert.deepStrictEqual(listedNames(text, /^[a-z]+(_[a-z]+)+$/).filter((k) => !written.has(k)), []);
  });

  it('every key doctor -p --json writes is named in its section, and doctor --json\'s check fields too', function () {
    const text = section('`nodetrace doctor -p PID --json`');
    const base = {
      pid: 7, exePath: '/usr/bin/node', version: '20.20.2', otherMountNamespace: false,
      found: { points: {}, missing: [{ name: 'uv_queue_work', why: 'not found' }] },
    };
    const report = processChecks.describe(base);
    assert.deepStrictEqual(missing(text, Object.keys(report)), []);
    assert.deepStrictEqual(missing(text, Object.keys(report.probes.find((p) => !p.found))), []);
    // The others line's object, as gathered with a tracer whose uprobes reach every process.
    const cost = processChecks.othersCostOf(7, { name: 'bpftrace', version: '0.17.0' }, { points: {} },
      { neighbours: () => [{ pid: 9, name: 'node' }] });
    const withCost = processChecks.describe({ ...base, othersCost: cost });
    const costKeys = [...Object.keys(withCost.othersCost), ...Object.keys(withCost.othersCost.payingShown[0])];
    assert.deepStrictEqual(missing(text, costKeys), []);
    const writtenCamel = new Set([withCost, withCost.othersCost].flatMap(Object.keys));
    assert.deepStrictEqual(listedNames(text, /^[a-z]+[A-Z][A-Za-z]*$/).filter((k) => !writtenCamel.has(k)), [], 'every camelCase name given is written');
    const checks = section('`nodetrace doctor --json`');
    assert.deepStrictEqual(missing(checks, ['name', 'ok', 'optional', 'detail', 'others']), []);
  });
});
