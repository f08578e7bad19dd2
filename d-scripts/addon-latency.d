#!/usr/sbin/dtrace -s
/*
 * addon-latency.d  Latency of the asynchronous operations that native add-ons
 *                  (and Node's own thread-pool work) queue on libuv's thread
 *                  pool, one histogram per kind of operation, named by the
 *                  native function that started it.  DTrace: illumos/SmartOS,
 *                  macOS, FreeBSD, DTrace for Linux 2.x.  Twin of addon-latency.bt.
 *
 * USAGE: dtrace -s d-scripts/addon-latency.d -p PID
 *        dtrace -s d-scripts/addon-latency.d -c 'node app.js'
 *        (`nodetrace latency -p PID` runs this same file and formats its output;
 *        `... | nodetrace format` renders the raw output the same way.)
 *        The probes name no module (pid$target::uv_queue_work:entry), so they
 *        are found in whichever object defines them: the node executable, or
 *        libnode.so.* and libuv.so.1 on a distribution's shared build.  Where
 *        libuv is stripped (Debian's and Ubuntu's libuv.so.1), uv__queue_work
 *        and uv__queue_done have no name: the script does not compile there
 *        ("does not match any probes").  By hand: replace those two probe
 *        descriptions with the pid provider's address probes for the
 *        addresses `nodetrace doctor -p PID` prints (file addresses: add
 *        libuv's load base); not run on such a host yet.
 *
 * A kind is named by:
 *   - NAN / raw-libuv add-ons and Node internals (crypto.pbkdf2, zlib): the
 *     native caller of uv_queue_work() (the article's ufunc(ucaller));
 *   - N-API add-ons (sqlite3 5+): the caller of napi_create_async_work(), i.e.
 *     the add-on's own function, not napi_queue_async_work().
 *
 * Each operation's latency is split into where the time went, in
 * microseconds (as in the bpftrace twin, so both give the same buckets):
 *   @total_us       uv_queue_work() -> uv__queue_done()  (the whole wait)
 *   @queue_wait_us  queued -> a pool thread starts it    (pool saturated?)
 *   @run_us         the work callback on the pool thread (slow work?)
 *   @loop_wait_us   work done -> event loop runs the done callback (blocked loop?)
 *   @max_us         the longest total seen
 * Only operations whose timestamps are in order are counted (see below).
 * The end of "run" is the pool thread's uv_async_send() that wakes the loop:
 * a return probe on uv__queue_work would fire too early where the pid provider
 * treats its tail call (jmp *%rax) as the return.
 *
 * OVERHEAD: 6 pid-provider probes per N-API operation, 4 for the others, and
 * nothing else.  The article's script instead enabled pid$target:*.node::entry,
 * every function of every add-on: about 2,050 probes for sqlite3, minutes to
 * attach on DTrace for Linux, and a probe hit on every add-on call.  That way
 * survives in addon-latency-every-function.d, for reference and benchmarks.
 *
 * DTrace for Linux prints C++ names mangled (_ZN12node_sqlite3...); nodetrace
 * demangles them.  Libuv facts this relies on (x86-64): uv__queue_work(w) and
 * uv__queue_done(w, status) receive &req->work_req, at offset 88 in uv_work_t.
 *
 * Example output (crypto.pbkdf2 loop, DTrace for Linux 2.0, abridged; that
 * DTrace prints C++ names mangled):
 *   @total_us
 *     node`_ZN4node6crypto9CryptoJobINS0_12PBKDF2TraitsEE3RunERKN2v820...
 *              value  ------------- Distribution ------------- count
 *                256 |                                         0
 *                512 |@@@@@@                                   1697
 *               1024 |@@@@@@@@@@@@@@@@@@@@                     5301
 *               2048 |@@@@@@@@@@                               2613
 *
 * DTrace for Linux: build it with `make dtrace` (scripts/build-dtrace.sh) and
 * run ${NODETRACE_CACHE:-/var/cache/nodetrace}/dtrace/bin/dtrace -s ... -p PID;
 * attaching takes 4 to 13 s there.
 *
 * 2026-11-21  nodetrace authors.
 */

#pragma D option quiet
#pragma D option dynvarsize=32m

dtrace:::BEGIN
{
	printf("Tracing thread-pool work in PID %d... Hit Ctrl-C to end.\n", $target);
}

