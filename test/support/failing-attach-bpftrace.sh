#!/bin/sh
# For test/hostile-usdt.test.js: bpftrace as it is, except that it fails as
# bpftrace does on a probe library it cannot attach to ("ERROR: Could not
# resolve symbol: <library>:<probe>", exit 1) when one of the libraries
# nodetrace links for it is FAIL_ATTACH_LIBRARY. REAL_BPFTRACE: the one run.
real=${REAL_BPFTRACE:-/usr/bin/bpftrace}
if [ -n "$FAIL_ATTACH_LIBRARY" ] && [ "$1" != --version ]; then
  bad=$(readlink -f -- "$FAIL_ATTACH_LIBRARY")
  for a in "$@"; do
    case "$a" in
      */\*.so)
        for l in "${a%/\*.so}"/*.so; do
          if [ "$(readlink -f -- "$l")" = "$bad" ]; then
            echo "ERROR: Could not resolve symbol: $l:http-server-request-done" >&2
            exit 1
          fi
        done;;
    esac
  done
fi
exec "$real" "$@"
