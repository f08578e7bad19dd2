#!/usr/sbin/dtrace -s
/*
 * http-wire.d  HTTP/1.x of one Node process read off its socket calls and
 *              its OpenSSL, with no preparation of the process: each call on
 *              a connection it accepts or opens while traced, with its
 *              length and first bytes, as it happens, for nodetrace to
 *              follow by HTTP/1.1's framing (lib/http/wire.js).  DTrace for
 *              Linux 2.x (kernel BTF).  Twin of http-wire.bt.
 *
 * USAGE: dtrace -s http-wire.d PID
 *        `nodetrace http --backend dtrace -p PID` runs it; `-n` prints how.
 *
 * ARGUMENTS (lib/tracer/program-arguments.js)
 *   $1  PID  the process: every probe fires for it alone, in the kernel
 *
 * OUTPUT: one length-prefixed record per piece of a call:
 *     W KIND TID NS FD RET OFF ASKED LEN BYTES   then a newline
 *   (ASKED bytes at OFF copied, LEN of them up to a NUL: BYTES; KIND, FD,
 *   RET as http-wire.bt's).  The length, not a separator, ends a record:
 *   nothing a peer sends makes a line or a field.  Optional part @tls (the
 *   pid provider on SSL_*), left out where the process has no OpenSSL.
 *   Example: examples/http-wire_example.txt.
 *
 * Notes (how it differs from http-wire.bt, and why): docs/programs.md#http-wire.
 * 2026-11-27  nodetrace authors.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option strsize=2048
#pragma D option switchrate=10hz
#pragma D option bufsize=16m

/* Copies, from lib/http/wire-plan.js (test/http-wire-unit.test.js holds them):
 * a call's first PIECE bytes, HEAD_BYTES of one that starts with a start
 * word (in one piece: DTrace copies long strings), the first PIECE bytes of
 * each of a writev's first IOVECS iovecs where it has more than two. */
inline int PIECE = 199;
inline int HEAD_BYTES = 2000;
inline int IOVECS = 16;
/* KIND, from lib/http/wire.js EVENT. */
inline int READ = 1;
inline int WRITE = 2;
inline int CLOSE = 3;
inline int BEFORE = 4;
inline int UNFOLLOWED = 5;
inline int FIRST = 16;
inline int LAST = 32;
inline int TLS = 64;
/* What a connection is (conn[FD], tconn[SSL]), as in http-wire.bt. */
inline int NEW = 1;
inline int SERVER = 2;
inline int CLIENT = 3;
inline int OTHER = 4;
inline int OPENED_BEFORE = 5;
/* The fds whose state is kept, in a fixed array (below). */
inline int FDS = 65536;
/* The kernel's: a socket's mode, its families, TCP. */
inline int MODE_TYPE = 0xf000;
inline int MODE_SOCKET = 0xc000;
inline int FAMILY_INET = 2;
inline int FAMILY_INET6 = 10;
inline int PROTOCOL_TCP = 6;
/* A start line's first four bytes, little-endian (as in http-wire.bt). */
inline uint32_t W_GET = 0x20544547;
inline uint32_t W_POST = 0x54534f50;
inline uint32_t W_PUT = 0x20545550;
inline uint32_t W_HEAD = 0x44414548;
inline uint32_t W_DELE = 0x454c4544;
inline uint32_t W_PATC = 0x43544150;
inline uint32_t W_OPTI = 0x4954504f;
inline uint32_t W_CONN = 0x4e4e4f43;
inline uint32_t W_TRAC = 0x43415254;
inline uint32_t W_HTTP = 0x50545448;
inline uint32_t W_PRI = 0x20495250;
/* A status line's bytes 5 to 12: "1.1 101 ", "1.0 101 ". */
inline uint64_t STATUS_101 = 0x2031303120312e31;
inline uint64_t STATUS_101_1_0 = 0x2031303120302e31;

/*
 * Per fd, what its connection is: a fixed array, not an associative one
 * (DTrace for Linux's associative arrays can move a value between keys when
 * one is deleted: docs/programs.md#http-wire).  A socket whose fd is FDS or
 * more is never read: its accept or connect is said (UNFOLLOWED), for the
 * closing line to count.
 */
char conn[65536];

dtrace:::BEGIN
{
	printf("Tracing HTTP on the wire... Hit Ctrl-C to end.\n");
}

