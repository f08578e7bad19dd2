'use strict';
// Everything nodetrace does differently by tracer and version, in one place:
// callers ask what a tracer can do or needs; they never compare versions
// themselves.

// How to end a tracer so that it prints what it gathered.
//
// bpftrace: SIGTERM, which it handles exactly as SIGINT while tracing but
// keeps ignoring while it prints its maps afterwards (a SIGINT then kills it
// mid-print). And bpftrace (0.17 at least) loses a signal that lands while
// it is not blocked in epoll_wait (its handler sets a flag that the poll loop
// reads only when epoll_wait is interrupted), so say it again until the END
// probe has printed the END marker, which our programs put last in END.
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

// Compares a detected tracer's version with 'major.minor'.
function atLeast(tracer, version) {
  const parts = tracer.versionParts;
  if (!parts) return false;
  const [major, minor] = version.split('.').map(Number);
  return parts.major > major || (parts.major === major && parts.minor >= minor);
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

// How long attaching may take before the run is given up.  DTrace for Linux
// attaches pid-provider probes slowly: 13 s for addon-latency.d's six on a
// 2-core host, over 20 s when it is busy (measured, docs/platforms.md).
function attachTimeoutMs(tracer) {
  return isDtraceForLinux(tracer) ? 90000 : 20000;
}

module.exports = { attachTimeoutMs, stopPolicy, attachNotice, atLeast, isDtraceForLinux, seesUsdt, demanglesStacks, ustackBlocksGcore };
