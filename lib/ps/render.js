'use strict';
// `nodetrace ps` as text (one line per Node process, then why each command
// that cannot, cannot) and as JSON. Pure: facts and verdicts in, text out.
const { containerText, podText, identityJson } = require('../proc/container');
const { safeText, safeJson } = require('../terminal-safe');

const JSON_VERSION = 1;
const COMMAND_CHARS = 48;

function probes(f) {
  const on = [f.snoop ? 'bunyan' : null, f.http ? 'http' : null].filter(Boolean);
  return on.length ? on.join(',') : '-';
}

function perfMap(f) {
  if (f.perfMap.refused) return 'refused';
  return f.perfMap.path ? 'yes' : '-';
}

// A cluster's primary, "primary (2)" (its workers), or a worker, "worker 1 of 4242" (its id, its primary).
function clusterText(c) {
  if (!c) return '-';
  return c.role === 'primary' ? `primary (${c.workers.length})` : `worker ${c.id} of ${c.primary}`;
}

function shorten(text, n) {
  return text.length > n ? text.slice(0, n - 1) + '…' : text;
}

/**
 * @param {Array<{facts, verdicts}>} rows
 * @param {object} [o.tracerCost] { tracer, ok, detail }: what a trace costs the other processes
 *   (lib/tracer/neighbours.js hostNeighbourNote), or null without a tracer
 * @returns {string}
 */
function renderText(rows, { tracerCost = null } = {}) {
  if (!rows.length) return 'No Node process is running on this host.\n';
  // The POD column where a process is in one (Kubernetes, podman's pods).
  const pods = rows.some(({ facts: f }) => f.who.pod);
  const table = rows.map(({ facts: f, verdicts: v }) => {
    const not = v.filter((x) => x.can !== 'yes').map((x) => (x.can === 'partly' ? `${x.command}~` : x.command));
    return [
      String(f.pid),
      f.who.pidInside === null ? '-' : String(f.who.pidInside),
      f.who.container ? containerText(f.who.container) : f.who.pidInside !== null ? '(own PID namespace)' : '-',
      ...(pods ? [f.who.pod ? podText(f.who.pod).replace(/^pod /, '') : '-'] : []),
      f.version ? `v${f.version}` : '?',
      f.user === null ? '?' : safeText(f.user, { oneLine: true }),
      clusterText(f.cluster),
      probes(f),
      perfMap(f),
      not.length ? not.join(' ') : '-',
      shorten(safeText(f.command, { oneLine: true }), COMMAND_CHARS),
    ];
  });
  const head = ['PID', 'INSIDE', 'CONTAINER', ...(pods ? ['POD'] : []), 'NODE', 'USER', 'CLUSTER', 'PROBES', 'PERF MAP', 'NOT / PARTLY~', 'COMMAND'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  const out = [line(head), ...table.map(line)];
  // Why, said once per reason (with the processes it is said of).
  const reasons = new Map();
  for (const { facts: f, verdicts: v } of rows) {
    for (const x of v) {
      if (x.can === 'yes') continue;
      const key = `${x.command}${x.can === 'partly' ? '~' : ''}: ${x.why}`;
      if (!reasons.has(key)) reasons.set(key, []);
      reasons.get(key).push(f.pid);
    }
  }
  if (reasons.size) {
    out.push('', 'What cannot (or only partly~) work, and why:');
    // A reason may quote a path the process's user chose: on its line.
    for (const [why, pids] of reasons) out.push(`  ${safeText(why, { oneLine: true })} (PID ${pids.slice(0, 8).join(', ')}${pids.length > 8 ? ', ...' : ''})`);
  }
  // What tracing one of them costs the others (lib/tracer/neighbours.js hostNeighbourNote).
  if (tracerCost && !tracerCost.ok && rows.length > 1) out.push('', `Tracing one of these costs the others: ${tracerCost.detail}.`);
  return safeText(out.join('\n') + '\n');
}

/** The same rows and the same tracer cost as JSON (docs/json-format.md, "nodetrace ps --json"). */
function renderJson(rows, { tracerCost = null } = {}) {
  return safeJson({
    version: JSON_VERSION,
    // The text's "Tracing one of these costs the others" line and doctor's
    // `others` check, always given: a fact of this host and its tracer,
    // true however many Node processes run now.
    others_cost: tracerCost
      ? { tracer: tracerCost.tracer, others_pay: !tracerCost.ok, detail: tracerCost.detail } : null,
    processes: rows.map(({ facts: f, verdicts: v }) => ({
      ...identityJson(f.who),
      // { uid, kind: 'kubernetes'|'podman', qos, name } or null (lib/proc/pod.js).
      pod: identityJson(f.who).pod || null,
      user: f.user,
      uid: f.uid,
      node: f.version,
      executable: f.exe,
      command: f.command,
      // { role: 'primary', workers: [{ pid, id }] } or { role: 'worker', id, primary }, or null.
      cluster: f.cluster || null,
      probe_libraries: { bunyan: f.snoop, http: f.http },
      perf_map: f.perfMap,
      commands: Object.fromEntries(v.map((x) => [x.command, { can: x.can, why: x.why }])),
    })),
  }) + '\n';
}

module.exports = { renderText, renderJson, JSON_VERSION };
