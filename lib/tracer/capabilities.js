'use strict';
// Everything nodetrace does differently by tracer and version, in one place:
// callers ask what a tracer can do or needs; they never compare versions
// themselves.
const { UsageError } = require('../errors');

// How to end a tracer so that it prints what it gathered.
//
// bpftrace: SIGTERM, which it handles exactly as SIGINT while tracing but
// keeps ignoring while it prints its maps afterwards (a SIGINT then kills it
// mid-print). And bpftrace (0.17 at least) loses a signal that lands while
// it is not blocked in epoll_wait (its handler sets a flag that the poll loop
// reads only when epoll_wait is interrupted), so say it again until the END
// probe has printed the END marker, which our programs put last in END, or
// until it starts detaching its probes (it has heard: lib/tracer/session.js).
//
// DTrace: one signal only. dtrace(1M) takes a second one as impatience and
// exits without printing its aggregations. SIGTERM rather than SIGINT: a
// dtrace started in the background may ignore SIGINT (measured on DTrace for
// Linux), and every dtrace handles SIGTERM like SIGINT.
//
// Either way: SIGKILL once the tracer has been asked for `giveUpMs` and is
// still there (a tracer stuck detaching must not hold the command forever).
function stopPolicy(tracer) {
  if (tracer.name === 'bpftrace') {
    return { signal: 'SIGTERM', resendEveryMs: 1000, giveUpMs: 90000 };
  }
  return { signal: 'SIGTERM', resendEveryMs: null, giveUpMs: 300000 };
}

// How to know that every probe is attached. bpftrace runs BEGIN before it
// attaches the other probes (0.17 to 0.26 alike, src/bpftrace.cpp: BEGIN is
// triggered, then the probes are attached one by one; measured here: the
// first hit of a hot uprobe 126 ms after BEGIN), so a line printed from BEGIN
// says only that attaching has begun. Every version prints this line once the
// last probe is attached when the variable is set (on stderr up to 0.20, on
// stdout from 0.21). DTrace fires BEGIN once every probe is enabled, so the
// BEGIN line is enough there.
function attachNotice(tracer) {
  if (tracer.name !== 'bpftrace') return null;
  return { env: { __BPFTRACE_NOTIFY_PROBES_ATTACHED: '1' }, line: '__BPFTRACE_NOTIFY_PROBES_ATTACHED' };
}

// How nodetrace opens and closes a program's window (its `@template WINDOW:`
// clause): the same signal twice, the first once every probe is attached
// (counting starts), the second at the end asked for (counting stops and
// the program prints its report, its probes still attached; bpftrace
// detaches them only after its main loop, before END, at about 0.1-0.3 s a
// uprobe on Linux 6.13+: docs/platforms.md, "Learned 2026-11-27").
//   0.22 and later  `self:signal:SIGUSR1`: bpftrace runs the clause itself
//                   when it gets SIGUSR1 (within its poll loop's 100 ms),
//                   in its own process: -p (which from 0.24 filters
//                   tracepoints by the traced PID) leaves it alone.
//   before 0.22     the script's own clause, tracepoint:signal:signal_generate
//                   for SIGURG sent to bpftrace, which ignores it: the clause
//                   runs in nodetrace's kill(), at once. (SIGUSR1 would make
//                   0.17 to 0.21 print every map.)
// Measured on 0.17.0, 0.23.2 and 0.27.1 here: the report and the marker come
// in order, maps print as at exit. DTrace: none (its SIGTERM ends the
// trace as asked).
function windowSignal(tracer) {
  if (!isBpftrace(tracer)) return null;
  return atLeast(tracer, '0.22') ? { signal: 'SIGUSR1', probe: 'self:signal:SIGUSR1' } : { signal: 'SIGURG', probe: null };
}

// Compares a detected tracer's version with 'major.minor'.
function atLeast(tracer, version) {
  const m = /^([0-9]+)\.([0-9]+)/.exec(tracer.version || '');
  const parts = tracer.versionParts || (m && { major: +m[1], minor: +m[2] });
  if (!parts) return false;
  const [major, minor] = version.split('.').map(Number);
  return parts.major > major || (parts.major === major && parts.minor >= minor);
}

// ---- bpftrace, by version (measured on 0.17.0, 0.23.2 and 0.27.1 here; see
// docs/platforms.md). Versions between are placed by bpftrace's changelog.

