#!/usr/sbin/dtrace -s
/*
 * log-snoop.d  Snoop bunyan log records of live Node processes, including
 *              the debug and trace records their log level drops, from
 *              bunyan's log-trace ... log-fatal USDT probes (one argument:
 *              the JSON record).  DTrace: illumos/SmartOS, macOS, FreeBSD,
 *              DTrace for Linux 2.x.  Twin of log-snoop.bt; what `bunyan -p`
 *              runs, plus a mark on records longer than strsize.
 *
 * USAGE: dtrace -s d-scripts/log-snoop.d PID|'*' [PROBES [PID2 ... PID8]]
 *
 *   PID|'*'  one process, or every process with bunyan probes ('*': also
 *            the ones that start while this runs, as with `bunyan -p '*'`).
 *   PROBES   which of bunyan's probes to enable, as a probe-name glob:
 *            omitted or 'log-*' for every level; 'log-[!t]*' debug and up;
 *            'log-[iwef]*' info and up; 'log-[wef]*' warn and up;
 *            'log-[ef]*' error and up; 'log-fatal'.  Only those probes are
 *            enabled, so the other levels keep costing nothing.
 *   PID2...  more processes (0: none).
 *
 *   `nodetrace snoop` runs this same file and formats its output with
 *   bunyan's own formatter:
 *     sudo nodetrace snoop '*'            sudo nodetrace snoop 4242 -l warn
 *   and `nodetrace snoop -n ...` prints the exact command line.  By hand,
 *   the article's one-liner is still the quickest look:
 *     dtrace -Z -x strsize=4k -x switchrate=10hz -qn \
 *         'bunyan*:::log-*{ printf("%s", copyinstr(arg0)); }' | bunyan
 *
 * OUTPUT:
 *   R PID TID CUT LEN TEXT   then a newline.  TEXT is exactly LEN bytes of
 *                            the record (with bunyan's own newline): the
 *                            length, not a separator, says where it ends, so
 *                            nothing the traced process writes in a record
 *                            can pass for another line.  CUT is 1 if the
 *                            record was longer than strsize (4k): TEXT is
 *                            then only its first 4095 bytes.
 *   records COUNT            at exit: records the probes saw
 *   Tracing ended.           END has run
 * and DTrace reports "dtrace: N drops on CPU M" on stderr when its buffer
 * fills: raise bufsize (-x bufsize=16m) or switchrate if it does.
 *
 * DTrace for Linux 2.0 cannot see these probes: it reads neither the
 * stapsdt notes that Linux USDT providers (nodetrace's, node-usdt) emit nor,
 * without CUSE, its own USDT.  There this script compiles and runs and shows
 * nothing; `nodetrace snoop --backend dtrace` refuses to run there and says
 * so.  Use log-snoop.bt (bpftrace) on Linux.
 *
 * -Z (zdefs): the probes may match no process yet.  A record is
 * copied in whole up to strsize; a longer one is never passed off as whole:
 * the byte after the copy is checked and CUT says so.
 *
 * OVERHEAD: one USDT probe per record of an enabled level; debug records that
 * bunyan drops are still built and serialised by bunyan while probes are
 * enabled.  Nothing is enabled once dtrace exits.
 *
 * Example output:
 *   Snooping bunyan records... Hit Ctrl-C to end.
 *   R 4242 1 0 125 {"name":"api","hostname":"web1","pid":4242,"level":20,"msg":"something went wrong","time":"2026-11-21T20:01:02.003Z","v":0}
 *   (an empty line: the record's own newline, then the line's)
 *
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
