#!/usr/sbin/dtrace -s
/*
 * http-wire.d  HTTP/1.x messages of one Node process read off its socket
 *              system calls, with no preparation of the process (no hook,
 *              no flag): the first bytes of each read() or write()/writev()
 *              on a socket that starts an HTTP message, with its time, for
 *              nodetrace to reassemble into requests (lib/http/wire.js).
 *              HTTPS from the pid provider on its OpenSSL's SSL_read and
 *              SSL_write.  DTrace for Linux 2.x (kernel BTF: curthread's
 *              file table).  Twin of http-wire.bt.
 *
 * USAGE: dtrace -s d-scripts/http-wire.d PID
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID  the process: every probe fires for it alone, in the kernel
 *
 * OPTIONAL PART: @tls (pid$1::SSL_read, SSL_write, SSL_free), left out where
 *   the process maps no OpenSSL that exports them: then HTTPS is not seen
 *   (a pid-provider probe that matches no function does not compile).
 *
 * OUTPUT: one length-prefixed record per event, as it happens (no batches:
 *   DTrace's own per-CPU buffers, read 10 times a second, are the batch):
 *     W KIND TID NS FD RET COPIED LEN BYTES   then a newline
 *   KIND rd (a read() returned), wr (a write() or writev() returned: its
 *   first iovec), cl (a socket seen before, closed: RET COPIED LEN 0); tr,
 *   tw, tf likewise for TLS (SSL_read, SSL_write returned; SSL_free), the
 *   SSL object's address in FD.  NS: timestamp (the kernel's monotonic
 *   time) at the return; RET: what the call returned (writev: the first
 *   iovec's length, at most); COPIED: how many bytes were asked for (the
 *   first 200 at most); BYTES: exactly LEN bytes, those copied up to a NUL.
 *   The length, not a separator, ends a record: nothing a peer sends makes
 *   a line or a field.  "Tracing ended." last.
 *
 * Which calls are copied: as http-wire.bt (on a socket, by the fd's inode
 *   mode; one whose first four bytes start an HTTP message, and up to 3
 *   more on the same fd and side while the head has not ended).  The state
 *   per fd is kept in fixed arrays of FDS entries, not in associative
 *   arrays (DTrace for Linux's associative arrays can move a value between
 *   keys when one is deleted: docs/programs.md#http-wire): a socket whose
 *   fd is FDS or more has its starting calls copied, its continuations and
 *   close not.  read, write, writev and close only: node uses no recvfrom,
 *   sendto or readv on its sockets (facts.md, "HTTP on the wire").
 *
 * Example output (test/targets/http-wire-server.js, curl then node's own
 *   client, then pipelined requests, DTrace for Linux 2.0, node 20; a
 *   record's bytes hold CRLFs, so it spans lines; abridged, whole in
 *   test/fixtures/dtrace-http-wire.out):
 *   Tracing HTTP on the wire... Hit Ctrl-C to end.
 *   W rd 27254 24626796165295 20 88 88 88 GET /fast/curl HTTP/1.1
 *   Host: 127.0.0.1:36503
 *   ...
 *   W wr 27254 24626798394951 20 125 125 125 HTTP/1.1 200 OK
 *   ...
 *   W cl 27254 24626956774702 20 0 0 0
 *   Tracing ended.
 *
 * Notes: docs/programs.md#http-wire.
 * 2026-11-27  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option strsize=256
#pragma D option switchrate=10hz
#pragma D option bufsize=4m

/* The bytes copied of a call: a request line and the first headers (as http-wire.bt). */
inline int PREFIX = 200;
/* The fds whose state (continuation, seen) is kept. */
inline int FDS = 65536;

/* Per fd and side (fd * 2 + 0 read, + 1 write): calls still to copy. */
char cont[131072];
/* Per fd: a call on it was copied (its close is an event). */
char seen[65536];

dtrace:::BEGIN
{
	printf("Tracing HTTP on the wire... Hit Ctrl-C to end.\n");
}

/* The buffer is read at the return: a read's bytes are there only then, a
 * write's are still there, and a write that failed (EAGAIN) sent nothing. */
