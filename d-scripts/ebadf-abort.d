#!/usr/sbin/dtrace -ws
/*
 * ebadf-abort.d  Kill a process with SIGABRT the instant close() fails with
 *                EBADF, so that it dumps core right at the failing call.  The
 *                development form of "stopping a broken program in its
 *                tracks" (the article's one-liner, made safe to reuse): the
 *                process dies.  DTrace: illumos/SmartOS, macOS, FreeBSD,
 *                DTrace for Linux 2.x.  Twin of ebadf-abort.bt.
 *
 * USAGE: dtrace -w -s ebadf-abort.d PID
 *        dtrace -w -s ebadf-abort.d 0 EXECNAME
 *        dtrace -w -s ebadf-abort.d PID|0 EXECNAME|- ERRNO HITS [ERRNO2 ERRNO3 ERRNO4]
 *
 *   $1     PID to watch, or 0 to match by execname instead
 *   $$2    execname when $1 is 0; "-" otherwise
 *   $3     errno to catch, by name or number (default EBADF)
 *   $4     hits before exiting (default 1)
 *   $5-$7  more errnos to catch, by name or number (0: none)
 *
 *   @template PROBES: syscall::close:return
 *   (other system calls: `nodetrace ebadf --abort --syscall close,dup2`
 *   writes this program with each such probe line replaced by theirs.)
 *
 * -w (destructive) is required: raise() changes what the traced program does
 * (here: kills it), and DTrace refuses it without -w.  Nothing is done without
 * a PID or an execname.
 *
 * Why exit(0) after the first hit (HITS=1): if the predicate is wrong, every
 * process it matches dies; exiting caps the damage at one.
 *
 * Portable D, as measured on DTrace for Linux: a system call's return arg1
 * there is the raw kernel value (-9), not -1 as on illumos, so the test is
 * errno == EBADF, never arg1 == -1.  raise() works there (with -w).
 *
 * Whether a core is written depends on the process's core size limit and the
 * system's core settings (coreadm on illumos, kernel.core_pattern on Linux,
 * kern.corefile on macOS/FreeBSD).
 *
 * Example output (illumos, abridged):
 *   Watching PID 4242 for system calls failing with errno 9... Hit Ctrl-C to end.
 *   HIT pid=4242 tid=1 errno=9 wall=1763744763512000000 syscall=close comm=node
 *
 *               libc.so.1`__close+0xa
 *               node`uv__fs_work+0x4f9
 *               ...
 *   END pid=4242
 *
 * 2026-11-21  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs

inline int WANT_ERRNO = $3 != 0 ? $3 : EBADF;
inline int MAX_HITS = $4 > 0 ? $4 : 1;

int hits;

dtrace:::BEGIN
/$1 == 0 && ($$2 == "" || $$2 == "-")/
{
	printf("USAGE: dtrace -w -s ebadf-abort.d PID | 0 EXECNAME [ERRNO [HITS [ERRNO2 ERRNO3 ERRNO4]]]\n");
	printf("Refusing to run without a PID or an execname.\n");
	exit(1);
}

dtrace:::BEGIN
/$1 != 0/
{
	printf("Watching PID %d for system calls failing with errno %d... Hit Ctrl-C to end.\n",
	    $1, WANT_ERRNO);
}

dtrace:::BEGIN
/$1 == 0 && $$2 != "" && $$2 != "-"/
{
	printf("Watching processes named %s for system calls failing with errno %d... Hit Ctrl-C to end.\n",
	    $$2, WANT_ERRNO);
}

syscall::close:return
/(errno == WANT_ERRNO || ($5 != 0 && errno == $5) || ($6 != 0 && errno == $6) ||
  ($7 != 0 && errno == $7)) && hits < MAX_HITS &&
 (($1 != 0 && pid == $1) || ($1 == 0 && $$2 != "-" && execname == $$2))/
{
	raise(SIGABRT);
	hits++;
	printf("HIT pid=%d tid=%d errno=%d wall=%d syscall=%s comm=%s\n",
	    pid, tid, errno, walltimestamp, probefunc, execname);
	ustack();
	printf("END pid=%d\n", pid);
}

syscall::close:return
/hits >= MAX_HITS/
{
	exit(0);
}

dtrace:::END
{
	/* Last, so that once this shows, the trace is over. */
	printf("Tracing ended.\n");
}
