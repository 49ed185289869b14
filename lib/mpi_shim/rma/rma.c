// SPDX-License-Identifier: MIT
/*
 * rma.c - one-sided communication (MPI-3.1 11.3-11.5): put, get, the
 * accumulates and atomics, their request-based forms, and the
 * synchronisation calls, by active messages that work on every BIP
 * driver.  A direct window (a window of one host, rma_shm.c) uses these
 * calls' checks and epochs, and hands the operations and the lock words
 * to rma_shm.c; its only messages are those of MPI_Win_post and
 * MPI_Win_complete.
 *
 * The protocol.  Every message of a window travels on the point-to-point
 * context of the window's own communicator (rma.h), so none can meet the
 * program's.  A message is one header (struct rma_hdr), then for a
 * derived target datatype its blocks (struct rma_block), then data:
 *
 *   origin -> target, tag RMA_TAG_REQUEST:
 *     PUT, ACC         target type, data packed from the origin buffer
 *     GET              target type
 *     GET_ACC          target type, data (none for MPI_NO_OP)
 *     CAS              predefined type, the origin value then the compare value
 *     LOCK, UNLOCK     the lock type
 *     POST, COMPLETE   (target -> origin for POST) no data, no answer
 *   target -> origin, tag = the reply_tag of the request:
 *     ANSWER           err: the MPI error class; data: what GET, GET_ACC
 *                      and CAS read, packed as the target type
 *
 * The target serves requests from a progress hook (registered while the
 * process has windows), in arrival order, one at a time, so the
 * accumulates on one target are atomic per element whatever their origin.
 * It checks every request before touching memory: the window id, the
 * length of the message against its header, the datatype, the epoch (the
 * origin holds a lock on this process, or a fence epoch is open, or the
 * origin is in the group of MPI_Win_post), and that every byte the
 * operation reaches lies inside the window (an attached region for a
 * dynamic window).  A request that fails a check is answered with the
 * error (MPI_ERR_RMA_SYNC, MPI_ERR_RMA_RANGE...) and nothing is written
 * or read.  The origin source of a request is the one BIP reports, never a
 * field of the message.
 *
 * Every request but POST and COMPLETE is answered; an operation is
 * complete, at origin and target, when its answer arrives, so flush,
 * unlock, fence and complete wait for the answers of the operations they
 * close.  The origin checks the range of a window made by create,
 * allocate or allocate_shared itself, at the call (it knows every rank's
 * size); an error a target answers is reported by the call that closes
 * the operation.  A lock is granted in the order the requests came:
 * shared locks together, an exclusive one alone.
 */
#include <stdlib.h>
#include <string.h>

#include "rma.h"
#include "datatype.h"
#include "p2p.h"

#define RMA_TAG_REQUEST 0
#define RMA_TAG_FIRST_REPLY 1
#define RMA_TAG_LAST_REPLY 0x3fffffff

struct rma_hdr {
	uint32_t kind;      /* enum rma_kind */
	uint32_t win;       /* the window's id: its communicator's context id */
	uint32_t reply_tag; /* the tag of the answer; 0: none */
	int32_t err;        /* ANSWER: the MPI error class */
	int64_t disp;       /* target displacement, in the target's disp_unit
			       (a dynamic window: an address) */
	uint64_t count;     /* target count */
	uint32_t op;        /* the accumulate's operation (mpi_shim_op_index) */
	uint32_t type;      /* the target type's predefined type (enum
			       mpi_shim_basic), or its basic type if derived */
	uint32_t nblocks;   /* derived target type: its blocks, after the header */
	uint32_t lock;      /* LOCK: MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
	int64_t lb, extent; /* derived target type */
	uint64_t bytes;     /* data bytes after the blocks */
};
_Static_assert(sizeof(struct rma_hdr) == 72, "the header is 72 bytes on the wire");

/* One block of one element of a derived target type. */
struct rma_block {
	int64_t disp;
	uint64_t len;
};
_Static_assert(sizeof(struct rma_block) == 16, "a block is 16 bytes on the wire");

/* An operation in flight at its origin. */
struct rma_op {
	int target;
	struct mpi_shim_request *send, *recv;
	void *msg, *answer;
	size_t answer_len;
	/* where what the target reads goes */
	void *result;
	size_t result_count;
	MPI_Datatype result_type;
	int answered;
	int err;
	struct mpi_shim_request *req; /* MPI_Rput...: the program's request */
	struct rma_op *next;
};

/* A request being received at its target. */
struct rma_in {
	struct mpi_shim_request *recv;
	void *buf;
	int whole; /* 0: no memory for the message; only its header is kept */
	struct rma_in *next;
};

/* A message being sent (answers, POST, COMPLETE). */
struct rma_out {
	struct mpi_shim_request *send;
	void *buf;
	struct rma_out *next;
};

/* A lock request waiting at its target. */
struct rma_lock_wait {
	int origin;
	int type;
	uint32_t reply_tag;
	struct rma_lock_wait *next;
};

static struct {
	struct mpi_shim_win *wins;
	int hook;
	int running;
} rma = { .hook = -1 };

static void rma_progress(void);
static const struct mpi_shim_req_ops rma_req_ops;

/* --- sending --- */

/* Send len bytes of buf (malloc'd, taken) to rank on win's context. */
static int rma_send(MPI_Win win, int rank, int tag, void *buf, size_t len,
		    struct mpi_shim_request **send_p)
{
	struct mpi_shim_request *r = mpi_shim_req_alloc();
	int rc;

	if (!r)
		return MPI_ERR_NO_MEM;
	rc = mpi_shim_send_start(r, buf, len, MPI_BYTE, rank, tag, win->comm, win->comm->ctx,
				 MPI_SHIM_MODE_STANDARD);
	if (rc) {
		mpi_shim_req_free(r);
		return rc;
	}
	r->active = 1;
	*send_p = r;
	return MPI_SUCCESS;
}

/* A message that nothing waits for: sent, and forgotten when it has left. */
static int rma_send_forget(MPI_Win win, int rank, int tag, void *buf, size_t len)
{
	struct rma_out *o = malloc(sizeof(*o));
	int rc;

	if (!o) {
		free(buf);
		return MPI_ERR_NO_MEM;
	}
	if ((rc = rma_send(win, rank, tag, buf, len, &o->send))) {
		free(buf);
		free(o);
		return rc;
	}
	o->buf = buf;
	o->next = win->out;
	win->out = o;
	return MPI_SUCCESS;
}

/* A header alone (control messages and answers without data). */
static int rma_send_hdr(MPI_Win win, int rank, int tag, uint32_t kind, int err, uint32_t lock,
			uint32_t reply_tag)
{
	struct rma_hdr *h = calloc(1, sizeof(*h));

	if (!h)
		return MPI_ERR_NO_MEM;
	h->kind = kind;
	h->win = win->id;
	h->err = err;
	h->lock = lock;
	h->reply_tag = reply_tag;
	return rma_send_forget(win, rank, tag, h, sizeof(*h));
}

/* --- the target --- */

/* 1 if origin may reach this process's memory now. */
static int rma_exposed_to(MPI_Win win, int origin)
{
	return win->fence_open || win->granted[origin] || win->exposed[origin];
}

/* Grant the waiting locks that can be, in order. */
static void rma_grant_locks(MPI_Win win)
{
	struct rma_lock_wait *w;

	while ((w = win->lock_waits)) {
		if (w->type == MPI_LOCK_EXCLUSIVE ? win->excl_holder >= 0 || win->nshared :
						    win->excl_holder >= 0)
			return;
		if (w->type == MPI_LOCK_EXCLUSIVE)
			win->excl_holder = w->origin;
		else
			win->nshared++;
		win->granted[w->origin] = (uint8_t)(w->type == MPI_LOCK_EXCLUSIVE ? 2 : 1);
		rma_send_hdr(win, w->origin, (int)w->reply_tag, RMA_ANSWER, MPI_SUCCESS, 0, 0);
		win->lock_waits = w->next;
		if (!win->lock_waits)
			win->lock_waits_tail = NULL;
		free(w);
	}
}

/*
 * The derived target datatypes a target rebuilt, most recent first: a
 * program that repeats an operation with one derived type costs one
 * rebuild.  An entry is the type's description as the header and blocks
 * give it, and the type made from it.
 */
#define RMA_TYPE_CACHE 8

struct rma_type_entry {
	uint32_t type, nblocks;
	int64_t lb, extent;
	struct rma_block *blocks;
	MPI_Datatype t;
};

struct rma_type_cache {
	int n;
	struct rma_type_entry e[RMA_TYPE_CACHE];
};

static void rma_type_entry_clear(struct rma_type_entry *e)
{
	PMPI_Type_free(&e->t);
	free(e->blocks);
}

static void rma_type_cache_free(MPI_Win win)
{
	struct rma_type_cache *c = win->types;
	int i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		rma_type_entry_clear(&c->e[i]);
	free(c);
	win->types = NULL;
}

/* The entry describing h and b, moved to the front; NULL if none. */
static struct rma_type_entry *rma_type_cache_find(MPI_Win win, const struct rma_hdr *h,
						  const struct rma_block *b)
{
	struct rma_type_cache *c = win->types;
	struct rma_type_entry hit;
	int i;

	if (!c)
		return NULL;
	for (i = 0; i < c->n; i++) {
		struct rma_type_entry *e = &c->e[i];

		if (e->type != h->type || e->nblocks != h->nblocks || e->lb != h->lb ||
		    e->extent != h->extent || memcmp(e->blocks, b, sizeof(*b) * h->nblocks))
			continue;
		hit = *e;
		memmove(&c->e[1], &c->e[0], sizeof(*e) * (size_t)i);
		c->e[0] = hit;
		return &c->e[0];
	}
	return NULL;
}

