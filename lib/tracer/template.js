'use strict';
// Where a tracer cannot take a value as an argument, a script declares a
// template slot in its header, and nodetrace instantiates the program from
// the script rather than editing it by hand. The slots today:
//   PROBES  a list of probes (ebadf-*.bt/.d, usdt-*.bt). bpftrace cannot take
//           one as arguments (a probe slot left unused must still name a
//           tracepoint: a wildcard that matches nothing is an error,
//           "tracepoints not found", measured on 0.17), and DTrace cannot
//           either (a probe description with an undefined macro argument
//           does not compile).
//   TARGET  the predicate that keeps one process (profile.bt, profile-js.bt,
//           offcpu.bt, addon-latency.bt). bpftrace takes the PID as an
//           argument, but the child of -c only as `cpid`, which it refuses
//           without -c.
//   COLLECTION_ENTRY, COLLECTION_RETURN, STEP_ENTRY, STEP_RETURN (gc.bt,
//           gc.d), RESET (async.d): probes on V8's and Node's C++ functions
//           whose mangled names differ between versions (Heap::
//           CollectGarbage, IncrementalMarking::Step, AsyncWrap::
//           AsyncReset), found in the process.
//   WINDOW  the clause that opens and closes a program's window
//           (addon-latency.bt, async.bt, gc.bt), on the signal this bpftrace
//           takes (lib/tracer/capabilities.js windowSignal).
//   PRINT   how often a program prints what it captured (profile-js.bt,
//           offcpu.bt): more often for profile -c, whose command's frames
//           can be named only while it lives.
//   WALK    whether profile-js.bt keeps the user stacks itself (`#define
//           WALK_USER_STACK 0`, made 1) rather than take ustack, whose map
//           loses some on bpftrace 0.17-0.20 (capabilities.js
//           walksUserStacks): the key of its samples changes with it, and
//           bpftrace types a map's key once, so no argument can choose.
//   LIVE    the predicate of a clause that prints a program's maps every
//           second, uncleared (addon-latency.bt, gc.bt, loop.bt, async.bt): declared
//           /CONDITION && 0/, never true as the script is; --prometheus
//           makes it /CONDITION/ (lib/prometheus/live.js).
//
// The declaration, in the script's header comment:
//     @template NAME: <the text the script uses as it is>
// Instantiation replaces every line of the program that is exactly that text
// (clauses may share it) with the text given. Pure.

function declarationPattern(slot) {
  return new RegExp(`^\\s*\\*?\\s*@template ${slot}: (\\S.*?)\\s*$`, 'm');
}

function declaredSlot(text, slot) {
  const m = declarationPattern(slot).exec(text);
  return m ? m[1] : null;
}

function declaredProbe(text) {
  return declaredSlot(text, 'PROBES');
}

