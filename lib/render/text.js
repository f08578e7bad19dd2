'use strict';
// The text report: one DTrace-style histogram per kind of operation, in human
// time units, with its percentiles, and for nodetrace's latency programs the
// split of that latency into queue wait / run / loop wait.  Pure: model in,
// string out.  Names must already be demangled (see model.mangledNames and
// model.applyDemangled, re-exported here for the CLI's convenience).

const {
  PHASES,
  buildKinds,
  displayKey,
  estimatedTotal,
  isDistribution,
  isUnresolvedAddress,
  mergeBuckets,
  percentile,
  totalCount,
  trimEmptyBuckets,
  mangledNames,
  applyDemangled,
  subjectLabel,
} = require('../aggregation/model');
const { formatDuration, formatRange, formatPercent, toNanoseconds } = require('./units');
const { discardedSentences } = require('../aggregation/impossible');

// Aggregations can have any number of buckets and keys: no spreading of
// arrays into call arguments (the stack holds only so many).
function longest(strings, min = 0) {
  let n = min;
  for (const t of strings) if (t.length > n) n = t.length;
  return n;
}

function append(into, items) {
  for (const item of items) into.push(item);
  return into;
}

const DEFAULTS = { sort: 'total', breakdownHistograms: false, maxUnresolved: 3, width: 40, ascii: false };

const PHASE_LABELS = { queue_wait: 'queue wait', run: 'run', loop_wait: 'loop wait' };
const LEGEND =
  'queue wait = waiting for a thread-pool thread; run = running on a pool thread; ' +
  'loop wait = waiting for the event loop to run the completion callback';

// ---- keys ------------------------------------------------------------------

function isUnresolvedKey(key) {
  return key.length > 0 && key.every((field) => isUnresolvedAddress(displayKey(field).func));
}

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

function unresolvedLabel(n) {
  return `(${n} unresolved address${n === 1 ? '' : 'es'})`;
}

// ---- unresolved addresses ----------------------------------------------------

// Adds one lumped kind's phase into the lump's; each kind's own max no longer
// bounds the sum, so the lump's percentiles are not capped.
function mergePhase(a, b) {
  if (!b) return a;
  if (!a) return { unit: b.unit, entry: b.entry, limit: null };
  return { unit: a.unit, entry: { ...a.entry, buckets: mergeBuckets(a.entry.buckets, b.entry.buckets) }, limit: null };
}

function lumpKinds(kinds) {
  const lump = {
    label: unresolvedLabel(kinds.length),
    aggregation: kinds[0].aggregation,
    key: [],
    unit: kinds[0].unit,
    entry: { key: [], kind: kinds[0].entry.kind, buckets: [] },
    count: 0n,
    timeNs: 0,
    max: null,
    limit: null,
    breakdown: null,
  };
  for (const kind of kinds) {
    lump.entry.buckets = mergeBuckets(lump.entry.buckets, kind.entry.buckets);
    lump.count += kind.count;
    lump.timeNs += kind.timeNs;
    if (kind.max && (!lump.max || kind.max.value > lump.max.value)) {
      lump.max = kind.max;
      lump.limit = kind.limit;
    }
    if (kind.entry.note) lump.entry.note = kind.entry.note;
    if (kind.breakdown) {
      lump.breakdown = lump.breakdown || {};
      for (const phase of PHASES) lump.breakdown[phase] = mergePhase(lump.breakdown[phase], kind.breakdown[phase]);
    }
  }
  if (lump.breakdown) for (const phase of PHASES) if (!lump.breakdown[phase]) delete lump.breakdown[phase];
  // The largest max is the lump's max only if every lumped kind had one.
  if (kinds.some((kind) => !kind.max)) {
    lump.max = null;
    lump.limit = null;
  }
  return lump;
}

/**
 * Keep the first `max` kinds keyed by a bare address and lump the rest into
 * one "(N unresolved addresses)" kind, at the end: a process without symbols
 * would otherwise print one histogram per call site.
 */
function limitUnresolved(kinds, max) {
  const shown = [];
  const lumped = [];
  for (const kind of kinds) {
    if (isUnresolvedKey(kind.key) && shown.filter((k) => isUnresolvedKey(k.key)).length >= max) lumped.push(kind);
    else shown.push(kind);
  }
  if (lumped.length > 0) shown.push(lumpKinds(lumped));
  return shown;
}

// ---- histograms ------------------------------------------------------------

