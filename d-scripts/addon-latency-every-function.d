#!/usr/sbin/dtrace -s
/*
 * addon-latency-every-function.d  The article's trace-addon-latency.d: the
 *                   latency of asynchronous operations kicked off by add-ons,
 *                   ended at the first add-on function that receives the
 *                   operation's uv_work_t.  DTrace (illumos, macOS, FreeBSD,
 *                   DTrace for Linux).  Twin of addon-latency-every-function.bt.
 *
 * USAGE: dtrace -s d-scripts/addon-latency-every-function.d -p PID
 *
 * Kept for reference and benchmarks; prefer addon-latency.d.  This instruments
 * every function in every add-on (pid$target:*.node::entry): about 2,050
 * probes for sqlite3 and minutes to attach on DTrace for Linux, a probe hit on
 * every add-on call, and for N-API add-ons the completion runs in Node's code,
 * not the add-on's, so operations are only closed by chance.
 *
 * OVERHEAD: one probe per add-on function call; see docs/performance.md.
 *
 * Example output (from the article, illumos):
 *   node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)
 *            value  ------------- Distribution ------------- count
 *             2048 |                                         0
 *             4096 |@@@@@@@@@@@@@@@@@                        6018
 *
 * After Dave Pacheco's trace-addon-latency.d.
 */

pid$target::uv_queue_work:entry
{
	callers[arg1] = ucaller;
	donefunc[arg1] = arg3;
	starttime[arg1] = timestamp;
}

pid$target:*.node::entry
/donefunc[arg0]/
{
	@[ufunc(callers[arg0])] = quantize(timestamp - starttime[arg0]);
	callers[arg0] = 0;
	starttime[arg0] = 0;
	donefunc[arg0] = 0;
}

dtrace:::BEGIN
{
	printf("Tracing every add-on function in PID %d... Hit Ctrl-C to end.\n", $target);
}

dtrace:::END
{
	printf("Tracing ended.\n");
}
