'use strict';
// Runs a snoop: the tracer session(s), reassembly of their output into
// records, the sink that prints them, and the loss accounting. Pure parts
// live elsewhere (targets.js, plan.js, reassemble.js, format.js); this file
// is the orchestration and holds its state in a few named places.
//
// snoop '*' with bpftrace attaches to probe libraries by path, and a user's
// first bunyan process creates its library after the snoop began. Then the
// snoop is re-planned: a new tracer covering every library starts, and once
// its probes are attached (at time T, the moment nodetrace hears so, on the
// clock bpftrace's nsecs reads: CLOCK_MONOTONIC) the old one hands over: records the old one saw before T and the new one saw
// from T on are kept, each record once, and the old tracer is ended. So at
// most two tracers run at once, however many libraries appear.
const { TracerSession, abnormalEnd } = require('../tracer/session');
const { onTerminationSignals } = require('../tracer/signals');
const libraries = require('../usdt/probe-libraries');
const { Reassembler, parseItem, parseTextLine } = require('./reassemble');
const { lineFor } = require('./format');
const { createSink } = require('./sink');
const { planSnoop, levelPhrase } = require('./plan');
const proc = require('../proc');
const { safeText } = require('../terminal-safe');
const { BUNYAN } = require('./targets');
const { UserError, EXIT } = require('../errors');

function fsUid(file) {
  try { return require('fs').statSync(file).uid; } catch (err) { return -1; }
}

// How often snoop '*' looks for probe libraries that appeared since it began.
const WATCH_EVERY_MS = 2000;
// After a handover, how long the old tracer keeps running, so that what it
// saw before T has been read from its buffers before it is ended.
const HANDOVER_DRAIN_MS = 1000;
// A snoop follows at most this many probe libraries (one per user and
// provider definition in practice; more means someone is making variants),
// and at most this many of one user's, so that no user can crowd out others.
// Each library adds about 7 s to bpftrace's start (lib/snoop/plan.js).
const MAX_LIBRARIES = 16;
const MAX_LIBRARIES_PER_USER = 4;
// Lines the script prints that are not news.
const QUIET = [/^$/, /^Attaching \d+ probes?\.\.\.$/, /^Tracing ended\.$/, /^Snooping bunyan records/, /^@\w+: /];

class Generation {
  constructor(plan, libs) {
    this.plan = plan;
    this.libraries = libs;
    this.reassembler = new Reassembler({
      ...(plan.pieceBytes ? { pieceBytes: plan.pieceBytes } : {}),
      ...(plan.batchEntries ? { batchEntries: plan.batchEntries } : {}),
    });
    this.session = null;
    this.done = null;      // the session's run() promise
    this.since = null;     // CLOCK_MONOTONIC ns from which this tracer sees every record
    this.until = null;     // kernel ns up to which its records are kept (handover)
    this.coveredBefore = null; // PIDs whose records before `since` the previous tracer kept
    this.kept = { records: 0, truncated: 0, pids: new Set() };
    this.result = null;
  }

  // Is this record this generation's to show (handover de-duplication)?
  keeps(ev) {
    if (ev.id === undefined) return true;
    const id = BigInt(ev.id);
    if (this.until !== null && id >= this.until) return false;
    if (this.since !== null && this.coveredBefore && id < this.since && this.coveredBefore.has(ev.pid)) return false;
    return true;
  }
}

class Snooper {
  /**
   * @param {object} o { tracer, targets, minLevel, outputMode ('raw' for --json), color,
   *                     durationSeconds, err (stream for messages) }
   */
  constructor(o) {
    this.o = o;
    this.err = o.err || process.stderr;
    this.sink = null;
    this.generations = [];
    this.main = null;             // the generation whose end ends the snoop
    this.ending = null;           // why the snoop is ending, once it is
    this.outputClosed = false;
    this.exitedNote = null;
    this.refused = null;
    this.notedAt = {};     // kind of news -> when last said (Date.now())
    this.lostSinceNote = 0;
    this.timers = [];
    this.watch = null;
    this.replanning = false;
    this.opened = new libraries.OpenedLibraries(BUNYAN);
    this.perUser = new Map();   // uid -> libraries followed
    this.namespacePids = new Map();   // pid -> its PIDs in its namespaces
  }

  // The libraries a tracer may be pointed at: opened and verified (bpftrace),
  // within the bounds; what is left out is said once.
  admit(files) {
    if (this.o.tracer.name !== 'bpftrace') return files;
    const before = this.opened.refused.length;
    const ok = [];
    for (const file of this.opened.open(files)) {
      const uid = fsUid(file);
      const n = this.perUser.get(uid) || 0;
      if (n >= MAX_LIBRARIES_PER_USER) {
        this.say(`not following ${file}: already ${MAX_LIBRARIES_PER_USER} bunyan probe libraries of uid ${uid}.`);
        continue;
      }
      this.perUser.set(uid, n + 1);
      ok.push(file);
    }
    for (const r of this.opened.refused.slice(before)) this.say(`not following ${r.path}: ${r.why}.`);
    return ok;
  }

