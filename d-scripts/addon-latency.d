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
 * Each operation's latency is split into where the time went, in nanoseconds:
 *   @total_ns       uv_queue_work() -> uv__queue_done()  (the whole wait)
 *   @queue_wait_ns  queued -> a pool thread starts it    (pool saturated?)
 *   @run_ns         the work callback on the pool thread (slow work?)
 *   @loop_wait_ns   work done -> event loop runs the done callback (blocked loop?)
 *   @max_ns         the longest total seen
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
 * Example output (sqlite3 loop, abridged):
 *   @total_ns
 *     node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)
 *              value  ------------- Distribution ------------- count
 *               2048 |                                         0
 *               4096 |@@@@@@@@@@@@@@@@@                        6018
 *               8192 |@@@@@                                    1590
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
 * created (no return probe needed: *result is filled in by then).  Work queued
 * again later, or created before tracing began, keeps uv_queue_work's caller,
 * napi_queue_async_work: its own caller is no witness, as add-ons often reach
 * it by a tail call.
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
}

pid$target::uv_queue_work:entry
{
	origin[arg1] = self->napi_origin ? self->napi_origin : ucaller;
	queued_at[arg1] = timestamp;
	self->napi_origin = 0;
}

pid$target::uv__queue_work:entry
/queued_at[arg0 - 88]/
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
/queued_at[arg0 - 88]/
{
	this->req = arg0 - 88;
	this->total = timestamp - queued_at[this->req];
	@total_ns[ufunc(origin[this->req])] = quantize(this->total);
	@max_ns[ufunc(origin[this->req])] = max(this->total);
}

pid$target::uv__queue_done:entry
/queued_at[arg0 - 88] && finished_at[arg0 - 88]/
{
	this->req = arg0 - 88;
	@queue_wait_ns[ufunc(origin[this->req])] =
	    quantize(started_at[this->req] - queued_at[this->req]);
	@run_ns[ufunc(origin[this->req])] =
	    quantize(finished_at[this->req] - started_at[this->req]);
	@loop_wait_ns[ufunc(origin[this->req])] =
	    quantize(timestamp - finished_at[this->req]);
}

pid$target::uv__queue_done:entry
/queued_at[arg0 - 88]/
{
	this->req = arg0 - 88;
	origin[this->req] = 0;
	queued_at[this->req] = 0;
	started_at[this->req] = 0;
	finished_at[this->req] = 0;
}

dtrace:::END
{
	printf("\n@total_ns\n");
	printa(@total_ns);
	printf("\n@queue_wait_ns\n");
	printa(@queue_wait_ns);
	printf("\n@run_ns\n");
	printa(@run_ns);
	printf("\n@loop_wait_ns\n");
	printa(@loop_wait_ns);
	printf("\n@max_ns\n");
	printa(@max_ns);
}
