'use strict';
// Runs the tracer of a USDT trace of '*' (snoop, http) and follows probe
// libraries that appear after it began.
//
// With bpftrace, '*' attaches to probe libraries by path, which covers every
// process that maps them, also ones started later. But a user's first
// process with the hook creates that user's library after the trace began,
// and no probe is on it. Then the trace is re-planned: a new tracer covering
// every library starts, and once its probes are attached (at time T, the
// moment nodetrace hears so, on the clock bpftrace's nsecs reads:
// CLOCK_MONOTONIC) the old one hands over: events the old one saw before T
// and the new one saw from T on are kept, each event once (Generation.keeps),
// and the old tracer is ended. So at most two tracers run at once, however
// many libraries appear.
//
// The command keeps its own reading of the output: it gets each generation's
// items (`onItem`) and decides with gen.keeps() which events are its to show.
const path = require('path');
const { TracerSession, abnormalEnd } = require('../tracer/session');
const { onTerminationSignals } = require('../tracer/signals');
const libraries = require('./index');
const { fileOwnerText } = require('../proc/identity');
const { UserError, EXIT } = require('../errors');
const { LIMITS } = require('../limits');

// How often '*' looks for probe libraries that appeared since it began.
const WATCH_EVERY_MS = 2000;
// After a handover, how long the old tracer keeps running, so that what it
// saw before T has been read from its buffers before it is ended.
const HANDOVER_DRAIN_MS = 1000;
// A trace follows at most this many probe libraries, and at most this many
// of one user's (lib/limits.js says why).
const MAX_LIBRARIES = LIMITS.MAX_FOLLOWED_LIBRARIES;
const MAX_LIBRARIES_PER_USER = LIMITS.MAX_FOLLOWED_LIBRARIES_PER_USER;

