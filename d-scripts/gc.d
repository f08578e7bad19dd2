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
 * @template COLLECTION_ENTRY: pid$1::HEAP_COLLECT_GARBAGE:entry
 * @template COLLECTION_RETURN: pid$1::HEAP_COLLECT_GARBAGE:return
 * @template STEP_ENTRY: pid$1::INCREMENTAL_MARKING_STEP:entry
 * @template STEP_RETURN: pid$1::INCREMENTAL_MARKING_STEP:return
 *   (Heap::CollectGarbage's and IncrementalMarking::Step's exact mangled
 *   names, which differ between versions; by hand, replace
 *   HEAP_COLLECT_GARBAGE and INCREMENTAL_MARKING_STEP with them.)
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
self int64_t collecting;
self int depth;
self int kind;

dtrace:::BEGIN
{
	start = timestamp;
	printf("Tracing V8's garbage collection pauses of PID %d... Hit Ctrl-C to end.\n", $1);
}

/*
 * A scavenge or a mark-compact: the whole of Heap::CollectGarbage, which
 * calls V8's GC prologue and epilogue callbacks, between which Node's
 * PerformanceObserver times its 'gc' entry (the collector's own function
 * alone missed the sweeping finished and the weak callbacks around it:
 * docs/gc.md); its kind is the collector that ran inside it.  A collection
 * can start another from its callbacks: self->depth keeps the outermost;
 * one already running at the attach (depth 0 at its return) does not count.
 */
pid$1::HEAP_COLLECT_GARBAGE:entry
{
	self->collecting = self->depth == 0 ? timestamp : self->collecting;
	self->depth++;
}
pid$1::_ZN2v88internal18ScavengerCollector14CollectGarbageEv:entry /self->collecting && self->kind == 0/ { self->kind = 1; }
pid$1::_ZN2v88internal20MarkCompactCollector14CollectGarbageEv:entry /self->collecting && self->kind == 0/ { self->kind = 2; }
pid$1::HEAP_COLLECT_GARBAGE:return
/self->depth > 0/
{
	self->depth--;
}

/* Marking steps and weak callbacks outside a collection (one inside is
 * part of its pause, counted there once). */
pid$1::INCREMENTAL_MARKING_STEP:entry
/self->depth == 0/
{ self->since[2] = timestamp; }
pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:entry,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:entry /self->depth == 0/ { self->since[3] = timestamp; }

/* A return: which kind ended and when it started (the clauses of one probe
 * run in order); then one clause records it. Only these functions' returns
 * are probed: a clause on every return (pid$1:::return) would instrument
 * all of node. */
pid$1::HEAP_COLLECT_GARBAGE:return,
pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:return,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:return,
pid$1::INCREMENTAL_MARKING_STEP:return
{
	this->pause = 0;
}

pid$1::HEAP_COLLECT_GARBAGE:return
/self->depth == 0 && self->collecting && self->kind/
{
	this->k = self->kind == 1 ? "scavenge" : "mark-compact";
	this->i = self->kind - 1;
	this->start = self->collecting;
	this->pause = 1;
}

pid$1::INCREMENTAL_MARKING_STEP:return
/self->since[2]/
{
	this->k = "incremental";
	this->i = 2;
	this->start = self->since[2];
	self->since[2] = 0;
	this->pause = 1;
}

pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:return,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:return
/self->since[3]/
{
	this->k = "weak-callbacks";
	this->i = 3;
	this->start = self->since[3];
	self->since[3] = 0;
	this->pause = 1;
}

pid$1::HEAP_COLLECT_GARBAGE:return,
pid$1::_ZN2v88internal13GlobalHandles28InvokeFirstPassWeakCallbacksEv:return,
pid$1::_ZN2v88internal13GlobalHandles32InvokeSecondPassPhantomCallbacksEv:return,
pid$1::INCREMENTAL_MARKING_STEP:return
/this->pause/
{
	this->us = (timestamp - this->start) / 1000;
	@pause_us[this->k] = quantize(this->us);
	@pauses[this->k] = count();
	@pause_total_us[this->k] = sum(this->us);
	@pause_max_us[this->k] = max(this->us);
	@thread_pauses[tid, this->i] = count();
	@thread_pause_us[tid, this->i] = sum(this->us);
}

/* The outermost collection has returned. */
pid$1::HEAP_COLLECT_GARBAGE:return
/self->depth == 0/
{
	self->collecting = 0;
	self->kind = 0;
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
