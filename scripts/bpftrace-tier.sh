#!/usr/bin/env bash
# Makes a newer bpftrace available without replacing the host's: a minimal
# Debian root with Debian's bpftrace package, made once by debootstrap and
# cached, plus a wrapper that runs that root's bpftrace on this host's files
# through the root's own dynamic loader and libraries (no chroot: the tracer
# must see the host's processes, /proc and /sys as they are).
#
#   scripts/bpftrace-tier.sh SUITE      SUITE: trixie (bpftrace 0.23.2) or sid (0.27.1)
#
# Prints the wrapper's path on stdout; everything else goes to stderr.
# Use it as: NODETRACE_BPFTRACE="$(scripts/bpftrace-tier.sh sid)" bin/nodetrace ...
set -euo pipefail

suite="${1:-}"
case "$suite" in
  trixie|sid) ;;   # the suites whose bpftrace we test against (docs/platforms.md)
  *) echo "usage: $0 trixie|sid" >&2; exit 2 ;;
esac

cache="${NODETRACE_CACHE:-/var/cache/nodetrace}/bpftrace"
dir="$cache/$suite"
wrapper="$dir/bpftrace"

# The wrapper runs the root's bpftrace through the root's own loader, which
# is reached by a link named bpftrace: the kernel names the process after
# the file it executes, so it shows as bpftrace (ps, pgrep, /proc/PID/comm)
# like the host's. Written again on every call (cheap), so a cache made by an
# older version of this script gets the current wrapper.
install_wrapper() {
  local d="$1"
  mkdir -p "$d/loader"
  ln -sfn ../root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$d/loader/bpftrace"
  cat >"$d/bpftrace.new" <<'EOF'
#!/bin/sh
# Runs this Debian root's bpftrace with the root's loader and libraries
# (made by nodetrace's scripts/bpftrace-tier.sh).
here="$(dirname "$(readlink -f "$0")")"
exec "$here/loader/bpftrace" \
  --library-path "$here/root/usr/lib/x86_64-linux-gnu:$here/root/lib/x86_64-linux-gnu" \
  "$here/root/usr/bin/bpftrace" "$@"
EOF
  chmod 755 "$d/bpftrace.new"
  mv "$d/bpftrace.new" "$d/bpftrace"
}

if [ -x "$dir/root/usr/bin/bpftrace" ]; then
  if [ -w "$dir" ]; then install_wrapper "$dir"; fi
  echo "$wrapper"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "$0: making a Debian root needs root (debootstrap); run it as root" >&2
  exit 1
fi

if ! command -v debootstrap >/dev/null; then
  echo "Installing debootstrap (apt-get)..." >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
fi

mkdir -p "$cache"
# Build beside the final place and rename at the end: an interrupted run
# leaves no half-made root that looks finished.
tmp="$(mktemp -d "$cache/.$suite.XXXXXX")"
# debootstrap mounts /proc (and /sys) inside the root while it works: never
# let a clean-up cross into them (an interrupted run leaves them mounted).
cleanup() {
  grep -o " $tmp/root/[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
echo "Making a Debian $suite root with bpftrace in $dir (debootstrap, about a minute)..." >&2
debootstrap --variant=minbase --include=bpftrace "$suite" "$tmp/root" >"$tmp/debootstrap.log" 2>&1 || {
  echo "$0: debootstrap $suite failed; the last lines of its log:" >&2
  tail -n 5 "$tmp/debootstrap.log" >&2
  exit 1
}
# The package lists and .debs are not needed to run bpftrace.
rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* 2>/dev/null || true

install_wrapper "$tmp"
"$tmp/bpftrace" --version >&2

if grep -q " $tmp/root/" /proc/self/mounts; then
  echo "$0: debootstrap left file systems mounted in $tmp/root; not using it" >&2
  exit 1
fi
rm -rf --one-file-system "$dir"
mv "$tmp" "$dir"
chmod 755 "$dir"
trap - EXIT
echo "$wrapper"
