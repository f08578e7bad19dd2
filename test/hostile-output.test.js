'use strict';
// 35.9: one escaping for every output. Every command's renderer is fed,
// where others control text (a function's, a thread's, a process's, a
// container's name; a path, a URL, a method, a log record, a core's command
// line), a string holding what a terminal obeys or reorders: ESC, BEL, the
// C1 controls CSI (U+009B) and OSC (U+009D), the bidirectional override
// U+202E, an isolate, the marks U+200F and U+061C, U+2028, and a line break
// before a forged line. None may come out raw, in text or in JSON; JSON
// carries the string back whole (\u escapes); text keeps it on its line.
// The models are the real captures of each command's unit tests.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { safeText, safeJson } = require('../lib/terminal-safe');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');

const FORGED = 'FORGED row 100.0%';
const HOSTILE = `h\x1b[2J\x07\u009b31m\u009d0;t\x07\u202eevil\u2066x\u2069\u200f\u061c\u200e\u2028\t\n${FORGED}`;
// Every character the one escaping takes, as the outputs may never hold it.
// eslint-disable-next-line no-control-regex
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const WHO = {
  pid: 4242, pidInside: 1, otherMounts: true, uid: 1001, user: `mallory${HOSTILE}`,
  container: { id: 'ab'.repeat(32), runtime: 'podman', name: `web${HOSTILE}` },
};

function assertText(out, what) {
  assert.strictEqual(typeof out, 'string', what);
  const raw = RAW.exec(out);
  assert(!raw, `${what}: U+${raw && raw[0].charCodeAt(0).toString(16).padStart(4, '0')} raw in ${JSON.stringify(out.slice(Math.max(0, raw && raw.index - 40), raw && raw.index + 40))}`);
  const forged = out.split('\n').find((l) => l.trimStart().startsWith(FORGED));
  assert(!forged, `${what}: a line of the hostile text's own: ${JSON.stringify(forged)}`);
}

// JSON (one document, or one a line): nothing raw, parses, and gives the
// hostile string back whole where `holds`.
function assertJson(out, what, holds = true) {
  const raw = RAW.exec(out);
  assert(!raw, `${what}: U+${raw && raw[0].charCodeAt(0).toString(16).padStart(4, '0')} raw in JSON`);
  let values;
  try {
    values = [JSON.parse(out)];
  } catch {
    values = out.trim().split('\n').map((l) => JSON.parse(l));
  }
  if (holds) assert(JSON.stringify(values).includes(JSON.stringify(HOSTILE).slice(1, -1)), `${what}: the hostile text not given back whole`);
}

