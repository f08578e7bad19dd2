'use strict';
// What a user calls a kind of thread-pool work, from what the tracer keyed it
// by (a demangled C++ function, a libuv function, or the code the latency
// program gives an fs request). Pure. Add-ons' own functions keep their
// names: those are what their authors call them.
//
// Node's JavaScript API -> the work it puts on the pool:
//   fs.*             uv_fs_* requests: uv__fs_work, keyed 0x100 + uv_fs_type;
//                    Node 26's fs.readFile: node::fs::ReadFileJob
//   dns.lookup       uv_getaddrinfo: uv__getaddrinfo_work
//   dns.lookupService uv_getnameinfo: uv__getnameinfo_work
//   zlib.*           CompressionStream<...Context>::DoThreadPoolWork()
//   crypto.*         CryptoJob<...Traits> (Node 18-24: named by ::Run, the
//                    caller of ScheduleWork; Node 26: by DoThreadPoolWork)

// uv_fs_type (uv.h; libuv 1.x only appends to it) -> Node's fs function.
const FS_TYPES = [
  'fs.custom', 'fs.open', 'fs.close', 'fs.read', 'fs.write', 'fs.sendfile', 'fs.stat', 'fs.lstat', 'fs.fstat',
  'fs.ftruncate', 'fs.utimes', 'fs.futimes', 'fs.access', 'fs.chmod', 'fs.fchmod', 'fs.fsync', 'fs.fdatasync',
  'fs.unlink', 'fs.rmdir', 'fs.mkdir', 'fs.mkdtemp', 'fs.rename', 'fs.readdir', 'fs.link', 'fs.symlink',
  'fs.readlink', 'fs.chown', 'fs.fchown', 'fs.realpath', 'fs.copyFile', 'fs.lchown', 'fs.opendir', 'dir.read',
  'dir.close', 'fs.statfs', 'fs.mkstemp', 'fs.lutimes',
];
// And libuv's own names for them, for the symbol a name stands for (--json).
const UV_FS_TYPES = [
  'CUSTOM', 'OPEN', 'CLOSE', 'READ', 'WRITE', 'SENDFILE', 'STAT', 'LSTAT', 'FSTAT', 'FTRUNCATE', 'UTIME', 'FUTIME',
  'ACCESS', 'CHMOD', 'FCHMOD', 'FSYNC', 'FDATASYNC', 'UNLINK', 'RMDIR', 'MKDIR', 'MKDTEMP', 'RENAME', 'SCANDIR', 'LINK',
  'SYMLINK', 'READLINK', 'CHOWN', 'FCHOWN', 'REALPATH', 'COPYFILE', 'LCHOWN', 'OPENDIR', 'READDIR', 'CLOSEDIR', 'STATFS',
  'MKSTEMP', 'LUTIME',
];
const FS_CODE_BASE = 0x100;

const LIBUV_WORK = {
  uv__getaddrinfo_work: 'dns.lookup',
  uv__getnameinfo_work: 'dns.lookupService',
  uv__random_work: 'uv_random',
};

// CryptoJob<node::crypto::XTraits> -> the crypto API that runs it.
const CRYPTO_TRAITS = {
  PBKDF2: 'crypto.pbkdf2', Scrypt: 'crypto.scrypt', HKDF: 'crypto.hkdf', RandomBytes: 'crypto.randomBytes',
  RandomPrime: 'crypto.generatePrime', CheckPrime: 'crypto.checkPrime', Hash: 'crypto.hash', Hmac: 'crypto.subtle (HMAC)',
  SecretKeyGen: 'crypto.generateKey', RsaKeyGen: 'crypto.generateKeyPair', RSAKeyExport: 'crypto.subtle.exportKey',
  NidKeyPairGen: 'crypto.generateKeyPair', EcKeyGen: 'crypto.generateKeyPair', DsaKeyGen: 'crypto.generateKeyPair',
  DhKeyGen: 'crypto.generateKeyPair', DHBits: 'crypto.diffieHellman', ECDHBits: 'crypto.diffieHellman',
  Sign: 'crypto.sign/verify', AESCipher: 'crypto.subtle (AES)', RSACipher: 'crypto.subtle (RSA)',
  Argon2: 'crypto.argon2', KEM: 'crypto.subtle (KEM)',
};

// CompressionStream<node::(anonymous namespace)::XContext> -> zlib's API family.
const ZLIB_CONTEXTS = {
  ZlibContext: 'zlib', BrotliEncoderContext: 'zlib.brotliCompress', BrotliDecoderContext: 'zlib.brotliDecompress',
  ZstdCompressContext: 'zlib.zstdCompress', ZstdDecompressContext: 'zlib.zstdDecompress',
};

/** The fs code of a key ('0x103' -> 3), or null. */
function fsType(key) {
  if (!/^0x[0-9a-f]+$/i.test(key)) return null;
  const code = parseInt(key, 16) - FS_CODE_BASE;
  return code >= -1 && code < 0x100 ? code : null;
}

/**
 * A key as the tracer printed it (after demangling) -> the user's name, or
 * null when the key is already what the user calls it (an add-on's function).
 */
function userFacingName(key) {
  const type = fsType(key);
  if (type !== null) return FS_TYPES[type] || `fs (libuv request type ${type})`;
  const fn = key.replace(/^[^`]*`/, '').replace(/\+0x[0-9a-f]+$/i, '');
  if (LIBUV_WORK[fn]) return LIBUV_WORK[fn];
  let m = /node::crypto::\w+<node::crypto::(\w+?)Traits>/.exec(fn);
  if (m) return CRYPTO_TRAITS[m[1]] || `crypto (${m[1]})`;
  // Node 26 reads a whole file (fs.readFile) as one job of its own.
  if (/^node::fs::ReadFileJob::/.test(fn)) return 'fs.readFile';
  m = /CompressionStream<node::(?:\(anonymous namespace\)::)?(\w+)>/.exec(fn);
  if (m) return ZLIB_CONTEXTS[m[1]] || `zlib (${m[1]})`;
  if (/^uv__fs_work$/.test(fn)) return 'fs';
  return null;
}

/** What a key stands for, as the C++ or libuv side names it (an fs code: its request type). */
function symbolOf(key) {
  const type = fsType(key);
  if (type === null) return key;
  return `uv__fs_work UV_FS_${UV_FS_TYPES[type] || type}`;
}

/** Is this key one of libuv's own requests (fs, dns, random), named by code or function? */
function isLibuvRequest(key) {
  return fsType(key) !== null || Boolean(LIBUV_WORK[key.replace(/^[^`]*`/, '')]);
}

module.exports = { userFacingName, symbolOf, isLibuvRequest, fsType, FS_TYPES, UV_FS_TYPES, FS_CODE_BASE };
