#!/usr/sbin/dtrace -s
/*
 * gc.d  How long V8's garbage collector pauses a Node process, by kind
 *       (scavenge, mark-compact, incremental marking steps, weak callbacks),
 *       as histograms in microseconds, from the pid provider on V8's own
 *       functions: the target needs no preparation.  DTrace (DTrace for Linux
 *       2.x, illumos, macOS, FreeBSD where node keeps its symbols).  Twin of gc.bt.
 *
 * USAGE: dtrace -s d-scripts/gc.d PID   (nodetrace gc fills the slots below)
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID  the Node process (every thread of it)
 * @template STEP_ENTRY: pid$1::INCREMENTAL_MARKING_STEP:entry
 * @template STEP_RETURN: pid$1::INCREMENTAL_MARKING_STEP:return
 *   (IncrementalMarking::Step's exact mangled name; by hand, replace
 *   INCREMENTAL_MARKING_STEP with it.)
 *
 * Example output (test/targets/gc-churn.js, 5 s, DTrace for Linux 2.0, abridged):
 *   @pause_us
 *     scavenge
 *              value  ------------- Distribution ------------- count
 *                256 |                                         0
 *                512 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@       34
 *               1024 |@                                        1
 *   @pauses
 *     mark-compact                                                     10
 *     scavenge                                                         40
 *
 * The functions, the output, overhead: docs/programs.md#gc.
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs

int64_t start;
self int64_t since[int];

dtrace:::BEGIN
{
	start = timestamp;
	printf("Tracing V8's garbage collection pauses of PID %d... Hit Ctrl-C to end.\n", $1);
}

pid$1::_ZN2v88internal18ScavengerCollector14CollectGarbageEv:entry { self->since[0] = timestamp; }
pid$1::_ZN2v88internal20MarkCompactCollector14CollectGarbageEv:entry { self->since[1] = timestamp; }
pid$1::INCREMENTAL_MARKING_STEP:entry
{ self->since[2] = timestamp; }
pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:entry,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:entry { self->since[3] = timestamp; }

/* A return: which kind ended (the clauses of one probe run in order); then
 * one clause records it. Only these functions' returns are probed: a clause
 * on every return (pid$1:::return) would instrument all of node. */
pid$1::_ZN2v88internal18ScavengerCollector14CollectGarbageEv:return,
pid$1::_ZN2v88internal20MarkCompactCollector14CollectGarbageEv:return,
pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:return,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:return,
pid$1::INCREMENTAL_MARKING_STEP:return
{
	this->pause = 0;
}

pid$1::_ZN2v88internal18ScavengerCollector14CollectGarbageEv:return
/self->since[0]/
{
	this->k = "scavenge";
	this->i = 0;
	this->pause = 1;
}

pid$1::_ZN2v88internal20MarkCompactCollector14CollectGarbageEv:return
/self->since[1]/
{
	this->k = "mark-compact";
	this->i = 1;
	this->pause = 1;
}

pid$1::INCREMENTAL_MARKING_STEP:return
/self->since[2]/
{
	this->k = "incremental";
	this->i = 2;
	this->pause = 1;
}

pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:return,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:return
/self->since[3]/
{
	this->k = "weak-callbacks";
	this->i = 3;
	this->pause = 1;
}

pid$1::_ZN2v88internal18ScavengerCollector14CollectGarbageEv:return,
pid$1::_ZN2v88internal20MarkCompactCollector14CollectGarbageEv:return,
pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:return,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:return,
pid$1::INCREMENTAL_MARKING_STEP:return
/this->pause/
{
	this->us = (timestamp - self->since[this->i]) / 1000;
	@pause_us[this->k] = quantize(this->us);
	@pauses[this->k] = count();
	@pause_total_us[this->k] = sum(this->us);
	@pause_max_us[this->k] = max(this->us);
	@thread_pauses[tid, this->i] = count();
	@thread_pause_us[tid, this->i] = sum(this->us);
	self->since[this->i] = 0;
}

dtrace:::END
{
	/* First: only the maps, printed below, follow it. */
	printf("Tracing ended.\n");
	@traced_ns = sum(timestamp - start);
	printf("\n@pause_us\n");
	printa(@pause_us);
	printf("\n@pauses\n");
	printa(@pauses);
	printf("\n@pause_total_us\n");
	printa(@pause_total_us);
	printf("\n@pause_max_us\n");
	printa(@pause_max_us);
	printf("\n@thread_pauses\n");
	printa(@thread_pauses);
	printf("\n@thread_pause_us\n");
	printa(@thread_pause_us);
	printf("\n@traced_ns\n");
	printa(@traced_ns);
}
