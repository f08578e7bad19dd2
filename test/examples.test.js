'use strict';
// Every example runs as written. Each `nodetrace ...` command line in
// README.md, docs/**/*.md and the --help examples of every command is run:
// as a dry run (-n) where it would trace, against Node processes this test
// starts (their PIDs put in for the example's, and the names examples use
// in their command lines), for real where it does not (format on a capture
// kept in test/fixtures/, ps, doctor, --help). Each must exit 0, or what
// its marker says. A block of output that comes from a fixture is compared
// with what the CLI prints for that fixture. Every relative link and anchor
// in README.md, ARCHITECTURE.md and docs/ resolves, as does every
// `docs/NAME.md#anchor` that code, programs and docs name, and every file
// of test/fixtures/ and test/targets/ the docs name exists.
//
// Markers, for whoever writes an example: an HTML comment on the line just
// before a fenced block, several separated by commas:
//   <!-- example: not run: WHY -->    its commands are not run; WHY says what
//                                     they need that a test run has not
//   <!-- example: exit N -->          its commands exit N
//   <!-- example: target plain -->    its PIDs are a Node process without the
//                                     register hook (default: one with it)
//   <!-- example: target workers -->  its PIDs are a Node process with
//                                     worker_threads Workers 2, 3 and 4
//                                     (test/targets/threads-mix.js)
//   <!-- example: target app -->      its PIDs are an application with a
//                                     provider of its own, myapp
//                                     (test/targets/usdt-app.js)
//   <!-- example: output of: nodetrace ARGS < FILE -->
//                                     the block is what that prints for FILE,
//                                     a file of this repository; compared
// In a block with `$ ` lines only those are commands, the rest their output
// (after `$ nodetrace format < FILE`, compared as above). In a compared
// output, a line `...` stands for any lines left out. A name used as a
// target must be in NAMES below. --help examples cannot carry a comment:
// theirs are in HELP_MARKERS.
//
// Needs root (a dry run reads the target's mapped files through
// /proc/PID/map_files, which asks for CAP_SYS_ADMIN; ps and doctor need root)
// and a tracer (a plan is made for its version): skipped without, saying
// why, except in CI.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { ROOT, nodetrace, startTarget, stopTarget, killStragglers, tracingUnavailableReason } = require('./support/harness');
const { COMMANDS } = require('../lib/cli');

// Names examples give as targets (part of a command line): the prepared
// target has them all in its own, each with this run's suffix, and so do
// the command lines run, so that another run of this test on the machine
// (its own suffix) is never a second match.
const NAMES = ['my-service', 'checkout-api', 'bunyan-service'];
const RUN_SUFFIX = `-run${process.pid}`;
const RUN_NAMES = NAMES.map((n) => n + RUN_SUFFIX);
// Commands that trace: run with -n. The others run as written.
const TRACING = new Set(['latency', 'snoop', 'ebadf', 'loop', 'http', 'gc', 'async', 'profile', 'probes']);
// What a format example reads when its input is no file of this repository
// (a tracer's output, piped or saved): a capture of that tracer.
const CAPTURE = {
  dtrace: 'test/fixtures/dtrace-addon-latency-pool.out',
  bpftrace: 'test/fixtures/bpftrace-addon-latency-sqlite3.out',
};
// --help examples' markers, by the example as written.
const HELP_MARKERS = {
  'sudo $0 http --container web': 'not run: needs a podman container named web',
  'sudo $0 snoop --container web': 'not run: needs a podman container named web',
  'sudo $0 http --pod web-7d4b9': 'not run: needs a pod named web-7d4b9',
  'sudo $0 snoop --pod web-7d4b9': 'not run: needs a pod named web-7d4b9',
  'sudo $0 doctor --pod web-7d4b9': 'not run: needs a pod named web-7d4b9',
  'sudo $0 latency --pod web-7d4b9 -d 10': 'not run: needs a pod named web-7d4b9',
  'sudo $0 ps --pod web-7d4b9 --json': 'not run: needs a pod named web-7d4b9',
  '$0 stack core.node.4242.20261127T140659Z': 'not run: needs a core of a Node process (ebadf saves one)',
  '$0 stack core.node.4242.X --root core.node.4242.X.root': 'not run: needs a core and the files ebadf saves beside it',
  'sudo $0 loop -p 4242 --thread 2': 'target workers',
  'sudo $0 async -p 4242 --thread 2': 'target workers',
  "sudo $0 probes -p 4242 'myapp:*'": 'target app',
  "sudo $0 probes -p 4242 'myapp:*' --count -d 10": 'target app',
  "sudo $0 probes -p 4242 'myapp:*' --wait 60": 'target app',
  'sudo $0 probes -p 4242 --latency myapp:request-start myapp:request-done': 'target app',
  "sudo $0 probes '*' 'myapp:request-done'": 'target app',
  "$0 probes -p 4242 'myapp:*' -n": 'target app',
  '$0 merge node-a/latency.json node-b/latency.json': 'not run: needs reports made on two nodes',
  '$0 merge --by source web-*.json > all.json': 'not run: needs reports made in several pods',
  '$0 merge a.folded b.folded > all.folded': 'not run: needs two profiles\' folded stacks',
};
const CONCURRENCY = 3;
// A line that may run nodetrace (the rest of a block is not read as shell).
const MENTIONS_NODETRACE = /(^|[\s|;&])(bin\/)?nodetrace\s/;

