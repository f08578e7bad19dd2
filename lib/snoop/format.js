'use strict';
// What `nodetrace snoop` prints for each event of the reassembler, and its
// closing summary. Pure. Records themselves are formatted by bunyan's own
// CLI (see sink.js); this only decides the lines fed to it, and the marks for
// records that did not arrive whole.
const { levelName } = require('./levels');
const { safeText, safeJson, safeJsonText, safeValue } = require('../terminal-safe');
const { noun } = require('../render/text');

// --json and bunyan's JSON output modes (-o json, json-N, bunyan) get JSON
// marks, so a JSON consumer downstream never sees anything but JSON.
function isJsonMode(outputMode) {
  return outputMode === 'raw' || /^(json(-\d+)?|bunyan)$/.test(outputMode);
}

/**
 * A record longer than the tracer reads:
 *   {"nodetrace":"truncated","pid":4242,"tid":4242,"level":40,"bytes_seen":4179,"prefix":"{\"name\":..."}
 * bytes_seen: how many bytes of it arrived (it is longer); prefix: its first
 * 200 characters; "complete":false is added when pieces of what was read
 * were lost as well.
 */
function truncatedJson(ev) {
  const o = { nodetrace: 'truncated', pid: ev.pid, tid: ev.tid, level: ev.level, bytes_seen: ev.bytesSeen, prefix: ev.prefix };
  if (ev.complete === false) o.complete = false;
  return safeJson(o, 0);
}

function truncatedText(ev) {
  const level = ev.level ? ` ${levelName(ev.level).toUpperCase()}` : '';
  return `[nodetrace] PID ${ev.pid}:${level} record TRUNCATED: longer than the ${ev.bytesSeen} bytes the tracer reads; it began: ${safeText(ev.prefix, { oneLine: true })}...`;
}

// For bunyan's text modes: the record with every string in it made safe for
// a terminal (bunyan prints messages and fields as they are). bunyan shows a
// line that is not a JSON record verbatim: that is made safe whole.
function safeForText(text, display = () => {}) {
  let record;
  try {
    record = JSON.parse(text);
  } catch {
    return safeText(text, { oneLine: true });
  }
  if (!record || typeof record !== 'object' || Array.isArray(record)) return safeText(text, { oneLine: true });
  display(record);
  return safeJson(safeValue(record), 0);
}

/**
 * bunyan's text modes name a record's process by what the record says:
 * long, "name/pid on hostname"; short, the name alone. Processes in two
 * containers both say PID 1, and short says nothing, so the record shown
 * (never --json's) names its process by the host PID the kernel gave, and
 * its container where known (lib/proc/identity.js):
 *   short  name/27878          (name/27878 in web-1)
 *   long   name/27878 (1 inside) on HOST, for a process in a PID namespace
 */
function displayFor(outputMode, hostPid, container) {
  const where = container ? ` in ${container}` : '';
  if (outputMode === 'short') {
    return (record) => {
      if (typeof record.name === 'string') record.name = `${record.name}/${hostPid}${where}`;
    };
  }
  if (outputMode === 'long') {
    return (record) => {
      if (record.pid !== undefined && record.pid !== hostPid) record.pid = `${hostPid} (${record.pid} ${container ? `in ${container}` : 'inside'})`;
      else if (container && record.pid === hostPid) record.pid = `${hostPid}${where}`;
    };
  }
  return () => {};
}

// A --json line that must be JSON but is not (cannot happen with bunyan's
// probes; another library's could pass anything):
//   {"nodetrace":"not-json","pid":4242,"tid":4242,"text":"..."}
function notJson(ev) {
  return safeJson({ nodetrace: 'not-json', pid: ev.pid, tid: ev.tid, text: ev.text }, 0);
}

// The "pid" a record's JSON text claims, or null. A record is text its
// process wrote: it may claim to be another process's.
function claimedPid(text) {
  let record;
  try {
    record = JSON.parse(text);
  } catch {
    return null;
  }
  return record && typeof record === 'object' && Number.isInteger(record.pid) ? record.pid : null;
}

