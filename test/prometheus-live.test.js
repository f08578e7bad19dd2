'use strict';
// --prometheus as every command that has it shares it (lib/prometheus/live.js),
// without a tracer: the endpoint listens only once the target is planned,
// and the option refuses what would end the trace or change its series.
const assert = require('assert');
const fs = require('fs');
const { nodetrace } = require('./support/harness');
const { checkPrometheus, withLiveClause } = require('../lib/prometheus/live');
const { readScript } = require('../lib/tracer/plan');

const COMMANDS = ['latency', 'gc', 'loop', 'http', 'async'];
const LIVE_SCRIPTS = ['addon-latency', 'gc', 'loop', 'async'];

// A PID no process has now.
function missingPid() {
  let pid = 999999;
  while (fs.existsSync(`/proc/${pid}`)) pid++;
  return pid;
}

describe('--prometheus, shared by the commands that serve metrics', function () {
  this.timeout(20000);

  for (const command of COMMANDS) {
    it(`${command}: a PID that does not exist is said, and no endpoint ever was`, async function () {
      const pid = missingPid();
      const r = await nodetrace([command, '-p', String(pid), '--prometheus', '127.0.0.1:0']);
      assert.notStrictEqual(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /serving metrics/);
      // As root with a tracer, the error is the missing PID (elsewhere, root or the tracer is said first).
      if (process.getuid() === 0) assert.match(r.stderr, new RegExp(`${pid}`), r.stderr);
    });
  }

  it('refuses -d and the command\'s own clashes, and an address that does not read', function () {
    assert.throws(() => checkPrometheus({ prometheus: '0', duration: 5 }), /not with -d/);
    assert.throws(() => checkPrometheus({ prometheus: '0', command: 'node x' }, [['command', '-c']]), /not with -c/);
    assert.throws(() => checkPrometheus({ prometheus: 'x y' }), (err) => err.name === 'UsageError');
    checkPrometheus({ prometheus: '9464', paths: false }, [['paths', '--paths']]);
    checkPrometheus({ duration: 5 });
  });

  it('turns the LIVE clause on for bpftrace, and refuses a D script', function () {
    for (const script of LIVE_SCRIPTS) {
      const text = withLiveClause(readScript(script, 'bpftrace'), { name: 'bpftrace' }, 'latency');
      assert.match(readScript(script, 'bpftrace'), /^\/.+ && 0\/$/m, `${script}: its LIVE clause off as the script is`);
      assert.doesNotMatch(text, /^\/.+ && 0\/$/m, `${script}: its LIVE clause on`);
      assert.match(text, /printf\("Live maps\.\\n"\);/);
    }
    assert.throws(() => withLiveClause('x', { name: 'dtrace' }, 'latency'), (err) => err.name === 'UsageError');
  });
});
