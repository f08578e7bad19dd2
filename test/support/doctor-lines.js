'use strict';
// `nodetrace doctor`'s report, read back by the tests that run it in a
// container or a pod (test/kubernetes-pod.test.js, test/image/image.test.js).

/** Pure: doctor's lines by check name -> { name: { mark, detail } }. */
function doctorLines(text) {
  const lines = {};
  for (const line of String(text).split('\n')) {
    const m = /^(ok|warn|FAIL)\s+(\S+)\s+(.*)$/.exec(line);
    if (m) lines[m[2]] = { mark: m[1], detail: m[3] };
  }
  return lines;
}

module.exports = { doctorLines };
