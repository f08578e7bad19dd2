#!/usr/sbin/dtrace -s
/*
 * addon-latency.d  Latency of the work add-ons and Node queue on libuv's
 *                  thread pool, one histogram per kind, named by the native
 *                  function that queued it, split into queue wait, run and
 *                  loop wait.  DTrace: illumos/SmartOS, macOS, FreeBSD,
 *                  DTrace for Linux 2.x.  Twin of addon-latency.bt.
 *
 * USAGE: dtrace -s d-scripts/addon-latency.d -p PID
 *        dtrace -s d-scripts/addon-latency.d -c 'node app.js'
 *        `nodetrace latency -p PID` runs this same file and formats its
 *        output; `... | nodetrace format` renders the raw output the same way.
 *
 * ARGUMENTS: none (the process is $target, from -p or -c).
 *
 * Example output (crypto.pbkdf2 loop, DTrace for Linux 2.0, which prints
 * C++ names mangled; abridged):
 *   @total_us
 *     node`_ZN4node6crypto9CryptoJobINS0_12PBKDF2TraitsEE3RunERKN2v820...
 *              value  ------------- Distribution ------------- count
 *                256 |                                         0
 *                512 |@@@@@@                                   1697
 *               1024 |@@@@@@@@@@@@@@@@@@@@                     5301
 *               2048 |@@@@@@@@@@                               2613
 *
 * How kinds are named, the output, libuv's layout, a stripped libuv,
 * DTrace for Linux, overhead: docs/programs.md#addon-latency.
 * 2026-11-21  nodetrace authors.  2026-11-23: the whole pool.
 */

#pragma D option quiet
#pragma D option dynvarsize=32m

/*
 * Layouts, from lib/latency/probe-points.js (LIBUV_LAYOUT, NODE_LAYOUT), which
 * says where they were checked; test/program-arguments.test.js holds these to it.
 */
inline int UV_WORK_T_WORK_REQ = 88;
inline int UV_FS_T_WORK_REQ = 336;
inline int UV_FS_T_FS_TYPE = 64;
inline int NODE_THREADPOOLWORK_WORK_REQ = 16;
inline int NODE_VTABLE_DO_THREAD_POOL_WORK = 16;

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
 * Per-request state lives in global arrays keyed by the request's struct
 * uv__work (w: &req->work_req, what every work and done function receives).
 * No element of any associative array is ever deleted (assigned 0):
 * DTrace for Linux 2.0 names an element's value by the address of a hash-map
 * element that goes back to the free list when some element is deleted, so
 * the next element created, in any array, can get the key of one still in
 * use and the two share one value (measured on one CPU: a[1] = 111;
 * b[2] = 222; b[2] = 0; c[3] = 333 leaves a[1] == 333; docs/platforms.md).
 * Instead each request's completion is stamped (done_at), a request is
 * "live" while queued_at > done_at, and a sample is kept only when its
 * timestamps are in order.  Thread-local scalars (self->x) are stored apart
 * and may be cleared.  Addresses are reused by the allocator, so the arrays
 * stay as large as the busiest moment.  Standard D: the same on illumos,
 * macOS and FreeBSD.
 */
uint64_t origin[uint64_t];		/* the kind: who queued the work */
uint64_t queued_at[uint64_t];
uint64_t started_at[uint64_t];
uint64_t finished_at[uint64_t];
uint64_t done_at[uint64_t];		/* completion of the last request there */
uint64_t seq[uint64_t];			/* its number among all submissions */
uint64_t submitted;			/* submissions so far */
uint64_t waiting_until;			/* end of the last queue wait counted */

/*
 * uv_queue_work(loop, req, work, done): its work is keyed by &req->work_req,
 * at offset UV_WORK_T_WORK_REQ of uv_work_t.  N-API work whose creation was not seen (created
 * before tracing began, or queued again) is left out: its only witness would
 * be napi_queue_async_work itself, a kind that names N-API's plumbing, not
 * the add-on.  It still counts as queued (submitted) for the queue length.
 */
