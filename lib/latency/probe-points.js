'use strict';
// Where the latency program's probe points are in one process: found in
// whichever object of that process defines them, from its own memory map.
//   official / NodeSource builds: all in the node executable (static libuv,
//     full symbols);
//   Debian's / Ubuntu's nodejs: N-API in libnode.so.*, libuv in a shared,
//     stripped libuv.so.1, whose static uv__queue_work / uv__queue_done have
//     no symbol (lib/latency/stripped-libuv.js finds them anyway).
// Files are opened through /proc/PID/map_files, which is exactly the mapped
// file even in another mount namespace (a container) or after the file on
// disk was replaced; the tracer gets those same paths.
const path = require('path');
const fs = require('fs');
const { findElfSymbols, parseMaps } = require('../symbolize');
const { openRegular, readAt } = require('../safe-open');
const stripped = require('./stripped-libuv');
const { codeObjects, objectFiles, mapFile } = require('../proc/code-objects');
const { readProcText } = require('../proc/read-bounded');

// The program's probes, by role. Each is looked for in every object.
const NAPI = ['napi_create_async_work', 'napi_queue_async_work'];
const LIBUV = ['uv_queue_work', 'uv_async_send'];
const QUEUE = ['uv__queue_work', 'uv__queue_done'];
// Node's own scheduling wrapper: from Node 26 a function of its own that calls
// uv_queue_work, so work it queues is named by its caller (the program reads
// it through the wrapper's frame). Optional: older builds inline it.
const WRAPPER = '_ZN4node14ThreadPoolWork12ScheduleWorkEv';
// The rest of the thread pool (fs, dns, random), all static in libuv: found
// only where libuv keeps its symbols (official builds). Optional: without
// them the program leaves its @pool part out and says which kinds it cannot
// see. uv__fs_work's place in memory is needed too (an fs request is told by
// the work function it is submitted with), and uv__queue_work's (its
// submissions are uv_queue_work's clause's). The program's arguments:
// lib/latency/program.js.
const POOL = ['uv__work_submit', 'uv__fs_work', 'uv__getaddrinfo_work', 'uv__getnameinfo_work', 'uv__random_work',
  'uv__fs_done', 'uv__getaddrinfo_done', 'uv__getnameinfo_done', 'uv__random_done'];
const FS_WORK = 'uv__fs_work';
// And uv__getaddrinfo_work's place in memory: --hosts tells a getaddrinfo
// request by the work function it is submitted with ($19).
const GAI_WORK = 'uv__getaddrinfo_work';
// Functions whose place in the process's memory the program needs.
const IN_MEMORY = [WRAPPER, FS_WORK, QUEUE[0], GAI_WORK];

// libuv's structs, where the latency programs read them (x86-64): each
// operation is keyed by its struct uv__work (work_req), which every work and
// done function receives as its first argument; uv_queue_work(loop, req, ...)
// has it inside the uv_work_t, and fs_type, path and hostname are found from
// it (--paths, --hosts). The same in every libuv the matrix runs (offsetof()
// against each release's include/uv.h and include/uv/unix.h: 1.44.2 (Debian
// 12's node 18), 1.46.0 (node 20), 1.49.1 (node 22), 1.51.0 (node 24),
// 1.52.1 (node 26)): libuv 1.x keeps its ABI. The programs name each as a
// constant, STRUCT_FIELD (d-scripts/addon-latency.bt: #define
// UV_FS_T_WORK_REQ 336; addon-latency.d: inline int), and
// test/program-arguments.test.js holds them to this table; a libuv that
// moved them would be told here, and the programs take them as arguments.
const LIBUV_LAYOUT = Object.freeze({
  verifiedOn: ['1.44.2', '1.46.0', '1.49.1', '1.51.0', '1.52.1'],
  uv_work_t: { work_req: 88 },
  uv_fs_t: { work_req: 336, fs_type: 64, path: 104 },
  uv_getaddrinfo_t: { work_req: 72, hostname: 128 },
});

// Node's ThreadPoolWork (work queued through ScheduleWork, WRAPPER), named by
// its class: its work_req_ (the uv_work_t) lies after the vtable pointer and
// env_, and DoThreadPoolWork() is slot 2 of the vtable, after the two
// destructor slots of the Itanium C++ ABI (8 bytes each). Node 18 to 26 here.
// Named in the programs as NODE_THREADPOOLWORK_WORK_REQ and
// NODE_VTABLE_DO_THREAD_POOL_WORK.
const NODE_LAYOUT = Object.freeze({
  threadpoolwork: { work_req: 16 },
  vtable: { do_thread_pool_work: 16 },
});

