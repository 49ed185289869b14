/* SPDX-License-Identifier: MIT */
/*
 * coll_io.c - collective data access (MPI-3.1 13.4.3-13.4.5): two-phase
 * I/O through aggregators, as one state machine behind the blocking
 * calls (start, then wait), the nonblocking ones (MPI_File_iwrite_all...)
 * and the split ones (begin starts, end waits).
 *
 * The protocol, per collective call, on the file's own communicator:
 *
 *   1. Ranges.  An allgather of each rank's (first offset, end, bytes,
 *      extents).  From it every rank takes the same decision:
 *        - independent: every rank moves its own extents (rw.c) when
 *          the hint romio_cb_read/romio_cb_write says "disable", in
 *          atomic mode (where rw.c's locks give the atomicity), or, when
 *          it says "automatic", when the ranks' ranges do not interleave:
 *          each rank's region is then written by the rank itself in large
 *          requests, which is what two-phase would do at the cost of
 *          a copy;
 *        - two-phase otherwise.
 *   2. Domains.  [lowest offset, highest end) is cut into one contiguous
 *      file domain per aggregator (io.h: one per host by default, the
 *      hint cb_nodes), aligned to striping_unit when it is set.  Each
 *      domain is moved in cycles of cb_buffer_size bytes; the number of
 *      cycles is the largest domain's, the same everywhere.
 *   3. Each cycle, for each aggregator's window of that cycle:
 *        a. an alltoall of (pieces, bytes) that each rank has in each
 *           aggregator's window (only aggregators receive non-zero);
 *        b. each rank sends each aggregator the list of its pieces (file
 *           offset, length) and, for a write, their data: a contiguous
 *           run of its stream, since its stream's order is its file
 *           order; a long message lands straight in the aggregator's
 *           receive buffer;
 *        c. a writing aggregator sorts the pieces by offset; if they cover
 *           their region without a gap it writes them with pwritev
 *           straight from the receive buffers; otherwise it reads the
 *           region under an fcntl write lock, copies the pieces in
 *           (in order of offset, and of rank at the same offset), and
 *           writes it back in one pwrite.  A reading
 *           aggregator reads the region (preadv into the reply buffers
 *           when it has no gap), and sends each rank its pieces' bytes,
 *           which land in that rank's stream.
 *   4. An allreduce of the error classes: every rank returns the same
 *      error (but a read that each rank did on its own: its error is its
 *      own, and no rank waits for the others' file system calls).
 *      A read's count is what lies before the file's end.
 *
 * Every step is nonblocking (Ialltoall, Isend/Irecv, Iallreduce, tested
 * from the request's progress step): the program's other work goes on
 * while a nonblocking collective moves.  The collective operations of one
 * file run one at a time, in the order they were started, which is the
 * same on every rank (the standard's rule for collectives): a queue on
 * the file, whose head alone advances.  Messages use the file's private
 * communicator, so they never match the program's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"

#define TAG_PIECES 1
#define TAG_DATA 2

enum coll_state {
	CS_QUEUED,     /* waiting for the collectives before it on the file */
	CS_RANGES,     /* the allgather of ranges */
	CS_COUNTS,     /* a cycle's alltoall of counts */
	CS_MOVE,       /* a cycle's pieces and data */
	CS_REPLY,      /* a read cycle's replies from the aggregators */
	CS_ERR,        /* the allreduce of the error classes */
	CS_DONE,
};

/* A piece at an aggregator: where it goes, where its data is. */
struct piece {
	int64_t off;
	uint64_t len;
	unsigned char *data;
	int src;
};

/* One rank's walk through its extents, for one aggregator. */
struct cursor {
	uint64_t ext;  /* extent */
	uint64_t in;   /* bytes of it already taken */
	uint64_t spos; /* the stream position of that byte */
};

