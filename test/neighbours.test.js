'use strict';
// lib/tracer/neighbours.js: who else takes a trace's uprobe hits, said before attaching.
const assert = require('assert');
const { payingNeighbours, neighbourWarning, hostNeighbourNote, mapsAny, mapsKey } = require('../lib/tracer/neighbours');
const { renderText, renderJson } = require('../lib/ps/render');

describe('the processes a trace costs', function () {
  const maps = (key) => `00400000-00500000 r-xp 00000000 ${key} /usr/bin/node\n7f00-7f01 rw-p 00000000 00:00 0 \n`;
  const key = mapsKey(process.execPath);
  const plan = (version, argv = []) => ({ tracer: { name: 'bpftrace', version }, target: { pid: 7 }, argv, uprobeFiles: [process.execPath] });
  const host = { pids: () => [7, 8, 9], maps: (pid) => (pid === 9 ? maps('fe:00 1') : maps(key)), name: () => 'node' };

  it('reads a mapping by device and inode, as /proc/PID/maps writes them', function () {
    assert.match(key, /^[0-9a-f]{2,}:[0-9a-f]{2,} \d+$/);
    assert.strictEqual(mapsAny(maps(key), new Set([key])), true);
    assert.strictEqual(mapsAny(maps('fe:00 1'), new Set([key])), false);
  });

  it('bpftrace 0.17: every other process that maps the probed file; none from 0.20 with -p, in the kernel', function () {
    assert.deepStrictEqual(payingNeighbours(plan('0.17.0'), host), [{ pid: 8, name: 'node' }]);
    assert.deepStrictEqual(payingNeighbours(plan('0.27.1', ['-p', '7']), host), []);
    assert.deepStrictEqual(payingNeighbours(plan('0.27.1'), host), [{ pid: 8, name: 'node' }], 'without -p, in the program only');
  });

  it('says so in one line, names made safe, a few shown', function () {
    const many = Array.from({ length: 7 }, (_, i) => ({ pid: 100 + i, name: i ? 'node' : 'evil\u001b[2J' }));
    const w = neighbourWarning(plan('0.17.0'), many);
    assert.match(w, /^bpftrace 0\.17\.0 sets uprobes in every process that maps the probed file: 7 other processes \(PID 100 evil\\x1b\[2J, 101 node, .* and 2 more\) will take each probe hit too/);
    assert(!/[\n\u001b]/.test(w));
    assert.strictEqual(neighbourWarning(plan('0.17.0'), []), null);
  });

  it('gc plans -p for a process in nodetrace\'s mounts, so that bpftrace 0.20+ traps in it only', function () {
    // This process is Node and sees nodetrace's mounts.
    const gc = require('../lib/commands/gc');
    const p = gc.plan({ pid: process.pid, _: [] }, { name: 'bpftrace', version: '0.27.1', path: '/usr/bin/bpftrace' });
    assert.deepStrictEqual(p.argv.slice(0, 2), ['-p', String(process.pid)]);
    assert.deepStrictEqual(payingNeighbours(p, { ...host, pids: () => [process.pid, 8] }), []);
  });

  it('doctor and ps say what a trace costs the others, and how to avoid it, before any trace', function () {
    const old = hostNeighbourNote({ name: 'bpftrace', version: '0.17.0' });
    assert.strictEqual(old.ok, false);
    assert.match(old.detail, /every process that maps the probed file: latency, gc and async .* bpftrace 0\.20 or later \(NODETRACE_BPFTRACE=/);
    assert.strictEqual(hostNeighbourNote({ name: 'bpftrace', version: '0.23.2' }).ok, true);
    assert.strictEqual(hostNeighbourNote({ name: 'dtrace', version: '2.0' }).ok, true);
    const row = (pid) => ({
      facts: { pid, who: { pidInside: null, container: null }, version: '20.0.0', user: 'u', perfMap: {}, command: 'node a.js' },
      verdicts: [],
    });
    const text = renderText([row(7), row(8)], { tracerCost: old });
    assert.match(text, /\nTracing one of these costs the others: bpftrace 0\.17\.0 sets uprobes/);
    assert.doesNotMatch(renderText([row(7)], { tracerCost: old }), /costs the others/, 'one process: no other pays');
    assert.doesNotMatch(renderText([row(7), row(8)], { tracerCost: hostNeighbourNote({ name: 'bpftrace', version: '0.27.1' }) }), /costs the others/);
  });

  it('ps --json gives the same fact as others_cost, whatever the rows, null without a tracer', function () {
    const row = (pid) => ({
      facts: { pid, who: { pidInside: null, container: null }, version: '20.0.0', user: 'u', perfMap: {}, command: 'node a.js' },
      verdicts: [],
    });
    // As lib/commands/ps.js builds it from the tracer it would run.
    const cost = (version) => ({ tracer: `bpftrace ${version}`, ...hostNeighbourNote({ name: 'bpftrace', version }) });
    const old = JSON.parse(renderJson([row(7), row(8)], { tracerCost: cost('0.17.0') })).others_cost;
    assert.deepStrictEqual(Object.keys(old), ['tracer', 'others_pay', 'detail']);
    assert.deepStrictEqual([old.tracer, old.others_pay], ['bpftrace 0.17.0', true]);
    assert.strictEqual(old.detail, hostNeighbourNote({ name: 'bpftrace', version: '0.17.0' }).detail, 'the text\'s words, not others');
    assert.strictEqual(JSON.parse(renderJson([row(7)], { tracerCost: cost('0.17.0') })).others_cost.others_pay, true,
      'a fact of the host: one process listed now does not change it');
    const recent = JSON.parse(renderJson([row(7), row(8)], { tracerCost: cost('0.27.1') })).others_cost;
    assert.deepStrictEqual([recent.others_pay, recent.detail], [false, hostNeighbourNote({ name: 'bpftrace', version: '0.27.1' }).detail]);
    assert.strictEqual(JSON.parse(renderJson([row(7)])).others_cost, null, 'no tracer: nothing to say');
  });
});
