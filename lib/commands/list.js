'use strict';
// Every command's name, yargs command line and one-line description, in the
// order --help lists them: all that `nodetrace --help` and the choice of a
// command need. lib/cli.js loads a command's module (and the tracer, V8 and
// report modules it pulls in) only when that command runs: loading all 14
// took 120 ms of a 400 ms `doctor` on a quiet machine (node 20, 2026-11-29)
// and 2.3 s at load 36. No requires here, so that this file stays that cheap.
// README's opening list and ARCHITECTURE.md's table name each command
// (test/cli.test.js checks).
const LIST = Object.freeze([
  ['latency', 'latency [target]', 'Latency histograms of add-on / thread-pool async operations, by the native function that started them'],
  ['snoop', 'snoop [target]', 'Show bunyan log records of live processes, including the debug records their level drops'],
  ['ebadf', 'ebadf [target]', 'Stop a process when a system call fails with EBADF, save a core, resume it (or --abort)'],
  ['loop', 'loop [target]', 'Is the event loop blocked? Busy time per turn, the longest stalls and (--stacks) what ran during them'],
  ['http', 'http [target]', 'One line per HTTP request (server and client, fetch too) with status and latency, or histograms per route'],
  ['gc', 'gc [target]',
    'How long V8\'s garbage collector pauses a process, by kind (scavenge, mark-compact, incremental, weak callbacks)'],
  ['async', 'async [target]', 'Every asynchronous operation by kind: created/s, wait for the callback, callback time, what keeps growing'],
  ['profile', 'profile [target]', 'Where a live Node process spends its CPU: top functions, categories, threads; flame graph, folded, pprof'],
  ['probes', 'probes [target] [probes..]',
    'The USDT probes of live processes (an application\'s own dtrace-provider probes first): list them, or trace them'],
  ['ps', 'ps', 'Every Node process on this host: host PID, PID in its container, container, Node version, user, cluster role, '
    + 'probes, perf map, what works'],
  ['stack', 'stack <core>', 'Print each thread\'s JavaScript and native stack from a saved core'],
  ['format', 'format', 'Render raw dtrace/bpftrace aggregation output from stdin'],
  ['merge', 'merge <files..>', 'Merge the JSON reports of one command from many hosts, pods or runs'],
  ['doctor', 'doctor [target]', 'Check this host: tracer and version, root, privileges, PID namespace, tracefs, uprobes, BTF, gcore, '
    + 'USDT provider; -p: one process'],
].map(([name, command, describe]) => Object.freeze({ name, command, describe })));

/** { command, describe } of one command, for its module's exports. */
function listed(name) {
  const entry = LIST.find((c) => c.name === name);
  if (!entry) throw new Error(`no command ${name} in lib/commands/list.js`);
  return { command: entry.command, describe: entry.describe };
}

module.exports = { LIST, listed };