syscall::read:entry
/pid == $1/
{
	self->rbuf = arg1;
	self->rfd = arg0;
}

syscall::read:return
/pid == $1/
{
	this->b = self->rbuf;
	this->fd = self->rfd;
	this->ret = (int64_t)arg1;
	this->kind = "rd";
	this->side = 0;
	this->go = this->b != 0 && this->ret > 0 && this->fd >= 0;
	self->rbuf = 0;
	self->rfd = 0;
}

syscall::write:entry
/pid == $1/
{
	self->wbuf = arg1;
	self->wfd = arg0;
}

syscall::write:return
/pid == $1/
{
	this->b = self->wbuf;
	this->fd = self->wfd;
	this->ret = (int64_t)arg1;
	this->kind = "wr";
	this->side = 1;
	this->go = this->b != 0 && this->ret > 0 && this->fd >= 0;
	self->wbuf = 0;
	self->wfd = 0;
}

syscall::writev:entry
/pid == $1 && arg2 > 0/
{
	self->vec = arg1;
	self->vfd = arg0;
}

/* writev: the first iovec (node's: the head; a small body with it). */
syscall::writev:return
/pid == $1/
{
	this->v = self->vec;
	this->fd = self->vfd;
	this->ret = (int64_t)arg1;
	this->kind = "wr";
	this->side = 1;
	this->go = this->v != 0 && this->ret > 0 && this->fd >= 0;
	self->vec = 0;
	self->vfd = 0;
}

syscall::writev:return
/pid == $1 && this->go/
{
	this->b = *(uint64_t *)copyin(this->v, 8);
	this->len = *(int64_t *)copyin(this->v + 8, 8);
	this->ret = this->ret < this->len ? this->ret : this->len;
	this->go = this->ret > 0;
}

/* From here, one set of clauses for every socket call: does it start an
 * HTTP message, or continue one whose head has not ended?  Each return's
 * first clause above sets this->go in the process, whatever it saw: a
 * clause-local variable keeps its value from an earlier firing, and these
 * probes fire for every process (hence pid == $1 below too). */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go/
{
	this->w = *(uint32_t *)copyin(this->b, 4);
	/* GET POST PUT HEAD DELE(TE) PATC(H) OPTI(ONS) CONN(ECT) TRAC(E) HTTP "PRI " */
	this->start = (this->w == 0x20544547 || this->w == 0x54534f50 || this->w == 0x20545550 ||
	    this->w == 0x44414548 || this->w == 0x454c4544 || this->w == 0x43544150 ||
	    this->w == 0x4954504f || this->w == 0x4e4e4f43 || this->w == 0x43415254 ||
	    this->w == 0x50545448 || this->w == 0x20495250);
	this->slot = this->fd * 2 + this->side;
	this->c = this->fd < FDS ? cont[this->slot] : 0;
	this->go = this->start || this->c > 0;
}

/* Only a socket (S_IFSOCK), read from the task's file table. */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go/
{
	this->go = (curthread->files->fdt->fd[this->fd]->f_inode->i_mode & 0xf000) == 0xc000;
}

syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go/
{
	this->n = this->ret < PREFIX ? this->ret : PREFIX;
	/* copyinstr(p, n) copies n - 1 bytes and a NUL: one more asked for. */
	this->s = copyinstr(this->b, this->n + 1);
	printf("W %s %d %d %d %d %d %d %s\n", this->kind, tid, timestamp, this->fd, this->ret,
	    this->n, strlen(this->s), this->s);
	this->end = this->ret >= 4 ? *(uint32_t *)copyin(this->b + this->ret - 4, 4) : 0;
}

/* The head ends in CRLF CRLF: no more continuations; a start allows 3. */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go && this->fd < FDS/
{
	seen[this->fd] = 1;
	cont[this->slot] = this->end == 0x0a0d0a0d ? 0 : this->start ? 3 : this->c > 1 ? this->c - 1 : 0;
}