// A record that claims a PID its process does not have (not its own, nor
// its own as seen in its PID namespace), shown for what it is:
//   {"nodetrace":"pid-mismatch","pid":666,"tid":666,"claimed_pid":1,"text":"..."}
function pidMismatchJson(ev, claimed) {
  return safeJson({ nodetrace: 'pid-mismatch', pid: ev.pid, tid: ev.tid, claimed_pid: claimed, text: ev.text }, 0);
}

function pidMismatchText(ev, claimed) {
  return `[nodetrace] PID ${ev.pid} logged a record that claims to be PID ${claimed}'s: ${safeText(ev.text, { oneLine: true })}`;
}

/**
 * Event -> the line to print (without newline), or null.
 * @param {function(number): number[]} [ownPids] the PIDs a traced process
 *   may rightly claim in its records (its own, and in its PID namespaces)
 * @param {function(number): string|null} [containerOf] the container a
 *   process runs in, as said to a person, or null
 */
function lineFor(ev, outputMode, ownPids = (pid) => [pid], containerOf = () => null) {
  const json = isJsonMode(outputMode);
  if (ev.type === 'record') {
    const claimed = claimedPid(ev.text);
    if (claimed !== null && claimed !== ev.pid && !ownPids(ev.pid).includes(claimed)) {
      return json ? pidMismatchJson(ev, claimed) : pidMismatchText(ev, claimed);
    }
    if (!json) return safeForText(ev.text, displayFor(outputMode, ev.pid, containerOf(ev.pid)));
    // As logged, but never a control or bidi character raw (\u escapes: the
    // same record for a parser); text that is not JSON said to be so.
    const safe = safeJsonText(ev.text);
    return safe === null ? notJson(ev) : safe;
  }
  if (ev.type === 'truncated') return json ? truncatedJson(ev) : truncatedText(ev);
  return null;
}

// The summary's counts as they have always printed, digits not grouped
// (scripts and test/snoop.test.js read them as \d+).
function counted(n, one, many) {
  return `${n} ${noun(n, one, many)}`;
}

// The line printed on stderr at exit.
function summary(stats, { lostRecords, lostEvents, fullBatches = 0, over = 0, full = 0 }) {
  const parts = [`${counted(stats.records, 'record')}`];
  if (stats.pids.size) parts[0] += ` from ${counted(stats.pids.size, 'process', 'processes')}`;
  if (stats.truncated) parts[0] += `, and ${stats.truncated} too long for the tracer (marked TRUNCATED)`;
  if (over) parts.push(`${counted(over, 'record')} left out of crowded batches, their processes over their share (above)`);
  if (full) parts.push(`${counted(full, 'record')} left out of full batches: the tracer could not keep up (above)`);
  const dropped = lostEvents ? `the tracer dropped ${counted(lostEvents, 'event')}` : '';
  let lost;
  if (lostRecords !== null && lostRecords !== undefined) {
    // Without dropped events or full batches, the records missing are those
    // bpftrace had not read yet when it was told to end (it discards them;
    // lib/snoop/plan.js).
    if (lostRecords && fullBatches) lost = `the tracer lost ${counted(lostRecords, 'record')}: it could not keep up (${counted(fullBatches, 'batch', 'batches')} full)`;
    else if (lostRecords && !lostEvents) lost = `${counted(lostRecords, 'record')} fired as the snoop ended and the tracer discarded ${lostRecords === 1 ? 'it' : 'them'} unread`;
    else if (lostRecords) lost = `the tracer lost ${counted(lostRecords, 'record')}: it could not keep up`;
    else if (dropped) lost = `none lost (${dropped}, all pieces of records marked TRUNCATED)`;
    else lost = 'none lost';
  } else if (dropped || stats.incomplete) {
    lost = `${dropped || 'the tracer dropped events'}; ${counted(stats.incomplete, 'record')} arrived incomplete and ${stats.incomplete === 1 ? 'was' : 'were'} not shown`;
  } else {
    lost = 'no drops reported';
  }
  parts.push(lost);
  return `nodetrace: ${parts.join('; ')}.`;
}

module.exports = { claimedPid, isJsonMode, truncatedJson, truncatedText, notJson, lineFor, displayFor, summary };
