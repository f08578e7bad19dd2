#!/usr/sbin/dtrace -s
/*
 * http.d  One line per HTTP request a Node process served or made (http,
 *         https, Express/Fastify on them, http.request, fetch), with its
 *         status and latency.  DTrace: illumos/SmartOS, macOS, FreeBSD
 *         (dtrace-provider's provider), DTrace for Linux 2.x (nodetrace's
 *         probe library).  Twin of http.bt.  Not yet run on a DTrace host.
 *
 * USAGE: dtrace -Z -s d-scripts/http.d PID MIN_US [PID2 ... PID8]
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID     only this process; 0: every process with the probes
 *   $2  MIN_US  only requests that took at least this long (microseconds)
 *   $3  PID2    another process to trace beside PID (0: none)
 *   $4  PID3    likewise
 *   $5  PID4    likewise
 *   $6  PID5    likewise
 *   $7  PID6    likewise
 *   $8  PID7    likewise
 *   $9  PID8    likewise
 *
 * OUTPUT: as http.bt's, with wall times (walltimestamp) for NS: U PID TID NS
 *   URL, E PID TID NS ERROR (no response only), H PID TID NS server|client
 *   STATUS LATENCY_US METHOD.
 *
 * Example output: none yet (not run on a DTrace host; the format is http.bt's).
 *
 * The probes, the output: docs/programs.md#http-and-http-batched.
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option strsize=200

dtrace:::BEGIN
{
	printf("Tracing HTTP requests... Hit Ctrl-C to end.\n");
}

/*
 * MIN_US compares the latency unsigned, as http.bt does: D's arg0 is an
 * int64_t, compared signed, so a negative latency (a forged record) would be
 * dropped here unseen; unsigned, it passes any minimum, to be refused by
 * nodetrace as malformed and said so.
 */
nodetrace*:::http-server-request-done,
nodetrace*:::http-client-request-done
/($1 == 0 || pid == $1 || pid == $3 || pid == $4 || pid == $5 ||
    pid == $6 || pid == $7 || pid == $8 || pid == $9) && (uint64_t)arg0 >= $2/
{
	this->ns = walltimestamp;
	printf("U %d %d %d %s\n", pid, tid, this->ns, copyinstr(arg3));
}

nodetrace*:::http-server-request-done,
nodetrace*:::http-client-request-done
/($1 == 0 || pid == $1 || pid == $3 || pid == $4 || pid == $5 ||
    pid == $6 || pid == $7 || pid == $8 || pid == $9) && (uint64_t)arg0 >= $2 && arg1 == 0/
{
	printf("E %d %d %d %s\n", pid, tid, this->ns, copyinstr(arg4));
}

nodetrace*:::http-server-request-done,
nodetrace*:::http-client-request-done
/($1 == 0 || pid == $1 || pid == $3 || pid == $4 || pid == $5 ||
    pid == $6 || pid == $7 || pid == $8 || pid == $9) && (uint64_t)arg0 >= $2/
{
	printf("H %d %d %d %s %d %d %s\n", pid, tid, this->ns,
	    probename == "http-server-request-done" ? "server" : "client",
	    arg1, arg0, copyinstr(arg2));
}

dtrace:::END
{
	printf("Tracing ended.\n");
}
