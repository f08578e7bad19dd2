'use strict';
// nodetrace snoop: bunyan log records of live Node processes, including the
// debug records their log level drops, from bunyan's USDT probes, formatted
// by bunyan itself: the article's `bunyan -p`, on DTrace or bpftrace.
const { listed } = require('./list');
const { UserError } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer, INSTALL_HINT } = require('../tracer/detect');
const { seesUsdt } = require('../tracer/capabilities');
const { renderPlan } = require('../tracer/plan');
const { describeTracerFailure } = require('../tracer/failure');
const { resolveTargets, parseTarget, hostFacts } = require('../snoop/targets');
const { planSnoop } = require('../snoop/plan');
const { parseLevel } = require('../snoop/levels');
const { summary } = require('../snoop/format');
const { OUTPUT_MODES } = require('../snoop/sink');
const { Snooper } = require('../snoop/snooper');
const { targetOptions, checkTarget, targetText } = require('../targets/options');
const { durationOption, checkDuration, dryRunOption, jsonOption, backendOption } = require('./common-options');
const { safeText } = require('../terminal-safe');
const { describeIdentity, containerText } = require('../proc/container');
const { containerNodeProcesses, podPidsTarget, hostFacts: oneProcessHost } = require('../targets/one-process');
const { lossLines } = require('../render/loss');

// What a batch's fair share is, for the loss messages (d-scripts/log-snoop.bt).
const SHARE = 'when several processes are traced, one gets at most 2,048 entries of a batch, and its last 1,024 places go to those with fewer than 512; an entry is a record, or 199 bytes of one on bpftrace 0.17';
const LOST_WHY = 'the tracer could not keep up, or discarded them unread as the snoop ended';

