'use strict';
// Parse the aggregation output DTrace prints (illumos/macOS DTrace and Oracle's
// DTrace for Linux print the same layout) into the model of ./model.js.
//
// What the text looks like (see test/fixtures and test/fixtures/shared):
//
//   <blank>                                  <- DTrace starts each aggregation with a blank line
//     node`napi_queue_async_work             <- key fields: "  %-50s" strings, " %8d"/" %16lld" integers
//              value  ------------- Distribution ------------- count
//               4096 |                                         0
//               8192 |@@@@@                                    930
//              < 0 / >= 100 / <= -16 / abs() < 27 rows         <- open or folded buckets
//   <blank>                                  <- every distribution ends with one
//     some key                          12  <- scalar aggregations: keys, then the value
//
// DTrace never prints an aggregation's name and never says which function
// (quantize/lquantize/llquantize) made a distribution: the name is only known
// when the script printed it itself, either as a line of its own before
// printa(@name) (printf("\n@name\n"); printa(@name); as d-scripts/*.d do) or
// with printa("@name = %@d\n", @name) / printa("@name[%A] = %@d\n", @name);
// the kind is inferred from the row labels.  Where one aggregation ends is inferred too: a second blank line
// after a distribution, a blank line after a scalar row, a change between
// scalar and distribution rows, a key repeated (DTrace prints each key once
// per aggregation) or a line that is not aggregation output.
//
// DTrace pads with ASCII spaces and nothing else, so only those separate or
// surround key fields: JavaScript's \s and trim() also take tabs, \v, \f,
// \r, U+00A0, U+2000-U+200A, U+3000 and more, which a key (a function's
// name, a string: the target's text) may hold; read with them, such a key
// was split into more fields, shifting the fields after it
// (test/fixtures/dtrace-*whitespace-keys.out).

const { makeAggregation, splitKeyList } = require('./model');
const { partsAroundText, shapeOf } = require('./text-keys');

const HEADER = /^\s*value\s+-+\s*Distribution\s*-+\s+count\s*$/;
// label, bar (with the '|' axis: bars left of it are negative counts), count
const ROW = /^\s*(?:(<=|<|>=|abs\(\)\s*<)\s*)?(-?\d+)\s[ @]*\|[ @]*?\s*(-?\d+)\s*$/;
// printa("@name = %@d\n") / printa("@name[%s] = %@d\n"); the value is absent when a histogram follows
// ([^\n], not `.`: a key may hold U+2028 or U+2029, where `.` stops: lib/aggregation/parse-bpftrace.js.)
const PRINTA = /^@(\w*)(?:\[([^\n]*)\])? *= *(-?\d+)? *$/;
const SCALAR_ROW = /^( [^\n]*?)? *(-?\d+) *$/;
// printf("\n@name\n") before printa(@name): names what follows
const NAME_MARKER = /^@(\w+):?\s*$/;

function isBlank(line) {
  return /^ *$/.test(line);
}

function trimSpaces(text) {
  return text.replace(/^ +| +$/g, '');
}

// DTrace separates key fields by padding ("  %-50s", " %16lld"), so two or more
// spaces end a field while a single space can be part of a string key. A
// map whose key holds a process's text, which may hold two spaces, is read
// by its shape (./text-keys.js).
function splitKeyFields(text, shape = null) {
  const trimmed = trimSpaces(text);
  if (trimmed === '') return [];
  return shape ? partsAroundText(trimmed.split(/( {2,})/), shape) : trimmed.split(/ {2,}/);
}

function parseRow(line) {
  const match = ROW.exec(line);
  if (!match) return null;
  const op = match[1] ? (match[1].startsWith('abs') ? 'abs<' : match[1]) : null;
  return { op, value: BigInt(match[2]), count: BigInt(match[3]) };
}

// quantize() rows run ..., -4, -2, -1, 0, 1, 2, 4, ...
function nextPowerOfTwoRow(value) {
  if (value === -1n) return 0n;
  if (value === 0n) return 1n;
  if (value > 0n) return value * 2n;
  return value / 2n;
}