function isBpftrace(tracer) {
  return tracer.name === 'bpftrace';
}

// The string limit: 0.17 reads BPFTRACE_STRLEN only (at most 200 bytes);
// 0.23 reads BPFTRACE_MAX_STRLEN and warns that BPFTRACE_STRLEN is
// deprecated; 0.27 ignores BPFTRACE_STRLEN. Versions in between (not run
// here) get both names, so whichever they read is set.
function stringLimitEnv(tracer, bytes) {
  if (!isBpftrace(tracer)) return {};
  if (atLeast(tracer, '0.23')) return { BPFTRACE_MAX_STRLEN: String(bytes) };
  if (atLeast(tracer, '0.18')) return { BPFTRACE_STRLEN: String(bytes), BPFTRACE_MAX_STRLEN: String(bytes) };
  return { BPFTRACE_STRLEN: String(bytes) };
}

// How many keys a map may hold (bpftrace's default is 4,096): 0.17-0.19 read
// BPFTRACE_MAP_KEYS_MAX only; 0.20 adds BPFTRACE_MAX_MAP_KEYS and warns that
// the old name is deprecated; 0.24 reads the new name only, and ignores the
// old one without a word (bpftrace's src/config.cpp by tag; 0.27.1 measured:
// a map given 65,536 keys by the old name held 4,096, profile's JavaScript
// chains were cut and a third of a hot function's samples went unnamed).
function mapKeysEnv(tracer, keys) {
  if (!isBpftrace(tracer)) return {};
  return atLeast(tracer, '0.20') ? { BPFTRACE_MAX_MAP_KEYS: String(keys) } : { BPFTRACE_MAP_KEYS_MAX: String(keys) };
}

// The keys a command's maps get: its own bound, or NODETRACE_MAP_KEYS where
// set (a trace that filled a map says so and names this: lib/render/
// map-full.js), from 1,024 (the fewest any program's batches need is
// `floor`) to 16,777,216 (each key of bpftrace's hash maps is kernel memory
// for the trace's length). A bad value is a usage error.
const MAP_KEYS_RANGE = [1024, 16777216];
function mapKeysFor(keys, { floor = MAP_KEYS_RANGE[0], env = process.env } = {}) {
  const text = env.NODETRACE_MAP_KEYS;
  if (text === undefined || text === '') return keys;
  const n = /^[0-9]{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(n >= MAP_KEYS_RANGE[0] && n <= MAP_KEYS_RANGE[1])) {
    throw new UsageError(`NODETRACE_MAP_KEYS must be a whole number from ${MAP_KEYS_RANGE[0]} to ${MAP_KEYS_RANGE[1]}, not "${text}".`,
      'Unset it for each command\'s own bound.');
  }
  return Math.max(n, floor);
}

// The longest string str() can copy: 200 bytes on 0.17 (its strings live on
// the 512-byte BPF stack); from 0.21 strings live in maps and the limit is
// what BPFTRACE_MAX_STRLEN says (a 5,000-byte string came whole with 8192 on
// 0.23). nodetrace asks for no more than it needs.
function maxStringBytes(tracer) {
  if (!isBpftrace(tracer)) return Infinity;
  return atLeast(tracer, '0.21') ? 64 * 1024 : 200;
}

// Can str() copy `bytes` in one string? 0.23 and 0.27 measured here (log-snoop-whole.bt
// brings 4,179-byte records whole); 0.21 and 0.22, where strings moved off
// the BPF stack, not run here, so they keep the pieces.
function readsLongStrings(tracer, bytes) {
  return isBpftrace(tracer) && atLeast(tracer, '0.23') && bytes <= maxStringBytes(tracer);
}

// The path by which a USDT probe of one process (-p) is named. 0.27 given a
// host path with -p attaches each probe twice (the path, and the same file as
// /proc/PID/root/path: every record fired twice, measured here); named
// through /proc/PID/root it attaches once, in the process's own mount
// namespace. 0.23 attaches once either way; placed at 0.24, where -p began to
// apply to every probe type.
function usdtPathForPid(tracer, pid, file) {
  return isBpftrace(tracer) && atLeast(tracer, '0.24') ? `/proc/${pid}/root${file}` : file;
}

