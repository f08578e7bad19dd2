'use strict';
// Where a stripped libuv (Debian's and Ubuntu's shared libuv.so.1) keeps
// uv__queue_work and uv__queue_done, the static functions the latency program
// probes: they have no symbol, but uv_queue_work (exported) stores pointers to
// them into the request's work_req (offset 88 of uv_work_t on x86-64: its
// `work` field at 88, `done` at 96), or passes them to uv__work_submit.
// We read uv_queue_work's own code (objdump) and follow the values it stores
// there. Measured on Debian 12's libuv 1.44.2, which inlines uv__work_submit:
//   lea -0x368(%rip),%rax   # b1c0        (uv__queue_done)
//   lea -0x82f(%rip),%rcx   # ad00        (uv__queue_work)
//   movq %rax,%xmm1 ; movq %rcx,%xmm0 ; punpcklqdq %xmm1,%xmm0
//   movups %xmm0,0x58(%rbx)               (rbx = the request, from %rsi)
// A test checks the result against what a queued request really holds.
const { spawnSync } = require('child_process');

const WORK_OFFSET = 88;
const DONE_OFFSET = 96;

// One instruction of objdump's AT&T output: address, mnemonic, operands, and
// the target objdump computes for a RIP-relative operand (after '#').
function parseLine(line) {
  const m = /^\s*([0-9a-f]+):\s+([a-z0-9]+)\s*([^#]*?)\s*(?:#\s*([0-9a-f]+)\b.*)?$/.exec(line);
  if (!m) return null;
  return { addr: parseInt(m[1], 16), op: m[2], args: m[3] ? m[3].split(/,(?![^(]*\))/) : [], target: m[4]
    ? parseInt(m[4], 16) : null };
}

function memOperand(text) {
  const m = /^(-?)(0x[0-9a-f]+|[0-9]+)?\(%([a-z0-9]+)\)$/.exec(text || '');
  if (!m) return null;
  const value = m[2] ? Number(m[2]) : 0;   // Number() reads 0x... too
  return { disp: m[1] ? -value : value, base: m[3] };
}

/**
 * From objdump -d of uv_queue_work (pure): { work, done } as addresses of the
 * file (ELF virtual addresses), or null when the code does not show them.
 * @param {string} text objdump's output for the function
 * @param {(addr: number) => boolean} isCode whether an address is in executable code
 */
function queueFunctionsFromDisassembly(text, isCode = () => true) {
  const reg = new Map([['rsi', 'REQ']]);   // uv_queue_work(loop, req, work_cb, after_work_cb)
  const xmm = new Map();                   // xmmN -> [low, high]
  const stored = new Map();                // offset in the request -> address
  let submitted = null;
  for (const line of text.split('\n')) {
    const ins = parseLine(line);
    if (!ins) continue;
    const [src, dst] = ins.args;
    const r = (t) => (t && t.startsWith('%') ? t.slice(1) : null);
    if (ins.op === 'lea' && /\(%rip\)$/.test(src || '') && ins.target !== null && r(dst)) {
      reg.set(r(dst), ins.target);
    } else if ((ins.op === 'mov' || ins.op === 'movq') && r(src) && r(dst)) {
      if (r(dst).startsWith('xmm')) xmm.set(r(dst), [reg.get(r(src)), undefined]);
      else reg.set(r(dst), reg.get(r(src)));
    } else if (ins.op === 'punpcklqdq' && r(src) && r(dst)) {
      xmm.set(r(dst), [(xmm.get(r(dst)) || [])[0], (xmm.get(r(src)) || [])[0]]);
    } else if (/^(mov|movq|movups|movdqu|movaps|movdqa)$/.test(ins.op) && r(src) && memOperand(dst)) {
      const mem = memOperand(dst);
      if (reg.get(mem.base) !== 'REQ') continue;
      if (r(src).startsWith('xmm')) {
        const [lo, hi] = xmm.get(r(src)) || [];
        stored.set(mem.disp, lo);
        stored.set(mem.disp + 8, hi);
      } else {
        stored.set(mem.disp, reg.get(r(src)));
      }
    } else if (ins.op === 'call') {
      // uv__work_submit(loop, &req->work_req, kind, work, done): work in rcx, done in r8.
      const work = reg.get('rcx');
      const done = reg.get('r8');
      if (submitted === null && typeof work === 'number' && typeof done === 'number') submitted = { work, done };
      for (const r of ['rax', 'rcx', 'rdx', 'rsi', 'rdi', 'r8', 'r9', 'r10', 'r11']) reg.delete(r);   // caller-saved
    } else if (r(dst) && !/^(cmp|test|push)/.test(ins.op)) {
      reg.delete(r(dst));
    }
  }
  const ok = (a) => typeof a === 'number' && isCode(a);
  const work = stored.get(WORK_OFFSET);
  const done = stored.get(DONE_OFFSET);
  if (ok(work) && ok(done) && work !== done) return { work, done, how: 'stored into work_req by uv_queue_work' };
  if (submitted && ok(submitted.work) && ok(submitted.done) && submitted.work !== submitted.done) {
    return { work: submitted.work, done: submitted.done, how: 'passed to uv__work_submit by uv_queue_work' };
  }
  return null;
}

/**
 * Runs objdump on one function of an ELF file: -> { text } or { error }.
 * The file is an argument (no shell); objdump only reads it.
 */
function disassemble(file, start, size) {
  const out = spawnSync('objdump', ['-d', '--no-show-raw-insn', '-M', 'att',
    `--start-address=0x${start.toString(16)}`, `--stop-address=0x${(start + size).toString(16)}`, file],
  { encoding: 'utf8', timeout: 20000, maxBuffer: 4 * 1024 * 1024 });
  if (out.error) return { error: out.error.code === 'ENOENT' ? 'objdump is not installed (apt-get install binutils)' : `objdump failed: ${out.error.message}` };
  if (out.status !== 0) return { error: `objdump failed: ${(out.stderr || '').trim().split('\n')[0]}` };
  return { text: out.stdout };
}

module.exports = { queueFunctionsFromDisassembly, disassemble, parseLine, WORK_OFFSET, DONE_OFFSET };
