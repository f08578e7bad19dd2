'use strict';
// What DTrace says on stderr when it loses data, counted: its drops (an
// output buffer full: "dtrace: 12 drops on CPU 0"; an aggregation's, a
// dynamic variable store's) and the errors of a probe's clause ("dtrace:
// error in dt_clause_3 for probe ID 3623 (...): invalid address", the rest
// of that clause not run). nodetrace keeps a tracer's stderr for an
// abnormal end; a clean run says these in one line, so a trace that lost
// events does not read as whole. Formats: DTrace for Linux 2.0.1's
// libdtrace/dt_handle.c and cmd/dtrace.c. Pure.
const { grouped } = require('../render/text');

const DROPS = /^dtrace: (\d{1,20}) (aggregation |dynamic variable |speculative )?drops?\b/;
const PROBE_ERROR = /^dtrace: error in \S+ for probe ID \d+/;

/** stderr lines -> { drops, aggregationDrops, variableDrops, probeErrors } (numbers) */
function dtraceLosses(lines = []) {
  const out = { drops: 0, aggregationDrops: 0, variableDrops: 0, probeErrors: 0 };
  for (const line of lines) {
    const d = DROPS.exec(String(line));
    if (d) {
      const key = d[2] === 'aggregation ' ? 'aggregationDrops' : d[2] === 'dynamic variable ' ? 'variableDrops' : 'drops';
      out[key] += Number(d[1]);
    } else if (PROBE_ERROR.test(String(line))) {
      out.probeErrors++;
    }
  }
  return out;
}

/** -> one sentence (without "nodetrace: "), or null when nothing was lost. */
function dtraceLossLine(losses, { events = 'events' } = {}) {
  const parts = [];
  if (losses.drops) parts.push(`${grouped(losses.drops)} ${events} dropped (its output buffers were full)`);
  if (losses.aggregationDrops) parts.push(`${grouped(losses.aggregationDrops)} aggregation updates dropped`);
  if (losses.variableDrops) parts.push(`${grouped(losses.variableDrops)} variable updates dropped (its dynamic variable space was full)`);
  if (losses.probeErrors) parts.push(`${grouped(losses.probeErrors)} probe firings cut short by an error (a page it could not read)`);
  return parts.length ? `DTrace lost data: ${parts.join('; ')}. What is shown may miss them.` : null;
}

module.exports = { dtraceLosses, dtraceLossLine };