/*
 * N-API: an add-on function calls napi_create_async_work(..., &work) and then
 * napi_queue_async_work(env, work), which calls uv_queue_work.  Remember the
 * creator per thread and check, when work is queued, that it is the work just
 * created (no return probe needed: *result is filled in by then).
 * napi_queue_async_work's own caller is no witness, as add-ons often reach it
 * by a tail call.
 */
pid$target::napi_create_async_work:entry
{
	self->created_by = ucaller;
	self->created_into = arg6;		/* napi_async_work *result */
}

pid$target::napi_queue_async_work:entry
/self->created_into &&
    *(uint64_t *)copyin(self->created_into, sizeof (uint64_t)) == arg1/
{
	self->napi_origin = self->created_by;
}

pid$target::napi_queue_async_work:entry
{
	self->created_by = 0;
	self->created_into = 0;
	self->napi_queuing = 1;
}

/*
 * Per-request state lives in global arrays keyed by the uv_work_t address.
 * They are never cleared by assigning 0: DTrace for Linux 2.0 removes an
 * element in two steps, and another CPU creating an element in between gets
 * values that belonged to another key or array (measured: negative times, a
 * kind named 0x0, a p99 of days).  Instead each request's completion is
 * stamped (done_at), a request is "live" while queued_at > done_at, and a
 * sample is kept only when its timestamps are in order.  Addresses are
 * reused by the allocator, so the arrays stay as large as the busiest moment.
 * Standard D: the same on illumos, macOS and FreeBSD.
 */
uint64_t origin[uint64_t];		/* the kind: who queued the work */
uint64_t queued_at[uint64_t];
uint64_t started_at[uint64_t];
uint64_t finished_at[uint64_t];
uint64_t done_at[uint64_t];		/* completion of the last request there */

/*
 * N-API work whose creation was not seen (created before tracing began, or
 * queued again) is left out: its only witness would be napi_queue_async_work
 * itself, a kind that names N-API's plumbing, not the add-on.
 */
pid$target::uv_queue_work:entry
/self->napi_origin || !self->napi_queuing/
{
	origin[arg1] = self->napi_origin ? self->napi_origin : ucaller;
	queued_at[arg1] = timestamp;
}

pid$target::uv_queue_work:entry
{
	self->napi_origin = 0;
	self->napi_queuing = 0;
}

pid$target::uv__queue_work:entry
/queued_at[arg0 - 88] > done_at[arg0 - 88]/
{
	started_at[arg0 - 88] = timestamp;
	self->running = arg0 - 88;
}

pid$target::uv_async_send:entry
/self->running/
{
	finished_at[self->running] = timestamp;
	self->running = 0;
}

pid$target::uv__queue_done:entry
{
	this->req = arg0 - 88;
	this->now = timestamp;
	this->queued = queued_at[this->req];
	this->live = this->queued > done_at[this->req] && this->queued <= this->now &&
	    origin[this->req] != 0;
}

pid$target::uv__queue_done:entry
/this->live/
{
	this->total = (this->now - this->queued) / 1000;
	@total_us[ufunc(origin[this->req])] = quantize(this->total);
	@max_us[ufunc(origin[this->req])] = max(this->total);
	this->started = started_at[this->req];
	this->finished = finished_at[this->req];
}

pid$target::uv__queue_done:entry
/this->live && this->started >= this->queued && this->finished >= this->started &&
    this->now >= this->finished/
{
	@queue_wait_us[ufunc(origin[this->req])] = quantize((this->started - this->queued) / 1000);
	@run_us[ufunc(origin[this->req])] = quantize((this->finished - this->started) / 1000);
	@loop_wait_us[ufunc(origin[this->req])] = quantize((this->now - this->finished) / 1000);
}

pid$target::uv__queue_done:entry
/this->live/
{
	done_at[this->req] = this->now;
}

dtrace:::END
{
	printf("\n@total_us\n");
	printa(@total_us);
	printf("\n@queue_wait_us\n");
	printa(@queue_wait_us);
	printf("\n@run_us\n");
	printa(@run_us);
	printf("\n@loop_wait_us\n");
	printa(@loop_wait_us);
	printf("\n@max_us\n");
	printa(@max_us);
	printf("Tracing ended.\n");
}