const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');

function markdownFiles() {
  const out = ['README.md', 'ARCHITECTURE.md'];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
}

// ---- Shell lines, read as a reader would type them (never run by a shell)

// Words and operators of one line; quotes and backslashes as sh reads them,
// a `#` that starts a word ends the line.
function shellTokens(line) {
  const tokens = [];
  let word = null;
  const end = () => { if (word !== null) tokens.push({ word }); word = null; };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const j = line.indexOf("'", i + 1);
      if (j < 0) throw new Error(`unclosed quote: ${line}`);
      word = (word || '') + line.slice(i + 1, j);
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      for (; j < line.length && line[j] !== '"'; j++) text += line[j] === '\\' ? line[++j] : line[j];
      if (j >= line.length) throw new Error(`unclosed quote: ${line}`);
      word = (word || '') + text;
      i = j;
    } else if (c === '\\') {
      word = (word || '') + line[++i];
    } else if (/\s/.test(c)) {
      end();
    } else if (c === '#' && word === null) {
      break;
    } else if ('|;&<>'.includes(c)) {
      const m = /^(?:\|\||&&|\d?>>?&?\d?|[|;&<])/.exec(line.slice(i)) || [c];
      if (/^\d$/.test(word || '') && /^>/.test(m[0])) word = null;   // 2>&1: the descriptor goes with it
      end();
      tokens.push({ op: m[0] });
      i += m[0].length - 1;
    } else {
      word = (word || '') + c;
    }
  }
  end();
  return tokens;
}

// One line -> its commands: { words, stdin, producer } (a producer is the
// command piped into this one).
function shellCommands(line) {
  const commands = [];
  let cur = { words: [], stdin: null, producer: null };
  const tokens = shellTokens(line);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.word !== undefined) { cur.words.push(t.word); continue; }
    if (t.op === '<') { cur.stdin = tokens[++i].word; continue; }
    if (/>/.test(t.op)) { if (!/&/.test(t.op)) i++; continue; }   // output redirected: ours is captured
    const next = { words: [], stdin: null, producer: t.op === '|' ? cur : null };
    commands.push(cur);
    cur = next;
  }
  commands.push(cur);
  return commands.filter((c) => c.words.length);
}

// nodetrace's own arguments, or null when the command is another program.
function nodetraceArgs(words) {
  let i = 0;
  while (i < words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[i])) i++;
  if (words[i] === 'sudo') { i++; while (i < words.length && words[i].startsWith('-')) i++; }
  if (!['nodetrace', 'bin/nodetrace', '$0'].includes(words[i])) return null;
  return words.slice(i + 1);
}

