#!/usr/sbin/dtrace -s
/*
 * offcpu.d  Where a live Node process waits: the time its main thread (or
 *           every thread) spends blocked off-CPU, summed by kernel and user
 *           stack in the kernel.  illumos, macOS, FreeBSD; DTrace for Linux
 *           2.0 runs it but records nothing.  Twin of offcpu.bt.
 *
 * USAGE: dtrace -s d-scripts/offcpu.d -p PID ALL
 *        (by hand only: nodetrace profile --off-cpu runs offcpu.bt)
 *
 * ARGUMENTS (lib/tracer/program-arguments.js; the process is $target)
 *   $1  ALL  0: the main thread only (the event loop); 1: every thread
 *
 * Example output (test/targets/offcpu-wait.js, 3 s, DTrace for Linux 2.0:
 * its sched:::on-cpu never fires, so no wait ends):
 *   Tracing where PID 12063 waits off-CPU... Hit Ctrl-C to end.
 *   Tracing ended.
 *   @offcpu_us
 *   @blocks
 *
 * How, the output, DTrace for Linux: docs/programs.md#profile-and-offcpu.
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
