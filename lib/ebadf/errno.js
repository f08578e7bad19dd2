'use strict';
// errno names -> numbers, as the Linux kernel returns them (x86-64 and every
// architecture using asm-generic/errno*.h). bpftrace sees the raw kernel
// value (-9), so the program is given numbers from this fixed table; D is
// given the names, which DTrace's errno.d defines on every platform.
const { UsageError } = require('../errors');

const LINUX_ERRNO = Object.freeze({
  EPERM: 1, ENOENT: 2, ESRCH: 3, EINTR: 4, EIO: 5, ENXIO: 6, E2BIG: 7, ENOEXEC: 8, EBADF: 9,
  ECHILD: 10, EAGAIN: 11, ENOMEM: 12, EACCES: 13, EFAULT: 14, ENOTBLK: 15, EBUSY: 16, EEXIST: 17,
  EXDEV: 18, ENODEV: 19, ENOTDIR: 20, EISDIR: 21, EINVAL: 22, ENFILE: 23, EMFILE: 24, ENOTTY: 25,
  ETXTBSY: 26, EFBIG: 27, ENOSPC: 28, ESPIPE: 29, EROFS: 30, EMLINK: 31, EPIPE: 32, EDOM: 33,
  ERANGE: 34, EDEADLK: 35, ENAMETOOLONG: 36, ENOLCK: 37, ENOSYS: 38, ENOTEMPTY: 39, ELOOP: 40,
  ENOMSG: 42, EIDRM: 43, ECHRNG: 44, EL2NSYNC: 45, EL3HLT: 46, EL3RST: 47, ELNRNG: 48, EUNATCH: 49,
  ENOCSI: 50, EL2HLT: 51, EBADE: 52, EBADR: 53, EXFULL: 54, ENOANO: 55, EBADRQC: 56, EBADSLT: 57,
  EBFONT: 59, ENOSTR: 60, ENODATA: 61, ETIME: 62, ENOSR: 63, ENONET: 64, ENOPKG: 65, EREMOTE: 66,
  ENOLINK: 67, EADV: 68, ESRMNT: 69, ECOMM: 70, EPROTO: 71, EMULTIHOP: 72, EDOTDOT: 73, EBADMSG: 74,
  EOVERFLOW: 75, ENOTUNIQ: 76, EBADFD: 77, EREMCHG: 78, ELIBACC: 79, ELIBBAD: 80, ELIBSCN: 81,
  ELIBMAX: 82, ELIBEXEC: 83, EILSEQ: 84, ERESTART: 85, ESTRPIPE: 86, EUSERS: 87, ENOTSOCK: 88,
  EDESTADDRREQ: 89, EMSGSIZE: 90, EPROTOTYPE: 91, ENOPROTOOPT: 92, EPROTONOSUPPORT: 93,
  ESOCKTNOSUPPORT: 94, EOPNOTSUPP: 95, EPFNOSUPPORT: 96, EAFNOSUPPORT: 97, EADDRINUSE: 98,
  EADDRNOTAVAIL: 99, ENETDOWN: 100, ENETUNREACH: 101, ENETRESET: 102, ECONNABORTED: 103,
  ECONNRESET: 104, ENOBUFS: 105, EISCONN: 106, ENOTCONN: 107, ESHUTDOWN: 108, ETOOMANYREFS: 109,
  ETIMEDOUT: 110, ECONNREFUSED: 111, EHOSTDOWN: 112, EHOSTUNREACH: 113, EALREADY: 114,
  EINPROGRESS: 115, ESTALE: 116, EUCLEAN: 117, ENOTNAM: 118, ENAVAIL: 119, EISNAM: 120,
  EREMOTEIO: 121, EDQUOT: 122, ENOMEDIUM: 123, EMEDIUMTYPE: 124, ECANCELED: 125, ENOKEY: 126,
  EKEYEXPIRED: 127, EKEYREVOKED: 128, EKEYREJECTED: 129, EOWNERDEAD: 130, ENOTRECOVERABLE: 131,
  ERFKILL: 132, EHWPOISON: 133,
});

// Other spellings of the same numbers; the canonical name is reported.
const ALIASES = Object.freeze({ EWOULDBLOCK: 'EAGAIN', EDEADLOCK: 'EDEADLK', ENOTSUP: 'EOPNOTSUPP' });

const BY_NUMBER = new Map(Object.entries(LINUX_ERRNO).map(([name, n]) => [n, name]));

const HOW_TO_LIST = 'Valid names are the E* constants of errno(3), e.g. EBADF, EPIPE, EIO, ENOENT; '
  + 'list them with `man 3 errno` or `errno -l` (moreutils).';

// The human text for a number, e.g. "bad file descriptor", where Node knows it.
function describeErrno(number) {
  try {
    const entry = require('util').getSystemErrorMap().get(-number);
    if (entry && process.platform === 'linux') return entry[1];
  } catch { /* older Node */ }
  return '';
}

function closest(word, candidates) {
  let best = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestD) { bestD = d; best = c; }
  }
  return bestD <= (word.length >= 4 ? 2 : 1) ? best : null;
}

// Optimal string alignment distance: a swap of two neighbours costs 1.
function editDistance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j],
        d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * "EBADF,EPIPE" (or numbers: "9,32") -> [{ name: 'EBADF', number: 9 }, ...],
 * deduplicated, in the order given. Throws a UsageError naming the bad entry.
 */
function parseErrnoList(text, flag = '--errno') {
  const items = String(text).split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`${flag} expects errno names, e.g. ${flag} EBADF,EPIPE.`, HOW_TO_LIST);
  const out = [];
  for (const item of items) {
    let name;
    if (/^[0-9]+$/.test(item)) {
      name = BY_NUMBER.get(Number(item));
      if (!name) throw new UsageError(`${flag}: ${item} is not a Linux errno number.`, HOW_TO_LIST);
    } else {
      const upper = item.toUpperCase();
      name = ALIASES[upper] || (Object.prototype.hasOwnProperty.call(LINUX_ERRNO, upper) ? upper : null);
      if (!name) {
        const guess = /^[A-Za-z0-9_]{1,32}$/.test(item) ? closest(upper, Object.keys(LINUX_ERRNO)) : null;
        const shown = /^[\x20-\x7e]{1,40}$/.test(item) ? `"${item}"` : 'that name';
        throw new UsageError(`${flag}: unknown errno name ${shown}${guess ? ` (did you mean ${guess}?)` : ''}.`, HOW_TO_LIST);
      }
    }
    if (!out.some((e) => e.name === name)) out.push({ name, number: LINUX_ERRNO[name] });
  }
  return out;
}

module.exports = { LINUX_ERRNO, ALIASES, parseErrnoList, describeErrno, closest, editDistance, HOW_TO_LIST };