struct coll {
	struct io_access a;
	struct mpi_shim_request *req;
	struct coll *qnext;
	enum coll_state state;
	int p, me, agg_index; /* size, rank, index among aggregators or -1 */
	int two_phase;
	int err, errall;
	/* what the file said at the start: a MPI_File_set_view or
	 * set_info while the operation is queued changes none of it */
	struct io_hints hints;
	int naggs, *aggs, atomic;
	unsigned char *user_stream; /* a two-phase read's, while it reads privately */

	MPI_Request inner[1];
	/* the cycle's point-to-point requests: the pieces and a write's data
	 * (move), a read's replies (reply) */
	struct reqlist {
		MPI_Request *r;
		int n, max;
	} move, reply;

	int64_t mine[4];
	int64_t *ranges; /* 4 per rank */
	int64_t gmin, gmax, base, dsize;
	int64_t ncycles, cycle;

	struct cursor *cur; /* per aggregator */
	/* the cycle: per rank (as sender: to each rank; as aggregator: from) */
	int *scount; /* 2 per rank: pieces, bytes that this rank sends */
	int *rcount; /* 2 per rank: what it receives as an aggregator */
	int64_t *spieces; /* this cycle's pieces to all aggregators, pairs */
	int64_t *rpieces; /* as an aggregator: all received pieces, pairs */
	unsigned char *rdata; /* as an aggregator: data received, or replies */
	uint64_t *sstart;  /* per aggregator: this cycle's stream position */
};

static void coll_free(struct coll *c)
{
	free(c->ranges);
	free(c->aggs);
	free(c->cur);
	free(c->scount);
	free(c->rcount);
	free(c->spieces);
	free(c->rpieces);
	free(c->rdata);
	free(c->sstart);
	free(c->move.r);
	free(c->reply.r);
	free(c);
}

/* The aggregator window of aggregator a in cycle c: [lo, hi). */
static void window(const struct coll *c, int a, int64_t cyc, int64_t *lo, int64_t *hi)
{
	int64_t dlo = c->base + (int64_t)a * c->dsize, dhi = dlo + c->dsize;
	uint64_t cb = c->hints.cb_buffer_size;

	if (dlo < c->gmin)
		dlo = c->gmin;
	if (dhi > c->gmax)
		dhi = c->gmax;
	*lo = dlo + cyc * (int64_t)cb;
	*hi = *lo + (int64_t)cb;
	if (*hi > dhi)
		*hi = dhi;
	if (*lo > dhi)
		*lo = dhi;
}

static int add_req(struct reqlist *l, MPI_Request r)
{
	if (l->n == l->max) {
		int n = l->max ? 2 * l->max : 16;
		MPI_Request *p = realloc(l->r, sizeof(*p) * (size_t)n);

		if (!p)
			return MPI_ERR_NO_MEM;
		l->r = p;
		l->max = n;
	}
	l->r[l->n++] = r;
	return MPI_SUCCESS;
}

/* 1 when every request of reqs[] is complete (they are released). */
static int all_done(MPI_Request *reqs, int n, int *err)
{
	int flag = 0, rc;

	if (!n)
		return 1;
	rc = PMPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
	if (rc) {
		*err = rc;
		return 1;
	}
	return flag;
}

/* --- the plan --- */

