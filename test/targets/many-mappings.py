"""A process whose /proc files are huge, as any user can make them: it maps
one page of FILE COUNT times (each mapping a line of /proc/PID/maps of its
own, the kernel merges none: their file offsets, all 0, never continue one
another), so that its maps holds COUNT lines with FILE's path; what it is
given after COUNT lengthens its /proc/PID/cmdline. Name FILE libnode.so*
and the process looks like Node to nodetrace (lib/proc looksLikeNode).

usage: python3 many-mappings.py FILE COUNT [PADDING...]
Prints "ready PID" once mapped; lives until its stdin closes or it is killed.
"""
import ctypes
import os
import sys

PROT_READ, MAP_PRIVATE, PAGE = 1, 2, 4096

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
path, count = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDONLY)
# libc's mmap, not Python's: that one keeps a descriptor per mapping.
for _ in range(count):
    if libc.mmap(None, PAGE, PROT_READ, MAP_PRIVATE, fd, 0) in (None, ctypes.c_void_p(-1).value):
        sys.exit("mmap: %s" % os.strerror(ctypes.get_errno()))
os.close(fd)
print("ready %d" % os.getpid(), flush=True)
sys.stdin.read()