// ---- Examples, from markdown and --help

function parseMarker(text) {
  const m = /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/.exec(text);
  if (!m) return null;
  const marker = { exit: 0, target: 'prepared', notRun: null, outputOf: null };
  for (const part of m[1].split(/,\s*(?=exit |target |not run:|output of:)/).filter(Boolean)) {
    let x;
    if ((x = /^not run:\s*(\S.*)$/.exec(part))) marker.notRun = x[1];
    else if ((x = /^exit (\d+)$/.exec(part))) marker.exit = Number(x[1]);
    else if ((x = /^target (plain|prepared|workers|app)$/.exec(part))) marker.target = x[1];
    else if ((x = /^output of:\s*(\S.*)$/.exec(part))) marker.outputOf = x[1];
    else throw new Error(`unknown example marker: ${part}`);
  }
  return marker;
}

// Fenced blocks of a markdown text: { line, marker, lines } (indentation as
// the fence's taken off).
function fencedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i]
      .slice(Math.min(indent, /^\s*/.exec(lines[i])[0].length)));
    blocks.push({ line: start + 1, marker: start > 0 ? parseMarker(lines[start - 1]) : null, lines: body });
  }
  return blocks;
}

// Every example of one markdown file: { where, argv, stdin, exit, target, expect }.
function markdownExamples(file) {
  const out = [];
  for (const block of fencedBlocks(read(file))) {
    const marker = block.marker || parseMarker('<!-- example: -->');
    const where = `${file}:${block.line}`;
    if (marker.outputOf) {
      const [cmd] = shellCommands(marker.outputOf);
      out.push({ where, args: nodetraceArgs(cmd.words), stdin: cmd.stdin, exit: marker.exit, target: marker.target,
        expect: block.lines });
      continue;
    }
    const prompted = block.lines.some((l) => /^\$ /.test(l));
    for (let i = 0; i < block.lines.length; i++) {
      const line = block.lines[i];
      if (prompted && !/^\$ /.test(line)) continue;
      if (!MENTIONS_NODETRACE.test(line)) continue;   // other programs, diagrams, output
      const commands = shellCommands(line.replace(/^\$ /, ''));
      commands.forEach((cmd, k) => {
        const args = nodetraceArgs(cmd.words);
        if (!args) return;
        if (marker.notRun) return;
        const ex = { where: `${where} (${line.trim()})`, args, stdin: cmd.stdin, producer: cmd.producer, exit: marker.exit, target: marker.target };
        // A format run on a repository file, with its output shown: compared.
        if (prompted && k === commands.length - 1 && args[0] === 'format' && cmd.stdin && fs.existsSync(path.join(ROOT, cmd.stdin))) {
          let j = i + 1;
          while (j < block.lines.length && !/^\$ /.test(block.lines[j])) j++;
          ex.expect = block.lines.slice(i + 1, j);
        }
        out.push(ex);
      });
    }
  }
  return out;
}

// The examples each command's builder gives yargs (a recording stand-in:
// the builders only chain calls).
function helpExamples() {
  const out = [];
  for (const name of COMMANDS) {
    const y = new Proxy({}, {
      get: (t, method) => (...args) => {
        if (method === 'example') {
          const marker = parseMarker(`<!-- example: ${HELP_MARKERS[args[0]] || ''} -->`);
          if (!marker.notRun) {
            for (const cmd of shellCommands(args[0])) {
              const a = nodetraceArgs(cmd.words);
              if (a) out.push({ where: `nodetrace ${name} --help: ${args[0]}`, args: a, stdin: cmd.stdin, producer: cmd.producer, exit: marker.exit, target: marker.target });
            }
          }
        }
        return y;
      },
    });
    require(`../lib/commands/${name}`).builder(y);
  }
  return out;
}

// ---- Running one