// How a uprobe program is given the files of one process, and whether it
// may be given -p PID too (latency, gc: the programs take the files as
// arguments). The file is always /proc/PID/map_files/RANGE, the kernel's
// own link to the mapped file: it opens exactly that file, in any mount
// namespace, even replaced on disk, and no name in it is looked up in a
// tree the process's users control.
//
// What -p does to uprobe paths, by version (measured with 0.17.0, 0.23.2
// and 0.27.1 on a podman container, 2026-11-25; path_for_pid_mountns is
// the same in every release):
//   every version   given -p PID and a process in another mount namespace
//                   than its own, bpftrace puts /proc/PID/root in front of
//                   every probe path that does not start with it:
//                   /proc/PID/map_files/... then resolves through the
//                   container's own /proc, where the host's PID does not
//                   exist ("does not exist or is not executable", all
//                   three). The one form it leaves alone,
//                   /proc/PID/root/<path inside>, attaches but is resolved
//                   by name through the container's tree, where a directory
//                   swapped for an absolute link leads to a file of the
//                   host's (links under /proc/PID/root resolve against the
//                   reader's root): never handed to a tracer. No pinned form
//                   survives the prefix (map_files, or a descriptor
//                   nodetrace holds as /proc/N/fd/M, are prefixed the same).
//   0.17 to 0.19    -p does not filter uprobes: without -p nothing is lost.
//   0.20 to 0.23    -p also filters uprobes in the kernel (breakpoints only
//                   in that process): without it the probes fire in every
//                   process that maps the same file and the program drops
//                   those hits. Other containers of the same image map the
//                   image's own file (two containers of one image, one
//                   traced: both took the hits without -p, only the target
//                   with it; measured on 0.17 and 0.23).
//   0.24 and later  -p also filters every other probe type: the programs
//                   filter on `pid` themselves anyway.
// So: map_files always; -p only for a process that sees nodetrace's own
// mounts. DTrace takes -p always (pid$target).
function uprobesWithPid(tracer, { otherMounts }) {
  return !(isBpftrace(tracer) && otherMounts);
}

// str(p, n) copies n bytes on 0.17, n - 1 and a NUL on 0.23 and 0.27 (a
// read of "GET /spl" came as "GET /sp": measured 2026-11-27, http-wire.bt);
// 0.18 to 0.22 not run here: taken as 0.23 from 0.21, where strings moved
// off the BPF stack.
function strCopiesLessOne(tracer) {
  return isBpftrace(tracer) && atLeast(tracer, '0.21');
}

// 0.23+ appends a trailer ("..") to a string str() cut short; the empty
// trailer keeps the bytes as they were.
function stringTrailerEnv(tracer) {
  return isBpftrace(tracer) && atLeast(tracer, '0.23') ? { BPFTRACE_STR_TRUNC_TRAILER: '' } : {};
}

// User stacks as raw addresses (nodetrace symbolizes them itself, from the
// memory map it snapshots, and reads perf maps safely inside the process's
// own root: ebadf, profile, loop): 0.17 has BPFTRACE_NO_USER_SYMBOLS; 0.23
// no longer reads it (it names frames, reading /tmp/perf-PID.map or a
// container's /proc/PID/root/tmp/perf-N.map itself, through any link and
// blocking on a FIFO: measured, both tiers) and has a raw stack mode
// instead, whose frames are bare hex ending with a 0, kernel stacks' too
// (lib/tracer/stack-frames.js names those from /proc/kallsyms).
function rawUserStackEnv(tracer) {
  if (!isBpftrace(tracer)) return {};
  return atLeast(tracer, '0.23') ? { BPFTRACE_STACK_MODE: 'raw' } : { BPFTRACE_NO_USER_SYMBOLS: '1' };
}

