"""The same bug in a non-Node program: close a descriptor twice, shrug at
EBADF, carry on.  `nodetrace ebadf -n NAME` catches any program, not just
Node.

usage: python3 ebadf-close.py [NAME [AFTER_SECONDS]]
NAME (<= 15 chars) becomes the process name (comm) via prctl(PR_SET_NAME), so
a test can match exactly this process.  Prints "ready PID", "close failed:
EBADF", then "finished"; exits 0.
"""
import ctypes
import errno
import os
import sys
import time

name = sys.argv[1] if len(sys.argv) > 1 else "ebadf-py"
after = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
PR_SET_NAME = 15
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
print("ready %d" % os.getpid(), flush=True)
time.sleep(after)

fd = os.open(os.devnull, os.O_RDONLY)
os.close(fd)
try:
    os.close(fd)
except OSError as err:
    print("close failed: %s" % errno.errorcode[err.errno], flush=True)

total = sum(range(100000))  # keep working
time.sleep(0.3)
print("finished: %d" % total, flush=True)
