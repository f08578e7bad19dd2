'use strict';
// The USDT probes `node -r nodetrace/register` adds for `nodetrace async`
// (lib/async/hook.js fires them, d-scripts/async.bt's @hook part reads
// them): the asynchronous resources that are not AsyncWraps (promises,
// Timeout, Immediate, user AsyncResources), which node's own
// functions (the uprobes) never see. A provider of its own, so that the
// HTTP provider's library (lib/http/probes.js) stays as it was.
//
// One probe a callback, fired at its end; creations and destructions are
// counted in the process and handed over each POLL_MS; a callback's time and
// its resource's wait are measured in the process: a trap costs more than
// the rest of the hook
// (docs/performance.md#nodetrace-async-what-tracing-asyncwrap-operations-costs).
//
//   nodetrace_async:::async-kind    a kind's name, once per kind per tracer
//     arg0 int     the kind (1..MAX_KINDS), as the firing thread numbers it:
//                  each thread (main, workers) numbers its own kinds, so a
//                  kind is the thread ID and this number together
//     arg1 char *  its type as async_hooks names it (Timeout, PROMISE, ...)
//   nodetrace_async:::async-count   resources created and destroyed since the last
//     arg0 int     the kind;  arg1 int  created;  arg2 int  destroyed
//   nodetrace_async:::async-after   a callback ended
//     arg0 int     its kind
//     arg1 int     microseconds from its resource's creation to this callback's
//                  start, at its first callback; -1 at the next ones (and for
//                  a resource created before the hook turned on)
//     arg2 int     nanoseconds it ran, the hook's callbacks nested in it taken out
//     arg3 int     nanoseconds it ran, all included (the tracer takes them out
//                  of the AsyncWrap callback it is nested in)
const ASYNC_PROVIDER = Object.freeze({
  name: 'nodetrace_async',
  module: undefined,
  probes: Object.freeze([
    Object.freeze(['async-after', 'int', 'int', 'int', 'int']),
    Object.freeze(['async-count', 'int', 'int', 'int']),
    Object.freeze(['async-kind', 'int', 'char *']),
  ]),
});

// Kinds a process names at most; the types past them share the last one.
const MAX_KINDS = 256;
// async.bt keys a hook kind as (thread ID << HOOK_THREAD_SHIFT) +
// HOOK_KIND_BASE + kind, beside the AsyncWrap provider numbers (under 100),
// in the same maps: each thread's kinds apart (lib/async/report/hook-kinds.js
// merges them by name). Keys of captures made before threads were told apart are
// HOOK_KIND_BASE + kind (thread 0).
const HOOK_KIND_BASE = 32768;
const HOOK_THREAD_SHIFT = 16;
// How often the hook reads the semaphores: it turns on (and off) at most
// this long after a tracer attaches (leaves).
const POLL_MS = 100;

module.exports = { ASYNC_PROVIDER, MAX_KINDS, HOOK_KIND_BASE, HOOK_THREAD_SHIFT, POLL_MS };
