'use strict';
// `nodetrace async`'s report, byte for byte: each captured trace under
// test/fixtures (each with the .cmd that made it) parsed and rendered as
// text and JSON, compared with the output pinned in
// test/fixtures/async-report/. The other async tests check what the figures
// mean; these hold every line and field, so that a change of shape (moving
// parse, model, text and JSON apart) cannot change what a user reads.
// After a change meant to alter the output: NODETRACE_WRITE_PINNED=1 npx mocha
// test/async-report.test.js rewrites the pinned files; read their diff.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { PROVIDERS } = require('../lib/async/providers');
const { parseAsync } = require('../lib/async/report/build-model');
const { groupLiveStacks } = require('../lib/async/report/live-stacks');
const { renderAsyncText } = require('../lib/async/report/text');
const { renderAsyncJSON } = require('../lib/async/report/json');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');

const FIXTURES = path.join(__dirname, 'fixtures');
const PINNED = path.join(FIXTURES, 'async-report');
const WRITE = process.env.NODETRACE_WRITE_PINNED === '1';

const capture = (name) => splitAtEndMarker(fs.readFileSync(path.join(FIXTURES, name), 'utf8').split('\n'));

// Named frames as lib/loop/name-stacks.js gives them: native constructors
// above JavaScript, and a native-only stack (a server's accept).
const NATIVE = ['node::AsyncWrap::AsyncReset(v8::Local<v8::Object>, double, bool)+0',
  'node::HandleWrap::HandleWrap(node::Environment*, v8::Local<v8::Object>, uv_handle_s*, node::AsyncWrap::ProviderType)+44',
  'node::TCPWrap::New(v8::FunctionCallbackInfo<v8::Value> const&)+235'];
const JS = [...NATIVE, 'Socket.connect node:net:1202:36', 'openLeakedConnection /app/leak.js:93:30'];
function nameStacks(r) {
  r.liveStacks.forEach((g, i) => {
    g.stack = { frames: g.stack.chain ? (i % 2 ? JS : ['Builtins_JSBuiltinsConstructStub+207', ...JS]) : NATIVE };
  });
  return r;
}

// Every other kept function named, the rest shown by address.
function nameFunctions(r) {
  for (const k of r.kinds) k.functions.forEach((f, i) => { if (i % 2 === 0 && f.sfi !== '0') f.name = `cb${i} (/app/a.js:${i + 1}:1)`; });
  return r;
}

// A kind whose live operations rose through the trace (a leak), one that
// churned: the growing verdict and its sentence.
function growingTrace() {
  const during = [];
  [0, 3, 6, 9, 12, 15, 18, 21].forEach((alive, s) => during.push(`ALIVE ${1000 * (s + 1)}`, `@alive[40]: ${alive}`, `@alive[8]: ${s % 2}`));
  const maps = ['@created[40]: 21', '@callbacks[40]: 5', '@created[8]: 30', '@destroyed[8]: 30', '@traced_ns: 8000000000',
    '@loop_busy_ns: 4000000', '@loop_callback_ns[40]: 1000000', '@loop_callback_ns[8]: 2000000'].join('\n');
  return { during, maps };
}

const MAIN = { tid: 8138, role: 'main', label: 'main thread' };
const WORKER = { tid: 8648, role: 'worker', label: 'Worker 1' };

const CASES = [
  { name: 'mix', make: () => parseAsync(capture('bpftrace-async-mix.out'), { providers: PROVIDERS[20] }),
    options: { pid: 1562, version: '20.20.2', tracer: 'bpftrace' } },
  { name: 'mix-top', make: () => parseAsync(capture('bpftrace-async-mix.out'), { providers: PROVIDERS[20] }),
    options: { pid: 1562, version: '20.20.2', tracer: 'bpftrace', top: 4 } },
  { name: 'mix-unnamed', make: () => parseAsync(capture('bpftrace-async-mix.out'), { providers: null, attachedNs: 12.5e9 }),
    options: { pid: 1, tracer: 'bpftrace', top: 3 } },
  { name: 'dtrace-mix', make: () => parseAsync(capture('dtrace-async-mix.out'), { providers: PROVIDERS[20], tracer: 'dtrace' }),
    options: { pid: 1562, version: '20.20.2', tracer: 'dtrace' } },
  { name: 'hook', make: () => parseAsync(capture('bpftrace-async-hook.out'), { providers: PROVIDERS[20], hook: true }),
    options: { pid: 7515, version: '20.20.2', tracer: 'bpftrace' } },
  { name: 'hook-worker', make: () => parseAsync(capture('bpftrace-async-hook-worker.out'), { providers: PROVIDERS[20], hook: true }),
    options: { pid: 8138, version: '20.20.2', tracer: 'bpftrace', thread: MAIN, workers: [WORKER] } },
  { name: 'hook-worker-thread', make: () => nameFunctions(parseAsync(capture('bpftrace-async-hook-worker.out'), { providers: PROVIDERS[20], hook: true })),
    options: { pid: 1, version: '20.20.2', tracer: 'bpftrace', thread: WORKER, workers: [WORKER, { tid: 8650, label: 'Worker 2' }] } },
  { name: 'worker-threads', make: () => parseAsync(capture('bpftrace-async-worker-threads.out'), { providers: PROVIDERS[20], hook: true }),
    options: { pid: 19864, version: '20.20.2', tracer: 'bpftrace', thread: { tid: 19864, role: 'main', label: 'main thread' },
      workers: [{ tid: 20193, label: 'Worker 1' }],
      identityOf: (tid) => ({ 19864: { tid, role: 'main' }, 20193: { tid, role: 'worker', worker: { threadId: 1, name: null } } })[tid] || null } },
  { name: 'stacks-raw', make: () => nameFunctions(groupLiveStacks(parseAsync(capture('bpftrace-async-stacks.out'), { providers: PROVIDERS[20], stacks: true }))),
    options: { pid: 1, version: '20.20.2', tracer: 'bpftrace' } },
  { name: 'stacks-named', make: () => groupLiveStacks(nameStacks(parseAsync(capture('bpftrace-async-stacks.out'), { providers: PROVIDERS[20], stacks: true }))),
    options: { pid: 1, version: '20.20.2', tracer: 'bpftrace' } },
  { name: 'stacks-0.27', make: () => groupLiveStacks(parseAsync(capture('bpftrace-0.27-async-stacks.out'), { providers: PROVIDERS[20], stacks: true })),
    options: { pid: 1, version: '20.20.2', tracer: 'bpftrace' } },
  { name: 'growing', make: () => parseAsync(growingTrace(), { providers: PROVIDERS[20] }),
    options: { pid: 42, version: '20.20.2', tracer: 'bpftrace' } },
  { name: 'empty', make: () => parseAsync({ during: [], maps: '' }, { providers: PROVIDERS[20] }),
    options: { pid: 42, tracer: 'bpftrace' } },
];

describe('nodetrace async: the report byte for byte (test/fixtures/async-report)', function () {
  for (const c of CASES) {
    for (const [ext, render] of [['txt', renderAsyncText], ['json', renderAsyncJSON]]) {
      it(`${c.name}.${ext}`, function () {
        const out = render(c.make(), c.options);
        const file = path.join(PINNED, `${c.name}.${ext}`);
        if (WRITE) fs.writeFileSync(file, out);
        assert.strictEqual(out, fs.readFileSync(file, 'utf8'));
      });
    }
  }
});