/* Keep t as the type of h and b (the least recent entry goes when the
 * cache is full); 0, or -1 without memory (t stays the caller's). */
static int rma_type_cache_add(MPI_Win win, const struct rma_hdr *h, const struct rma_block *b,
			      MPI_Datatype t)
{
	struct rma_type_cache *c = win->types;
	struct rma_block *copy;

	if (!c && !(c = win->types = calloc(1, sizeof(*c))))
		return -1;
	copy = malloc(sizeof(*b) * h->nblocks);
	if (!copy)
		return -1;
	memcpy(copy, b, sizeof(*b) * h->nblocks);
	if (c->n == RMA_TYPE_CACHE)
		rma_type_entry_clear(&c->e[--c->n]);
	memmove(&c->e[1], &c->e[0], sizeof(c->e[0]) * (size_t)c->n);
	c->e[0] = (struct rma_type_entry){ h->type, h->nblocks, h->lb, h->extent, copy, t };
	c->n++;
	return 0;
}

/*
 * The target datatype of a request: predefined, or rebuilt from its blocks
 * (an hindexed type of its basic type, resized to its lb and extent), or
 * found among those rebuilt before.  MPI_SUCCESS with *t_p and *own_p (1:
 * the caller frees *t_p after use, the cache had no room), or an error.
 */
static int rma_type_of(MPI_Win win, const struct rma_hdr *h, const struct rma_block *b,
		       MPI_Datatype *t_p, int *own_p)
{
	MPI_Datatype basic = mpi_shim_datatype_of_kind(h->type), t0, t;
	struct rma_type_entry *e;
	MPI_Aint *disps;
	int *lens;
	uint32_t i;
	int rc;

	if (basic == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	*own_p = 0;
	if (!h->nblocks) {
		*t_p = basic;
		return MPI_SUCCESS;
	}
	if (h->nblocks > (uint32_t)INT32_MAX)
		return MPI_ERR_TYPE;
	if ((e = rma_type_cache_find(win, h, b))) {
		*t_p = e->t;
		return MPI_SUCCESS;
	}
	disps = malloc(sizeof(*disps) * h->nblocks);
	lens = malloc(sizeof(*lens) * h->nblocks);
	rc = disps && lens ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	for (i = 0; !rc && i < h->nblocks; i++) {
		/* A block is whole elements of basic (pairs included: the
		 * origin sends those as runs of whole pairs). */
		if (b[i].len % basic->size || b[i].len / basic->size > INT32_MAX)
			rc = MPI_ERR_TYPE;
		disps[i] = (MPI_Aint)b[i].disp;
		lens[i] = (int)(b[i].len / basic->size);
	}
	if (!rc)
		rc = PMPI_Type_create_hindexed((int)h->nblocks, lens, disps, basic, &t0);
	free(disps);
	free(lens);
	if (rc)
		return rc;
	rc = PMPI_Type_create_resized(t0, (MPI_Aint)h->lb, (MPI_Aint)h->extent, &t);
	PMPI_Type_free(&t0);
	if (rc)
		return rc;
	if ((rc = PMPI_Type_commit(&t))) {
		PMPI_Type_free(&t);
		return rc;
	}
	if (rma_type_cache_add(win, h, b, t))
		*own_p = 1;
	*t_p = t;
	return MPI_SUCCESS;
}

/* The bytes [lo, hi) around an element origin that count elements of t reach. */
int mpi_shim_rma_span(MPI_Datatype t, uint64_t count, int64_t *lo_p, int64_t *hi_p)
{
	int64_t last, lo, hi;

	if (!count) {
		*lo_p = *hi_p = 0;
		return 0;
	}
	if (__builtin_mul_overflow((int64_t)(count - 1), (int64_t)t->extent, &last))
		return -1;
	lo = (int64_t)t->true_lb + (last < 0 ? last : 0);
	if (__builtin_add_overflow((int64_t)t->true_lb + (int64_t)t->true_extent,
				   last > 0 ? last : 0, &hi))
		return -1;
	*lo_p = lo;
	*hi_p = hi;
	return 0;
}

/*
 * Where count elements of t at displacement disp are in this process's
 * window, every byte inside it: MPI_SUCCESS and *addr_p, or
 * MPI_ERR_RMA_RANGE.
 */
static int rma_target_addr(MPI_Win win, int64_t disp, uint64_t count, MPI_Datatype t,
			   char **addr_p)
{
	struct rma_region *g;
	int64_t lo = 0, hi = 0, off;

	if (mpi_shim_rma_span(t, count, &lo, &hi))
		return MPI_ERR_RMA_RANGE;
	if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
		if (!count) {
			*addr_p = (char *)(uintptr_t)disp;
			return MPI_SUCCESS;
		}
		int64_t a, z;
		uint64_t at;

		/* Every byte in attached memory: regions attached side by side
		 * may hold one access together. */
		if (__builtin_add_overflow(disp, lo, &a) || __builtin_add_overflow(disp, hi, &z) ||
		    a < 0)
			return MPI_ERR_RMA_RANGE;
		for (at = (uint64_t)a; at < (uint64_t)z;) {
			for (g = win->regions; g; g = g->next)
				if (at >= g->base && at - g->base < g->size)
					break;
			if (!g)
				return MPI_ERR_RMA_RANGE;
			at = g->base + g->size;
		}
		*addr_p = (char *)(uintptr_t)disp;
		return MPI_SUCCESS;
	}
	if (__builtin_mul_overflow(disp, (int64_t)win->disp_unit, &off))
		return MPI_ERR_RMA_RANGE;
	if (count && (__builtin_add_overflow(off, lo, &lo) || __builtin_add_overflow(off, hi, &hi) ||
		      lo < 0 || hi > (int64_t)win->size))
		return MPI_ERR_RMA_RANGE;
	*addr_p = (char *)win->base + off;
	return MPI_SUCCESS;
}

/* 1 if p is as aligned as the elements of t need. */
static int rma_aligned(MPI_Datatype t, const void *p)
{
	size_t align = t->basic && t->basic->size < 16 ? t->basic->size : 16;

	return align && !((uintptr_t)p & (align - 1));
}

int mpi_shim_rma_apply(enum rma_kind kind, MPI_Op op, char *addr, uint64_t count,
		       MPI_Datatype t, const void *data_, size_t need, void *old)
{
	const char *data = data_;
	int64_t lo = 0, hi = 0;
	MPI_Aint tlb, text;
	char *tmp, cas_old[64];

	if (kind == RMA_CAS && !old) {
		if (need > sizeof(cas_old))
			return MPI_ERR_TYPE;
		old = cas_old;
	}
	if (old)
		mpi_shim_datatype_pack(addr, count, t, 0, old, need);
	switch (kind) {
	case RMA_PUT:
		mpi_shim_datatype_unpack(data, need, addr, count, t, 0);
		return MPI_SUCCESS;
	case RMA_CAS:
		if (!memcmp(old, data + need, need))
			mpi_shim_datatype_unpack(data, need, addr, 1, t, 0);
		return MPI_SUCCESS;
	case RMA_ACC:
	case RMA_GET_ACC:
		break;
	default:
		return MPI_SUCCESS;
	}
	if (mpi_shim_op_is_no_op(op) || !count)
		return MPI_SUCCESS;
	if (mpi_shim_op_is_replace(op)) {
		mpi_shim_datatype_unpack(data, need, addr, count, t, 0);
		return MPI_SUCCESS;
	}
	if (t->contiguous && rma_aligned(t, data)) {
		/* The packed data is laid out as the memory: in place. */
		mpi_shim_op_apply(op, data - t->true_lb, addr, count, t);
		return MPI_SUCCESS;
	}
	/* The data as the target type lays it out, then the operation
	 * element by element.  The span of the elements' data, and a whole
	 * extent more: an operation on a pair type (MPI_DOUBLE_INT) reads
	 * the last element as a whole struct, padding included. */
	mpi_shim_rma_span(t, count, &lo, &hi);
	PMPI_Type_get_extent(t, &tlb, &text);
	tmp = calloc(1, (size_t)(hi - lo) + (size_t)(text > 0 ? text : 0));
	if (!tmp)
		return MPI_ERR_NO_MEM;
	mpi_shim_datatype_unpack(data, need, tmp - lo, count, t, 0);
	if ((int64_t)text * (int64_t)count > hi - lo) {
		/* The operation would write the last element's padding too,
		 * which may lie past the window (or in the next rank's part of
		 * a shared segment): it works on a copy, and only the data
		 * goes back. */
		char *cur = calloc(1, (size_t)(hi - lo) + (size_t)text);
		char *packed = malloc(need ? need : 1);

		if (!cur || !packed) {
			free(cur);
			free(packed);
			free(tmp);
			return MPI_ERR_NO_MEM;
		}
		mpi_shim_datatype_pack(addr, count, t, 0, packed, need);
		mpi_shim_datatype_unpack(packed, need, cur - lo, count, t, 0);
		mpi_shim_op_apply(op, tmp - lo, cur - lo, count, t);
		mpi_shim_datatype_pack(cur - lo, count, t, 0, packed, need);
		mpi_shim_datatype_unpack(packed, need, addr, count, t, 0);
		free(cur);
		free(packed);
	} else {
		mpi_shim_op_apply(op, tmp - lo, addr, count, t);
	}
	free(tmp);
	return MPI_SUCCESS;
}

