'use strict';
// The command line's own rules: flags mean one thing in every command, and
// old spellings keep working for one release, saying so.
const assert = require('assert');
const { rewriteDeprecated } = require('../lib/cli');
const { nodetrace } = require('./support/harness');

function rewrite(argv) {
  const said = [];
  const out = rewriteDeprecated(argv, { write: (t) => said.push(t) });
  return { out, said: said.join('') };
}

describe('cli: flags mean one thing everywhere', function () {
  it('reads ebadf\'s old -n NAME as --name NAME, and says so', function () {
    const r = rewrite(['ebadf', '-n', 'node', '-o', '/var/cores']);
    assert.deepStrictEqual(r.out, ['ebadf', '--name', 'node', '-o', '/var/cores']);
    assert.match(r.said, /-n node is now spelt --name node \(-n now means --dry-run in every command\)/);
  });

  it('reads snoop\'s old -o MODE as -m MODE, and says so', function () {
    const r = rewrite(['snoop', '*', '-o', 'short']);
    assert.deepStrictEqual(r.out, ['snoop', '*', '--mode', 'short']);
    assert.match(r.said, /the old spelling goes in the next release/);
  });

  it('leaves -n alone where it is the dry run, and every other command alone', function () {
    for (const argv of [['ebadf', '-p', '1', '-n'], ['latency', '-p', '1', '-n'], ['snoop', '*', '-n', '-l', 'warn'], ['latency', '-o', 'x']]) {
      const r = rewrite(argv);
      assert.deepStrictEqual(r.out, argv);
      assert.strictEqual(r.said, '');
    }
  });

  it('-n is the dry run in every command that runs a tracer', async function () {
    for (const cmd of [['latency', '-p', String(process.pid), '--force'], ['ebadf', '-p', String(process.pid)]]) {
      const r = await nodetrace([...cmd, '-n', '--backend', 'bpftrace']);
      if (/not usable here|no tracer found/.test(r.stderr)) this.skip();
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stdout, /^# bpftrace \S+ would run/);
      assert.match(r.stdout, /^exit$/m);
    }
  });
});
