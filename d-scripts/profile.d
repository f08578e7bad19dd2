#!/usr/sbin/dtrace -s
/*
 * profile.d  Where a live Node process spends its CPU: on-CPU samples of
 *            every thread of one process, counted by thread and by stack
 *            (kernel and user), aggregated in the kernel.  illumos, macOS,
 *            FreeBSD, DTrace for Linux.  D twin of profile.bt.
 *
 * USAGE: dtrace -s d-scripts/profile.d -p PID HZ
 *        HZ: samples a second on each CPU (99, never in step with a timer of
 *        the program).  `nodetrace profile -p PID` runs this same file and
 *        prints the report (docs/reading-output.md).
 *
 * Output (at exit, after "Tracing ended."):
 *   @samples: TID, then the kernel stack (empty in user mode), then the user
 *             stack, then the count, one entry per distinct stack and thread
 *   @threads: TID and its sample count
 * ustack() names JavaScript frames only where a node ustack helper is
 * loaded (illumos); elsewhere JIT frames are addresses.  DTrace for Linux
 * ptraces the target while ustack() is in use (shared/docs/dtrace-for-linux.md).
 *
 * OVERHEAD: one stack walk per sample of the target (99 a second per busy
 * thread); stacks are counted in the kernel.
 *
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option ustackframes=100

dtrace:::BEGIN
{
	printf("Sampling PID %d at %d Hz... Hit Ctrl-C to end.\n", $target, $1);
}

profile-$1
/pid == $target/
{
	@samples[tid, stack(), ustack()] = count();
	@threads[tid] = count();
}

dtrace:::END
{
	/* First: only the maps, printed below, follow it. */
	printf("Tracing ended.\n");
	printf("\n@samples\n");
	printa(@samples);
	printf("\n@threads\n");
	printa(@threads);
}
