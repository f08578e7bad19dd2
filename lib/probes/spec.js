'use strict';
// Which probes `nodetrace probes` traces: 'PROVIDER:PROBE' globs (as dtrace
// -n 'myapp*:::request-*' names them), matched by nodetrace against what
// each process has (lib/probes/inventory.js), never handed to a tracer as a
// glob: the program names each probe matched, as arguments (lib/probes/
// program.js). Pure.
//
//   myapp                   every probe of provider myapp
//   myapp:request-start     one probe
//   'myapp*:request-*'      globs: * any run of characters, ? one
//   'myapp*:::request-*'    DTrace's PROVIDER:MODULE:FUNCTION:NAME (the
//                           module is a provider's module, given to
//                           createDTraceProvider(name, module); FUNCTION
//                           must be empty or *: USDT probes have none here)
const { UsageError, UserError, EXIT } = require('../errors');
const { safeText } = require('../terminal-safe');
const { plural } = require('../render/text');
const { shorten } = require('../targets/resolve');

// A spec longer than this is no one's probe name.
const MAX_SPEC_CHARS = 256;
// What a provider or probe name must be to reach a tracer's program (as an
// argument in a probe description, lib/tracer/program-arguments.js): the
// characters D and sdt.h names have. A name with others (a hostile
// library's `*`, `,` or `:`) would be more than one probe there: listed,
// never traced.
const TRACEABLE_NAME = /^[A-Za-z0-9_-]{1,128}$/;
// Nothing named: a provider the application has not made yet is waited
// for only when asked (--wait): otherwise a typo would wait for ever.
const HINT = 'List them with: nodetrace probes -p PID. For a provider the application has not made yet, give --wait SECONDS.';

function globRegExp(glob) {
  const body = glob.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 's');
}

/** 'PROVIDER[:PROBE]' or 'PROVIDER:MODULE:FUNCTION:NAME' -> { text, provider, module, probe } (RegExps; module null: any). */
function parseSpec(text) {
  const s = String(text);
  if (!s || s.length > MAX_SPEC_CHARS) throw new UsageError(`a probe is PROVIDER:PROBE (globs allowed, at most ${MAX_SPEC_CHARS} characters), not "${s.slice(0, 60)}".`);
  const parts = s.split(':');
  let provider;
  let module = null;
  let probe = '*';
  if (parts.length === 1) [provider] = parts;
  else if (parts.length === 2) [provider, probe] = parts;
  else if (parts.length === 4) {
    const fn = parts[2];
    if (fn !== '' && fn !== '*') throw new UsageError(`"${s}" names a function (${fn}); USDT probes here have none: give PROVIDER:PROBE or PROVIDER:MODULE::PROBE.`);
    provider = parts[0];
    module = parts[1] === '' || parts[1] === '*' ? null : parts[1];
    probe = parts[3];
  } else {
    throw new UsageError(`"${s}" is not a probe: give PROVIDER:PROBE (e.g. 'myapp:request-*') or PROVIDER:MODULE:FUNCTION:NAME as dtrace takes it.`);
  }
  if (!provider) provider = '*';
  if (!probe) probe = '*';
  return { text: s, provider: globRegExp(provider), module: module === null ? null : globRegExp(module),
    probe: globRegExp(probe) };
}

function specMatches(spec, p) {
  return spec.provider.test(p.provider) && spec.probe.test(p.name)
    && (spec.module === null || (p.module !== null && spec.module.test(p.module)));
}

/** Is this probe's provider and name one a program may name? */
function traceable(p) {
  return TRACEABLE_NAME.test(p.provider) && TRACEABLE_NAME.test(p.name);
}

// A name another user chose, on one line and short, for a message.
function nameText(name) {
  return safeText(shorten(name), { oneLine: true });
}

// "myapp (2 probes), libstdcxx (3 probes)": what a process has, for errors.
function providersText(probes) {
  const by = new Map();
  for (const p of probes) by.set(p.provider, (by.get(p.provider) || 0) + 1);
  if (!by.size) return 'none';
  const list = [...by].slice(0, 20).map(([name, n]) => `${nameText(name)} (${plural(n, 'probe')})`);
  return list.join(', ') + (by.size > 20 ? `, and ${by.size - 20} more` : '');
}

function probesText(probes) {
  const names = [...new Set(probes.map((p) => nameText(p.name)))];
  return names.slice(0, 30).join(', ') + (names.length > 30 ? `, and ${names.length - 30} more` : '');
}

/**
 * The probes every spec names among `candidates` (each { provider, name,
 * module, ... }); each spec must match one. An unknown provider or probe
 * says which exist; a probe whose name cannot reach a program says so.
 * @param {string} where for messages: 'PID 4242'
 */
function matchProbes(specs, candidates, { where }) {
  const chosen = new Set();
  for (const spec of specs) {
    const hits = candidates.filter((p) => specMatches(spec, p));
    if (!hits.length) {
      const ofProvider = candidates.filter((p) => spec.provider.test(p.provider));
      if (!ofProvider.length) {
        throw new UserError(`no provider of ${where} matches "${spec.text}"; its providers: ${providersText(candidates)}.`,
          { hint: HINT, exitCode: EXIT.NOT_FOUND });
      }
      const one = new Set(ofProvider.map((p) => p.provider)).size === 1;
      throw new UserError(`no probe of ${where} matches "${spec.text}"; ${one ? `provider ${nameText(ofProvider[0].provider)} has` : 'those providers have'}: ${probesText(ofProvider)}.`,
        { hint: HINT, exitCode: EXIT.NOT_FOUND });
    }
    for (const p of hits) chosen.add(p);
  }
  return [...chosen];
}

module.exports = { parseSpec, specMatches, matchProbes, traceable, globRegExp, nameText, TRACEABLE_NAME,
  MAX_SPEC_CHARS };
