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
 *        libnode.so.* and libuv.so.1 on a distribution's shared build.  It
 *        needs libuv's static functions by name (uv__queue_work/_done,
 *        uv__work_submit, uv__fs_work/_done, uv__getaddrinfo_work/_done,
 *        uv__getnameinfo_work/_done, uv__random_work/_done): official and
 *        NodeSource builds have them.  Where libuv is stripped (Debian's and
 *        Ubuntu's libuv.so.1) they have no name and the script does not
 *        compile ("does not match any probes").  By hand: delete the pool's
 *        probes but uv__queue_work's and uv__queue_done's, and replace those
 *        two with the pid provider's address probes for the addresses
 *        `nodetrace doctor -p PID` prints (file addresses: add libuv's load
 *        base); not run on such a host yet.
 *
 * It sees everything on libuv's thread pool, as addon-latency.bt does.  A
 * kind is named by:
 *   - NAN / raw-libuv add-ons and Node internals (crypto.pbkdf2): the
 *     native caller of uv_queue_work() (the article's ufunc(ucaller));
 *   - work queued through Node's node::ThreadPoolWork::ScheduleWork() (zlib;
 *     crypto from Node 26): the class's DoThreadPoolWork(), read from the
 *     object's vtable;
 *   - N-API add-ons (sqlite3 5+): the caller of napi_create_async_work(), i.e.
 *     the add-on's own function, not napi_queue_async_work();
 *   - libuv's own requests, submitted through uv__work_submit(): fs by
 *     0x100 + the request's uv_fs_type (printed 0x103: nodetrace names it
 *     fs.read), the others by their work function (uv__getaddrinfo_work is
 *     dns.lookup, uv__getnameinfo_work dns.lookupService, uv__random_work
 *     uv_random).
 *
 * Each operation's latency is split into where the time went, in
 * microseconds (as in the bpftrace twin, so both give the same buckets):
 *   @total_us       queued -> the done function runs (the whole wait)
 *   @queue_wait_us  queued -> a pool thread starts it    (pool saturated?)
 *   @run_us         the work function on the pool thread (slow work?)
 *   @loop_wait_us   work done -> event loop runs the done callback (blocked loop?)
 *   @max_us         the longest total seen
 * Only operations whose timestamps are in order are counted (see below).
 * The end of "run" is the pool thread's uv_async_send() that wakes the loop:
 * a return probe on uv__queue_work would fire too early where the pid provider
 * treats its tail call (jmp *%rax) as the return.
 *
 * The pool as a whole (what nodetrace's "thread pool:" lines are made of):
 *   @pool_busy_us[tid]  time each pool thread spent running work
 *   @queue_len          at each start, how many operations queued after it
 *                       were still waiting (approximate: libuv holds slow
 *                       I/O back)
 *   @pool_waiting_us    how long at least one operation was waiting for a
 *                       thread (the union of the waits): the pool was saturated
 * These count every piece of work (uv_queue_work's too), as the bpftrace
 * twin does (it numbers uv_queue_work's work in uv_queue_work's clause, as
 * Node 20 inlines uv__work_submit there).
 *
 * OVERHEAD: 6 pid-provider probes per N-API operation, 4 for the others
 * (libuv's own requests: uv__work_submit, the work function, uv_async_send,
 * the done function), one more for work queued by ScheduleWork, and nothing
 * else.  The article's script instead enabled pid$target:*.node::entry,
 * every function of every add-on: about 2,050 probes for sqlite3, minutes to
 * attach on DTrace for Linux, and a probe hit on every add-on call.  That way
 * survives in addon-latency-every-function.d, for reference and benchmarks.
 *
 * DTrace for Linux prints C++ names mangled (_ZN12node_sqlite3...); nodetrace
 * demangles them.  Libuv facts this relies on (x86-64, libuv 1.x, whose ABI
 * keeps these layouts): every work and done function receives the request's
 * struct uv__work (w, &req->work_req), and operations are keyed by it;
 * uv_queue_work(loop, req, ...) has it at req + 88; uv__work_submit(loop, w,
 * kind, work, done) gets it as its second argument; in uv_fs_t, work_req is
 * at 336 and fs_type (an int) at 64: w - 272.
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
 * attaching takes 4 to 13 s there.  Run there (2.0.1, node 20.20.2): the
 * whole pool mix of test/targets/pool-mix.js, every kind counted as the
 * target counted (test/dtrace-linux.test.js).
 *
 * 2026-11-21  nodetrace authors.  2026-11-23: the whole pool.
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
 * at offset 88 of uv_work_t.  N-API work whose creation was not seen (created
 * before tracing began, or queued again) is left out: its only witness would
 * be napi_queue_async_work itself, a kind that names N-API's plumbing, not
 * the add-on.  It still counts as queued (submitted) for the queue length.
 */
pid$target::uv_queue_work:entry
{
	this->w = arg1 + 88;
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
 * the ThreadPoolWork that holds this request (work_req_ at offset 16, after
 * the vtable pointer and env_; DoThreadPoolWork in vtable slot 2, after the
 * two destructor slots of the Itanium C++ ABI): as addon-latency.bt does.
 */
pid$target::_ZN4node14ThreadPoolWork12ScheduleWorkEv:entry
{
	self->scheduling = 1;
}

pid$target::uv_queue_work:entry
/self->scheduling && !self->napi_origin && !self->napi_queuing/
{
	this->vtable = *(uint64_t *)copyin(arg1 - 16, sizeof (uint64_t));
	origin[this->w] = *(uint64_t *)copyin(this->vtable + 16, sizeof (uint64_t));
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
 * fs by 0x100 + the request's uv_fs_type (at w - 272: work_req is at 336 of
 * uv_fs_t, fs_type at 64; libuv 1.x keeps that layout), a code below 64 KiB
 * where no code is mapped: ufunc() prints it as hex (0x103 for UV_FS_READ)
 * and `nodetrace format` names it fs.read.  The others by their own work
 * function (uv__getaddrinfo_work is dns.lookup, uv__getnameinfo_work
 * dns.lookupService, uv__random_work uv_random): at entry the PC is its
 * first instruction.
 */
pid$target::uv__fs_work:entry
/this->starting/
{
	origin[this->w] = 0x100 + *(int *)copyin(this->w - 272, sizeof (int));
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
}
