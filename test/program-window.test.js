'use strict';
// The programs with a window (`@template WINDOW:`: lib/tracer/capabilities.js
// windowSignal) print their report from the window's clause, before
// bpftrace detaches anything, and nodetrace takes nothing printed after
// it: a map that clause forgets would be missing from every report. Pure:
// the scripts' text. What bpftrace prints at exit is every map END leaves
// (it clears or deletes its scratch maps); the window's clause must print
// each of them, and clear them so that its report is not printed twice.
const assert = require('assert');
const { bpftraceScripts } = require('./support/program-variants');
const { readScript } = require('../lib/tracer/plan');
const { declaredSlot } = require('../lib/tracer/template');

// A clause's body: from the `{` after its first line (the probe) to the matching `}`.
function clauseBody(text, probeLine) {
  const at = text.split('\n').findIndex((l, i, all) => l.trim() === probeLine && !/@template/.test(l) && !/^\s*\*/.test(all[i]));
  if (at < 0) return null;
  const rest = text.split('\n').slice(at).join('\n');
  const open = rest.indexOf('{');
  let depth = 0;
  for (let i = open; i < rest.length; i++) {
    if (rest[i] === '{') depth++;
    if (rest[i] === '}' && --depth === 0) return rest.slice(open + 1, i);
  }
  return null;
}

const withoutComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
const namesIn = (text, re) => new Set([...withoutComments(text).matchAll(re)].map((m) => m[1]));

describe('programs with a window print their whole report from it', function () {
  const windowed = bpftraceScripts().map((f) => f.replace(/\.bt$/, '')).filter((s) => declaredSlot(readScript(s, 'bpftrace'), 'WINDOW'));

  it('gc, latency and async have one', function () {
    for (const s of ['gc', 'addon-latency', 'async']) assert(windowed.includes(s), `${s}.bt declares no WINDOW`);
  });

  for (const script of windowed) {
    it(`${script}.bt: every map it would print at exit, printed and cleared in the window's clause, then its marker`, function () {
      const text = readScript(script, 'bpftrace');
      const body = clauseBody(text, declaredSlot(text, 'WINDOW'));
      assert(body, 'the clause of the WINDOW line');
      const end = clauseBody(text, 'END');
      const assigned = namesIn(text, /@(\w+)\s*(?:\[[^\]\n]*\])?\s*=[^=]/g);
      const scratch = namesIn(end, /\b(?:clear|delete)\(@(\w+)\)/g);
      const printed = namesIn(body, /\bprint\(@(\w+)\)/g);
      const cleared = namesIn(body, /\bclear\(@(\w+)\)/g);
      const left = [...assigned].filter((m) => !scratch.has(m)).sort();
      assert.deepStrictEqual(left.filter((m) => !printed.has(m)), [], 'maps printed at exit that the window does not print');
      assert.deepStrictEqual([...printed].filter((m) => !assigned.has(m)), [], 'maps the window prints that the program never makes');
      assert.deepStrictEqual([...printed].filter((m) => !cleared.has(m)), [], 'printed and not cleared: printed again at exit');
      const lines = withoutComments(body);
      const marker = lines.indexOf('printf("Report printed.\\n")');
      assert(marker > 0 && lines.indexOf('printf("Tracing ended.\\n")') < lines.indexOf('print('), 'END_MARKER, the maps, then REPORT_MARKER');
      assert(marker > lines.lastIndexOf('print('), 'the marker after every map');
    });
  }
});