static int plan(struct coll *c)
{
	enum io_switch cb = c->a.dir == IO_WRITE ? c->hints.cb_write : c->hints.cb_read;
	int64_t lo = INT64_MAX, hi = INT64_MIN, total = 0, maxcyc = 0;
	uint64_t cbs = c->hints.cb_buffer_size, su = c->hints.striping_unit;
	int i, a, interleave = 0, prev = -1;

	for (i = 0; i < c->p; i++) {
		const int64_t *r = &c->ranges[4 * i];

		if (!r[2])
			continue;
		total += r[2];
		if (r[0] < lo)
			lo = r[0];
		if (r[1] > hi)
			hi = r[1];
	}
	/* do the ranges interleave? (sorted by start, an end past the next start) */
	{
		int *order = malloc(sizeof(int) * (size_t)c->p), n = 0, j;

		if (!order)
			return MPI_ERR_NO_MEM;
		for (i = 0; i < c->p; i++)
			if (c->ranges[4 * i + 2])
				order[n++] = i;
		/* insertion sort by start: p is small next to the data */
		for (i = 1; i < n; i++) {
			int k = order[i];

			for (j = i; j > 0 && c->ranges[4 * order[j - 1]] > c->ranges[4 * k]; j--)
				order[j] = order[j - 1];
			order[j] = k;
		}
		for (i = 0; i < n; i++) {
			if (prev >= 0 && c->ranges[4 * prev + 1] > c->ranges[4 * order[i]])
				interleave = 1;
			prev = order[i];
		}
		free(order);
	}
	c->two_phase = total > 0 && !c->atomic && cb != IO_DISABLE &&
		       (cb == IO_ENABLE || interleave);
	if (!c->two_phase)
		return MPI_SUCCESS;
	c->gmin = lo;
	c->gmax = hi;
	c->base = su ? lo - lo % (int64_t)su : lo;
	c->dsize = (hi - c->base + c->naggs - 1) / c->naggs;
	if (su && c->dsize % (int64_t)su)
		c->dsize += (int64_t)su - c->dsize % (int64_t)su;
	if (c->dsize <= 0)
		c->dsize = 1;
	for (a = 0; a < c->naggs; a++) {
		int64_t wlo, whi, n;

		window(c, a, 0, &wlo, &whi);
		{
			int64_t dlo = c->base + (int64_t)a * c->dsize, dhi = dlo + c->dsize;

			if (dlo < c->gmin)
				dlo = c->gmin;
			if (dhi > c->gmax)
				dhi = c->gmax;
			n = dhi > dlo ? (dhi - dlo + (int64_t)cbs - 1) / (int64_t)cbs : 0;
		}
		if (n > maxcyc)
			maxcyc = n;
	}
	c->ncycles = maxcyc;
	c->agg_index = -1;
	for (a = 0; a < c->naggs; a++)
		if (c->aggs[a] == c->me)
			c->agg_index = a;
	c->cur = calloc((size_t)(unsigned)c->naggs, sizeof(*c->cur));
	c->scount = calloc(2 * (size_t)(unsigned)c->p, sizeof(int));
	c->rcount = calloc(2 * (size_t)(unsigned)c->p, sizeof(int));
	c->sstart = calloc((size_t)(unsigned)c->naggs, sizeof(uint64_t));
	if (!c->cur || !c->scount || !c->rcount || !c->sstart)
		return MPI_ERR_NO_MEM;
	/* each aggregator's cursor: the first extent that ends past its domain's start */
	{
		uint64_t k = 0, spos = 0;

		for (a = 0; a < c->naggs; a++) {
			int64_t dlo = c->base + (int64_t)a * c->dsize;

			if (dlo < c->gmin)
				dlo = c->gmin;
			while (k < c->a.n && c->a.ext[k].off + (int64_t)c->a.ext[k].len <= dlo) {
				spos += c->a.ext[k].len;
				k++;
			}
			c->cur[a].ext = k;
			c->cur[a].in = k < c->a.n && c->a.ext[k].off < dlo ?
					       (uint64_t)(dlo - c->a.ext[k].off) : 0;
			c->cur[a].spos = spos + c->cur[a].in;
		}
	}
	return MPI_SUCCESS;
}

/* --- a cycle --- */

/* This rank's pieces in every aggregator's window of this cycle: counts
 * into scount, the pairs into spieces, the cursors advanced. */
