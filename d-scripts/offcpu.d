#!/usr/sbin/dtrace -s
/*
 * offcpu.d  Where a live Node process waits: the time its main thread (or
 *           every thread) spends blocked off-CPU, in a system call, on a
 *           lock or in a synchronous fs call, summed by kernel and user
 *           stack in the kernel.  illumos, macOS, FreeBSD, DTrace for
 *           Linux.  D twin of offcpu.bt.
 *
 * USAGE: dtrace -s d-scripts/offcpu.d -p PID ALL
 *        ALL: 0 for the main thread only (the event loop), 1 for every
 *        thread.  `nodetrace profile --off-cpu` runs offcpu.bt only for now
 *        (it refuses --backend dtrace); this is for running by hand.
 *
 * sched:::off-cpu fires in the context of the thread leaving the CPU: kept
 * when it is the target's and asleep (SSLEEP: blocked, not preempted);
 * sched:::on-cpu fires in the context of the thread coming back, which adds
 * the time it was away to its stacks (ustack() is still where it blocked).
 *
 * Output (at exit, after "Tracing ended."):
 *   @offcpu_us: TID, the kernel stack, the user stack, then microseconds
 *   @blocks: TID and how many times it blocked
 * Waits still going on at exit are not counted (thread-local start times
 * cannot be listed), unlike offcpu.bt.
 *
 * DTrace for Linux 2.0 compiles and runs this, but records nothing: there
 * sched:::off-cpu fires (pr_state 1, 'S', for the waits) and sched:::on-cpu
 * never does (measured 2026-11-23: no firing in 5 s on a 2-CPU host), so
 * no wait ever ends.  The sched provider of illumos, macOS and FreeBSD
 * fires both.
 *
 * OVERHEAD: off-cpu and on-cpu fire at every context switch of the
 * machine; the target pays two stack walks each time one of its threads
 * blocks.
 *
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option ustackframes=100

dtrace:::BEGIN
{
	printf("Tracing where PID %d waits off-CPU... Hit Ctrl-C to end.\n", $target);
}

sched:::off-cpu
/pid == $target && ($1 || tid == $target) && curlwpsinfo->pr_state == SSLEEP/
{
	self->since = timestamp;
}

sched:::on-cpu
/self->since/
{
	@offcpu_us[tid, stack(), ustack()] = sum((timestamp - self->since) / 1000);
	@blocks[tid] = count();
	self->since = 0;
}

dtrace:::END
{
	/* First: only the maps, printed below, follow it. */
	printf("Tracing ended.\n");
	printf("\n@offcpu_us\n");
	printa(@offcpu_us);
	printf("\n@blocks\n");
	printa(@blocks);
}
