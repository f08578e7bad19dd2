'use strict';
// nodetrace doctor: which tracer, which version, and what this host lacks;
// with -p PID, what that one process is and what will work on it.
const { listed } = require('./list');
const { checks } = require('../host-checks');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const processChecks = require('../process-checks');
const { targetOptions, checkTarget } = require('../targets/options');
const { resolveOneTarget, hostFacts } = require('../targets/one-process');
const { hostPidNote } = require('../targets/containers');
const { safeText, safeJson } = require('../terminal-safe');
const { jsonOption } = require('./common-options');

function processHandler(args) {
  const host = hostFacts();
  const { pid } = resolveOneTarget(args, host, { command: 'doctor', force: true });
  proc.requireProcess(pid);
  // -p 1 and the like: checked as it is, and the Node processes that have
  // that PID inside their containers said.
  const inside = args.container === undefined && args.pod === undefined ? hostPidNote(pid, host, { command: 'doctor' }) : null;
  if (inside) process.stderr.write(safeText(`nodetrace: ${inside}`) + '\n');
  // Another user's memory map and map_files are root's to read.
  requireRoot('nodetrace doctor');
  const report = processChecks.describe(processChecks.gather(pid));
  process.stdout.write(args.json ? processChecks.renderJson(report) : processChecks.render(report));
  if (report.probes.some((p) => !p.found)) process.exitCode = 1;
}

// A process named one way or another: -p, a target, --container, --pod.
const namesProcess = (a) => [a.pid, a.target, a.container, a.pod].some((v) => v !== undefined);

function handler(args) {
  if (namesProcess(args)) return processHandler(args);
  const results = checks();
  if (args.json) {
    process.stdout.write(safeJson(results) + '\n');
  } else {
    for (const c of results) {
      const mark = c.ok ? 'ok  ' : c.optional ? 'warn' : 'FAIL';
      process.stdout.write(safeText(`${mark}  ${c.name.padEnd(9)} ${c.detail}`, { oneLine: true }) + '\n');
    }
  }
  const essential = results.filter((c) => !c.optional && ['root', 'privilege', 'hostPID', 'tracer', 'tracefs', 'uprobes'].includes(c.name));
  if (essential.some((c) => !c.ok)) process.exitCode = 1;
}

module.exports = {
  ...listed('doctor'),
  builder: (y) => targetOptions(y, { pidHelp: 'Check this Node process: its build, where each probe point is, what will not work' })
    .option('json', jsonOption())
    .check((a) => {
      if (namesProcess(a)) checkTarget(a);
      return true;
    })
    .example('sudo $0 doctor', '')
    .example('sudo $0 doctor -p 4242', 'which Node build 4242 runs and where nodetrace finds its probe points')
    .example('sudo $0 doctor --pod web-7d4b9', 'the same for the Node process of pod web-7d4b9 (by name or UID)'),
  handler,
};