// Where bpftrace keeps the user stacks a program takes (ustack), and so
// where one may be lost, its sample then printed with an empty user stack
// (and 0.17-0.24 say "ERROR: failed to look up stack id" on stderr):
// 0.17-0.20 in the kernel's stack map of 131,072 buckets by the stack's
// hash (bpf_get_stackid without BPF_F_REUSE_STACKID: a stack whose bucket
// another holds is not kept, EEXIST; src/map.cpp, fixed size); 0.21-0.24
// in an LRU hash map of 131,072 stacks by a 64-bit hash (past it the
// oldest is dropped, and a sample that named it prints none:
// codegen_llvm.cpp createMapDefinition, fixed size); 0.25 on in the
// sample's own key (nothing to lose). Measured 2026-11-29 on a target of
// thousands of distinct stacks (test/targets/profile-many-stacks.js),
// profile -F 999: 0.17 lost 7 of 1,369 samples (1,349 stacks), 72 of
// 4,058 (3,876): about k^2/262,144 of k stacks; 0.23.2 and 0.27.1 none
// of 3,700 and 4,081. No environment variable sizes the map on any.
function userStackMap(tracer) {
  if (!isBpftrace(tracer) || atLeast(tracer, '0.25')) return null;
  return { places: 131072, loses: atLeast(tracer, '0.21') ? 'past them it drops the oldest' : 'it keeps no stack whose place another holds' };
}

// Whether profile-js.bt keeps the user stack itself (its WALK slot): where
// bpftrace keeps no stack whose bucket another holds (0.17-0.20, above),
// the program's own walk of the frame pointers gives the frames the
// kernel's walk gives (up to 65; deeper, ustack still), each kept once in
// a hash map. On 0.17 the walk's frames and ustack's agreed on every
// sample ustack kept, on every Node build (2026-11-30, docs/platforms.md).
// From 0.21 ustack loses a stack only past 131,072 of them: it stays.
function walksUserStacks(tracer) {
  return isBpftrace(tracer) && !atLeast(tracer, '0.21');
}

// A uprobe on a file fires in every process that maps it. From 0.20 `-p`
// makes bpftrace attach uprobes for that process only (in the kernel);
// 0.17 attaches them for all, so a program must test `pid` itself.
function filtersUprobesByPid(tracer) {
  return isBpftrace(tracer) ? atLeast(tracer, '0.20') : true;
}

// From 0.24 `-p` filters every probe but BEGIN and END by the traced
// process's PID (src/ast/passes/pid_filter_pass.cpp: tracepoints and
// kprobes get a `pid != N: return` prepended): a tracepoint fired by another
// process (the signal nodetrace sends bpftrace) never runs under -p.
function filtersEveryProbeByPid(tracer) {
  return isBpftrace(tracer) && atLeast(tracer, '0.24');
}

// From 0.23 bpftrace reports a map helper that fails (a delete of a key
// that is not there) as a warning event in its output, one per failure: the
// latency program deletes per-operation keys that may never have been set,
// and on 0.23.2 a 3-second trace printed over a thousand such warnings and
// lost its END line (measured). A full map is the same: snoop's batch maps
// fill up at high rates, which it expects and counts itself, and thousands
// of such warnings a second would flood the output and cost the probe what
// batching saves. Those programs run with --no-warnings there (0.18+; 0.17
// makes no such checks).
function quietMapHelperArgs(tracer) {
  return isBpftrace(tracer) && atLeast(tracer, '0.23') ? ['--no-warnings'] : [];
}

// Before 0.22, SIGUSR1 made bpftrace print its maps (and go on); since, it
// does not: never use it to get a snapshot.
function printsMapsOnSigusr1(tracer) {
  return isBpftrace(tracer) && !atLeast(tracer, '0.22');
}

// USDT arguments past the sixth (arg6 ... arg11): before 0.24 bpftrace
// takes argN for USDT as it does for uprobes, registers only ("x86_64
// doesn't support arg6": 0.17.0 and 0.23.2 measured; 0.27.1 reads all 12 of
// a lib/usdt probe); bpftrace PR #4118, 0.24.
function usdtArgsPastSixth(tracer) {
  return isBpftrace(tracer) && atLeast(tracer, '0.24');
}

// The most probes (probe sites) one program may attach to: BPFTRACE_MAX_PROBES,
// 512 by default on 0.17.0 and 1024 on 0.23.2 (its --help; 0.27.1 keeps the
// setting as max_probes). Versions between are given the smaller.
function maxProbes(tracer) {
  if (!isBpftrace(tracer)) return Infinity;
  return atLeast(tracer, '0.23') ? 1024 : 512;
}

// From 0.24 a program whose probes do not all attach fails as a whole
// (before, bpftrace warned and ran with the rest).
function failsIfAnyProbeMissing(tracer) {
  return isBpftrace(tracer) && atLeast(tracer, '0.24');
}