function builder(y) {
  return targetOptions(y, { many: true, container: 'all' })
    .usage('$0 snoop (<target> | -p PID) [options]\n\n'
      + 'Show the bunyan log records of live Node processes as they are logged, including the\n'
      + 'debug and trace records their log level drops, from bunyan\'s USDT probes: no restart,\n'
      + 'no change to their logs. <target> is \'*\' (every process with bunyan probes, including\n'
      + 'ones started later), PIDs (4242 or 4242,4343), or text found in their command lines;\n'
      + '--container NAME: the Node processes of that container now; --pod NAME|UID: of that pod.\n'
      + 'On Linux, processes need nodetrace\'s USDT provider: node -r nodetrace/register app.js')
    .option('level', { alias: 'l', type: 'string', describe: 'Only this level and above (trace, debug, info, warn, error, fatal or 10-60); only those probes are enabled' })
    .option('mode', { alias: 'm', type: 'string', describe: 'bunyan\'s output mode: long (default), short, simple, json, json-N, bunyan, inspect' })
    .option('json', jsonOption('Raw JSON lines, one record per line (records too long for the tracer become a {"nodetrace":"truncated",...} line)'))
    .option('color', { type: 'boolean', describe: 'Colour (default: when stdout is a terminal); --no-color to turn it off' })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C)'))
    .option('backend', backendOption('Tracer to use (default: bpftrace on Linux; elsewhere dtrace)'))
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a, { many: true, extra: ['container'] });
      checkDuration(a);
      if (a.mode !== undefined && !OUTPUT_MODES.test(a.mode)) {
        throw new Error(`-m expects one of bunyan's output modes: long, short, simple, json, json-N, bunyan, inspect (not "${a.mode}").`);
      }
      if (a.json && a.mode !== undefined) throw new Error('--json prints raw JSON lines; it does not go with -m.');
      return true;
    })
    .example('sudo $0 snoop \'*\'', 'every Node process with bunyan probes, including ones started later')
    .example('sudo $0 snoop 4242', 'one process; several: 4242,4343')
    .example('sudo $0 snoop my-service', 'processes whose command line contains "my-service"')
    .example('sudo $0 snoop --container web', 'the Node processes of container web (by name or ID start)')
    .example('sudo $0 snoop --pod web-7d4b9', 'the Node processes of pod web-7d4b9 (by name or UID)')
    .example('sudo $0 snoop \'*\' -l warn', 'only warn and above (only those probes are enabled)')
    .example('sudo $0 snoop \'*\' -m short', 'bunyan\'s short output; --json for raw JSON lines')
    .example('$0 snoop 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

// On Linux, bunyan's probes are stapsdt USDT probes (lib/usdt), which
// bpftrace sees and DTrace for Linux does not: prefer bpftrace there.
function chooseTracer(backend) {
  if (backend || process.platform !== 'linux') {
    const tracer = requireTracer(backend);
    if (!seesUsdt(tracer)) {
      throw new UserError(`${tracer.describe || tracer.name} ${tracer.version} cannot see bunyan's probes: they are USDT probes `
        + 'in the stapsdt format, which it does not read, so it would show nothing.', { hint: 'Use --backend bpftrace.' });
    }
    return tracer;
  }
  try {
    return requireTracer('bpftrace');
  } catch {
    throw new UserError('snoop needs bpftrace on Linux: bunyan\'s probes there are USDT probes in the '
      + 'stapsdt format, which DTrace for Linux does not see.', { hint: INSTALL_HINT });
  }
}

// --container NAME: its Node processes now, as PIDs (one started in it
// later is not followed, as with PIDs).
// --pod NAME: the same for a pod's.
function podTarget(name) {
  const { pid, note } = podPidsTarget(name, { command: 'snoop', verbing: 'snooping' });
  process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
  return pid;
}

function containerTarget(name) {
  const { container, pids } = containerNodeProcesses(name, oneProcessHost(), { command: 'snoop' });
  process.stderr.write(safeText(`nodetrace: snooping the Node process${pids.length === 1 ? '' : 'es'} of ${containerText(container)}: PID ${pids.join(', ')}`) + '\n');
  return pids.join(',');
}

async function handler(args) {
  const tracer = chooseTracer(args.backend);
  const minLevel = parseLevel(args.level);
  if (args.container === undefined && args.pod === undefined) parseTarget(targetText(args));   // syntax errors first
  // Root before looking: other users' /proc/PID/maps and probe-library
  // directories are unreadable without it, which would read as "no probes".
  if (!args.dryRun) requireRoot('nodetrace snoop');
  const target = args.pod !== undefined ? podTarget(args.pod)
    : args.container === undefined ? targetText(args) : containerTarget(args.container);
  const targets = resolveTargets(target, tracer.name, hostFacts(), { create: !args.dryRun });
  if (args.dryRun) {
    process.stdout.write(renderPlan(planSnoop(tracer, targets, minLevel)));
    return;
  }
  for (const note of targets.notes) process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
  const snooper = new Snooper({
    tracer, targets, minLevel, outputMode: args.json ? 'raw' : (args.mode || 'long'),
    color: args.color, durationSeconds: args.duration,
  });
  const first = await snooper.run();

  if (!first.ready && !first.endRequested) {
    if (snooper.refused) throw new UserError(snooper.refused);
    const onePid = targets.kind === 'pids' && targets.pids.length === 1 ? targets.pids[0] : undefined;
    throw describeTracerFailure(tracer, first, onePid && !proc.isRunning(onePid) ? onePid : undefined);
  }
  if (snooper.outputClosed) return;
  const t = snooper.totals();
  if (snooper.exitedNote) process.stderr.write(`nodetrace: ${snooper.exitedNote}\n`);
  // Per process, when the loss is more than one process's news.
  const counts = snooper.lossCounts();
  if (t.over || t.full || counts.size > 1) {
    const lines = lossLines(counts, {
      describe: (pid) => describeIdentity(snooper.identityOf(pid)), noun: 'record', nouns: 'records', share: SHARE, lostWhy: LOST_WHY,
    });
    for (const line of lines) process.stderr.write(safeText(`nodetrace: ${line}`) + '\n');
  }
  process.stderr.write(summary(t, { lostRecords: t.lostRecords, lostEvents: t.lostEvents, fullBatches: t.fullBatches, over: t.over, full: t.full }) + '\n');
  const broken = snooper.abnormalEnd();
  if (broken) throw new UserError(`${broken}; the snoop is incomplete.`);
}

module.exports = {
  ...listed('snoop'),
  builder,
  handler,
};
