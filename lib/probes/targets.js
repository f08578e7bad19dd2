'use strict';
// What `nodetrace probes` looks at and traces: the processes its target
// names (the one grammar of lib/targets/options.js), the probes each has
// (lib/probes/inventory.js), those the PROVIDER:PROBE globs name
// (lib/probes/spec.js), and the clauses of the tracer's program, one per
// probe and file, each with the path the tracer attaches by.
//
// '*' is every provider made with the dtrace-provider API that a glob
// names, on the whole host: their probe libraries, attached by path, which
// covers the processes that map them, also ones started later
// (lib/probe-libraries/index.js finds and checks them as snoop's and http's
// '*' do). Other objects' notes (libstdc++'s) are traced in the processes
// named, not host-wide: a library every process maps is no one's trace.
const fs = require('fs');
const { UserError, UsageError, EXIT } = require('../errors');
const proc = require('../proc');
const shared = require('../targets/resolve');
const libraries = require('../probe-libraries');
const { providerFromDefinition } = require('../usdt/definition');
const { containerNodeProcesses, podPidsTarget, hostFacts: oneProcessHost } = require('../targets/one-process');
const { describeIdentity, containerText } = require('../proc/container');
const { identify } = require('../proc/identity');
const { processProbes, apiProbes } = require('./inventory');
const { objectNotes } = require('./object-probes');
const { matchProbes, specMatches, traceable, nameText } = require('./spec');
const { usdtPathForPid, maxProbes } = require('../tracer/capabilities');
const { PID_SLOTS } = require('./program');

/**
 * The processes a target names: { kind: 'all' } or { kind: 'pids', pids, note }.
 * A name may match any process (USDT probes are not Node's only);
 * --container, --pod: its Node processes now.
 */
function resolveProcesses({ target, container, pod }) {
  if (pod !== undefined) {
    const { pid, note } = podPidsTarget(pod, { command: 'probes', verbing: '' });
    return { kind: 'pids', pids: pid.split(',').map(Number), note };
  }
  if (container !== undefined) {
    const { container: c, pids } = containerNodeProcesses(container, oneProcessHost(), { command: 'probes' });
    return { kind: 'pids', pids, note: `the Node process${pids.length === 1 ? '' : 'es'} of ${containerText(c)}: PID ${pids.join(', ')}` };
  }
  const host = shared.hostFacts();
  const t = shared.parseTarget(target, 'probes');
  if (t.kind === 'all') return { kind: 'all' };
  const pids = shared.matchingPids(t, host, { command: 'probes', everyHint: '\'*\' is every provider made with the provider API.' });
  const note = t.kind === 'name' && pids.length > 1 ? `"${shared.shorten(t.pattern)}" matches ${pids.length} processes: ${pids.slice(0, 20).join(', ')}${pids.length > 20 ? ', ...' : ''}` : null;
  return { kind: 'pids', pids, note };
}

/** Every process that maps a probe library (a provider made with the API): '*' for listing. */
function processesWithProviders() {
  return proc.allPids().filter((pid) => pid !== process.pid && libraries.mappedLibraries(pid).length > 0);
}

// A provider definition matches the globs when any glob names one of its probes.
function providerMatcher(specs) {
  return (def) => {
    const provider = providerFromDefinition(def);
    if (!provider) return null;
    const probes = provider.probes.map(([name]) => ({ provider: provider.name, module: provider.module, name }));
    return probes.some((p) => specs.some((s) => specMatches(s, p))) ? provider : null;
  };
}

// The probes of a probe library nodetrace opened and checked ({ path, provider }).
function libraryProbes(lib) {
  const found = objectNotes(lib.path);
  const notes = found.refused ? [] : found.notes;
  return apiProbes(lib.provider, notes)
    .map((p) => ({ ...p, object: { path: lib.path, file: lib.path, api: true, uid: lib.uid } }));
}

/**
 * The candidates of a trace: every probe of the processes (or, for '*',
 * of the host's libraries of a provider the globs name), each with its
 * object and process. -> { candidates, where, refused: [{ path, why }] }
 */
function candidatesOf(processes, specs) {
  if (processes.kind === 'all') {
    const matcher = providerMatcher(specs);
    const scan = libraries.scanFor(matcher);
    const found = scan.scan();
    const candidates = [];
    for (const file of found) {
      const v = libraries.openVerified(file, matcher);
      if (v.refused) continue;
      fs.closeSync(v.fd);
      candidates.push(...libraryProbes({ path: file, provider: v.provider, uid: v.uid })
        .map((p) => ({ ...p, pid: null })));
    }
    return { candidates, where: 'any process on this host', refused: scan.takeRefusals(), matcher };
  }
  const candidates = [];
  const refused = [];
  for (const pid of processes.pids) {
    const inv = processProbes(pid);
    if (!inv) continue;
    for (const o of inv.objects) {
      if (o.refused) { refused.push({ path: o.path, why: o.refused, pid }); continue; }
      for (const p of o.probes) candidates.push({ ...p, object: o, pid });
    }
  }
  const where = processes.pids.length === 1 ? describeIdentity(identify(processes.pids[0])) : `the ${processes.pids.length} processes`;
  return { candidates, where, refused, matcher: providerMatcher(specs) };
}

