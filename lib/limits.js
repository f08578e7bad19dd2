'use strict';
// The fixed limits on what nodetrace reads from files and memory that other
// users control (executables and libraries, cores, perf maps, a target's
// heap), in one place, each with why it is that value. A count or size in
// such a file is checked against the file's real size and against these;
// past one, the reader says so once, in one line naming the file and the
// limit (overLimit), and the report goes on without that part: never a
// hang, a crash or an out-of-memory death (docs/security.md).
//
// Together they keep nodetrace's own memory under 512 MB whatever a target
// or a file holds: the largest things held at once are one file's symbol
// tables (SYMBOL_CACHE_BYTES, the symbolizer's budget across files) and
// one core's notes (MAX_CORE_NOTES_BYTES), read one at a time. What the
// readers hold is also counted against one budget for the run,
// RUN_MEMORY_BYTES (lib/memory-budget.js), so that two inputs each within
// its own limit do not add up past it.
const { safeText } = require('./terminal-safe');

const MiB = 1024 * 1024;

const LIMITS = Object.freeze({
  // --- the run ---------------------------------------------------------------
  // What the readers that keep large buffers of others' data hold at once,
  // all together (lib/memory-budget.js; charged by a core's notes as they
  // are read, the symbolizer's tables while kept, scripts' line indexes,
  // parsed source maps while kept).
  // Under 512 MB of RSS with node's own (some 60 MB) and one symbol file's
  // tables read before they are kept (64 MB + 64 MB).
  RUN_MEMORY_BYTES: 256 * MiB,

  // --- ELF files: executables, libraries, their debug files --------------
  // A file larger than this is not read (a sparse file can claim any size;
  // node 26's executable is 143 MB, a debug libnode some hundreds).
  MAX_ELF_BYTES: 4 * 1024 * MiB,
  // Program headers of an executable or library (node has 13; the loader
  // itself refuses tables over a page on some systems).
  MAX_PROGRAM_HEADERS: 1024,
  // Section headers (node 26 has 42, libnode 28, a debug file about 40).
  MAX_SECTIONS: 4096,
  // One symbol table (.symtab or .dynsym): node 26's .symtab is 4.0 MB
  // (168,000 symbols), 16 times less.
  MAX_SYMBOL_TABLE_BYTES: 64 * MiB,
  // One string table: node 26's .strtab is 18.9 MB, its .dynstr 2.8 MB.
  MAX_STRING_TABLE_BYTES: 64 * MiB,
  // One symbol's name: C++ names of node 26 reach 3 KB mangled.
  MAX_SYMBOL_NAME_BYTES: 64 * 1024,
  // The symbol tables the symbolizer keeps, across files (names, values,
  // sizes: node 26's executable takes 32 MB); the least recently used
  // file's are dropped past it (read again if needed).
  SYMBOL_CACHE_BYTES: 256 * MiB,
  // Files whose symbols one symbolizer reads (a Node process maps 30 to 300
  // with code; a crafted core may name 65,536 that exist here).
  MAX_SYMBOL_FILES: 1024,
  // Time spent reading executables and libraries (headers, symbol tables,
  // notes: every read of lib/symbolize.js withElf), summed over files and
  // reads, within each ELF_READ_WINDOW_MS (lib/read-budget.js). Each file
  // is bounded alone (above), but a crafted one within those bounds still
  // takes seconds (a 64 MB .symtab and .strtab of a copy of sleep: 6 s
  // for `ps`'s reads at load 10), and `ps` beside hundreds of them would
  // take that many times as long. Honest files: `ps` reads a node
  // executable in 0.5 s, profile names frames in node 26's in 1.2 s (load
  // 10, 2026-11-29): 30 s is some 60 node versions. Past it no further
  // file is read until the window ends, said once a window (the first one
  // named). The window renews the budget for commands that follow new
  // processes for hours (snoop '*', http NAME, probes): a burst of hostile
  // files then costs at most 30 s of every 5 minutes (10% of one core).
  // For tests only, NODETRACE_TEST_ELF_READ_BUDGET_MS=N lowers the budget
  // to N ms (a whole number below 30,000; anything else is ignored: it can
  // only lower the bound), so that a test reaches it without reading 30 s.
  ELF_READ_BUDGET_MS: 30 * 1000,
  ELF_READ_WINDOW_MS: 5 * 60 * 1000,
  // A PT_NOTE segment read for a build ID, and the dynamic section with one
  // of its strings (a library's DT_NEEDED or run path).
  MAX_BUILD_ID_NOTES_BYTES: 64 * 1024,
  MAX_DYNAMIC_BYTES: 64 * 1024,
  MAX_DYNAMIC_STRING: 4096,

  // --- cores ---------------------------------------------------------------
  MAX_CORE_BYTES: 2 ** 46,
  // Every PT_NOTE of a core together: per thread gcore writes about 3.5 KB
  // (registers, FP state, siginfo), so 64 MB is some 18,000 threads.
  MAX_CORE_NOTES_BYTES: 64 * MiB,
  // Threads (NT_PRSTATUS) kept: the kernel's default pid_max, 32,768.
  MAX_CORE_THREADS: 32768,
  // Notes looked at: gcore writes 5 to 7 per thread, so 8 for each of
  // MAX_CORE_THREADS threads.
  MAX_CORE_NOTES: 8 * 32768,
  // PT_LOAD segments and NT_FILE entries: one per mapping at most, and a
  // process has at most vm.max_map_count (65,530 by default) of them.
  MAX_CORE_SEGMENTS: 65536,
  MAX_CORE_FILES: 65536,
  // One path of NT_FILE: PATH_MAX.
  MAX_CORE_PATH_BYTES: 4096,

  // --- perf maps (/tmp/perf-PID.map) --------------------------------------
  // V8's maps of long-running processes reach hundreds of MB.
  MAX_PERF_MAP_BYTES: 1024 * MiB,
  // One line of it (an address, a size, a name): a longer one is skipped.
  MAX_PERF_MAP_LINE_BYTES: 1 * MiB,

  // --- a target's memory (lib/v8) -------------------------------------------
  // One read, and what one memory reads in its life unless told otherwise.
  MAX_MEMORY_READ: 1 * MiB,
  MEMORY_BUDGET: 64 * MiB,
  // Source characters scanned for line ends, per script and per run (each
  // character is read once; what is kept is one entry per LINE_INDEX_STRIDE
  // characters, not one per line): a position further in gets no line.
  MAX_SCRIPT_SOURCE_CHARS: 16 * MiB,
  SCRIPT_SCAN_BUDGET_CHARS: 256 * MiB,
  // ... and the time that scanning may take, per run and per frame named.
  // A scan runs on nodetrace's event loop, which reads the tracer's output
  // and keeps the session's clocks: 256 M characters took 1.4 s at load 3
  // and 10-25 s at load 20 (2026-11-30), the tracer's output unread and
  // the trace's end late all that while (a `loop --stacks` report lost).
  // One script of 16 MiB takes some 90 ms on an idle core.
  SCRIPT_SCAN_BUDGET_MS: 3000,
  SCRIPT_SCAN_DEADLINE_MS: 1000,
  LINE_INDEX_STRIDE: 64 * 1024,
  // V8's own line ends (a Script's line_ends FixedArray) are searched in
  // place, never copied: at most this many.
  MAX_LINE_ENDS: 64 * MiB,

  // --- what ebadf reads for a hit (lib/ebadf/hit-readers.js, watch.js) ------
  // Read in worker threads, one per user whose processes hit, at most this
  // many at once; past it, a new user's requests wait for the least busy.
  HIT_READERS: 4,
  // Each one's JavaScript heap (its share of the symbolizer's budget is
  // SYMBOL_CACHE_BYTES / HIT_READERS): nodetrace stays under its 512 MB
  // whatever the files hold.
  HIT_READER_HEAP_MB: 96,
  // What the source maps a worker parses may hold (lib/source-maps.js): they
  // live in its heap, unlike the symbolizer's tables (buffers), and a map
  // that holds more than the heap has is its death (a 4 MB dense map: 90 MB).
  HIT_READER_MAP_BYTES: 32 * MiB,
  // What a hit reads of its process with the process stopped (the walk:
  // V8's metadata and symbols of its files, its memory: 0.6 s of CPU the
  // first time for node, then 0.1 s; but 10 s and more of wall time on a
  // 2-core host at load 20, measured) and after (naming the tracer's frames;
  // the walk of a core), at most: past it, the reading is given up and the
  // hit said with what was read.
  HIT_WALK_DEADLINE_MS: 30000,
  HIT_NAMING_DEADLINE_MS: 30000,

  // --- a process's /proc files (lib/proc/read-bounded.js readProcText) ------
  // Much of them is the process's to write: its argv and environment, one
  // line per mapping (and the name of each file it maps), its mounts in a
  // namespace of its own. By the file's name; `other` for the rest. Past a
  // bound the file is read up to its last whole line, and said.
  PROC_FILE_BYTES: Object.freeze({
    // One line per mapping: 90 bytes and the path. A node 20 process maps
    // 100 to 600 (7 to 45 KB measured); vm.max_map_count (65,530 by
    // default) mappings with 160-byte paths are 16 MB.
    maps: 16 * MiB,
    // argv and the environment: Linux caps both together at a quarter of
    // the stack limit and 6 MB, one string at 128 KB (fs/exec.c,
    // MAX_ARG_STRLEN). Usual: under 4 KB each. The environment is read for
    // NODE_UNIQUE_ID (lib/proc/cluster.js); tens of KB are usual.
    cmdline: 1 * MiB,
    environ: 256 * 1024,
    // 1.4 KB here; its Groups line can hold 65,536 group IDs (NGROUPS_MAX,
    // up to 720 KB), and NSpid comes after it.
    status: 1 * MiB,
    // Fixed text (1.3 KB); comm (16 bytes, 64 on newer kernels); stat (a
    // name and 52 numbers); cgroup (a line per hierarchy).
    limits: 64 * 1024,
    comm: 4096,
    stat: 4096,
    cgroup: 64 * 1024,
    // One line per mount, paths the namespace's owner chooses; fs.mount-max
    // is 100,000 mounts (a Kubernetes node with many pods: ~1,000, 150 KB).
    mountinfo: 16 * MiB,
    mounts: 16 * MiB,
    // A thread's children: one PID (up to 8 characters) per child.
    children: 1 * MiB,
    other: 1 * MiB,
  }),

  // --- a target's threads (lib/threads/identify.js) -------------------------
  // Threads looked at (/proc/PID/task), and the stack mappings whose tops
  // are read for their descriptors (one per thread, and V8 keeps a few
  // more mappings of that shape): a node process has 10 to 100 threads.
  MAX_THREADS: 4096,
  MAX_STACK_MAPPINGS: 2048,
  // What is read of each stack's top: glibc's descriptor (2,368 bytes on
  // 2.36) and the static TLS below it.
  THREAD_STACK_TOP_BYTES: 8192,
  // What one roster reads in its life: 2,048 tops of 8 KiB are 16 MiB.
  THREADS_MEMORY_BUDGET: 32 * MiB,
  // A Worker's name kept (a thread's comm holds 15).
  MAX_THREAD_NAME_BYTES: 64,

  // --- probe libraries (lib/probe-libraries/): other users' files ---------
  // Each user's processes map a probe library of their own (lib/usdt), in a
  // directory of theirs; `snoop '*'`, `http '*'` and `probes` find and read
  // them all. One library: lib/usdt's are about 10 KB (3 pages and the
  // notes); one of the 64 probe sites allowed stays far below this.
  MAX_PROBE_LIBRARY_BYTES: 64 * 1024,
  // Its notes: lib/usdt writes one per probe; providers have a handful
  // (bunyan 6).
  MAX_PROBE_LIBRARY_NOTES: 64,
  // Names of libraries reached through /proc/PID/map_files, kept (the
  // checks read the name the process maps it by); past it, those of
  // mappings gone are dropped.
  MAX_PROBE_LIBRARY_NAMES: 4096,
  // What one scan of the host may cost (every 2 s while following). Files
  // are read only when new or changed (size, mtime, ctime, inode); a
  // directory is listed again only when it changed; so an idle host costs a
  // stat per directory and per process. A hostile user's thousands of files
  // cost their own directory's share of a scan, scan after scan, never the
  // others': files read and checked in one scan; entries of one directory
  // looked at; a process this young has its maps read every scan; older
  // processes whose maps are read again, in turn; every file stat'ed again
  // once in this many scans (a file changed in place).
  PROBE_SCAN_FILES_READ: 32,
  PROBE_SCAN_DIRECTORY_ENTRIES: 4096,
  PROBE_SCAN_YOUNG_PROCESS_MS: 10000,
  PROBE_SCAN_OLDER_PROCESSES: 64,
  PROBE_SCAN_FULL_CHECK_EVERY: 15,
  // Libraries a trace follows (one per user and provider definition in
  // practice; more means someone is making variants), and of one user's,
  // so that no user can crowd out others. Each library adds seconds to
  // bpftrace's start (lib/snoop/plan.js).
  MAX_FOLLOWED_LIBRARIES: 16,
  MAX_FOLLOWED_LIBRARIES_PER_USER: 4,

  // --- HTTP (lib/http/): a remote client's bytes and routes --------------
  // Off the wire (http-wire.bt/.d and lib/http/wire*.js), what the programs
  // copy of a call that starts with a start word, in pieces: a head
  // (browsers' run to 1-2 KB with cookies; Express's responses ~300 bytes);
  // a longer head is not followed (lib/http/wire-framing.js). And of a
  // writev of more than two iovecs (node's chunked bodies), the first piece
  // of each of the first WIRE_IOVECS (node 20 wrote 13 for three
  // res.write() calls in one tick). test/http-wire-unit.test.js holds the
  // programs' constants to these.
  WIRE_HEAD_BYTES: 2000,
  WIRE_IOVECS: 16,
  // Connections followed at once: the program's maps (@conn) hold this many
  // keys, as does the reader (a connection beyond it evicts the oldest,
  // whose later calls are then not read, counted); the batch maps as many
  // calls each. NODETRACE_MAP_KEYS sets another (capabilities.mapKeysFor).
  WIRE_CONNECTIONS: 16384,
  // http-wire.d keeps its connections in a fixed array by descriptor: a
  // socket of a higher one is not read, its accept or connect said and
  // counted by the closing line (http-wire.bt keys its map by any fd).
  WIRE_DTRACE_FDS: 65536,
  // A connection's unanswered requests kept (beyond it the oldest dropped,
  // counted): pipelining clients send a few.
  WIRE_PENDING_REQUESTS: 64,
  // Processes a trace is asked to follow beyond those it named (a cluster's
  // workers forked anew, or other children of its primary): a primary that
  // forks without end costs a bounded /proc read each.
  WIRE_FOLLOWED_PROCESSES: 1024,
  // A head kept across calls (a head split across reads): node's own limit
  // (--max-http-header-size) is 16 KiB by default, and node refuses a longer
  // head before nodetrace would need it. A chunk's size line and its
  // extensions: node refuses extensions over 16 KiB.
  WIRE_CARRY_BYTES: 16384,
  WIRE_CHUNK_LINE_BYTES: 16384 + 32,
  // Calls held after a request that asks to leave HTTP/1, until its answer.
  WIRE_HELD_CALLS: 64,
  // Latency histograms (lib/http/histograms.js): processes with histograms
  // of their own (the others share one set, "other processes"), and groups
  // (direction, method, route) per process (the others fold into one per
  // direction, "(other routes)"). A group holds 256 bytes per power of two
  // its latencies reach, 9 KB at most (lib/aggregation/log-linear.js): at
  // most (64 + 1) x (100 + 2) groups, under 60 MB however many routes,
  // processes and latencies a flood makes (docs/security.md).
  HTTP_HISTOGRAM_PROCESSES: 64,
  HTTP_HISTOGRAM_GROUPS_PER_PROCESS: 100,

  // --- Source maps (lib/source-maps.js): another user's files ------------
  // One map's text: esbuild's map of a 5 MB bundle is about 12 MB. Parsed,
  // a map holds 22 to 37 times its text (docs/security.md): what it holds
  // is bounded by SOURCE_MAP_CACHE_BYTES, which dense maps reach first.
  MAX_SOURCE_MAP_BYTES: 16 * MiB,
  // What the maps kept parsed at once hold (the least recently used dropped
  // first; read again when needed): three quarters of the run's budget, the
  // rest left to the symbols of the files the same frames run in.
  SOURCE_MAP_CACHE_BYTES: 192 * MiB,
  // Maps read in one run, all told (a map dropped and read again counts again).
  SOURCE_MAP_BUDGET_BYTES: 128 * MiB,
  // Scripts whose map is looked for in one run (a frame's script each).
  MAX_SOURCE_MAP_SCRIPTS: 4096,
  // An index map's sections, and a map's sources and names.
  MAX_SOURCE_MAP_SECTIONS: 1024,
  MAX_SOURCE_MAP_SOURCES: 65536,
  // The end of a script's source read for its reference (a line), and at
  // most this much of it where the line is longer (an inline map as base64:
  // 4 characters for 3 bytes).
  SOURCE_MAP_TAIL_CHARS: 4096,
  MAX_SOURCE_MAP_URL_CHARS: Math.ceil(16 * MiB * 4 / 3) + 256,
});

