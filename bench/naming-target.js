'use strict';
// The target of bench/profile-naming.js: JavaScript whose frames are named
// two ways (V8's metadata and --perf-basic-prof's map). Prints "ready PID".
//   NAMING_MODE=steady  a dozen functions of every kind (declaration, class
//                       method, static method, arrow, closure, getter,
//                       recursion, a non-ASCII name), a few calls deep
//   NAMING_MODE=churn   the same, each allocating heavily (short-lived
//                       objects, strings and arrays, an old generation that
//                       grows and is dropped; with --expose-gc a full GC
//                       every 300 ms): V8 moves objects while it is sampled
//   NAMING_MODE=many    NAMING_FUNCTIONS (5,000) distinct generated
//                       functions, each called often, four calls deep
const fs = require('fs');
const os = require('os');
const path = require('path');

const MODE = process.env.NAMING_MODE || 'steady';
const CHURN = MODE === 'churn';
// eslint-disable-next-line no-unused-vars -- written so that V8 cannot drop the work as dead code
let sink = 0;
let old = [];

function work(x, n) {
  let h = x | 0;
  for (let k = 0; k < n; k++) h = (h * 31 + k) | 0;
  if (CHURN) {
    // Short-lived garbage (scavenges) and some that lives a while (old space, compaction).
    const tmp = [];
    for (let i = 0; i < 40; i++) tmp.push({ i, s: 'v' + (h + i), a: [h, i] });
    old.push(tmp);
    if (old.length > 4000) old = [];
    h ^= tmp.length;
  }
  return h;
}

function leafDeclared(x) { return work(x, 3000); }
const leafArrow = (x) => work(x + 1, 3000);
function makeClosure(k) { return function closureLeaf(x) { return work(x ^ k, 3000); }; }
const closureLeaf = makeClosure(7);
class Shape {
  constructor(n) { this.n = n; }
  area(x) { return work(x + this.n, 3000); }
  static create(n) { return new Shape(n); }
  get perimeter() { return work(this.n, 2000); }
}
const handlers = { onTick(x) { return work(x * 3, 3000); } };
function 計算(x) { return work(x + 9, 3000); }
function recurse(d, x) { return d === 0 ? work(x, 1000) : recurse(d - 1, x + d); }

function middle(i) {
  const s = Shape.create(i & 7);
  return leafDeclared(i) ^ leafArrow(i) ^ closureLeaf(i) ^ s.area(i) ^ s.perimeter
    ^ handlers.onTick(i) ^ 計算(i) ^ recurse(6, i);
}
function outer(i) { return middle(i) ^ middle(i + 1); }

// 5,000 functions in a generated file: each its own SharedFunctionInfo.
function loadMany(n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    const next = (i * 31 + 7) % n;
    lines.push(`function gen_${i}(x, d) { let h = x | 0; for (let k = 0; k < 300; k++) h = (h * 31 + k) | 0; return d ? F[${next}](h, d - 1) : h; }`);
  }
  lines.push(`const F = [${Array.from({ length: n }, (_, i) => `gen_${i}`).join(', ')}];`, 'module.exports = F;');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'naming-target-'));
  const file = path.join(dir, 'many.js');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const F = require(file);
  fs.rmSync(dir, { recursive: true, force: true });
  return F;
}

function runMany(F) {
  let i = 0;
  (function turn() {
    for (let r = 0; r < 200; r++) { sink ^= F[i](i, 3); i = (i + 1) % F.length; }
    setImmediate(turn);
  }());
}

if (MODE === 'many') runMany(loadMany(Number(process.env.NAMING_FUNCTIONS || 5000)));
else {
  let i = 0;
  (function turn() {
    for (let r = 0; r < 5; r++) sink ^= outer(i++);
    setImmediate(turn);
  }());
  if (CHURN && typeof global.gc === 'function') setInterval(() => global.gc(), 300);
}
process.stdout.write(`ready ${process.pid}\n`);