/* Apply the data request h from origin (len bytes in all); the answer is
 * sent from here. */
static void rma_serve_data(MPI_Win win, int origin, const struct rma_hdr *h, size_t len)
{
	const struct rma_block *blocks = (const void *)(h + 1);
	const char *data;
	struct rma_hdr *ans = NULL;
	size_t out = 0, need;
	MPI_Datatype t = MPI_DATATYPE_NULL;
	MPI_Op op = MPI_OP_NULL;
	char *addr;
	int err, own = 0;

	if (h->nblocks > (len - sizeof(*h)) / sizeof(struct rma_block)) {
		err = MPI_ERR_OTHER;
		goto answer;
	}
	data = (const char *)(blocks + h->nblocks);
	if ((size_t)(data - (const char *)h) + h->bytes != len) {
		err = MPI_ERR_OTHER;
		goto answer;
	}
	if (!rma_exposed_to(win, origin)) {
		err = MPI_ERR_RMA_SYNC;
		goto answer;
	}
	if ((err = rma_type_of(win, h, blocks, &t, &own)))
		goto answer;
	if (h->kind == RMA_ACC || h->kind == RMA_GET_ACC) {
		op = mpi_shim_op_of_index(h->op);
		if (op == MPI_OP_NULL ||
		    (!mpi_shim_op_is_replace(op) && !mpi_shim_op_is_no_op(op) &&
		     mpi_shim_op_valid(op, t->basic ? (MPI_Datatype)t->basic : t))) {
			err = MPI_ERR_OP;
			goto answer;
		}
	}
	if (h->kind == RMA_CAS && h->count != 1) {
		err = MPI_ERR_COUNT;
		goto answer;
	}
	need = (size_t)h->count * t->size;
	if ((h->kind == RMA_PUT || h->kind == RMA_ACC) && h->bytes != need) {
		err = MPI_ERR_TRUNCATE;
		goto answer;
	}
	if (h->kind == RMA_GET_ACC && h->bytes != need && !(op && mpi_shim_op_is_no_op(op)))
		err = MPI_ERR_TRUNCATE;
	if (h->kind == RMA_CAS && h->bytes != 2 * need)
		err = MPI_ERR_TRUNCATE;
	if (err || (err = rma_target_addr(win, h->disp, h->count, t, &addr)))
		goto answer;
	if (h->kind == RMA_GET || h->kind == RMA_GET_ACC || h->kind == RMA_CAS)
		out = need;
	ans = malloc(sizeof(*ans) + out);
	if (!ans) {
		err = MPI_ERR_NO_MEM;
		goto answer;
	}
	err = mpi_shim_rma_apply((enum rma_kind)h->kind, op, addr, h->count, t, data, need,
				 out ? (void *)(ans + 1) : NULL);
answer:
	if (own)
		PMPI_Type_free(&t);
	if (!h->reply_tag) {
		free(ans);
		return;
	}
	if (!ans || err) {
		free(ans);
		ans = calloc(1, sizeof(*ans));
		out = 0;
		if (!ans)
			return;
	}
	ans->kind = RMA_ANSWER;
	ans->win = win->id;
	ans->err = err;
	ans->bytes = out;
	rma_send_forget(win, origin, (int)h->reply_tag, ans, sizeof(*ans) + out);
}

/* Serve one request that has arrived whole. */
static void rma_serve(MPI_Win win, int origin, const struct rma_hdr *h, size_t len)
{
	struct rma_lock_wait *w;

	if (len < sizeof(*h) || h->win != win->id)
		return; /* not one of ours: dropped */
	if (h->reply_tag > RMA_TAG_LAST_REPLY)
		return;
	switch (h->kind) {
	case RMA_PUT:
	case RMA_GET:
	case RMA_ACC:
	case RMA_GET_ACC:
	case RMA_CAS:
		rma_serve_data(win, origin, h, len);
		return;
	case RMA_LOCK:
		if ((h->lock != MPI_LOCK_SHARED && h->lock != MPI_LOCK_EXCLUSIVE) ||
		    win->granted[origin]) {
			rma_send_hdr(win, origin, (int)h->reply_tag, RMA_ANSWER, MPI_ERR_RMA_SYNC,
				     0, 0);
			return;
		}
		w = malloc(sizeof(*w));
		if (!w) {
			rma_send_hdr(win, origin, (int)h->reply_tag, RMA_ANSWER, MPI_ERR_NO_MEM, 0,
				     0);
			return;
		}
		w->origin = origin;
		w->type = (int)h->lock;
		w->reply_tag = h->reply_tag;
		w->next = NULL;
		if (win->lock_waits_tail)
			win->lock_waits_tail->next = w;
		else
			win->lock_waits = w;
		win->lock_waits_tail = w;
		rma_grant_locks(win);
		return;
	case RMA_UNLOCK:
		if (!win->granted[origin]) {
			rma_send_hdr(win, origin, (int)h->reply_tag, RMA_ANSWER, MPI_ERR_RMA_SYNC,
				     0, 0);
			return;
		}
		if (win->granted[origin] == 2)
			win->excl_holder = -1;
		else
			win->nshared--;
		win->granted[origin] = 0;
		rma_send_hdr(win, origin, (int)h->reply_tag, RMA_ANSWER, MPI_SUCCESS, 0, 0);
		rma_grant_locks(win);
		return;
	case RMA_POST:
		win->posts[origin]++;
		return;
	case RMA_COMPLETE:
		if (win->exposed[origin]) {
			win->exposed[origin] = 0;
			win->nexposed--;
		}
		return;
	default:
		return;
	}
}

/* Answer the request whose header is h (got bytes of it) with err, and
 * do nothing else. */
static void rma_refuse(MPI_Win win, int origin, const struct rma_hdr *h, size_t got, int err)
{
	if (got < sizeof(*h) || h->win != win->id || !h->reply_tag ||
	    h->reply_tag > RMA_TAG_LAST_REPLY)
		return;
	rma_send_hdr(win, origin, (int)h->reply_tag, RMA_ANSWER, err, 0, 0);
}

/* --- the origin --- */

static void rma_op_free(struct rma_op *op)
{
	free(op->msg);
	free(op->answer);
	if (op->result_type && !op->result_type->predefined)
		mpi_shim_datatype_release(op->result_type);
	free(op);
}

/* The answer of op has come. */
static void rma_op_answered(MPI_Win win, struct rma_op *op)
{
	const struct rma_hdr *a = op->answer;
	size_t got = (size_t)op->recv->status.mpi_shim_bytes;

	if (op->recv->error || got < sizeof(*a))
		op->err = op->recv->error ? op->recv->error : MPI_ERR_OTHER;
	else if (a->err)
		op->err = a->err;
	else if (op->result && a->bytes && a->bytes == got - sizeof(*a))
		mpi_shim_datatype_unpack(a + 1, a->bytes, op->result, op->result_count,
					 op->result_type, 0);
	if (op->err && !win->deferred_err)
		win->deferred_err = op->err;
	mpi_shim_req_free(op->recv);
	op->recv = NULL;
	op->answered = 1;
	win->pending[op->target]--;
	win->npending--;
}

/* --- the progress hook --- */

static void rma_progress_win(MPI_Win win)
{
	struct rma_out **op_, *o;
	struct rma_op **pp, *op;
	struct rma_in *in;
	MPI_Status st;
	void *msg;

	/* Take every request that arrived, in order. */
	while ((msg = mpi_shim_message_claim(win->comm, MPI_ANY_SOURCE, RMA_TAG_REQUEST, &st))) {
		size_t len = (size_t)st.mpi_shim_bytes;

		in = malloc(sizeof(*in));
		if (in) {
			in->buf = malloc(len ? len : 1);
			in->whole = 1;
			if (!in->buf && len > sizeof(struct rma_hdr)) {
				/* The header alone, to answer that there is no
				 * memory: the origin is not left waiting.  (A
				 * message long enough to go by rendezvous is
				 * still moved whole by BIP, into memory the
				 * receive itself must find.) */
				in->buf = malloc(sizeof(struct rma_hdr));
				in->whole = 0;
			}
		}
		if (in && in->buf)
			in->recv = mpi_shim_req_alloc();
		if (!in || !in->buf || !in->recv) {
			/* Received into nothing, and lost: the origin waits on.
			 * Only when not even a header's memory is left. */
			struct mpi_shim_request *r = mpi_shim_req_alloc();

			if (r)
				mpi_shim_message_recv(r, NULL, 0, MPI_BYTE, win->comm, msg);
			if (in)
				free(in->buf);
			free(in);
			continue;
		}
		mpi_shim_message_recv(in->recv, in->buf, in->whole ? len : sizeof(struct rma_hdr),
				      MPI_BYTE, win->comm, msg);
		in->next = NULL;
		if (win->in_tail)
			win->in_tail->next = in;
		else
			win->in = in;
		win->in_tail = in;
	}
	/* Serve them in that order. */
	while ((in = win->in) && in->recv->done) {
		win->in = in->next;
		if (!win->in)
			win->in_tail = NULL;
		if (!in->whole)
			rma_refuse(win, in->recv->status.MPI_SOURCE, in->buf,
				   (size_t)in->recv->status.mpi_shim_bytes, MPI_ERR_NO_MEM);
		else if (!in->recv->error)
			rma_serve(win, in->recv->status.MPI_SOURCE, in->buf,
				  (size_t)in->recv->status.mpi_shim_bytes);
		mpi_shim_req_free(in->recv);
		free(in->buf);
		free(in);
	}
	/* Messages that have left. */
	for (op_ = &win->out; (o = *op_);) {
		if (o->send->done) {
			*op_ = o->next;
			mpi_shim_req_free(o->send);
			free(o->buf);
			free(o);
		} else {
			op_ = &o->next;
		}
	}
	/* Answers. */
	for (pp = &win->ops; (op = *pp);) {
		if (op->send && op->send->done) {
			mpi_shim_req_free(op->send);
			op->send = NULL;
			free(op->msg);
			op->msg = NULL;
		}
		if (op->recv && op->recv->done)
			rma_op_answered(win, op);
		if (op->answered && !op->send) {
			/* A request-based operation's request completes at its
			 * next step (rma_req_progress), and frees op when it goes. */
			*pp = op->next;
			if (!op->req)
				rma_op_free(op);
		} else {
			pp = &op->next;
		}
	}
	win->ops_tail = NULL;
	for (op = win->ops; op; op = op->next)
		win->ops_tail = op;
}

