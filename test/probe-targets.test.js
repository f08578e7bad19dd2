'use strict';
// lib/probe-libraries/probe-targets.js: what '*', PIDs and names mean, on a made-up
// host (every fact comes from the `host` object), in the words of `http`;
// then the tracer command lines lib/http/plan.js makes of them.
const assert = require('assert');
const { resolveTargets } = require('../lib/probe-libraries/probe-targets');
const { planHttp } = require('../lib/http/plan');
const { inTemp } = require('../lib/tracer/plan');
const { HTTP_PROVIDER } = require('../lib/http/probes');

const KIND = { command: 'http', provider: HTTP_PROVIDER, probes: 'HTTP probes', all: 'every prepared process', hint: 'node -r nodetrace/register app.js', includeOwn: true };

// PIDs 10 (node, hooked, lib A), 11 (node, hooked, lib A), 12 (node, no
// hook), 13 (python); 14 is a thread of 10.
function fakeHost({ all = ['/u/A.so', '/v/B.so'], own = '/root/O.so' } = {}) {
  const procs = {
    10: { argv: 'node -r nodetrace/register web.js', node: true, libs: ['/u/A.so'] },
    11: { argv: 'node -r nodetrace/register web.js --port 2', node: true, libs: ['/u/A.so'] },
    12: { argv: 'node web-plain.js', node: true, libs: [] },
    13: { argv: 'python3 web.py', node: false, libs: [] },
  };
  return {
    isRunning: (pid) => pid in procs || pid === 14,
    tgidOf: (pid) => (pid === 14 ? 10 : pid in procs ? pid : null),
    looksLikeNode: (pid) => Boolean(procs[pid] && procs[pid].node),
    executableName: (pid) => procs[pid] && procs[pid].argv.split(' ')[0],
    commandLine: (pid) => procs[pid].argv,
    findByCommandLine: (pattern) => Object.keys(procs).map(Number).filter((pid) => procs[pid].argv.includes(pattern)),
    librariesOf: (pid) => procs[pid].libs,
    allLibraries: () => all,
    uniqueFiles: (files) => [...new Set(files)],
    ownLibrary: () => own,
    username: () => 'root',
  };
}

const resolve = (text, host = fakeHost()) => resolveTargets(KIND, text, 'bpftrace', host);
const bpftrace = (version) => ({ name: 'bpftrace', path: '/usr/bin/bpftrace', version });

describe('probe targets (shared by snoop and http)', function () {
  it('a name: the matching processes with probes, one library, a note for the Node ones without', function () {
    const t = resolve('web');
    assert.deepStrictEqual([t.kind, t.pids, t.libraries], ['pids', [10, 11], ['/u/A.so']]);
    assert.deepStrictEqual(t.notes, ['skipping a Node process matching "web" without HTTP probes (not started with -r nodetrace/register?): 12.']);
  });

  it('a name whose processes have no probes: what they are and how to start them, exit 3', function () {
    assert.throws(() => resolve('web-plain'), (e) => e.exitCode === 3
      && /^the process matching "web-plain" has no HTTP probes:\n {2}12 node web-plain\.js$/.test(e.message) && e.hint === KIND.hint);
    assert.throws(() => resolve('nothing-like-this'), (e) => e.exitCode === 2 && /no running process has "nothing-like-this"/.test(e.message));
  });

  it('PIDs: each must run, be a process, and have the probes', function () {
    assert.deepStrictEqual(resolve('10,11').pids, [10, 11]);
    assert.throws(() => resolve('10,12'), (e) => e.exitCode === 3 && /PID 12 has no HTTP probes/.test(e.message));
    assert.throws(() => resolve('13'), (e) => e.exitCode === 3 && /PID 13 \(python3\) is not a Node process with HTTP probes/.test(e.message));
    assert.throws(() => resolve('14'), (e) => e.exitCode === 2 && /thread of process 10/.test(e.message) && /nodetrace http 10/.test(e.hint));
    assert.throws(() => resolve('99'), (e) => e.exitCode === 3 && /no process with PID 99 is running/.test(e.message));
  });

  it('\'*\': every library there is, and this user\'s own to wait on (made now: its processes started later need no new tracer)', function () {
    assert.deepStrictEqual(resolve('*').libraries, ['/u/A.so', '/v/B.so', '/root/O.so']);
    assert.deepStrictEqual(resolve('*', fakeHost({ all: [] })).libraries, ['/root/O.so']);
    assert.match(resolve('*', fakeHost({ all: [] })).notes[0], /waiting for ones started as root/);
  });
});

describe('nodetrace http: the tracer command line', function () {
  const opened = new Map([['/u/A.so', 7], ['/v/B.so', 8], ['/root/O.so', 9]]);

  const zeros = (n) => Array(n).fill('0');

  it('one process: -p, its library (through /proc/PID/root from 0.24), the threshold, every PID slot', function () {
    const t = { kind: 'pids', pids: [10], libraries: ['/u/A.so'], describe: 'PID 10' };
    const p = planHttp(bpftrace('0.17.0'), t, 100000);
    assert.deepStrictEqual(p.argv.slice(-13), ['-p', '10', p.scriptFile, '/u/A.so', '10', '100000', ...zeros(7)]);
    assert.strictEqual(planHttp(bpftrace('0.27.1'), t, 0).argv.slice(-10)[0], '/proc/10/root/u/A.so');
  });

  it('requests in batches on every bpftrace (http-batched.bt, -f json), strings of 200 bytes by each version\'s variable', function () {
    const t = { kind: 'pids', pids: [10], libraries: ['/u/A.so'], describe: 'PID 10' };
    for (const [v, strlen] of [['0.17.0', 'BPFTRACE_STRLEN'], ['0.23.2', 'BPFTRACE_MAX_STRLEN'], ['0.27.1', 'BPFTRACE_MAX_STRLEN']]) {
      const p = planHttp(bpftrace(v), t, 0);
      assert.deepStrictEqual([p.script, p.output, p.env[strlen]], ['http-batched', 'json', '200'], v);
      assert(p.argv.includes('-f') && p.argv.includes('json'));
    }
  });

  it('a name\'s processes: no -p, a glob over links to verified descriptors, every PID in the filter', function () {
    const p = planHttp(bpftrace('0.17.0'), { kind: 'pids', pids: [10, 11], libraries: ['/u/A.so'], describe: 'PIDs 10, 11' }, 0, { opened });
    assert(!p.argv.includes('-p'));
    assert.deepStrictEqual(p.links, [{ name: '0.so', target: `/proc/${process.pid}/fd/7` }]);
    assert.deepStrictEqual(p.argv.slice(-10), [inTemp('*.so'), '10', '0', '11', ...zeros(6)]);
    assert.strictEqual(p.only, null);
  });

  it('more processes than the script\'s PID slots: every process of the libraries, filtered by nodetrace', function () {
    const pids = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    const p = planHttp(bpftrace('0.17.0'), { kind: 'pids', pids, libraries: ['/u/A.so'], describe: '9 processes' }, 0, { opened });
    assert.deepStrictEqual(p.argv.slice(-9), zeros(9));
    assert.deepStrictEqual([...p.only], pids);
  });

  it('\'*\': every library, PID 0', function () {
    const p = planHttp(bpftrace('0.17.0'), { kind: 'all', pids: [], libraries: ['/u/A.so', '/v/B.so', '/root/O.so'], describe: 'every prepared process' }, 0, { opened });
    assert.strictEqual(p.links.length, 3);
    assert.deepStrictEqual(p.argv.slice(-10), [inTemp('*.so'), ...zeros(9)]);
  });
});
