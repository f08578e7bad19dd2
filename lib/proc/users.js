'use strict';
// This host's account names, from /etc/passwd: uid -> name. A container's
// users are numbers here (its /etc/passwd is its own and is never read).
const fs = require('fs');

/** Pure: the uid -> name map of an /etc/passwd text (the first name of a uid wins). */
function parsePasswd(text) {
  const names = new Map();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length >= 7 && /^[0-9]+$/.test(f[2]) && !names.has(Number(f[2]))) names.set(Number(f[2]), f[0]);
  }
  return names;
}

let cached = null;   // { stamp, names }

/** uid -> name of this host, read again only when /etc/passwd changed; empty when unreadable. */
function userNames() {
  let stamp = null;
  try {
    const st = fs.statSync('/etc/passwd');
    stamp = `${st.ino}:${st.mtimeMs}:${st.size}`;
  } catch { /* none */ }
  if (!cached || cached.stamp !== stamp) {
    let text = '';
    try { text = fs.readFileSync('/etc/passwd', 'utf8'); } catch { /* none */ }
    cached = { stamp, names: parsePasswd(text) };
  }
  return cached.names;
}

module.exports = { userNames, parsePasswd };
