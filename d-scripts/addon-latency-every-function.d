#!/usr/sbin/dtrace -s
/*
 * addon-latency-every-function.d  The article's trace-addon-latency.d: the
 *                   latency of asynchronous operations kicked off by add-ons,
 *                   ended at the first add-on function that receives the
 *                   operation's uv_work_t.  DTrace (illumos, macOS, FreeBSD,
 *                   DTrace for Linux).  Twin of addon-latency-every-function.bt.
 *                   For reference and benchmarks; prefer addon-latency.d.
 *
 * USAGE: dtrace -s d-scripts/addon-latency-every-function.d -p PID
 *
 * ARGUMENTS: none (the process is $target).
 *
 * Example output (from the article, illumos):
 *   node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)
 *            value  ------------- Distribution ------------- count
 *             2048 |                                         0
 *             4096 |@@@@@@@@@@@@@@@@@                        6018
 *
 * Why not, and what it costs: docs/programs.md#addon-latency-every-function.
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
