#!/usr/bin/env bash
# Builds Oracle's DTrace for Linux (dtrace-utils 2.0.1) from its source archive
# into the test cache, so that the d-scripts and `--backend dtrace` can be run
# for real on a Linux host.  Run by `make dtrace` (and so by `make test`).
#
#   scripts/build-dtrace.sh [--if-available] [SOURCE.tar.gz]
#
# SOURCE defaults to $NODETRACE_DTRACE_SOURCE, else the copy in the checkout's
# vendor/ (vendor/README.md).  The archive is input to this script only: it is
# copied into the cache, and nothing at test time reads the vendor dir.
#
# Result (cached; a second run does nothing):
#   ${NODETRACE_CACHE:-/var/cache/nodetrace}/dtrace/<version>/   the build tree
#   ${NODETRACE_CACHE:-/var/cache/nodetrace}/dtrace/bin/dtrace    a wrapper that
#       sets LD_LIBRARY_PATH and DTRACE_OPT_SYSLIBDIR and runs the build's dtrace
#
# --if-available: when the source archive is absent (a trimmed copy), say so
# and exit 0, so that `make test` goes on and the DTrace tier skips with that
# reason.  Under CI (CI set) an absent archive is an error.
#
# Why each step is here (measured on Debian 12, see docs/platforms.md):
#  - Debian's bpf-gcc 12 rejects libbpf's helper declarations (function
#    pointers: "indirect call in function"); a private bpf_helper_defs.h that
#    declares each helper with __attribute__((kernel_helper(N))) goes first on
#    the BPF include path.
#  - Only the libraries, the BPF library, the D libraries and build/dtrace are
#    built: the test triggers do not link under Debian's default PIE.
#  - dlibs' io.d names the kernel symbol `major_names`, which this kernel does
#    not export; dtrace refuses to start until it is replaced.
#  - The tracefs path is compiled in as /sys/kernel/debug/tracing/; debugfs is
#    not mounted on these hosts, /sys/kernel/tracing/ is.
#  - libsystemd-dev and libfuse3-dev are left out: they serve only dtprobed
#    (not built) and would upgrade systemd on the host.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
checkout="$(cd "$here/.." && pwd)"
if_available=no
if [ "${1:-}" = "--if-available" ]; then if_available=yes; shift; fi
source_archive="${1:-${NODETRACE_DTRACE_SOURCE:-$checkout/vendor/dtrace-utils-2.0.1-8a1264bf.tar.gz}}"
cache="${NODETRACE_CACHE:-/var/cache/nodetrace}"
say() { echo "build-dtrace: $*"; }

# The version is the archive's name: dtrace-utils-<release>-<commit>.tar.gz
base="$(basename "$source_archive")"
version="${base#dtrace-utils-}"; version="${version%.tar.gz}"
case "$version" in
  [0-9]*.[0-9]*-[0-9a-f]*) ;;
  *) say "cannot tell the version from '$base' (expected dtrace-utils-<release>-<commit>.tar.gz)"; exit 2 ;;
esac
dest="$cache/dtrace/$version"
wrapper="$cache/dtrace/bin/dtrace"

write_wrapper() {
  mkdir -p "$cache/dtrace/bin"
  local tmp="$wrapper.tmp.$$"
  # Paths are fixed at build time; %q keeps any odd character in the cache
  # path from being read as shell syntax.
  {
    echo '#!/bin/sh'
    echo "# Runs DTrace for Linux $version as built by nodetrace's scripts/build-dtrace.sh."
    printf 'build=%q\n' "$dest/build"
    echo 'export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"'
    echo 'export DTRACE_OPT_SYSLIBDIR="$build/dlibs"'
    echo 'exec "$build/dtrace" "$@"'
  } > "$tmp"
  chmod 0755 "$tmp"
  mv -f "$tmp" "$wrapper"
}

if [ -f "$dest/.built" ] && [ -x "$dest/build/dtrace" ]; then
  [ -x "$wrapper" ] || write_wrapper
  say "DTrace for Linux $version already built: $wrapper"
  exit 0
fi