pid$target::uv_queue_work:entry
{
	this->w = arg1 + UV_WORK_T_WORK_REQ;
	seq[this->w] = ++submitted;
	/* Where uv_queue_work calls uv__work_submit, that clause skips this one. */
	self->queue_work_w = this->w;
}

pid$target::uv_queue_work:entry
/self->napi_origin || !self->napi_queuing/
{
	origin[this->w] = self->napi_origin ? self->napi_origin : ucaller;
	queued_at[this->w] = timestamp;
}

/*
 * Queued by Node's own wrapper, node::ThreadPoolWork::ScheduleWork(), a
 * function of its own in every build here (Node 18 to 26; crypto jobs mostly
 * have it inlined into their Run, zlib calls it): its caller names nothing a
 * user wrote, so the work is named by its class, the DoThreadPoolWork() of
 * the ThreadPoolWork that holds this request (where, in the object and its
 * vtable: NODE_LAYOUT in lib/latency/probe-points.js), as addon-latency.bt does.
 */
pid$target::_ZN4node14ThreadPoolWork12ScheduleWorkEv:entry
{
	self->scheduling = 1;
}

pid$target::uv_queue_work:entry
/self->scheduling && !self->napi_origin && !self->napi_queuing/
{
	this->vtable = *(uint64_t *)copyin(arg1 - NODE_THREADPOOLWORK_WORK_REQ, sizeof (uint64_t));
	origin[this->w] = *(uint64_t *)copyin(this->vtable + NODE_VTABLE_DO_THREAD_POOL_WORK, sizeof (uint64_t));
}

pid$target::uv_queue_work:entry
{
	self->napi_origin = 0;
	self->napi_queuing = 0;
	self->scheduling = 0;
}

/*
 * The rest of the pool: libuv submits fs, getaddrinfo, getnameinfo and random
 * requests through uv__work_submit(loop, w, kind, work, done) (Node 20's
 * uv_queue_work has it inlined; other builds call it from uv_queue_work too,
 * which the check on self->queue_work_w leaves to uv_queue_work's clause).
 * Such a request is named when a pool thread starts it, by the work function
 * it runs; until then its origin is 1: cancelled before it ran, it is left
 * out.  Work submitted before this probe was in place has no record.
 */
pid$target::uv__work_submit:entry
/arg1 != self->queue_work_w/
{
	origin[arg1] = 1;
	queued_at[arg1] = timestamp;
	seq[arg1] = ++submitted;
}

pid$target::uv__work_submit:entry
{
	self->queue_work_w = 0;
}

/*
 * A pool thread starts the work: each work function receives w.  The first
 * clause is the same for every one of them (clause-local this->w carries to
 * the next clauses of the same probe).
 */
pid$target::uv__queue_work:entry,
pid$target::uv__fs_work:entry,
pid$target::uv__getaddrinfo_work:entry,
pid$target::uv__getnameinfo_work:entry,
pid$target::uv__random_work:entry
{
	this->w = arg0;
	this->q = queued_at[this->w];
	/* Live and not started yet (fs's work function also runs synchronous requests, on the loop thread). */
	this->starting = this->q > done_at[this->w] && started_at[this->w] < this->q;
}

/*
 * fs by 0x100 + the request's uv_fs_type (uv_fs_t's fs_type, found from its
 * work_req: LIBUV_LAYOUT in lib/latency/probe-points.js), a code below 64 KiB
 * where no code is mapped: ufunc() prints it as hex (0x103 for UV_FS_READ)
 * and `nodetrace format` names it fs.read.  The others by their own work
 * function (uv__getaddrinfo_work is dns.lookup, uv__getnameinfo_work
 * dns.lookupService, uv__random_work uv_random): at entry the PC is its
 * first instruction.
 */
pid$target::uv__fs_work:entry
/this->starting/
{
	origin[this->w] = 0x100 + *(int *)copyin(this->w - UV_FS_T_WORK_REQ + UV_FS_T_FS_TYPE, sizeof (int));
}

pid$target::uv__getaddrinfo_work:entry,
pid$target::uv__getnameinfo_work:entry,
pid$target::uv__random_work:entry
/this->starting/
{
	origin[this->w] = uregs[R_PC];
}

