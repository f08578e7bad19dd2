#!/usr/sbin/dtrace -s
/*
 * loop.d  How long each turn of a Node process's event loop spends busy
 *         rather than waiting for I/O, as a histogram, every stall over a
 *         threshold with when it ended, and optionally the user stacks
 *         sampled during those stalls.  The target needs no preparation.
 *         DTrace for Linux 2.x (where libuv waits in epoll).  Twin of loop.bt.
 *
 * USAGE: dtrace -s d-scripts/loop.d PID OVER_US STACKS TID
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID      the Node process
 *   $2  OVER_US  a stall is a turn busy for longer than this (microseconds)
 *   $3  STACKS   1: sample the loop's user stack at 99 Hz during stalls; 0: no
 *   $4  TID      the thread whose loop is measured: the PID (the main
 *                thread), or a worker_threads Worker's thread
 *
 * Example output (test/targets/loop-stall.js, 200 ms every second, DTrace
 * for Linux 2.0, abridged):
 *   Tracing the event loop of PID 11605... Hit Ctrl-C to end.
 *   STALL wall 1795647590773000840 200906
 *   STALL wall 1795647591774276872 200330
 *   Tracing ended.
 *   @busy_us
 *              value  ------------- Distribution ------------- count
 *                  2 |@@@@@@@@@@@@@@@                          3
 *             131072 |@@@@@@@@@@@@@@@@@@@@                     4
 *   @turns
 *                   8
 *
 * The output lines (as loop.bt's, with wall times), other platforms:
 * docs/programs.md#loop.
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs

int64_t busy_since;
int64_t busy_since_wall;
int64_t start;
int64_t measured_from;
int64_t measured_to;
int early;

dtrace:::BEGIN
{
	start = timestamp;
	busy_since = timestamp;
	busy_since_wall = walltimestamp;
	early = 1;
	printf("Tracing the event loop of PID %d... Hit Ctrl-C to end.\n", $1);
}

syscall::epoll_wait:return,
syscall::epoll_pwait:return
/pid == $1 && tid == $4/
{
	busy_since = timestamp;
	busy_since_wall = walltimestamp;
	early = 0;
}

/* The loop waits again: the busy time of that turn is over. */
syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $4/
{
	this->busy_us = busy_since != 0 ? (timestamp - busy_since) / 1000 : 0;
	this->first = busy_since != 0 && early != 0;
	this->whole = busy_since != 0 && early == 0;
	this->since = busy_since;
	early = 0;
	busy_since = 0;
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $4 && this->whole/
{
	/* The span of the whole turns seen, first start to last end. */
	measured_from = measured_from != 0 ? measured_from : this->since;
	measured_to = timestamp;
	@busy_us = quantize(this->busy_us);
	@busy_max_us = max(this->busy_us);
	@turns = count();
	@busy_total_us = sum(this->busy_us);
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $4 && this->whole && this->busy_us > $2/
{
	printf("STALL wall %d %d\n", walltimestamp, this->busy_us);
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $4 && this->first && this->busy_us > $2/
{
	printf("EARLY wall %d %d\n", walltimestamp, this->busy_us);
}

profile-99
/$3 != 0 && pid == $1 && tid == $4 && busy_since != 0 && (timestamp - busy_since) / 1000 > $2/
{
	@stall_stacks[ustack()] = count();
}

dtrace:::END
/busy_since != 0/
{
	printf("OPEN wall %d %d %d\n", busy_since_wall, (timestamp - busy_since) / 1000, early);
}

dtrace:::END
{
	/* First: only the maps, printed below, follow it. */
	printf("Tracing ended.\n");
	@traced_ns = sum(timestamp - start);
	/* The time whole turns were seen in: what their busy time is a share of. */
	@turns_ns = sum(measured_from != 0 ? measured_to - measured_from : 0);
	printf("\n@busy_us\n");
	printa(@busy_us);
	printf("\n@busy_max_us\n");
	printa(@busy_max_us);
	printf("\n@turns\n");
	printa(@turns);
	printf("\n@busy_total_us\n");
	printa(@busy_total_us);
	printf("\n@traced_ns\n");
	printa(@traced_ns);
	printf("\n@turns_ns\n");
	printa(@turns_ns);
	printf("\nstall stacks:\n");
	printa(@stall_stacks);
}