static void rma_progress(void)
{
	struct mpi_shim_win *win;

	if (rma.running)
		return;
	rma.running = 1;
	for (win = rma.wins; win; win = win->next)
		rma_progress_win(win);
	rma.running = 0;
}

/* Wait until done(win, arg); the hook serves everything meanwhile. */
static int rma_wait(MPI_Win win, int (*done)(MPI_Win win, int arg), int arg, const char *call)
{
	struct bip_layer_wait w = { 0 };

	for (;;) {
		mpi_shim_progress();
		if (done(win, arg))
			return MPI_SUCCESS;
		if (mpi_shim_progress_wait(&w) < 0)
			return mpi_shim_win_err(win, MPI_ERR_OTHER, call,
						"the other processes have ended: the operations "
						"cannot complete");
	}
}

static int rma_none_pending(MPI_Win win, int arg)
{
	(void)arg;
	return win->npending == 0;
}

static int rma_none_pending_to(MPI_Win win, int rank)
{
	return win->pending[rank] == 0;
}

/* The error a target answered since the last sync call, reported by call. */
static int rma_deferred(MPI_Win win, const char *call)
{
	int err = win->deferred_err;

	if (!err)
		return MPI_SUCCESS;
	win->deferred_err = 0;
	return mpi_shim_win_err(win, err, call, "a target refused an operation of this epoch");
}

/* --- issuing an operation --- */

struct rma_collect {
	struct rma_block *b;
	size_t n, max;
};

static int rma_collect_block(void *arg, int64_t disp, uint64_t len)
{
	struct rma_collect *c = arg;

	if (c->n == c->max) {
		size_t max = c->max ? 2 * c->max : 16;
		struct rma_block *b = realloc(c->b, max * sizeof(*b));

		if (!b)
			return -1;
		c->b = b;
		c->max = max;
	}
	c->b[c->n].disp = disp;
	c->b[c->n].len = len;
	c->n++;
	return 0;
}

/* 1 if t is one of the pair types of MINLOC and MAXLOC. */
static int rma_is_pair(const struct mpi_shim_type *t)
{
	return t && ((t->kind >= MPI_SHIM_BASIC_FLOAT_INT &&
		      t->kind <= MPI_SHIM_BASIC_LONG_DOUBLE_INT) ||
		     (t->kind >= MPI_SHIM_BASIC_2REAL && t->kind <= MPI_SHIM_BASIC_2INTEGER));
}

/*
 * The blocks of a derived type of pairs, as the target rebuilds it: runs
 * of whole pairs (len: packed bytes, a multiple of the pair's size), the
 * pairs of a run one pair extent apart.  The memory blocks of such a type
 * split a pair at its holes and merge the end of one pair with the start
 * of the next, so they are walked in packing order against the pair's own
 * blocks to find where each pair starts.
 */
struct rma_pairs {
	struct rma_collect runs;
	const struct mpi_shim_type *pair;
	struct rma_block own[4]; /* the pair's blocks, in packing order */
	int nown;
	uint64_t pos; /* packed bytes of the current pair walked */
};

static int rma_collect_pair_block(void *arg, int64_t disp, uint64_t len)
{
	struct rma_pairs *p = arg;

	if (p->nown == (int)(sizeof(p->own) / sizeof(p->own[0])))
		return -1;
	p->own[p->nown].disp = disp;
	p->own[p->nown].len = len;
	p->nown++;
	return 0;
}

static int rma_collect_pairs(void *arg, int64_t disp, uint64_t len)
{
	struct rma_pairs *p = arg;
	uint64_t size = p->pair->size, pre, take;
	int k;

	while (len) {
		if (p->pos == 0) {
			struct rma_collect *c = &p->runs;
			struct rma_block *last = c->n ? &c->b[c->n - 1] : NULL;

			/* A pair starts here: it extends the last run, or
			 * begins one. */
			if (last && last->disp + (int64_t)(last->len / size) * p->pair->extent == disp)
				last->len += size;
			else if (rma_collect_block(c, disp, size))
				return -1;
		}
		for (k = 0, pre = 0; k < p->nown && pre + p->own[k].len <= p->pos; k++)
			pre += p->own[k].len;
		if (k == p->nown)
			return -1;
		take = p->own[k].len - (p->pos - pre);
		if (take > len)
			take = len;
		disp += (int64_t)take;
		len -= take;
		p->pos = (p->pos + take) % size;
	}
	return 0;
}

/* The blocks of one element of the derived type t for the header: 0, or
 * -1 without memory. */
static int rma_target_blocks(MPI_Datatype t, struct rma_collect *blocks)
{
	struct rma_pairs p = { .pair = t->basic };

	if (!rma_is_pair(t->basic))
		return mpi_shim_datatype_for_each_block(t, rma_collect_block, blocks);
	if (mpi_shim_datatype_for_each_block((MPI_Datatype)t->basic, rma_collect_pair_block, &p) ||
	    mpi_shim_datatype_for_each_block(t, rma_collect_pairs, &p)) {
		free(p.runs.b);
		return -1;
	}
	*blocks = p.runs;
	return 0;
}

/* 1 if the origin may reach target in its current epoch. */
static int rma_access(MPI_Win win, int target)
{
	int i;

	switch (win->epoch) {
	case RMA_EPOCH_FENCE:
	case RMA_EPOCH_LOCK_ALL:
		return 1;
	case RMA_EPOCH_LOCK:
		return win->locked[target] != 0;
	case RMA_EPOCH_START:
		for (i = 0; i < win->nstart; i++)
			if (win->start_group[i] == target)
				return 1;
		return 0;
	default:
		return 0;
	}
}

static int rma_check_type(MPI_Win win, MPI_Datatype t, const char *what, const char *call)
{
	if (!mpi_shim_datatype_ok(t) || !t->committed)
		return mpi_shim_win_err(win, MPI_ERR_TYPE, call, "the %s datatype is %s", what,
					t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" :
								 "not committed or freed");
	return MPI_SUCCESS;
}

