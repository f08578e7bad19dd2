'use strict';
// latency --paths and --hosts: fs work split by the request's path and
// dns.lookup by the host name, from what the latency program printed
// (d-scripts/addon-latency.bt, its @names part). Pure: text and model in,
// model out.
//
// Paths and host names are chosen by the traced process: hostile text. The
// program never prints one as text. It keys its @named_* maps by a number
// (the name's id) and prints each distinct name once, as that id, a kind
// code and the name's first 128 bytes as 16 hexadecimal words:
//   NAME <id> <code> <w0> ... <w15>
// So no path can break a line of the tracer's output or pass for another
// (lib/tracer/name-words.js). Here the name is a subject beside the kind
// (lib/aggregation/model.js), never part of its key.
//
// Bounds: the program reads NAME_BYTES - 1 bytes of a name (a longer one is
// marked cut) and keeps NAMES_KEPT_IN_TRACER distinct names; operations on
// further names keep their plain kind. The report shows the NAMES_SHOWN
// names that took the most time per kind and folds the rest, and the plain
// kind beside named ones, into one "(other paths)" / "(other hosts)" kind.
const { estimatedTotal, mergeEntriesByName, makeAggregation } = require('../../aggregation/model');
const { latencyRole } = require('./kinds');
const { fsType } = require('./kind-names');
const { nameFromWords } = require('../../tracer/name-words');

const NAME_BYTES = 128;            // str($at, 128) in the program: 127 bytes and the NUL
const NAMES_KEPT_IN_TRACER = 1024; // @names_kept < 1024 in the program
const NAMES_SHOWN = 10;
const PATHS = 1;
const HOSTS = 2;
// The program's kind code for getaddrinfo; fs requests have 0x100 +
// uv_fs_type, as the plain fs keys (./kind-names.js).
const HOST_CODE = 0x200;
// The program's named maps, keyed by a name's id, and the plain maps they stand beside.
const NAMED_PREFIX = 'named_';
const LOST = '(thread-pool work whose name the tracer lost)';

/** Which names to read, as the program's $20: 1 paths, 2 host names. */
function namesMask({ paths = false, hosts = false } = {}) {
  return (paths ? PATHS : 0) | (hosts ? HOSTS : 0);
}

const NAME_LINE = /^NAME (\d{1,20}) (\d{1,10})((?: [0-9a-f]{1,16}){16})$/;

/**
 * One NAME line -> { id, key, subject } or null. key: the kind's key as the
 * plain maps have it (fs: '0x1NN', getaddrinfo: its work function).
 */
function parseNameLine(line) {
  const m = NAME_LINE.exec(line);
  if (!m) return null;
  const code = Number(m[2]);
  let key;
  let field;
  if (code === HOST_CODE) {
    key = 'uv__getaddrinfo_work';
    field = 'host';
  } else if (fsType('0x' + code.toString(16)) !== null) {
    key = '0x' + code.toString(16);
    field = 'path';
  } else {
    return null;
  }
  // The name's 128 bytes as 16 words; str() in the program kept 127 of them.
  const { text, cut } = nameFromWords(m[3].trim().split(' '));
  return { id: m[1], key, subject: cut ? { field, text, cut: true } : { field, text } };
}

/** The names the program printed while tracing (NAME lines): Map id -> { key, subject }. */
function namesFromLines(lines) {
  const names = new Map();
  for (const line of lines) {
    if (!line.startsWith('NAME ')) continue;
    const n = parseNameLine(line);
    if (n) names.set(n.id, { key: n.key, subject: n.subject });
  }
  return names;
}

/**
 * The named maps' entries, moved into the plain maps (@named_total_us into
 * @total_us, ...) under their kind's key, with their name as subject.
 */
function withNamedEntries(model, during) {
  const named = model.aggregations.filter((a) => a.name && a.name.startsWith(NAMED_PREFIX)
    && latencyRole(a.name.slice(NAMED_PREFIX.length)));
  if (!named.length) return model;
  const names = namesFromLines(during);
  const aggregations = model.aggregations.filter((a) => !named.includes(a));
  for (const a of named) {
    const plainName = a.name.slice(NAMED_PREFIX.length);
    let plain = aggregations.find((x) => x.name === plainName);
    if (!plain) {
      plain = makeAggregation(plainName, []);
      aggregations.push(plain);
    }
    plain.entries = plain.entries.concat(a.entries.map((e) => {
      const n = names.get(String(e.key[0]));
      return n ? { ...e, key: [n.key], subject: n.subject } : { ...e, key: [LOST] };
    }));
  }
  return { ...model, aggregations };
}

// The id of a kind without its subject.
function baseId(entry) {
  return entry.key.join('\u0000');
}

/**
 * Per kind, the `shown` names that took the most time (by the total
 * histogram's estimate) keep their own entry; the other names, and the
 * kind's plain entry where it has named ones, are folded into one with the
 * subject { field, text: null, folded: how many names }.
 */
function foldNamedKinds(model, shown = NAMES_SHOWN) {
  const total = model.aggregations.find((a) => latencyRole(a.name) === 'total');
  if (!total || !total.entries.some((e) => e.subject)) return model;
  const byKind = new Map();   // base id -> named total entries
  for (const e of total.entries) {
    if (!e.subject || e.subject.text === null) continue;
    if (!byKind.has(baseId(e))) byKind.set(baseId(e), []);
    byKind.get(baseId(e)).push(e);
  }
  const keep = new Set();     // the named entries shown, as their subjects
  const fieldOf = new Map();  // base id -> 'path' | 'host'
  for (const [id, entries] of byKind) {
    fieldOf.set(id, entries[0].subject.field);
    entries.sort((a, b) => estimatedTotal(b) - estimatedTotal(a));
    for (const e of entries.slice(0, shown)) keep.add(e.subject);
  }
  const refold = (e) => {
    const field = fieldOf.get(baseId(e));
    if (!field || (e.subject && (keep.has(e.subject) || e.subject.text === null))) return e;
    return { ...e, subject: { field, text: null, folded: e.subject ? 1 : 0 } };
  };
  // Every map of the kind folds alike: the phases' entries carry the same subject objects.
  const subjects = new Map();
  for (const e of total.entries) if (e.subject) subjects.set(subjectId(e), e.subject);
  return {
    ...model,
    aggregations: model.aggregations.map((a) => {
      if (!latencyRole(a.name)) return a;
      const entries = a.entries.map((e) => (e.subject && subjects.has(subjectId(e))
        ? refold({ ...e, subject: subjects.get(subjectId(e)) }) : refold(e)));
      return mergeEntriesByName({ ...a, entries });
    }),
  };
}

function subjectId(e) {
  return `${baseId(e)}\u0001${e.subject.field}\u0001${e.subject.text === null ? '\u0002' : e.subject.text}`;
}

module.exports = {
  namesMask, parseNameLine, namesFromLines, withNamedEntries, foldNamedKinds,
  NAME_BYTES, NAMES_KEPT_IN_TRACER, NAMES_SHOWN, HOST_CODE, PATHS, HOSTS,
};
