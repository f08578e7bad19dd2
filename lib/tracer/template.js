'use strict';
// Where a tracer cannot take a value as an argument, a script declares one
// template slot in its header, and nodetrace instantiates the program from
// the script rather than editing it by hand. The one case today: a list of
// probes. bpftrace cannot take one as arguments (a probe slot left unused
// must still name a tracepoint: a wildcard that matches nothing is an error,
// "tracepoints not found", measured on 0.17), and DTrace cannot either
// (a probe description with an undefined macro argument does not compile).
//
// The declaration, in the script's header comment:
//     @template PROBES: <the probe description the script uses as it is>
// Instantiation replaces every line of the program that is exactly that
// description (clauses may share it) with the list given. Pure.

const DECLARATION = /^\s*\*?\s*@template PROBES: (\S+)\s*$/m;

function declaredProbe(text) {
  const m = DECLARATION.exec(text);
  return m ? m[1] : null;
}

/**
 * @param {string} text the script
 * @param {string[]} probes probe descriptions (already validated)
 * @param {string} note one line saying what was instantiated and why
 */
function instantiateProbes(text, probes, note) {
  const probe = declaredProbe(text);
  if (!probe) throw new Error('the script declares no @template PROBES slot');
  for (const p of probes) if (!/^[A-Za-z0-9_:*-]+$/.test(p)) throw new Error(`not a probe description: ${p}`);
  let replaced = 0;
  const lines = text.split('\n').map((line) => {
    if (line.trim() !== probe || DECLARATION.test(line)) return line;
    replaced++;
    return probes.join(',\n');
  });
  if (!replaced) throw new Error(`the script never uses its declared probe ${probe}`);
  const out = lines.join('\n');
  const comment = `/* ${note} */\n`;
  if (out.startsWith('#!')) {
    const nl = out.indexOf('\n') + 1;
    return out.slice(0, nl) + comment + out.slice(nl);
  }
  return comment + out;
}

module.exports = { declaredProbe, instantiateProbes };
