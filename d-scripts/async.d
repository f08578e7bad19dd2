#!/usr/sbin/dtrace -s
/*
 * async.d  Every asynchronous operation of a Node process by its kind
 *          (Node's AsyncWrap provider: TCPWRAP, FSREQCALLBACK, ZLIB...):
 *          how many were created, how long each waited for its first
 *          callback, how long each callback held the thread, how many are
 *          still alive; from the pid provider on node's own AsyncWrap
 *          functions, so the target needs no preparation.  DTrace for Linux
 *          2.x (where node keeps its symbols).  Twin of async.bt, without
 *          its @stacks and @hook parts (below).
 *
 * USAGE: dtrace -s d-scripts/async.d PID TYPE_AT ID_AT SHARED_AT TID
 *        (nodetrace async --backend dtrace fills the slot below)
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID        the Node process (every thread of it)
 *   $2  TYPE_AT    offset of provider_type_ (int32) in an AsyncWrap
 *   $3  ID_AT      offset of async_id_ (a double) in an AsyncWrap
 *   $4  SHARED_AT  offset of a JSFunction's SharedFunctionInfo (0: callbacks not told apart)
 *   $5  TID        the thread whose event loop the loop figures are of: the
 *                  PID (the main thread) or a worker_threads Worker's thread
 * @template RESET: pid$1::ASYNC_RESET:entry
 *   (node::AsyncWrap::AsyncReset's mangled name, which lost its bool in
 *   Node 24: lib/async/wrap-functions.js; by hand, replace ASYNC_RESET with
 *   it.)  The other functions, the same in every build, are named below
 *   as that file names them (test/async-unit.test.js holds the two together).
 *
 * Not here: async.bt's @stacks part (--stacks).  D has no loops, so the
 *   walk of the JavaScript frames (64 frames, unrolled in bpftrace) is not
 *   written, and ustack() makes DTrace for Linux ptrace the target for the
 *   whole run; an operation's creation stack would also have to be kept in
 *   an associative array that is deleted from, which DTrace for Linux's
 *   arrays cannot do safely (below).  nodetrace async refuses --stacks
 *   with --backend dtrace.
 * Not here either: async.bt's @hook part (the register hook's USDT probes:
 *   promises, timers, AsyncResources, of every thread, keyed by thread ID).
 *   They are stapsdt USDT probes, which DTrace for Linux does not see
 *   (docs/platforms.md); nodetrace async --backend dtrace leaves a
 *   process's hook off.
 *
 * OUTPUT: each second "ALIVE MS" and "@alive[KIND]: N" lines (created
 *   minus destroyed so far); after "Tracing ended.", the aggregations as
 *   "@name[KIND] = N" (histograms after "@name[KIND] = "): @created,
 *   @callbacks, @destroyed, @wait_us, @wait_max_us, @callback_us,
 *   @callback_max_us, @loop_callback_ns, @function_ns[KIND, SFI],
 *   @function_calls[KIND, SFI], @thread_created[TID, KIND],
 *   @thread_callbacks[TID, KIND], @loop_busy_ns, @traced_ns: async.bt's maps.
 *
 * Example output (test/targets/async-mix.js, DTrace for Linux 2.0, node 20,
 *   abridged; whole in test/fixtures/dtrace-async-mix.out):
 *   Tracing the asynchronous operations of PID 4094... Hit Ctrl-C to end.
 *   ALIVE 3070
 *   @alive[8]: 0
 *   @alive[44]: 4
 *   Tracing ended.
 *   @created[8] = 100
 *   @callbacks[8] = 100
 *   @wait_us[8] =
 *              value  ------------- Distribution ------------- count
 *                128 |@@@@                                     11
 *                256 |@@@@@@@@@@@@@@@@@@                       46
 *                512 |@@@@@@@@@                                22
 *
 * Probes, layout, cost: docs/programs.md#async.
 * 2026-11-27  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option dynvarsize=32m

/* An async ID of -1 (the double's bits as a signed integer): ended already. */
inline int64_t ENDED_ID = -4616189618054758400;

/*
 * Per operation, keyed by its AsyncWrap's address: when it was created and
 * when its first callback came.  Never deleted (assigned 0): DTrace for
 * Linux 2.0 can move a value between keys when an element is deleted (the
 * comment in addon-latency.d; measured there).  An operation waits while
 * born_at > called_at; the arrays stay as large as the number of AsyncWrap
 * addresses seen (the allocator reuses them).
 */
uint64_t born_at[uint64_t];
uint64_t called_at[uint64_t];

