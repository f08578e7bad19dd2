'use strict';
// A plan is everything one tracer run is, decided before anything runs: the
// tracer, its exact argv, its environment, the program (a d-scripts/ file,
// or a program instantiated from one), and the private files it needs.
// Commands build plans with pure functions; `--dry-run` prints a plan
// (renderPlan) and a real run executes that same plan (lib/tracer/session.js),
// so what the dry run shows is what runs.
//
// Values reach the tracer as separate argv entries, never pasted into a
// shell command or, but for the declared templates of lib/tracer/template.js,
// into program text.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { safeText } = require('../terminal-safe');
const { attachNotice, windowSignal } = require('./capabilities');
const { declaredSlot, instantiateSlot, withoutOptional } = require('./template');
const { REPORT_MARKER, WINDOW_MARKER, QUIET_MARKER } = require('./output-formats');
const { programArguments, argumentNotes } = require('./program-arguments');

const SCRIPT_DIR = path.join(__dirname, '..', '..', 'd-scripts');
const EXTENSION = { dtrace: '.d', bpftrace: '.bt' };

function scriptPath(name, tracerName) {
  return path.join(SCRIPT_DIR, name + EXTENSION[tracerName]);
}

function readScript(name, tracerName) {
  return fs.readFileSync(scriptPath(name, tracerName), 'utf8');
}

// An argv entry naming a file in the run's private temporary directory.
function inTemp(name) {
  return { temp: name };
}

// setpriv --pdeathsig: the kernel kills the tracer when nodetrace dies, even
// by SIGKILL, so a tracer never outlives the command that started it (and
// never goes on stopping processes no one resumes).
let launcherCache;
function deathSignalLauncher() {
  if (launcherCache !== undefined) return launcherCache;
  launcherCache = [];
  if (process.platform === 'linux') {
    for (const file of ['/usr/bin/setpriv', '/bin/setpriv']) {
      if (!fs.existsSync(file)) continue;
      const help = spawnSync(file, ['--help'], { encoding: 'utf8', timeout: 5000 });
      if (/--pdeathsig/.test(help.stdout || '')) launcherCache = [file, '--pdeathsig', 'KILL', '--'];
      break;
    }
  }
  return launcherCache;
}

/**
 * @param {object} tracer from lib/tracer/detect.js: { name, path, version }
 * @param {object} o
 * @param {string} o.script          d-scripts/<script>.d|.bt
 * @param {string} [o.programText]   a program instantiated from that script
 *                                   (lib/tracer/template.js); written to the
 *                                   private directory and run from there
 * @param {number} [o.pid]           -p
 * @param {string} [o.command]       -c (the tracer runs it, without a shell)
 * @param {object} [o.args]         the program's arguments by name
 *                                   (lib/tracer/program-arguments.js puts them
 *                                   in the program's order: $1 ...)
 * @param {string[]} [o.without]     the program's optional parts that
 *                                   programText leaves out (their arguments
 *                                   are left out too)
 * @param {boolean} [o.destructive]  -w / --unsafe
 * @param {string} [o.outputFile]    the tracer writes its output to this file
 *                                   of the private directory (-o)
 * @param {object} [o.env]           added to the tracer's environment
 * @param {Array<{name, target}>} [o.links]  symbolic links made in the private directory
 * @param {string[]} [o.extra]       more tracer options
 * @param {string} [o.describe]      what is traced, for messages
 * @param {string[]} [o.notes]       said in the dry run
 * @param {number} [o.attachTimeoutMs] the longest attaching may take, where
 *                                   the default (lib/tracer/session.js) is too
 *                                   short for the program's size
 * @param {string} [o.output]        how its stdout is cut into items
 *                                   (lib/tracer/output-formats.js): 'text'
 *                                   (default), 'json' (bpftrace -f json),
 *                                   'records' (log-snoop.d), 'wire' (http-wire.d)
 * @param {object} [o.target]        the one process traced, { pid }: its
 *                                   exit ends the trace (lib/tracer/run-command.js)
 * @param {string[]} [o.warnings]    said on stderr before tracing (and in the
 *                                   dry run): which process a name chose,
 *                                   what this trace cannot see
 * @param {object} [o.quiesce]       { signal, line }: a streaming program is
 *                                   first told to stop emitting, and says so
 *                                   (lib/tracer/session.js)
 * @param {Set<number>} [o.only]     the PIDs whose events are kept, where the
 *                                   program cannot filter them all itself
 * @param {string[]} [o.uprobeFiles] the files the program sets uprobes in
 *                                   (lib/tracer/neighbours.js: who else pays)
 * @param {object} [o.details]       the command's own facts about this run,
 *                                   passed through for its report
 *
 * The plan's readyLine, when not null, is the line (on stdout or stderr)
 * that says every probe is attached; otherwise the program's own ready line
 * says it. Its window, when not null, is how the session opens and closes
 * the program's window (a bpftrace program that declares `@template
 * WINDOW:`): { signal, line, opened } (lib/tracer/capabilities.js windowSignal).
 */
