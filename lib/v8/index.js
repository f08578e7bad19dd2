'use strict';
// Naming JavaScript frames from V8's own postmortem metadata, with no flag
// on the target (docs/v8-frames.md). One module per job:
//   metadata.js   the v8dbg_* constants and V8's version -> a layout (pure)
//   scope-info.js where a function's name and position are in its ScopeInfo, per V8 version
//   memory.js     read(address, length) over /proc/PID/mem, saved ranges, recording
//   core-file.js  an ELF core: memory, threads' registers, mapped files
//   heap.js       tagged words, Smis, instance types checked through maps
//   strings.js    V8 strings of every representation, bounded
//   script.js     a Script's name, line and column of a position, source text
//   names.js      names made safe (bounded, control characters escaped)
//   namer.js      JSFunction or SharedFunctionInfo -> name (file:line:column)
//   walk.js       a frame-pointer walk, each frame native, JavaScript or V8's
//   registers.js  a stopped process's registers (gdb)
//   process.js    a live, stopped process opened for walks
//   core.js       a core file opened for walks
//   inlining.js   the functions V8 inlined into a frame's code, read back from that code
//   dispatch-table.js where V8 13-14 keep a function's code (leap-tiering's JSDispatchTable)
//   command-object.js profile -c: the object that will carry V8 in a command not started yet
const { readMetadata, layoutFrom } = require('./metadata');
const { ProcessMemory, SnapshotMemory, RecordingMemory, RangeMemory } = require('./memory');
const { V8Namer, frameText } = require('./namer');
const { walkStack, nativeClassifier } = require('./walk');
const { registersOf } = require('./registers');
const { openProcess } = require('./process');
const { openCoreForWalk } = require('./core');

module.exports = {
  readMetadata, layoutFrom, ProcessMemory, SnapshotMemory, RecordingMemory, RangeMemory,
  V8Namer, frameText, walkStack, nativeClassifier, registersOf, openProcess, openCoreForWalk,
};