static int cycle_pieces(struct coll *c)
{
	uint64_t cap = 0, n = 0;
	int a;

	memset(c->scount, 0, 2 * sizeof(int) * (size_t)c->p);
	free(c->spieces);
	c->spieces = NULL;
	for (a = 0; a < c->naggs; a++) {
		struct cursor *cu = &c->cur[a];
		int64_t lo, hi;
		int np = 0;
		uint64_t bytes = 0;

		window(c, a, c->cycle, &lo, &hi);
		c->sstart[a] = cu->spos;
		while (cu->ext < c->a.n && lo < hi) {
			const struct io_extent *e = &c->a.ext[cu->ext];
			int64_t start = e->off + (int64_t)cu->in;
			uint64_t len;

			if (start >= hi)
				break;
			len = e->len - cu->in;
			if (start + (int64_t)len > hi)
				len = (uint64_t)(hi - start);
			if (n + 2 > cap) {
				int64_t *p;

				cap = cap ? 2 * cap : 32;
				p = realloc(c->spieces, cap * sizeof(int64_t));
				if (!p)
					return MPI_ERR_NO_MEM;
				c->spieces = p;
			}
			c->spieces[n++] = start;
			c->spieces[n++] = (int64_t)len;
			np++;
			bytes += len;
			cu->in += len;
			cu->spos += len;
			if (cu->in == e->len) {
				cu->ext++;
				cu->in = 0;
			}
		}
		c->scount[2 * c->aggs[a]] = np;
		c->scount[2 * c->aggs[a] + 1] = (int)bytes;
	}
	return MPI_SUCCESS;
}

/* After the counts: post the pieces and data (and a read's reply receives). */
static int cycle_post(struct coll *c)
{
	MPI_File fh = c->a.fh;
	uint64_t pairs = 0, rbytes = 0, rpairs = 0;
	MPI_Request r;
	int a, i, rc;

	c->move.n = c->reply.n = 0;
	/* as a sender: to each aggregator */
	for (a = 0; a < c->naggs; a++) {
		int dst = c->aggs[a], np = c->scount[2 * dst], nb = c->scount[2 * dst + 1];

		if (!np)
			continue;
		if ((rc = PMPI_Isend(c->spieces + pairs, 2 * np, MPI_INT64_T, dst, TAG_PIECES,
				     fh->comm, &r)) ||
		    (rc = add_req(&c->move, r)))
			return rc;
		pairs += 2 * (uint64_t)np;
		if (c->a.dir == IO_WRITE) {
			rc = PMPI_Isend(c->a.stream + c->sstart[a], nb, MPI_BYTE, dst, TAG_DATA,
					fh->comm, &r);
			if (rc || (rc = add_req(&c->move, r)))
				return rc;
		} else {
			rc = PMPI_Irecv(c->a.stream + c->sstart[a], nb, MPI_BYTE, dst, TAG_DATA,
					fh->comm, &r);
			if (rc || (rc = add_req(&c->reply, r)))
				return rc;
		}
	}
	/* as an aggregator: from each rank */
	if (c->agg_index < 0)
		return MPI_SUCCESS;
	for (i = 0; i < c->p; i++) {
		rpairs += 2 * (uint64_t)c->rcount[2 * i];
		rbytes += (uint64_t)c->rcount[2 * i + 1];
	}
	free(c->rpieces);
	free(c->rdata);
	c->rpieces = malloc((rpairs ? rpairs : 1) * sizeof(int64_t));
	c->rdata = malloc(rbytes ? rbytes : 1);
	if (!c->rpieces || !c->rdata)
		return MPI_ERR_NO_MEM;
	rpairs = rbytes = 0;
	for (i = 0; i < c->p; i++) {
		int np = c->rcount[2 * i], nb = c->rcount[2 * i + 1];

		if (!np)
			continue;
		if ((rc = PMPI_Irecv(c->rpieces + rpairs, 2 * np, MPI_INT64_T, i, TAG_PIECES,
				     fh->comm, &r)) ||
		    (rc = add_req(&c->move, r)))
			return rc;
		if (c->a.dir == IO_WRITE) {
			if ((rc = PMPI_Irecv(c->rdata + rbytes, nb, MPI_BYTE, i, TAG_DATA, fh->comm,
					     &r)) ||
			    (rc = add_req(&c->move, r)))
				return rc;
		}
		rpairs += 2 * (uint64_t)np;
		rbytes += (uint64_t)nb;
	}
	return MPI_SUCCESS;
}