  planFor(libs) {
    return planSnoop(this.o.tracer, { ...this.o.targets, libraries: libs }, this.o.minLevel, { opened: this.opened.fds });
  }

  say(text) {
    this.err.write(safeText(`nodetrace: ${text}`) + '\n');
  }

  every(ms, fn) {
    this.timers.push(setInterval(fn, ms));
  }

  // Ends the snoop: every tracer is told to end.
  stop(reason) {
    if (!this.ending) this.ending = reason;
    for (const g of this.generations) if (g.session) g.session.end(reason);
  }

  // --- records ------------------------------------------------------------

  handle(gen, events) {
    for (const ev of events) {
      if (ev.type === 'record' || ev.type === 'truncated') {
        if (!gen.keeps(ev)) continue;
        if (gen.plan.only && !gen.plan.only.has(ev.pid)) continue;
        gen.kept[ev.type === 'record' ? 'records' : 'truncated']++;
        gen.kept.pids.add(ev.pid);
        const line = lineFor(ev, this.o.outputMode, (pid) => this.ownPids(pid));
        // Back-pressure: stop reading the tracers; their buffers then drop
        // records (and say so) rather than slowing the traced processes.
        if (line !== null && !this.sink.write(line)) this.pauseAll();
      } else if (ev.type === 'lost') {
        this.noteLost(ev.events);
      } else if (ev.type === 'full') {
        this.noteFull(ev.entries);
      } else if (ev.type === 'error') {
        this.refused = ev.message;
      } else if (ev.type === 'other' && !QUIET.some((re) => re.test(ev.line))) {
        this.err.write(`${this.o.tracer.name}: ${safeText(ev.line, { oneLine: true })}\n`);
      }
    }
  }

  // What a process knows itself as (its PID in each PID namespace): a record
  // may claim those. Read once per process.
  ownPids(pid) {
    if (!this.namespacePids.has(pid)) this.namespacePids.set(pid, proc.namespacePids(pid));
    return this.namespacePids.get(pid);
  }

  // Says `message` unless news of this kind was said in the last 2 s.
  sayAtMostEvery2s(kind, message) {
    const now = Date.now();
    if (now - (this.notedAt[kind] || 0) < 2000) return false;
    this.notedAt[kind] = now;
    this.say(message);
    return true;
  }

  noteLost(events) {
    this.lostSinceNote += events;
    if (this.sayAtMostEvery2s('lost', `the tracer is dropping records: it could not keep up (${this.lostSinceNote} events lost just now).`)) {
      this.lostSinceNote = 0;
    }
  }

  // A batch map was full: the tracer dropped what came after (bpftrace says
  // nothing of it; the summary counts the records).
  noteFull(entries) {
    this.sayAtMostEvery2s('full', `the tracer is dropping records: it could not keep up (a batch filled its ${entries} entries).`);
  }

  pauseAll() {
    for (const g of this.generations) if (g.session && g.session.child && g.session.child.stdout) g.session.child.stdout.pause();
  }

  resumeAll() {
    for (const g of this.generations) if (g.session && g.session.child && g.session.child.stdout) g.session.child.stdout.resume();
  }

  // --- tracers ------------------------------------------------------------

  start(gen, { onReady }) {
    this.generations.push(gen);
    gen.session = new TracerSession(gen.plan, {
      durationSeconds: gen === this.main ? this.o.durationSeconds : undefined,
      statusStream: null,   // the records stream to the terminal: no redrawn status line
      handleSignals: false, // the snoop as a whole handles them
      onLine: (item) => this.handle(gen, gen.reassembler.push(parseItem(item), Date.now())),
      onReady: () => {
        // Every probe is attached by now: records from here on are this
        // tracer's to see (bpftrace's nsecs is CLOCK_MONOTONIC, as is hrtime).
        gen.since = process.hrtime.bigint();
        if (this.ending) gen.session.end(this.ending);
        else onReady();
      },
    });
    if (this.ending) gen.session.end(this.ending);
    gen.done = gen.session.run().then((result) => result, (err) => ({ ready: false, errors: [`cannot run ${gen.plan.tracer.path}: ${err.message}`] }))
      .then((result) => {
        // DTrace reports drops on stderr ("dtrace: 3 drops on CPU 0").
        for (const line of result.errors) {
          const p = parseTextLine(line.trim());
          if (p.kind === 'lost') this.handle(gen, gen.reassembler.push(p));
        }
        this.handle(gen, gen.reassembler.finish());
        gen.result = result;
        // The tracer that carries the snoop ended on its own: the snoop is over.
        if (gen === this.main && !this.ending) this.stop('tracer ended');
        return result;
      });
    return gen.done;
  }