function planTracer(tracer, o) {
  if (o.positional) throw new Error('planTracer takes the program\'s arguments by name (o.args), not as a list');
  const windowed = programWindow(tracer, o);
  if (windowed) o = { ...o, programText: windowed.programText };
  const generated = o.programText !== undefined;
  const programName = o.script + EXTENSION[tracer.name];
  const without = o.without || [];
  for (const part of without) {
    if (!generated || o.programText.includes(`/* @${part} `)) throw new Error(`${programName}: the program still has its @${part} part`);
  }
  const args = programArguments(programName, o.args, { without });
  const program = generated ? inTemp(programName) : scriptPath(o.script, tracer.name);
  const argv = [];
  if (tracer.name === 'dtrace') {
    if (o.destructive) argv.push('-w');
    if (o.outputFile) argv.push('-o', inTemp(o.outputFile));
    argv.push(...(o.extra || []), '-s', program);
    if (o.pid) argv.push('-p', String(o.pid));
    if (o.command) argv.push('-c', o.command);
  } else {
    if (o.destructive) argv.push('--unsafe');
    if (o.output === 'json') argv.push('-f', 'json');
    if (o.outputFile) argv.push('-o', inTemp(o.outputFile));
    argv.push(...(o.extra || []));
    if (o.pid) argv.push('-p', String(o.pid));
    if (o.command) argv.push('-c', o.command);
    argv.push(program);
  }
  argv.push(...args.map((a) => (typeof a.value === 'object' ? a.value : String(a.value))));
  // The line that says every probe is attached. Not with -o: bpftrace may
  // print it on its stdout, which -c's command shares (such plans tell
  // readiness another way).
  const notice = o.outputFile ? null : attachNotice(tracer);
  return {
    tracer,
    script: o.script,
    scriptFile: scriptPath(o.script, tracer.name),
    programText: generated ? o.programText : null,
    launcher: deathSignalLauncher(),
    argv,
    arguments: args.map(({ value, ...a }) => a),
    env: { ...(notice ? notice.env : {}), ...(o.env || {}) },
    readyLine: notice ? notice.line : null,
    files: generated ? [{ name: programName, text: o.programText }] : [],
    links: o.links || [],
    outputFile: o.outputFile || null,
    output: o.output || 'text',
    attachTimeoutMs: o.attachTimeoutMs || null,
    describe: o.describe || '',
    notes: [...(o.notes || []), ...(o.warnings || [])],
    target: o.target || null,
    command: o.command || null,
    warnings: o.warnings || [],
    quiesce: o.quiesce || null,
    window: windowed ? windowed.window : null,
    only: o.only || null,
    uprobeFiles: o.uprobeFiles || [],
    details: o.details || {},
  };
}

// A bpftrace program's window (its `@template WINDOW:` clause): the signal
// that opens and closes it, and the program as this bpftrace runs it: its
// @byhand part (the window open from BEGIN, for a run by hand) left out,
// its clause instantiated where this bpftrace needs another. -> {
// programText, window } or null.
function programWindow(tracer, o) {
  const how = windowSignal(tracer);
  if (!how) return null;
  // -c: the tracer starts the command once every probe is attached, before
  // nodetrace could open a window (bpftrace 0.23 ran half of a 150-round
  // mix before the signal): the window is open from BEGIN, as by hand.
  if (o.command) return null;
  const text = o.programText !== undefined ? o.programText : readScript(o.script, tracer.name);
  if (!declaredSlot(text, 'WINDOW')) return null;
  const clause = (t) => (how.probe ? instantiateSlot(t, 'WINDOW', how.probe) : t);
  return {
    programText: clause(withoutOptional(text, 'byhand')),
    // What the dry run shows: run by hand (`-n | sudo sh`), no one opens the
    // window, so it is open from BEGIN, and Ctrl-C prints the report.
    // scriptAsIs: the program is the script file unchanged, which runs by
    // hand as it is on any bpftrace (its default clause, a tracepoint).
    window: { signal: how.signal, line: REPORT_MARKER, opened: WINDOW_MARKER, byHandText: clause(text),
      scriptAsIs: o.programText === undefined },
  };
}