function isPowerOfTwoRow(value) {
  const magnitude = value < 0n ? -value : value;
  return magnitude === 0n || (magnitude & (magnitude - 1n)) === 0n;
}

function isLog2Sequence(values) {
  if (!values.every(isPowerOfTwoRow)) return false;
  for (let i = 1; i < values.length; i++) {
    if (values[i] !== nextPowerOfTwoRow(values[i - 1])) return false;
  }
  return true;
}

function constantStep(values) {
  if (values.length < 2) return null;
  const step = values[1] - values[0];
  for (let i = 2; i < values.length; i++) {
    if (values[i] - values[i - 1] !== step) return null;
  }
  return step;
}

/**
 * Which D function made these rows.  lquantize() alone prints `< base`;
 * llquantize() alone prints `<= -N` and `abs() < N` (DTrace for Linux's
 * negative llquantize); quantize() rows are successive powers of two; equal
 * steps mean lquantize().  Anything else is llquantize().  A few short
 * distributions are ambiguous (rows 1, 2, 3 may come from llquantize()); they
 * get the simplest kind that fits, which does not change their buckets.
 */
function classifyRows(rows) {
  if (rows.some((r) => r.op === '<')) return 'linear';
  if (rows.some((r) => r.op === '<=' || r.op === 'abs<')) return 'loglinear';
  const finite = rows.filter((r) => r.op === null).map((r) => r.value);
  if (finite.length > 0 && isLog2Sequence(finite)) return 'log2';
  if (constantStep(finite) !== null || finite.length < 2) return 'linear';
  return 'loglinear';
}

function lowerBound(row) {
  if (row.op === '<' || row.op === '<=') return null;
  if (row.op === 'abs<') return -row.value + 1n; // values strictly between -N and N
  return row.value;
}

/**
 * Turn rows into [lo, hi) buckets.  A row's label is its lower bound and the
 * next row's label its upper bound (so `value N` means [N, next)), the model's
 * convention for DTrace; for negative quantize() rows DTrace's own bucket is
 * (2N, N], which this convention shifts by one row.  The last row's upper
 * bound is computed for quantize() and lquantize(); llquantize()'s cannot be
 * known from the text (it is almost always DTrace's empty closing row).
 */
function rowsToBuckets(rows, kind) {
  const step = kind === 'linear' ? constantStep(rows.filter((r) => r.op === null).map((r) => r.value)) : null;
  return rows.map((row, i) => {
    const lo = lowerBound(row);
    let hi;
    if (row.op === '>=') hi = null;
    else if (row.op === 'abs<') hi = row.value;
    else if (i + 1 < rows.length) hi = lowerBound(rows[i + 1]) ?? rows[i + 1].value;
    else if (kind === 'log2') hi = nextPowerOfTwoRow(row.value);
    else if (kind === 'linear' && step !== null) hi = row.value + step;
    else hi = null;
    return { lo, hi, count: row.count };
  });
}

function readDistribution(lines, start) {
  const rows = [];
  let i = start;
  for (; i < lines.length; i++) {
    const row = parseRow(lines[i]);
    if (!row) break;
    rows.push(row);
  }
  const kind = classifyRows(rows);
  return { kind, buckets: rowsToBuckets(rows, kind), next: i };
}

/**
 * Groups entries into aggregations, starting a new one where DTrace's layout
 * says one ended (see the header comment).
 */
class AggregationGrouper {
  constructor() {
    this.aggregations = [];
    this.current = null;
    this.currentKeys = new Set();
    this.lastShape = null;
    this.blanks = 0;
    this.interrupted = false;
    this.markedName = undefined;
  }

  // A "@name" line: what follows, up to the next such line or other output,
  // is that aggregation, whatever blank lines printa() puts between entries.
  nameMarker(name) {
    this.markedName = name;
    this.interrupted = true;
  }

  blank() {
    this.blanks++;
  }