/* A connection is read from its start only: one accepted or opened while traced. */
syscall::accept4:return
/pid == $1 && (int64_t)arg1 >= 0 && arg1 < FDS/
{
	conn[arg1] = NEW;
}

syscall::connect:entry
/pid == $1 && (int)arg0 >= 0 && arg0 < FDS/
{
	conn[arg0] = NEW;
}

syscall::accept4:return
/pid == $1 && (int64_t)arg1 >= FDS/
{
	printf("W %d %d %d %d 0 0 0 0 \n", UNFOLLOWED, tid, timestamp, arg1);
}

syscall::connect:entry
/pid == $1 && (int)arg0 >= FDS/
{
	printf("W %d %d %d %d 0 0 0 0 \n", UNFOLLOWED, tid, timestamp, arg0);
}

syscall::close:entry
/pid == $1 && (int)arg0 >= 0 && arg0 < FDS && (conn[arg0] == SERVER || conn[arg0] == CLIENT)/
{
	printf("W %d %d %d %d 0 0 0 0 \n", CLOSE, tid, timestamp, arg0);
}

syscall::close:entry
/pid == $1 && (int)arg0 >= 0 && arg0 < FDS/
{
	conn[arg0] = 0;
}

/* One pending entry per call: its buffer (writev: its iovecs), its fd, which. */
syscall::read:entry
/pid == $1/
{
	self->buf = arg1;
	self->fd = arg0;
	self->side = READ;
	self->nv = 0;
}

syscall::write:entry
/pid == $1/
{
	self->buf = arg1;
	self->fd = arg0;
	self->side = WRITE;
	self->nv = 0;
}

syscall::writev:entry
/pid == $1/
{
	self->buf = arg1;
	self->fd = arg0;
	self->side = WRITE;
	self->nv = arg2;
}

/*
 * One exit path for the three, in clauses they share.  The first sets
 * this->go for the target's calls whatever it saw: a clause-local variable
 * keeps its value from an earlier firing, and these probes fire for every
 * process (hence pid == $1 in each clause too).
 */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1/
{
	this->ret = (int64_t)arg1;
	this->fd = self->fd;
	this->side = self->side;
	this->nv = self->nv;
	this->vec = self->buf;
	this->st = self->buf != 0 && this->fd >= 0 && this->fd < FDS ? conn[this->fd] : OTHER;
	this->go = self->buf != 0 && this->ret > 0 && this->fd >= 0 && this->fd < FDS &&
	    this->st != OTHER && this->st != OPENED_BEFORE;
	/* The first buffer: writev's first iovec (node's: the head). */
	this->base = self->buf;
	this->len = this->ret;
	self->buf = 0;
}

syscall::writev:return
/pid == $1 && this->go/
{
	this->base = *(uint64_t *)copyin(this->vec, 8);
	this->len = *(int64_t *)copyin(this->vec + 8, 8);
	this->len = this->len < this->ret ? this->len : this->ret;
}

/* Its first four bytes, where they matter: a connection's first call, a
 * call longer than a piece (a long head?), an answer. */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go/
{
	this->answer = (this->st == SERVER && this->side == WRITE) || (this->st == CLIENT && this->side == READ);
	this->w = (this->st == 0 || this->st == NEW || this->len > PIECE || this->answer) && this->len >= 4 ?
	    *(uint32_t *)copyin(this->base, 4) : 0;
	this->start = this->w == W_GET || this->w == W_POST || this->w == W_PUT || this->w == W_HEAD ||
	    this->w == W_DELE || this->w == W_PATC || this->w == W_OPTI || this->w == W_CONN ||
	    this->w == W_TRAC || this->w == W_HTTP || this->w == W_PRI;
	this->k = this->st == NEW ? (this->start ? this->side | FIRST : 0) : this->st == 0 ? 0 : this->side;
}

/* Its first call: HTTP/1 from a start word; else never read, once it has
 * read (an HTTP/2 server writes its SETTINGS before it reads the preface). */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go && this->st == NEW && (this->start || this->side == READ)/
{
	conn[this->fd] = this->start ? (this->side == READ ? SERVER : CLIENT) : OTHER;
}