/* The checks of a communication call, at the origin (reported). */
static int rma_check(MPI_Win win, const struct rma_args *a, int ocount, int rcount, int tcount,
		     const char *call)
{
	int rc;
	int64_t lo, hi, off;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (ocount < 0 || rcount < 0 || tcount < 0)
		return mpi_shim_win_err(win, MPI_ERR_COUNT, call, "a count is negative");
	if (a->target != MPI_PROC_NULL && (a->target < 0 || a->target >= win->comm->size))
		return mpi_shim_win_err(win, MPI_ERR_RANK, call,
					"target rank %d is not in the window's group (size %d)",
					a->target, win->comm->size);
	if (a->otype != MPI_DATATYPE_NULL || a->kind != RMA_GET_ACC)
		if ((rc = rma_check_type(win, a->otype, "origin", call)))
			return rc;
	if (a->rtype != MPI_DATATYPE_NULL && (rc = rma_check_type(win, a->rtype, "result", call)))
		return rc;
	if ((rc = rma_check_type(win, a->ttype, "target", call)))
		return rc;
	if (a->kind == RMA_ACC || a->kind == RMA_GET_ACC) {
		if (a->op == MPI_OP_NULL || mpi_shim_op_index(a->op) < 0)
			return mpi_shim_win_err(win, MPI_ERR_OP, call,
						"accumulates take a predefined operation");
		if (!mpi_shim_op_is_replace(a->op) && !mpi_shim_op_is_no_op(a->op) &&
		    a->ttype->size &&
		    (!a->ttype->basic || mpi_shim_op_valid(a->op, (MPI_Datatype)a->ttype->basic)))
			return mpi_shim_win_err(win, MPI_ERR_OP, call,
						"the operation does not apply to the target datatype");
	}
	if (a->kind == RMA_CAS && !a->ttype->predefined)
		return mpi_shim_win_err(win, MPI_ERR_TYPE, call,
					"compare-and-swap takes a predefined datatype");
	if (a->target == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (a->otype != MPI_DATATYPE_NULL && a->kind != RMA_GET_ACC && a->kind != RMA_CAS &&
	    a->ocount * a->otype->size != a->tcount * a->ttype->size)
		return mpi_shim_win_err(win, MPI_ERR_TYPE, call,
					"origin and target describe different numbers of bytes "
					"(%zu and %zu)", a->ocount * a->otype->size,
					a->tcount * a->ttype->size);
	if (!rma_access(win, a->target))
		return mpi_shim_win_err(win, MPI_ERR_RMA_SYNC, call,
					"no access epoch to rank %d is open on this window "
					"(fence, lock, lock_all or start)", a->target);
	if (win->sizes) {
		if (mpi_shim_rma_span(a->ttype, a->tcount, &lo, &hi) ||
		    __builtin_mul_overflow((int64_t)a->disp, (int64_t)win->disp_units[a->target],
					   &off) ||
		    (a->tcount && (off + lo < 0 || off + hi > (int64_t)win->sizes[a->target])))
			return mpi_shim_win_err(win, MPI_ERR_RMA_RANGE, call,
						"displacement %td (count %zu) reaches outside "
						"rank %d's window of %td bytes", a->disp,
						a->tcount, a->target, win->sizes[a->target]);
	}
	return MPI_SUCCESS;
}

/* Start the operation a (checked); ureq: the program's request, or NULL. */
static int rma_issue(MPI_Win win, const struct rma_args *a, MPI_Request *ureq, const char *call)
{
	struct rma_collect blocks = { 0 };
	struct rma_hdr *h;
	struct rma_op *op;
	size_t data = 0, reply = 0, len;
	MPI_Datatype tbasic = a->ttype->basic ? (MPI_Datatype)a->ttype->basic : MPI_BYTE;
	int rc;

	if (!a->ttype->predefined && rma_target_blocks(a->ttype, &blocks)) {
		free(blocks.b);
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	}
	if (a->kind == RMA_PUT || a->kind == RMA_ACC ||
	    (a->kind == RMA_GET_ACC && !mpi_shim_op_is_no_op(a->op)))
		data = a->ocount * a->otype->size;
	if (a->kind == RMA_CAS)
		data = 2 * a->ttype->size;
	if (a->kind == RMA_GET || a->kind == RMA_GET_ACC || a->kind == RMA_CAS)
		reply = a->tcount * a->ttype->size;
	len = sizeof(*h) + blocks.n * sizeof(struct rma_block) + data;
	op = calloc(1, sizeof(*op));
	h = calloc(1, len);
	if (op)
		op->answer = malloc(sizeof(struct rma_hdr) + reply);
	if (!op || !h || !op->answer) {
		if (op)
			free(op->answer);
		free(op);
		free(h);
		free(blocks.b);
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	}
	h->kind = a->kind;
	h->win = win->id;
	h->disp = a->disp;
	h->count = a->tcount;
	h->op = a->op ? (uint32_t)mpi_shim_op_index(a->op) : 0;
	h->type = a->ttype->predefined ? a->ttype->kind : tbasic->kind;
	h->nblocks = (uint32_t)blocks.n;
	h->lb = a->ttype->lb;
	h->extent = a->ttype->extent;
	h->bytes = data;
	if (blocks.n)
		memcpy(h + 1, blocks.b, blocks.n * sizeof(struct rma_block));
	free(blocks.b);
	if (a->kind == RMA_CAS) {
		char *d = (char *)(h + 1);

		memcpy(d, a->origin, a->ttype->size);
		memcpy(d + a->ttype->size, a->compare, a->ttype->size);
	} else if (data) {
		mpi_shim_datatype_pack(a->origin, a->ocount, a->otype, 0,
				       (char *)h + len - data, data);
	}
	if (win->next_tag < RMA_TAG_FIRST_REPLY || win->next_tag > RMA_TAG_LAST_REPLY)
		win->next_tag = RMA_TAG_FIRST_REPLY;
	h->reply_tag = win->next_tag++;
	op->target = a->target;
	op->msg = h;
	op->answer_len = sizeof(struct rma_hdr) + reply;
	if (reply) {
		op->result = a->result;
		op->result_count = a->rcount;
		op->result_type = a->rtype;
		if (!a->rtype->predefined)
			mpi_shim_datatype_retain(a->rtype);
	}
	op->recv = mpi_shim_req_alloc();
	if (!op->recv) {
		rma_op_free(op);
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	}
	rc = mpi_shim_recv_start(op->recv, op->answer, op->answer_len, MPI_BYTE, a->target,
				 (int)h->reply_tag, win->comm, win->comm->ctx);
	if (!rc)
		op->recv->active = 1;
	if (!rc)
		rc = rma_send(win, a->target, RMA_TAG_REQUEST, h, len, &op->send);
	if (rc) {
		/* Only when memory runs out; the receive stays posted. */
		return mpi_shim_win_err(win, rc, call, "the request could not be sent");
	}
	if (ureq) {
		if ((rc = mpi_shim_request_progress_new(win->comm, &rma_req_ops, op, ureq)))
			return mpi_shim_win_err(win, rc, call, "no memory for a request");
		op->req = *ureq;
	}
	if (win->ops_tail)
		win->ops_tail->next = op;
	else
		win->ops = op;
	win->ops_tail = op;
	win->pending[a->target]++;
	win->npending++;
	win->fence_ops++;
	return MPI_SUCCESS;
}

/* A request-based operation is done when its answer has come. */
static int rma_req_progress(struct mpi_shim_request *r)
{
	struct rma_op *op = r->state;

	if (!op)
		return 1; /* on MPI_PROC_NULL */
	if (!op->answered || op->send)
		return 0;
	return op->err ? -op->err : 1;
}

static void rma_req_release(struct mpi_shim_request *r)
{
	struct rma_op *op = r->state;

	r->state = NULL;
	if (!op)
		return;
	op->req = NULL;
	/* An op still listed is freed by the hook when its answer comes. */
	if (op->answered && !op->send)
		rma_op_free(op);
}

static const struct mpi_shim_req_ops rma_req_ops = {
	.progress = rma_req_progress,
	.release = rma_req_release,
};

/* A request-based call on MPI_PROC_NULL: a request that its first step
 * completes (completing it here would leave it on the engine's list of
 * driven requests after the program has freed it). */
static int rma_null_request(MPI_Win win, MPI_Request *ureq, const char *call)
{
	int rc = mpi_shim_request_progress_new(win->comm, &rma_req_ops, NULL, ureq);

	if (rc)
		return mpi_shim_win_err(win, rc, call, "no memory for a request");
	return MPI_SUCCESS;
}

static int rma_call(MPI_Win win, const struct rma_args *a, int ocount, int rcount, int tcount,
		    MPI_Request *ureq, const char *call)
{
	int rc;

	/* A request of a call that fails is MPI_REQUEST_NULL: a wait on it
	 * returns at once. */
	if (ureq)
		*ureq = MPI_REQUEST_NULL;
	if ((rc = rma_check(win, a, ocount, rcount, tcount, call)))
		return rc;
	if (ureq == NULL && call[4] == 'R')
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "request is NULL");
	/* MPI_PROC_NULL is a target of every call, with no effect (MPI-3.1
	 * 11.3); a request-based one within a passive epoch, a lock on
	 * MPI_PROC_NULL's included. */
	if (a->target == MPI_PROC_NULL) {
		if (ureq && win->epoch != RMA_EPOCH_LOCK && win->epoch != RMA_EPOCH_LOCK_ALL &&
		    !win->null_locks)
			return mpi_shim_win_err(win, MPI_ERR_RMA_SYNC, call,
						"request-based operations are allowed only inside "
						"MPI_Win_lock or MPI_Win_lock_all epochs");
		return ureq ? rma_null_request(win, ureq, call) : MPI_SUCCESS;
	}
	/* MPI-3.1 11.3.5: request-based operations belong to passive-target
	 * epochs only. */
	if (ureq && win->epoch != RMA_EPOCH_LOCK && win->epoch != RMA_EPOCH_LOCK_ALL)
		return mpi_shim_win_err(win, MPI_ERR_RMA_SYNC, call,
					"request-based operations are allowed only inside "
					"MPI_Win_lock or MPI_Win_lock_all epochs");
	/* No data (a zero count, or a type of size 0): nothing to do but
	 * what the epoch checks above did. */
	if (a->kind != RMA_CAS && a->tcount * a->ttype->size == 0) {
		win->fence_ops++;
		return ureq ? rma_null_request(win, ureq, call) : MPI_SUCCESS;
	}
	if (win->direct) {
		/* Done at the call: the request completes at its first step. */
		if ((rc = mpi_shim_rma_shm_issue(win, a, call)))
			return rc;
		win->fence_ops++;
		return ureq ? rma_null_request(win, ureq, call) : MPI_SUCCESS;
	}
	if (win->nic) {
		if ((rc = mpi_shim_rma_nic_issue(win, a, ureq, call)))
			return rc;
		win->fence_ops++;
		return MPI_SUCCESS;
	}
	return rma_issue(win, a, ureq, call);
}

/*
 * The common case of a window in a segment (rma_shm.c), with every check
 * of rma_check that applies to it: a put (put != 0) or get of count
 * elements of one contiguous predefined type on both sides, inside the
 * target's part, in an epoch that reaches the target.  1 if done; 0 to
 * take the general path, which makes every check again and reports.
 */