if [ ! -f "$source_archive" ]; then
  if [ "$if_available" = yes ] && [ -z "${CI:-}" ]; then
    say "no source archive at $source_archive; the DTrace for Linux tests will be skipped (set NODETRACE_DTRACE_SOURCE to build it)"
    exit 0
  fi
  say "no source archive at $source_archive (give its path as the argument or in NODETRACE_DTRACE_SOURCE)"
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  say "must run as root (it installs packages with apt-get and writes $cache)"; exit 1
fi

start=$(date +%s)

packages="gcc-bpf binutils-bpf libbpf-dev binutils-dev libpcap-dev libpfm4-dev libelf-dev zlib1g-dev bison flex pkg-config gawk make gcc"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  say "installing build packages:$missing"
  # Other apt users (another `make deps`) may hold the lock: wait for it.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=600 $missing >/dev/null
fi

mkdir -p "$cache/dtrace/src"
# The archive becomes part of the cache: the build never reads it from where it came.
cp -f "$source_archive" "$cache/dtrace/src/$base"

work="$cache/dtrace/.tmp-$version-$$"
trap 'rm -rf "$work"' EXIT
rm -rf "$work"; mkdir -p "$work"
tar -xzf "$cache/dtrace/src/$base" -C "$work"
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)"
[ -f "$src/GNUmakefile" ] || { say "the archive does not hold a dtrace-utils tree"; exit 1; }

# 1. BPF helper declarations bpf-gcc 12 accepts.  bpf_helpers.h includes
#    "bpf_helper_defs.h" from its own directory, so both go in the private dir.
helpers="$src/nodetrace-bpf-include/bpf"
mkdir -p "$helpers"
cp /usr/include/bpf/bpf_helpers.h "$helpers/"
sed -E 's/^static (.*)\(\*([A-Za-z0-9_]+)\)\((.*)\) = \(void \*\) ([0-9]+);$/\1\2(\3) __attribute__((kernel_helper(\4)));/' \
  /usr/include/bpf/bpf_helper_defs.h > "$helpers/bpf_helper_defs.h"
if grep -q '^static .*(void \*) [0-9]*;$' "$helpers/bpf_helper_defs.h"; then
  say "could not rewrite every helper in bpf_helper_defs.h"; exit 1
fi

# 2. io.d: `major_names` is not exported by this kernel; the device name is
#    not something nodetrace uses.
for f in "$src"/dlibs/*/*/io.d; do
  perl -0pi -e 's/stringof\(\(\(struct blk_major_name \*\*\)&`major_names\)\[.*?\]->name\)/"<unknown>"/gs' "$f"
done
if grep -rq 'major_names' "$src"/dlibs; then say "io.d still names major_names"; exit 1; fi

# 3. tracefs where it is mounted on these hosts.
sed -i 's,/sys/kernel/debug/tracing/,/sys/kernel/tracing/,' "$src/include/tracefs.h"
grep -q '"/sys/kernel/tracing/"' "$src/include/tracefs.h" || { say "tracefs.h not as expected"; exit 1; }

# 4. Only what running dtrace needs.
jobs="$(nproc 2>/dev/null || echo 2)"
say "building DTrace for Linux $version with $jobs jobs (2.5 minutes on 2 cores here)"
# BPFCPPFLAGS through the environment: the makefile appends its own (-D__amd64)
# to it, which a command-line assignment would override.
( cd "$src" && BPFCPPFLAGS="-I$src/nodetrace-bpf-include" make -j"$jobs" BPFC=bpf-gcc BPFLD=bpf-ld \
    build-libs libs shlibs bpflibs objs "$src/build/dtrace" ) > "$work/build.log" 2>&1 || {
  tail -30 "$work/build.log"; say "build failed (log above)"; exit 1; }


rm -rf "$dest"
mv "$src" "$dest"
mv "$work/build.log" "$dest/nodetrace-build.log"
end=$(date +%s)
echo "$((end - start))" > "$dest/.build-seconds"
touch "$dest/.built"
write_wrapper
say "built in $((end - start)) s: $("$wrapper" -V 2>&1)"
say "run it as $wrapper"
