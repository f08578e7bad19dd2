#!/usr/sbin/dtrace -s
/*
 * gc.d  How long V8's garbage collector pauses a Node process, by kind:
 *       scavenges, mark-compact (the atomic pause of a full GC), incremental
 *       marking steps, and the weak callbacks the GC runs; histograms in
 *       microseconds.  Needs no preparation: the pid provider on V8's own
 *       functions.  DTrace (DTrace for Linux 2.x, illumos, macOS, FreeBSD
 *       where node keeps its symbols).  Twin of gc.bt, whose header says
 *       which functions and why.
 *
 * USAGE: dtrace -s gc.d PID    (nodetrace gc puts the Step name in)
 *
 * @template STEP_ENTRY: pid$1::INCREMENTAL_MARKING_STEP:entry
 * @template STEP_RETURN: pid$1::INCREMENTAL_MARKING_STEP:return
 *   By hand, replace INCREMENTAL_MARKING_STEP with the mangled name of
 *   v8::internal::IncrementalMarking::Step in the target's node (or
 *   libnode), e.g. _ZN2v88internal18IncrementalMarking4StepEdNS0_10StepOriginE.
 *
 * OUTPUT: "Tracing ended.", then each aggregation under its "@name" line
 * (@pause_us, @pauses, @pause_total_us, @pause_max_us, @traced_ns).
 *
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
	printf("\n@traced_ns\n");
	printa(@traced_ns);
}