static inline char *rma_fast_addr(MPI_Win win, int count, MPI_Datatype t, int target,
				  MPI_Aint disp, int tcount, MPI_Datatype tt)
{
	int64_t off, end;

	if (!mpi_shim_likely(mpi_shim.initialized && !mpi_shim.finalized && win != MPI_WIN_NULL &&
			     win->valid && win->direct && !win->cma))
		return NULL;
	if (t != tt || t == MPI_DATATYPE_NULL || !t->predefined || !t->contiguous ||
	    count != tcount || count <= 0 || target < 0 || target >= win->comm->size)
		return NULL;
	if (!(win->epoch == RMA_EPOCH_LOCK_ALL || win->epoch == RMA_EPOCH_FENCE ||
	      (win->epoch == RMA_EPOCH_LOCK && win->locked[target])))
		return NULL;
	if (__builtin_mul_overflow((int64_t)disp, (int64_t)win->disp_units[target], &off) ||
	    __builtin_mul_overflow((int64_t)count, (int64_t)t->size, &end) ||
	    __builtin_add_overflow(off, end, &end) || off < 0 ||
	    end > (int64_t)win->sizes[target])
		return NULL;
	return (char *)win->segment + win->offsets[target] + off;
}

static inline int rma_fast(MPI_Win win, int put, void *buf, int count, MPI_Datatype t,
			   int target, MPI_Aint disp, int tcount, MPI_Datatype tt)
{
	char *taddr = rma_fast_addr(win, count, t, target, disp, tcount, tt);

	if (!taddr)
		return 0;
	/* memmove: a process may reach its own part from it. */
	if (put)
		memmove(taddr, buf, (size_t)count * t->size);
	else
		memmove(buf, taddr, (size_t)count * t->size);
	win->fence_ops++;
	return 1;
}

int PMPI_Put(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
	     int tcount, MPI_Datatype ttype, MPI_Win win)
{
	MPI_SHIM_ENTER();
	if (rma_fast(win, 1, (void *)oaddr, ocount, otype, target, tdisp, tcount, ttype))
		return MPI_SUCCESS;
	struct rma_args a = { RMA_PUT, oaddr, (size_t)ocount, otype, NULL, NULL, 0,
			      MPI_DATATYPE_NULL, target, tdisp, (size_t)tcount, ttype, MPI_OP_NULL };

	return rma_call(win, &a, ocount, 0, tcount, NULL, "MPI_Put");
}
MPI_SHIM_ALIAS(MPI_Put);

int PMPI_Get(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
	     MPI_Datatype ttype, MPI_Win win)
{
	MPI_SHIM_ENTER();
	if (rma_fast(win, 0, oaddr, ocount, otype, target, tdisp, tcount, ttype))
		return MPI_SUCCESS;
	struct rma_args a = { RMA_GET, NULL, (size_t)ocount, otype, NULL, oaddr, (size_t)ocount,
			      otype, target, tdisp, (size_t)tcount, ttype, MPI_OP_NULL };

	return rma_call(win, &a, ocount, 0, tcount, NULL, "MPI_Get");
}
MPI_SHIM_ALIAS(MPI_Get);

int PMPI_Accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
		    int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	MPI_SHIM_ENTER();
	char *taddr = rma_fast_addr(win, ocount, otype, target, tdisp, tcount, ttype);
	mpi_shim_op_loop loop = NULL;

	/* The common case of a window in a segment: a predefined operation
	 * that applies to the one type of both sides. */
	if (taddr && (op == MPI_REPLACE || op == MPI_NO_OP ||
		      (loop = mpi_shim_op_loop_of(op, ttype)))) {
		mpi_shim_rma_shm_acc(win, oaddr, ocount, ttype, target, taddr, op, loop);
		win->fence_ops++;
		return MPI_SUCCESS;
	}
	struct rma_args a = { RMA_ACC, oaddr, (size_t)ocount, otype, NULL, NULL, 0,
			      MPI_DATATYPE_NULL, target, tdisp, (size_t)tcount, ttype, op };

	return rma_call(win, &a, ocount, 0, tcount, NULL, "MPI_Accumulate");
}
MPI_SHIM_ALIAS(MPI_Accumulate);

int PMPI_Get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
			int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
			MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	MPI_SHIM_ENTER();
	struct rma_args a = { RMA_GET_ACC, oaddr, (size_t)ocount, otype, NULL, raddr,
			      (size_t)rcount, rtype, target, tdisp, (size_t)tcount, ttype, op };

	if (op == MPI_NO_OP)
		a.otype = MPI_DATATYPE_NULL;
	return rma_call(win, &a, ocount, rcount, tcount, NULL, "MPI_Get_accumulate");
}
MPI_SHIM_ALIAS(MPI_Get_accumulate);

int PMPI_Fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype t, int target, MPI_Aint tdisp,
		      MPI_Op op, MPI_Win win)
{
	MPI_SHIM_ENTER();
	char *taddr = rma_fast_addr(win, 1, t, target, tdisp, 1, t);
	mpi_shim_op_loop loop = NULL;

	/* The common case of a window in a segment: a predefined operation
	 * that applies to t, under the target's accumulate lock. */
	if (taddr && (op == MPI_NO_OP || op == MPI_REPLACE || (loop = mpi_shim_op_loop_of(op, t)))) {
		mpi_shim_rma_shm_fop(win, oaddr, raddr, t, target, taddr, op, loop);
		win->fence_ops++;
		return MPI_SUCCESS;
	}
	struct rma_args a = { RMA_GET_ACC, oaddr, 1, t, NULL, raddr, 1, t, target, tdisp, 1, t,
			      op };

	if (op == MPI_NO_OP)
		a.otype = MPI_DATATYPE_NULL;
	return rma_call(win, &a, 1, 1, 1, NULL, "MPI_Fetch_and_op");
}
MPI_SHIM_ALIAS(MPI_Fetch_and_op);

int PMPI_Compare_and_swap(const void *oaddr, const void *caddr, void *raddr, MPI_Datatype t,
			  int target, MPI_Aint tdisp, MPI_Win win)
{
	MPI_SHIM_ENTER();
	char *taddr = rma_fast_addr(win, 1, t, target, tdisp, 1, t);

	/* The common case of a window in a segment. */
	if (taddr && t->size <= 32) {
		mpi_shim_rma_shm_cas(win, oaddr, caddr, raddr, t, target, taddr);
		win->fence_ops++;
		return MPI_SUCCESS;
	}
	struct rma_args a = { RMA_CAS, oaddr, 1, t, caddr, raddr, 1, t, target, tdisp, 1, t,
			      MPI_OP_NULL };

	return rma_call(win, &a, 1, 1, 1, NULL, "MPI_Compare_and_swap");
}
MPI_SHIM_ALIAS(MPI_Compare_and_swap);

int PMPI_Rput(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
	      int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct rma_args a = { RMA_PUT, oaddr, (size_t)ocount, otype, NULL, NULL, 0,
			      MPI_DATATYPE_NULL, target, tdisp, (size_t)tcount, ttype, MPI_OP_NULL };

	return rma_call(win, &a, ocount, 0, tcount, request, "MPI_Rput");
}
MPI_SHIM_ALIAS(MPI_Rput);

int PMPI_Rget(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
	      MPI_Datatype ttype, MPI_Win win, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct rma_args a = { RMA_GET, NULL, (size_t)ocount, otype, NULL, oaddr, (size_t)ocount,
			      otype, target, tdisp, (size_t)tcount, ttype, MPI_OP_NULL };

	return rma_call(win, &a, ocount, 0, tcount, request, "MPI_Rget");
}
MPI_SHIM_ALIAS(MPI_Rget);

int PMPI_Raccumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target,
		     MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win,
		     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct rma_args a = { RMA_ACC, oaddr, (size_t)ocount, otype, NULL, NULL, 0,
			      MPI_DATATYPE_NULL, target, tdisp, (size_t)tcount, ttype, op };

	return rma_call(win, &a, ocount, 0, tcount, request, "MPI_Raccumulate");
}
MPI_SHIM_ALIAS(MPI_Raccumulate);

int PMPI_Rget_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
			 int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
			 MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct rma_args a = { RMA_GET_ACC, oaddr, (size_t)ocount, otype, NULL, raddr,
			      (size_t)rcount, rtype, target, tdisp, (size_t)tcount, ttype, op };

	if (op == MPI_NO_OP)
		a.otype = MPI_DATATYPE_NULL;
	return rma_call(win, &a, ocount, rcount, tcount, request, "MPI_Rget_accumulate");
}
MPI_SHIM_ALIAS(MPI_Rget_accumulate);

/* --- synchronisation --- */

static int rma_sync_check(MPI_Win win, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	return MPI_SUCCESS;
}

static int rma_sync_err(MPI_Win win, const char *call, const char *why)
{
	return mpi_shim_win_err(win, MPI_ERR_RMA_SYNC, call, "%s", why);
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_fence";
	int rc;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (win->epoch != RMA_EPOCH_NONE && win->epoch != RMA_EPOCH_FENCE)
		return rma_sync_err(win, call, "a lock or start epoch is open on this window");
	if (win->posted)
		return rma_sync_err(win, call, "an exposure epoch of MPI_Win_post is open");
	if ((rc = rma_wait(win, rma_none_pending, 0, call)))
		return rc;
	if (win->nic && (rc = mpi_shim_rma_nic_complete(win, -1, call)))
		return rc;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Open before the barrier: another process's first operation may
	 * come as soon as it is through. */
	if (!(assert & MPI_MODE_NOSUCCEED))
		win->fence_open = 1;
	if ((rc = PMPI_Barrier(win->comm)))
		return mpi_shim_win_err(win, rc, call, "the barrier failed");
	if (assert & MPI_MODE_NOSUCCEED) {
		win->fence_open = 0;
		win->epoch = RMA_EPOCH_NONE;
	} else {
		win->epoch = RMA_EPOCH_FENCE;
	}
	win->fence_ops = 0;
	return rma_deferred(win, call);
}
MPI_SHIM_ALIAS(MPI_Win_fence);