static int piece_cmp(const void *x, const void *y)
{
	const struct piece *a = x, *b = y;

	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->src - b->src;
}

/* The aggregator's pieces of this cycle, sorted by offset; data points
 * into rdata (a write's received data, a read's replies). */
static int cycle_list(struct coll *c, struct piece **out, uint64_t *n_out)
{
	uint64_t n = 0, k = 0, bytes = 0;
	struct piece *p;
	int i, j;

	for (i = 0; i < c->p; i++)
		n += (uint64_t)c->rcount[2 * i];
	p = malloc((n ? n : 1) * sizeof(*p));
	if (!p)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < c->p; i++) {
		for (j = 0; j < c->rcount[2 * i]; j++, k++) {
			p[k].off = c->rpieces[2 * k];
			p[k].len = (uint64_t)c->rpieces[2 * k + 1];
			p[k].data = c->rdata + bytes;
			p[k].src = i;
			bytes += p[k].len;
		}
	}
	qsort(p, n, sizeof(*p), piece_cmp);
	*out = p;
	*n_out = n;
	return MPI_SUCCESS;
}

/* 1 if the sorted pieces follow each other without gap or overlap. */
static int gapless(const struct piece *p, uint64_t n)
{
	uint64_t i;

	for (i = 1; i < n; i++)
		if (p[i].off != p[i - 1].off + (int64_t)p[i - 1].len)
			return 0;
	return 1;
}

/* pwritev or preadv of gapless pieces, IOV_MAX at a time. */
static int vector_io(int fd, struct piece *p, uint64_t n, int write)
{
	struct iovec iov[IOV_MAX];
	uint64_t i = 0;

	while (i < n) {
		uint64_t k = 0, len = 0, done = 0;
		int64_t off = p[i].off;

		while (i + k < n && k < IOV_MAX && len < (1u << 30)) {
			iov[k].iov_base = p[i + k].data;
			iov[k].iov_len = p[i + k].len;
			len += p[i + k].len;
			k++;
		}
		while (done < len) {
			/* the first iovec not yet fully moved */
			uint64_t skip = done, first = 0;
			ssize_t r;

			while (skip >= iov[first].iov_len) {
				skip -= iov[first].iov_len;
				first++;
			}
			iov[first].iov_base = (char *)iov[first].iov_base + skip;
			iov[first].iov_len -= skip;
			r = write ? pwritev(fd, iov + first, (int)(k - first), off + (int64_t)done) :
				    preadv(fd, iov + first, (int)(k - first), off + (int64_t)done);
			iov[first].iov_base = (char *)iov[first].iov_base - skip;
			iov[first].iov_len += skip;
			if (r < 0) {
				if (errno == EINTR)
					continue;
				return mpi_shim_io_errclass(errno);
			}
			if (r == 0) {
				if (write)
					return MPI_ERR_NO_SPACE;
				/* past the end of the file: zeros */
				for (; first < k; first++) {
					memset((char *)iov[first].iov_base + skip, 0,
					       iov[first].iov_len - skip);
					skip = 0;
				}
				break;
			}
			done += (uint64_t)r;
		}
		i += k;
	}
	return MPI_SUCCESS;
}