function distributionHeader(labelWidth, width) {
  const title = ' Distribution ';
  const left = Math.max(1, Math.floor((width - title.length) / 2));
  const right = Math.max(1, width - title.length - left);
  return `${'value'.padStart(labelWidth)}  ${'-'.repeat(left)}${title}${'-'.repeat(right)} count`;
}

/**
 * DTrace's layout: label | bar | count, the bar `width` wide for the whole
 * population (so bars add up to the width), empty buckets trimmed to one on
 * each side of the data.
 */
function renderHistogram(entry, unit, options, indent = '  ') {
  const buckets = trimEmptyBuckets(entry).buckets;
  const labels = buckets.map((b) => formatRange(b.lo, b.hi, unit, options));
  const labelWidth = longest(labels, 5);
  const population = buckets.reduce((sum, b) => sum + (b.count > 0n ? Number(b.count) : 0), 0);
  const lines = [indent + distributionHeader(labelWidth, options.width)];
  buckets.forEach((bucket, i) => {
    const share = population > 0 && bucket.count > 0n ? Number(bucket.count) / population : 0;
    const bar = '@'.repeat(Math.round(share * options.width));
    lines.push(`${indent}${labels[i].padStart(labelWidth)} |${bar.padEnd(options.width)} ${bucket.count}`);
  });
  return lines;
}

function percentiles(entry, unit, options, limit = null) {
  return [50, 90, 99].map((p) => `p${p} ${formatDuration(percentile(entry, p, limit), unit, options)}`);
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
  const lines = [kindHeading(kind, options), ...renderHistogram(kind.entry, kind.unit, options), summaryLine(kind, options)];
  if (kind.entry.note) lines.push(`  note: ${kind.entry.note}`);
  append(lines, discardedLines(kind));
  if (kind.breakdown) {
    append(lines, options.breakdownHistograms ? renderBreakdownHistograms(kind, options) : renderBreakdownSummary(kind, options));
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

// Scalars of unresolved addresses beyond the first few are added into one row.
function limitUnresolvedRows(entries, max) {
  const shown = [];
  const lumped = [];
  for (const entry of entries) {
    const unresolvedShown = shown.filter((e) => isUnresolvedKey(e.key)).length;
    if (entry.kind === 'scalar' && isUnresolvedKey(entry.key) && unresolvedShown >= max) lumped.push(entry);
    else shown.push(entry);
  }
  if (lumped.length > 0) {
    const value = lumped.reduce((sum, e) => sum + e.value, 0n);
    shown.push({ key: [], label: unresolvedLabel(lumped.length), kind: 'scalar', value });
  }
  return shown;
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
    const view = buildKinds({ aggregations: [{ ...aggregation, entries: distributions }] }, { sort: options.sort, unit: options.defaultUnit });
    append(blocks, renderKinds(view.kinds, options, true));
  }
  const rows = aggregation.entries.filter((entry) => !isDistribution(entry));
  // Only a name says what a scalar measures (a count() has no unit), so the
  // default unit applies to distributions only.
  if (rows.length > 0) blocks.push(renderTable({ ...aggregation, entries: rows }, aggregation.unit, options));
  return blocks;
}

/**
 * renderReport(model, options) -> string
 * options: { sort: 'total'|'count'|'name', unit: unit of maps whose name has
 *   none (default 'ns' for DTrace, none for bpftrace), breakdownHistograms,
 *   maxUnresolved: 3, width: 40, ascii: false (µs -> us, – -> -, ≥ -> >=) }
 */
function renderReport(model, options = {}) {
  const defaultUnit = options.unit !== undefined ? options.unit : model.tracer === 'dtrace' ? 'ns' : null;
  const settings = { ...DEFAULTS, ...options, defaultUnit };
  const view = buildKinds(model, { sort: settings.sort, unit: defaultUnit });
  const blocks = renderKinds(view.kinds, settings, !view.convention);
  for (const aggregation of view.other) append(blocks, renderOther(aggregation, settings));
  if (view.kinds.some((kind) => kind.breakdown)) blocks.push(LEGEND);
  const discarded = discardedSentences(model.discarded, { traceText: options.traceText });
  if (discarded.length > 0) {
    blocks.push(['In all, set apart and not counted in any histogram, percentile or share:', ...discarded.map((d) => '  ' + d)].join('\n'));
  }
  if (blocks.length === 0) return 'No aggregation output.\n';
  return blocks.join('\n\n') + '\n';
}

module.exports = { renderReport, renderHistogram, mangledNames, applyDemangled };