/*
 * The pool as a whole, at every start: how many operations queued after this
 * one are still waiting (libuv's queue is first in, first out but for slow
 * I/O, which it holds back: approximate), and the union of the queue waits
 * (at least one operation waited for a thread: the pool was saturated).
 */
pid$target::uv__queue_work:entry,
pid$target::uv__fs_work:entry,
pid$target::uv__getaddrinfo_work:entry,
pid$target::uv__getnameinfo_work:entry,
pid$target::uv__random_work:entry
/this->starting/
{
	this->now = timestamp;
	started_at[this->w] = this->now;
	self->running = this->w;
	@queue_len = quantize(submitted - seq[this->w]);
	this->from = this->q > waiting_until ? this->q : waiting_until;
	@pool_waiting_us = sum(this->now > this->from ? this->now - this->from : 0);
	waiting_until = this->now > waiting_until ? this->now : waiting_until;
}

/*
 * The pool thread wakes the loop with uv_async_send() right after the work
 * function returns: the end of "run", and of the thread's busy time.
 */
pid$target::uv_async_send:entry
/self->running/
{
	finished_at[self->running] = timestamp;
	@pool_busy_us[tid] = sum(timestamp - started_at[self->running]);
	self->running = 0;
}

/* The loop runs the done function, with w, just before the callback. */
pid$target::uv__queue_done:entry,
pid$target::uv__fs_done:entry,
pid$target::uv__getaddrinfo_done:entry,
pid$target::uv__getnameinfo_done:entry,
pid$target::uv__random_done:entry
{
	this->req = arg0;
	this->now = timestamp;
	this->queued = queued_at[this->req];
	this->live = this->queued > done_at[this->req] && this->queued <= this->now &&
	    origin[this->req] > 1;
}

pid$target::uv__queue_done:entry,
pid$target::uv__fs_done:entry,
pid$target::uv__getaddrinfo_done:entry,
pid$target::uv__getnameinfo_done:entry,
pid$target::uv__random_done:entry
/this->live/
{
	this->total = (this->now - this->queued) / 1000;
	@total_us[ufunc(origin[this->req])] = quantize(this->total);
	@max_us[ufunc(origin[this->req])] = max(this->total);
	/* The loop that runs the done function is the one that queued the work: by that thread. */
	@thread_ops[tid] = count();
	@thread_total_us[tid] = sum(this->total);
	this->started = started_at[this->req];
	this->finished = finished_at[this->req];
}

pid$target::uv__queue_done:entry,
pid$target::uv__fs_done:entry,
pid$target::uv__getaddrinfo_done:entry,
pid$target::uv__getnameinfo_done:entry,
pid$target::uv__random_done:entry
/this->live && this->started >= this->queued && this->finished >= this->started &&
    this->now >= this->finished/
{
	@queue_wait_us[ufunc(origin[this->req])] = quantize((this->started - this->queued) / 1000);
	@run_us[ufunc(origin[this->req])] = quantize((this->finished - this->started) / 1000);
	@loop_wait_us[ufunc(origin[this->req])] = quantize((this->now - this->finished) / 1000);
}

pid$target::uv__queue_done:entry,
pid$target::uv__fs_done:entry,
pid$target::uv__getaddrinfo_done:entry,
pid$target::uv__getnameinfo_done:entry,
pid$target::uv__random_done:entry
/this->live/
{
	done_at[this->req] = this->now;
}

dtrace:::END
{
	/* First: only the maps, printed below, follow it. */
	printf("Tracing ended.\n");
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
	/* The pool's sums were taken in nanoseconds: printed in microseconds like the rest. */
	normalize(@pool_busy_us, 1000);
	normalize(@pool_waiting_us, 1000);
	printf("\n@pool_busy_us\n");
	printa(@pool_busy_us);
	printf("\n@queue_len\n");
	printa(@queue_len);
	printf("\n@pool_waiting_us\n");
	printa(@pool_waiting_us);
	printf("\n@thread_ops\n");
	printa(@thread_ops);
	printf("\n@thread_total_us\n");
	printa(@thread_total_us);
}
