'use strict';
// What each positional argument ($1, $2, ...) of each program in d-scripts/
// is: its name, what it means and where nodetrace gets it. One table per
// program file, the one home of these facts:
//   - plans give their arguments by name (planTracer's `args`), and
//     programArguments() puts them in the program's order, so an argument
//     missing, unknown or given twice is an error at plan time, never a
//     program run with its arguments shifted;
//   - the dry run annotates each argument (renderPlan), and `doctor -p`'s
//     by-hand command is built the same way;
//   - each program's header lists the same names in the same order
//     ("$N  NAME  meaning"), and test/program-arguments.test.js holds the two
//     (and every $N the program uses) together.
// bpftrace 0.17 has no named options (getopt came later) and 0.27.1 crashes on
// a #define whose body is a positional parameter (docs/platforms.md), so the
// programs keep $N and this table names them.
//
// An entry: { name, meaning, from } and, where it applies:
//   group     entries given together as one array under the group's name
//             (up to 8 PIDs); values not given take `fill`, or, where the
//             entry is `optional`, are left off the end
//   fill      the value when none is given
//   optional  may be left off the end of the command line (the program's
//             own default applies: 0 on bpftrace, defaultargs in D)
//   part      belongs to the program's optional part of that name
//             (lib/tracer/template.js withoutOptional): left off when the
//             plan leaves that part out
//   probe     the value lands in a probe description (uprobe:$1:$4,
//             usdt:$1:bunyan:$2): bpftrace expands it there as it stands, so
//             a `*` would widen the probe, a `,` or `:` would make more or
//             other probes of it. Such a value must be of a strict set
//             (PROBE_VALUE below), or the plan is refused saying why: 'file'
//             (a path nodetrace chose: /proc/PID/map_files/RANGE, a probe
//             library, a link in the run's private directory), 'function'
//             (a symbol or an address), 'probe-name' (a probe name or a
//             glob of them, nodetrace's own), 'pid' (DTrace's pid$1).
//   quoted    (D) the program reads it as a string, $$N; every other
//             argument of a D program is read as a number or an
//             identifier ($N) and must be one (D_WORD below)
//   each      entries that come once per clause nodetrace makes of the
//             program (lib/probes/program.js: one clause per probe
//             traced): the last entries of the table, given as an array
//             of { NAME: value } under the name `each` says, in the
//             program's order from the first clause's on; the header
//             lists them once, as the script's example clause uses them
// Pure.

const { UserError } = require('../errors');

const arg = (name, meaning, from, more = {}) => ({ name, meaning, from, ...more });
const FILE = { probe: 'file' };
const FUNCTION = { probe: 'function' };

// What a value that lands in a probe description may hold. A path of
// letters, digits and `_ . / + -` (no `*?[]{},:` or blanks: bpftrace would
// read them as globs or separators); a symbol name, or an address; a probe
// name or a glob of names. Values taken from a target (a path inside a
// container, a symbol of its files) that fall outside are refused, never
// made into other probes.
const PROBE_VALUE = Object.freeze({
  file: /^\/[A-Za-z0-9_./+-]+$/,
  function: /^([A-Za-z_][A-Za-z0-9_.]*|0x[0-9a-fA-F]+)$/,
  'probe-name': /^[A-Za-z0-9_*-]+$/,
  pid: /^[1-9][0-9]*$/,
});
// What DTrace reads from $N: a number or an identifier (an errno's name);
// anything else could be more of the program than one token.
const D_WORD = /^(-?[0-9]+|0x[0-9a-fA-F]+|[A-Za-z_][A-Za-z0-9_]*)$/;
// A file of the run's private directory (nodetrace's own mkdtemp), by its name there.
const TEMP_NAME = /^[A-Za-z0-9_.*-]+$/;
const numbered = (prefix, first, last, meaning, from, more) => {
  const out = [];
  for (let i = first; i <= last; i++) out.push(arg(prefix + i, meaning, from, more));
  return out;
};