/* The aggregator's file work of a write cycle. */
static int agg_write(struct coll *c)
{
	MPI_File fh = c->a.fh;
	struct piece *p;
	uint64_t n, i, got;
	int64_t lo, hi;
	unsigned char *buf;
	int rc;

	if ((rc = cycle_list(c, &p, &n)) || !n) {
		free(p);
		return rc;
	}
	if (gapless(p, n)) {
		rc = vector_io(fh->fd, p, n, 1);
		free(p);
		return rc;
	}
	lo = p[0].off;
	hi = lo;
	for (i = 0; i < n; i++)
		if (p[i].off + (int64_t)p[i].len > hi)
			hi = p[i].off + (int64_t)p[i].len;
	if (!fh->can_read) {
		/* no read access for sieving: piece by piece, in rank order */
		for (i = 0; i < n && !rc; i++)
			rc = mpi_shim_io_pwrite(fh->fd, p[i].data, p[i].len, p[i].off);
		free(p);
		return rc;
	}
	buf = malloc((size_t)(hi - lo));
	if (!buf) {
		free(p);
		return MPI_ERR_NO_MEM;
	}
	if (!(rc = mpi_shim_io_lock(fh->fd, F_WRLCK, lo, (uint64_t)(hi - lo)))) {
		rc = mpi_shim_io_pread(fh->fd, buf, (uint64_t)(hi - lo), lo, &got);
		if (!rc) {
			/* pieces in order of offset, and of rank where they overlap */
			memset(buf + got, 0, (uint64_t)(hi - lo) - got);
			for (i = 0; i < n; i++)
				memcpy(buf + (p[i].off - lo), p[i].data, p[i].len);
			rc = mpi_shim_io_pwrite(fh->fd, buf, (uint64_t)(hi - lo), lo);
		}
		mpi_shim_io_lock(fh->fd, F_UNLCK, lo, (uint64_t)(hi - lo));
	}
	free(buf);
	free(p);
	return rc;
}

/* The aggregator's file work of a read cycle: rdata becomes the replies
 * (each rank's pieces' bytes, ranks in order), then sent. */
static int agg_read(struct coll *c)
{
	MPI_File fh = c->a.fh;
	struct piece *p;
	uint64_t n, i, got, bytes = 0;
	int64_t lo, hi;
	MPI_Request r;
	int rc, k;

	if ((rc = cycle_list(c, &p, &n)))
		return rc;
	if (n) {
		if (gapless(p, n)) {
			rc = vector_io(fh->fd, p, n, 0);
		} else {
			unsigned char *buf;

			lo = p[0].off;
			hi = lo;
			for (i = 0; i < n; i++)
				if (p[i].off + (int64_t)p[i].len > hi)
					hi = p[i].off + (int64_t)p[i].len;
			buf = malloc((size_t)(hi - lo));
			if (!buf) {
				free(p);
				return MPI_ERR_NO_MEM;
			}
			rc = mpi_shim_io_pread(fh->fd, buf, (uint64_t)(hi - lo), lo, &got);
			if (!rc) {
				memset(buf + got, 0, (uint64_t)(hi - lo) - got);
				for (i = 0; i < n; i++)
					memcpy(p[i].data, buf + (p[i].off - lo), p[i].len);
			}
			free(buf);
		}
	}
	free(p);
	/* the replies go even after an error: every rank waits for them */
	for (k = 0; k < c->p; k++) {
		int nb = c->rcount[2 * k + 1];

		if (!c->rcount[2 * k])
			continue;
		if (PMPI_Isend(c->rdata + bytes, nb, MPI_BYTE, k, TAG_DATA, fh->comm, &r) ||
		    add_req(&c->reply, r))
			return MPI_ERR_INTERN;
		bytes += (uint64_t)nb;
	}
	return rc;
}

/* --- the state machine --- */

static void coll_dequeue(struct coll *c)
{
	MPI_File fh = c->a.fh;

	if (fh->coll_head == c) {
		fh->coll_head = c->qnext;
		if (!fh->coll_head)
			fh->coll_tail = NULL;
	}
}

