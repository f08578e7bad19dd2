#!/usr/sbin/dtrace -s
/*
 * profile.d  Where a live Node process spends its CPU: on-CPU samples of
 *            every thread of one process, counted by thread and by stack
 *            (kernel and user) in the kernel.  illumos, macOS, FreeBSD,
 *            DTrace for Linux.  Twin of profile.bt.
 *
 * USAGE: dtrace -s d-scripts/profile.d -p PID HZ
 *        `nodetrace profile -p PID` runs this same file and prints the report.
 *
 * ARGUMENTS (lib/tracer/program-arguments.js; the process is $target)
 *   $1  HZ  samples a second on each CPU (99)
 *
 * Example output (test/targets/profile-hot.js, DTrace for Linux 2.0, which
 * prints C++ names mangled and JIT frames as addresses; abridged):
 *   @samples
 *       11853
 *                 0x7f484c007e0f
 *                 node`Builtins_JSEntryTrampoline+0x5c
 *                 node`uv__run_check+0x89
 *                 node`uv_run+0x20c
 *                   1
 *
 * The output, overhead: docs/programs.md#profile-and-offcpu.
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
