'use strict';
// A tracer's life as nodetrace ends it, @tracer: a tracer that dies under
// nodetrace is never a clean run, and a tracer never outlives nodetrace.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { ROOT, requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');

const REGISTER = path.join(ROOT, 'register.js');
// The kernel kills the tracer the moment nodetrace dies (--pdeathsig), but
// its exit closes every probe it attached, each waiting for an RCU grace
// period, and then init must reap it: 9.5 s for latency's bpftrace at a load
// of 15 on 2 cores (7 s in those waits, 2 s a zombie).
const TRACER_EXIT_BOUND_MS = 30000;

// The tracer nodetrace runs: its child whose program is the tracer.
function tracerOf(pid, name = 'bpftrace') {
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    let kids = '';
    try { kids = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim(); } catch { continue; }
    for (const kid of kids.split(/\s+/).filter(Boolean).map(Number)) {
      try {
        if (fs.readFileSync(`/proc/${kid}/comm`, 'utf8').trim() === name) return kid;
      } catch { /* gone */ }
    }
  }
  return null;
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

// Runs nodetrace; once it says it is tracing, calls act(nodetraceChild).
function runAndAct(args, ready, act) {
  return nodetrace(args, {
    onSpawn: (child) => {
      let said = '';
      child.stderr.on('data', (c) => {
        said += c;
        if (ready.test(said) && !child.acted) {
          child.acted = true;
          setTimeout(() => act(child), 1500);
        }
      });
    },
  });
}

describe('a tracer\'s life @tracer', function () {
  this.timeout(90000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('latency: a tracer killed mid-trace is reported, with a non-zero exit, not "no work" @core', async function () {
    const target = await startTarget('sqlite-loop.js');
    try {
      let killed = null;
      const r = await runAndAct(['latency', '-p', String(target.pid), '-d', '30'], /tracing PID/, (nt) => {
        killed = tracerOf(nt.pid);
        process.kill(killed, 'SIGKILL');
      });
      assert(killed, 'found the tracer');
      assert.strictEqual(r.code, 1, r.stderr);
      assert.match(r.stderr, /bpftrace was killed by SIGKILL after \d+ s; the results are incomplete/);
      assert.doesNotMatch(r.stderr, /no thread-pool work completed/);
    } finally {
      stopTarget(target);
    }
  });

  it('snoop: a tracer killed mid-snoop is reported, with a non-zero exit, after what was shown @core', async function () {
    const app = await startTarget('bunyan-debug-loop.js', { args: ['-r', REGISTER], env: { NAME: 'life-snoop' } });
    try {
      const r = await runAndAct(['snoop', String(app.pid), '-d', '30', '--json'], /snooping bunyan records/, (nt) => {
        process.kill(tracerOf(nt.pid), 'SIGKILL');
      });
      assert.strictEqual(r.code, 1, r.stderr);
      assert.match(r.stderr, /bpftrace was killed by SIGKILL after \d+ s; the snoop is incomplete/);
      assert(r.stdout.split('\n').some((l) => l.includes('life-snoop')), 'records before the kill were shown');
    } finally {
      stopTarget(app);
    }
  });

  for (const [name, args] of [['latency', (pid) => ['latency', '-p', String(pid)]], ['snoop', (pid) => ['snoop', String(pid)]]]) {
    it(`${name}: SIGKILL of nodetrace leaves no tracer behind`, async function () {
      const target = name === 'snoop'
        ? await startTarget('bunyan-debug-loop.js', { args: ['-r', REGISTER], env: { NAME: 'life-kill' } })
        : await startTarget('sqlite-loop.js');
      try {
        let tracer = null;
        await runAndAct(args(target.pid), /tracing PID|snooping bunyan/, (nt) => {
          tracer = tracerOf(nt.pid);
          nt.kill('SIGKILL');
        });
        assert(tracer, 'found the tracer');
        const deadline = Date.now() + TRACER_EXIT_BOUND_MS;
        while (Date.now() < deadline && alive(tracer)) await new Promise((res) => setTimeout(res, 100));
        assert(!alive(tracer), `bpftrace ${tracer} outlived nodetrace`);
      } finally {
        stopTarget(target);
      }
    });
  }
});
