#!/usr/sbin/dtrace -s
/*
 * log-snoop.d  Snoop bunyan log records of live Node processes, including
 *              the debug and trace records their log level drops, from
 *              bunyan's log-trace ... log-fatal USDT probes: what `bunyan -p`
 *              runs, plus a mark on records longer than strsize.  DTrace:
 *              illumos/SmartOS, macOS, FreeBSD (DTrace for Linux 2.x runs it
 *              but cannot see the probes).  Twin of log-snoop.bt.
 *
 * USAGE: dtrace -s d-scripts/log-snoop.d PID|'*' [PROBES [PID2 ... PID8]]
 *        `nodetrace snoop` runs this same file and formats the records with
 *        bunyan's own formatter; `nodetrace snoop -n ...` prints the command.
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  TARGET  one PID, or '*': every process with bunyan's probes, also
 *               those that start while this runs ($$1)
 *   $2  PROBES  a probe-name glob ($$2): omitted or 'log-*' every level;
 *               'log-[!t]*' debug and up; 'log-[iwef]*' info and up;
 *               'log-[wef]*' warn and up; 'log-[ef]*' error and up; 'log-fatal'
 *   $3  PID2    another process (0: none)
 *   $4  PID3    likewise
 *   $5  PID4    likewise
 *   $6  PID5    likewise
 *   $7  PID6    likewise
 *   $8  PID7    likewise
 *   $9  PID8    likewise
 *
 * OUTPUT:
 *   R PID TID CUT LEN TEXT   then a newline; TEXT is exactly LEN bytes of the
 *                            record (with bunyan's own newline), CUT 1 if it
 *                            was longer than strsize (4k): only its first 4095
 *   records COUNT            at exit: records the probes saw
 *   Tracing ended.           END has run
 *
 * Example output (the format; not captured here: DTrace for Linux cannot
 * see these probes):
 *   Snooping bunyan records... Hit Ctrl-C to end.
 *   R 4242 1 0 125 {"name":"api","hostname":"web1","pid":4242,"level":20,"msg":"something went wrong","time":"2026-11-21T20:01:02.003Z","v":0}
 *   (an empty line: the record's own newline, then the line's)
 *
 * How it works: docs/snoop.md#how-it-works and docs/programs.md#log-snoop-and-log-snoop-whole.
 * 2026-11-21  nodetrace authors.
 */

#pragma D option quiet
#pragma D option zdefs
#pragma D option defaultargs
#pragma D option strsize=4k
#pragma D option switchrate=10hz

/*
 * No argument appears in a probe description: D refuses a description with
 * a macro variable that was not given ("Undefined macro variable in probe
 * description", even with -x defaultargs, on illumos and on DTrace for
 * Linux), so the PIDs and the level are predicates, and any number of
 * arguments works.  Every level's probe is enabled; a record of a level that
 * PROBES ($2) leaves out is dropped here (an unknown glob matches nothing).
 * The comparisons sit in the probes' clauses, not in BEGIN: DTrace for
 * Linux's BPF verifier refuses BEGIN with a chain of 4k-string comparisons.
 */
dtrace:::BEGIN
{
	printf("Snooping bunyan records... Hit Ctrl-C to end.\n");
}

bunyan*:::log-fatal { this->wanted = 1; }
bunyan*:::log-error { this->wanted = $$2 != "log-fatal"; }
bunyan*:::log-warn { this->wanted = $$2 != "log-fatal" && $$2 != "log-[ef]*"; }
bunyan*:::log-info
{
	this->wanted = $$2 != "log-fatal" && $$2 != "log-[ef]*" && $$2 != "log-[wef]*";
}
bunyan*:::log-debug { this->wanted = $$2 == "" || $$2 == "log-*" || $$2 == "log-[!t]*"; }
bunyan*:::log-trace { this->wanted = $$2 == "" || $$2 == "log-*"; }

bunyan*:::log-*
/this->wanted &&
 ($$1 == "*" || $$1 == "" || lltostr(pid) == $$1 || pid == $3 || pid == $4 ||
  pid == $5 || pid == $6 || pid == $7 || pid == $8 || pid == $9)/
{
	@records = count();
	this->s = copyinstr(arg0);
	this->len = strlen(this->s);
	/* Full copy: if the byte after it is not the NUL, the record was cut. */
	this->cut = this->len >= 4095 ? *(char *)copyin(arg0 + this->len, 1) != '\0' : 0;
	printf("R %d %d %d %d %s\n", pid, tid, this->cut, this->len, this->s);
}

dtrace:::END
{
	printa("records %@d\n", @records);
	/* Last, so that once this shows, END is done. */
	printf("Tracing ended.\n");
}
