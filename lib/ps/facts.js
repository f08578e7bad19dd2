'use strict';
// What `nodetrace ps` (and `doctor -p`) know of one Node process, read
// cheaply from the host: who it is (lib/proc/container.js), its user, its
// Node version and which of nodetrace's probe points its node or libnode
// defines (read once per file, through /proc/PID/map_files: a container's
// file is its own), its perf map (opened inside its root, then closed), and
// which of nodetrace's probe libraries it maps (snoop's bunyan provider,
// http's hook). Verdicts from these facts are pure (./verdicts.js).
const fs = require('fs');
const proc = require('../proc');
const { identityOf } = require('../proc/container');
const { userNames } = require('../proc/users');
const { parseMaps, findElfSymbols, openPerfMap } = require('../symbolize');
const { codeObjects, mapFile } = require('../proc/code-objects');
const { nodeVersionOf, NAPI, LIBUV } = require('../latency/probe-points');
const { FIXED: GC_FUNCTIONS } = require('../gc/v8-functions');
const libraries = require('../probe-libraries');
const { BUNYAN_PROVIDER } = require('../usdt');
const { HTTP_PROVIDER } = require('../http/probes');
const { locateTls } = require('../http/tls-object');
const { readMetadata, layoutFrom } = require('../v8/metadata');

const LATENCY_SYMBOLS = [...NAPI, LIBUV[0]];
const GC_SYMBOL = GC_FUNCTIONS['mark-compact'];
const ASYNC_CALLBACK = require('../async/wrap-functions').FUNCTIONS.CALLBACK;

// The node executable or libnode of a process, as it maps them: the
// objects that define N-API, the thread pool and V8, read once per file.
function binaryFacts(pid, maps, exe, cache) {
  const facts = { version: null, latency: false, gc: false, async: false, v8Frames: false };
  for (const o of codeObjects(maps, exe).filter((x) => x.path === exe || /\/libnode\.so/.test(x.path))) {
    const key = `${o.dev}:${o.inode}`;
    if (!cache.has(key)) {
      const file = mapFile(pid, o);
      const found = findElfSymbols(file, [...LATENCY_SYMBOLS, GC_SYMBOL, ASYNC_CALLBACK], { followLinks: true });
      const has = (n) => Boolean(found && found.found.has(n));
      // V8's postmortem metadata, of a version nodetrace knows: JavaScript frames named with no flag.
      const md = readMetadata(file);
      cache.set(key, {
        version: has(NAPI[0]) ? nodeVersionOf(file) : null,
        latency: LATENCY_SYMBOLS.every(has),
        gc: has(GC_SYMBOL),
        async: has(ASYNC_CALLBACK),
        v8Frames: Boolean(md && !layoutFrom(md.symbols).unsupported),
      });
    }
    const f = cache.get(key);
    facts.version = facts.version || f.version;
    facts.latency = facts.latency || f.latency;
    facts.gc = facts.gc || f.gc;
    facts.async = facts.async || f.async;
    facts.v8Frames = facts.v8Frames || f.v8Frames;
  }
  return facts;
}

function perfMapOf(pid) {
  const pm = openPerfMap(pid);
  if (!pm) return { path: null, refused: null };
  if (pm.fd !== undefined) fs.closeSync(pm.fd);
  return { path: pm.path, refused: pm.refused || null };
}

/**
 * The facts of one Node process, or null when it is gone.
 * @param {number} pid
 * @param {object} [o] { cache: Map shared across processes (files read once),
 *   users: uid -> name, gcore: whether gcore is installed }
 */
function gather(pid, { cache = new Map(), users = userNames(), gcore = true } = {}) {
  const text = proc.readProcFile(pid, 'maps');
  if (text === null) return null;
  const maps = parseMaps(text);
  const exe = proc.executableName(pid);
  const uid = proc.stat.uidOf(pid);
  return {
    pid,
    who: identityOf(pid),
    uid,
    user: uid === null ? null : users.get(uid) || String(uid),
    exe,
    command: proc.commandLine(pid).join(' '),
    ...binaryFacts(pid, maps, exe, cache),
    perfMap: perfMapOf(pid),
    snoop: libraries.librariesOf(pid, BUNYAN_PROVIDER).length > 0,
    http: libraries.librariesOf(pid, HTTP_PROVIDER).length > 0,
    // Where `http -p` reads HTTPS off the wire: the object defining OpenSSL's SSL_read/SSL_write.
    tls: locateTls({ pid, maps, exePath: exe || '', findSymbols: (file, names) => findElfSymbols(file, names, { followLinks: true }) }),
    gcore,
  };
}

/** Every Node process on this host but nodetrace and its ancestors, in PID order. */
function nodeProcesses() {
  const skip = proc.ancestors();
  skip.add(process.pid);
  return proc.allPids().filter((pid) => !skip.has(pid) && proc.looksLikeNode(pid)).sort((a, b) => a - b);
}

module.exports = { gather, nodeProcesses, userNames };
