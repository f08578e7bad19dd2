'use strict';
// Who each thread of a Node process is (lib/threads/roles.js says what the
// roles are), read from the process while it runs, with no stop and no
// ptrace:
//
// 1. glibc's descriptor of each thread (struct pthread) sits at the top of
//    the thread's stack mapping (an anonymous rw-p mapping right above its
//    guard page): found by its two self pointers (tcb at 0, self at 16) and
//    its TID (at 0x2d0 on glibc 2.26 to 2.41: the fixed tcbhead_t is 0x2c0
//    bytes, then a list head). The main thread's lives elsewhere (TID = PID).
// 2. In it, the function the thread started in (start_routine) and its
//    argument: the first word after the TID that points into a mapped file's
//    code (0x638 on Debian 12's glibc 2.36; looked for, not assumed), named
//    from the symbols of that file.
// 3. A Worker's thread starts with its node::worker::Worker as argument,
//    which holds the thread's own descriptor address (its uv_thread_t tid_):
//    the object is checked by that before anything else in it is read; the
//    Worker's thread id 0x70 bytes further (its ThreadId) and its name (a
//    std::string) 0x80 further. Measured with gdb on official Node 18.20.8,
//    20.20.2, 22.12.0, 24.11.0 and 26.10.0 (tid_ at 0x88, 0x88, 0x90, 0xa0,
//    0x98); test/threads.test.js holds it on every build of the matrix,
//    against the thread ids and TIDs the Workers report themselves.
//
// Everything read is the target's own memory: reads are bounded (a byte
// budget, a count of mappings and threads: lib/limits.js), a name is made safe
// (lib/v8/names.js) and no more than a label. A process can lie about its
// own threads this way, as it can by naming them; it cannot make nodetrace
// read without bound or print a control character.
const fs = require('fs');
const path = require('path');
const { ProcessMemory } = require('../v8/memory');
const { parseMaps, findElfSymbolsAt, holdElfFile } = require('../symbolize');
const { objectFiles } = require('../proc/code-objects');
const { parseStat } = require('../proc/stat');
const { readProcText } = require('../proc/read-bounded');
const { safeName } = require('../v8/names');
const { demangleNames } = require('../demangle');
const { roleOf } = require('./roles');
const { LIMITS } = require('../limits');

const DESCRIPTOR = Object.freeze({ TCB: 0, SELF: 16, TID: 0x2d0, ENTRY_FROM: 0x2d8, ENTRY_TO: 0x900, ALIGN: 64 });
const STACK_TOP_BYTES = LIMITS.THREAD_STACK_TOP_BYTES;
const WORKER = Object.freeze({ TID_AT: [0x88, 0x90, 0x98, 0xa0], THREAD_ID_AFTER: 0x70, NAME_AFTER: 0x80,
  BYTES: 0x140 });
const { MAX_THREADS, MAX_STACK_MAPPINGS, MAX_THREAD_NAME_BYTES: MAX_NAME_BYTES,
  THREADS_MEMORY_BUDGET: MEMORY_BUDGET } = LIMITS;

function u64(buf, off) {
  if (off < 0 || off + 8 > buf.length) return -1;
  const v = buf.readBigUInt64LE(off);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(v);
}

/**
 * The mappings that can be a thread's stack: anonymous, rw-p, right above a
 * guard page (---p) that ends where they start. Pure.
 */
function stackMappings(maps) {
  const out = [];
  for (let i = 1; i < maps.length && out.length < MAX_STACK_MAPPINGS; i++) {
    const m = maps[i];
    const below = maps[i - 1];
    if (m.perms !== 'rw-p' || m.inode !== '0' || m.path || below.perms !== '---p' || below.end !== m.start) continue;
    if (m.end - m.start < STACK_TOP_BYTES) continue;
    out.push(m);
  }
  return out;
}

/**
 * Thread descriptors in the tops of stack mappings: tops [{ address, bytes }],
 * tids: Set of the process's thread IDs -> Map(tid -> { pd, bytes (from the
 * descriptor on) }). Pure.
 */
