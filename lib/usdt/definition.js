'use strict';
// A provider definition in canonical form: what decides the bytes (and so the
// path) of a probe library. Pure.
//
// Canonical means: probes sorted by name and deduplicated (first one wins, as
// in libusdt, which refuses a second probe of the same name), argument types
// reduced to kinds. So the order of addProbe() calls does not matter, and
// every process that declares the same provider (bunyan's, say) ends up with
// the very same file, which one tracer attached by path then covers.

const { MAX_ARGS } = require('./elf');

// dtrace-provider matches type names by prefix ("json", "char *", "int") and
// treats anything else as a string; 'int32_t' is our one addition (a 32-bit
// argument), which dtrace-provider itself would read as "int".
function kindOf(type) {
  const t = String(type);
  if (t.startsWith('json')) return 'json';
  if (t.startsWith('char *')) return 'string';
  if (t.startsWith('int32_t')) return 'int32';
  if (t.startsWith('int')) return 'int';
  return 'string';
}

function checkName(what, name) {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0')) {
    throw new TypeError(`${what} must be a non-empty string without NUL characters`);
  }
  return name;
}

// Accepts probes as [name, ...types] arrays or { name, types } objects.
function probeSpec(p) {
  if (Array.isArray(p)) return { name: p[0], types: p.slice(1) };
  if (p && typeof p === 'object') return { name: p.name, types: p.types || p.args || [] };
  throw new TypeError('a probe is [name, ...types] or { name, types }');
}

// -> { provider, module, probes: [{ name, kinds }], dropped: [names whose
//    extra arguments (beyond MAX_ARGS) were ignored] }
function normalizeDefinition(provider, probes, module) {
  checkName('provider name', provider);
  if (module !== undefined && module !== null) checkName('module name', module);
  const byName = new Map();
  const truncated = [];
  for (const raw of probes) {
    const { name, types } = probeSpec(raw);
    checkName('probe name', name);
    if (byName.has(name)) continue;
    let kinds = types.map(kindOf);
    if (kinds.length > MAX_ARGS) {
      truncated.push(name);
      kinds = kinds.slice(0, MAX_ARGS);
    }
    byName.set(name, { name, kinds });
  }
  const sorted = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { provider, module: module == null ? null : module, probes: sorted, truncated };
}

// The type each kind is declared as: dtrace-provider's names (and
// 'int32_t', nodetrace's own), what `nodetrace probes` shows.
const TYPE_OF_KIND = Object.freeze({ int: 'int', int32: 'int32_t', string: 'char *', json: 'json' });

/**
 * The provider a probe library's own definition (its .nodetrace.usdt JSON,
 * lib/usdt/elf.js) declares, as { name, module, probes: [[name, ...types]] },
 * or null when it is not one lib/usdt could have written: the file is
 * another user's, so every part is checked (a string name, at most
 * `maxProbes` probes of at most MAX_ARGS arguments of the kinds above).
 */
function providerFromDefinition(def, { maxProbes = 64 } = {}) {
  if (!def || typeof def !== 'object' || typeof def.provider !== 'string' || !def.provider || !Array.isArray(def.probes)) return null;
  if (def.module !== null && def.module !== undefined && typeof def.module !== 'string') return null;
  if (def.probes.length > maxProbes) return null;
  const probes = [];
  for (const p of def.probes) {
    if (!p || typeof p.name !== 'string' || !p.name || !Array.isArray(p.args) || p.args.length > MAX_ARGS) return null;
    if (!p.args.every((k) => Object.prototype.hasOwnProperty.call(TYPE_OF_KIND, k))) return null;
    probes.push([p.name, ...p.args.map((k) => TYPE_OF_KIND[k])]);
  }
  return { name: def.provider, module: def.module == null ? null : def.module, probes };
}

module.exports = { normalizeDefinition, kindOf, checkName, providerFromDefinition, TYPE_OF_KIND };