// `-f json`: from 0.24, values of types it does not know print as null and
// what the program did not print (attach messages, warnings) goes to stderr.
function jsonOutput(tracer) {
  const newer = isBpftrace(tracer) && atLeast(tracer, '0.24');
  return { nullForUnknownTypes: newer, nonScriptTextOnStderr: newer };
}

// How to compile a program without loading or attaching it (the compile
// tests, test/programs-compile.test.js and test/dtrace-linux.test.js, as
// bpftrace's own tests/tools-parsing-test does for its tools): parsed,
// checked, code generated, then exit. DTrace: -e. bpftrace up to 0.24:
// `--test codegen`; from 0.25, `--mode codegen`. Not `--dry-run`, which
// loads and attaches every probe, nor `--emit-elf FILE`, a dry run up to
// 0.23 only (measured on 0.17, 0.23.2 and 0.27.1: docs/platforms.md).
function compileOnlyArgs(tracer) {
  if (!isBpftrace(tracer)) return ['-e'];
  return atLeast(tracer, '0.25') ? ['--mode', 'codegen'] : ['--test', 'codegen'];
}

// What each command does with this tracer, for `nodetrace doctor`.
function commandNotes(tracer) {
  if (!isBpftrace(tracer)) return [];
  const v = tracer.version;
  const kernelPid = filtersUprobesByPid(tracer);
  return [
    { command: 'latency', ok: true,
      detail: kernelPid ? `-p is filtered in the kernel (bpftrace ${v} attaches uprobes per process)`
        : `-p is filtered in the program (bpftrace ${v} fires uprobes in every process that maps the binary; costs those processes a probe hit each)` },
    { command: 'snoop', ok: true,
      detail: readsLongStrings(tracer, 4180) ? `bpftrace ${v} copies long strings: each record read in one string of up to 4,179 bytes (log-snoop-whole.bt)`
        : `bpftrace ${v} copies at most 200 bytes per string: records are read in 199-byte pieces and reassembled` },
    { command: 'ebadf', ok: true, detail: `--unsafe for signal() (stop/abort); system call tracepoints` },
  ];
}

// DTrace for Linux (Oracle D 2.x) is not illumos's DTrace in a few ways that
// change what nodetrace can ask of it (measured, docs/platforms.md).  (Its
// stop() is "not implemented (yet)"; the scripts use raise(SIGSTOP), which
// works on every DTrace, so that needs no choice here.)
function isDtraceForLinux(tracer) {
  return tracer.name === 'dtrace' && tracer.flavor === 'oracle';
}

// USDT probes (bunyan's log-* probes): DTrace for Linux reads neither
// systemtap's stapsdt notes (what Linux providers emit) nor, without CUSE,
// its own USDT: it cannot see them at all.
function seesUsdt(tracer) {
  return !isDtraceForLinux(tracer);
}

// ustack()/usym()/ufunc() demangle C++ on illumos/macOS; DTrace for Linux
// prints the mangled name, and bpftrace demangles.  Callers demangle either
// way (c++filt is harmless on a plain name); this says whether they must.
function demanglesStacks(tracer) {
  return !isDtraceForLinux(tracer);
}

// ustack() in a D program makes DTrace for Linux ptrace the target while the
// program runs, so gcore (which must ptrace it too) fails with "already
// traced".  A program that stops a process for gcore must then not call
// ustack(): the stack is taken from the stopped process afterwards.
function ustackBlocksGcore(tracer) {
  return isDtraceForLinux(tracer);
}

module.exports = {
  stopPolicy, attachNotice, windowSignal, atLeast, stringLimitEnv, mapKeysEnv, mapKeysFor,
  readsLongStrings, usdtPathForPid,
  uprobesWithPid, rawUserStackEnv, userStackMap, walksUserStacks,
  maxStringBytes, stringTrailerEnv, strCopiesLessOne, filtersUprobesByPid, filtersEveryProbeByPid, quietMapHelperArgs,
  printsMapsOnSigusr1, failsIfAnyProbeMissing, jsonOutput,
  commandNotes, isDtraceForLinux, seesUsdt, demanglesStacks, ustackBlocksGcore, compileOnlyArgs, usdtArgsPastSixth,
  maxProbes,
};
