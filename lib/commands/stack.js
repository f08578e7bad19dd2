'use strict';
// nodetrace stack CORE: every thread's JavaScript and native stack from a
// saved core (ebadf's, gcore's, the kernel's), JavaScript frames named from
// V8's own metadata (lib/v8/core.js), as MDB's ::jsstack did. Reads the
// core and the node binary (or libnode) it ran, nothing of any process.
const { listed } = require('./list');
const { UsageError } = require('../errors');
const { openCoreForWalk } = require('../v8/core');
const { renderStacksText, renderStacksJson } = require('../stack/render');
const { sourceMapsOption, jsonOption } = require('./common-options');
const { SourceMaps } = require('../source-maps');

function builder(y) {
  return y
    .usage('$0 stack <core> [options]\n\n'
      + 'Print each thread\'s stack from a core of a Node process, JavaScript frames named\n'
      + '(function, file:line:column) from V8\'s own metadata: no flag was needed on the process.\n'
      + 'The node binary (or libnode) it ran must be on this host at its path, or under --root.')
    .positional('core', { type: 'string', describe: 'The core file (nodetrace ebadf saves one at each hit)' })
    .option('root', { type: 'string', describe: 'Where the files of a process that ran in a container are (ebadf saves them beside the core: CORE.root)' })
    .option('thread', { type: 'number', describe: 'Only this thread (its ID, as ebadf\'s hit gives it)' })
    .option('json', jsonOption('Print JSON: per thread its frames, with name, file, line and column of JavaScript ones'))
    .option('source-maps', sourceMapsOption())
    .example('$0 stack core.node.4242.20261127T140659Z', 'every thread of the core')
    .example('$0 stack core.node.4242.X --root core.node.4242.X.root', 'a core of a process that ran in a container')
    .epilogue('Exit status: 0 when the core was read; 1 when it is not a Node process\'s core, is truncated\n'
      + 'or does not match the binary; 2 for bad options. Docs: docs/v8-frames.md.');
}

function threadsOf(c, only) {
  if (only === undefined) return c.threads;
  const t = c.threads.filter((x) => x.tid === only);
  if (!t.length) throw new UsageError(`the core holds no thread ${only}: its threads are ${c.threads.map((x) => x.tid).join(', ')}.`);
  return t;
}

async function handler(args) {
  if (!args.core) throw new UsageError('Name a core file: nodetrace stack CORE.');
  if (args.thread !== undefined && !(Number.isInteger(args.thread) && args.thread > 0)) throw new UsageError('--thread expects a thread ID.');
  // Maps read where the process's files are: under --root, or on this host.
  const sourceMaps = args.sourceMaps === false ? null : new SourceMaps({ root: args.root || '/' });
  const c = openCoreForWalk(args.core, { root: args.root || null, sourceMaps });
  try {
    const threads = threadsOf(c, args.thread).map((t) => ({ tid: t.tid, ...c.walk(t.registers) }));
    const model = {
      file: args.core, pid: c.pid, command: c.command, object: c.object,
      v8: c.layout && c.layout.versionText !== 'unknown' ? c.layout.versionText : null, notes: c.notes, threads,
    };
    // JSON escapes what it holds; text holds names the target chose.
    process.stdout.write(args.json ? renderStacksJson(model) : renderStacksText(model));
  } finally {
    c.close();
    if (sourceMaps) sourceMaps.close();
  }
}

module.exports = { ...listed('stack'), builder, handler };
