#!/usr/sbin/dtrace -s
/*
 * http.d  One line per HTTP request a Node process served or made (http,
 *         https, Express/Fastify on them, http.request, fetch), with its
 *         status and latency: nhttpsnoop for today's Node, whose own DTrace
 *         probes are gone.  DTrace: illumos/SmartOS, macOS, FreeBSD (the
 *         provider is dtrace-provider's, which `node -r nodetrace/register`
 *         uses there), DTrace for Linux 2.x (USDT probes of nodetrace's
 *         probe library).  Twin of http.bt, whose header has the details.
 *
 * USAGE: dtrace -Z -s d-scripts/http.d PID MIN_US [PID...]
 *
 *   PID      only this process; 0: every process with the probes
 *   MIN_US   only requests that took at least this long (microseconds)
 *   PID...   up to 7 more processes to trace beside PID
 *
 * OUTPUT: as http.bt's, with "wall" times (walltimestamp) in place of the
 * kernel's monotonic nsecs:
 *   U PID TID NS URL, E PID TID NS ERROR (status 0 only), then
 *   H PID TID NS server|client STATUS LATENCY_US METHOD
 *
 * NOT YET RUN ON A DTRACE HOST; `nodetrace http` runs http.bt only so far.
 *
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option strsize=200

dtrace:::BEGIN
{
	printf("Tracing HTTP requests... Hit Ctrl-C to end.\n");
}

nodetrace*:::http-server-request-done,
nodetrace*:::http-client-request-done
/($1 == 0 || pid == $1 || pid == $3 || pid == $4 || pid == $5 ||
    pid == $6 || pid == $7 || pid == $8 || pid == $9) && arg0 >= $2/
{
	this->ns = walltimestamp;
	printf("U %d %d %d %s\n", pid, tid, this->ns, copyinstr(arg3));
}

nodetrace*:::http-server-request-done,
nodetrace*:::http-client-request-done
/($1 == 0 || pid == $1 || pid == $3 || pid == $4 || pid == $5 ||
    pid == $6 || pid == $7 || pid == $8 || pid == $9) && arg0 >= $2 && arg1 == 0/
{
	printf("E %d %d %d %s\n", pid, tid, this->ns, copyinstr(arg4));
}

nodetrace*:::http-server-request-done,
nodetrace*:::http-client-request-done
/($1 == 0 || pid == $1 || pid == $3 || pid == $4 || pid == $5 ||
    pid == $6 || pid == $7 || pid == $8 || pid == $9) && arg0 >= $2/
{
	printf("H %d %d %d %s %d %d %s\n", pid, tid, this->ns,
	    probename == "http-server-request-done" ? "server" : "client",
	    arg1, arg0, copyinstr(arg2));
}

dtrace:::END
{
	printf("Tracing ended.\n");
}