function usesTemp(plan) {
  return plan.files.length > 0 || plan.links.length > 0 || Boolean(plan.outputFile);
}

// What to spawn: { file, args }, with private files resolved in `tempDir`.
function resolveCommand(plan, tempDir) {
  const args = plan.argv.map((a) => (typeof a === 'object' ? path.join(tempDir, a.temp) : a));
  if (!plan.launcher.length) return { file: plan.tracer.path, args };
  return { file: plan.launcher[0], args: [...plan.launcher.slice(1), plan.tracer.path, ...args] };
}

// Quotes an argument as a POSIX shell needs it, for display only: nothing
// nodetrace runs goes through a shell.
function shellQuote(a) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

function displayCommand(file, args) {
  return [file, ...args].map(shellQuote).join(' ');
}

/**
 * The plan as a POSIX shell script that does what nodetrace would do, for
 * --dry-run (`nodetrace ... -n | sudo sh` runs it); then the program itself,
 * after the script's `exit`.
 */
function renderPlan(plan, { heading, after = [] } = {}) {
  const q = (a) => (typeof a === 'object' ? `"$tmp"/${shellQuote(a.temp)}` : shellQuote(a));
  // A comment line holds one line: a process name or a path in a note (a
  // target's to choose) must not start a line of the script `| sh` runs.
  const comment = (text) => `# ${safeText(text, { oneLine: true })}`;
  const lines = [comment(`${heading || `${plan.tracer.name} ${plan.tracer.version} would run${plan.describe ? ` (${plan.describe})` : ''}`}:`)];
  for (const note of plan.notes) lines.push(comment(note));
  const temp = usesTemp(plan);
  if (plan.window) {
    lines.push(comment(`nodetrace leaves out the program's @byhand part and opens its window itself (${plan.window.signal} `
      + 'once every probe is attached; again at the end, when the program prints its report): as shown, for a run by hand, '
      + 'the window is open from BEGIN and Ctrl-C prints the report (docs/programs.md, "The window")'));
  }
  if (temp) lines.push('tmp=$(mktemp -d)');
  // (The one program file of a plan with a window is shown as it runs by hand.)
  const shown = (f) => (plan.window && f.text === plan.programText ? plan.window.byHandText : f.text);
  for (const f of plan.files) lines.push(`cat > "$tmp"/${shellQuote(f.name)} <<'NODETRACE_PROGRAM'`, shown(f).replace(/\n$/, ''), 'NODETRACE_PROGRAM');
  for (const l of plan.links) lines.push(`ln -s ${shellQuote(l.target)} "$tmp"/${shellQuote(l.name)}`);
  // What each of the program's arguments is (the command's last words).
  for (const note of argumentNotes(plan.arguments || [])) lines.push(comment(note));
  const env = Object.entries(plan.env).map(([k, v]) => `${k}=${shellQuote(String(v))}`);
  const words = [...env, ...plan.launcher.map(shellQuote), shellQuote(plan.tracer.path), ...plan.argv.map(q)];
  lines.push(words.join(' '));
  if (plan.outputFile) lines.push(`cat "$tmp"/${shellQuote(plan.outputFile)}`);
  for (const a of after) lines.push(comment(`then ${a}`));
  if (temp) lines.push('rm -r "$tmp"');
  if (plan.programText === null) {
    // `sh` of this output runs the commands above and stops here.
    lines.push('exit', `# program (${plan.scriptFile}):`);
    return safeText(lines.join('\n') + '\n') + fs.readFileSync(plan.scriptFile, 'utf8');
  }
  lines.push(`# (the program above is instantiated from ${plan.scriptFile})`);
  // Paths of other users' files may hold control characters: shown, not obeyed.
  return safeText(lines.join('\n') + '\n');
}

// How a batching program is stopped before it is ended (plan.quiesce):
// SIGURG, which bpftrace ignores and no terminal sends, seen by its
// tracepoint:signal:signal_generate clause; it says QUIET_MARKER once both
// sets of its maps are printed.
const BATCH_QUIESCE = Object.freeze({ signal: 'SIGURG', line: QUIET_MARKER });

module.exports = {
  BATCH_QUIESCE,
  SCRIPT_DIR, scriptPath, readScript, inTemp, planTracer, resolveCommand, renderPlan, displayCommand, shellQuote,
  usesTemp,
  deathSignalLauncher,
};
