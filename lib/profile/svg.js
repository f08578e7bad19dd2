'use strict';
// A flame graph as one self-contained SVG: no network, no external script or
// font. Each box is a function in a stack (the root, at the bottom, is the
// thread), as wide as its samples. Click a box to zoom to it, "Reset zoom"
// or Escape to go back, "Search" (or Ctrl-F) to highlight the boxes whose
// name matches and see what share of samples they hold. Colours tell
// JavaScript (greens: the application, node's own, node_modules), unnamed JIT
// code (grey), V8 (yellow), Node's C++ (orange), add-ons (purple), libc
// (red) and the kernel (blue). Pure: named stacks in, text out.

const WIDTH = 1200;
const ROW = 17;
const TOP = 54;       // title, buttons and the search result above the graph
const BOTTOM = 24;    // the details line below
const FONT_PX = 12;
const CHAR_PX = 7.6;  // about right for 12 px monospace (7.2 px a character in Debian's chromium), with room to spare

const PALETTE = {
  'js:app': [110, 190, 90], 'js:node': [60, 160, 150], 'js:node_modules': [150, 200, 80],
  jit: [160, 160, 160], v8: [225, 200, 60], node: [235, 150, 60], addon: [170, 110, 220],
  libc: [220, 90, 80], kernel: [90, 140, 225], unknown: [190, 190, 190], thread: [200, 200, 200],
};

// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeXml(s) {
  return String(s).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c])
    // What XML 1.0's Char production leaves out (C0 controls but tab, LF and
    // CR; U+FFFE, U+FFFF; a surrogate not in a pair, which a name may hold
    // or fitText may leave by cutting a pair) would make the whole SVG
    // invalid, and a browser draws it only in part: shown as U+FFFD. DEL is
    // a Char, but no name needs it raw.
    .replace(NOT_XML_CHAR, '\ufffd');
}

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

function colour(f) {
  const key = f.category === 'js' ? `js:${f.origin || 'app'}` : f.category;
  const [r, g, b] = PALETTE[key] || PALETTE.unknown;
  const v = Math.round((hash(f.name) - 0.5) * 40);
  const c = (x) => Math.max(0, Math.min(255, x + v));
  return `rgb(${c(r)},${c(g)},${c(b)})`;
}

// The stacks as a tree: { name, category, origin, samples, children: Map }.
function buildTree(named, pid) {
  const root = { name: 'all', category: 'thread', samples: 0, children: new Map() };
  for (const s of named.stacks) {
    root.samples += s.count;
    const thread = { name: s.tid === pid ? `${s.comm} (main thread)` : `${s.comm} (${s.thread || 'thread'}, TID ${s.tid})`, category: 'thread' };
    let node = root;
    for (const f of [thread, ...s.frames]) {
      const key = f.category + '\0' + f.name;
      if (!node.children.has(key)) node.children.set(key,
        { name: f.name, category: f.category, origin: f.origin, samples: 0, inlined: 0, children: new Map() });
      node = node.children.get(key);
      node.samples += s.count;
      if (f.inlined) node.inlined += s.count;
    }
  }
  return root;
}

function fitText(name, widthPx) {
  const chars = Math.floor((widthPx - 6) / CHAR_PX);
  if (chars < 3) return '';
  return name.length <= chars ? name : name.slice(0, chars - 2) + '..';
}