// A file's identity, to trace one file's probe once however many processes map it.
function fileKey(o) {
  try {
    const st = fs.statSync(o.file);
    return `${st.dev}:${st.ino}`;
  } catch {
    return o.file;
  }
}

// Whether a tracer may open a file by its path: root's and no one else's to
// write (a system library); another's file is reached through what pins it
// (a verified descriptor, a mapping's link).
function rootsOwn(file) {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.uid === 0 && !(st.mode & 0o022);
  } catch {
    return false;
  }
}

/**
 * The clauses of the program for the probes chosen: one per probe and
 * file, however many processes map it. Names a program may not carry are
 * left out and said; more sites than the tracer attaches in one program is
 * refused, with how to narrow it.
 * @returns {{ clauses: [{ probe, pids, object }], notes: string[] }}
 */
function clausesOf(chosen, { tracer, specs, where }) {
  const byKey = new Map();
  const notes = [];
  for (const c of chosen) {
    if (!traceable(c)) {
      notes.push(`not tracing ${nameText(c.provider)}:${nameText(c.name)} of ${c.object.path}: its name holds characters other than letters, digits, _ and -, which a program cannot name it by.`);
      continue;
    }
    const key = `${fileKey(c.object)}\0${c.provider}\0${c.name}`;
    if (!byKey.has(key)) byKey.set(key, { probe: c, object: c.object, pids: [] });
    if (c.pid !== null) byKey.get(key).pids.push(c.pid);
  }
  const clauses = [...byKey.values()];
  if (!clauses.length) throw new UserError(`no probe of ${where} that ${specs.map((s) => `"${s.text}"`).join(', ')} names can be traced${notes.length ? `:\n  ${notes.join('\n  ')}` : '.'}`, { exitCode: EXIT.NOT_FOUND });
  const sites = clauses.reduce((n, c) => n + c.probe.sites, 0);
  const limit = maxProbes(tracer);
  if (sites > limit) {
    throw new UsageError(`${specs.map((s) => `"${s.text}"`).join(', ')} names ${clauses.length} probes of ${where} at ${sites} sites, more than the ${limit} ${tracer.name} ${tracer.version} attaches in one program.`,
      'Narrow it to the provider and probes you need, e.g. \'myapp:request-*\' (nodetrace probes -p PID lists them).');
  }
  return { clauses, notes, sites };
}

/**
 * How the tracer reaches each clause's file, and whether it runs with -p.
 * One process whose files all lie in nodetrace's own mount namespace, and
 * that has each probe once: -p (only its probes' semaphores are set), paths
 * as capabilities.usdtPathForPid names them. A process that enabled a
 * provider again maps two libraries with the same probes, and bpftrace 0.17
 * given -p then takes one library's probe for the other's ("couldn't get
 * argument 0", "cannot attach uprobe, Invalid argument": measured); so
 * then, and for a library that appeared later (`later`), no -p. Without
 * -p each file is reached through what pins it: a probe
 * library through nodetrace's own verified descriptor (opened: path -> fd;
 * none in a dry run: its path), another object by its path where root owns
 * it, else by its mapping's link (/proc/PID/map_files, the kernel's).
 * -> { pid, libraryOf(clause) }
 */
function attachment(tracer, processes, clauses, opened = new Map(), { later = false } = {}) {
  const one = processes.kind === 'pids' && processes.pids.length === 1 ? processes.pids[0] : null;
  const pinned = (c) => libraries.isMapFile(c.object.file);
  const names = clauses.map((c) => `${c.probe.provider}\0${c.probe.name}`);
  const twice = new Set(names).size !== names.length;
  if (one && !later && !twice && !clauses.some(pinned)) return { pid: one,
    libraryOf: (c) => usdtPathForPid(tracer, one, c.object.file) };
  return {
    pid: undefined,
    libraryOf: (c) => {
      const file = c.object.file;
      if (c.object.api) return opened.has(file) ? `/proc/${process.pid}/fd/${opened.get(file)}` : file;
      if (pinned(c) || rootsOwn(file)) return file;
      const pid = c.pids[0];
      return pid && c.object.range ? `/proc/${pid}/map_files/${c.object.range}` : file;
    },
  };
}

// The PIDs the program filters on ([]: every process mapping the files),
// and those nodetrace must keep itself (null: all), beyond the program's slots.
function pidSlots(processes) {
  if (processes.kind !== 'pids') return { pids: [], only: null };
  if (processes.pids.length > PID_SLOTS) return { pids: [], only: new Set(processes.pids) };
  return { pids: processes.pids, only: null };
}

// The probe libraries a trace covers now (they are not offered again when followed).
function coveredLibraries(clauses) {
  return [...new Set(clauses.filter((c) => c.object.api).map((c) => c.object.file))];
}

module.exports = {
  resolveProcesses, processesWithProviders, candidatesOf, clausesOf, attachment, pidSlots, coveredLibraries,
  libraryProbes,
  providerMatcher, matchProbes,
};
