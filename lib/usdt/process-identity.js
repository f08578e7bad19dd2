'use strict';
// Who a traced process is, as the operator knows it: its host PID (the
// kernel's, never what it claims), its user, its PID inside its own PID
// namespace and its container. Commands that trace many processes at once
// (snoop '*', http NAME) keep them apart by this, and name the owner of a
// probe library they skip.
const fs = require('fs');
const proc = require('../proc');
const { identityOf } = require('../proc/container');

let accounts = null;   // { stamp, names: Map uid -> name }

// The account name of a uid, from /etc/passwd (read again when it changes),
// or null (containers run uids it does not list).
function userName(uid) {
  let stamp = null;
  try {
    const st = fs.statSync('/etc/passwd');
    stamp = `${st.ino}:${st.mtimeMs}:${st.size}`;
  } catch (err) { /* none */ }
  if (!accounts || accounts.stamp !== stamp) {
    const names = new Map();
    try {
      for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const f = line.split(':');
        if (f.length >= 7 && /^[0-9]+$/.test(f[2]) && !names.has(Number(f[2]))) names.set(Number(f[2]), f[0]);
      }
    } catch (err) { /* none */ }
    accounts = { stamp, names };
  }
  return accounts.names.get(uid) || null;
}

/** "mallory (uid 1001)", or "uid 1001" for an account /etc/passwd does not list. */
function ownerText(uid) {
  if (uid === null || uid === undefined || uid < 0) return 'an unknown user';
  const name = userName(uid);
  return name ? `${name} (uid ${uid})` : `uid ${uid}`;
}

/** The owner of a file, as ownerText() says it. */
function fileOwnerText(file) {
  try {
    return ownerText(fs.statSync(file).uid);
  } catch (err) {
    return 'an unknown user';
  }
}

/**
 * Who a traced process is (lib/proc/container.js identityOf: pid, pidInside,
 * container), with its user: -> { pid, pidInside, container, uid, user };
 * read once per process by the caller. Said and put in JSON by
 * lib/proc/container.js describeIdentity and identityJson.
 */
function identify(pid) {
  const uid = proc.stat.uidOf(pid);
  return { ...identityOf(pid), uid, user: uid === null ? null : userName(uid) };
}

module.exports = { identify, userName, ownerText, fileOwnerText };