describe('35.9: one escaping for every output', function () {
  it('the one function: text shows each character as \\xNN or \\uNNNN; JSON as \\u escapes, the same value back', function () {
    assert.strictEqual(safeText('\u202eA\u2066B\u200f\u061c\u2028\u009b\x1b', { oneLine: true }), '\\u202eA\\u2066B\\u200f\\u061c\\u2028\\u009b\\x1b');
    assert.strictEqual(safeText('a\nb\tc'), 'a\nb\tc', 'multi-line text keeps its lines and tabs');
    assert.strictEqual(safeText('a\nb\tc', { oneLine: true }), 'a\\x0ab\\x09c');
    const json = safeJson({ [HOSTILE]: HOSTILE });
    assert.doesNotMatch(json, RAW);
    assert.deepStrictEqual(JSON.parse(json), { [HOSTILE]: HOSTILE });
    assert.strictEqual(safeJson('\u202e', 0), '"\\u202e"');
  });

  it('latency and format: a path the process chose', function () {
    const { buildModel } = require('../lib/latency/report/build-model');
    const { summarize } = require('../lib/latency/report/summary');
    const { renderText } = require('../lib/latency/report/text');
    const { renderJson } = require('../lib/latency/report/json');
    // The capture's hostile path's NAME line, given HOSTILE instead.
    const bytes = Buffer.alloc(128);
    Buffer.from(HOSTILE, 'utf8').copy(bytes);
    const words = Array.from({ length: 16 }, (_, i) => bytes.readBigUInt64LE(i * 8).toString(16)).join(' ');
    const lines = fixture('bpftrace-addon-latency-names.out').split('\n')
      .map((l) => (l.startsWith('NAME 5699431744740608 262 ') ? `NAME 5699431744740608 262 ${words}` : l));
    const report = summarize(buildModel(splitAtEndMarker(lines), { tracer: 'bpftrace', traceNs: 60e9 }));
    assertText(renderText(report, { breakdownHistograms: true }), 'latency text');
    assertJson(renderJson(report, { process: WHO }), 'latency --json');
  });

  it('gc: the process\'s identity (its user, its container)', function () {
    const { parseGc, renderGcText, renderGcJSON } = require('../lib/gc/report');
    const r = parseGc('@pause_us[scavenge]:\n[8, 16)   3 |@@@@@|\n@pauses[scavenge]: 3\n@traced_ns: 1000000000\n', { tracer: 'bpftrace' });
    assertText(renderGcText(r, { pid: 4242, who: WHO }), 'gc text');
    assertJson(renderGcJSON(r, { pid: 4242, who: WHO, tracer: 'bpftrace' }), 'gc --json');
  });

  it('loop: the frames of a stall, the process name in --folded', function () {
    const { parseLoop, renderLoopText, renderLoopJSON, foldedStacks } = require('../lib/loop/report');
    const r = parseLoop(splitAtEndMarker(fixture('bpftrace-loop-stacks.out').split('\n')), { tracer: 'bpftrace' });
    const o = { pid: 4242, who: WHO, tracer: 'bpftrace', overUs: 100000, top: 3, wallMinusMonoNs: 0n, stacksWanted: true };
    r.stacks = r.stacks.map((s) => ({ ...s, frames: [...s.frames, HOSTILE] }));
    assertText(renderLoopText(r, o), 'loop text');
    assertJson(renderLoopJSON(r, o), 'loop --json');
    assertText(foldedStacks(r.stacks, { processName: HOSTILE }), 'loop --folded');
  });

  it('async: a type the process named, the process\'s identity', function () {
    const { parseAsync } = require('../lib/async/report/build-model');
    const { renderAsyncText } = require('../lib/async/report/text');
    const { renderAsyncJSON } = require('../lib/async/report/json');
    const { PROVIDERS } = require('../lib/async/providers');
    const r = parseAsync(splitAtEndMarker(fixture('bpftrace-async-hook.out').split('\n')), { providers: PROVIDERS[20], hook: true });
    r.kinds[0].name = HOSTILE;
    r.kinds[0].growing = true;
    assertText(renderAsyncText(r, { pid: 4242, who: WHO, version: '20.20.2' }), 'async text');
    assertJson(renderAsyncJSON(r, { pid: 4242, who: WHO, tracer: 'bpftrace', version: '20.20.2' }), 'async --json');
  });

  it('profile and --off-cpu: function and thread names, the process name in --folded', function () {
    const { parseProfile, parseOffCpu } = require('../lib/profile/parse');
    const { nameStacks } = require('../lib/profile/name-stacks');
    const { summarize, renderText, renderJson } = require('../lib/profile/report');
    const { summarizeOffCpu, renderOffCpuText, renderOffCpuJson } = require('../lib/profile/offcpu-report');
    const { renderFolded } = require('../lib/profile/folded');
    const hostileFrames = (named) => ({
      ...named,
      stacks: named.stacks.map((s) => ({ ...s, comm: HOSTILE, frames: [...s.frames, { name: HOSTILE, category: 'js', origin: 'app' }] })),
    });
    const p = hostileFrames(nameStacks(parseProfile(splitAtEndMarker(fixture('bpftrace-profile-keys.out').split('\n')).maps, 'profile'), null, null));
    const s = summarize(p, { pid: 4242, who: WHO, hz: 99, seconds: 2 });
    assertText(renderText(s), 'profile text');
    assertJson(renderJson(s), 'profile --json');
    assertText(renderFolded(p, { pid: 4242, processName: HOSTILE }), 'profile --folded');
    const parsed = parseOffCpu(splitAtEndMarker(fixture('bpftrace-offcpu.out').split('\n')).maps);
    const off = summarizeOffCpu(hostileFrames(nameStacks(parsed, null, null)),
      { pid: 4242, who: WHO, seconds: 3, threads: parsed.threads.map((t) => ({ ...t, comm: HOSTILE })) });
    assertText(renderOffCpuText(off), 'profile --off-cpu text');
    assertJson(renderOffCpuJson(off), 'profile --off-cpu --json');
  });

  it('http: a request\'s method, URL and error, its route in the histograms, the process\'s identity', function () {
    const { renderLine, renderJSONLine } = require('../lib/http/records');
    const { LatencyStats, renderHistograms, histogramsJSON } = require('../lib/http/histograms');
    const r = { pid: 4242, ns: 1n, direction: 'server', status: 0, us: 1500, method: HOSTILE, url: `/a/${HOSTILE}`, error: HOSTILE };
    assertText(renderLine(r, { wallMinusMonoNs: 0n }), 'http line');
    assertJson(renderJSONLine(r, { wallMinusMonoNs: 0n }), 'http --json line');
    for (const merge of [false, true]) {
      const stats = new LatencyStats({ by: 'route', merge, identify: () => WHO });
      stats.add({ ...r, status: 200, error: null });
      assertText(renderHistograms(stats), `http --latency${merge ? ' --merge' : ''}`);
      assertJson(histogramsJSON(stats), `http --latency --json${merge ? ' --merge' : ''}`);
    }
  });

  it('ps: a command line, an executable, a user, a container', function () {
    const { verdicts } = require('../lib/ps/verdicts');
    const { renderText, renderJson } = require('../lib/ps/render');
    const f = {
      pid: 4242, who: WHO, uid: 1001, user: HOSTILE, exe: `/opt/${HOSTILE}/node`, command: `node ${HOSTILE}`, version: '22.12.0',
      latency: true, gc: true, async: true, perfMap: { path: `/tmp/${HOSTILE}`, refused: HOSTILE }, snoop: false, http: true, gcore: true,
    };
    const rows = [{ facts: f, verdicts: verdicts(f) }];
    assertText(renderText(rows), 'ps text');
    assertJson(renderJson(rows), 'ps --json');
  });

  it('stack: a core\'s command line, its notes, its frames', function () {
    const { renderStacksText, renderStacksJson } = require('../lib/stack/render');
    const frames = [
      { kind: 'native', text: HOSTILE, module: HOSTILE, pc: 0x10n },
      { kind: 'js', text: `${HOSTILE} (/a.js:1:2)`, name: HOSTILE, file: '/a.js', line: 1, column: 2, tier: 'interpreted', pc: 0x20n, inlined: [{ text: HOSTILE, name: HOSTILE }] },
    ];
    const model = { file: '/c/core', pid: 42, command: HOSTILE, object: '/usr/bin/node', v8: '11.3', notes: [HOSTILE], threads: [{ tid: 42, frames, ended: 'x' }] };
    assertText(renderStacksText(model), 'stack text');
    assertJson(renderStacksJson(model), 'stack --json');
  });

  it('ebadf: the hit\'s thread name, executable and frames', function () {
    const { renderHit } = require('../lib/ebadf/hit-report');
    const rec = {
      n: 1, of: 1, hit: { pid: 42, tid: 43, errno: 9, syscall: 'close', comm: HOSTILE }, wallMs: Date.UTC(2026, 10, 21),
      errnoName: 'EBADF', exe: `/opt/${HOSTILE}`, isNode: true, who: WHO, mode: 'stop', perfMap: `/tmp/${HOSTILE}`, resumeText: 'yes',
      symbolized: { frames: [{ kind: 'native', text: HOSTILE, module: HOSTILE }, { kind: 'js', symbol: `JS:~${HOSTILE}`, text: '' }], perfMapUsed: true, interpreted: 0, jitUnnamed: 0 },
    };
    assertText(renderHit(rec), 'ebadf hit');
  });

  it('doctor -p: an executable\'s path', function () {
    const { describe: describeProcess, render, renderJson } = require('../lib/process-checks');
    const report = describeProcess({
      pid: 9, exePath: `/opt/${HOSTILE}`, version: null, otherMountNamespace: true,
      found: { points: {}, missing: [{ name: 'uv_queue_work', why: `not in ${HOSTILE}` }] },
    });
    assertText(render(report), 'doctor -p text');
    assertJson(renderJson(report), 'doctor -p --json');
  });

  it('snoop: a log record, a line that is not one, a record that claims another PID', function () {
    const { lineFor } = require('../lib/snoop/format');
    const record = JSON.stringify({ name: HOSTILE, pid: 42, msg: HOSTILE, v: 0, level: 30, hostname: 'h', time: '2026-11-29T00:00:00.000Z' });
    for (const mode of ['json', 'raw', 'bunyan', 'short', 'long']) {
      for (const [ev, what] of [[{ type: 'record', pid: 42, tid: 42, text: record }, 'a record'], [{ type: 'record', pid: 42, tid: 42, text: HOSTILE }, 'not JSON'],
        [{ type: 'record', pid: 43, tid: 43, text: record }, 'another PID\'s'], [{ type: 'truncated', pid: 42, tid: 42, level: 30, bytesSeen: 4179, prefix: HOSTILE }, 'cut']]) {
        const out = lineFor(ev, mode, (pid) => [pid], () => `web${HOSTILE}`);
        if (out === null || out === undefined) continue;
        if (mode === 'json' || mode === 'raw') assertJson(out, `snoop -o ${mode}: ${what}`, false);
        else assertText(out.replace(/\n$/, ''), `snoop -o ${mode}: ${what}`);
      }
    }
  });
});
