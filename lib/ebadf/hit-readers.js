'use strict';
// ebadf's readers of what a hit needs (symbols, V8's metadata, the
// stopped thread's memory): worker threads (hit-reader-worker.js), one per
// user whose processes hit, each request with a deadline. Reading another
// user's files and memory never blocks nodetrace's main thread, which goes
// on handling hits and telling the watchdog it is alive; a user's slow
// files delay only that user's own hits; and a request past its deadline
// ends with its worker (terminated, its user's next request gets a new
// one), so that the process it is for is resumed on time and its hit said
// with what was read.
const path = require('path');
const { Worker } = require('worker_threads');
const { LIMITS } = require('../limits');
const { runBudget } = require('../memory-budget');

const WORKER = path.join(__dirname, 'hit-reader-worker.js');
// Workers at once, each one's heap, its share of the symbolizer's budget
// and of parsed source maps (lib/limits.js says why each).
const MAX_WORKERS = LIMITS.HIT_READERS;
const WORKER_HEAP_MB = LIMITS.HIT_READER_HEAP_MB;
const WORKER_CACHE_BYTES = Math.floor(LIMITS.SYMBOL_CACHE_BYTES / MAX_WORKERS);
const WORKER_MAP_BYTES = LIMITS.HIT_READER_MAP_BYTES;

class HitReaders {
  /**
   * @param {object} [o] { maxWorkers, spare: keep a worker started ahead,
   *   its modules loaded, for the next user whose process hits (starting
   *   one took seconds of the stop on a loaded host) }
   */
  constructor({ maxWorkers = MAX_WORKERS, spare = false } = {}) {
    this.maxWorkers = maxWorkers;
    this.readers = new Map();   // key (a uid) -> { worker, queue, current, usedAt }
    this.nextId = 1;
    this.closed = false;
    this.keepSpare = spare;
    this.spare = null;
    this.refillSpare();
  }

  refillSpare() {
    if (!this.keepSpare || this.spare || this.closed) return;
    const worker = this.spawn();
    const gone = () => { if (this.spare === worker) this.spare = null; };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.spare = worker;
  }

  spawn() {
    // The run's memory budget, shared: what the worker holds of it is kept
    // in its ledger too, and given back when it exits, terminated in the
    // middle of a read or not.
    const budget = runBudget();
    const ledger = new SharedArrayBuffer(8);
    const worker = new Worker(WORKER, {
      workerData: { cacheBytes: WORKER_CACHE_BYTES, mapBytes: WORKER_MAP_BYTES, budget: budget.shared, ledger },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      stdout: false,
      stderr: false,
    });
    worker.once('exit', () => budget.releaseLedger(ledger));
    worker.unref();
    return worker;
  }

  /**
   * Runs `request` ({ op, ... }: hit-reader-worker.js) in `key`'s worker
   * -> { value } | { error } | { timedOut: true, ms }, never rejects.
   * @param {string|number} key whose files and memory it reads (a uid)
   * @param {object} request
   * @param {object} o { deadlineMs } counted from when the worker takes it
   */
  run(key, request, { deadlineMs }) {
    if (this.closed) return Promise.resolve({ error: 'nodetrace is ending' });
    return new Promise((resolve) => {
      const reader = this.readerFor(String(key));
      reader.queue.push({ request: { ...request, id: this.nextId++ }, deadlineMs, resolve });
      this.pump(reader);
    });
  }

  readerFor(key) {
    if (this.readers.has(key)) return this.readers.get(key);
    if (this.readers.size >= this.maxWorkers) {
      const idle = [...this.readers].filter(([, r]) => !r.current && !r.queue.length)
        .sort((a, b) => a[1].usedAt - b[1].usedAt)[0];
      if (idle) {
        this.retire(idle[1]);
        this.readers.delete(idle[0]);
      } else {
        return [...this.readers.values()].sort((a, b) => a.queue.length - b.queue.length)[0];
      }
    }
    const reader = { key, worker: null, queue: [], current: null, usedAt: Date.now() };
    this.readers.set(key, reader);
    return reader;
  }

  start(reader) {
    const worker = this.spare || this.spawn();
    this.spare = null;
    worker.on('message', (reply) => {
      const job = reader.current;
      if (!job || reply.id !== job.request.id) return;
      this.finish(reader, 'error' in reply ? { error: reply.error } : { value: reply.value });
    });
    // A worker that dies (out of its heap, a crash): its request says so.
    const died = (why) => {
      if (reader.worker !== worker) return;
      reader.worker = null;
      if (reader.current) this.finish(reader, { error: why });
    };
    worker.on('error', (err) => died(`the reader failed: ${String(err && err.message).split('\n')[0]}`));
    worker.on('exit', (code) => died(`the reader exited (${code})`));
    reader.worker = worker;
  }

  pump(reader) {
    if (reader.current || !reader.queue.length) return;
    if (!reader.worker) this.start(reader);
    const job = reader.queue.shift();
    reader.current = job;
    reader.usedAt = Date.now();
    job.started = Date.now();
    job.timer = setTimeout(() => {
      // Past its deadline: the worker goes, with what it was reading.
      this.retire(reader);
      // (true, not the ms: a deadline passed within its first millisecond
      // would read 0, which callers would take for no deadline passed.)
      this.finish(reader, { timedOut: true, ms: Date.now() - job.started });
    }, job.deadlineMs);
    reader.worker.postMessage(job.request);
  }

  finish(reader, result) {
    const job = reader.current;
    if (!job) return;
    clearTimeout(job.timer);
    reader.current = null;
    job.resolve(result);
    this.pump(reader);
    // (After the job, not beside it: starting one takes CPU the job needs.)
    this.refillSpare();
  }

  retire(reader) {
    const { worker } = reader;
    reader.worker = null;
    if (worker) worker.terminate().catch(() => {});
  }

  close() {
    this.closed = true;
    if (this.spare) this.spare.terminate().catch(() => {});
    this.spare = null;
    for (const reader of this.readers.values()) {
      for (const job of reader.queue) job.resolve({ error: 'nodetrace is ending' });
      reader.queue = [];
      if (reader.current) this.finish(reader, { error: 'nodetrace is ending' });
      this.retire(reader);
    }
    this.readers.clear();
  }
}

module.exports = { HitReaders, MAX_WORKERS, WORKER_HEAP_MB };
