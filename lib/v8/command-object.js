'use strict';
// `profile -c`: the object that will carry V8 in a command not started yet,
// whose metadata gives the program its SHARED argument before bpftrace runs
// it: the executable itself (official builds), or the libnode.so it links
// (Debian's and Ubuntu's builds), found where the dynamic loader would look
// (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, then the system's directories; not
// ld.so.cache). Files are read, never run, through the ELF readers' safe
// opening (regular files only, bounded). A guess that is wrong costs no
// wrong name: once the command runs, the V8 it really maps is checked
// (lib/profile/js-frames.js openCommandJsFrames).
const fs = require('fs');
const path = require('path');
const { elfDynamic } = require('../symbolize');
const { readMetadata } = require('./metadata');

const LIBNODE = /^libnode\.so(\.\d+)*$/;
// The multiarch directory of this machine's architecture (Debian, Ubuntu).
const TRIPLETS = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/**
 * Pure: where the loader looks for a library the executable at `origin`
 * (its directory, links resolved) needs, in order. A directory with a
 * dynamic string token other than $ORIGIN ($LIB, $PLATFORM) is left out.
 * `systemRoot`: prefixed to the system's directories (tests: a build's root).
 */
function librarySearchPath({ rpath = [], runpath = [], origin, ldLibraryPath = '', arch = process.arch, systemRoot = '' }) {
  const expand = (dirs) => dirs.map((d) => d.replace(/\$(ORIGIN\b|\{ORIGIN\})/g, origin)).filter((d) => !d.includes('$') && path.isAbsolute(d));
  const triplet = TRIPLETS[arch];
  return [
    ...(runpath.length ? [] : expand(rpath)),
    ...expand(ldLibraryPath.split(/[:;]/).filter(Boolean)),
    ...expand(runpath),
    ...[...(triplet ? [`/lib/${triplet}`, `/usr/lib/${triplet}`] : []), '/lib64', '/usr/lib64', '/lib', '/usr/lib', '/usr/local/lib']
      .map((d) => systemRoot + d),
  ];
}

/**
 * -> { file, symbols } (the file whose metadata names the command's V8) or
 * null. `root`: where the system's directories are (tests: a build's root).
 */
function commandV8Object(binary, { env = process.env, root = '' } = {}) {
  const own = readMetadata(binary);
  if (own) return { file: binary, symbols: own.symbols };
  const dyn = elfDynamic(binary, { followLinks: true });
  const needed = dyn ? dyn.needed.find((n) => LIBNODE.test(n)) : undefined;
  if (!needed) return null;
  let origin;
  try { origin = path.dirname(fs.realpathSync(binary)); } catch { return null; }
  const dirs = librarySearchPath({ ...dyn, origin, ldLibraryPath: env.LD_LIBRARY_PATH || '', systemRoot: root });
  const seen = new Set();
  for (const dir of dirs) {
    const file = path.join(dir, needed);
    if (seen.has(file)) continue;
    seen.add(file);
    const found = readMetadata(file);
    if (found) return { file, symbols: found.symbols };
    if (fs.existsSync(file)) return null;   // the loader stops at the first it finds
  }
  return null;
}

module.exports = { commandV8Object, librarySearchPath };
