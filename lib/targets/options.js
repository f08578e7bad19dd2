'use strict';
// One way to name what is traced, in every command that traces processes:
//   nodetrace CMD TARGET        a PID, PIDs (4242,4343), part of a command
//                               line, or '*' where the command follows many
//   nodetrace CMD -p PID        the same for PIDs (as dtrace and bpftrace read -p)
//   nodetrace CMD -c COMMAND    start a command and trace it (latency, profile)
//   nodetrace CMD --container NAME   the Node process of a container (commands
//                               that trace one process; lib/targets/containers.js)
//   nodetrace CMD --pod NAME|UID     the Node process of a Kubernetes or podman
//                               pod, wherever --container is (lib/targets/pods.js);
//                               the commands that follow many: all of them
// and --force where a process that does not look like Node may be taken.
// What a target means on the host: lib/targets/resolve.js (parsing, PIDs,
// names), lib/targets/one-process.js (commands that trace one process),
// lib/probe-libraries/probe-targets.js (snoop, http: processes with probes).
const proc = require('../proc');

/**
 * Adds the target options to a yargs builder.
 * @param {object} o { many: the command follows several processes ('*' too);
 *   container: it takes --container and --pod too (one-process commands
 *   always do; 'all': every Node process of the container or pod, not its one);
 *   command: it can start one (-c); force: it takes --force; pidHelp: -p's help }
 */
function targetOptions(y, { many = false, container = !many, command = false, force = false, pidHelp } = {}) {
  y.positional('target', {
    type: 'string',
    describe: many ? "'*' (every such process, also those started later), PID[,PID...] or part of a command line"
      : 'A PID, or part of the command line of one Node process',
  });
  y.option('pid', {
    alias: 'p', type: 'string',
    describe: pidHelp || (many ? 'The processes with these PIDs (4242 or 4242,4343): the same as giving them as the target' : 'The process with this PID: the same as giving it as the target'),
  });
  if (container) {
    y.option('container', {
      type: 'string',
      describe: `The Node ${container === 'all' ? 'processes' : 'process'} of this container: its name, or the start of its ID (as podman ps, docker ps show them)`,
    });
    y.option('pod', {
      type: 'string',
      describe: `The Node ${container === 'all' ? 'processes' : 'process'} of this Kubernetes or podman pod: its name, or its UID (8 characters of it or more), found from /proc (nodetrace ps shows them)`,
    });
  }
  if (command) y.option('command', { alias: 'c', type: 'string', describe: 'Start this command (no shell: split at blanks, no quotes) and trace it while it runs' });
  if (force) y.option('force', { type: 'boolean', default: false, describe: 'Take the process even if it does not look like Node' });
  return y;
}

/** For .check(): one target, given one way. */
function checkTarget(a, { many = false, command = false, extra: asked = [] } = {}) {
  // --pod comes with --container wherever a command takes it.
  const extra = asked.includes('container') ? [...asked, 'pod'] : asked;
  const ways = many ? `'*', a PID (-p PID)${extra.includes('container') ? ', --container NAME, --pod NAME' : ''} or part of a command line`
    : `a PID (-p PID), ${command ? 'part of a command line, --container NAME, --pod NAME or -c COMMAND' : 'part of its command line, --container NAME or --pod NAME'}`;
  // yargs hands a lone "-" over as an empty target: standard output, where
  // an output flag's file was meant. As a name it would match every line.
  if (a.target !== undefined && !String(a.target).trim()) {
    throw new Error(`A lone "-" or an empty word names no process ("-" is standard output after an output flag: --folded -). Give ${ways}.`);
  }
  const given = ['pid', 'target', ...(many ? [] : ['container', 'pod']), ...(command ? ['command'] : []), ...extra].filter((k) => a[k] !== undefined);
  if (!given.length) throw new Error(`Give a process: ${ways}.`);
  if (given.length > 1) throw new Error(`Give one target: ${ways}, not ${given.map(flagOf).join(' and ')}.`);
  if (a.pid !== undefined) {
    if (!many && String(a.pid).includes(',')) throw new Error('-p takes one PID here: this command traces one process.');
    for (const part of String(a.pid).split(',')) proc.parsePid(part);
  }
  if (command && a.command !== undefined && !String(a.command).trim()) throw new Error('-c expects a command, e.g. -c \'node app.js\'.');
  if (a.container !== undefined && !String(a.container).trim()) throw new Error('--container expects a container\'s name or the start of its ID.');
  if (a.pod !== undefined && !String(a.pod).trim()) throw new Error('--pod expects a pod\'s name or its UID (8 characters of it or more).');
}

function flagOf(key) {
  return { pid: '-p', target: 'a target', command: '-c' }[key] || `--${key}`;
}

/** The target as text, however it was given (-c aside); -p's checked to be PIDs. */
function targetText(args) {
  if (args.pid === undefined) return args.target;
  return String(args.pid).split(',').map((part) => proc.parsePid(part)).join(',');
}

module.exports = { targetOptions, checkTarget, targetText };