// Lines already said, so that each is said once per run.
const said = new Set();
const MAX_SAID = 1000;
let sink = (line) => process.stderr.write(line + '\n');

/**
 * Says once, in one line on stderr, that `what` (a file, a process) was not
 * read, or only in part, because of a limit: "nodetrace: WHAT: TEXT".
 * `key`: what makes it the same (one file reached by two paths is said
 * once). Returns the line (made safe), for callers that also report it.
 */
function overLimit(what, text, { key = null } = {}) {
  const line = safeText(`nodetrace: ${what}: ${text}`, { oneLine: true });
  const id = key === null ? line : `${key}\0${text}`;
  if (!said.has(id) && said.size < MAX_SAID) {
    said.add(id);
    sink(line);
  }
  return line;
}

/** Where overLimit's lines go (tests, a worker thread handing them back). */
function setLimitSink(fn) {
  const before = sink;
  sink = fn;
  return before;
}

/** ELF_READ_BUDGET_MS, or the lower bound a test asked for (above). */
function elfReadBudgetMs(env = process.env) {
  const text = env.NODETRACE_TEST_ELF_READ_BUDGET_MS;
  const ms = /^[0-9]{1,9}$/.test(text || '') ? Number(text) : NaN;
  return ms < LIMITS.ELF_READ_BUDGET_MS ? ms : LIMITS.ELF_READ_BUDGET_MS;
}

function formatBytes(n) {
  return n >= MiB ? `${Math.round(n / MiB)} MB` : n >= 1024 ? `${Math.round(n / 1024)} KB` : `${n} bytes`;
}

module.exports = { LIMITS, overLimit, setLimitSink, formatBytes, elfReadBudgetMs };
