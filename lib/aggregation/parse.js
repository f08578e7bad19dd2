'use strict';
// Parse a tracer's aggregation output, whichever tracer printed it.  The CLI
// knows which tracer it ran and says so; detection is for saved output
// (`nodetrace format` without --from) and for the tests.

const { parseDtrace } = require('./parse-dtrace');
const { parseBpftraceText, parseBpftraceJson } = require('./parse-bpftrace');

// `bpftrace -f json` prints one {"type": ..., "data": ...} object a line.
const BPFTRACE_JSON_LINE = /^\s*\{\s*"type"\s*:/m;
// bpftrace names every map it prints: "@name: 3", "@name[key]: ", "@[" (a stack key).
// DTrace's printa("@name = %@d") lines use " = " and do not match.
const BPFTRACE_MAP_LINE = /^@\w*(?:\[.*\])?:(?: .*)?$|^@\w*\[$/m;
const DTRACE_HEADER = /^\s*value\s+-+\s*Distribution\s*-+\s+count\s*$/m;

/** 'dtrace' | 'bpftrace-json' | 'bpftrace' | null: which tracer printed `text`. */
function detectFormat(text) {
  if (BPFTRACE_JSON_LINE.test(text)) return 'bpftrace-json';
  // before map lines: a D script may print "@name:" before printa(@name)
  if (DTRACE_HEADER.test(text)) return 'dtrace';
  if (BPFTRACE_MAP_LINE.test(text)) return 'bpftrace';
  return null;
}

/**
 * parse(text, { tracer, textKeys }) -> Model.
 * textKeys: the program's maps whose key holds a process's text
 * (./text-keys.js TEXT_KEYS[program]), read by their shape.
 * tracer: 'dtrace' | 'bpftrace' | undefined (detect).  With 'bpftrace', JSON
 * lines are still recognised.  Text that looks like neither tracer's (only
 * scalar rows, or nothing) is read as DTrace output, whose scalar rows carry
 * no marker.
 */
function parse(text, options = {}) {
  const source = String(text == null ? '' : text);
  const detected = detectFormat(source);
  const tracer = options.tracer || (detected === 'dtrace' || detected === null ? 'dtrace' : 'bpftrace');
  const read = { textKeys: options.textKeys };
  if (tracer === 'bpftrace') {
    return detected === 'bpftrace-json' ? parseBpftraceJson(source, read) : parseBpftraceText(source, read);
  }
  if (tracer === 'dtrace') return parseDtrace(source, read);
  throw new Error(`unknown tracer '${tracer}': expected 'dtrace' or 'bpftrace'`);
}

module.exports = { parse, detectFormat };
