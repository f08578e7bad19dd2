'use strict';
// The JavaScript functions AsyncWrap callbacks call, for `nodetrace async`:
// where a JSFunction holds its SharedFunctionInfo (the program keys
// callback time by that SFI: the JSFunction moves at every scavenge, the
// SFI seldom), and after the trace each SFI named by lib/v8's namer over
// the live process's memory, as a frame is named (`name (file:line:column)`).
// A process gone, or an SFI that no longer reads as one, keeps its address.
const fs = require('fs');
const { parseMaps } = require('../symbolize');
const { readProcText } = require('../proc/read-bounded');
const { findV8Object, openProcess } = require('../v8/process');
const { layoutFrom } = require('../v8/metadata');

/** -> { sharedAt (0: not known), note (why not, or null) } for process `pid`. */
function sharedOffset(pid) {
  try {
    const maps = parseMaps(readProcText(`/proc/${pid}/maps`, { throws: true }));
    const exePath = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
    const v8 = findV8Object({ pid, maps, exePath });
    if (!v8) return { sharedAt: 0, note: 'no V8 postmortem metadata: callbacks are not told apart by function' };
    const layout = layoutFrom(v8.symbols);
    if (layout.unsupported || !layout.jsFunction || !layout.jsFunction.shared) {
      return { sharedAt: 0, note: `${layout.unsupported || 'no JSFunction layout'}: callbacks are not told apart by function` };
    }
    return { sharedAt: layout.jsFunction.shared, note: null };
  } catch (err) {
    return { sharedAt: 0, note: `cannot read the process's V8 metadata (${err.code || err.message}): callbacks are not told apart by function` };
  }
}

/**
 * Names each SFI address (decimal strings, as the tracer printed them) in
 * process `pid` -> Map(address -> text). Never throws: what cannot be named
 * is left out (the report shows its address).
 */
function nameFunctions(pid, addresses) {
  const names = new Map();
  if (!addresses.length) return names;
  let opened = null;
  try {
    opened = openProcess(pid);
    if (!opened.namer) return names;
    for (const a of addresses) {
      try {
        const r = opened.namer.nameSfi(BigInt(a));
        if (r && r.text) names.set(a, r.text);
      } catch { /* moved or freed: left unnamed */ }
    }
  } catch {
    /* the process is gone */
  } finally {
    if (opened) opened.close();
  }
  return names;
}

module.exports = { sharedOffset, nameFunctions };
