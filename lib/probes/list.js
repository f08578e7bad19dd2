'use strict';
// `nodetrace probes` without probes: what each process has, as text or
// JSON. Pure over lib/probes/inventory.js's findings. Every name and path
// is another user's: made safe (lib/terminal-safe.js) on its way out.
const { safeText, safeJson } = require('../terminal-safe');
const { describeIdentity, identityJson } = require('../proc/container');

const JSON_VERSION = 1;
const ENABLED_TEXT = { true: 'enabled', false: 'off', null: '-' };

// The probes of one process by object and provider: API providers first.
// -> [{ provider, module, api, file, probes }]
function groups(objects) {
  const out = [];
  for (const o of objects) {
    if (o.refused) continue;
    const by = new Map();
    for (const p of o.probes) {
      const key = `${p.provider}\0${p.module}`;
      if (!by.has(key)) by.set(key, { provider: p.provider, module: p.module, api: o.api, file: o.path, probes: [] });
      by.get(key).probes.push(p);
    }
    out.push(...by.values());
  }
  return out;
}

function one(text) {
  return safeText(text, { oneLine: true });
}

function padded(rows) {
  const widths = [];
  for (const r of rows) r.forEach((c, i) => { widths[i] = Math.max(widths[i] || 0, c.length); });
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd());
}

/**
 * @param {Array<{ who, command, objects }>} processes who: identity
 *   (lib/proc/identity.js identify), command: its command line
 */
function renderText(processes) {
  const lines = [];
  for (const p of processes) {
    if (lines.length) lines.push('');
    lines.push(`${describeIdentity(p.who)}: ${one(p.command)}`);
    const gs = groups(p.objects);
    if (!gs.length) lines.push('  no USDT probes');
    for (const g of gs) {
      const what = g.api ? `dtrace-provider API${g.module !== null ? `, module ${one(g.module)}` : ''}` : 'stapsdt notes';
      lines.push(`  ${one(g.provider)} (${what})  ${one(g.file)}`);
      const rows = g.probes.map((probe) => [one(probe.name), probe.types.length ? probe.types.join(', ') : '(none)',
        ENABLED_TEXT[String(probe.enabled)] + (probe.sites > 1 ? `  ${probe.sites} sites` : '')]);
      for (const row of padded(rows)) lines.push(`    ${row}`);
    }
    for (const o of p.objects) if (o.refused) lines.push(`  not read: ${one(o.path)}: ${one(o.refused)}`);
  }
  if (processes.some((p) => groups(p.objects).length)) {
    lines.push('', 'enabled: a tracer has the probe on in that process now; off: none has; -: no semaphore (its site runs traced or not)');
  }
  return lines.join('\n') + '\n';
}

function renderJson(processes) {
  return safeJson({
    version: JSON_VERSION,
    processes: processes.map((p) => ({
      ...identityJson(p.who),
      command: p.command,
      providers: groups(p.objects).map((g) => ({
        provider: g.provider,
        module: g.module,
        api: g.api,
        file: g.file,
        probes: g.probes.map((probe) => ({
          name: probe.name, arguments: probe.types, format: probe.format, sites: probe.sites, enabled: probe.enabled,
        })),
      })),
      not_read: p.objects.filter((o) => o.refused).map((o) => ({ file: o.path, why: o.refused })),
    })),
  }) + '\n';
}

module.exports = { renderText, renderJson, groups, JSON_VERSION };