// The options of each command that take a value (the word after is theirs).
function valueOptions(name) {
  const takes = new Set(['-p', '--pid', '-c', '--command']);
  const y = new Proxy({}, {
    get: (t, method) => (...args) => {
      if (method === 'option') {
        const o = args[1] || {};
        if (o.type === 'string' || o.type === 'number' || o.choices) {
          takes.add(`--${args[0]}`);
          for (const a of [].concat(o.alias || [])) takes.add(a.length === 1 ? `-${a}` : `--${a}`);
        }
      }
      return y;
    },
  });
  require(`../lib/commands/${name}`).builder(y);
  return takes;
}

const PIDS = /^(\d+|PID)(,(\d+|PID))*$/;

// The argv to run: the example's PIDs replaced with the targets', -n added where it traces.
function argvFor(ex, targets) {
  const args = [...ex.args];
  const command = args[0];
  if (!COMMANDS.includes(command)) return args;   // nodetrace --help, --version
  const takes = valueOptions(command);
  const pidsOf = (text) => {
    const n = text.split(',').length;
    const pool = { plain: [targets.plain], workers: [targets.workers], app: [targets.app],
      prepared: [targets.prepared, targets.second] }[ex.target];
    if (n > pool.length) throw new Error(`${ex.where}: ${n} PIDs, and the test starts ${pool.length} such targets`);
    return pool.slice(0, n).map((c) => c.pid).join(',');
  };
  for (let i = 1; i < args.length; i++) {
    const prev = args[i - 1];
    if ((prev === '-p' || prev === '--pid') && PIDS.test(args[i])) args[i] = pidsOf(args[i]);
    else if (!args[i].startsWith('-') && !takes.has(prev) && PIDS.test(args[i])) args[i] = pidsOf(args[i]);
    else if (NAMES.includes(args[i])) args[i] += RUN_SUFFIX;
  }
  if (TRACING.has(command) && !args.some((a) => ['-n', '--dry-run', '--help', '-h'].includes(a))) args.push('-n');
  return args;
}

function stdinFor(ex) {
  if (ex.args[0] !== 'format') return undefined;
  if (ex.stdin && fs.existsSync(path.join(ROOT, ex.stdin))) return read(ex.stdin);
  const producer = ex.producer && ex.producer.words[0] === 'dtrace' ? 'dtrace' : 'bpftrace';
  return read(CAPTURE[producer]);
}

// Does `actual` read as `expected`, where a line `...` stands for any lines?
function matchesShown(expected, actual) {
  const e = expected.map((l) => l.trimEnd());
  const a = actual.map((l) => l.trimEnd());
  while (e.length && e[e.length - 1] === '') e.pop();
  while (a.length && a[a.length - 1] === '') a.pop();
  const memo = new Map();
  const go = (i, j) => {
    const key = i * 100003 + j;
    if (memo.has(key)) return memo.get(key);
    let ok;
    if (i === e.length) ok = j === a.length;
    else if (e[i].trim() === '...') ok = go(i + 1, j) || (j < a.length && go(i, j + 1));
    else ok = j < a.length && e[i] === a[j] && go(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

async function runAll(jobs, limit, fn) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => { while (next < jobs.length) { const i = next++; results[i] = await fn(jobs[i]); } };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

// ---- Links and anchors

// GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to -.
function slug(heading) {
  return heading.trim().toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) || 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

// The text of a markdown file outside fenced blocks and inline code.
function prose(text) {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) { fenced = !fenced; return ''; }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  }).join('\n');
}

function brokenReference(fromFile, target) {
  const [file, anchor] = target.split('#');
  const resolved = file ? path.join(path.dirname(path.join(ROOT, fromFile)), decodeURI(file))
    : path.join(ROOT, fromFile);
  if (!fs.existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return `${target}: an anchor in a file that is not markdown`;
  return anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor) ? null : `${target}: no such heading`;
}

