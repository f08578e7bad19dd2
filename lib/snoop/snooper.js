'use strict';
// Runs a snoop: the tracer session(s), reassembly of their output into
// records, the sink that prints them, and the loss accounting. Pure parts
// live elsewhere (targets.js, plan.js, reassemble.js, format.js); this file
// is the orchestration and holds its state in a few named places.
//
// snoop '*' with bpftrace follows probe libraries that appear after it
// began (lib/probe-libraries/library-follower.js): records are de-duplicated across a
// handover by their id, the kernel time they were logged.
const { LibraryFollower, Generation } = require('../probe-libraries/library-follower');
const { Reassembler, parseItem, parseTextLine } = require('./reassemble');
const { lineFor } = require('./format');
const { createSink } = require('./sink');
const { planSnoop, levelPhrase } = require('./plan');
const proc = require('../proc');
const { safeText } = require('../terminal-safe');
const { BUNYAN } = require('./targets');
const { identify } = require('../proc/identity');
const { shortId } = require('../proc/container');
const { addMaps } = require('../render/loss');

// Lines the script prints that are not news.
const QUIET = [/^$/, /^Attaching \d+ probes?\.\.\.$/, /^Tracing ended\.$/, /^Snooping bunyan records/, /^@\w+: /];

// A tracer of the snoop, with its reassembly and what it showed.
class SnoopGeneration extends Generation {
  constructor(plan, libs) {
    super(plan, libs);
    this.reassembler = new Reassembler({
      ...(plan.details.pieceBytes ? { pieceBytes: plan.details.pieceBytes } : {}),
      ...(plan.details.batchEntries ? { batchEntries: plan.details.batchEntries } : {}),
    });
    this.kept = { records: 0, truncated: 0, pids: new Set() };
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
    this.outputClosed = false;
    this.exitedNote = null;
    this.refused = null;
    this.notedAt = {};     // kind of news -> when last said (Date.now())
    this.lostSinceNote = 0;
    this.timers = [];
    this.namespacePids = new Map();   // pid -> its PIDs in its namespaces
    this.identities = new Map();      // pid -> who it is (lib/proc/identity.js)
    this.follower = new LibraryFollower({
      tracer: o.tracer,
      provider: BUNYAN,
      one: 'a bunyan probe library',
      many: 'bunyan probe libraries',
        verb: 'snooping',
      task: 'snoop',
      say: (text) => this.say(text),
      planFor: (libs, opened) => planSnoop(o.tracer, { ...o.targets, libraries: libs }, o.minLevel, { opened }),
      newGeneration: (plan, libs) => new SnoopGeneration(plan, libs),
      durationSeconds: o.durationSeconds,
      session: (gen) => ({
        statusStream: null,   // the records stream to the terminal: no redrawn status line
        handleSignals: false, // the snoop as a whole handles them
        onLine: (item) => this.handle(gen, gen.reassembler.push(parseItem(item), Date.now())),
      }),
      ended: (gen, result) => {
        // DTrace reports drops on stderr ("dtrace: 3 drops on CPU 0").
        for (const line of result.errors) {
          const p = parseTextLine(line.trim());
          if (p.kind === 'lost') this.handle(gen, gen.reassembler.push(p));
        }
        this.handle(gen, gen.reassembler.finish());
      },
    });
  }

  get generations() {
    return this.follower.generations;
  }

  say(text) {
    this.err.write(safeText(`nodetrace: ${text}`) + '\n');
  }

  every(ms, fn) {
    this.timers.push(setInterval(fn, ms));
  }

  // Ends the snoop: every tracer is told to end.
  stop(reason) {
    this.follower.stop(reason);
  }

  // --- records ------------------------------------------------------------

  handle(gen, events) {
    for (const ev of events) {
      if (ev.type === 'record' || ev.type === 'truncated') {
        if (!gen.keeps(ev.id === undefined ? undefined : BigInt(ev.id), ev.pid)) continue;
        if (gen.plan.only && !gen.plan.only.has(ev.pid)) continue;
        gen.kept[ev.type === 'record' ? 'records' : 'truncated']++;
        gen.kept.pids.add(ev.pid);
        const line = lineFor(ev, this.o.outputMode, (pid) => this.ownPids(pid), (pid) => this.containerName(pid));
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

  // Who a process is, read once (its first record).
  identityOf(pid) {
    if (!this.identities.has(pid)) this.identities.set(pid, identify(pid));
    return this.identities.get(pid);
  }

  containerName(pid) {
    const c = this.identityOf(pid).container;
    return c ? c.name || shortId(c.id) : null;
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

  checkTargetsAlive() {
    const pids = this.o.targets.pids;
    if (this.follower.ending || pids.some((pid) => proc.isRunning(pid))) return;
    this.exitedNote = pids.length === 1 ? `PID ${pids[0]} exited.` : 'every snooped process has exited.';
    this.stop('targets exited');
  }

  /**
   * Runs until Ctrl-C, -d, the output closing, or every target exiting.
   * -> { first: the first tracer's result, ended: abnormal end or null, stats }
   */
  async run() {
    const o = this.o;
    const libs = o.targets.kind === 'pids' && o.targets.pids.length === 1 ? o.targets.libraries : this.follower.admitFirst(o.targets.libraries);
    this.sink = createSink(o.outputMode, { color: o.color });
    this.sink.on('drain', () => this.resumeAll());
    this.sink.on('closed', () => { this.outputClosed = true; this.stop('output closed'); });
    this.every(1000, () => { for (const g of this.generations) this.handle(g, g.reassembler.expire(Date.now())); });
    if (o.targets.kind === 'pids') this.every(1000, () => this.checkTargetsAlive());

    let first;
    try {
      first = await this.follower.run(libs, {
        follow: o.targets.kind === 'all' && o.tracer.name === 'bpftrace',
        known: o.targets.libraries,
        onReady: () => this.say(`snooping bunyan records (${levelPhrase(o.minLevel)}) of ${o.targets.describe} `
          + `with ${o.tracer.name} ${o.tracer.version}; Ctrl-C to stop.`),
      });
    } finally {
      for (const t of this.timers) clearInterval(t);
    }
    await this.sink.end();
    return first.result;
  }

  // Why the snoop's tracer ended, when that is not a clean end.
  abnormalEnd() {
    return this.follower.abnormalEnd();
  }

  // Per process, over every tracer: what its probes fired, what was left
  // out of a crowded batch, what arrived (lib/render/loss.js).
  lossCounts() {
    const counts = new Map();
    for (const g of this.generations) {
      const r = g.reassembler;
      addMaps(counts, { fired: r.firedBy, over: r.overBy, full: r.fullBy, arrived: r.arrivedBy });
    }
    return counts;
  }

  // Totals over every tracer, for the summary line.
  totals() {
    const t = { records: 0, truncated: 0, incomplete: 0, lostEvents: 0, fullBatches: 0, pids: new Set(), lostRecords: 0, over: 0, full: 0 };
    for (const g of this.generations) {
      const s = g.reassembler.stats;
      t.records += g.kept.records;
      t.truncated += g.kept.truncated;
      for (const p of g.kept.pids) t.pids.add(p);
      t.incomplete += s.incomplete;
      t.lostEvents += s.lostEvents;
      t.fullBatches += s.fullBatches;
      t.over += s.over || 0;
      t.full += s.full || 0;
      const lost = g.reassembler.lostRecords();
      if (lost === null || t.lostRecords === null) t.lostRecords = null;
      else t.lostRecords += lost;
    }
    return t;
  }
}

module.exports = { Snooper };
