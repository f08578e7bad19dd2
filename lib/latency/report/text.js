'use strict';
// The latency report as text: one DTrace-style histogram per kind of
// operation (lib/render/histogram.js), in human time units, with its
// percentiles; for nodetrace's latency programs the split of that latency
// into queue wait / run / loop wait; the maps that are not kinds, as
// tables; the samples set apart; the thread pool's lines. Pure: a summary
// (./summary.js) in, a string a terminal shows safely out.

const { displayKey, estimatedTotal, isDistribution, totalCount } = require('../../aggregation/model');
const { discardedSentences } = require('../../aggregation/impossible');
const { renderHistogram, percentileText, longest } = require('../../render/histogram');
const { formatDuration, formatPercent, toNanoseconds } = require('../../render/units');
const { safeText } = require('../../terminal-safe');
const { PHASES, buildKinds, sortKinds, subjectLabel } = require('./kinds');
const { limitUnresolved, limitUnresolvedRows } = require('./unresolved');
const { poolLines } = require('./pool');

function append(into, items) {
  for (const item of items) into.push(item);
  return into;
}

const DEFAULTS = { breakdownHistograms: false, maxUnresolved: 3, width: 40, ascii: false };

const PHASE_LABELS = { queue_wait: 'queue wait', run: 'run', loop_wait: 'loop wait' };
const LEGEND =
  'queue wait = waiting for a thread-pool thread; run = running on a pool thread; ' +
  'loop wait = waiting for the event loop to run the completion callback';

// ---- keys ------------------------------------------------------------------

// A stack key (one frame a line) reads innermost first on one line.
function showField(field, options) {
  if (field.includes('\n')) return field.split('\n').join(options.ascii ? ' <- ' : ' \u2190 ');
  const parts = displayKey(field);
  return parts.func + (parts.offset || '');
}

function showKey(key, options) {
  return key.map((field) => showField(field, options)).join(', ');
}

function kindHeading(kind, options) {
  if (kind.label) return kind.label;
  if (kind.key.length === 0) return kind.aggregation ? `@${kind.aggregation}` : '(all)';
  const modules = [...new Set(kind.key.map((field) => (field.includes('\n') ? null : displayKey(field).module)).filter(Boolean))];
  const name = showKey(kind.key, options) + (kind.subject ? ` ${subjectLabel(kind.subject)}` : '');
  return modules.length > 0 ? `${name}  [${modules.join(', ')}]` : name;
}

// Each percentile as the bucket of the tracer's histogram that holds it
// (lib/render/histogram.js percentileText): what the tracer measured.
function percentiles(entry, unit, options, limit = null) {
  return [50, 90, 99].map((p) => `p${p} ${percentileText(entry, p, unit, { ...options, limit })}`);
}

function summaryLine(kind, options) {
  const parts = [`count ${kind.count}`, ...percentiles(kind.entry, kind.unit, options, kind.limit)];
  if (kind.max) parts.push(`max ${formatDuration(kind.max.value, kind.max.unit, options)}`);
  return '  ' + parts.join(', ');
}

// Impossible samples of this kind (total or a phase), said under its summary.
function discardedLines(kind) {
  const parts = [['', kind.entry]];
  for (const phase of PHASES) {
    if (kind.breakdown && kind.breakdown[phase]) parts.push([`${PHASE_LABELS[phase]}: `, kind.breakdown[phase].entry]);
  }
  const lines = [];
  for (const [label, entry] of parts) {
    if (!entry.discarded) continue;
    for (const sentence of discardedSentences({ ...entry.discarded, maxima: 0 })) lines.push(`  ${label}${sentence}`);
  }
  return lines;
}

// ---- latency breakdown -----------------------------------------------------

function phaseNs(phase) {
  return toNanoseconds(estimatedTotal(phase.entry), phase.unit || 'ns');
}

// Each phase's share of the time.  The three phases partition every traced
// operation, so with all three present they are compared with their own sum:
// bucket-midpoint estimates err alike for all three and the shares add up to
// 100%.  Otherwise the phase is compared with the total's estimate.
function phaseShare(phase, kind) {
  const present = PHASES.map((p) => kind.breakdown[p]).filter(Boolean);
  const whole = present.length === PHASES.length ? present.reduce((sum, p) => sum + phaseNs(p), 0) : kind.timeNs;
  return whole > 0 ? phaseNs(phase) / whole : null;
}

function renderBreakdownSummary(kind, options) {
  const rows = PHASES.filter((phase) => kind.breakdown[phase]).map((phase) => {
    const { entry, unit, limit } = kind.breakdown[phase];
    return [PHASE_LABELS[phase], ...percentiles(entry, unit, options, limit), `${formatPercent(phaseShare(kind.breakdown[phase], kind))} of time`];
  });
  const widths = rows[0].map((_, column) => longest(rows.map((row) => row[column])));
  return rows.map((row) => '    ' + row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd());
}

function renderBreakdownHistograms(kind, options) {
  const lines = [];
  for (const phase of PHASES.filter((p) => kind.breakdown[p])) {
    const { entry, unit, limit } = kind.breakdown[phase];
    const share = formatPercent(phaseShare(kind.breakdown[phase], kind));
    lines.push(`  ${PHASE_LABELS[phase]} (${share} of time):`);
    append(lines, renderHistogram(entry, unit, options, '    '));
    lines.push(`    count ${totalCount(entry)}, ${percentiles(entry, unit, options, limit).join(', ')}`);
  }
  return lines;
}

