'use strict';
// Issue 27.11 and 27.12 end to end: a throwaway user's node names itself
// `ev;il<newline>forged;st` and runs a hot function from a script whose
// file name holds U+FFFE, U+FFFF, a control character, ';' and a line
// break (every JavaScript frame names its script). profile --folded/--svg and loop
// --folded, as root: one folded line per stack, no control character, no
// forged line or frame; the SVG is valid XML (XML 1.0's Char production).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');

const TITLE = 'ev;il\nforged;st';   // 15 characters: the whole of comm
const SCRIPT_NAME = 'hot\ufffe\uffff\u0001;x\ny.js';
const SCRIPT = `process.title = ${JSON.stringify(TITLE)};
function hotSpin(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x++; return x; }
setInterval(() => hotSpin(200), 300);
console.log('ready ' + process.pid);
`;

function notXmlChars(text) {
  const bad = [];
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (!(c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd)
      || c >= 0x10000)) bad.push(c.toString(16));
  }
  return bad;
}

describe('27.11, 27.12: a hostile process name and function name in folded stacks and the SVG @tracer', function () {
  this.timeout(240000);
  const user = new HostileUser();
  let pid;
  let dir;

  before(async function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nt-names-'));
    const script = path.join(user.home, SCRIPT_NAME);
    fs.writeFileSync(script, SCRIPT);
    fs.chownSync(script, user.uid, user.gid);
    const target = user.start(process.execPath, ['--perf-basic-prof', script]);
    pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 30000))[1]);
    assert.strictEqual(fs.readFileSync(`/proc/${pid}/comm`, 'utf8'), `${TITLE}\n`, 'the kernel keeps the name as given');
  });
  after(() => {
    killStragglers();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    user.remove();
  });

  function assertFolded(text, ...roots) {
    const lines = text.trim().split('\n');
    assert(lines.length > 0);
    for (const line of lines) {
      assert.match(line, / \d+$/, line);
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(line, /[\x00-\x1f\x7f]/, line);
      assert(roots.some((root) => line.startsWith(root)), line);
    }
    return lines;
  }

  it('profile --folded --svg: the hot function in one frame, no forged line; the SVG every character a Char', async function () {
    const folded = path.join(dir, 'cpu.folded');
    const svg = path.join(dir, 'cpu.svg');
    const nt = runNodetrace(['profile', '-p', String(pid), '-d', '5', '--folded', folded, '--svg', svg]);
    const r = await nt.exit;
    assert.strictEqual(r.code, 0, nt.stderr);
    // A root frame is the sampled thread's name and role: the title the
    // target gave itself, or, for a thread it started before (V8's
    // platform workers, compiling the hot function now and then: CI,
    // 2026-11-30), the name node started with.
    const lines = assertFolded(fs.readFileSync(folded, 'utf8'), 'ev il forged st (', 'node (');
    // ';' became a space. Named from V8's metadata the script's name is whole,
    // its line break shown escaped; from V8's perf map (one line a function)
    // it ends at the line break (the target's own map, its own loss).
    assert(lines.some((l) => /;hotSpin [^;]*hot\ufffe\uffff\\x01 x(\\x0ay\.js:\d+:\d+| y\.js:\d+:\d+)?( \d+$|;)/.test(l)), lines.slice(0, 5).join('\n'));
    const text = fs.readFileSync(svg, 'utf8');
    assert.deepStrictEqual(notXmlChars(text), []);
    assert(text.includes('hot\ufffd\ufffd'), 'the hot function drawn, its non-characters shown as U+FFFD');
  });

  it('loop --stacks --folded: the process name one root frame, escaped', async function () {
    const nt = runNodetrace(['loop', '-p', String(pid), '-d', '5', '--stacks', '--folded', '--over', '100ms']);
    const r = await nt.exit;
    assert.strictEqual(r.code, 0, nt.stderr);
    assertFolded(nt.stdout, 'ev il forged st;');
  });
});
