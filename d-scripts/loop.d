#!/usr/sbin/dtrace -s
/*
 * loop.d  How long each turn of a Node process's event loop spends busy
 *         (running JavaScript and native callbacks) rather than waiting for
 *         I/O, as a histogram, and every stall over a threshold with when it
 *         ended; optionally the user stacks sampled during those stalls.
 *         Needs no preparation of the target.  DTrace for Linux 2.x (the
 *         loop waits in epoll there; libuv waits in port_getn on illumos and
 *         kevent on macOS/FreeBSD, not traced by this version).  Twin of
 *         loop.bt, whose header says why the wait's system calls and not
 *         uv__io_poll.
 *
 * USAGE: dtrace -s d-scripts/loop.d PID OVER_US STACKS
 *
 *   PID      the Node process; its loop runs on its main thread, whose
 *            thread ID is the PID on Linux
 *   OVER_US  stalls longer than this (microseconds) are printed one by one
 *   STACKS   1: sample the loop thread's user stack at 99 Hz while a turn
 *            has been busy for longer than OVER_US; 0: no sampling
 *
 * OUTPUT: as loop.bt's, with "wall" times (walltimestamp) instead of "mono":
 *   STALL wall END_NS BUSY_US, EARLY wall END_NS BUSY_US,
 *   OPEN wall START_NS BUSY_US E; then from END "Tracing ended.", each
 *   aggregation under its "@name" line (@busy_us, @busy_max_us, @turns,
 *   @busy_total_us, @traced_ns), "stall stacks:" and the stacks.
 *
 * RUN on DTrace for Linux 2.0 (test/dtrace-linux.test.js: the stalls of
 * test/targets/loop-stall.js, within a bucket). Not yet run on illumos,
 * macOS or FreeBSD. ustack() there names native frames only (mangled on
 * DTrace for Linux); JIT frames stay addresses.
 *
 * 2026-11-23  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs

int64_t busy_since;
int64_t busy_since_wall;
int64_t start;
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
/pid == $1 && tid == $1/
{
	busy_since = timestamp;
	busy_since_wall = walltimestamp;
	early = 0;
}

/* The loop waits again: the busy time of that turn is over. */
syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $1/
{
	this->busy_us = busy_since != 0 ? (timestamp - busy_since) / 1000 : 0;
	this->first = busy_since != 0 && early != 0;
	this->whole = busy_since != 0 && early == 0;
	early = 0;
	busy_since = 0;
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $1 && this->whole/
{
	@busy_us = quantize(this->busy_us);
	@busy_max_us = max(this->busy_us);
	@turns = count();
	@busy_total_us = sum(this->busy_us);
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $1 && this->whole && this->busy_us > $2/
{
	printf("STALL wall %d %d\n", walltimestamp, this->busy_us);
}

syscall::epoll_wait:entry,
syscall::epoll_pwait:entry
/pid == $1 && tid == $1 && this->first && this->busy_us > $2/
{
	printf("EARLY wall %d %d\n", walltimestamp, this->busy_us);
}

profile-99
/$3 != 0 && pid == $1 && tid == $1 && busy_since != 0 && (timestamp - busy_since) / 1000 > $2/
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
	printf("\nstall stacks:\n");
	printa(@stall_stacks);
}
