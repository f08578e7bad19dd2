'use strict';
// The profile as pprof's profile.proto, gzip'd: what `go tool pprof`,
// Pyroscope and speedscope open. Encoded by pprof-format (DataDog's pure
// JavaScript encoder and decoder, also used by their Node profiler), not
// written by hand. Pure but for gzip.
const zlib = require('zlib');
const { Profile, Sample, Location, Line, Function: PFunction, ValueType, Label, StringTable } = require('pprof-format');

// "hotSpin /app/hot.js:3:17" -> { name, file, line }; other names whole.
function splitJsName(f) {
  const m = f.category === 'js' ? /^(.*) (\S+?):(\d+):(\d+)$/.exec(f.name) : null;
  return m ? { name: m[1], file: m[2], line: Number(m[3]) } : { name: f.name, file: '', line: 0 };
}

/**
 * A Profile (pprof-format) from nameStacks()'s output.
 * sample types: samples/count and cpu/nanoseconds (a sample stands for 1/hz s);
 * or, with offCpu (counts are microseconds blocked), off-cpu/nanoseconds;
 * each sample carries labels thread (its comm and role) and tid.
 */
function buildPprof(named, { pid, hz, seconds, offCpu = false }) {
  const st = new StringTable();
  const functions = [];
  const locations = [];
  const functionIds = new Map();
  const locationIds = new Map();
  // One function however it ran (its id by its name); one location per
  // frame with the functions inlined there, as pprof keeps inlining: the
  // location's lines innermost first, its last the frame's own function.
  const functionFor = (f) => {
    const key = f.category + '\0' + f.name;
    if (functionIds.has(key)) return functionIds.get(key);
    const id = functions.length + 1;
    const { name, file, line } = splitJsName(f);
    functions.push(new PFunction({ id, name: st.dedup(name), systemName: st.dedup(f.name), filename: st.dedup(file || `[${f.category}]`), startLine: line }));
    functionIds.set(key, id);
    return id;
  };
  const locationFor = (group) => {
    const ids = group.map(functionFor);
    const key = ids.join(',');
    if (locationIds.has(key)) return locationIds.get(key);
    const id = locations.length + 1;
    locations.push(new Location({ id,
      line: group.map((f, i) => new Line({ functionId: ids[i], line: splitJsName(f).line })).reverse() }));
    locationIds.set(key, id);
    return id;
  };
  // Root first: a frame, then the functions inlined where it ran (nameStacks puts them above it).
  const locationsOf = (frames) => {
    const groups = [];
    for (const f of frames) {
      if (f.inlined && groups.length) groups[groups.length - 1].push(f);
      else groups.push([f]);
    }
    return groups.map(locationFor);
  };
  const periodNs = offCpu ? 1000 : Math.round(1e9 / hz);
  const cpu = new ValueType({ type: st.dedup(offCpu ? 'off-cpu' : 'cpu'), unit: st.dedup('nanoseconds') });
  const samples = named.stacks.map((s) => new Sample({
    // pprof lists a sample's locations leaf first.
    locationId: locationsOf(s.frames).reverse(),
    value: offCpu ? [s.count * periodNs] : [s.count, s.count * periodNs],
    label: [
      new Label({ key: st.dedup('thread'), str: st.dedup(`${s.comm} (${s.thread || (s.tid === pid ? 'main thread' : 'thread')})`) }),
      new Label({ key: st.dedup('tid'), num: s.tid }),
    ],
  }));
  return new Profile({
    sampleType: offCpu ? [cpu] : [new ValueType({ type: st.dedup('samples'), unit: st.dedup('count') }), cpu],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: st,
    periodType: cpu,
    period: periodNs,
    durationNanos: Math.round((seconds || 0) * 1e9),
    timeNanos: BigInt(Date.now()) * 1000000n,
    comment: [st.dedup(offCpu ? `nodetrace profile --off-cpu of PID ${pid}` : `nodetrace profile of PID ${pid} at ${hz} Hz`)],
  });
}

function encodePprof(named, meta) {
  return zlib.gzipSync(Buffer.from(buildPprof(named, meta).encode()));
}

/** gzip'd (or plain) profile.proto -> Profile, by the same package. */
function decodePprof(buf) {
  const raw = buf[0] === 0x1f && buf[1] === 0x8b ? zlib.gunzipSync(buf) : buf;
  return Profile.decode(raw);
}

module.exports = { buildPprof, encodePprof, decodePprof, splitJsName };