/* Not seen opened: read only from its first byte (a request read first,
 * where TCP says nothing came before it), else said once. */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go && this->st == 0 && this->start &&
 (curthread->files->fdt->fd[this->fd]->f_inode->i_mode & MODE_TYPE) == MODE_SOCKET/
{
	this->k = BEFORE;
	conn[this->fd] = OPENED_BEFORE;
	this->sk = ((struct socket *)curthread->files->fdt->fd[this->fd]->private_data)->sk;
	this->tcp = this->side == READ && this->sk->sk_protocol == PROTOCOL_TCP &&
	    (this->sk->__sk_common.skc_family == FAMILY_INET || this->sk->__sk_common.skc_family == FAMILY_INET6);
}

syscall::read:return
/pid == $1 && this->go && this->st == 0 && this->k == BEFORE && this->tcp/
{
	this->tp = (struct tcp_sock *)this->sk;
	/* Where this call's first byte lies in what the peer sent: 0 (1 when its FIN was read too) is the start. */
	this->from = ((uint64_t)this->tp->copied_seq - (uint64_t)this->tp->rcv_nxt + this->tp->bytes_received -
	    (uint64_t)this->ret) & 0xffffffff;
	this->k = this->from <= 1 ? READ | FIRST : BEFORE;
	conn[this->fd] = this->from <= 1 ? SERVER : OPENED_BEFORE;
}

/* Its last call read: HTTP/2's preface first, or a 101 answered. */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go && this->k != 0 && (((this->k & FIRST) && this->w == W_PRI) ||
 (this->answer && this->w == W_HTTP && this->len >= 13 &&
  (*(uint64_t *)copyin(this->base + 5, 8) == STATUS_101 || *(uint64_t *)copyin(this->base + 5, 8) == STATUS_101_1_0)))/
{
	this->k = this->k | LAST;
	conn[this->fd] = OTHER;
}

/* The first piece: of a call that starts with a start word, its head (up
 * to HEAD_BYTES, in one piece); of others, PIECE bytes.  copyinstr(p, n)
 * copies n - 1 bytes and a NUL: one more asked for. */
