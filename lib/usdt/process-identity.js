'use strict';
// Who a traced process is, as the operator knows it: its host PID (the
// kernel's, never what it claims), its user, its PID inside its own PID
// namespace and its container. Commands that trace many processes at once
// (snoop '*', http NAME) keep them apart by this, and name the owner of a
// probe library they skip.
const fs = require('fs');
const proc = require('../proc');

// The container a process runs in: { id, name } or null. The container
// identity module (lib/proc/container.js, issue 23) answers this where it
// has landed; until then no container is named, and a process in one is
// told apart by its host PID and its PID inside.
function containerOf() {
  return null;
}

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
 * -> { pid, uid, user, inside (its PID in its own PID namespace, or null when
 *    that is the host's), container ({ id, name } or null) }; read once per
 *    process by the caller.
 */
function identify(pid) {
  const uid = proc.stat.uidOf(pid);
  const ns = proc.namespacePids(pid);
  return {
    pid,
    uid,
    user: uid === null ? null : userName(uid),
    inside: ns.length > 1 ? ns[ns.length - 1] : null,
    container: containerOf(pid),
  };
}

/** "PID 4242 (mallory)", "PID 27878 (root; PID 1 in container web-1)", for a person. */
function describeIdentity(id) {
  const who = id.user || (id.uid === null ? 'gone' : `uid ${id.uid}`);
  const where = id.container ? `PID ${id.inside === null ? '?' : id.inside} in container ${id.container.name || id.container.id}`
    : id.inside !== null ? `PID ${id.inside} inside its PID namespace` : '';
  return `PID ${id.pid} (${who}${where ? `; ${where}` : ''})`;
}

/** The same, for JSON: { pid, uid, user, pid_inside, container }. */
function identityJSON(id) {
  return { pid: id.pid, uid: id.uid, user: id.user, pid_inside: id.inside, container: id.container };
}

module.exports = { identify, describeIdentity, identityJSON, userName, ownerText, fileOwnerText, containerOf };
