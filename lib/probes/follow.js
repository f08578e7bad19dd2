'use strict';
// The tracers of a `nodetrace probes` trace, and the probe libraries that
// appear once it began: a provider created, or enabled again with more
// probes (lib/usdt makes a new library for each definition), in a process
// traced (-p, PIDs, a name: its own maps are watched) or anywhere ('*': the
// host's libraries, as snoop's and http's '*' find them).
//
// Found as snoop's follower finds them (lib/probe-libraries/library-follower.js: every
// 2 s, checked, at most 16 libraries, 4 a user), but not handed over: a
// library that appears gets a tracer of its own beside the ones running.
// A handover keeps each event once by its time, which firings have; counts
// and latency histograms are sums in each tracer's maps, which cannot be
// split at the moment of a handover, so two tracers of one library would
// count what both saw. Each library is traced by one tracer only: nothing
// is seen twice and nothing between two tracers is lost.
const fs = require('fs');
const { LibraryFollower, Generation, MAX_LIBRARIES } = require('../probe-libraries/library-follower');
const libraries = require('../probe-libraries');
const { FiringReader } = require('./firings');
const { argumentsRead } = require('./program');

class ProbeGeneration extends Generation {
  constructor(plan, libs) {
    super(plan, libs);
    const d = plan.details;
    this.reader = d.mode === 'lines' ? new FiringReader(d.probes, { stringBytes: d.stringBytes, read: d.probes.map((p) => argumentsRead(plan.tracer, p)) }) : null;
    this.items = [];   // count and latency: the maps it printed
  }
}

class ProbeFollower extends LibraryFollower {
  constructor(o) {
    super(o);
    this.followed = 0;
  }

  // Libraries that appeared: a tracer of their own (planFor may find none of
  // their probes asked for: then nothing is started).
  async replan(found) {
    const room = MAX_LIBRARIES - this.followed;
    if (found.length > room) this.o.say(`not following ${found.length - Math.max(room, 0)} more ${this.o.many}: a trace follows at most ${MAX_LIBRARIES}.`);
    const adding = this.admit(found.slice(0, Math.max(room, 0)));
    if (!adding.length || this.ending) return;
    this.followed += adding.length;
    this.replanning = true;
    try {
      const plan = this.o.planFor(adding, this.opened.fds);
      if (!plan) return;
      const next = this.o.newGeneration(plan, adding);
      const ready = await this.start(next, { onReady: () => this.o.say(`also tracing ${plan.describe}, in ${adding.join(', ')}, which appeared since.`) });
      if (!ready && !this.ending) this.o.say(`could not follow ${adding.join(', ')}: ${(next.result && next.result.errors.find(Boolean)) || 'the tracer failed'}`);
    } finally {
      this.replanning = false;
    }
  }
}

// Where later libraries are looked for in traced processes: their maps,
// each library's file once (by inode); only libraries that declare a
// provider the trace asks for (`matcher`, lib/probes/targets.js).
class ProcessLibraryWatch {
  constructor(pids, known, matcher) {
    this.pids = pids;
    this.matcher = matcher;
    this.covered = new Set(known.map(libraries.inode).filter(Boolean));
  }

  newLibraries() {
    const out = [];
    for (const pid of this.pids) {
      for (const mapped of libraries.mappedLibraries(pid)) {
        const file = libraries.reachablePath(pid, mapped);
        const id = file && libraries.inode(file);
        if (!id || this.covered.has(id)) continue;
        this.covered.add(id);
        const v = libraries.openVerified(file, this.matcher);
        if (v.refused) continue;
        fs.closeSync(v.fd);
        out.push(file);
      }
    }
    return out;
  }
}

module.exports = { ProbeFollower, ProbeGeneration, ProcessLibraryWatch };