/* A passive-target epoch may begin: none is open but a fence's that has
 * seen no operation yet. */
static int rma_passive_ok(MPI_Win win)
{
	return win->epoch == RMA_EPOCH_NONE ||
	       (win->epoch == RMA_EPOCH_FENCE && win->fence_ops == 0) ||
	       win->epoch == RMA_EPOCH_LOCK;
}

/* Ask rank for a lock (LOCK) or give it back (UNLOCK), and wait for the answer. */
static int rma_lock_msg(MPI_Win win, int rank, uint32_t kind, int type, const char *call)
{
	struct rma_op *op = calloc(1, sizeof(*op));
	struct rma_hdr *h = calloc(1, sizeof(*h));
	int rc;

	if (op)
		op->answer = malloc(sizeof(*h));
	if (!op || !h || !op->answer) {
		if (op)
			free(op->answer);
		free(op);
		free(h);
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	}
	if (win->next_tag < RMA_TAG_FIRST_REPLY || win->next_tag > RMA_TAG_LAST_REPLY)
		win->next_tag = RMA_TAG_FIRST_REPLY;
	h->kind = kind;
	h->win = win->id;
	h->lock = (uint32_t)type;
	h->reply_tag = win->next_tag++;
	op->target = rank;
	op->msg = h;
	op->answer_len = sizeof(*h);
	op->recv = mpi_shim_req_alloc();
	if (!op->recv) {
		rma_op_free(op);
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	}
	rc = mpi_shim_recv_start(op->recv, op->answer, op->answer_len, MPI_BYTE, rank,
				 (int)h->reply_tag, win->comm, win->comm->ctx);
	if (!rc) {
		op->recv->active = 1;
		rc = rma_send(win, rank, RMA_TAG_REQUEST, h, sizeof(*h), &op->send);
	}
	if (rc)
		return mpi_shim_win_err(win, rc, call, "the request could not be sent");
	if (win->ops_tail)
		win->ops_tail->next = op;
	else
		win->ops = op;
	win->ops_tail = op;
	win->pending[rank]++;
	win->npending++;
	return MPI_SUCCESS;
}

int PMPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_lock";
	int rc;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
		return mpi_shim_win_err(win, MPI_ERR_LOCKTYPE, call, "lock type %d", type);
	if (rank != MPI_PROC_NULL && (rank < 0 || rank >= win->comm->size))
		return mpi_shim_win_err(win, MPI_ERR_RANK, call, "rank %d is not in the window",
					rank);
	if (!rma_passive_ok(win))
		return rma_sync_err(win, call, "another kind of epoch is open on this window");
	if (rank == MPI_PROC_NULL) {
		win->null_locks++;
		return MPI_SUCCESS;
	}
	if (win->locked[rank])
		return rma_sync_err(win, call, "this process holds a lock on that rank already");
	if (win->direct || win->nic) {
		int held = type == MPI_LOCK_EXCLUSIVE ? RMA_LOCKED_EXCL : RMA_LOCKED_SHARED;

		/* MPI_MODE_NOCHECK: the program knows nobody else locks. */
		if (!(assert & MPI_MODE_NOCHECK)) {
			if ((rc = win->direct ? mpi_shim_rma_shm_lock(win, rank, type, call) :
						mpi_shim_rma_nic_lock(win, rank, type, call)))
				return rc;
			held |= RMA_LOCKED_WORD;
		}
		win->locked[rank] = (uint8_t)held;
		win->nlocked++;
		win->epoch = RMA_EPOCH_LOCK;
		return MPI_SUCCESS;
	}
	if ((rc = rma_lock_msg(win, rank, RMA_LOCK, type, call)) ||
	    (rc = rma_wait(win, rma_none_pending_to, rank, call)))
		return rc;
	if (win->deferred_err)
		return rma_deferred(win, call);
	win->locked[rank] =
		(uint8_t)(type == MPI_LOCK_EXCLUSIVE ? RMA_LOCKED_EXCL : RMA_LOCKED_SHARED);
	win->nlocked++;
	win->epoch = RMA_EPOCH_LOCK;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_lock);

int PMPI_Win_unlock(int rank, MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_unlock";
	int rc;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (rank == MPI_PROC_NULL) {
		if (win->null_locks)
			win->null_locks--;
		return MPI_SUCCESS;
	}
	if (rank < 0 || rank >= win->comm->size)
		return mpi_shim_win_err(win, MPI_ERR_RANK, call, "rank %d is not in the window",
					rank);
	if (win->epoch != RMA_EPOCH_LOCK || !win->locked[rank])
		return rma_sync_err(win, call, "this process holds no lock on that rank");
	if (win->direct || win->nic) {
		int held = win->locked[rank];

		if (win->direct)
			mpi_shim_rma_shm_unlock(win, rank, held);
		else
			rc = mpi_shim_rma_nic_complete(win, rank, call);
		win->locked[rank] = 0;
		if (--win->nlocked == 0)
			win->epoch = RMA_EPOCH_NONE;
		/* The lock goes back even when an operation failed. */
		if (win->nic) {
			int rc2 = mpi_shim_rma_nic_unlock(win, rank, held, call);

			return rc ? rc : rc2;
		}
		return MPI_SUCCESS;
	}
	if ((rc = rma_wait(win, rma_none_pending_to, rank, call)) ||
	    (rc = rma_lock_msg(win, rank, RMA_UNLOCK, 0, call)) ||
	    (rc = rma_wait(win, rma_none_pending_to, rank, call)))
		return rc;
	win->locked[rank] = 0;
	if (--win->nlocked == 0)
		win->epoch = RMA_EPOCH_NONE;
	return rma_deferred(win, call);
}
MPI_SHIM_ALIAS(MPI_Win_unlock);

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_lock_all";
	int rc, i;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (!rma_passive_ok(win) || win->epoch == RMA_EPOCH_LOCK)
		return rma_sync_err(win, call, "another epoch is open on this window");
	if (win->direct || win->nic) {
		int held = RMA_LOCKED_SHARED;

		if (!(assert & MPI_MODE_NOCHECK)) {
			for (i = 0; i < win->comm->size; i++)
				if ((rc = win->direct ?
						  mpi_shim_rma_shm_lock(win, i, MPI_LOCK_SHARED, call) :
						  mpi_shim_rma_nic_lock(win, i, MPI_LOCK_SHARED, call))) {
					while (i--)
						if (win->direct)
							mpi_shim_rma_shm_unlock(
								win, i,
								RMA_LOCKED_SHARED | RMA_LOCKED_WORD);
						else
							mpi_shim_rma_nic_unlock(
								win, i,
								RMA_LOCKED_SHARED | RMA_LOCKED_WORD,
								call);
					return rc;
				}
			held |= RMA_LOCKED_WORD;
		}
		memset(win->locked, held, (size_t)win->comm->size);
		win->nlocked = win->comm->size;
		win->epoch = RMA_EPOCH_LOCK_ALL;
		return MPI_SUCCESS;
	}
	for (i = 0; i < win->comm->size; i++)
		if ((rc = rma_lock_msg(win, i, RMA_LOCK, MPI_LOCK_SHARED, call)))
			return rc;
	if ((rc = rma_wait(win, rma_none_pending, 0, call)))
		return rc;
	if (win->deferred_err)
		return rma_deferred(win, call);
	memset(win->locked, 1, (size_t)win->comm->size);
	win->nlocked = win->comm->size;
	win->epoch = RMA_EPOCH_LOCK_ALL;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_lock_all);

int PMPI_Win_unlock_all(MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_unlock_all";
	int rc, i;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (win->epoch != RMA_EPOCH_LOCK_ALL)
		return rma_sync_err(win, call, "MPI_Win_lock_all was not called on this window");
	if (win->direct || win->nic) {
		rc = win->nic ? mpi_shim_rma_nic_complete(win, -1, call) : MPI_SUCCESS;
		for (i = 0; i < win->comm->size; i++) {
			int rc2 = MPI_SUCCESS;

			if (win->direct)
				mpi_shim_rma_shm_unlock(win, i, win->locked[i]);
			else
				rc2 = mpi_shim_rma_nic_unlock(win, i, win->locked[i], call);
			if (!rc)
				rc = rc2;
		}
		memset(win->locked, 0, (size_t)win->comm->size);
		win->nlocked = 0;
		win->epoch = RMA_EPOCH_NONE;
		return rc;
	}
	if ((rc = rma_wait(win, rma_none_pending, 0, call)))
		return rc;
	for (i = 0; i < win->comm->size; i++)
		if ((rc = rma_lock_msg(win, i, RMA_UNLOCK, 0, call)))
			return rc;
	if ((rc = rma_wait(win, rma_none_pending, 0, call)))
		return rc;
	memset(win->locked, 0, (size_t)win->comm->size);
	win->nlocked = 0;
	win->epoch = RMA_EPOCH_NONE;
	return rma_deferred(win, call);
}
MPI_SHIM_ALIAS(MPI_Win_unlock_all);

