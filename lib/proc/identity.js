'use strict';
// Who a traced process is, as the operator knows it: its host PID (the
// kernel's, never what it claims), its user, its PID inside its own PID
// namespace and its container. Commands that trace many processes at once
// (snoop '*', http NAME) keep them apart by this, and name the owner of a
// probe library they skip.
const fs = require('fs');
const { uidOf } = require('./stat');
const { identityOf } = require('./container');
const { userNames } = require('./users');

// The account name of a uid, or null (containers run uids the host does not list).
function userName(uid) {
  return userNames().get(uid) || null;
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
  const uid = uidOf(pid);
  return { ...identityOf(pid), uid, user: uid === null ? null : userName(uid) };
}

module.exports = { identify, userName, ownerText, fileOwnerText };
