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

// The batching programs (two sets of maps taking turns, stopped by SIGURG
// before bpftrace is ended: lib/tracer/plan.js BATCH_QUIESCE) write one state
// machine in one vocabulary: @phase names the set the probes write (0, 1),
// @quiesce counts the turns since the stop (1, 2, then 3 and QUIET_MARKER),
// and their maps are named by the set (@busy0, @busy1).
describe('the batching programs: one state machine', function () {
  const { QUIET_MARKER } = require('../lib/tracer/output-formats');
  const BATCHING = ['log-snoop', 'log-snoop-whole', 'http-batched', 'http-wire'];
  for (const name of BATCHING) {
    it(`${name}.bt: @phase, @quiesce, @busy0/@busy1 and "${QUIET_MARKER}" once, at the second turn`, function () {
      const text = withoutComments(readScript(name, 'bpftrace'));
      const turn = clauseBody(text, 'interval:ms:100');
      assert(turn, 'its batch clause');
      for (const word of ['@phase = ', '@busy0 = 1;', '@busy1 = 1;', 'clear(@busy0);', 'clear(@busy1);']) {
        assert(turn.includes(word), `${word} in its batch clause`);
      }
      const stop = /if \(@quiesce == 2\) \{\s*@quiesce = 3;[\s\S]*?printf\("(.*)\\n"\);\s*\}\s*if \(@quiesce == 1\) \{\s*@quiesce = 2;\s*\}/.exec(turn);
      assert(stop, 'the stop: 1, 2, then 3 with the line');
      assert.strictEqual(stop[1], QUIET_MARKER);
      assert.strictEqual(text.split(QUIET_MARKER).length, 2, 'the line printed once');
      assert(/@quiesce = 1;/.test(text), 'SIGURG sets @quiesce to 1');
      assert(!/@epoch|@stop\b|_even|_odd|Snooping stopped/.test(text), 'none of the old words');
    });
  }
});
