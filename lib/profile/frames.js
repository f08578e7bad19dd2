'use strict';
// What a named frame is, for the report: its display name and its category.
// Pure.
//
// Categories (of where the CPU was, by the sampled frame):
//   js        JavaScript named from V8's perf map; `origin` says whose:
//             app, node (node:internal/..., node:*) or node_modules
//   jit       JIT code with no name (no perf map: start node with --perf-basic-prof)
//   v8        V8's own C++ and its builtins (embedded in the node binary)
//   node      Node's C++, libuv, OpenSSL, zlib... (the rest of the node binary or libnode)
//   addon     native add-ons (.node files) and the libraries only they load
//   libc      the C and C++ runtime (libc, libm, libstdc++, ld.so)
//   kernel    in the kernel (system calls, page faults, ...), and the
//             return trampoline of uretprobes ([uprobes-trampoline]: a
//             tracer's cost)
//   unknown   an address in no mapping, or in a file without symbols
// The vDSO and vsyscall pages ([vdso]: clock_gettime, gettimeofday... answered
// in user space) count as libc, whose calls they serve.
// Executable pages the kernel names are never JIT code (only anonymous
// executable memory, V8's code space, is), whatever the perf map says.
const CATEGORIES = Object.freeze(['js', 'jit', 'v8', 'node', 'addon', 'libc', 'kernel', 'unknown']);
const CATEGORY_LABELS = Object.freeze({
  js: 'JavaScript', jit: 'JIT code, unnamed', v8: 'V8', node: 'Node C++ (and libuv, OpenSSL...)',
  addon: 'native add-ons', libc: 'libc / libstdc++ / vDSO', kernel: 'kernel', unknown: 'unknown',
});
const UNNAMED_JIT = '[JIT code, unnamed]';

const LIBC = /^(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)([.-].*)?\.so(\.\d+)*$|^ld-linux/;
const NODE_BINARY = /^(node|nodejs|libnode\.so(\.\d+)*)$/;
const V8_SYMBOL = /^(v8::|Builtins_|Builtin:|BytecodeHandler:|Stub:|v8_|cppgc::|heap::base::|non-virtual thunk to v8::)|^(\w+::)*v8::internal::/;

// "JS:*hotSpin /app/hot.js:3:17" -> { name: "hotSpin /app/hot.js:3:17", tier: '*' }.
// V8 marks the tier: ~ interpreted or baseline, ^ Sparkplug, + Maglev, * TurboFan.
function parseJsName(text) {
  const m = /^(?:JS|LazyCompile|Function|Script|Eval):([~^+*]?)(.*)$/.exec(text);
  if (!m) return null;
  return { name: m[2].trim() || '(anonymous)', tier: m[1] };
}

function jsOrigin(name) {
  const where = name.slice(name.lastIndexOf(' ') + 1);
  if (/^node:/.test(where) || /^(internal|node:internal)\//.test(where)) return 'node';
  if (/[/\\]node_modules[/\\]/.test(where)) return 'node_modules';
  return 'app';
}

function stripOffset(text) {
  return text.replace(/\+(0x[0-9a-f]+|\d+)$/i, '');
}

/**
 * A kernel frame as bpftrace prints it ("do_syscall_64+110").
 */
function kernelFrame(text) {
  return { name: stripOffset(text), category: 'kernel' };
}

/**
 * A user frame named by lib/symbolize.js ({ text, symbol, module, kind }),
 * or a name a tracer printed ("node`uv_run+0x12", "JS:*f /a.js:1:2").
 */
const KERNEL_PAGES = { '[vdso]': 'libc', '[vsyscall]': 'libc', '[uprobes-trampoline]': 'kernel' };

function userFrame(f) {
  if (f.kind === 'jit') return { name: UNNAMED_JIT, category: 'jit' };
  if (f.kind === 'special') return { name: f.module, category: KERNEL_PAGES[f.module] || 'unknown' };
  const symbol = f.symbol || (f.kind === 'named' ? f.text : null);
  if (!symbol) return { name: f.module ? `[${f.module}]` : `[unknown] ${f.text}`, category: 'unknown' };
  let name = stripOffset(symbol);
  let module = f.module || '';
  const tick = /^([^`\s]+)`(.*)$/.exec(name);   // DTrace: module`symbol
  if (tick) { module = tick[1]; name = tick[2]; }
  const js = parseJsName(name);
  if (js) return { name: js.name, category: 'js', origin: jsOrigin(js.name) };
  if (/^(Builtin|BytecodeHandler|Stub|RegExp):/.test(name)) return { name, category: 'v8' };
  if (LIBC.test(module)) return { name, category: 'libc' };
  if (/\.node$/.test(module)) return { name, category: 'addon' };
  if (NODE_BINARY.test(module) || module === 'JIT' || !module) {
    return { name, category: V8_SYMBOL.test(name) ? 'v8' : 'node' };
  }
  // Another shared library: Debian's node links libuv, OpenSSL, zlib... as
  // shared libraries; add-ons load theirs. Either is native code outside V8.
  if (/^lib(uv|ssl|crypto|z|brotli|nghttp2|cares|icu|llhttp)/.test(module)) return { name, category: 'node' };
  return { name, category: 'addon' };
}

module.exports = { CATEGORIES, CATEGORY_LABELS, UNNAMED_JIT, parseJsName, jsOrigin, userFrame, kernelFrame,
  stripOffset };
