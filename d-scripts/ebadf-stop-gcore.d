#!/usr/sbin/dtrace -ws
/*
 * ebadf-stop-gcore.d  Stop a process the instant close() fails with EBADF,
 *                     save a core with gcore, and let it run on.  The
 *                     production form of "stopping a broken program in its
 *                     tracks".  DTrace: illumos/SmartOS, macOS, FreeBSD,
 *                     DTrace for Linux 2.x.  Twin of ebadf-stop-gcore.bt.
 *
 * USAGE: dtrace -w -s ebadf-stop-gcore.d PID
 *        dtrace -w -s ebadf-stop-gcore.d 0 EXECNAME
 *        dtrace -w -s ebadf-stop-gcore.d PID|0 EXECNAME|- ERRNO HITS \
 *            [ERRNO2 ERRNO3 ERRNO4 [REPORT_ONLY [USTACK]]]
 *
 *   $1     PID to watch, or 0 to match by execname instead
 *   $$2    execname when $1 is 0; "-" otherwise
 *   $3     errno to catch, by name or number (default EBADF)
 *   $4     hits before exiting (default 1)
 *   $5-$7  more errnos to catch, by name or number (0: none)
 *   $8     1 = only stop and report: the caller takes the core and resumes
 *          the process (this is how `nodetrace ebadf` runs this file);
 *          0 (default) = run "gcore; kill -CONT" from here via system().
 *   $9     1 = print the failing thread's stack with ustack() (illumos,
 *          macOS, FreeBSD); 0 (default) = no stack here: it is in the core
 *          (gdb -batch -ex 'thread apply all bt' node ebadf.core.PID).
 *          Not on DTrace for Linux: there ustack() makes dtrace ptrace the
 *          target while the script runs, and gcore then fails ("already
 *          traced by process N").  `nodetrace ebadf` passes 1 where it is
 *          safe and otherwise reads the stack from the core it took.
 *
 *   @template PROBES: syscall::close:return
 *   (other system calls: `nodetrace ebadf --syscall close,dup2` writes this
 *   program with each such probe line replaced by theirs, and --dry-run shows
 *   it; a probe description cannot hold an argument that may be absent.)
 *
 * -w (destructive) is required: raise() and system() change what the traced
 * program does, and DTrace refuses them without -w.  Nothing is done without
 * a PID or an execname: a predicate that matched every process would stop
 * them all.
 *
 * Why exit(0) after the first hit (HITS=1): if the predicate is wrong, you can
 * stop production processes by the dozen; exiting caps the damage at one.
 * exit() is processed after system(), so the core is taken and the process
 * resumed before dtrace exits.
 *
 * Portable D, as measured on DTrace for Linux:
 *   - a system call's return arg1 there is the raw kernel value (-9), not -1
 *     as on illumos, so the test is errno == EBADF, never arg1 == -1;
 *   - stop() is not implemented there, while raise() and system() are (with
 *     -w): a stop that works everywhere is raise(SIGSTOP), and the resume is
 *     SIGCONT (kill -CONT), not prun(1), which only resumes /proc stops.
 *
 * By hand ($5 = 0) the core is ./ebadf.core.PID (gcore -o appends the PID
 * on illumos and with GNU gcore; macOS's gcore -o names the file exactly),
 * owner-only (umask 077), and the process is resumed when gcore is done.
 * `nodetrace ebadf` adds a watchdog that resumes the process even if the
 * tracer is killed mid-dump, and a free-space check.
 *
 * Example output (illumos, $9 = 1, abridged):
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
	printf("HIT pid=%d tid=%d errno=%d wall=%d syscall=%s comm=%s\n",
	    pid, tid, errno, walltimestamp, probefunc, execname);
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
