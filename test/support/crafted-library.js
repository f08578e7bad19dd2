'use strict';
// Probe libraries a hostile user crafts (docs/security.md): what lib/usdt
// makes for a provider, altered where a tracer reads it (the stapsdt notes),
// and named by the hash of the altered bytes as nodetrace names libraries,
// so that every check of the name and the declared provider passes.
const { buildElf } = require('../../lib/usdt/elf');
const { normalizeDefinition } = require('../../lib/usdt/definition');
const { libraryFileName } = require('../../lib/usdt/paths');

const SHT_NOTE = 7;

// [{ at: offset of the note's desc in the file, name }] of every stapsdt note.
function notesOf(bytes) {
  const shoff = Number(bytes.readBigUInt64LE(40));
  const shnum = bytes.readUInt16LE(60);
  for (let i = 0; i < shnum; i++) {
    const sh = shoff + i * 64;
    if (bytes.readUInt32LE(sh + 4) !== SHT_NOTE) continue;
    const off = Number(bytes.readBigUInt64LE(sh + 24));
    const size = Number(bytes.readBigUInt64LE(sh + 32));
    const out = [];
    for (let o = off; o + 12 <= off + size;) {
      const namesz = bytes.readUInt32LE(o);
      const descsz = bytes.readUInt32LE(o + 4);
      const desc = o + 12 + Math.ceil(namesz / 4) * 4;
      const strs = bytes.toString('latin1', desc + 24, desc + descsz).split('\0');
      out.push({ at: desc, provider: strs[0], name: strs[1], nameAt: desc + 24 + strs[0].length + 1 });
      o = desc + Math.ceil(descsz / 4) * 4;
    }
    return out;
  }
  return [];
}

function named(bytes) {
  return { bytes, fileName: libraryFileName(bytes) };
}

/** The provider's library with probe `probe`'s site moved to address `pc`. */
function siteAt(provider, probe, pc) {
  const { bytes } = buildElf(normalizeDefinition(provider.name, provider.probes, provider.module));
  const note = notesOf(bytes).find((n) => n.name === probe);
  bytes.writeBigUInt64LE(BigInt(pc), note.at);
  return named(bytes);
}

/**
 * The provider's library with `count` sites of probe `probe`: filler probes
 * of the same argument types whose notes are then renamed to `probe` (the
 * declared definition still lists the fillers, as a variant's would).
 */
function manySites(provider, probe, count) {
  const spec = provider.probes.find((p) => p[0] === probe);
  const filler = (i) => `${probe.slice(0, probe.length - 4)}z${String(i).padStart(3, '0')}`;
  const extra = [];
  for (let i = 0; i < count - 1; i++) extra.push([filler(i), ...spec.slice(1)]);
  const { bytes } = buildElf(normalizeDefinition(provider.name, [...provider.probes, ...extra], provider.module));
  for (const n of notesOf(bytes)) {
    if (/z\d{3}$/.test(n.name)) bytes.write(probe, n.nameAt, 'latin1');
  }
  return named(bytes);
}

module.exports = { siteAt, manySites, notesOf };