/* A read's count: what of its extents lies before the end of the file. */
static void read_count(struct coll *c)
{
	struct stat st;
	uint64_t i, done = 0;

	if (fstat(c->a.fh->fd, &st))
		return;
	for (i = 0; i < c->a.n; i++) {
		const struct io_extent *e = &c->a.ext[i];

		if (e->off >= st.st_size)
			break;
		if (e->off + (int64_t)e->len > st.st_size) {
			done += (uint64_t)(st.st_size - e->off);
			break;
		}
		done += e->len;
	}
	c->a.done = done;
}

static int start_cycle(struct coll *c)
{
	int rc;

	if (c->cycle == c->ncycles) {
		if (c->a.dir == IO_READ)
			read_count(c);
		else
			c->a.done = c->a.bytes;
		return 1;
	}
	if ((rc = cycle_pieces(c)))
		return -rc;
	if ((rc = PMPI_Ialltoall(c->scount, 2, MPI_INT, c->rcount, 2, MPI_INT, c->a.fh->comm,
				 &c->inner[0])))
		return -rc;
	c->state = CS_COUNTS;
	return 0;
}

static int start_err(struct coll *c)
{
	int rc;

	c->state = CS_ERR;
	if ((rc = PMPI_Iallreduce(&c->err, &c->errall, 1, MPI_INT, MPI_MAX, c->a.fh->comm,
				  &c->inner[0]))) {
		c->errall = rc;
		c->state = CS_DONE;
	}
	return 0;
}

/* The next cycle, or, after the last one or a failure, the agreement on
 * the error. */
static void next_cycle(struct coll *c)
{
	int rc = start_cycle(c);

	if (rc < 0)
		c->err = -rc;
	if (rc)
		start_err(c);
}

/* Advance c as far as it can go without waiting: 0 not done yet. */
static int coll_advance(struct coll *c)
{
	MPI_File fh = c->a.fh;
	int rc, err = 0;

	for (;;) {
		switch (c->state) {
		case CS_QUEUED:
			if (fh->coll_head != c)
				return 0;
			c->ranges = malloc(4 * sizeof(int64_t) * (size_t)c->p);
			if (!c->ranges) {
				c->err = MPI_ERR_NO_MEM;
				c->state = CS_DONE;
				c->errall = MPI_ERR_NO_MEM;
				break;
			}
			c->mine[0] = c->a.n ? c->a.ext[0].off : 0;
			c->mine[1] = c->a.n ? c->a.ext[c->a.n - 1].off +
						      (int64_t)c->a.ext[c->a.n - 1].len :
					      0;
			c->mine[2] = (int64_t)c->a.bytes;
			c->mine[3] = (int64_t)c->a.n;
			if ((rc = PMPI_Iallgather(c->mine, 4, MPI_INT64_T, c->ranges, 4,
						  MPI_INT64_T, fh->comm, &c->inner[0]))) {
				c->err = c->errall = rc;
				c->state = CS_DONE;
				break;
			}
			c->state = CS_RANGES;
			break;
		case CS_RANGES:
			if (!all_done(c->inner, 1, &err))
				return 0;
			if (err || (err = plan(c))) {
				c->err = err;
				start_err(c);
				break;
			}
			if (!c->two_phase) {
				/* Each moves its own.  A write still ends with
				 * the agreement, so that when the call returns
				 * every process's data is in the file (programs
				 * ask the size, or read, right after); a read
				 * changes nothing for the others, and ends at
				 * once with its own outcome, as romio. */
				mpi_shim_io_indep(&c->a, UINT64_MAX);
				c->err = c->a.err;
				if (c->a.dir == IO_WRITE) {
					start_err(c);
				} else {
					c->errall = c->err;
					c->state = CS_DONE;
				}
				break;
			}
			/* A read of the program's own buffer goes through a
			 * private one: the aggregators send zeros past the
			 * end of the file, and the program's bytes there
			 * must stay as they are. */
			if (c->a.dir == IO_READ && !c->a.own_stream && c->a.bytes) {
				c->user_stream = c->a.stream;
				c->a.stream = malloc(c->a.bytes);
				if (!c->a.stream) {
					c->a.stream = c->user_stream;
					c->user_stream = NULL;
					c->err = MPI_ERR_NO_MEM;
					start_err(c);
					break;
				}
			}
			next_cycle(c);
			break;
		case CS_COUNTS:
			if (!all_done(c->inner, 1, &err))
				return 0;
			if (err || (err = cycle_post(c))) {
				/* a failure here leaves the others waiting:
				 * nothing better can be done than to say it */
				c->err = err;
				start_err(c);
				break;
			}
			c->state = CS_MOVE;
			break;
		case CS_MOVE:
			if (!all_done(c->move.r, c->move.n, &err))
				return 0;
			c->move.n = 0;
			if (err)
				c->err = err;
			if (c->agg_index >= 0 && c->a.dir == IO_WRITE) {
				if ((rc = agg_write(c)) && !c->err)
					c->err = rc;
			} else if (c->a.dir == IO_READ) {
				if (c->agg_index >= 0 && (rc = agg_read(c)) && !c->err)
					c->err = rc;
				c->state = CS_REPLY;
				break;
			}
			c->cycle++;
			next_cycle(c);
			break;
		case CS_REPLY:
			if (!all_done(c->reply.r, c->reply.n, &err))
				return 0;
			c->reply.n = 0;
			if (err && !c->err)
				c->err = err;
			c->cycle++;
			next_cycle(c);
			break;
		case CS_ERR:
			if (!all_done(c->inner, 1, &err))
				return 0;
			if (err)
				c->errall = err;
			c->state = CS_DONE;
			break;
		case CS_DONE:
			return 1;
		}
	}
}