function renderKind(kind, options) {
  const lines = [kindHeading(kind, options), ...renderHistogram(kind.entry, kind.unit, options),
    summaryLine(kind, options)];
  if (kind.entry.note) lines.push(`  note: ${kind.entry.note}`);
  append(lines, discardedLines(kind));
  if (kind.breakdown) {
    append(lines, options.breakdownHistograms ? renderBreakdownHistograms(kind, options)
      : renderBreakdownSummary(kind, options));
  }
  return lines.join('\n');
}

function renderKinds(kinds, options, withMapHeadings) {
  const blocks = [];
  const groups = new Map();
  for (const kind of kinds) {
    if (!groups.has(kind.order)) groups.set(kind.order, []);
    groups.get(kind.order).push(kind);
  }
  for (const group of groups.values()) {
    const name = group[0].aggregation;
    const showHeading = withMapHeadings && name && group.some((kind) => kind.key.length > 0);
    const rendered = limitUnresolved(group, options.maxUnresolved).map((kind) => renderKind(kind, options));
    if (showHeading) rendered[0] = `@${name}\n\n${rendered[0]}`;
    append(blocks, rendered);
  }
  return blocks;
}

// ---- scalars and stats -----------------------------------------------------

function scalarText(value, unit, options) {
  return unit ? `${value} (${formatDuration(value, unit, options)})` : String(value);
}

function statsText(stats, unit, options) {
  const show = (v) => (unit ? formatDuration(v, unit, options) : String(v));
  return `count ${stats.count}, average ${show(stats.average)}, total ${show(stats.total)}`;
}

function sortRows(entries, sort) {
  const magnitude = (e) => (e.kind === 'stats' ? (sort === 'count' ? e.stats.count : e.stats.total) : e.value);
  const sorted = entries.slice();
  if (sort === 'name') sorted.sort((a, b) => a.key.join(', ').localeCompare(b.key.join(', ')));
  else sorted.sort((a, b) => (magnitude(a) === magnitude(b) ? 0 : magnitude(a) > magnitude(b) ? -1 : 1));
  return sorted;
}

function renderTable(aggregation, unit, options) {
  const entries = limitUnresolvedRows(sortRows(aggregation.entries, options.sort), options.maxUnresolved);
  const title = aggregation.name === null ? null : `@${aggregation.name}`;
  const rows = entries.map((entry) => [
    entry.label || (entry.key.length > 0 ? showKey(entry.key, options) : title || '(all)'),
    entry.kind === 'stats' ? statsText(entry.stats, unit, options) : scalarText(entry.value, unit, options),
  ]);
  const keyWidth = longest(rows.map((row) => row[0]));
  const lines = rows.map(([key, value]) => `  ${key.padEnd(keyWidth)}  ${value}`);
  const keyed = aggregation.entries.some((entry) => entry.key.length > 0);
  return (keyed && title ? [title, ...lines] : lines).join('\n');
}

function renderOther(aggregation, options) {
  const distributions = aggregation.entries.filter(isDistribution);
  const blocks = [];
  if (distributions.length > 0) {
    const view = buildKinds({ aggregations: [{ ...aggregation, entries: distributions }] },
      { unit: options.defaultUnit });
    append(blocks, renderKinds(sortKinds(view.kinds, options.sort), options, true));
  }
  const rows = aggregation.entries.filter((entry) => !isDistribution(entry));
  // Only a name says what a scalar measures (a count() has no unit), so the
  // default unit applies to distributions only.
  if (rows.length > 0) blocks.push(renderTable({ ...aggregation, entries: rows }, aggregation.unit, options));
  return blocks;
}

/**
 * renderText(summary, options) -> string
 * options: { breakdownHistograms, traceText: how long the trace lasted
 *   ("5.0 s", said of samples longer than it), maxUnresolved: 3, width: 40,
 *   ascii: false (µs -> us, – -> -, ≥ -> >=) }
 */
function renderText(summary, options = {}) {
  const settings = { ...DEFAULTS, ...options, sort: summary.sort, defaultUnit: summary.unit };
  const blocks = renderKinds(summary.kinds, settings, !summary.convention);
  for (const aggregation of summary.other) append(blocks, renderOther(aggregation, settings));
  if (summary.kinds.some((kind) => kind.breakdown)) blocks.push(LEGEND);
  const discarded = discardedSentences(summary.discarded, { traceText: settings.traceText });
  if (discarded.length > 0) {
    blocks.push(['In all, set apart and not counted in any histogram, percentile or share:', ...discarded.map((d) => '  ' + d)].join('\n'));
  }
  const report = blocks.length === 0 ? 'No aggregation output.\n' : blocks.join('\n\n') + '\n';
  const pool = poolLines(summary.pool);
  // Keys are names from the target's binaries and perf map, or from stdin.
  return safeText(report + (pool.length ? '\n' + pool.join('\n') + '\n' : ''));
}

module.exports = { renderText };
