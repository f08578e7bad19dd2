'use strict';
// The type each key part of a bpftrace map has where the map is written,
// read and deleted, told from the program's text alone, for
// test/program-map-keys.test.js. bpftrace 0.27.1 silently keeps an entry
// whose delete() is given a key of another integer type than the one the
// map was written with (docs/platforms.md): so in a map that a program
// deletes from, each key part must have one type everywhere.
//
// A key part's type is its first term's (`arg1 + OFFSET` is arg1's):
//   (T)x, *(T *)x   T, the cast
//   argN, nsecs     uint64
//   a literal       int64
//   pid, tid        pid/tid (u64 on 0.17, u32 on 0.27: one type only if
//                   every site says the same)
//   args->F         args->F (a tracepoint field: its type is the kernel's)
//   kstack, ustack  themselves
//   $v              the type of what $v is assigned in the same probe
//                   clause (variables live in one clause), if one
//   @m[...], @m     the type of what @m holds, if one
// Anything else, or a variable or map given values of more than one type,
// is unknown (null): the test reports it, so that it is cast or measured.
// A reading of text, not bpftrace's type checker: it catches two sites
// that spell a key part's type differently, which is how offcpu.bt's
// wrong figures came (`@since_ns[tid]` written, `@since_ns[$in]` deleted
// with `$in = args->next_pid`); it cannot see a type bpftrace gives an
// expression it does not parse.

const INT_TYPE = /^(u?int(?:8|16|32|64))$/;

// The text with comments and string literals blanked (same length, so
// offsets keep their meaning).
function blankCommentsAndStrings(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (text[i] === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += '"' + ' '.repeat(Math.max(0, Math.min(j, text.length) - i - 1)) + (j < text.length ? '"' : '');
      i = j + 1;
    } else if (text[i] === '#' && (i === 0 || text[i - 1] === '\n')) {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out += ' '.repeat(stop - i);	// a #define or #include line
      i = stop;
    } else {
      out += text[i];
      i += 1;
    }
  }
  return out;
}

