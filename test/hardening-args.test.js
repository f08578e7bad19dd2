'use strict';
// What a user (or a hostile process) can put in front of nodetrace's
// arguments and inputs, answered in one or two lines with the right exit
// code: numbers a timer cannot hold, thread IDs, zombies, patterns too long
// to echo, aggregations of any size. No tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { nodetrace, startTarget, stopTarget, killStragglers } = require('./support/harness');

describe('hardening: arguments and inputs', function () {
  this.timeout(60000);
  afterEach(killStragglers);

  it('refuses a -d that a timer cannot hold (it would end the trace at once), exit 2', async function () {
    for (const cmd of [['latency', '-p', '1'], ['snoop', '1'], ['ebadf', '-p', '1']]) {
      const r = await nodetrace([...cmd, '-d', '2147484', '-n']);
      assert.strictEqual(r.code, 2, `${cmd[0]}: ${r.stderr}`);
      assert.match(r.stderr, /-d expects a whole number of seconds from 1 to 2147483/);
    }
  });

  it('tells a thread ID from a process ID, and names the process', async function () {
    const target = await startTarget('crypto-loop.js');
    try {
      const tids = fs.readdirSync(`/proc/${target.pid}/task`).map(Number).filter((t) => t !== target.pid);
      assert(tids.length > 0, 'node has threads besides the main one');
      for (const cmd of [['latency', '-p'], ['ebadf', '-p']]) {
        const r = await nodetrace([...cmd, String(tids[0]), '-n']);
        assert.strictEqual(r.code, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`${tids[0]} is a thread of process ${target.pid}, not a process\\.\\nGive the process: nodetrace ${cmd[0]} ${target.pid}`));
      }
    } finally {
      stopTarget(target);
    }
  });

  it('refuses a zombie in one line, exit 3', async function () {
    // A parent that never reaps its exited child.
    const parent = spawn('python3', ['-c', 'import os,time,sys\npid=os.fork()\nif pid==0: os._exit(0)\nprint(pid,flush=True)\ntime.sleep(60)'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const zombie = Number(await new Promise((resolve) => parent.stdout.once('data', (d) => resolve(String(d).trim()))));
      for (let i = 0; i < 50 && !/\) Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, 'utf8')); i++) await new Promise((r) => setTimeout(r, 20));
      const r = await nodetrace(['latency', '-p', String(zombie), '--force', '-n']);
      assert.strictEqual(r.code, 3, r.stderr);
      assert.match(r.stderr, /^nodetrace: PID \d+ has exited \(a zombie waiting for its parent\): there is nothing left to trace\.\n$/);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('echoes a long pattern shortened, and its control characters made visible', async function () {
    const pattern = 'x'.repeat(5000) + '\x1b[2J';
    const r = await nodetrace(['snoop', pattern, '--backend', 'bpftrace', '-n']);
    if (/not usable here|no tracer found/.test(r.stderr)) this.skip();
    assert.strictEqual(r.code, 2, r.stderr);
    assert(r.stderr.length < 400, `echoed ${r.stderr.length} characters`);
    assert.match(r.stderr, /no running process has "x{59}…" in its command line/);
    // eslint-disable-next-line no-control-regex -- no escape byte may reach the terminal
    assert.doesNotMatch(r.stderr, /\x1b/);
  });

  it('renders an aggregation of 125,000 buckets (no call-stack limits), as text and JSON', async function () {
    const lines = ['@big_us:'];
    for (let i = 0; i < 125000; i++) lines.push(`[${i}, ${i + 1})  1 |@|`);
    const input = lines.join('\n') + '\n';
    const text = await nodetrace(['format', '--from', 'bpftrace'], { input });
    assert.strictEqual(text.code, 0, text.stderr.slice(0, 500));
    assert.match(text.stdout, /count 125000, p50 6\d–6\d ms/);
    const json = await nodetrace(['format', '--from', 'bpftrace', '--json'], { input });
    assert.strictEqual(json.code, 0, json.stderr.slice(0, 500));
    assert.strictEqual(JSON.parse(json.stdout).kinds[0].count, 125000);
  });

  it('shows control characters in keys as text, not as terminal commands', async function () {
    const input = '@calls[evil\x1b]0;pwned\x07name]: 3\n';
    const r = await nodetrace(['format', '--from', 'bpftrace'], { input });
    assert.strictEqual(r.code, 0, r.stderr);
    // eslint-disable-next-line no-control-regex -- no BEL or escape byte may reach the terminal
    assert.doesNotMatch(r.stdout, /[\x07\x1b]/);
    assert.match(r.stdout, /evil\\x1b\]0;pwned\\x07name/);
  });
});

void path;
