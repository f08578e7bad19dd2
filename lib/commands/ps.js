'use strict';
// nodetrace ps: every Node process on this host, one line each, as the
// operator knows it (host PID, PID inside its container, the container),
// with its Node version and user, the probe libraries it maps, whether it
// writes a perf map, and what each command can and cannot do for it.
const { listed } = require('./list');
const { requireRoot } = require('../privilege');
const { findOnPath, chooseTracer } = require('../tracer/detect');
const { hostNeighbourNote } = require('../tracer/neighbours');
const { gather, nodeProcesses, userNames } = require('../ps/facts');
const { verdicts } = require('../ps/verdicts');
const { renderText, renderJson } = require('../ps/render');
const { clusterRoles, clusterFacts } = require('../proc/cluster');
const { podProcesses } = require('../targets/pods');
const { hostFacts } = require('../targets/resolve');
const { jsonOption } = require('./common-options');

function handler(args) {
  // Other users' memory maps and mapped files are root's to read.
  requireRoot('nodetrace ps');
  const cache = new Map();
  const users = userNames();
  const gcore = Boolean(findOnPath('gcore'));
  const rows = [];
  // --pod: that pod's Node processes only (lib/targets/pods.js).
  const inPod = args.pod === undefined ? null : new Set(podProcesses(args.pod, hostFacts(), { command: 'ps' }).pids);
  const pids = nodeProcesses().filter((pid) => !inPod || inPod.has(pid));
  // Cluster primaries and their workers (lib/proc/cluster.js).
  const cluster = clusterRoles(pids.map(clusterFacts).filter(Boolean));
  for (const pid of pids) {
    const facts = gather(pid, { cache, users, gcore });
    if (facts) rows.push({ facts: { ...facts, cluster: cluster.get(pid) || null }, verdicts: verdicts(facts) });
  }
  const { tracer } = chooseTracer(undefined);
  const tracerCost = tracer ? { tracer: `${tracer.name} ${tracer.version}`, ...hostNeighbourNote(tracer) } : null;
  process.stdout.write(args.json ? renderJson(rows, { tracerCost }) : renderText(rows, { tracerCost }));
}

module.exports = {
  ...listed('ps'),
  builder: (y) => y
    .usage('$0 ps [--pod NAME] [--json]\n\n'
      + 'Every Node process on this host, one line each: its PID here and inside its container\n'
      + '(and the container, by name and ID, and its pod where it is in one), its Node version and user, whether it is a cluster\n'
      + 'primary (with how many workers) or a worker (its id, and its primary\'s PID), the probe libraries it\n'
      + 'maps (bunyan for snoop, http), whether it writes a perf map (JavaScript names for\n'
      + 'profile, loop, ebadf), and the commands that cannot (or only partly~) work for it, with why.')
    .option('json', jsonOption())
    .option('pod', { type: 'string', describe: 'Only the Node processes of this Kubernetes or podman pod: its name, or its UID (8 characters of it or more)' })
    .check((a) => {
      if (a.pod !== undefined && !String(a.pod).trim()) throw new Error('--pod expects a pod\'s name or its UID (8 characters of it or more).');
      return true;
    })
    .example('sudo $0 ps', '')
    .example('sudo $0 ps --pod web-7d4b9 --json', 'the Node processes of pod web-7d4b9 (by name or UID), as JSON')
    .example('sudo $0 ps --json', 'the same, with every verdict and its reason'),
  handler,
};