/**
 * Pure over its inputs: the map, a symbol finder (findElfSymbols' contract:
 * (file, names) -> { loads, found: Map(name -> { value, size }) } or null) and
 * a disassembler.
 * @returns {{objects, points, missing}} points: role name -> { object, file,
 *   location (a symbol name, or 0xADDR: an address of the file), how };
 *   missing: [{ name, why }]
 */
function locate({ pid, maps, exePath, findSymbols, disassemble }) {
  // Read through map_files, or (map_files needs CAP_SYS_ADMIN: a user's dry
  // run of its own process) inside the process's root; the tracer is given
  // map_files, the mapped file itself, whatever its mount namespace
  // (lib/tracer/capabilities.js uprobeTarget).
  const objects = codeObjects(maps, exePath)
    .map((o) => ({ ...o, file: mapFile(pid, o), alternatives: objectFiles(pid, o) }));
  const points = {};
  const want = [...NAPI, ...LIBUV, ...QUEUE, WRAPPER, ...POOL];
  const symbols = new Map();   // object path -> what findSymbols said
  for (const o of objects) {
    const missing = want.filter((n) => !points[n]);
    if (!missing.length) break;
    let result = null;
    for (const file of o.alternatives) {
      result = findSymbols(file, want);
      if (result) break;
    }
    symbols.set(o.path, result);
    if (!result) continue;
    for (const name of missing) {
      if (result.found.has(name)) points[name] = { object: o.path, file: o.file, location: name, how: 'symbol', value: result.found.get(name).value };
    }
    for (const name of IN_MEMORY) {
      if (points[name] && points[name].object === o.path && !points[name].range) {
        points[name].range = runtimeRange(result.found.get(name), result.loads, o.start - o.offset);
      }
    }
  }
  keepPoolWithLibuv(points);
  const missing = [];
  const uv = points.uv_queue_work;
  if (uv && (!points.uv__queue_work || !points.uv__queue_done
      || points.uv__queue_work.file !== uv.file || points.uv__queue_done.file !== uv.file)) {
    // The static functions belong with the uv_queue_work that is called: a
    // libuv without their symbols (stripped) has them at addresses only.
    delete points.uv__queue_work;
    delete points.uv__queue_done;
    const table = symbols.get(uv.object);
    const fn = table.found.get('uv_queue_work');
    const seg = table.loads.find((l) => fn.value >= l.vaddr && fn.value < l.vaddr + l.filesz);
    const isCode = (a) => Boolean(seg) && a >= seg.vaddr && a < seg.vaddr + seg.filesz;
    const code = fn.size ? disassemble(uv.file, fn.value, fn.size) : { error: 'uv_queue_work has no size in the symbol table' };
    const found = code.text ? stripped.queueFunctionsFromDisassembly(code.text, isCode) : null;
    if (found) {
      const how = `address: no symbol (stripped); ${found.how}`;
      points.uv__queue_work = { object: uv.object, file: uv.file, location: '0x' + found.work.toString(16), how };
      points.uv__queue_done = { object: uv.object, file: uv.file, location: '0x' + found.done.toString(16), how };
    } else {
      const why = `${path.basename(uv.object)} has no symbol for it, and ${code.error || 'the code of uv_queue_work does not show where it stores it'}`;
      for (const n of QUEUE) missing.push({ name: n, why });
    }
  }
  for (const n of [...NAPI, ...LIBUV]) {
    if (!points[n]) missing.push({ name: n, why: `defined by none of the ${objects.length} objects mapped with code` });
  }
  if (!uv) for (const n of QUEUE) if (!points[n]) missing.push({ name: n, why: 'uv_queue_work was not found, so neither was its libuv' });
  return { pid, objects, points, missing };
}

// The pool's functions belong with the uv_queue_work that is called, all of
// them and uv__fs_work's place in memory, or none.
function keepPoolWithLibuv(points) {
  const uv = points.uv_queue_work;
  const whole = uv && POOL.every((n) => points[n] && points[n].file === uv.file) && points[FS_WORK].range
    && points[GAI_WORK].range && points[QUEUE[0]] && points[QUEUE[0]].range;
  if (!whole) for (const n of POOL) delete points[n];
}

/** Which of libuv's own requests a located set of points cannot see, and why (null: it sees them all). */
function unseenPoolWork(points) {
  if (POOL.every((n) => points[n])) return null;
  const uv = points.uv_queue_work;
  const where = uv ? path.basename(uv.object) : 'libuv';
  return `fs, dns.lookup and dns.lookupService work is not seen: ${where} has no symbols for libuv's static `
    + 'uv__work_submit and work functions (a stripped shared libuv, as Debian\'s and Ubuntu\'s)';
}

