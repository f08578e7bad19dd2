'use strict';
// node-dtrace-provider's API on top of generated probe libraries (Linux).
//
//   const dtp = createDTraceProvider('nodeapp'[, 'module']);
//   const p = dtp.addProbe('probe1', 'int', 'char *', 'json');
//   dtp.enable();
//   p.fire(function () { return [1, 'two', { three: 3 }]; });
//   dtp.fire('probe1', function (a) { return [a, 'x', null]; }, 42);
//
// Semantics follow dtrace-provider (src/dtrace_probe.cc, dtrace_provider.cc):
// the callback runs only while a tracer has enabled the probe, with `this`
// being the probe and any extra fire() arguments as its arguments; it must
// return an array, else nothing fires; probe.fire() returns true when the
// probe fired, provider.fire() returns true when the probe exists; probes
// added after enable() are live only after disable() + enable(); a second
// probe with the same name is inert. Differences: an exception thrown by the
// callback propagates to the caller (dtrace-provider makes it fatal), and
// more than 12 arguments are ignored (dtrace-provider: 32).
//
// Is-enabled check: each probe holds a view on the semaphores the kernel
// increments while a tracer is attached, so a disabled fire() is one typed-
// array load, no native call.

const library = require('./library');
const { checkName, kindOf } = require('./definition');

const NEVER = new Uint16Array(1);   // stays 0: the view of probes that are not live
const JSON_FAILED = '{ "error": "stringify failed" }';

let addon = null;                   // set on first successful enable()

// JS values -> what the addon passes in registers (see src/usdt.c).
function toArg(kind, v) {
  switch (kind) {
    case 'int':
      if (typeof v === 'number' || typeof v === 'bigint') return v;
      return v === undefined ? 0 : Number(v);
    case 'int32':
      if (typeof v === 'bigint') return Number(BigInt.asIntN(32, v));
      return (v === undefined ? 0 : Number(v)) | 0;
    case 'json': {
      if (v === undefined) return 'undefined';
      let s;
      try { s = JSON.stringify(v); } catch { return JSON_FAILED; }
      return s === undefined ? 'undefined' : s;
    }
    default:
      if (typeof v === 'string') return v;
      return v === undefined ? 'undefined' : String(v);
  }
}

// probe.fire(cb, ...extra), made per semaphore view on bind: a view held in
// a closure that never changes is a constant to the optimizing compiler,
// which makes the disabled check cheaper than a field load.
function fireFor(sem) {
  return function fire(cb) {
    if (typeof cb !== 'function') throw new TypeError('Must give probe value callback as first argument');
    if (sem[0] === 0) return undefined;
    return this._fireNow(arguments, 0);
  };
}

// Not enumerable, as a method on the prototype would be.
function setFire(probe, sem) {
  Object.defineProperty(probe, 'fire', { value: fireFor(sem), writable: true, configurable: true, enumerable: false });
}

class DTraceProbe {
  #sem = NEVER;       // a 1-element view on this probe's semaphore
  #site = 0;
  #name;
  #kinds;

  constructor(provider, name, types) {
    this.#name = name;
    this.#kinds = types.map(kindOf).slice(0, 12);
    setFire(this, NEVER);
    // As in dtrace-provider: a probe keeps its provider alive.
    Object.defineProperty(this, '__prov__', { value: provider });
  }

