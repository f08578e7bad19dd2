'use strict';
// Reads what the ebadf scripts print, as it arrives:
//   HIT pid=4242 tid=4242 errno=9 ns=674037839680 probe=tracepoint:syscalls:sys_exit_close comm=\x6e\x6f\x64\x65\x00...
//   (the thread's name, which it chooses, newlines and all: its 16 bytes as
//   bpftrace's %rx prints them, or in the D scripts two words, comm=65646f6e 0;
//   lib/tracer/name-words.js)
//   <stack frames, one per line: 0x7f.. (raw; bpftrace 0.23+ in its raw stack
//    mode prints 7f.. and ends with a 0 frame) or sym+off or module`sym+0x1a (DTrace)>
//   END pid=4242
// and, when bpftrace exits, its maps (@stopped_ns[PID]: NS, @hits: N).
// Pure: lines in (lib/tracer/session.js cuts them), events out.
const { rawFrame } = require('../tracer/stack-frames');
const { nameFromEscapedBytes, nameFromWords } = require('../tracer/name-words');

// The name after comm=, or null where it is not in either form.
function commName(text) {
  const name = nameFromEscapedBytes(text) || nameFromWords(text.split(' '));
  return name ? name.text : null;
}

function parseHitLine(line) {
  if (!line.startsWith('HIT ')) return null;
  const commAt = line.indexOf(' comm=');
  if (commAt < 0) return null;
  const fields = {};
  for (const kv of line.slice(4, commAt).trim().split(/\s+/)) {
    const eq = kv.indexOf('=');
    if (eq > 0) fields[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  if (!/^[0-9]+$/.test(fields.pid || '') || !/^[0-9]+$/.test(fields.errno || '')) return null;
  let syscall = fields.syscall || '';
  if (!syscall && fields.probe) syscall = fields.probe.replace(/^.*:sys_exit_/, '');
  return {
    pid: Number(fields.pid),
    tid: Number(fields.tid || fields.pid),
    errno: Number(fields.errno),
    kernelNs: fields.ns !== undefined ? BigInt(fields.ns) : null,
    wallNs: fields.wall !== undefined ? BigInt(fields.wall) : null,
    syscall,
    comm: commName(line.slice(commAt + ' comm='.length)) ?? '?',
  };
}

class OutputParser {
  /** @param {function(object)} onEvent receives {type: 'hit'|'stack'|'stopped'|'line', ...} */
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.current = null; // the hit whose stack is being read
  }

  end() {
    if (this.current) {
      this.onEvent({ type: 'stack', pid: this.current.pid, frames: this.current.frames, truncated: true });
      this.current = null;
    }
  }

  line(line) {
    const hit = parseHitLine(line);
    if (hit) {
      if (this.current) this.onEvent({ type: 'stack', pid: this.current.pid, frames: this.current.frames, truncated: true });
      this.current = { pid: hit.pid, frames: [] };
      this.onEvent({ type: 'hit', hit });
      return;
    }
    if (this.current) {
      const end = /^END pid=([0-9]+)$/.exec(line);
      if (end) {
        this.onEvent({ type: 'stack', pid: this.current.pid, frames: this.current.frames });
        this.current = null;
      } else if (line.trim()) {
        const frame = rawFrame(line.trim());
        if (frame !== null) this.current.frames.push(frame);
      }
      return;
    }
    const stopped = /^@stopped_ns\[([0-9]+)\]: ([0-9]+)$/.exec(line);
    if (stopped) {
      this.onEvent({ type: 'stopped', pid: Number(stopped[1]), kernelNs: BigInt(stopped[2]) });
      return;
    }
    if (line.trim()) this.onEvent({ type: 'line', line });
  }
}

module.exports = { OutputParser, parseHitLine };
