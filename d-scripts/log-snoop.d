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
 * -Z (zdefs): PID slots and '*' may match no process yet.  A record is
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

dtrace:::BEGIN
{
	printf("Snooping bunyan records... Hit Ctrl-C to end.\n");
}

bunyan$1:::$2, bunyan$3:::$2, bunyan$4:::$2, bunyan$5:::$2,
bunyan$6:::$2, bunyan$7:::$2, bunyan$8:::$2, bunyan$9:::$2
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