function findDescriptors(tops, tids) {
  const found = new Map();
  for (const { address, bytes } of tops) {
    const first = (DESCRIPTOR.ALIGN - (address % DESCRIPTOR.ALIGN)) % DESCRIPTOR.ALIGN;
    for (let o = first; o + DESCRIPTOR.TID + 4 <= bytes.length; o += DESCRIPTOR.ALIGN) {
      const pd = address + o;
      if (u64(bytes, o + DESCRIPTOR.TCB) !== pd || u64(bytes, o + DESCRIPTOR.SELF) !== pd) continue;
      const tid = bytes.readInt32LE(o + DESCRIPTOR.TID);
      if (tids.has(tid) && !found.has(tid)) found.set(tid, { pd, bytes: bytes.subarray(o) });
    }
  }
  return found;
}

/**
 * The function a thread started in and its argument, from its descriptor:
 * the first word past the TID that `isCode` takes for code. Pure.
 * -> { entry, arg } or null
 */
function startRoutine(bytes, isCode) {
  for (let o = DESCRIPTOR.ENTRY_FROM; o + 16 <= Math.min(bytes.length, DESCRIPTOR.ENTRY_TO); o += 8) {
    const w = u64(bytes, o);
    if (w > 0 && isCode(w)) return { entry: w, arg: u64(bytes, o + 8) };
  }
  return null;
}

/**
 * A Worker's facts from the object its thread started with, if it is one:
 * it must hold the thread's own descriptor address where node keeps it.
 * `object`: the object's first WORKER.BYTES bytes; `readAt(address, n)`
 * for its name. -> { threadId, name } or null. Pure but for readAt.
 */
function workerFacts(object, objectAddress, pd, readAt) {
  for (const at of WORKER.TID_AT) {
    if (u64(object, at) !== pd) continue;
    const threadId = u64(object, at + WORKER.THREAD_ID_AFTER);
    if (!(threadId >= 1 && threadId < 2 ** 32)) return null;
    return { threadId, name: stdString(object, objectAddress, at + WORKER.NAME_AFTER, readAt) };
  }
  return null;
}

// A libstdc++ std::string (pointer, length, 16 bytes of inline buffer) in
// `object` at `at`: its first MAX_NAME_BYTES bytes, made safe; null if unreadable.
function stdString(object, objectAddress, at, readAt) {
  const ptr = u64(object, at);
  const length = u64(object, at + 8);
  if (ptr <= 0 || length < 0 || length > 1 << 20) return null;
  if (length === 0) return '';
  const n = Math.min(length, MAX_NAME_BYTES);
  const inline = ptr === objectAddress + at + 16;
  const bytes = inline ? (at + 16 + n <= object.length ? object.subarray(at + 16, at + 16 + n) : null) : readAt(ptr, n);
  if (!bytes) return null;
  return safeName(bytes.toString('utf8'), { max: MAX_NAME_BYTES, truncated: length > n });
}

function listTids(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).filter((e) => /^[0-9]+$/.test(e)).map(Number).slice(0, MAX_THREADS);
  } catch {
    return [];
  }
}

function taskStat(pid, tid) {
  try {
    return parseStat(readProcText(`/proc/${pid}/task/${tid}/stat`, { throws: true }));
  } catch {
    return null;
  }
}

/**
 * The threads of one process, identified as they appear; each once (by
 * TID and start time: a TID reused by a later thread is identified anew).
 */