// Where a symbol lies in the process's memory: its value plus the load bias
// (the object's first mapping, less the address its first segment asks for:
// 0 for an executable linked at a fixed address).
function runtimeRange(symbol, loads, firstMappingAt) {
  if (!symbol || !symbol.size || !loads.length) return null;
  const first = loads.reduce((a, b) => (b.offset < a.offset ? b : a));
  const bias = firstMappingAt - (first.vaddr - first.offset - (first.vaddr - first.offset) % 4096);
  return { start: bias + symbol.value, end: bias + symbol.value + symbol.size };
}

function findProbePoints(pid) {
  let maps = [];
  let exePath = '';
  try {
    maps = parseMaps(readProcText(`/proc/${pid}/maps`, { throws: true }));
  } catch (err) {
    const why = `cannot read /proc/${pid}/maps (${err.code || err.message})`;
    return { pid, objects: [], points: {}, missing: [...NAPI, ...LIBUV, ...QUEUE].map((name) => ({ name, why })) };
  }
  try { exePath = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { /* gone */ }
  return locate({
    pid, maps, exePath,
    findSymbols: (file, names) => findElfSymbols(file, names, { followLinks: true }),
    disassemble: stripped.disassemble,
  });
}

// For -c: the binary before it runs, alone (no map yet): found only where it
// defines every probe point itself, as official builds do.
function binaryProbePoints(file) {
  const table = findElfSymbols(file, [...NAPI, ...LIBUV, ...QUEUE, WRAPPER, ...POOL], { followLinks: true });
  const points = {};
  for (const [name, sym] of table ? table.found : []) points[name] = { object: file, file, location: name, how: 'symbol', value: sym.value };
  // Before it runs, only an executable linked at a fixed address has its
  // functions where the symbols say (first segment not at 0).
  for (const name of IN_MEMORY) {
    if (points[name] && table.loads.length && Math.min(...table.loads.map((l) => l.vaddr)) > 0) {
      points[name].range = runtimeRange(table.found.get(name), table.loads,
        Math.min(...table.loads.map((l) => l.vaddr - l.offset)));
    }
  }
  keepPoolWithLibuv(points);
  const missing = [...NAPI, ...LIBUV, ...QUEUE].filter((n) => !points[n])
    .map((n) => ({ name: n, why: table ? `${file} does not define it (a shared libnode or libuv?)` : `${file} is not a readable ELF file` }));
  return { points, missing };
}

// Node's release tarball name, where the file holds it.
const RELEASE_NEEDLE = Buffer.from('node-v', 'latin1');
const RELEASE_NAME = /^node-v(\d+\.\d+\.\d+)\.tar\.gz/;
// Bytes looked at after each "node-v", and kept from one chunk for the next.
const RELEASE_WINDOW = 64;

/**
 * The Node version of the object that defines N-API (the node executable or
 * libnode): the release tarball name Node's process.release carries,
 * "node-vX.Y.Z.tar.gz", read from the file, never by running it. It lies
 * 31-55 MB into a 91-150 MB node (34-42%; 81% of Debian's libnode): each
 * chunk is searched for "node-v" natively and only its places are read
 * as text, not the whole chunk (docs/performance.md, "Planning").
 */
function nodeVersionOf(file) {
  const opened = openRegular(file, { followLinks: true });
  if (opened.refused) return null;
  const CHUNK = 8 * 1024 * 1024;
  try {
    let carry = Buffer.alloc(0);
    for (let off = 0; off < opened.size; off += CHUNK) {
      const chunk = readAt(opened.fd, off, CHUNK);
      const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
      for (let i = buf.indexOf(RELEASE_NEEDLE); i >= 0; i = buf.indexOf(RELEASE_NEEDLE, i + 1)) {
        const m = RELEASE_NAME.exec(buf.toString('latin1', i, i + RELEASE_WINDOW));
        if (m) return m[1];
      }
      carry = buf.subarray(Math.max(0, buf.length - RELEASE_WINDOW));
    }
    return null;
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** What kind of build a located set of points shows (pure). */
function describeBuild(found, exePath) {
  const napi = found.points.napi_create_async_work;
  const uv = found.points.uv_queue_work;
  const shared = (p) => p && p.object !== exePath;
  return {
    napiIn: napi ? napi.object : null,
    libuvIn: uv ? uv.object : null,
    node: shared(napi) ? `shared ${path.basename(napi.object)}` : napi ? 'static (in the executable)' : 'unknown',
    libuv: shared(uv) ? `shared ${path.basename(uv.object)}` : uv ? 'static (in the executable)' : 'unknown',
    libuvStripped: Boolean(found.points.uv__queue_work && found.points.uv__queue_work.how.startsWith('address')),
  };
}

module.exports = {
  locate, findProbePoints, binaryProbePoints, nodeVersionOf, describeBuild, runtimeRange, unseenPoolWork,
  NAPI, LIBUV, QUEUE, WRAPPER, POOL, FS_WORK, GAI_WORK, LIBUV_LAYOUT, NODE_LAYOUT,
};