static int coll_step(struct mpi_shim_request *r)
{
	struct coll *c = r->state;
	int rc;

	if (!coll_advance(c))
		return 0;
	coll_dequeue(c);
	/* the next collective on the file may go on at once */
	c->a.err = c->errall ? c->errall : c->err;
	if (c->user_stream) {
		if (!c->a.err)
			memcpy(c->user_stream, c->a.stream, c->a.done);
		free(c->a.stream);
		c->a.stream = c->user_stream;
		c->user_stream = NULL;
	}
	rc = mpi_shim_io_access_done(&c->a, &r->status);
	return rc ? -rc : 1;
}

static void coll_release(struct mpi_shim_request *r)
{
	coll_free(r->state);
	r->state = NULL;
}

static const struct mpi_shim_req_ops coll_ops = {
	.progress = coll_step,
	.release = coll_release,
};

int mpi_shim_io_coll_start(struct io_access *a, MPI_Request *req)
{
	MPI_File fh = a->fh;
	struct coll *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		mpi_shim_io_access_done(a, NULL);
		return MPI_ERR_NO_MEM;
	}
	c->a = *a;
	c->p = fh->comm->size;
	c->me = fh->comm->rank;
	c->agg_index = -1;
	c->state = CS_QUEUED;
	c->hints = fh->hints;
	c->atomic = fh->atomic;
	c->naggs = fh->naggs;
	c->aggs = malloc(sizeof(int) * (size_t)fh->naggs);
	if (!c->aggs) {
		mpi_shim_io_access_done(a, NULL);
		free(c);
		return MPI_ERR_NO_MEM;
	}
	memcpy(c->aggs, fh->aggs, sizeof(int) * (size_t)fh->naggs);
	if ((rc = mpi_shim_request_progress_new(fh->comm, &coll_ops, c, req))) {
		mpi_shim_io_access_done(&c->a, NULL);
		free(c);
		return rc;
	}
	c->req = *req;
	if (fh->coll_tail)
		((struct coll *)fh->coll_tail)->qnext = c;
	else
		fh->coll_head = c;
	fh->coll_tail = c;
	mpi_shim_progress_step(*req);
	return MPI_SUCCESS;
}