const LATENCY_POOL = 'lib/latency/probe-points.js: from the symbol table of UV_FILE (where libuv keeps the symbols of its static functions)';
const LATENCY_MEMORY = 'lib/latency/probe-points.js runtimeRange: the symbol\'s value plus the load bias of its mapping';

const LATENCY_BT = [
  arg('NAPI_FILE', 'the object that defines napi_create_async_work: node, or libnode.so.*',
    'lib/latency/probe-points.js: the mapped object that defines it, as /proc/PID/map_files/RANGE (-c: the binary)', FILE),
  arg('PID', 'the process, for the program\'s own filter (0 with -c: cpid)', '-p'),
  arg('UV_FILE', 'the object that defines uv_queue_work: node, or libuv.so.1',
    'lib/latency/probe-points.js, as NAPI_FILE', FILE),
  arg('QUEUE_WORK', 'uv__queue_work in UV_FILE: its address (0x...) or name',
    'lib/latency/probe-points.js: its symbol; in a stripped libuv, lib/latency/stripped-libuv.js reads it from uv_queue_work\'s code', FUNCTION),
  arg('QUEUE_DONE', 'uv__queue_done in UV_FILE, as QUEUE_WORK', 'as QUEUE_WORK', FUNCTION),
  arg('WRAP_START', 'where node::ThreadPoolWork::ScheduleWork() starts in memory (0: inlined)', LATENCY_MEMORY),
  arg('WRAP_END', 'where it ends (0: inlined)', LATENCY_MEMORY),
  arg('SUBMIT', 'uv__work_submit in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('FS_WORK_AT', 'where uv__fs_work lies in the process\'s memory', LATENCY_MEMORY, { part: 'pool' }),
  arg('FS_WORK', 'uv__fs_work in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('DNS_WORK', 'uv__getaddrinfo_work in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('NAME_WORK', 'uv__getnameinfo_work in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('RANDOM_WORK', 'uv__random_work in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('FS_DONE', 'uv__fs_done in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('DNS_DONE', 'uv__getaddrinfo_done in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('NAME_DONE', 'uv__getnameinfo_done in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('RANDOM_DONE', 'uv__random_done in UV_FILE', LATENCY_POOL, { part: 'pool', ...FUNCTION }),
  arg('QUEUE_WORK_AT', 'where uv__queue_work lies in the process\'s memory', LATENCY_MEMORY, { part: 'pool' }),
  arg('DNS_WORK_AT', 'where uv__getaddrinfo_work lies in the process\'s memory', LATENCY_MEMORY, { part: 'names' }),
  arg('NAMES', 'which names to read: 1 fs paths, 2 host names, 3 both, 0 none',
    '--paths, --hosts (lib/latency/report/named-kinds.js namesMask)', { part: 'names' }),
];

const GC_OBJECT = arg('OBJECT', 'the file that holds V8: node, or libnode.so.*',
  'lib/gc/v8-functions.js: the mapped object that defines V8\'s collectors, as /proc/PID/map_files/RANGE', FILE);
const PID_OPTION = arg('PID', 'the Node process (every thread of it)', '-p');
const QUOTED = { quoted: true };
const LOOP = [
  arg('PID', 'the Node process', '-p'),
  arg('OVER_US', 'a stall is a turn busy for longer than this (microseconds)', '--over'),
  arg('STACKS', '1: sample the loop\'s user stack during stalls; 0: no sampling', '--stacks or --folded'),
  arg('TID', 'the thread whose event loop is measured: the PID (the main thread) or a Worker\'s thread',
    '--thread (lib/threads/select.js), the PID without it'),
];
const ASYNC_FROM = 'lib/async/wrap-functions.js: its symbol in OBJECT, given as its address (0x...) where the symbol has one';
const ASYNC_TID = arg('TID', 'the thread whose event loop the loop figures (busy time, callbacks\' share) are of: the PID (the main thread) or a Worker\'s thread',
  '--thread (lib/threads/select.js), the PID without it');
const ASYNC_BT = [
  arg('OBJECT', 'the file that defines node::AsyncWrap: node, or libnode.so.*',
    'lib/async/wrap-functions.js: the mapped object that defines it, as /proc/PID/map_files/RANGE', FILE),
  arg('PID', 'the Node process (every thread of it)', '-p'),
  arg('RESET', 'node::AsyncWrap::AsyncReset(Local<Object>, double[, bool]): an operation created', ASYNC_FROM, FUNCTION),
  arg('CALLBACK', 'node::AsyncWrap::MakeCallback(Local<Function>, int, Local<Value>*): its callback', ASYNC_FROM, FUNCTION),
  arg('DESTROY', 'node::AsyncWrap::EmitDestroy(bool): an operation ended', ASYNC_FROM, FUNCTION),
  arg('DTOR', 'node::AsyncWrap::~AsyncWrap() D2: an operation ended (EmitDestroy inlined)', ASYNC_FROM, FUNCTION),
  arg('DELETING_DTOR', 'node::AsyncWrap::~AsyncWrap() D0, as DTOR', ASYNC_FROM, FUNCTION),
  arg('TYPE_AT', 'where an AsyncWrap holds its provider type (int32), in bytes', 'lib/async/wrap-functions.js LAYOUTS, by the Node version read from OBJECT'),
  arg('ID_AT', 'where an AsyncWrap holds its async ID (a double), in bytes', 'as TYPE_AT'),
  arg('SHARED_AT', 'where a JSFunction holds its SharedFunctionInfo, in bytes (0: callbacks not told apart)',
    'lib/v8/metadata.js: V8\'s postmortem metadata in OBJECT (v8dbg_class_JSFunction__shared__*)'),
  ASYNC_TID,
  arg('LIBRARY', 'the probe library of lib/async/probes.js the process maps (node -r nodetrace/register)',
    'lib/probe-libraries/index.js librariesOf, as capabilities.js usdtPathForPid names it for -p', { part: 'hook', ...FILE }),
];
const HZ = arg('HZ', 'samples a second on each CPU', '-F');
const OFFCPU_ALL = arg('ALL', '0: the main thread only (the event loop); 1: every thread', '--all-threads');

const EBADF_ERRNO_FROM = '--errno (lib/ebadf/errno.js)';
const ebadf = (d) => [
  arg('PID', 'the process to watch, or 0 to match by name instead', '-p (0 with --name)'),
  arg('NAME', `the process name (${d ? 'execname' : 'comm, 15 characters at most'}) when PID is 0; "-" otherwise`, '--name', d ? QUOTED : {}),
  arg('ERRNO', `the errno to catch${d ? ', by name or number' : ', by number'} (0: EBADF)`, EBADF_ERRNO_FROM),
  arg('HITS', 'hits before exiting (0: 1)', '--count'),
  ...numbered('ERRNO', 2, 4, 'another errno to catch (0: none)', EBADF_ERRNO_FROM, { group: 'MORE_ERRNOS', fill: 0 }),
];
const EBADF_REPORT_ONLY = arg('REPORT_ONLY', '1: stop and report only (nodetrace takes the core); 0: gcore and resume from here',
  'always 1: nodetrace takes the core and resumes the process itself', { optional: true });

const SNOOP_BT = [
  arg('LIBRARY', 'the probe library (or a glob of them) that holds bunyan\'s probes',
    'lib/probe-libraries/probe-targets.js: the libraries the targets map (several: links in the run\'s private directory, named by a glob)', FILE),
  ...numbered('PROBE', 1, 6, 'a probe to enable, or \'none*\' for an unused slot', '-l (lib/snoop/levels.js bpftraceProbeSlots)',
    { group: 'PROBES', probe: 'probe-name' }),
  ...numbered('PID', 1, 8, 'only these processes (0 or none: every process)', 'the targets\' PIDs (lib/snoop/targets.js)',
    { group: 'PIDS', fill: 0, optional: true }),
];
const HTTP_MORE_PIDS = numbered('PID', 2, 8, 'another process to trace beside PID (0: none)',
  'the targets\' PIDs (lib/probe-libraries/probe-targets.js)', { group: 'MORE_PIDS', fill: 0 });
const HTTP_BT = [
  arg('LIBRARY', 'the probe library of nodetrace\'s provider (or a glob of them)',
    'lib/probe-libraries/probe-targets.js, as log-snoop.bt\'s', FILE),
  arg('PID', 'only this process; 0: every process mapping LIBRARY', 'the first target\'s PID'),
  arg('MIN_US', 'only requests that took at least this long (microseconds)', '--slower-than (ms, times 1000)'),
  ...HTTP_MORE_PIDS,
];
const JS_CODE = arg('CODE', 'JSFunction\'s code offset (V8 13+: its dispatch handle\'s): each JavaScript frame\'s code kept too, what it inlined read back; 0: not read',
  'lib/v8/inlining.js InliningReader codeOffset, where the target\'s V8 is one measured (lib/profile/js-frames.js)', { optional: true });
// V8 13+ (leap-tiering): where the code a dispatch handle leads to is.
const JS_DISPATCH_FROM = 'lib/v8/dispatch-table.js: V8\'s js_dispatch_table_address() and symbols in the target\'s node (lib/profile/js-frames.js)';
const JS_DISPATCH = [
  arg('DISPATCH_AT', 'V8 13+: where the dispatch table\'s base is kept in the object holding it; 0: CODE holds the code itself', JS_DISPATCH_FROM, { optional: true }),
  arg('DISPATCH_ROOT', 'V8 13: the address of the pointer to that object (the isolate group); 0: the thread\'s isolate', JS_DISPATCH_FROM, { optional: true }),
  arg('DISPATCH_TLS', 'V8 14: how far below the thread pointer the thread\'s isolate is kept', JS_DISPATCH_FROM, { optional: true }),
  arg('DISPATCH_SHIFT', 'a dispatch handle\'s entry is the handle shifted right by this', JS_DISPATCH_FROM, { optional: true }),
];

// nodetrace probes (lib/probes/program.js): the processes, then three
// arguments per clause, one clause per probe traced.
const USDT_PROBES = [
  arg('PID', 'only this process; 0: every process mapping the libraries', 'the first target\'s PID (0: \'*\')'),
  ...numbered('PID', 2, 8, 'another process to trace beside PID (0: none)', 'the targets\' PIDs (lib/probes/targets.js)',
    { group: 'MORE_PIDS', fill: 0 }),
  arg('LIBRARY', 'the file that holds the clause\'s probe',
    'lib/probes/inventory.js: the object the process maps (a probe library checked as lib/probe-libraries/index.js checks them; -p: as capabilities.js usdtPathForPid names it)',
    { each: 'PROBES', ...FILE }),
  arg('PROVIDER', 'the clause\'s probe\'s provider', 'its stapsdt note (lib/probes/spec.js: a name of letters, digits, _ and - only)',
    { each: 'PROBES', probe: 'probe-name' }),
  arg('PROBE', 'the clause\'s probe\'s name', 'its stapsdt note, as PROVIDER', { each: 'PROBES', probe: 'probe-name' }),
];

const TABLES = {
  'addon-latency.bt': LATENCY_BT,
  'addon-latency.d': [],
  'addon-latency-every-function.bt': [
    arg('NODE_FILE', 'the object that defines uv_queue_work', 'bench/latency-overhead.js (nodetrace does not run this program)', FILE),
    arg('ADDON', 'the add-on (.node file) whose every function is probed', 'bench/latency-overhead.js', FILE),
  ],
  'addon-latency-every-function.d': [],
  'gc.bt': [GC_OBJECT, PID_OPTION],
  'gc.d': [{ ...PID_OPTION, probe: 'pid' }],
  'async.bt': ASYNC_BT,
  'async.d': [{ ...arg('PID', 'the Node process (every thread of it)', '-p'), probe: 'pid' },
    ...ASYNC_BT.filter((a) => ['TYPE_AT', 'ID_AT'].includes(a.name)),
    arg('SHARED_AT', 'offset of a JSFunction\'s SharedFunctionInfo (0: callbacks not told apart)',
      'lib/v8/metadata.js: V8\'s postmortem metadata in the node that defines AsyncWrap (v8dbg_class_JSFunction__shared__*)'), ASYNC_TID],
  'loop.bt': [...LOOP, arg('SHARED', 'with STACKS, JSFunction\'s `shared` offset: the JavaScript frames\' SharedFunctionInfos kept too; 0: no',
    'lib/profile/js-frames.js jsFramesLayout, where the target\'s V8 is known and --stacks asked (left off otherwise)', { optional: true }),
    JS_CODE, ...JS_DISPATCH],
  'loop.d': LOOP,
  'profile.bt': [HZ, arg('PID', 'the process (0 with -c: cpid)', '-p, or the one process NAME finds')],
  'profile.d': [HZ],
  'profile-js.bt': [HZ, arg('PID', 'the process (0 with -c: cpid)', '-p, or the one process NAME finds'),
    arg('SHARED', 'JSFunction\'s `shared` offset, where a frame\'s function points to its SharedFunctionInfo',
      'lib/v8/metadata.js layoutFrom: the target\'s v8dbg_class_JSFunction__shared__* (lib/profile/js-frames.js; -c: its executable\'s)'),
    JS_CODE, ...JS_DISPATCH],
  'offcpu.bt': [arg('PID', 'the process (0 with -c: cpid)', '-p, or the one process NAME finds'), OFFCPU_ALL,
    arg('SHARED', 'JSFunction\'s `shared` offset: the traced threads\' JavaScript frames\' SharedFunctionInfos kept too; 0: no',
      'lib/profile/js-frames.js jsFramesLayout (-c: commandJsFramesLayout), where the target\'s V8 is known (left off otherwise, and with --no-v8-frames)', { optional: true }),
    JS_CODE, ...JS_DISPATCH],
  'offcpu.d': [OFFCPU_ALL],
  'ebadf-stop-gcore.bt': [...ebadf(false), EBADF_REPORT_ONLY],
  'ebadf-stop-gcore.d': [...ebadf(true), EBADF_REPORT_ONLY,
    arg('USTACK', '1: print the stack with ustack(); 0: it is in the core', 'lib/tracer/capabilities.js ustackBlocksGcore', { optional: true })],
  'ebadf-abort.bt': ebadf(false),
  'ebadf-abort.d': ebadf(true),
  'log-snoop.bt': SNOOP_BT,
  'log-snoop-whole.bt': SNOOP_BT,
  'log-snoop.d': [
    arg('TARGET', 'one PID, or \'*\': every process with bunyan\'s probes', 'the first target\'s PID', QUOTED),
    arg('PROBES', 'which of bunyan\'s probes, as a probe-name glob (\'log-*\': every level)',
      '-l (lib/snoop/levels.js dtraceProbeGlob)', { optional: true, ...QUOTED }),
    ...numbered('PID', 2, 8, 'another process (0: none)', 'the targets\' PIDs', { group: 'MORE_PIDS', optional: true }),
  ],
  'http.bt': HTTP_BT,
  'usdt-probes.bt': USDT_PROBES,
  'usdt-count.bt': USDT_PROBES,
  'usdt-latency.bt': USDT_PROBES,
  'http-batched.bt': HTTP_BT,
  'http-wire.bt': [
    arg('PID', 'the process: every probe fires for it (and MORE_PIDS) alone, in the kernel', '-p, or the first target\'s PID'),
    arg('NUL_BYTE', '1 where str(p, n) copies n - 1 bytes and a NUL, 0 where it copies n',
      'lib/tracer/capabilities.js strCopiesLessOne (bpftrace 0.23+: 1)'),
    ...numbered('PID', 2, 8, 'another process of the same binary to read (0: none)', 'the targets\' PIDs (lib/http/source.js)',
      { group: 'MORE_PIDS', fill: 0 }),
    arg('PARENT', 'a cluster\'s primary among them, whose children (workers forked anew) are read too from their exec on; 0: none',
      'lib/commands/http.js (lib/proc/cluster.js: the primary of the workers traced)'),
    arg('TLS_FILE', 'the object that defines its SSL_read, SSL_write, SSL_free, SSL_set_bio',
      'lib/http/tls-object.js: the mapped object that defines them, as /proc/PID/map_files/RANGE', { part: 'tls' }),
  ],
  'http-wire.d': [{ ...arg('PID', 'the process: every probe fires for it alone, in the kernel', '-p'), probe: 'pid' }],
  'http.d': [
    arg('PID', 'only this process; 0: every process with the probes', 'the first target\'s PID'),
    arg('MIN_US', 'only requests that took at least this long (microseconds)', '--slower-than (ms, times 1000)'),
    ...HTTP_MORE_PIDS.map((e) => ({ ...e, optional: true })),
  ],
};

function tableOf(program) {
  const table = TABLES[program];
  if (!table) throw new Error(`no argument table for ${program} (lib/tracer/program-arguments.js)`);
  return table;
}

const given = (v) => v !== undefined && v !== null;

// A value that lands in a probe description, of its strict set; otherwise
// the plan is refused in one line (the value shown escaped by the CLI).
function checkProbeValue(program, position, e, v) {
  if (typeof v === 'object' && e.probe === 'file' && typeof v.temp === 'string' && TEMP_NAME.test(v.temp)) return;
  const text = typeof v === 'number' ? String(v) : v;
  if (typeof text === 'string' && PROBE_VALUE[e.probe].test(text) && !text.split('/').includes('..')) return;
  const what = { file: 'a path', function: 'a function', 'probe-name': 'a probe name', pid: 'a PID' }[e.probe];
  throw new UserError(`refusing to trace: ${what} for a probe of ${program} (${e.name}, $${position}) holds characters a tracer would read `
    + `as more than a name (only ${{ file: 'letters, digits and _ . / + -', function: 'letters, digits and _ .', 'probe-name': 'letters, digits and _ - *', pid: 'digits' }[e.probe]} are taken): `
    + JSON.stringify(typeof v === 'object' ? v.temp : String(v)));
}

/**
 * The program's positional arguments, in its order, from values by name.
 * @param {string} program      the file's name in d-scripts/ (addon-latency.bt)
 * @param {object} values       NAME -> value (a string, a number, or a file
 *                              of the run's private directory {temp}); a
 *                              group's name -> an array of values
 * @param {string[]} [without]  the program's optional parts left out
 * @returns {Array<{position, name, meaning, value}>}
 */
function programArguments(program, values = {}, { without = [] } = {}) {
  const whole = tableOf(program);
  const each = whole.filter((e) => e.each);
  const table = whole.filter((e) => !e.each);
  if (each.length) {
    if (whole.slice(table.length).some((e) => !e.each)) throw new Error(`${program}: its \`each\` arguments are not the last`);
    const name = each[0].each;
    const clauses = values[name] || [];
    if (!Array.isArray(clauses)) throw new Error(`${program}: ${name} takes an array, one { NAME: value } per clause`);
    const rest = { ...values };
    delete rest[name];
    const kept = fixedArguments(program, rest, { without, table });
    // The clauses' arguments follow every other: none may be left off before them.
    if (kept.length !== table.length) throw new Error(`${program}: every argument before ${name}'s is given (optional ones too)`);
    let position = kept.length;
    for (const [k, clause] of clauses.entries()) {
      for (const e of each) {
        const v = clause[e.name];
        position++;
        if (!given(v)) throw new Error(`${program}: missing ${e.name} of clause ${k + 1} ($${position})`);
        if (e.probe) checkProbeValue(program, position, e, v);
        kept.push({ position, name: k ? `${e.name}${k + 1}` : e.name, meaning: k ? `${e.meaning} (clause ${k + 1})` : e.meaning, value: v });
      }
    }
    return kept;
  }
  return fixedArguments(program, values, { without, table });
}

function fixedArguments(program, values, { without, table }) {
  const groups = new Map();
  for (const e of table) if (e.group) groups.set(e.group, [...(groups.get(e.group) || []), e]);
  for (const key of Object.keys(values)) {
    if (!table.some((e) => e.name === key && !e.group) && !groups.has(key)) {
      throw new Error(`${program} takes no argument named ${key} (its arguments: ${table.map((e) => e.name).join(' ')})`);
    }
  }
  for (const [group, entries] of groups) {
    const list = values[group];
    if (given(list) && (!Array.isArray(list) || list.length > entries.length)) {
      throw new Error(`${program}: ${group} takes an array of at most ${entries.length} values`);
    }
  }
  const valueOf = (e) => (e.group ? (values[e.group] || [])[groups.get(e.group).indexOf(e)] : values[e.name]);
  const kept = [];
  let leftOut = null;
  for (const [i, e] of table.entries()) {
    const v = valueOf(e);
    if (e.part && without.includes(e.part)) {
      if (given(v)) throw new Error(`${program}: ${e.name} ($${i + 1}) is given, but its part @${e.part} is left out`);
      leftOut = leftOut || e;
      continue;
    }
    if (leftOut) throw new Error(`${program}: leaving out @${leftOut.part} leaves a hole before ${e.name} ($${i + 1})`);
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`${program}: ${e.name} ($${i + 1}) is ${v}`);
    if (e.probe && given(v)) checkProbeValue(program, i + 1, e, v);
    if (program.endsWith('.d') && !e.quoted && typeof v === 'string' && !D_WORD.test(v)) {
      throw new UserError(`refusing to trace: ${program} reads ${e.name} ($${i + 1}) as a number or a name, and ${JSON.stringify(v)} is neither`);
    }
    kept.push({ position: i + 1, name: e.name, meaning: e.meaning, value: given(v) ? v : undefined, entry: e });
  }
  // Optional arguments not given may be left off the end, and only the end
  // (but for a group partly given, whose fill completes it); the others not
  // given take their fill.
  const filled = (e) => e.fill !== undefined && e.group && (values[e.group] || []).length > 0;
  const leftOff = (a) => a.value === undefined && a.entry.optional && !filled(a.entry);
  while (kept.length && leftOff(kept[kept.length - 1])) kept.pop();
  for (const a of kept) if (a.value === undefined) a.value = a.entry.fill;
  const missing = kept.filter((a) => a.value === undefined);
  if (missing.length) throw new Error(`${program}: missing ${missing.map((a) => `${a.name} ($${a.position})`).join(', ')}`);
  return kept.map(({ entry, ...a }) => a);
}

/** How the program names one of its arguments: '$2'. */
function argumentReference(program, name) {
  const i = tableOf(program).findIndex((e) => e.name === name);
  if (i < 0) throw new Error(`${program} has no argument named ${name}`);
  return `$${i + 1}`;
}

/** One comment line per argument of a plan, for the dry run. */
function argumentNotes(args) {
  return args.map((a) => `$${a.position} ${a.name} ${a.meaning}`);
}

module.exports = { TABLES, PROBE_VALUE, tableOf, programArguments, argumentReference, argumentNotes };
