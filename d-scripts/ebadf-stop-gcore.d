#!/usr/sbin/dtrace -ws
/*
 * ebadf-stop-gcore.d  Stop a process the instant close() fails with EBADF,
 *                     save a core with gcore, and let it run on: the
 *                     production form of "stopping a broken program in its
 *                     tracks".  DTrace: illumos/SmartOS, macOS, FreeBSD,
 *                     DTrace for Linux 2.x.  Twin of ebadf-stop-gcore.bt.
 *
 * USAGE: dtrace -w -s ebadf-stop-gcore.d PID
 *        dtrace -w -s ebadf-stop-gcore.d 0 EXECNAME
 *        dtrace -w -s ebadf-stop-gcore.d PID|0 EXECNAME|- ERRNO HITS [ERRNO2 ERRNO3 ERRNO4 [REPORT_ONLY [USTACK]]]
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID          the process to watch, or 0 to match by execname instead
 *   $2  NAME         its execname when PID is 0; "-" otherwise ($$2)
 *   $3  ERRNO        the errno to catch, by name or number (0: EBADF)
 *   $4  HITS         hits before exiting (0: 1)
 *   $5  ERRNO2       another errno to catch (0: none)
 *   $6  ERRNO3       another errno to catch (0: none)
 *   $7  ERRNO4       another errno to catch (0: none)
 *   $8  REPORT_ONLY  1: stop and report only (how nodetrace ebadf runs it); 0: gcore and resume here
 *   $9  USTACK       1: print the stack with ustack(); 0: it is in the core
 *   @template PROBES: syscall::close:return
 *   (nodetrace ebadf --syscall close,dup2 fills it with their probes.)
 *
 * Example output (test/targets/ebadf-close.js, DTrace for Linux 2.0,
 * REPORT_ONLY 1, USTACK 0):
 *   Watching PID 12236 for system calls failing with errno 9... Hit Ctrl-C to end.
 *   HIT pid=12236 tid=12236 errno=9 wall=1795647612491426459 syscall=close comm=65646f6e 0
 *   END pid=12236
 *   Tracing ended.
 *
 * By hand, the core, -w, portable D, why exit after one hit: docs/ebadf.md#the-scripts
 * and docs/programs.md#ebadf-stop-gcore-and-ebadf-abort.
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
	printf("USAGE: dtrace -w -s ebadf-stop-gcore.d PID | 0 EXECNAME [ERRNO [HITS [ERRNO2 ERRNO3 ERRNO4 [1]]]]\n");
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
	raise(SIGSTOP);
	hits++;
	self->stopped = 1;
	/* The name is the process's to choose (a newline too): its 16
	 * bytes (execname's, the thread's comm) as two words in hex, so
	 * that it can never end this line. */
	printf("HIT pid=%d tid=%d errno=%d wall=%d syscall=%s comm=%x %x\n",
	    pid, tid, errno, walltimestamp, probefunc,
	    *(uint64_t *)curpsinfo->pr_fname, *(uint64_t *)(curpsinfo->pr_fname + 8));
}

syscall::close:return
/self->stopped && $9 == 1/
{
	ustack();
}

syscall::close:return
/self->stopped/
{
	printf("END pid=%d\n", pid);
}

syscall::close:return
/self->stopped && $8 == 0/
{
	system("umask 077; gcore -o ebadf.core %d; kill -CONT %d", pid, pid);
}

syscall::close:return
/self->stopped/
{
	self->stopped = 0;
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