class ThreadRoster {
  /**
   * @param {number} pid
   * @param {object} [o] { openMemory(pid) -> lib/v8/memory.js memory (tests),
   *   symbolsAt(file, offsets) -> Map(offset -> name) (lib/symbolize.js findElfSymbolsAt),
   *   holdFile(file) -> { path, close() } or null (lib/symbolize.js holdElfFile) }
   */
  constructor(pid, { openMemory,
    symbolsAt = (file, offsets) => findElfSymbolsAt(file, offsets, { followLinks: true }),
    holdFile = holdElfFile } = {}) {
    this.pid = pid;
    this.openMemory = openMemory || ((p) => new ProcessMemory(p, { budget: MEMORY_BUDGET }));
    this.symbolsAt = symbolsAt;
    this.holdFile = holdFile;
    this.threads = new Map();   // tid -> identity (or, not named yet, { tid, startTime, unnamed })
    this.entryNames = new Map();   // `${dev}:${inode}:${vaddr}` -> demangled name or null
    // `${dev}:${inode}` -> an open file of a mapped object whose entries are
    // not named yet (lib/symbolize.js holdElfFile), or null: none could be opened.
    this.heldFiles = new Map();
    this.unnamedCount = 0;
    this.memory = undefined;
  }

  memoryOf() {
    if (this.memory === undefined) {
      try { this.memory = this.openMemory(this.pid); } catch { this.memory = null; }
    }
    return this.memory;
  }

  /**
   * Reads what identifies the threads not seen yet, while they run: their
   * descriptors, start routines and Worker objects (memory reads), and
   * holds open the files their entries are in. Returns this. Their entries
   * are named from those files later, when an identity is asked for
   * (named()): a pass over node's symbols took 0.6-0.8 s at load 20, and
   * done here it held up the caller's event loop while a short `-c` command
   * loaded its add-ons and exited unseen by the memory map's snapshots
   * (lib/target-snapshots.js), its add-on's work left as bare addresses.
   */
  refresh() {
    const fresh = [];
    for (const tid of listTids(this.pid)) {
      const st = taskStat(this.pid, tid);
      if (!st) continue;
      const known = this.threads.get(tid);
      if (known && known.startTime === st.startTime) continue;
      fresh.push({ tid, comm: safeName(st.comm, { max: 16 }), startTime: st.startTime });
    }
    if (!fresh.length) return this;
    const facts = this.readFacts(fresh);
    for (const t of fresh) {
      const unnamed = { comm: t.comm, facts: facts.get(t.tid) || {} };
      this.threads.set(t.tid, { tid: t.tid, startTime: t.startTime, unnamed });
    }
    this.unnamedCount += fresh.length;
    return this;
  }

