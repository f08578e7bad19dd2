'use strict';
// Every program nodetrace can make from d-scripts/*.bt (each template slot
// filled as the commands fill it, each optional part left out alone and
// together, -c's cpid) compiles on every bpftrace tier: the host's (0.17
// here) and the Debian roots of scripts/bpftrace-tier.sh (trixie 0.23, sid
// 0.27), as bpftrace's own tests/tools-parsing-test does for its tools.
// Compiled only: nothing is loaded or attached (lib/tracer/capabilities.js
// compileOnlyArgs). @tracer: bpftrace runs as root only. The D scripts'
// twin is in test/dtrace-linux.test.js ("every d-script compiles").
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { requireTracing, startTarget, stopTarget, killStragglers, ROOT } = require('./support/harness');
const { detectBpftrace } = require('../lib/tracer/detect');
const { readScript } = require('../lib/tracer/plan');
const { findProbePoints } = require('../lib/latency/probe-points');
const { libraryFor } = require('../lib/usdt/paths');
const { BUNYAN_PROVIDER } = require('../lib/usdt');
const { HTTP_PROVIDER } = require('../lib/http/probes');
const { ASYNC_PROVIDER } = require('../lib/async/probes');
const { bpftraceVariants, latencyWithout, compile, programOf, partsOf, bpftraceScripts } = require('./support/program-variants');

const CACHE = process.env.NODETRACE_CACHE || '/var/cache/nodetrace';

// The tiers: { tier, tracer } or { tier, reason } where it is not made.
function tiers() {
  const host = detectBpftrace({ ...process.env, NODETRACE_BPFTRACE: '' });
  const out = [host.available ? { tier: 'host', tracer: host } : { tier: 'host', reason: host.reason }];
  for (const suite of ['trixie', 'sid']) {
    const wrapper = path.join(CACHE, 'bpftrace', suite, 'bpftrace');
    const t = fs.existsSync(wrapper) ? detectBpftrace({ NODETRACE_BPFTRACE: wrapper }) : null;
    out.push(t && t.available ? { tier: suite, tracer: t }
      : { tier: suite, reason: `the ${suite} tier is not made (${t ? t.reason : `${wrapper} is missing`}): run scripts/bpftrace-tier.sh ${suite}` });
  }
  return out;
}

// The tracer's errors, without its warnings (0.27 warns of much that is fine).
const errorsOf = (stderr) => stderr.split('\n').filter((l) => /ERROR|error:/.test(l)).join('\n') || stderr.trim().slice(-2000);

const libraryPath = (dir, provider) => path.join(dir,
  libraryFor(provider.name, provider.probes.map((p) => [...p]), provider.module).fileName);

describe('every program compiles on every bpftrace tier @tracer', function () {
  this.timeout(900000);
  let root;
  let target;
  let ctx;

  before(async function () {
    requireTracing(this);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-programs-'));
    const usdtDir = path.join(root, 'lib');
    // A node process with nodetrace's provider: it maps bunyan's probe
    // library (it logs through bunyan), the HTTP one and the async one (the
    // register hook: async's @hook part).
    target = await startTarget('bunyan-debug-loop.js', { env: { NODETRACE_USDT_DIR: usdtDir, INTERVAL: '1000' }, args: ['-r', path.join(ROOT, 'register.js')] });
    ctx = { pid: target.pid, bunyanLib: libraryPath(usdtDir, BUNYAN_PROVIDER),
      httpLib: libraryPath(usdtDir, HTTP_PROVIDER) };
    const maps = fs.readFileSync(`/proc/${target.pid}/maps`, 'utf8');
    for (const lib of [ctx.bunyanLib, ctx.httpLib, libraryPath(usdtDir, ASYNC_PROVIDER)]) assert.ok(maps.includes(lib), `the target maps ${lib}`);
  });

  after(async function () {
    stopTarget(target);
    await killStragglers.call(this);
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('the variants cover every .bt file, each optional part left out alone and all together, and each template slot filled', function () {
    const variants = bpftraceVariants(tiers()[0].tracer, ctx);
    for (const file of bpftraceScripts()) {
      const script = file.replace(/\.bt$/, '');
      const programs = variants.filter((v) => v.plan.script === script).map((v) => programOf(v.plan));
      assert.ok(programs.length, `no variant of ${file}`);
      const text = readScript(script, 'bpftrace');
      // A part alone: it and the parts marked inside it (which it takes some of).
      const parts = partsOf(text);
      // @byhand opens a program's window at BEGIN for a run by hand: every
      // plan with a window leaves it out (docs/programs.md, "The window").
      parts.delete('byhand');
      const has = (program, part) => program.includes(`/* @${part} `);
      for (const [part, inside] of parts) {
        const gone = new Set([part, ...inside]);
        assert.ok(programs.some((p) => [...parts.keys()].every((q) => has(p, q) !== gone.has(q))), `${file}: no variant without @${part} alone`);
      }
      if (parts.size > 1) assert.ok(programs.some((p) => [...parts.keys()].every((q) => !has(p, q))), `${file}: no variant without all its parts`);
      for (const [, slot, used] of text.matchAll(/@template ([A-Z_]+): (\S.*?)\s*$/gm)) {
        const filled = (p) => !p.split('\n').some((l) => l.trim() === used);
        // The window's clause is filled by the plan itself, by version
        // (bpftrace 0.22+: lib/tracer/capabilities.js windowSignal): each
        // tier below compiles it as that tier runs it.
        const plannedPerTier = slot === 'WINDOW';
        assert.ok(plannedPerTier || programs.some(filled), `${file}: no variant with its ${slot} slot filled`);
      }
    }
  });

  for (const t of tiers()) {
    describe(`tier ${t.tier}${t.tracer ? ` (bpftrace ${t.tracer.version})` : ''}`, function () {
      before(function () {
        if (t.tracer) return;
        if (process.env.CI) throw new Error(`CI compiles on every tier: ${t.reason}`);
        console.log(`      skipped: ${t.reason}`);
        this.skip();
      });

      it('compiles every variant', async function () {
        const variants = bpftraceVariants(t.tracer, ctx);
        const failed = [];
        const started = Date.now();
        // One compile a CPU at once: each is one CPU-bound bpftrace.
        const queue = [...variants];
        const worker = async () => {
          for (let v = queue.shift(); v; v = queue.shift()) {
            const r = await compile(t.tracer, v.plan);
            if (r.status !== 0) failed.push(`${v.name} (${v.plan.script}): exit ${r.status}${r.signal ? ` (${r.signal})` : ''}\n${errorsOf(r.stderr)}`);
          }
        };
        await Promise.all(os.cpus().map(worker));
        console.log(`      ${variants.length} programs compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        assert.deepStrictEqual(failed, [], failed.join('\n\n'));
      });

      it('fails on a broken variant: latency\'s @pool part left out without the @names part it holds some of', async function () {
        const points = findProbePoints(ctx.pid).points;
        const broken = await compile(t.tracer, latencyWithout(t.tracer, ctx.pid, points, ['pool']));
        assert.notStrictEqual(broken.status, 0, 'it compiled');
        assert.match(broken.stderr, /ERROR: Undefined map: @name/);
        const whole = await compile(t.tracer, latencyWithout(t.tracer, ctx.pid, points, ['pool', 'names']));
        assert.strictEqual(whole.status, 0, errorsOf(whole.stderr));
      });
    });
  }
});