/* A socket seen before, closed: its state ends (the fd may be reused). */
syscall::close:entry
/pid == $1 && arg0 >= 0 && arg0 < FDS && seen[arg0]/
{
	printf("W cl %d %d %d 0 0 0 \n", tid, timestamp, arg0);
	seen[arg0] = 0;
	cont[arg0 * 2] = 0;
	cont[arg0 * 2 + 1] = 0;
}

/* @tls begin */
/*
 * TLS: the process's OpenSSL takes and gives plaintext (node calls SSL_read
 * and SSL_write even with its memory BIOs: facts.md). Read at the return. No
 * fd behind the SSL object: it is the connection, in FD; SSL_free ends it.
 * Its state is kept by the SSL object's address, in associative arrays
 * (node calls OpenSSL on its main thread only).
 */
/* int64_t: with a char value, an associative array left DTrace for Linux
 * 2.0's aggregations empty (measured in a smaller program). */
int64_t trcont[uint64_t];
int64_t twcont[uint64_t];
int64_t tseen[uint64_t];

pid$1::SSL_read:entry
{
	self->trssl = arg0;
	self->trbuf = arg1;
}

pid$1::SSL_read:return
{
	this->b = self->trbuf;
	this->fd = self->trssl;
	this->ret = (int64_t)(int)arg1;
	this->kind = "tr";
	this->side = 0;
	this->go = this->b != 0 && this->ret > 0;
	self->trbuf = 0;
	self->trssl = 0;
}

pid$1::SSL_write:entry
{
	self->twssl = arg0;
	self->twbuf = arg1;
}

pid$1::SSL_write:return
{
	this->b = self->twbuf;
	this->fd = self->twssl;
	this->ret = (int64_t)(int)arg1;
	this->kind = "tw";
	this->side = 1;
	this->go = this->b != 0 && this->ret > 0;
	self->twbuf = 0;
	self->twssl = 0;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
/this->go/
{
	this->w = *(uint32_t *)copyin(this->b, 4);
	/* GET POST PUT HEAD DELE(TE) PATC(H) OPTI(ONS) CONN(ECT) TRAC(E) HTTP "PRI " */
	this->start = (this->w == 0x20544547 || this->w == 0x54534f50 || this->w == 0x20545550 ||
	    this->w == 0x44414548 || this->w == 0x454c4544 || this->w == 0x43544150 ||
	    this->w == 0x4954504f || this->w == 0x4e4e4f43 || this->w == 0x43415254 ||
	    this->w == 0x50545448 || this->w == 0x20495250);
	this->c = this->side ? twcont[this->fd] : trcont[this->fd];
	this->go = this->start || this->c > 0;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
/this->go/
{
	this->n = this->ret < PREFIX ? this->ret : PREFIX;
	this->s = copyinstr(this->b, this->n + 1);
	printf("W %s %d %d %d %d %d %d %s\n", this->kind, tid, timestamp, this->fd, this->ret,
	    this->n, strlen(this->s), this->s);
	this->end = this->ret >= 4 ? *(uint32_t *)copyin(this->b + this->ret - 4, 4) : 0;
	tseen[this->fd] = 1;
	this->c = this->end == 0x0a0d0a0d ? 0 : this->start ? 3 : this->c > 1 ? this->c - 1 : 0;
}

pid$1::SSL_read:return
/this->go/
{
	trcont[this->fd] = this->c;
}

pid$1::SSL_write:return
/this->go/
{
	twcont[this->fd] = this->c;
}

pid$1::SSL_free:entry
/tseen[arg0]/
{
	printf("W tf %d %d %d 0 0 0 \n", tid, timestamp, arg0);
	tseen[arg0] = 0;
	trcont[arg0] = 0;
	twcont[arg0] = 0;
}
/* @tls end */

/*
 * No count of the events at exit, as http-wire.bt's @events: with the @tls
 * part in the program, DTrace for Linux 2.0 printed a count() aggregation
 * as a random 64-bit number (measured; right without it).  What DTrace
 * could not hand over it says itself ("dtrace: N drops on CPU M").
 */
dtrace:::END
{
	printf("Tracing ended.\n");
}
