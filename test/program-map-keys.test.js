'use strict';
// One type per key part (docs/programs.md): in every map a d-scripts/*.bt
// program deletes entries of by key, each key part has one type wherever
// the map is written, read and deleted, told from the text
// (test/support/map-key-forms.js). bpftrace 0.27.1 silently deletes
// nothing when delete() is given a key of another integer type than the
// map was written with (docs/platforms.md); offcpu.bt counted waits twice
// that way. No tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { keyTypeProblems } = require('./support/map-key-forms');

const ROOT = path.join(__dirname, '..');
const SCRIPTS = path.join(ROOT, 'd-scripts');

function describeProblem(file, p) {
  const where = p.sites.map((s) => `line ${s.line}${s.deleted ? ' (delete)' : ''}: ${s.text} is ${s.type || 'of no type the text says'}`);
  return `${file} @${p.map}, key part ${p.part + 1}: ${p.problem === 'mixed' ? 'more than one type' : 'a type not told'}\n    ${where.join('\n    ')}`;
}

describe('programs: one type per key part of a map they delete from', function () {
  const programs = fs.readdirSync(SCRIPTS).filter((f) => f.endsWith('.bt')).sort();

  it('every keyed delete() in d-scripts/*.bt is given key parts of the types the map was written with', function () {
    const problems = programs.flatMap((file) =>
      keyTypeProblems(fs.readFileSync(path.join(SCRIPTS, file), 'utf8')).map((p) => describeProblem(file, p)));
    assert.deepStrictEqual(problems, [], `cast each key part to one type wherever the map is written, read and deleted:\n${problems.join('\n')}`);
  });

  it('finds the mix that made offcpu.bt count waits twice on bpftrace 0.27 (its old text, test/fixtures/offcpu-mixed-key-types.bt)', function () {
    const old = fs.readFileSync(path.join(__dirname, 'fixtures', 'offcpu-mixed-key-types.bt'), 'utf8');
    const mixed = keyTypeProblems(old).filter((p) => p.problem === 'mixed' && p.part === 0).map((p) => p.map).sort();
    assert.deepStrictEqual(mixed, ['blocked_since_ns', 'chain_of', 'kstack_of', 'since_ns', 'ustack_of']);
    const since = keyTypeProblems(old).find((p) => p.map === 'since_ns');
    assert.deepStrictEqual([...new Set(since.sites.map((s) => s.type))].sort(), ['args->next_pid', 'pid/tid']);
  });

  it('tells the types it reads: casts, reads through variables, maps and tuple fields, arithmetic by its first term', function () {
    const program = `
      tracepoint:syscalls:sys_enter_read { @call[tid] = ((uint64)args->buf, (int64)args->fd); @w[pid, arg1 + 88] = 1; }
      tracepoint:syscalls:sys_exit_read { $c = @call[tid]; $fd = $c.1; @conn[pid, $fd] = 1; }
      tracepoint:syscalls:sys_enter_close { @conn[pid, (int64)args->fd] = 2; delete(@conn[pid, (int64)args->fd]); delete(@call[tid]); }
      uprobe:/x:f { $h = (uint64)0; $h = ($h ^ arg0) * 3; @s[$h] = 1; $d = (int64)(@d[tid] + 1); @d[tid] = $d; @e[tid, $d] = 1; }
      uretprobe:/x:f { delete(@s[arg0]); delete(@w[pid, arg0]); $d = (int64)@d[tid]; delete(@e[tid, $d]); }`;
    assert.deepStrictEqual(keyTypeProblems(program), []);
    // Each of these deletes, with one part typed another way, is reported.
    const mixes = [
      ['delete(@s[arg0])', 'delete(@s[(int64)arg0])', 's'],
      ['@conn[pid, (int64)args->fd] = 2;', '@conn[pid, args->fd] = 2;', 'conn'],
      ['$d = (int64)@d[tid]; delete(@e[tid, $d]);', '$d = (int32)@d[tid]; delete(@e[tid, $d]);', 'e'],
      ['delete(@w[pid, arg0])', 'delete(@w[(uint64)pid, arg0])', 'w'],
      ['delete(@call[tid])', 'delete(@call[args->fd])', 'call'],
    ];
    for (const [from, to, map] of mixes) {
      assert.ok(program.includes(from), from);
      const found = keyTypeProblems(program.replace(from, to)).map((p) => `${p.map} ${p.problem}`);
      assert.deepStrictEqual(found, [`${map} mixed`], to);
    }
    // A variable the text cannot type (a map value that is never assigned) is reported, not passed.
    const untold = keyTypeProblems('uprobe:/x:f { @m[arg0] = 1; } uretprobe:/x:f { $k = @other[tid]; delete(@m[$k]); }');
    assert.deepStrictEqual(untold.map((p) => `${p.map} ${p.problem}`), ['m unknown']);
  });
});
