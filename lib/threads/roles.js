'use strict';
// What a thread of a Node process is, from what identifies it, never from
// what happens to be on its stack when sampled: pure over the facts
// lib/threads/identify.js reads.
//
//   main         the process's first thread (TID = PID): its event loop
//   worker       a worker_threads Worker: its own event loop and V8 heap;
//                its threadId (the one `worker.threadId` gives) and the
//                name it was given (`new Worker(f, { name })`), read from
//                node's Worker object
//   libuv-pool   libuv's thread pool (fs, dns.lookup, crypto, zlib, add-ons)
//   v8-platform  the V8 platform's workers (concurrent GC marking and
//                sweeping, the optimizing compiler) and its delayed-task thread
//   inspector    the inspector's threads (the SIGUSR1 starter, the I/O thread)
//   other        anything else (an add-on's threads, the trace-event agent...)
//
// The function a thread started in (glibc keeps it in the thread's
// descriptor) says which, on every build (measured on official Node 18, 20,
// 22, 24 and 26: docs/reading-output.md, "Threads"):
//   worker                                         libuv's pool (threadpool.c)
//   node::(anonymous namespace)::PlatformWorkerThread(void*)
//   node::WorkerThreadsTaskRunner::DelayedTaskScheduler::Start()::{lambda(void*)#1}
//   node::inspector::(anonymous namespace)::StartIoThreadMain(void*)
//   node::worker::Worker::StartThread(...)::{lambda(void*)#1}
// Node 18 to 22 call every thread "node"; Node 24 and 26 name them
// ("libuv-worker", "V8Worker"/"node-V8Worker", "DelayedTaskSche",
// "SignalInspector", a Worker by its name or "WorkerThread"), which is used
// only where the descriptor cannot be read (a name the application can
// give a Worker, too).

const ROLES = Object.freeze(['main', 'worker', 'libuv-pool', 'v8-platform', 'inspector', 'other']);
const ROLE_LABELS = Object.freeze({
  main: 'main thread',
  worker: 'worker_threads Worker',
  'libuv-pool': 'libuv pool',
  'v8-platform': 'V8 platform workers (GC, compiler)',
  inspector: 'inspector',
  other: 'other threads',
});

// By the demangled name of the function the thread started in.
const ENTRIES = [
  { role: 'libuv-pool', test: /^worker$/ },
  { role: 'v8-platform', test: /^node::(\(anonymous namespace\)::)?PlatformWorkerThread\(|^node::WorkerThreadsTaskRunner::DelayedTaskScheduler::Start\(\)/ },
  { role: 'inspector', test: /^node::inspector::/ },
  { role: 'worker', test: /^node::worker::Worker::StartThread\(/ },
];

// Node 24+'s own thread names (comm, 15 bytes at most), measured on 24.11.0 and 26.10.0.
const COMMS = [
  { role: 'libuv-pool', test: /^libuv-worker$/ },
  { role: 'v8-platform', test: /^(node-)?V8Worker$|^DelayedTaskSche$/ },
  { role: 'inspector', test: /^SignalInspector$/ },
  { role: 'worker', test: /^WorkerThread$/ },
];

// The name node gives a Worker that was given none (Node 24+).
const DEFAULT_WORKER_NAME = 'WorkerThread';

/**
 * @param {object} t { tid, pid, comm, entry: { name, module } | null, worker: { threadId, name } | null }
 * @returns {{ role, how: 'tid'|'entry'|'comm'|null, worker? }}
 *   how: what said it (the TID, the function the thread started in, its name)
 */
function roleOf(t) {
  if (t.tid === t.pid) return { role: 'main', how: 'tid' };
  if (t.worker) return { role: 'worker', how: 'entry', worker: t.worker };
  if (t.entry) {
    if (t.entry.name) {
      const e = ENTRIES.find((r) => r.test.test(t.entry.name));
      if (e) return { role: e.role, how: 'entry' };
    }
    // libuv starts threads for its pool only: an entry in a stripped
    // libuv.so (Debian's) is the pool's.
    if (/^libuv\.so/.test(t.entry.module || '')) return { role: 'libuv-pool', how: 'entry' };
    return { role: 'other', how: 'entry' };
  }
  const c = COMMS.find((r) => r.test.test(t.comm || ''));
  if (c) return { role: c.role, how: 'comm' };
  return { role: 'other', how: null };
}

/** "Worker 2 \"resize\"", "Worker 2", "Worker (thread id unknown)": a Worker's own label. */
function workerLabel(w) {
  const id = w && Number.isSafeInteger(w.threadId) ? `Worker ${w.threadId}` : 'Worker (thread id unknown)';
  return w && w.name && w.name !== DEFAULT_WORKER_NAME ? `${id} "${w.name}"` : id;
}

/** One thread's label in a report: "main thread", "Worker 1 \"alpha\"", "libuv pool"... */
function threadLabel(identity) {
  if (!identity) return 'a thread that exited';
  if (identity.role === 'worker') return workerLabel(identity.worker);
  return ROLE_LABELS[identity.role];
}

/**
 * A thread as the text reports name it: "main thread", "Worker 1 \"churn\"
 * (TID 4250)", "a thread that exited (TID 4251)" (identity null: looked up,
 * gone), "thread (TID 4252)" (identity undefined: never looked up, as in
 * `format` of a capture, so nothing is claimed about it).
 */
function threadReportName(tid, identity) {
  const label = identity === undefined ? 'thread' : threadLabel(identity);
  return identity && identity.role === 'main' ? label : `${label} (TID ${tid})`;
}

/**
 * A thread as the JSON reports name it: { tid, role, label, worker? }
 * (worker: { thread_id, name }); role and label null for a thread whose
 * identity is not known (it exited; `format`).
 */
function threadIdentityJson(tid, identity) {
  return {
    tid,
    role: identity ? identity.role : null,
    label: identity ? threadLabel(identity) : null,
    ...(identity && identity.role === 'worker'
      ? { worker: { thread_id: identity.worker.threadId, name: identity.worker.name || null } } : {}),
  };
}

/**
 * Threads grouped as reports show them: one group each for the main
 * thread and every Worker (each runs its own loop and heap), one for each
 * other role. `rows`: [{ tid, samples... }]; identities: Map(tid -> identity).
 * -> [{ key, role, label, tids: [..], worker? }] in ROLES order, Workers by thread id.
 */
function groupKey(identity, tid) {
  if (!identity) return 'exited';
  if (identity.role === 'worker') return identity.worker && Number.isSafeInteger(identity.worker.threadId) ? `worker:${identity.worker.threadId}` : `worker-tid:${tid}`;
  return identity.role;
}

module.exports = {
  ROLES, ROLE_LABELS, DEFAULT_WORKER_NAME, roleOf, workerLabel, threadLabel, threadReportName, threadIdentityJson,
  groupKey,
};