  get name() { return this.#name; }

  // Internal: called by DTraceProvider on enable()/disable().
  _bind(semaphores, slot, site) {
    this.#sem = new Uint16Array(semaphores.buffer, semaphores.byteOffset + slot * 2, 1);
    this.#site = site;
    setFire(this, this.#sem);
  }

  _unbind() {
    this.#sem = NEVER;
    setFire(this, NEVER);
  }

  _enabled() {
    return this.#sem[0] !== 0;
  }


  // Internal: a tracer is attached. args[from] is the callback, the rest its
  // arguments.
  _fireNow(args, from) {
    const cb = args[from];
    const extra = args.length - from - 1;
    let ret;
    if (extra === 0) ret = cb.call(this);
    else if (extra === 1) ret = cb.call(this, args[from + 1]);
    else ret = cb.apply(this, Array.prototype.slice.call(args, from + 1));
    if (!Array.isArray(ret)) return undefined;
    this._fireValues(ret);
    return true;
  }

  // Internal: fires with `values` as the probe's arguments, no callback (for
  // nodetrace's own hooks, lib/http/hook.js, where the callback and its
  // arguments object cost a request more than the rest of the firing). The
  // caller has checked _enabled().
  _fireValues(values) {
    const kinds = this.#kinds;
    switch (kinds.length) {
      case 0: addon.fire(this.#site); break;
      case 1: addon.fire(this.#site, toArg(kinds[0], values[0])); break;
      case 2: addon.fire(this.#site, toArg(kinds[0], values[0]), toArg(kinds[1], values[1])); break;
      default: {
        const vals = new Array(kinds.length);
        for (let i = 0; i < kinds.length; i++) vals[i] = toArg(kinds[i], values[i]);
        addon.fire(this.#site, ...vals);
      }
    }
  }
}

class DTraceProvider {
  #name;
  #module;
  #probes = new Map();    // name -> { probe, types }, in addProbe order
  #live = [];             // probes bound by the last enable()
  #enabled = false;

  constructor(name, module) {
    if (typeof name !== 'string') throw new TypeError('Must give provider name as argument');
    checkName('provider name', name);
    if (module !== undefined && typeof module !== 'string') throw new TypeError('Must give module name as argument');
    this.#name = name;
    this.#module = module === undefined ? null : module;
  }

  addProbe(name, ...types) {
    const probeName = String(name);
    checkName('probe name', probeName);
    const probe = new DTraceProbe(this, probeName, types.map(String));
    // Like libusdt: a duplicate name is refused, its probe object never fires.
    if (!this.#probes.has(probeName)) this.#probes.set(probeName, { probe, types: types.map(String) });
    this[probeName] = probe;
    return probe;
  }

  removeProbe(probe) {
    for (const [name, entry] of this.#probes) {
      if (entry.probe === probe) {
        this.#probes.delete(name);
        if (this[name] === probe) delete this[name];
        probe._unbind();
        this.#live = this.#live.filter((p) => p !== probe);
        return true;
      }
    }
    throw new Error(`failed to remove probe ${this.#name}:${this.#module}:${probe && probe.name}`);
  }

  enable() {
    if (this.#enabled) return;   // libusdt: "already enabled", not fatal
    if (this.#probes.size === 0) throw new Error('no probes defined');
    const entries = [...this.#probes.values()];
    const lib = library.load(this.#name, entries.map((e) => [e.probe.name, ...e.types]), this.#module);
    this.#enabled = true;
    this.#live = entries.map((e) => e.probe);
    if (!lib) return;            // no-op probes; library.load() warned why
    addon = require('./native').loadAddon().addon;
    const slotOf = new Map(lib.def.probes.map((p, i) => [p.name, i]));
    for (const probe of this.#live) {
      const slot = slotOf.get(probe.name);
      probe._bind(lib.semaphores, slot, lib.base + slot);
    }
  }

  disable() {
    for (const probe of this.#live) probe._unbind();
    this.#live = [];
    this.#enabled = false;
  }

  fire(probeName, cb) {
    if (typeof probeName !== 'string') throw new TypeError('Must give probe name as first argument');
    if (typeof cb !== 'function') throw new TypeError('Must give probe value callback as second argument');
    const entry = this.#probes.get(probeName);
    if (!entry || this[probeName] !== entry.probe) return undefined;
    if (entry.probe._enabled()) entry.probe._fireNow(arguments, 1);
    return true;
  }
}

function createDTraceProvider(name, module) {
  return arguments.length >= 2 ? new DTraceProvider(name, module) : new DTraceProvider(name);
}

module.exports = { DTraceProvider, DTraceProbe, createDTraceProvider, toArg };