  // snoop '*': a new tracer for every library, handing over from the current one.
  async replan(found) {
    const old = this.main;
    const room = MAX_LIBRARIES - old.libraries.length;
    if (found.length > room) this.say(`not following ${found.length - Math.max(room, 0)} more bunyan probe libraries: a snoop follows at most ${MAX_LIBRARIES}.`);
    const newLibs = this.admit(found.slice(0, Math.max(room, 0)));
    if (!newLibs.length) return;
    const libs = [...old.libraries, ...newLibs];
    const next = new Generation(this.planFor(libs), libs);
    this.replanning = true;
    await new Promise((resolve) => {
      this.start(next, {
        onReady: () => {
          if (next.since !== null) {
            next.coveredBefore = libraries.pidsMapping(old.libraries);
            old.until = next.since;
          }
          this.main = next;
          this.say(`also snooping ${newLibs.join(', ')}, ${newLibs.length === 1 ? 'a bunyan probe library' : 'bunyan probe libraries'} that appeared since.`);
          setTimeout(() => old.session.end('handover'), HANDOVER_DRAIN_MS);
          resolve();
        },
      });
      next.done.then((r) => {
        if (!r.ready && !this.ending) this.say(`could not follow ${newLibs.join(', ')}: ${r.errors.find(Boolean) || 'the tracer failed'}`);
        resolve();
      });
    });
    this.replanning = false;
  }

  watchLibraries() {
    if (this.ending || this.replanning) return;
    const fresh = this.watch.newLibraries();
    if (fresh.length) this.replan(fresh);
  }

  checkTargetsAlive() {
    const pids = this.o.targets.pids;
    if (this.ending || pids.some((pid) => proc.isRunning(pid))) return;
    this.exitedNote = pids.length === 1 ? `PID ${pids[0]} exited.` : 'every snooped process has exited.';
    this.stop('targets exited');
  }

  /**
   * Runs until Ctrl-C, -d, the output closing, or every target exiting.
   * -> { first: the first tracer's result, ended: abnormal end or null, stats }
   */
  async run() {
    const o = this.o;
    const libs = o.targets.kind === 'pids' && o.targets.pids.length === 1 ? o.targets.libraries : this.admit(o.targets.libraries);
    if (o.tracer.name === 'bpftrace' && !libs.length) {
      this.opened.closeAll();
      throw new UserError('none of the bunyan probe libraries found passed nodetrace\'s checks (see above): nothing to snoop.',
        { exitCode: EXIT.NOT_FOUND });
    }
    this.sink = createSink(o.outputMode, { color: o.color });
    this.sink.on('drain', () => this.resumeAll());
    this.sink.on('closed', () => { this.outputClosed = true; this.stop('output closed'); });
    const stopHandling = onTerminationSignals((sig) => this.stop(sig));

    this.main = new Generation(this.planFor(libs), libs);
    const first = this.main;
    this.every(1000, () => { for (const g of this.generations) this.handle(g, g.reassembler.expire(Date.now())); });
    if (o.targets.kind === 'pids') this.every(1000, () => this.checkTargetsAlive());
    const followsLibraries = o.targets.kind === 'all' && o.tracer.name === 'bpftrace';

    try {
      this.start(first, {
        onReady: () => {
          if (followsLibraries) {
            this.watch = new libraries.LibraryWatch(BUNYAN, o.targets.libraries);
            this.every(WATCH_EVERY_MS, () => this.watchLibraries());
          }
          this.say(`snooping bunyan records (${levelPhrase(o.minLevel)}) of ${o.targets.describe} `
            + `with ${o.tracer.name} ${o.tracer.version}; Ctrl-C to stop.`);
        },
      });
      // Until every tracer, including any started by a re-plan meanwhile, is done.
      for (let seen = 0; seen < this.generations.length || this.replanning;) {
        seen = this.generations.length;
        await Promise.all(this.generations.map((g) => g.done));
        if (this.replanning) await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      for (const t of this.timers) clearInterval(t);
      stopHandling();
      this.stop('finished');
      await Promise.all(this.generations.map((g) => g.done));
      this.opened.closeAll();
    }
    await this.sink.end();
    return first.result;
  }

  // Why the snoop's tracer ended, when that is not a clean end.
  abnormalEnd() {
    for (const g of this.generations) {
      if (g.until !== null || !g.result) continue;   // handed over: ended on purpose
      const why = abnormalEnd(g.result, g.plan);
      if (why) return why;
    }
    return null;
  }

  // Totals over every tracer, for the summary line.
  totals() {
    const t = { records: 0, truncated: 0, incomplete: 0, lostEvents: 0, fullBatches: 0, pids: new Set(), lostRecords: 0 };
    for (const g of this.generations) {
      const s = g.reassembler.stats;
      t.records += g.kept.records;
      t.truncated += g.kept.truncated;
      for (const p of g.kept.pids) t.pids.add(p);
      t.incomplete += s.incomplete;
      t.lostEvents += s.lostEvents;
      t.fullBatches += s.fullBatches;
      const lost = g.reassembler.lostRecords();
      if (lost === null || t.lostRecords === null) t.lostRecords = null;
      else t.lostRecords += lost;
    }
    return t;
  }
}

module.exports = { Snooper, MAX_LIBRARIES, WATCH_EVERY_MS };