// A note is nodetrace's own words: never anything that could end the
// comment or start a line of program (a path or name taken from a target
// could; those reach programs as arguments only).
const NOTE = /^[A-Za-z0-9 _.,:;()'@$<>=+/-]*$/;

function withNote(text, note) {
  if (!NOTE.test(note) || note.includes('*/')) throw new Error(`not a note for a program comment: ${JSON.stringify(note)}`);
  const comment = `/* ${note} */\n`;
  if (text.startsWith('#!')) {
    const nl = text.indexOf('\n') + 1;
    return text.slice(0, nl) + comment + text.slice(nl);
  }
  return comment + text;
}

/**
 * @param {string} text the script (or a program instantiated from it)
 * @param {string} slot the slot's name
 * @param {string} replacement what each line that is the slot's text becomes
 * @param {string} [note] one line saying what was instantiated and why
 */
function instantiateSlot(text, slot, replacement, note) {
  // What replaces a slot is program text: built by nodetrace from validated
  // values; a line break would let it make more of the program than the slot.
  if (/[\n\r]/.test(replacement) && slot !== 'PROBES') throw new Error(`a ${slot} slot holds one line`);
  const declaration = declarationPattern(slot);
  const used = declaredSlot(text, slot);
  if (!used) throw new Error(`the script declares no @template ${slot} slot`);
  let replaced = 0;
  // A line that is the slot's text, or that text and a comma: one probe of
  // a clause's list of probes (gc.d's returns, where two slots share lists).
  const lines = text.split('\n').map((line) => {
    const t = line.trim();
    if ((t !== used && t !== `${used},`) || declaration.test(line)) return line;
    replaced++;
    return t === used ? replacement : `${replacement},`;
  });
  if (!replaced) throw new Error(`the script never uses its declared ${slot} text ${used}`);
  const out = lines.join('\n');
  return note ? withNote(out, note) : out;
}

/**
 * @param {string} text the script
 * @param {string[]} probes probe descriptions (already validated)
 * @param {string} note one line saying what was instantiated and why
 */
function instantiateProbes(text, probes, note) {
  for (const p of probes) if (!/^[A-Za-z0-9_:*-]+$/.test(p)) throw new Error(`not a probe description: ${p}`);
  return instantiateSlot(text, 'PROBES', probes.join(',\n'), note);
}

/**
 * An optional part of a script, left out: every line marked with the comment
 * `/* @NAME *\/` and every line from `/* @NAME begin *\/` to `/* @NAME end *\/`
 * (each alone on its line). The script's header says which parts are
 * optional and what leaving one out costs. Pure.
 */
function withoutOptional(text, name, note) {
  const marked = `/* @${name} */`;
  const begin = `/* @${name} begin */`;
  const end = `/* @${name} end */`;
  let inBlock = false;
  let removed = 0;
  const kept = text.split('\n').filter((line) => {
    const t = line.trim();
    if (t === begin) { inBlock = true; removed++; return false; }
    if (t === end) { inBlock = false; return false; }
    if (inBlock || t.endsWith(marked)) { removed++; return false; }
    return true;
  });
  if (inBlock) throw new Error(`the script opens ${begin} and never closes it`);
  if (!removed) throw new Error(`the script has no part marked @${name}`);
  const out = kept.join('\n');
  return note ? withNote(out, note) : out;
}

/**
 * A program's uprobes and uretprobes on functions it names, given their
 * addresses in the file instead: every `uprobe:FILE:NAME` and
 * `uretprobe:FILE:NAME` (FILE the program's argument, e.g. `$1`) becomes
 * `...:FILE:0xADDRESS`, and one comment line per function says which
 * address is which. bpftrace 0.17 reads the file's whole symbol table for
 * each probe it finds by name, 0.5-0.7 s of its CPU each on a 100 MB node
 * (docs/platforms.md, "bpftrace 0.17 attaches slowly"); at an address it
 * only checks that a function starts there. Pure.
 * @param {string} text the program
 * @param {string} file the argument that names the file, `$N`
 * @param {Map<string, number>} addresses name -> the function's start (its
 *   symbol's value in that file); each name must be probed in the program
 * @param {string} note one line saying what was instantiated and why
 */
function uprobesAtAddresses(text, file, addresses, note) {
  if (!/^\$[0-9]+$/.test(file)) throw new Error(`not a program argument: ${file}`);
  let out = text;
  const lines = [];
  for (const [name, value] of addresses) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a function name: ${JSON.stringify(name)}`);
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`not a function's address: ${value}`);
    const at = `0x${value.toString(16)}`;
    const probe = new RegExp(`\\b(uprobe|uretprobe):\\${file}:${name}(?![A-Za-z0-9_.])`, 'g');
    const replaced = out.replace(probe, (m, kind) => `${kind}:${file}:${at}`);
    if (replaced === out) throw new Error(`the program probes no ${name} in ${file}`);
    out = replaced;
    lines.push(`${at} is ${name}`);
  }
  // (Each note goes on top: the last written reads first.)
  for (const line of lines.reverse()) out = withNote(out, line);
  return withNote(out, note);
}

module.exports = {
  declaredSlot, declaredProbe, instantiateSlot, instantiateProbes, withoutOptional, uprobesAtAddresses,
};
