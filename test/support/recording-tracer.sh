#!/bin/sh
# For test/hostile-program-text.test.js: the tracer REAL_TRACER as it is,
# except that every program file it is given (an argument naming a .d or .bt
# file) is first copied into RECORD_DIR, so that a test can read the very
# program text a real run loaded.
for a in "$@"; do
  case "$a" in
    *.d|*.bt) if [ -f "$a" ] && [ -n "$RECORD_DIR" ]; then cp -- "$a" "$RECORD_DIR/$(date +%s%N)-${a##*/}"; fi;;
  esac
done
exec "$REAL_TRACER" "$@"