function filesUnder(dir, keep) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const rel = `${d}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (keep(rel)) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

describe('examples: how an example is read', function () {
  it('takes nodetrace out of a shell line: sudo, env, quotes, pipes, redirections, comments', function () {
    const [first, second] = shellCommands("ROUNDS=150 sudo -E bin/nodetrace latency -c 'node app.js' > out.txt 2>&1 | head  # note");
    assert.deepStrictEqual(nodetraceArgs(first.words), ['latency', '-c', 'node app.js']);
    assert.deepStrictEqual(second.words, ['head']);
    assert.strictEqual(second.producer, first);
    const [dtrace, format] = shellCommands('dtrace -s d-scripts/addon-latency.d -p 4242 | nodetrace format --json < x.out');
    assert.strictEqual(nodetraceArgs(dtrace.words), null);
    assert.deepStrictEqual([nodetraceArgs(format.words), format.stdin, format.producer.words[0]], [['format', '--json'], 'x.out', 'dtrace']);
    assert.deepStrictEqual(shellCommands("nodetrace snoop '*' -l warn; sudo sh t.sh").map((c) => c.words), [['nodetrace', 'snoop', '*', '-l', 'warn'], ['sudo', 'sh', 't.sh']]);
  });

  it('compares a shown output line for line, "..." standing for lines left out', function () {
    const out = ['a', 'b', 'c', 'd', ''];
    assert(matchesShown(['a', '...', 'd'], out));
    assert(matchesShown(['a', 'b', '...'], out));
    assert(matchesShown(['...', 'c', 'd'], out));
    assert(!matchesShown(['a', 'b'], out), 'a shown output that stops short says so with ...');
    assert(!matchesShown(['a', '...', 'x'], out));
    assert(!matchesShown(['a', 'c', '...'], out), 'lines left out are marked');
  });

  it('reads anchors as GitHub makes them', function () {
    assert.strictEqual(slug('nodetrace profile --off-cpu: what it costs'), 'nodetrace-profile---off-cpu-what-it-costs');
    assert.strictEqual(slug('Targets, containers, `nodetrace ps` and `nodetrace doctor`'), 'targets-containers-nodetrace-ps-and-nodetrace-doctor');
    assert.deepStrictEqual([...anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n')], ['a', 'b', 'b-1']);
  });
});

describe('examples: every one runs as written, every link resolves', function () {
  // 90 spawns of about 0.5 s of CPU each: 6 minutes at load 18 on 2 CPUs.
  this.timeout(900000);
  const targets = {};

  before(async function () {
    const reason = process.getuid() !== 0 ? 'needs root: a dry run reads the target\'s mapped files (/proc/PID/map_files), and ps and doctor need root'
      : tracingUnavailableReason();
    if (reason) {
      if (process.env.CI) throw new Error(`the examples cannot run in CI: ${reason}`);
      console.log(`      skipped: ${reason}`);
      this.skip();
    }
    // An hour between rounds: the targets stay quiet.
    const env = { INTERVAL: '3600000' };
    [targets.prepared, targets.second, targets.plain, targets.workers, targets.app] = await Promise.all([
      startTarget('bunyan-debug-loop.js', { env, args: ['-r', path.join(ROOT, 'register.js')], scriptArgs: RUN_NAMES }),
      startTarget('bunyan-debug-loop.js', { env, args: ['-r', path.join(ROOT, 'register.js')] }),
      startTarget('loop-stall.js', { env: { LOOP_STALL_MS: '0', LOOP_INTERVAL_MS: '3600000' } }),
      startTarget('threads-mix.js'),
      startTarget('usdt-app.js'),
    ]);
  });

  after(async function () {
    for (const t of Object.values(targets)) stopTarget(t);
    await killStragglers.call(this);
  });

  it('every nodetrace command line of README.md, docs/ and --help exits as its text says; shown fixture output matches', async function () {
    const examples = [...markdownFiles().flatMap(markdownExamples), ...helpExamples()];
    assert(examples.length > 50, `only ${examples.length} examples found`);
    // The same command line, stdin and exit run once.
    const jobs = new Map();
    for (const ex of examples) {
      const argv = argvFor(ex, targets);
      const input = stdinFor(ex);
      const key = JSON.stringify([argv, input === undefined ? null : input.length, ex.exit]);
      if (!jobs.has(key)) jobs.set(key, { argv, input, exit: ex.exit, uses: [] });
      jobs.get(key).uses.push(ex);
    }
    // A run given a name is alone: another nodetrace's command line holding
    // that name would be a second match (its own it leaves out).
    const named = (job) => job.argv.some((a) => RUN_NAMES.includes(a));
    const list = [...jobs.values()].sort((a, b) => named(a) - named(b));
    const run = (job) => nodetrace(job.argv, { input: job.input, timeoutMs: 120000 });
    const results = [
      ...await runAll(list.filter((j) => !named(j)), CONCURRENCY, run),
      ...await runAll(list.filter(named), 1, run),
    ];
    const failures = [];
    list.forEach((job, i) => {
      const r = results[i];
      if (r.code !== job.exit) {
        failures.push(`${job.uses.map((u) => u.where).join('\n  also ')}\n  ran: nodetrace ${job.argv.join(' ')}\n  exit ${r.code} (expected ${job.exit}): ${r.stderr.trim().split('\n').slice(0, 3).join(' | ')}`);
        return;
      }
      for (const ex of job.uses.filter((u) => u.expect)) {
        if (!matchesShown(ex.expect, r.stdout.split('\n'))) {
          failures.push(`${ex.where}\n  the output shown is not what nodetrace ${job.argv.join(' ')} prints now:\n${r.stdout.split('\n').slice(0, 30).join('\n')}`);
        }
      }
    });
    assert.deepStrictEqual(failures, [], `\n${failures.join('\n\n')}`);
  });

  it('every relative link and anchor of README.md, ARCHITECTURE.md and docs/ resolves', function () {
    const broken = [];
    for (const file of markdownFiles()) {
      for (const m of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(m[1])) continue;   // http:, https:, mailto:
        const why = brokenReference(file, m[1]);
        if (why) broken.push(`${file}: ${why}`);
      }
    }
    assert.deepStrictEqual(broken, []);
  });

  it('every docs/NAME.md#anchor that code, programs and docs name exists', function () {
    const sources = [
      ...filesUnder('lib', (f) => f.endsWith('.js')), ...filesUnder('d-scripts', (f) => /\.(d|bt)$/.test(f)),
      ...filesUnder('bench', (f) => /\.(js|bt|d)$/.test(f)), ...markdownFiles(),
    ];
    const broken = [];
    for (const file of sources) {
      for (const m of fs.readFileSync(path.join(ROOT, file), 'latin1').matchAll(/\bdocs\/([a-z0-9-]+\.md)#([a-z0-9-]+)/g)) {
        const why = brokenReference('README.md', `docs/${m[1]}#${m[2]}`);
        if (why) broken.push(`${file}: ${why}`);
      }
    }
    assert.deepStrictEqual(broken, []);
  });

  it('every test/fixtures/ and test/targets/ file the docs name exists', function () {
    const missing = [];
    for (const file of markdownFiles()) {
      // (a name cut short, `…`, as ps shows a long command line, is not one)
      for (const m of read(file)
        .matchAll(/\btest\/(fixtures|targets)\/([A-Za-z0-9_.*-]*[A-Za-z0-9_*])(?![A-Za-z0-9_.*-]*…)/g)) {
        const [dir, name] = [`test/${m[1]}`, m[2]];
        const re = new RegExp(`^${name.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
        if (!fs.readdirSync(path.join(ROOT, dir)).some((f) => re.test(f))) missing.push(`${file}: ${dir}/${name}`);
      }
    }
    assert.deepStrictEqual(missing, []);
  });
});

module.exports = { shellCommands, nodetraceArgs, matchesShown, slug, anchorsOf, markdownFiles, markdownExamples,
  helpExamples };