// How a box's weight reads: samples, or (off-CPU) microseconds blocked.
function amount(n, unit) {
  if (unit !== 'us') return `${n} samples`;
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} s` : `${(n / 1e3).toFixed(1)} ms`;
}

/**
 * @param {object} named from nameStacks()
 * @param {object} o { pid, hz, seconds, title, unit: 'samples' (default) or 'us' (counts are microseconds) }
 */
function renderSvg(named, { pid, hz, seconds, title = 'CPU flame graph', unit = 'samples' } = {}) {
  const tree = buildTree(named, pid);
  const total = tree.samples || 1;
  const boxes = [];
  let maxDepth = 0;
  const walk = (node, depth, x) => {
    maxDepth = Math.max(maxDepth, depth);
    boxes.push({ node, depth, x });
    let cx = x;
    const kids = [...node.children.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const k of kids) { walk(k, depth + 1, cx); cx += k.samples; }
  };
  walk(tree, 0, 0);
  const height = TOP + (maxDepth + 1) * ROW + BOTTOM;
  const graphBottom = TOP + (maxDepth + 1) * ROW;
  const scale = (WIDTH - 20) / total;
  const parts = [];
  parts.push(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" data-total="${tree.samples}" data-hz="${hz || ''}">
<style>
text { font-family: monospace; font-size: ${FONT_PX}px; fill: #000; }
.f rect { stroke: #fff; stroke-width: 0.5; cursor: pointer; }
.f text { pointer-events: none; }
.f.hit rect { fill: rgb(230,0,230) !important; }
.f.dim rect { opacity: 0.35; }
.button { cursor: pointer; fill: #1a56a8; text-decoration: underline; }
#title { font-size: 16px; }
</style>
<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#f8f8f4"/>
<text id="title" x="10" y="20">${escapeXml(title)}</text>
<text x="10" y="40">${escapeXml(`${amount(tree.samples, unit)}${hz ? ` at ${hz} Hz` : ''}${seconds ? ` in ${seconds.toFixed(1)} s` : ''}; click a box to zoom`)}</text>
<text id="reset" class="button" x="${WIDTH - 250}" y="40" visibility="hidden">Reset zoom</text>
<text id="search" class="button" x="${WIDTH - 150}" y="40">Search</text>
<text id="matched" x="${WIDTH - 90}" y="40"></text>
<text id="details" x="10" y="${height - 8}"> </text>
<g id="frames">`);
  boxes.forEach((b, i) => {
    const w = b.node.samples * scale;
    const x = 10 + b.x * scale;
    const y = graphBottom - (b.depth + 1) * ROW;
    const pctText = (100 * b.node.samples / total).toFixed(2);
    const inlined = b.node.inlined ? `, ${b.node.inlined === b.node.samples ? '' : `${Math.round((100 * b.node.inlined) / b.node.samples)}% `}inlined` : '';
    const label = `${b.node.name} (${amount(b.node.samples, unit)}, ${pctText}%${inlined})`;
    parts.push(`<g class="f" id="f${i}" data-x="${b.x}" data-w="${b.node.samples}" data-d="${b.depth}" data-name="${escapeXml(b.node.name)}">`
      + `<title>${escapeXml(label)}</title><rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${ROW - 1}" fill="${colour(b.node)}" rx="2"/>`
      + `<text x="${(x + 3).toFixed(2)}" y="${y + ROW - 5}">${escapeXml(fitText(b.node.name, w))}</text></g>`);
  });
  parts.push('</g>');
  parts.push(`<script type="text/ecmascript"><![CDATA[
(function () {
  var W = ${WIDTH - 20}, LEFT = 10, CHAR = ${CHAR_PX}, TOTAL = ${tree.samples};
  var frames = Array.prototype.slice.call(document.querySelectorAll('.f'));
  var details = document.getElementById('details');
  var reset = document.getElementById('reset');
  var matched = document.getElementById('matched');
  function num(g, k) { return Number(g.getAttribute('data-' + k)); }
  function fit(name, w) {
    var n = Math.floor((w - 6) / CHAR);
    if (n < 3) return '';
    return name.length <= n ? name : name.slice(0, n - 2) + '..';
  }
  // Shows the samples [x0, x0 + w0) across the whole width; boxes below the
  // zoomed one (its callers) are dimmed, boxes outside it hidden.
  function view(x0, w0, d0) {
    var scale = W / w0;
    frames.forEach(function (g) {
      var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');
      var inside = x + w > x0 && x < x0 + w0;
      var rect = g.querySelector('rect'), text = g.querySelector('text');
      if (!inside) { g.style.display = 'none'; return; }
      g.style.display = '';
      var nx = LEFT + (Math.max(x, x0) - x0) * scale;
      var nw = (Math.min(x + w, x0 + w0) - Math.max(x, x0)) * scale;
      rect.setAttribute('x', nx.toFixed(2));
      rect.setAttribute('width', nw.toFixed(2));
      text.setAttribute('x', (nx + 3).toFixed(2));
      text.textContent = fit(g.getAttribute('data-name'), nw);
      g.classList.toggle('dim', d < d0);
    });
    reset.setAttribute('visibility', w0 < TOTAL ? 'visible' : 'hidden');
  }
  function zoom(g) { view(num(g, 'x'), num(g, 'w'), num(g, 'd')); }
  function unzoom() { view(0, TOTAL, 0); }
  // Highlights every box whose name matches; the share counts each sample
  // once (a match inside another match is not added again).
  function search(term) {
    var re = null;
    if (term) { try { re = new RegExp(term, 'i'); } catch (e) { re = new RegExp(term.replace(/[.*+?^$|()[\\]{}\\\\]/g, '\\\\$&'), 'i'); } }
    var covered = [];
    frames.forEach(function (g) {
      var hit = !!re && re.test(g.getAttribute('data-name')) && num(g, 'd') > 0;
      g.classList.toggle('hit', hit);
      if (hit) covered.push([num(g, 'x'), num(g, 'x') + num(g, 'w')]);
    });
    covered.sort(function (a, b) { return a[0] - b[0]; });
    var sum = 0, end = -1;
    covered.forEach(function (c) { if (c[1] > end) { sum += c[1] - Math.max(c[0], end); end = c[1]; } });
    matched.textContent = re ? 'Matched: ' + (100 * sum / TOTAL).toFixed(1) + '%' : '';
    return sum;
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () { zoom(g); });
    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  reset.addEventListener('click', unzoom);
  document.getElementById('search').addEventListener('click', function () {
    search(window.prompt('Search (a regular expression):', '') || '');
  });
  window.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') { unzoom(); search(''); }
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(window.prompt('Search (a regular expression):', '') || ''); }
  });
  // For scripts and tests driving the page.
  window.flamegraph = { zoom: function (id) { zoom(document.getElementById(id)); }, unzoom: unzoom, search: search };
})();
]]></script>
</svg>
`);
  return parts.join('\n');
}

module.exports = { renderSvg, buildTree, escapeXml };