syscall::read:return,
syscall::write:return,
syscall::writev:return
/pid == $1 && this->go && this->k != 0/
{
	this->cap = this->start && (this->k & BEFORE) == 0 ? HEAD_BYTES : PIECE;
	this->n = this->len < this->cap ? this->len : this->cap;
	this->s = copyinstr(this->base, this->n + 1);
	this->ns = timestamp;
	printf("W %d %d %d %d %d 0 %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->n, strlen(this->s), this->s);
	/* The next iovecs, where a writev has more than two (node's chunked bodies). */
	this->more = this->nv > 2 && (this->k & BEFORE) == 0;
	this->nv = this->nv < IOVECS ? this->nv : IOVECS;
	this->at = this->len;
	this->i = 1;
}

/*
 * The next iovecs: one clause each, the same each time, IOVECS - 1 of them
 * (D has no loops; test/http-wire-unit.test.js counts them).
 */
syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

syscall::writev:return
/pid == $1 && this->go && this->k != 0 && this->more && this->i < this->nv && this->at < this->ret/
{
	this->ib = *(uint64_t *)copyin(this->vec + this->i * 16, 8);
	this->il = *(int64_t *)copyin(this->vec + this->i * 16 + 8, 8);
	this->n = this->il < PIECE ? this->il : PIECE;
	this->n = this->n < this->ret - this->at ? this->n : this->ret - this->at;
	this->s = copyinstr(this->ib, this->n + 1);
	printf("W %d %d %d %d %d %d %d %d %s\n", this->k, tid, this->ns, this->fd, this->ret, this->at, this->n, strlen(this->s), this->s);
	this->at += this->il;
	this->i++;
}

/* @tls begin */
/*
 * HTTPS: node's OpenSSL takes and gives plaintext (facts.md); the SSL object
 * is the connection (FD holds its address, KIND has TLS), new where node
 * gives it its BIOs (SSL_set_bio), ended by SSL_free.  Its state in fixed
 * arrays by a hash of its address, not in an associative array: on DTrace
 * for Linux 2.0.1 each copyinstr() zeroed such an array's values (measured:
 * an SSL object's 1 read 0 after the copy of its first call).  A slot holds
 * one object: another that hashes there takes it, and the first is then not
 * seen opened (said once, not read).
 */
inline int TLS_SLOTS = 65536;
uint64_t tobj[65536];
char tconn[65536];

pid$1::SSL_set_bio:entry
{
	this->slot = (arg0 >> 4) & (TLS_SLOTS - 1);
	tobj[this->slot] = arg0;
	tconn[this->slot] = NEW;
}

pid$1::SSL_read:entry
{
	self->tssl = arg0;
	self->tbuf = arg1;
	self->tside = READ;
}

pid$1::SSL_write:entry
{
	self->tssl = arg0;
	self->tbuf = arg1;
	self->tside = WRITE;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
{
	this->ret = (int64_t)(int)arg1;
	this->ssl = self->tssl;
	this->side = self->tside;
	this->base = self->tbuf;
	this->slot = (this->ssl >> 4) & (TLS_SLOTS - 1);
	this->st = tobj[this->slot] == this->ssl ? tconn[this->slot] : 0;
	this->go = this->base != 0 && this->ret > 0 && this->st != OTHER && this->st != OPENED_BEFORE;
	self->tbuf = 0;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
/this->go/
{
	this->answer = (this->st == SERVER && this->side == WRITE) || (this->st == CLIENT && this->side == READ);
	this->w = (this->st == 0 || this->st == NEW || this->ret > PIECE || this->answer) && this->ret >= 4 ?
	    *(uint32_t *)copyin(this->base, 4) : 0;
	this->start = this->w == W_GET || this->w == W_POST || this->w == W_PUT || this->w == W_HEAD ||
	    this->w == W_DELE || this->w == W_PATC || this->w == W_OPTI || this->w == W_CONN ||
	    this->w == W_TRAC || this->w == W_HTTP || this->w == W_PRI;
	/* Set up before tracing began: said once, not read. */
	this->k = this->st == NEW ? (this->start ? this->side | FIRST | TLS : 0) :
	    this->st == 0 ? (this->start ? BEFORE | TLS : 0) : this->side | TLS;
	this->next = this->st == NEW ? (this->start ? (this->side == READ ? SERVER : CLIENT) : (this->side == READ ? OTHER : NEW)) :
	    this->st == 0 && this->start ? OPENED_BEFORE : this->st;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
/this->go && this->k != 0 && (((this->k & FIRST) && this->w == W_PRI) ||
 (this->answer && this->w == W_HTTP && this->ret >= 13 &&
  (*(uint64_t *)copyin(this->base + 5, 8) == STATUS_101 || *(uint64_t *)copyin(this->base + 5, 8) == STATUS_101_1_0)))/
{
	this->k = this->k | LAST;
	this->next = OTHER;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
/this->go && this->next != this->st/
{
	tobj[this->slot] = this->next ? this->ssl : 0;
	tconn[this->slot] = this->next;
}

pid$1::SSL_read:return,
pid$1::SSL_write:return
/this->go && this->k != 0/
{
	this->cap = this->start && (this->k & BEFORE) == 0 ? HEAD_BYTES : PIECE;
	this->n = this->ret < this->cap ? this->ret : this->cap;
	this->s = copyinstr(this->base, this->n + 1);
	printf("W %d %d %d %d %d 0 %d %d %s\n", this->k, tid, timestamp, this->ssl, this->ret, this->n, strlen(this->s), this->s);
}

pid$1::SSL_free:entry
{
	this->slot = (arg0 >> 4) & (TLS_SLOTS - 1);
	this->st = tobj[this->slot] == arg0 ? tconn[this->slot] : 0;
}

pid$1::SSL_free:entry
/this->st == SERVER || this->st == CLIENT/
{
	printf("W %d %d %d %d 0 0 0 0 \n", CLOSE | TLS, tid, timestamp, arg0);
}

pid$1::SSL_free:entry
/this->st != 0/
{
	tobj[this->slot] = 0;
	tconn[this->slot] = 0;
}
/* @tls end */

/*
 * No count of the calls at exit, as http-wire.bt's @nN: with the @tls part
 * in the program, DTrace for Linux 2.0 printed a count() aggregation as a
 * random 64-bit number (measured; right without it).  What DTrace could not
 * hand over it says itself ("dtrace: N drops on CPU M").
 */
dtrace:::END
{
	printf("Tracing ended.\n");
}
