'use strict';
// The peak resident size (VmHWM, kB) of a running process, sampled every
// 50 ms until it exits: what the hostile-input tests hold nodetrace's
// memory to.
const fs = require('fs');

function watchPeak(pid) {
  let peak = 0;
  const t = setInterval(() => {
    try {
      const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch { /* exited */ }
  }, 50);
  return { stop: () => { clearInterval(t); return peak; } };
}

module.exports = { watchPeak };
