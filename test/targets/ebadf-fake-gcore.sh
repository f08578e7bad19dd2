#!/bin/sh
# A stand-in for gcore(1), put first on the PATH (under the name "gcore") by
# test/ebadf.test.js. Called as: gcore -o PREFIX PID.
#   FAKE_GCORE_MODE=fail  print an error and exit 1, as gcore does when the
#                         disk fills or gdb cannot attach
#   FAKE_GCORE_MODE=hold  attach gdb to PID and hold it (ptrace-stopped) for
#                         60 s, like a very long dump, so that a test can kill
#                         nodetrace in the middle of it
# Either way it first writes its PID to $FAKE_GCORE_MARKER, if set.
prefix=$2
pid=$3
[ -n "$FAKE_GCORE_MARKER" ] && echo $$ > "$FAKE_GCORE_MARKER"
case "$FAKE_GCORE_MODE" in
  fail)
    echo "fake gcore: ${prefix}.${pid}: No space left on device" >&2
    exit 1
    ;;
  hold)
    : > "${prefix}.${pid}"   # a partial core, as gcore leaves one mid-dump
    exec gdb --batch -nx --readnever -iex 'set debuginfod enabled off' \
      -ex "attach $pid" -ex 'shell sleep 60' -ex detach >/dev/null 2>&1
    ;;
  *)
    echo "fake gcore: set FAKE_GCORE_MODE" >&2
    exit 2
    ;;
esac