static int rma_flush(MPI_Win win, int rank, const char *call)
{
	int rc;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (rank != -1 && rank != MPI_PROC_NULL && (rank < 0 || rank >= win->comm->size))
		return mpi_shim_win_err(win, MPI_ERR_RANK, call, "rank %d is not in the window",
					rank);
	if (win->epoch != RMA_EPOCH_LOCK && win->epoch != RMA_EPOCH_LOCK_ALL)
		return rma_sync_err(win, call, "no passive-target epoch is open on this window");
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank >= 0 && !win->locked[rank])
		return rma_sync_err(win, call, "this process holds no lock on that rank");
	if (win->direct) {
		/* Every operation was done at its call. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return MPI_SUCCESS;
	}
	if (win->nic)
		return mpi_shim_rma_nic_complete(win, rank, call);
	rc = rank < 0 ? rma_wait(win, rma_none_pending, 0, call) :
			rma_wait(win, rma_none_pending_to, rank, call);
	return rc ? rc : rma_deferred(win, call);
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
	MPI_SHIM_ENTER();
	/* A window in a segment or of single copy, in a passive epoch that
	 * holds rank: every operation was done at its call. */
	if (mpi_shim_likely(mpi_shim.initialized && !mpi_shim.finalized && win != MPI_WIN_NULL &&
			    win->valid && win->direct && rank >= 0 && rank < win->comm->size &&
			    (win->epoch == RMA_EPOCH_LOCK || win->epoch == RMA_EPOCH_LOCK_ALL) &&
			    win->locked[rank])) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return MPI_SUCCESS;
	}
	return rma_flush(win, rank, "MPI_Win_flush");
}
MPI_SHIM_ALIAS(MPI_Win_flush);

/* Local completion is remote completion here: the data was packed at the call. */
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
	MPI_SHIM_ENTER();
	return rma_flush(win, rank, "MPI_Win_flush_local");
}
MPI_SHIM_ALIAS(MPI_Win_flush_local);

int PMPI_Win_flush_all(MPI_Win win)
{
	MPI_SHIM_ENTER();
	return rma_flush(win, -1, "MPI_Win_flush_all");
}
MPI_SHIM_ALIAS(MPI_Win_flush_all);

int PMPI_Win_flush_local_all(MPI_Win win)
{
	MPI_SHIM_ENTER();
	return rma_flush(win, -1, "MPI_Win_flush_local_all");
}
MPI_SHIM_ALIAS(MPI_Win_flush_local_all);

int PMPI_Win_sync(MPI_Win win)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = rma_sync_check(win, "MPI_Win_sync")))
		return rc;
	/* The window's memory is the only copy: a full barrier orders this
	 * process's loads and stores with the other processes' (shared
	 * windows) and with what the hook wrote. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_sync);

/* The ranks in win of group's members: malloc'd, or NULL (reported). */
static int rma_group_ranks(MPI_Win win, MPI_Group group, int **ranks_p, const char *call)
{
	MPI_Group wg;
	int *in, *out, i, rc;

	if (group == MPI_GROUP_NULL)
		return mpi_shim_win_err(win, MPI_ERR_GROUP, call, "the group is MPI_GROUP_NULL");
	in = malloc(sizeof(int) * (size_t)(group->size + 1));
	out = malloc(sizeof(int) * (size_t)(group->size + 1));
	if (!in || !out) {
		free(in);
		free(out);
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	}
	for (i = 0; i < group->size; i++)
		in[i] = i;
	PMPI_Comm_group(win->comm, &wg);
	rc = PMPI_Group_translate_ranks(group, group->size, in, wg, out);
	PMPI_Group_free(&wg);
	free(in);
	for (i = 0; !rc && i < group->size; i++)
		if (out[i] == MPI_UNDEFINED)
			rc = MPI_ERR_GROUP;
	if (rc) {
		free(out);
		return mpi_shim_win_err(win, rc, call, "the group is not a subgroup of the window's");
	}
	*ranks_p = out;
	return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_post";
	int *ranks, rc, i;

	(void)assert;
	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (win->posted)
		return rma_sync_err(win, call, "MPI_Win_post was called already, without wait");
	if ((rc = rma_group_ranks(win, group, &ranks, call)))
		return rc;
	win->posted = 1;
	win->nexposed = 0;
	for (i = 0; i < group->size; i++)
		if (!win->exposed[ranks[i]]) {
			win->exposed[ranks[i]] = 1;
			win->nexposed++;
		}
	for (i = 0; !rc && i < group->size; i++)
		rc = rma_send_hdr(win, ranks[i], RMA_TAG_REQUEST, RMA_POST, 0, 0, 0);
	free(ranks);
	if (rc)
		return mpi_shim_win_err(win, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_post);

static int rma_posted_by_all(MPI_Win win, int arg)
{
	int i;

	(void)arg;
	for (i = 0; i < win->nstart; i++)
		if (!win->posts[win->start_group[i]])
			return 0;
	return 1;
}

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_start";
	int *ranks, rc, i;

	(void)assert;
	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (win->epoch != RMA_EPOCH_NONE && !(win->epoch == RMA_EPOCH_FENCE && !win->fence_ops))
		return rma_sync_err(win, call, "another access epoch is open on this window");
	if ((rc = rma_group_ranks(win, group, &ranks, call)))
		return rc;
	win->start_group = ranks;
	win->nstart = group->size;
	if ((rc = rma_wait(win, rma_posted_by_all, 0, call))) {
		free(ranks);
		win->start_group = NULL;
		win->nstart = 0;
		return rc;
	}
	for (i = 0; i < win->nstart; i++)
		win->posts[ranks[i]]--;
	win->epoch = RMA_EPOCH_START;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_start);

int PMPI_Win_complete(MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_complete";
	int rc, i;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (win->epoch != RMA_EPOCH_START)
		return rma_sync_err(win, call, "MPI_Win_start was not called on this window");
	if ((rc = rma_wait(win, rma_none_pending, 0, call)))
		return rc;
	if (win->nic && (rc = mpi_shim_rma_nic_complete(win, -1, call)))
		return rc;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; !rc && i < win->nstart; i++)
		rc = rma_send_hdr(win, win->start_group[i], RMA_TAG_REQUEST, RMA_COMPLETE, 0, 0,
				  0);
	free(win->start_group);
	win->start_group = NULL;
	win->nstart = 0;
	win->epoch = RMA_EPOCH_NONE;
	if (rc)
		return mpi_shim_win_err(win, rc, call, "no memory");
	return rma_deferred(win, call);
}
MPI_SHIM_ALIAS(MPI_Win_complete);

static int rma_all_completed(MPI_Win win, int arg)
{
	(void)arg;
	return win->nexposed == 0;
}

int PMPI_Win_wait(MPI_Win win)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_wait";
	int rc;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (!win->posted)
		return rma_sync_err(win, call, "MPI_Win_post was not called on this window");
	if ((rc = rma_wait(win, rma_all_completed, 0, call)))
		return rc;
	win->posted = 0;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_wait);

int PMPI_Win_test(MPI_Win win, int *flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_test";
	int rc;

	if ((rc = rma_sync_check(win, call)))
		return rc;
	if (!flag)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "flag is NULL");
	if (!win->posted)
		return rma_sync_err(win, call, "MPI_Win_post was not called on this window");
	mpi_shim_progress();
	*flag = win->nexposed == 0;
	if (*flag)
		win->posted = 0;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_test);

/* --- the window's life --- */

int mpi_shim_rma_win_init(MPI_Win win)
{
	size_t n = (size_t)win->comm->size;

	win->locked = calloc(n, 1);
	win->granted = calloc(n, 1);
	win->exposed = calloc(n, 1);
	win->pending = calloc(n, sizeof(int));
	win->posts = calloc(n, sizeof(int));
	if (!win->locked || !win->granted || !win->exposed || !win->pending || !win->posts)
		goto free_arrays;
	if (rma.hook < 0) {
		rma.hook = mpi_shim_progress_register(rma_progress, MPI_SHIM_PROGRESS_ALWAYS);
		if (rma.hook < 0)
			goto free_arrays;
	}
	win->next = rma.wins;
	rma.wins = win;
	return MPI_SUCCESS;

free_arrays:
	free(win->locked);
	free(win->granted);
	free(win->exposed);
	free(win->pending);
	free(win->posts);
	return MPI_ERR_NO_MEM;
}

int mpi_shim_rma_win_busy(MPI_Win win, const char *call)
{
	if (win->epoch == RMA_EPOCH_LOCK || win->epoch == RMA_EPOCH_LOCK_ALL ||
	    win->epoch == RMA_EPOCH_START || win->posted)
		return rma_sync_err(win, call, "an epoch is still open on this window");
	if (win->npending || (win->nic && mpi_shim_rma_nic_pending(win)) ||
	    (win->epoch == RMA_EPOCH_FENCE && win->fence_ops))
		return rma_sync_err(win, call,
				    "operations on this window were not completed by a "
				    "synchronisation call");
	return MPI_SUCCESS;
}

static int rma_sent_all(MPI_Win win, int arg)
{
	(void)arg;
	return win->out == NULL;
}

void mpi_shim_rma_win_fini(MPI_Win win)
{
	struct mpi_shim_win **wp;
	struct rma_lock_wait *w;

	/* Answers already received by their origins, but maybe not yet
	 * reported sent here. */
	rma_wait(win, rma_sent_all, 0, "MPI_Win_free");
	for (wp = &rma.wins; *wp; wp = &(*wp)->next)
		if (*wp == win) {
			*wp = win->next;
			break;
		}
	while ((w = win->lock_waits)) {
		win->lock_waits = w->next;
		free(w);
	}
	free(win->locked);
	free(win->granted);
	free(win->exposed);
	free(win->pending);
	free(win->posts);
	free(win->start_group);
	rma_type_cache_free(win);
	if (!rma.wins && rma.hook >= 0) {
		mpi_shim_progress_unregister(rma.hook);
		rma.hook = -1;
	}
}