function fsUid(file) {
  try { return require('fs').statSync(file).uid; } catch { return -1; }
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// One tracer of the trace, with the libraries it covers.
class Generation {
  constructor(plan, libs) {
    this.plan = plan;
    this.libraries = libs;
    this.session = null;
    this.done = null;      // the session's run() promise
    this.since = null;     // CLOCK_MONOTONIC ns from which this tracer sees every event
    this.until = null;     // kernel ns up to which its events are kept (handover)
    this.coveredBefore = null; // PIDs whose events before `since` the previous tracer kept
    this.result = null;
  }

  /**
   * Is an event this generation's to show (handover de-duplication)?
   * @param {bigint|undefined} ns kernel CLOCK_MONOTONIC time of the event
   * @param {number} pid
   */
  keeps(ns, pid) {
    if (ns === undefined) return true;
    if (this.until !== null && ns >= this.until) return false;
    if (this.since !== null && this.coveredBefore && ns < this.since && this.coveredBefore.has(pid)) return false;
    return true;
  }
}

class LibraryFollower {
  /**
   * @param {object} o
   *   tracer, provider (the probe definition: lib/snoop/targets.js BUNYAN, lib/http/probes.js)
   *   one, many 'a bunyan probe library', 'bunyan probe libraries', for messages
   *   verb      'snooping', 'tracing', for messages
   *   task      'snoop', 'trace', for messages
   *   say(text) a message to the user
   *   planFor(libs, opened fds) -> a tracer plan covering `libs`
   *   newGeneration(plan, libs) -> a Generation (or a subclass with the command's state)
   *   session(gen) -> TracerSession options (onLine, statusStream, ...)
   *   ended(gen, result) once a generation's tracer has exited
   *   onEnding(reason) once the trace is ending
   *   durationSeconds: -d, a deadline for the whole trace from the first
   *             tracer's attach, whatever is re-planned
   *   watch(known) (optional) -> { newLibraries() }: where later libraries
   *             are looked for (default: the host's, LibraryWatch;
   *             nodetrace probes -p: the processes' own maps)
   */
  constructor(o) {
    this.o = o;
    this.generations = [];
    this.main = null;            // the generation whose end ends the trace
    this.ending = null;          // why the trace is ending, once it is
    this.watch = null;
    this.replanning = false;
    this.waiting = [];           // libraries found while a re-plan was under way
    this.timers = [];
    this.opened = new libraries.OpenedLibraries(o.provider);
    this.perUser = new Map();    // uid -> libraries followed
  }

  // The libraries a tracer may be pointed at: opened and verified (bpftrace),
  // within the bounds; what is left out is said once, with its owner.
  admit(files) {
    if (this.o.tracer.name !== 'bpftrace') return files;
    const before = this.opened.refused.length;
    const ok = [];
    for (const file of this.opened.open(files)) {
      const uid = fsUid(file);
      const n = this.perUser.get(uid) || 0;
      if (n >= MAX_LIBRARIES_PER_USER) {
        this.o.say(`not following ${file}: already ${MAX_LIBRARIES_PER_USER} ${this.o.many} of uid ${uid}.`);
        continue;
      }
      this.perUser.set(uid, n + 1);
      ok.push(file);
    }
    for (const r of this.opened.refused.slice(before)) this.o.say(`not following ${r.path}, owned by ${fileOwnerText(r.path)}: ${r.why}.`);
    return ok;
  }

  // The libraries the first tracer is pointed at: `files` admitted; none
  // passing the checks is the user's to hear (the refusals were said).
  admitFirst(files) {
    const libs = this.admit(files);
    if (this.o.tracer.name === 'bpftrace' && !libs.length) {
      this.opened.closeAll();
      throw new UserError(`none of the ${this.o.many} found passed nodetrace's checks (see above): nothing to ${this.o.task}.`,
        { exitCode: EXIT.NOT_FOUND });
    }
    return libs;
  }

  /**
   * The library a tracer that failed to attach names in its error (the plan
   * links library i as `<its private directory>/i.so`), or null.
   */
  culprit(gen) {
    const r = gen.result;
    if (!r || r.ready || !gen.plan.links || !gen.plan.links.length) return null;
    const link = new RegExp(`nodetrace-${escapeRegExp(gen.plan.script)}-[^/\\s]+/(\\d+)\\.so\\b`);
    for (const line of r.errors) {
      const m = link.exec(line);
      if (m && Number(m[1]) < gen.libraries.length) return { path: gen.libraries[Number(m[1])], error: line.trim() };
    }
    return null;
  }

  // A library the tracer could not attach to (or that changed) is left
  // out, said once with its owner; the others go on.
  skip(bad, what = 'skipping') {
    const uid = fsUid(bad.path);
    if (this.perUser.has(uid)) this.perUser.set(uid, this.perUser.get(uid) - 1);
    this.opened.close(bad.path);
    const why = what === 'skipping' ? `${this.o.tracer.name} could not attach to it (${bad.error})` : bad.error;
    this.o.say(`${what} ${bad.path}, owned by ${fileOwnerText(bad.path)}: ${why}; ${this.o.verb} the others.`);
  }

  every(ms, fn) {
    this.timers.push(setInterval(fn, ms));
  }

  // Ends the trace: every tracer is told to end.
  stop(reason) {
    if (!this.ending) {
      this.ending = reason;
      if (this.o.onEnding) this.o.onEnding(reason);
    }
    for (const g of this.generations) if (g.session) g.session.end(reason);
  }

  // Starts a generation's tracer; resolves true once its probes are attached
  // (after `onReady`), false if it ended before.
  start(gen, { onReady = () => {} } = {}) {
    let attached;
    const ready = new Promise((resolve) => { attached = resolve; });
    this.generations.push(gen);
    gen.session = new TracerSession(gen.plan, {
      ...this.o.session(gen),
      // The first tracer counts down -d on its status line; the trace's
      // deadline is the follower's (armDeadline), whatever is re-planned.
      durationSeconds: gen === this.main ? this.o.durationSeconds : undefined,
      onReady: () => {
        // Every probe is attached by now: events from here on are this
        // tracer's to see (bpftrace's nsecs is CLOCK_MONOTONIC, as is hrtime).
        gen.since = process.hrtime.bigint();
        if (this.ending) gen.session.end(this.ending);
        else onReady();
        attached(true);
      },
    });
    if (this.ending) gen.session.end(this.ending);
    gen.done = gen.session.run().then((result) => result, (err) => ({ ready: false, errors: [`cannot run ${gen.plan.tracer.path}: ${err.message}`] }))
      .then((result) => {
        gen.result = result;
        if (this.o.ended) this.o.ended(gen, result);
        // The tracer that carries the trace ended on its own: the trace is over.
        if (gen === this.main && result.ready && !this.ending) this.stop('tracer ended');
        attached(false);
        return result;
      });
    return ready;
  }

  // -d: the whole trace ends this long after the first tracer attached.
  armDeadline() {
    if (!this.o.durationSeconds) return;
    const t = setTimeout(() => this.stop('duration'), this.o.durationSeconds * 1000);
    this.timers.push(t);
  }

  // A new tracer for every library, handing over from the current one; a
  // new library the tracer cannot attach to is skipped and the rest tried.
  async replan(found) {
    const old = this.main;
    const room = MAX_LIBRARIES - old.libraries.length;
    if (found.length > room) this.o.say(`not following ${found.length - Math.max(room, 0)} more ${this.o.many}: a trace follows at most ${MAX_LIBRARIES}.`);
    let adding = this.admit(found.slice(0, Math.max(room, 0)));
    this.replanning = true;
    try {
      // A library its owner changed in place since it was checked is left
      // out of the new tracer (the old one attached to it as it was).
      const kept = old.libraries.filter((file) => {
        const why = this.opened.changed(file);
        if (why) this.skip({ path: file, error: `it changed since it was checked: ${why}` }, 'not following');
        return !why;
      });
      while (adding.length && !this.ending) {
        const libs = [...kept, ...adding];
        const next = this.o.newGeneration(this.o.planFor(libs, this.opened.fds), libs);
        const newLibs = adding;
        const ready = await this.start(next, {
          onReady: () => {
            if (next.since !== null) {
              next.coveredBefore = libraries.pidsMapping(old.libraries);
              old.until = next.since;
            }
            this.main = next;
            this.o.say(`also ${this.o.verb} ${newLibs.join(', ')}, ${newLibs.length === 1 ? this.o.one : this.o.many} that appeared since.`);
            setTimeout(() => old.session.end('handover'), HANDOVER_DRAIN_MS);
          },
        });
        if (ready || this.ending) return;
        const bad = this.culprit(next);
        if (bad && libs.includes(bad.path)) {
          this.skip(bad);
          if (kept.includes(bad.path)) kept.splice(kept.indexOf(bad.path), 1);
          adding = newLibs.filter((f) => f !== bad.path);
          continue;
        }
        this.o.say(`could not follow ${newLibs.join(', ')}: ${next.result.errors.find(Boolean) || 'the tracer failed'}`);
        return;
      }
    } finally {
      this.replanning = false;
    }
  }

  // Files refused by the scan (libraries that declare the provider but
  // failed the checks, lib/probe-libraries/library-check.js; files named as libraries
  // too large or not regular), said once with their owner: those refused
  // for one reason in one directory in one line (a user's thousands of
  // files make one line, not thousands).
  sayRefusals() {
    if (this.o.tracer.name !== 'bpftrace') return;
    const groups = new Map();
    for (const r of libraries.scanFor(this.o.provider).takeRefusals()) {
      const key = `${path.dirname(r.path)}\0${r.why}`;
      if (!groups.has(key)) groups.set(key, { why: r.why, files: [] });
      groups.get(key).files.push(r.path);
    }
    for (const { why, files } of groups.values()) {
      const more = files.length > 1 ? ` and ${files.length - 1} more files in ${path.dirname(files[0])}` : '';
      this.o.say(`not following ${files[0]}${more}, owned by ${fileOwnerText(files[0])}: ${why}.`);
    }
  }

  // Every WATCH_EVERY_MS: new libraries are said at once, and followed as
  // soon as no re-plan is under way.
  watchLibraries() {
    if (this.ending) return;
    const fresh = this.watch.newLibraries();
    this.sayRefusals();
    for (const file of fresh) {
      this.o.say(`found ${file}, owned by ${fileOwnerText(file)}: ${this.o.one} that appeared since.`);
      this.waiting.push(file);
    }
    if (this.replanning || !this.waiting.length) return;
    const found = this.waiting.splice(0);
    this.replan(found).catch((err) => this.o.say(`could not follow ${found.join(', ')}: ${err.message}`));
  }

  /**
   * Runs the first tracer on `libs` (admitted already) and, with `follow`,
   * follows new libraries once it is attached; resolves when every tracer,
   * including any started by a re-plan meanwhile, is done, with the first
   * tracer's generation (the one that attached: a library the tracer cannot
   * attach to is skipped, said, and the others tried again). Ctrl-C
   * (SIGINT, SIGTERM, SIGHUP) ends every tracer.
   * @param {string[]} libs
   * @param {object} o { follow, known: the libraries seen already (default
   *                    `libs`; those refused are not offered again), onReady }
   */
  async run(libs, { follow = false, known = libs, onReady = () => {} } = {}) {
    const stopHandling = onTerminationSignals((sig) => this.stop(sig));
    this.sayRefusals();
    let first;
    try {
      for (;;) {
        first = this.o.newGeneration(this.o.planFor(libs, this.opened.fds), libs);
        this.main = first;
        if (await this.start(first) || this.ending) break;
        const bad = this.culprit(first);
        if (!bad || libs.length < 2) break;
        this.skip(bad);
        libs = libs.filter((f) => f !== bad.path);
      }
      if (first.result === null && !this.ending) {
        this.armDeadline();
        if (follow) {
          this.watch = this.o.watch ? this.o.watch(known) : new libraries.LibraryWatch(this.o.provider, known);
          this.every(WATCH_EVERY_MS, () => this.watchLibraries());
        }
        onReady();
      }
      for (let seen = 0; seen < this.generations.length || this.replanning;) {
        seen = this.generations.length;
        await Promise.all(this.generations.map((g) => g.done));
        if (this.replanning) await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      for (const t of this.timers) { clearInterval(t); clearTimeout(t); }
      stopHandling();
      this.stop('finished');
      await Promise.all(this.generations.map((g) => g.done));
      this.opened.closeAll();
    }
    return first;
  }

  // Why a tracer ended, when that is not a clean end (one handed over ended
  // on purpose).
  abnormalEnd() {
    for (const g of this.generations) {
      if (g.until !== null || !g.result) continue;
      const why = abnormalEnd(g.result, g.plan);
      if (why) return why;
    }
    return null;
  }
}

module.exports = { LibraryFollower, Generation, WATCH_EVERY_MS, MAX_LIBRARIES, MAX_LIBRARIES_PER_USER };