// The index just past the bracket that closes the one at `open`.
function closing(text, open) {
  const pairs = { '(': ')', '[': ']', '{': '}' };
  const stack = [];
  for (let i = open; i < text.length; i += 1) {
    const c = text[i];
    if (pairs[c]) stack.push(pairs[c]);
    else if (c === ')' || c === ']' || c === '}') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

// Splits at the commas outside any bracket.
function splitTopLevel(text, sep) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') depth -= 1;
    else if (c === sep && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

// Each probe clause: its predicate and body, [start, end) in the text.
function clauses(text) {
  const out = [];
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '{') {
      const end = closing(text, i);
      if (end < 0) break;
      out.push({ start, end });
      start = end;
      i = end - 1;
    }
  }
  return out;
}

// Every `@name[key]` (with `delete(` before it or not) and every
// assignment `@name[key] = value`, `$name = value`, by clause.
function readProgram(source) {
  const text = blankCommentsAndStrings(source);
  const sites = [];
  const mapValues = new Map();	// map name -> [{ expr, clause }]
  const clauseList = clauses(text);
  clauseList.forEach((clause, index) => {
    const body = text.slice(clause.start, clause.end);
    const vars = new Map();	// $name -> [expr]
    for (const m of body.matchAll(/\$(\w+)\s*=(?!=)/g)) {
      const from = m.index + m[0].length;
      const stop = body.indexOf(';', from);
      const value = body.slice(from, stop < 0 ? body.length : stop).trim();
      if (!vars.has(m[1])) vars.set(m[1], []);
      vars.get(m[1]).push(value);
    }
    clause.vars = vars;
    for (const m of body.matchAll(/@(\w+)\[/g)) {
      const open = m.index + m[0].length - 1;
      const close = closing(body, open);
      if (close < 0) continue;
      const key = body.slice(open + 1, close - 1);
      const before = body.slice(0, m.index).replace(/\s+$/, '');
      const deleted = /delete\($/.test(before);
      const after = body.slice(close);
      const assigned = after.match(/^\s*=(?!=)\s*/);
      if (assigned) {
        const from = assigned[0].length;
        const stop = after.indexOf(';', from);
        const value = after.slice(from, stop < 0 ? after.length : stop).trim();
        if (!mapValues.has(m[1])) mapValues.set(m[1], []);
        mapValues.get(m[1]).push({ expr: value, clause: index });
      }
      const line = source.slice(0, clause.start + m.index).split('\n').length;
      sites.push({ map: m[1], parts: splitTopLevel(key, ','), clause: index, deleted, line });
    }
  });
  return { sites, mapValues, clauses: clauseList };
}

// The first term of an expression (a cast kept with what it casts).
function firstTerm(expr) {
  let e = expr.trim();
  while (e.startsWith('(')) {
    const end = closing(e, 0);
    if (end < 0) return e;
    const inner = e.slice(1, end - 1).trim();
    if (INT_TYPE.test(inner)) return e;	// (T)x
    if (end < e.length && /^\s*\./.test(e.slice(end))) return e;	// (a, b).1
    e = inner;	// (x + 1) * 2: x
  }
  return beforeOperator(e);
}

// The expression up to its first operator outside brackets (`@depth[tid]`
// of `@depth[tid] + 1`); `->` is no operator, nor a leading `*` (a read).
function beforeOperator(e) {
  let depth = 0;
  for (let i = 1; i < e.length; i += 1) {
    const c = e[i];
    if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') depth -= 1;
    else if (depth === 0 && '+-*/%^|&?<>=!'.includes(c) && !(c === '-' && e[i + 1] === '>') && !(c === '>' && e[i - 1] === '-')) {
      return e.slice(0, i).trim();
    }
  }
  return e;
}

// A variable or map read again while its own type is being found (`$h =
// $h ^ x`, `@depth[tid] = $depth` with `$depth = @depth[tid] + 1`): it adds
// no type of its own.
const CYCLE = Symbol('cycle');

// The type of a key part or value (see the header), or null if unknown.
function typeOf(expr, clauseIndex, program, seen = new Set()) {
  const e = firstTerm(expr);
  let m;
  if ((m = e.match(/^\(\s*(u?int(?:8|16|32|64))\s*\)/))) return m[1];
  if ((m = e.match(/^\*\s*\(\s*(u?int(?:8|16|32|64))\s*\*\s*\)/))) return m[1];
  if ((m = e.match(/^(.*?)\s*\.\s*(\d+)$/)) && !/^\d/.test(e)) {
    return fieldTypeOf(m[1], Number(m[2]), clauseIndex, program, seen);
  }
  if (/^(?:arg\d+|nsecs)\b/.test(e)) return 'uint64';
  if (/^(?:0x[0-9a-fA-F]+|\d+)\b/.test(e)) return 'int64';
  if (/^(?:pid|tid)\b/.test(e)) return 'pid/tid';
  if ((m = e.match(/^(kstack|ustack)\b/))) return m[1];
  if ((m = e.match(/^args\s*->\s*(\w+)/))) return `args->${m[1]}`;
  return valuesTypeOf(e, clauseIndex, program, seen, (v, c, s) => typeOf(v, c, program, s));
}

// Field N of a tuple: of `(a, b, ...)`, or of what a variable or map holds.
function fieldTypeOf(expr, n, clauseIndex, program, seen) {
  const e = expr.trim();
  if (e.startsWith('(') && closing(e, 0) === e.length) {
    const fields = splitTopLevel(e.slice(1, -1), ',');
    if (fields.length > 1) return fields[n] === undefined ? null : typeOf(fields[n], clauseIndex, program, seen);
  }
  return valuesTypeOf(e, clauseIndex, program, seen, (v, c, s) => fieldTypeOf(v, n, c, program, s));
}

// Of `$v` or `@m[...]`: the one type `of` gives every value it is assigned.
function valuesTypeOf(e, clauseIndex, program, seen, of) {
  let m;
  let key;
  let values;
  if ((m = e.match(/^\$(\w+)$/))) {
    key = `$${m[1]}@${clauseIndex}`;
    values = (program.clauses[clauseIndex].vars.get(m[1]) || []).map((v) => ({ expr: v, clause: clauseIndex }));
  } else if ((m = e.match(/^@(\w+)(\[.*\])?$/s))) {
    key = `@${m[1]}`;
    values = program.mapValues.get(m[1]) || [];
  } else {
    return null;
  }
  if (seen.has(key)) return CYCLE;
  if (values.length === 0) return null;
  const next = new Set([...seen, key]);
  return oneType(values.map((v) => of(v.expr, v.clause, next)));
}

function oneType(types) {
  const known = new Set(types.filter((t) => t !== CYCLE));
  if (known.size === 0) return CYCLE;
  return known.size === 1 && !known.has(null) ? [...known][0] : null;
}

function known(type) {
  return type === CYCLE ? null : type;
}

// For each map the program deletes entries of by key: each key part's
// type at every site, and what is wrong: [{ map, problem, sites }].
function keyTypeProblems(source) {
  const program = readProgram(source);
  const deletedMaps = new Set(program.sites.filter((s) => s.deleted).map((s) => s.map));
  const problems = [];
  for (const map of deletedMaps) {
    const sites = program.sites.filter((s) => s.map === map);
    const width = Math.max(...sites.map((s) => s.parts.length));
    for (let part = 0; part < width; part += 1) {
      const typed = sites.map((s) => ({
        line: s.line, deleted: s.deleted, text: s.parts[part],
        type: s.parts[part] === undefined ? null : known(typeOf(s.parts[part], s.clause, program)),
      }));
      const types = new Set(typed.map((t) => t.type));
      if (types.has(null)) {
        problems.push({ map, part, problem: 'unknown', sites: typed.filter((t) => t.type === null) });
      } else if (types.size > 1) {
        problems.push({ map, part, problem: 'mixed', sites: typed });
      }
    }
  }
  return problems;
}

module.exports = { keyTypeProblems, readProgram };