  // Names the entries of the threads read but not named yet, from the files
  // held for them, and gives each its role; then lets the files go.
  named() {
    if (!this.unnamedCount) return;   // asked for each sample: at once
    this.unnamedCount = 0;
    const waiting = [...this.threads.values()].filter((t) => t.unnamed);
    if (!waiting.length) return;
    const names = this.entryNamesOf(waiting.map((t) => t.unnamed.facts.start).filter(Boolean));
    for (const t of waiting) {
      const { comm, facts: { start, workerObject } } = t.unnamed;
      let entry = null;
      let worker = null;
      if (start) {
        entry = { name: names.get(start.entry) || null, module: path.basename(start.map.path.replace(/ \(deleted\)$/, '')) };
        // Named as a Worker's start, or unnamed (a stripped libnode): the
        // object it started with says whether it is one.
        if (!entry.name || /^node::worker::Worker::StartThread\(/.test(entry.name)) {
          worker = workerObject || null;
          if (!worker && entry.name) worker = { threadId: null, name: null };
        }
      }
      const r = roleOf({ tid: t.tid, pid: this.pid, comm, entry, worker });
      this.threads.set(t.tid,
        { tid: t.tid, comm, startTime: t.startTime, role: r.role, how: r.how,
          ...(r.worker ? { worker: r.worker } : {}), ...(entry && entry.name ? { entry: entry.name } : {}) });
    }
    this.letFilesGo();
  }

  letFilesGo() {
    for (const held of this.heldFiles.values()) if (held) held.close();
    this.heldFiles.clear();
  }

  // tid -> { entry: { name, module }, worker }, for the threads whose descriptor was found.
  readFacts(fresh) {
    const out = new Map();
    const mem = this.memoryOf();
    if (!mem) return out;
    const text = readProcText(`/proc/${this.pid}/maps`);
    if (text === null) return out;
    const maps = parseMaps(text);
    const tids = new Set(fresh.map((t) => t.tid).filter((tid) => tid !== this.pid));
    if (!tids.size) return out;
    const tops = [];
    for (const m of stackMappings(maps)) {
      const address = m.end - STACK_TOP_BYTES;
      const bytes = mem.read(address, STACK_TOP_BYTES);
      if (bytes) tops.push({ address, bytes });
    }
    const mapOf = (a) => maps.find((m) => a >= m.start && a < m.end);
    const isCode = (a) => { const m = mapOf(a); return Boolean(m && m.perms[2] === 'x' && m.path.startsWith('/')); };
    for (const [tid, d] of findDescriptors(tops, tids)) {
      const s = startRoutine(d.bytes, isCode);
      if (!s) continue;
      const start = { ...s, pd: d.pd, map: mapOf(s.entry) };
      this.holdFileOf(start.map);
      // Read now, while the thread is there; used only if its entry says
      // it may be a Worker (named()). The object is checked by the
      // descriptor it must hold before anything else in it is read.
      let workerObject = null;
      if (s.arg > 0) {
        const object = mem.read(s.arg, WORKER.BYTES);
        if (object) workerObject = workerFacts(object, s.arg, start.pd, (a, n) => mem.read(a, n));
      }
      out.set(tid, { start, workerObject });
    }
    return out;
  }

  // Opens, once, the file a mapped object is in, so that its symbols can be
  // read after the process has gone (a -c command's threads are named at
  // its report).
  holdFileOf(map) {
    const key = `${map.dev}:${map.inode}`;
    if (this.heldFiles.has(key)) return;
    let held = null;
    for (const file of objectFiles(this.pid, { range: map.range, path: map.path.replace(/ \(deleted\)$/, '') })) {
      held = this.holdFile(file);
      if (held) break;
    }
    this.heldFiles.set(key, held);
  }

  // The demangled names of functions threads started in: entry address -> name.
  entryNamesOf(starts) {
    const byFile = new Map();
    for (const s of starts) {
      const key = `${s.map.dev}:${s.map.inode}`;
      if (!byFile.has(key)) byFile.set(key, { map: s.map, entries: new Set() });
      byFile.get(key).entries.add(s.entry);
    }
    const runtime = new Map();
    for (const { map, entries } of byFile.values()) {
      const wanted = [...entries].filter((a) => !this.entryNames.has(`${map.dev}:${map.inode}:${a - map.start + map.offset}`));
      if (wanted.length) this.nameEntries(map, wanted);
      for (const a of entries) runtime.set(a, this.entryNames.get(`${map.dev}:${map.inode}:${a - map.start + map.offset}`) || null);
    }
    return runtime;
  }

  nameEntries(map, addresses) {
    const offsets = addresses.map((a) => a - map.start + map.offset);
    const held = this.heldFiles.get(`${map.dev}:${map.inode}`);
    const found = held ? this.symbolsAt(held.path, offsets) : null;
    const mangled = offsets.map((off) => (found && found.get(off)) || null);
    const demangled = demangleNames(mangled.filter(Boolean));
    offsets.forEach((off, i) => {
      this.entryNames.set(`${map.dev}:${map.inode}:${off}`, mangled[i] ? (demangled.get(mangled[i]) || mangled[i]) : null);
    });
  }

  /** The identity of one thread, or null (never seen: it came and went between looks). */
  identity(tid) {
    this.named();
    return this.threads.get(Number(tid)) || null;
  }

  /** Every thread seen, by TID. */
  all() {
    this.named();
    return [...this.threads.values()].sort((a, b) => a.tid - b.tid);
  }

  close() {
    if (this.memory) this.memory.close();
    this.memory = null;
    this.letFilesGo();
  }
}

module.exports = { ThreadRoster, stackMappings, findDescriptors, startRoutine, workerFacts, stdString, DESCRIPTOR,
  WORKER };
