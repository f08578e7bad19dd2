'use strict';
// The USDT probes `node -r nodetrace/register` adds for `nodetrace async`
// (lib/async/hook.js fires them, d-scripts/async.bt's @hook part reads
// them): the asynchronous resources that are not AsyncWraps (promises,
// Timeout, Immediate, TickObject, user AsyncResources), which node's own
// functions (the uprobes) never see. A provider of its own, so that the
// HTTP provider's library (lib/http/probes.js) stays as it was.
//
//   nodetrace_async:::async-kind     a kind's name, once per kind per tracer
//     arg0 int     the kind (1..MAX_KINDS, per process: the main thread's numbering)
//     arg1 char *  its type as async_hooks names it (Timeout, PROMISE, ...)
//   nodetrace_async:::async-init     a resource created
//     arg0 int     its kind;  arg1 int  its async ID
//   nodetrace_async:::async-before   its callback starts
//     arg0 int     its kind;  arg1 int  its async ID
//   nodetrace_async:::async-after    its callback ended
//     arg0 int     its kind
//   nodetrace_async:::async-destroy  it is destroyed (a promise: collected)
//     arg0 int     its kind;  arg1 int  its async ID
const ASYNC_PROVIDER = Object.freeze({
  name: 'nodetrace_async',
  module: undefined,
  probes: Object.freeze([
    Object.freeze(['async-after', 'int']),
    Object.freeze(['async-before', 'int', 'int']),
    Object.freeze(['async-destroy', 'int', 'int']),
    Object.freeze(['async-init', 'int', 'int']),
    Object.freeze(['async-kind', 'int', 'char *']),
  ]),
});

// Kinds a process names at most; the types past them share the last one.
const MAX_KINDS = 256;
// async.bt keys a hook kind as HOOK_KIND_BASE + kind, beside the AsyncWrap
// provider numbers (under 100), in the same maps.
const HOOK_KIND_BASE = 32768;
// How often the hook reads the semaphores: it turns on (and off) at most
// this long after a tracer attaches (leaves).
const POLL_MS = 100;

module.exports = { ASYNC_PROVIDER, MAX_KINDS, HOOK_KIND_BASE, POLL_MS };