/*
 * Callbacks nest (a callback that makes another): a stack per thread, by
 * depth.  Its elements are overwritten, never assigned 0 (deleted): a
 * thread-local array is kept in the same store as the global ones, and
 * zeroing its elements gave a callback the kind of another's timestamp
 * (measured: @callback_us[24755911216133]).  So no value is 0: called is
 * the kind and the SFI in one (kind << 48 | SFI; kinds start at 1),
 * nested_ns one more than the nested callbacks' time.
 */
self int depth;
self uint64_t entered[int];
self uint64_t called[int];
self uint64_t nested_ns[int];
/* The operation this thread ended last: each is counted once. */
self uint64_t ended_at;
self int64_t ended_id;

int64_t start;
int64_t next_alive;
/* Busy time counts from the first wake-up: an idle loop sits in its wait. */
int64_t busy_since;

dtrace:::BEGIN
{
	start = timestamp;
	next_alive = timestamp + 1000000000;
	busy_since = 0;
	printf("Tracing the asynchronous operations of PID %d... Hit Ctrl-C to end.\n", $1);
}

/*
 * An AsyncWrap gets its async ID: a new operation, or a reused object
 * starting a new one (an agent's kept-alive socket), whose old one ends
 * first. AsyncReset ends it through a copy of EmitDestroy(bool) that the
 * official builds clone or inline, where no probe below sees it: it is
 * ended here, by its ID still in place, once (as below).
 */
pid$1::ASYNC_RESET:entry
{
	this->id = *(int64_t *)copyin(arg0 + $3, 8);
	this->ends = this->id != ENDED_ID && (self->ended_at != arg0 || self->ended_id != this->id);
}

pid$1::ASYNC_RESET:entry
/this->ends/
{
	this->kind = (uint64_t)*(uint32_t *)copyin(arg0 + $2, 4);
	@destroyed[this->kind] = count();
	@alive[this->kind] = sum(-1);
	self->ended_at = arg0;
	self->ended_id = this->id;
}

pid$1::ASYNC_RESET:entry
{
	this->kind = (uint64_t)*(uint32_t *)copyin(arg0 + $2, 4);
	@created[this->kind] = count();
	@alive[this->kind] = sum(1);
	/* By the thread that created it (the main thread, each Worker): its own loop. */
	@thread_created[tid, this->kind] = count();
	born_at[arg0] = timestamp;
}

/* A callback into JavaScript on behalf of an AsyncWrap. */
pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:entry
{
	this->kind = (uint64_t)*(uint32_t *)copyin(arg0 + $2, 4);
	@callbacks[this->kind] = count();
	@thread_callbacks[tid, this->kind] = count();
	this->born = born_at[arg0];
	this->first = this->born != 0 && this->born > called_at[arg0];
	this->sfi = (uint64_t)0;
	/* The JavaScript function called: a Local<Function> is a slot holding the tagged JSFunction. */
	this->fn = $4 != 0 ? *(uint64_t *)copyin(arg1, 8) : (uint64_t)0;
}

pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:entry
/this->first/
{
	@wait_us[this->kind] = quantize((timestamp - this->born) / 1000);
	@wait_max_us[this->kind] = max((timestamp - this->born) / 1000);
	called_at[arg0] = timestamp;
}

/* By its SharedFunctionInfo, which stays put where the JSFunction moves. */
pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:entry
/(this->fn & 3) == 1/
{
	this->sfi = *(uint64_t *)copyin(this->fn - 1 + $4, 8) & 0xffffffffffff;
}

pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:entry
{
	self->depth++;
	self->entered[self->depth] = timestamp;
	self->called[self->depth] = (this->kind << 48) | this->sfi;
	self->nested_ns[self->depth] = 1;
}

pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:return
{
	this->d = self->depth;
}

pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:return
/this->d > 0/
{
	this->kind = self->called[this->d] >> 48;
	this->sfi = self->called[this->d] & 0xffffffffffff;
	this->ns = timestamp - self->entered[this->d];
	/* Time in callbacks nested in this one is theirs, not this one's. */
	this->own_ns = this->ns - (self->nested_ns[this->d] - 1);
	@callback_us[this->kind] = quantize(this->own_ns / 1000);
	@callback_max_us[this->kind] = max(this->own_ns / 1000);
	/* Every thread's callback time, by the function called (0: not read). */
	@function_ns[this->kind, this->sfi] = sum(this->own_ns);
	@function_calls[this->kind, this->sfi] = count();
	self->depth--;
}

pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:return
/this->d > 1/
{
	self->nested_ns[this->d - 1] += this->ns;
}

/* The main thread's loop. */
pid$1::_ZN4node9AsyncWrap12MakeCallbackEN2v85LocalINS1_8FunctionEEEiPNS2_INS1_5ValueEEE:return
/this->d > 0 && tid == $5/
{
	@loop_callback_ns[this->kind] = sum(this->own_ns);
}

/*
 * The end of an operation: EmitDestroy(bool) (an explicit end, a reuse) or
 * the destructor (D2, D0), which inlines its own copy of it in some builds
 * and calls EmitDestroy(bool) in others (Debian's libnode).  An operation
 * is its object and its async ID: counted once, however many of these it
 * passes through.
 */
pid$1::_ZN4node9AsyncWrap11EmitDestroyEb:entry,
pid$1::_ZN4node9AsyncWrapD2Ev:entry,
pid$1::_ZN4node9AsyncWrapD0Ev:entry
{
	this->id = *(int64_t *)copyin(arg0 + $3, 8);
	this->ends = this->id != ENDED_ID && (self->ended_at != arg0 || self->ended_id != this->id);
}

pid$1::_ZN4node9AsyncWrap11EmitDestroyEb:entry,
pid$1::_ZN4node9AsyncWrapD2Ev:entry,
pid$1::_ZN4node9AsyncWrapD0Ev:entry
/this->ends/
{
	this->kind = (uint64_t)*(uint32_t *)copyin(arg0 + $2, 4);
	@destroyed[this->kind] = count();
	@alive[this->kind] = sum(-1);
	/* Not waiting any more (stamped, not deleted). */
	called_at[arg0] = timestamp;
	self->ended_at = arg0;
	self->ended_id = this->id;
}

/* The loop's busy time (as loop.d measures it): the share of callbacks. */
syscall::epoll_wait:return,
syscall::epoll_pwait:return
/pid == $1 && tid == $5/
{
	busy_since = timestamp;
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $5 && busy_since != 0/
{
	@loop_busy_ns = sum(timestamp - busy_since);
	busy_since = 0;
}

/*
 * Created minus destroyed, each second: a kind that only grows shows here.
 * Not from tick-1s: DTrace for Linux 2.0's timers skip while their CPU
 * idles (measured: tick-1s fired 3 times in 5 s, tick-100ms 10 times in
 * 5 s, none in 4 s with the target busy; profile-10 56 times on the busy
 * CPU, 13 on the idle one).  So the second is checked at every profile
 * tick of a busy CPU and at every wake-up of the target's loop (whatever
 * the process does, its loop wakes for it).  Two CPUs at once may both
 * print a sample: nodetrace takes one of two that are less than half a
 * second apart (lib/async/report/alive-samples.js).
 */
profile-10,
syscall::epoll_wait:return,
syscall::epoll_pwait:return
/timestamp >= next_alive && (probeprov == "profile" || (pid == $1 && tid == $5))/
{
	next_alive = next_alive + 1000000000 > timestamp ? next_alive + 1000000000 : timestamp + 1000000000;
	printf("ALIVE %d\n", (timestamp - start) / 1000000);
	printa("@alive[%d]: %@d\n", @alive);
}

dtrace:::END
/busy_since != 0/
{
	@loop_busy_ns = sum(timestamp - busy_since);
}

dtrace:::END
{
	/* First: only the maps, printed below, follow it. */
	printf("Tracing ended.\n");
	@traced_ns = sum(timestamp - start);
	printa("@created[%d] = %@d\n", @created);
	printa("@callbacks[%d] = %@d\n", @callbacks);
	printa("@destroyed[%d] = %@d\n", @destroyed);
	printa("@wait_us[%d] = %@d\n", @wait_us);
	printa("@wait_max_us[%d] = %@d\n", @wait_max_us);
	printa("@callback_us[%d] = %@d\n", @callback_us);
	printa("@callback_max_us[%d] = %@d\n", @callback_max_us);
	printa("@loop_callback_ns[%d] = %@d\n", @loop_callback_ns);
	printa("@function_ns[%d, %d] = %@d\n", @function_ns);
	printa("@function_calls[%d, %d] = %@d\n", @function_calls);
	printa("@thread_created[%d, %d] = %@d\n", @thread_created);
	printa("@thread_callbacks[%d, %d] = %@d\n", @thread_callbacks);
	printa("@loop_busy_ns = %@d\n", @loop_busy_ns);
	printa("@traced_ns = %@d\n", @traced_ns);
}
