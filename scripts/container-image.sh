#!/usr/bin/env bash
# Makes the container image the container tests run Node in: a minimal Debian
# 12 root (debootstrap --variant=minbase bookworm, cached) with the official
# Node 22 binary of the Node builds (scripts/node-builds.sh) at
# /usr/local/bin/node, where the official node images keep it, imported into
# podman's local storage (no registry, no network).
#
#   scripts/container-image.sh              prints the image's name on stdout
#   scripts/container-image.sh --base SUITE the same made of a bare Debian SUITE
#                                           root (no node): the local base of
#                                           `make image` where no registry is
#                                           reachable (Containerfile)
#
# The root and the ID of the image made from it are cached under
# ${NODETRACE_CACHE:-/var/cache/nodetrace}/containers; a fresh cache makes
# both again from nothing (and moves the image's name to the new one).
# Needs root (debootstrap, podman's storage), podman and (not for a base)
# node-builds' node22.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${NODETRACE_CACHE:-/var/cache/nodetrace}"
if [ "${1:-}" = --base ]; then
  suite="${2:-}"
  case "$suite" in
    trixie|bookworm) ;;
    *) echo "usage: $0 [--base trixie|bookworm]" >&2; exit 2 ;;
  esac
  IMAGE="localhost/nodetrace-debian-base:$suite"
  name="$suite-base"
  node=""
else
  suite=bookworm
  IMAGE=localhost/nodetrace-test-node22:1
  name=bookworm-node22
  node="$cache/node/node22/bin/node"
fi
dir="$cache/containers/$name"

say() { echo "container-image: $*" >&2; }

if [ "$(id -u)" != 0 ]; then say "needs root (debootstrap, podman's storage)"; exit 1; fi
command -v podman >/dev/null || { say "podman is not installed (make podman installs it)"; exit 1; }
if [ -n "$node" ] && [ ! -x "$node" ]; then say "$node is missing: run scripts/node-builds.sh node22 first"; exit 1; fi

# The image is the cached root's: its ID is kept beside the root, and an
# image of that ID under that name is what the tests start.
if [ -f "$dir/image-id" ] && [ -d "$dir/root" ] \
   && [ "$(podman image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null)" = "$(cat "$dir/image-id")" ]; then
  echo "$IMAGE"
  exit 0
fi

# A finished root has node (the tests' image) or at least a shell (a base).
done_mark="$dir/root/bin/sh"
if [ -n "$node" ]; then done_mark="$dir/root/usr/local/bin/node"; fi
if [ ! -x "$done_mark" ]; then
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap (apt-get)"
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
  fi
  mkdir -p "$cache/containers"
  # Built beside its place and renamed at the end: an interrupted run leaves
  # nothing that looks finished. debootstrap mounts /proc and /sys inside the
  # root while it works: a clean-up never crosses into them.
  tmp="$(mktemp -d "$cache/containers/.$name.XXXXXX")"
  cleanup() {
    grep -o " $tmp/root/[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$tmp"
  }
  trap cleanup EXIT
  say "making a Debian $suite root in $dir (debootstrap, about a minute)"
  debootstrap --variant=minbase "$suite" "$tmp/root" >"$tmp/debootstrap.log" 2>&1 || {
    say "debootstrap $suite failed; the last lines of its log:"
    tail -n 5 "$tmp/debootstrap.log" >&2
    exit 1
  }
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* 2>/dev/null || true
  if grep -q " $tmp/root/" /proc/self/mounts; then say "debootstrap left file systems mounted in $tmp/root"; exit 1; fi
  if [ -n "$node" ]; then
    install -m 755 "$node" "$tmp/root/usr/local/bin/node"
    chroot "$tmp/root" /usr/local/bin/node -e 'process.exit(process.version.startsWith("v22.") ? 0 : 1)' \
      || { say "node does not run in the root"; exit 1; }
  fi
  rm -rf --one-file-system "$dir"
  mv "$tmp" "$dir"
  trap - EXIT
fi

say "importing $dir/root as $IMAGE"
id="$(tar -C "$dir/root" -c . | podman import --quiet - "$IMAGE")"
id="$(podman image inspect -f '{{.Id}}' "$IMAGE")"
echo "$id" > "$dir/image-id"
echo "$IMAGE"
