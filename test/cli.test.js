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
      // The script as it is (after `exit`), or the program instantiated from it.
      assert.match(r.stdout, /^exit$|^# \(the program above is instantiated from /m);
    }
  });
});

describe('cli: one list of commands', function () {
  const fs = require('fs');
  const path = require('path');
  const { COMMANDS } = require('../lib/cli');
  const read = (file) => fs.readFileSync(path.join(__dirname, '..', file), 'utf8');

  // A newcomer reads README in minutes; a command's detail is its docs/ page.
  it('README.md stays short: at most 350 lines', function () {
    const lines = read('README.md').split('\n').length - 1;
    assert(lines <= 350, `README.md has ${lines} lines: move detail to docs/<command>.md`);
  });

  it('README\'s opening list, ARCHITECTURE.md\'s table and --help each name every command, and no other', async function () {
    // README: the bullets before the set-up, each `nodetrace <command> ...`.
    const intro = read('README.md').split('\n## ')[0];
    const inReadme = new Set([...intro.matchAll(/^- `nodetrace ([a-z]+)/gm)].map((m) => m[1]));
    // ARCHITECTURE.md: the first column of the table of commands.
    const inMap = new Set([...read('ARCHITECTURE.md').matchAll(/^\| ([a-z]+) \| /gm)].map((m) => m[1]).filter((c) => c !== 'command'));
    const help = await nodetrace(['--help']);
    const inHelp = new Set([...help.stdout.matchAll(/^ {2}nodetrace ([a-z]+)/gm)].map((m) => m[1]));
    for (const [where, names] of [['README.md', inReadme], ['ARCHITECTURE.md', inMap], ['--help', inHelp]]) {
      assert.deepStrictEqual([...names].sort(), [...COMMANDS].sort(), where);
    }
  });

  it('the bare command names every command, as a usage error', async function () {
    const r = await nodetrace([]);
    assert.strictEqual(r.code, 2);
    for (const c of COMMANDS) assert.match(r.stderr, new RegExp(`\\b${c}\\b`), c);
  });
});

describe('cli: one way to name a target', function () {
  this.timeout(120000);
  const { spawn } = require('child_process');

  it('-p PID and the PID as the target give the same plan, in every command that traces one process', async function () {
    for (const cmd of ['latency', 'gc', 'loop', 'profile', 'ebadf']) {
      const a = await nodetrace([cmd, '-p', String(process.pid), '-n', '--backend', 'bpftrace']);
      if (/not usable here|no tracer found/.test(a.stderr)) this.skip();
      const b = await nodetrace([cmd, String(process.pid), '-n', '--backend', 'bpftrace']);
      assert.strictEqual(a.code, 0, `${cmd}: ${a.stderr}`);
      assert.strictEqual(b.stdout, a.stdout, cmd);
    }
  });

  it('-p and a target together, or -p with a name, are usage errors', async function () {
    for (const args of [['gc', '-p', '1', '2'], ['loop', '-p', 'my-service'], ['http', '-p', '1', '*'], ['snoop', '-p', '1', '2'], ['snoop', '--container', 'web', '*']]) {
      const r = await nodetrace([...args, '-n']);
      assert.strictEqual(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /Give one target|expects a process ID/);
    }
  });

  it('advises --force only in the commands that have it', async function () {
    const notNode = spawn('sleep', ['60']);
    try {
      for (const [cmd, has] of [['gc', true], ['loop', true], ['latency', true], ['profile', true], ['http', false]]) {
        const r = await nodetrace([cmd, '-p', String(notNode.pid), '-n', '--backend', 'bpftrace']);
        if (/not usable here|no tracer found/.test(r.stderr)) this.skip();
        assert.notStrictEqual(r.code, 0, `${cmd}: ${r.stderr}`);
        assert.match(r.stderr, /is not a Node process/, cmd);
        assert.strictEqual(/--force/.test(r.stderr), has, `${cmd}: ${r.stderr}`);
      }
    } finally {
      notNode.kill('SIGKILL');
    }
  });

  it('http\'s old -l for --latency still works, saying so; -l is --level', function () {
    const r = rewrite(['http', '*', '-l', '-d', '5']);
    assert.deepStrictEqual(r.out, ['http', '*', '--latency', '-d', '5']);
    assert.match(r.said, /-l is now spelt --latency \(-l means --level, as in snoop and bunyan\)/);
    assert.deepStrictEqual(rewrite(['snoop', '*', '-l', 'warn']).out, ['snoop', '*', '-l', 'warn']);
  });
});

describe('cli: "-" is a file name, never a target', function () {
  const yargs = require('yargs/yargs');
  const { COMMANDS } = require('../lib/cli');
  const pid = String(process.pid);
  const STDOUT_PROMISE = '("-": standard output)';

  // Each command's options as its builder declares them (a recording stand-in
  // for yargs: the builders only chain calls).
  function declared(name) {
    const options = [];
    let positional = false;
    const y = new Proxy({}, {
      get: (t, method) => (...args) => {
        if (method === 'option') options.push({ key: args[0], ...args[1] });
        if (method === 'positional' && args[0] === 'target') positional = true;
        return y;
      },
    });
    require(`../lib/commands/${name}`).builder(y);
    return { options, positional };
  }

  // The command line parsed and checked as nodetrace does, without running the command.
  function parse(argv) {
    const cmd = require(`../lib/commands/${argv[0]}`);
    let out;
    yargs(argv).strict().exitProcess(false)
      // (with a fail handler that returns, yargs goes on to the handler)
      .command({ ...cmd, handler: (args) => { out = out || { args }; } })
      .fail((msg, err) => { out = { error: msg || err.message }; })
      .parse();
    return out;
  }

  const outputFlags = COMMANDS.flatMap((c) => declared(c).options
    .filter((o) => String(o.describe).endsWith(STDOUT_PROMISE)).map((o) => [c, o.key]));

  it('every output flag of every command takes "-", before or after the target', function () {
    // profile's three at least: the test cannot pass by finding none.
    for (const f of ['folded', 'svg', 'pprof']) assert(outputFlags.some(([c, k]) => c === 'profile' && k === f), `profile --${f}`);
    for (const [command, flag] of outputFlags) {
      for (const argv of [[command, '-p', pid, `--${flag}`, '-'], [command, `--${flag}`, '-', pid], [command, pid, `--${flag}=-`]]) {
        const r = parse(argv);
        assert(r.args, `${argv.join(' ')}: ${r.error}`);
        assert.strictEqual(r.args[flag], '-', argv.join(' '));
      }
      const bare = parse([command, '-p', pid, `--${flag}`]);
      assert(bare.error && !/one target/.test(bare.error), `--${flag} without a file: ${bare.error}`);
    }
  });

  it('one output at most on stdout, --json included; a binary one never to a terminal', function () {
    assert.match(parse(['profile', '-p', pid, '--svg', '-', '--folded', '-']).error,
      /^Only one output can go to standard output, not --folded - and --svg -: send the others to files\.$/);
    assert.match(parse(['profile', '-p', pid, '--json', '--pprof', '-']).error, /not --json and --pprof -/);
    assert(parse(['profile', '-p', pid, '--svg', 'cpu.svg', '--folded', '-']).args);
    const { checkOutputFiles } = require('../lib/commands/common-options');
    assert.throws(() => checkOutputFiles({ pprof: '-' }, ['pprof'], { binary: ['pprof'], stdout: { isTTY: true } }), /binary data, not to a terminal/);
    assert.doesNotThrow(() => checkOutputFiles({ pprof: '-' }, ['pprof'], { binary: ['pprof'], stdout: { isTTY: false } }));
  });

  it('a directory flag refuses "-" by name: ebadf -o -', function () {
    assert.strictEqual(parse(['ebadf', '-p', pid, '-o', '-']).error, '-o names a directory for files; "-" (standard output) cannot hold them.');
    assert.strictEqual(parse(['ebadf', '-p', pid, '-o', '/var/cores']).args.outputDir, '/var/cores');
  });

  it('a stray "-" is no target in any command that takes one (as a name it matches every command line)', function () {
    const withTarget = COMMANDS.filter((c) => declared(c).positional);
    assert(withTarget.length >= 8, withTarget.join(' '));
    for (const command of withTarget) {
      const r = parse([command, '-']);
      assert.match(r.error || '', /^A lone "-" or an empty word names no process/, `${command}: ${JSON.stringify(r)}`);
    }
  });
});