  // A line that is not aggregation output (probe trace lines, printf output,
  // dtrace's own messages) ends whatever aggregation was being printed.
  noise() {
    this.interrupted = true;
    this.markedName = undefined;
  }

  add(entry, printedName) {
    const name = printedName !== undefined ? printedName : this.markedName;
    const shape = entry.buckets ? 'distribution' : 'scalar';
    const keyId = entry.key.join('\u0000');
    const blanksThatEnd = this.lastShape === 'distribution' ? 2 : 1;
    const startsNew =
      this.current === null ||
      this.interrupted ||
      (name !== undefined && name !== this.current.name) ||
      shape !== this.lastShape ||
      (this.markedName === undefined && this.blanks >= blanksThatEnd) ||
      this.currentKeys.has(keyId);
    if (startsNew) {
      this.current = makeAggregation(name, []);
      this.aggregations.push(this.current);
      this.currentKeys = new Set();
    }
    this.current.entries.push(entry);
    this.currentKeys.add(keyId);
    this.lastShape = shape;
    this.blanks = 0;
    this.interrupted = false;
  }
}

function printaKey(text, shape) {
  if (text === undefined) return [];
  return shape ? partsAroundText(text.split(/(, )/), shape) : splitKeyList(text, ', ');
}

function parsePrintaLine(line, textKeys) {
  const match = PRINTA.exec(line);
  if (!match) return null;
  return {
    name: match[1] || null,
    key: printaKey(match[2], shapeOf(textKeys, match[1])),
    value: match[3] === undefined ? null : BigInt(match[3]),
  };
}

// A scalar row: indented key fields, then the value.  DTrace indents every key
// and every value, so an unindented line is only a value when it is a bare
// number (printa("%@d\n") output); anything else unindented is not ours.
function parseScalarRow(line, shape) {
  const match = SCALAR_ROW.exec(line);
  if (!match) return null;
  return { key: splitKeyFields(match[1] || '', shape), kind: 'scalar', value: BigInt(match[2]) };
}

/**
 * parseDtrace(text, { textKeys }) -> Model. Never throws on unrecognised
 * lines: it skips them. textKeys: the program's maps whose key holds a
 * process's text (./text-keys.js TEXT_KEYS), read by their shape; a map's
 * name is what the script printed before it ("@name") or in its printa().
 */
function parseDtrace(text, options = {}) {
  const shapeOfMarked = () => shapeOf(options.textKeys, grouper.markedName);
  const lines = String(text).split(/\r?\n/);
  const grouper = new AggregationGrouper();
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      grouper.blank();
      i++;
      continue;
    }
    if (HEADER.test(line)) {
      // An unkeyed distribution: DTrace prints no key line at all.
      const dist = readDistribution(lines, i + 1);
      grouper.add({ key: [], kind: dist.kind, buckets: dist.buckets });
      i = dist.next;
      continue;
    }
    const printa = parsePrintaLine(line, options.textKeys);
    const marker = NAME_MARKER.exec(line);
    if (i + 1 < lines.length && HEADER.test(lines[i + 1])) {
      const dist = readDistribution(lines, i + 2);
      if (marker) grouper.nameMarker(marker[1]); // an unkeyed distribution right after its name
      const key = printa ? printa.key : marker ? [] : splitKeyFields(line, shapeOfMarked());
      grouper.add({ key, kind: dist.kind, buckets: dist.buckets }, printa ? printa.name : undefined);
      i = dist.next;
      continue;
    }
    if (marker) {
      grouper.nameMarker(marker[1]);
    } else if (printa && printa.value !== null) {
      grouper.add({ key: printa.key, kind: 'scalar', value: printa.value }, printa.name);
    } else {
      const scalar = parseScalarRow(line, shapeOfMarked());
      if (scalar) grouper.add(scalar);
      else grouper.noise();
    }
    i++;
  }
  return { tracer: 'dtrace', aggregations: grouper.aggregations };
}

module.exports = { parseDtrace, classifyRows, splitKeyFields };
