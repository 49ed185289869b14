// SPDX-License-Identifier: MIT
/*
 * rma_nic.c - windows the NICs serve: one-sided operations that the
 * target's NIC executes on the memory its process exposed (bip_rma(3): the
 * simulated LANai board), so that a passive target that computes, or
 * sleeps in a blocking wait, is never needed, across hosts.
 *
 * A window is one of these when it is not direct (rma_shm.c: not all on
 * one host, or BIP_MPI_RMA=nic), is made by MPI_Win_create or
 * MPI_Win_allocate, and the NIC to every rank can do it
 * (bip_rma_capable); win.c agrees on it on every rank.  Each rank exposes
 * its window memory and two 64-bit lock words, and every rank learns
 * every other's two keys.
 *
 * The operations, at the origin, as bip_rma calls on the blocks of the
 * target datatype (one call per contiguous block; a block's offset is the
 * displacement times the target's disp_unit plus the block's own):
 *
 *   put, get           bip_rma_put and bip_rma_get, straight between the
 *                      program's buffer and the target when both sides are
 *                      contiguous, else through a packed copy at the
 *                      origin (unpacked into the result when a get
 *                      completes);
 *   accumulate, get-accumulate, fetch-and-op, compare-and-swap
 *                      bip_rma_atomic with the operation and element type,
 *                      when the board has both (the integer and floating
 *                      types of C and Fortran, and SUM, PROD, MIN, MAX,
 *                      the bitwise and logical operations, REPLACE,
 *                      NO_OP); else, for the other types (long double,
 *                      complex, pairs for MINLOC and MAXLOC, logical,
 *                      ...), emulated under the target's accumulate lock
 *                      word: taken by compare-and-swap, the blocks read,
 *                      the operation applied at the origin, written back,
 *                      the word released.  Whether a type is emulated
 *                      depends on the type alone, so two accumulates of one
 *                      predefined type, the only ones MPI orders, are
 *                      always atomic with respect to each other.
 *
 * Every call's ids are kept with the operation, which is complete when
 * they all are (bip_rma_test); flush, unlock, fence and complete wait for
 * them.  The board executes one origin's operations to one target in the
 * order they were started, so MPI's accumulate ordering holds.
 *
 * MPI_Win_lock is the target's lock word: RMA_NIC_EXCL while held
 * exclusively, plus the number of shared holders.  Exclusive: a
 * compare-and-swap from 0; shared: add 1, and if the exclusive bit was
 * set take it back and wait until it is clear; unlock subtracts.  Waiting
 * polls the word through the board, with the progress engine in between
 * and the processor yielded.  MPI_MODE_NOCHECK takes no word.
 *
 * The target's board checks every request against the region and the job
 * (bip_rma(3)); the origin checks the range against the target's size
 * first, as for every window of create and allocate (rma.c).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <bip.h>

#include "rma.h"
#include "datatype.h"

#define RMA_NIC_EXCL ((int64_t)1 << 40)

/* The lock words each rank exposes. */
enum { RMA_NIC_LOCK, RMA_NIC_ACC, RMA_NIC_WORDS };

struct rma_nic_op {
	int target;
	int *ids;
	size_t nids, left;
	int err;            /* the first error a call reported (-errno) */
	int complete;
	int listed;         /* on the window's list (win->nic_ops) */
	void *tmp;          /* the packed copies */
	/* a get's or fetch's packed copy (in tmp), unpacked into result at
	 * completion */
	void *landing;
	void *result;
	size_t rcount;
	MPI_Datatype rtype;
	struct mpi_shim_request *req; /* MPI_Rput...: the program's request */
	struct rma_nic_op *next;
};

/* One contiguous block of the target: where it is, and where its bytes
 * are in the packed form. */
struct rma_nic_block {
	uint64_t off;
	size_t len, packed;
};

struct rma_nic_blocks {
	struct rma_nic_block *b;
	size_t n, max, packed;
	int64_t base;
	int bad;
};

/* --- choosing and making --- */

int mpi_shim_rma_nic_setup(MPI_Win win, int *ok)
{
	MPI_Comm c = win->comm;
	uint64_t mine[2] = { 0, 0 }, *all = NULL;
	int i, rc;

	*ok = 1;
	for (i = 0; i < c->size && *ok; i++)
		if (bip_rma_capable(c->world[i]) != 1)
			*ok = 0;
	win->nic_words = calloc(RMA_NIC_WORDS, sizeof(int64_t));
	win->nic_keys = calloc((size_t)c->size * 2, sizeof(uint64_t));
	all = win->nic_keys;
	if (!win->nic_words || !all)
		*ok = 0;
	if (*ok && win->size > 0 &&
	    bip_rma_expose(win->base, (size_t)win->size, &win->nic_key) < 0)
		*ok = 0;
	if (*ok && bip_rma_expose(win->nic_words, RMA_NIC_WORDS * sizeof(int64_t),
				  &win->nic_ctl_key) < 0)
		*ok = 0;
	rc = PMPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_LAND, c);
	if (!rc && *ok) {
		mine[0] = win->nic_key;
		mine[1] = win->nic_ctl_key;
		rc = PMPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, c);
	}
	if (rc || !*ok) {
		mpi_shim_rma_nic_fini(win);
		*ok = 0;
	}
	return rc;
}

void mpi_shim_rma_nic_fini(MPI_Win win)
{
	if (win->nic_key)
		bip_rma_withdraw(win->nic_key);
	if (win->nic_ctl_key)
		bip_rma_withdraw(win->nic_ctl_key);
	win->nic_key = win->nic_ctl_key = 0;
	free(win->nic_words);
	free(win->nic_keys);
	win->nic_words = NULL;
	win->nic_keys = NULL;
}

/* --- the lock words --- */

/* One 64-bit atomic on target's lock words, waited for: MPI_SUCCESS, and
 * the value before in *old. */
static int rma_nic_word(MPI_Win win, int target, int word, int op, int64_t operand,
			int64_t compare, int64_t *old, const char *call)
{
	int64_t before = 0;
	int id = bip_rma_atomic(win->comm->world[target], win->nic_keys[2 * target + 1],
				(uint64_t)word * sizeof(int64_t), op, BIP_RMA_INT64, 1, &operand,
				op == BIP_RMA_CSWAP ? &compare : NULL, &before);

	if (id >= 0)
		id = bip_rma_wait(id);
	if (id < 0)
		return mpi_shim_win_err(win, MPI_ERR_OTHER, call,
					"the lock words of rank %d: %s", target, strerror(-id));
	if (old)
		*old = before;
	return MPI_SUCCESS;
}

/* Wait a little between two looks at a word another process holds. */
static void rma_nic_pause(unsigned *spins)
{
	mpi_shim_progress();
	if (++*spins > 16)
		sched_yield();
}

int mpi_shim_rma_nic_lock(MPI_Win win, int rank, int type, const char *call)
{
	unsigned spins = 0;
	int64_t old;
	int rc;

	for (;;) {
		if (type == MPI_LOCK_EXCLUSIVE) {
			if ((rc = rma_nic_word(win, rank, RMA_NIC_LOCK, BIP_RMA_CSWAP, RMA_NIC_EXCL, 0,
					       &old, call)))
				return rc;
			if (old == 0)
				return MPI_SUCCESS;
		} else {
			if ((rc = rma_nic_word(win, rank, RMA_NIC_LOCK, BIP_RMA_SUM, 1, 0, &old,
					       call)))
				return rc;
			if (!(old & RMA_NIC_EXCL))
				return MPI_SUCCESS;
			if ((rc = rma_nic_word(win, rank, RMA_NIC_LOCK, BIP_RMA_SUM, -1, 0, NULL,
					       call)))
				return rc;
		}
		/* Wait until it may be free, looking without taking. */
		do {
			rma_nic_pause(&spins);
			if ((rc = rma_nic_word(win, rank, RMA_NIC_LOCK, BIP_RMA_NO_OP, 0, 0, &old,
					       call)))
				return rc;
		} while (type == MPI_LOCK_EXCLUSIVE ? old != 0 : (old & RMA_NIC_EXCL) != 0);
	}
}

int mpi_shim_rma_nic_unlock(MPI_Win win, int rank, int held, const char *call)
{
	if (!(held & RMA_LOCKED_WORD))
		return MPI_SUCCESS;
	return rma_nic_word(win, rank, RMA_NIC_LOCK, BIP_RMA_SUM,
			    (held & RMA_LOCKED_TYPE) == RMA_LOCKED_EXCL ? -RMA_NIC_EXCL : -1, 0, NULL,
			    call);
}

/* --- completion --- */

static void rma_nic_op_free(struct rma_nic_op *op)
{
	if (op->rtype && !op->rtype->predefined)
		mpi_shim_datatype_release(op->rtype);
	free(op->ids);
	free(op->tmp);
	free(op);
}

/* Test op's calls; 1 when they are all complete. */
static int rma_nic_op_test(struct rma_nic_op *op)
{
	size_t i;

	if (op->complete)
		return 1;
	for (i = 0; i < op->nids; i++) {
		int rc;

		if (op->ids[i] < 0)
			continue;
		rc = bip_rma_test(op->ids[i]);
		if (rc == 0)
			continue;
		if (rc < 0 && !op->err)
			op->err = rc;
		op->ids[i] = -1;
		op->left--;
	}
	if (op->left)
		return 0;
	if (!op->err && op->result)
		mpi_shim_datatype_unpack(op->landing, op->rcount * op->rtype->size, op->result,
					 op->rcount, op->rtype, 0);
	op->complete = 1;
	return 1;
}

/* The MPI error class of a bip_rma error. */
static int rma_nic_class(int err)
{
	switch (err) {
	case -ERANGE:
		return MPI_ERR_RMA_RANGE;
	case -EACCES:
		return MPI_ERR_RMA_SYNC;
	case -ENOMEM:
		return MPI_ERR_NO_MEM;
	default:
		return MPI_ERR_OTHER;
	}
}

int mpi_shim_rma_nic_complete(MPI_Win win, int target, const char *call)
{
	struct rma_nic_op **pp, *op;
	unsigned spins = 0;
	int err = 0;

	for (;;) {
		int left = 0;

		for (pp = &win->nic_ops; (op = *pp);) {
			if (target >= 0 && op->target != target) {
				pp = &op->next;
				continue;
			}
			if (!rma_nic_op_test(op)) {
				left = 1;
				pp = &op->next;
				continue;
			}
			if (op->err && !err)
				err = op->err;
			*pp = op->next;
			op->listed = 0;
			if (!op->req)
				rma_nic_op_free(op);
		}
		if (!left)
			break;
		rma_nic_pause(&spins);
	}
	if (err)
		return mpi_shim_win_err(win, rma_nic_class(err), call,
					"a target's NIC refused an operation of this epoch: %s",
					strerror(-err));
	return MPI_SUCCESS;
}

int mpi_shim_rma_nic_pending(MPI_Win win)
{
	return win->nic_ops != NULL;
}

/* The program's request of an operation. */
static int rma_nic_req_progress(struct mpi_shim_request *r)
{
	struct rma_nic_op *op = r->state;

	if (!op)
		return 1; /* done at its call */
	if (!rma_nic_op_test(op))
		return 0;
	return op->err ? -rma_nic_class(op->err) : 1;
}

static void rma_nic_req_release(struct mpi_shim_request *r)
{
	struct rma_nic_op *op = r->state;

	r->state = NULL;
	if (!op)
		return;
	op->req = NULL;
	/* Still listed: the window's next completion frees it. */
	if (!op->listed)
		rma_nic_op_free(op);
}

static const struct mpi_shim_req_ops rma_nic_req_ops = {
	.progress = rma_nic_req_progress,
	.release = rma_nic_req_release,
};

/* --- issuing --- */

/* The board's element type of the predefined type t, or 0. */
static int rma_nic_type(const struct mpi_shim_type *t)
{
	int is_signed, is_float = 0;

	if (!t)
		return 0;
	switch (t->kind) {
	case MPI_SHIM_BASIC_CHAR:
	case MPI_SHIM_BASIC_SIGNED_CHAR:
	case MPI_SHIM_BASIC_SHORT:
	case MPI_SHIM_BASIC_INT:
	case MPI_SHIM_BASIC_LONG:
	case MPI_SHIM_BASIC_LONG_LONG:
	case MPI_SHIM_BASIC_INT8_T:
	case MPI_SHIM_BASIC_INT16_T:
	case MPI_SHIM_BASIC_INT32_T:
	case MPI_SHIM_BASIC_INT64_T:
	case MPI_SHIM_BASIC_AINT:
	case MPI_SHIM_BASIC_OFFSET:
	case MPI_SHIM_BASIC_COUNT:
	case MPI_SHIM_BASIC_INTEGER:
	case MPI_SHIM_BASIC_INTEGER1:
	case MPI_SHIM_BASIC_INTEGER2:
	case MPI_SHIM_BASIC_INTEGER4:
	case MPI_SHIM_BASIC_INTEGER8:
		is_signed = 1;
		break;
	case MPI_SHIM_BASIC_UNSIGNED_CHAR:
	case MPI_SHIM_BASIC_BYTE:
	case MPI_SHIM_BASIC_UNSIGNED_SHORT:
	case MPI_SHIM_BASIC_UNSIGNED:
	case MPI_SHIM_BASIC_UNSIGNED_LONG:
	case MPI_SHIM_BASIC_UNSIGNED_LONG_LONG:
	case MPI_SHIM_BASIC_UINT8_T:
	case MPI_SHIM_BASIC_UINT16_T:
	case MPI_SHIM_BASIC_UINT32_T:
	case MPI_SHIM_BASIC_UINT64_T:
		is_signed = 0;
		break;
	case MPI_SHIM_BASIC_FLOAT:
	case MPI_SHIM_BASIC_DOUBLE:
	case MPI_SHIM_BASIC_REAL:
	case MPI_SHIM_BASIC_DOUBLE_PRECISION:
	case MPI_SHIM_BASIC_REAL4:
	case MPI_SHIM_BASIC_REAL8:
		is_float = 1;
		is_signed = 1;
		break;
	default:
		return 0;
	}
	switch (t->size) {
	case 1:
		return is_float ? 0 : is_signed ? BIP_RMA_INT8 : BIP_RMA_UINT8;
	case 2:
		return is_float ? 0 : is_signed ? BIP_RMA_INT16 : BIP_RMA_UINT16;
	case 4:
		return is_float ? BIP_RMA_FLOAT : is_signed ? BIP_RMA_INT32 : BIP_RMA_UINT32;
	case 8:
		return is_float ? BIP_RMA_DOUBLE : is_signed ? BIP_RMA_INT64 : BIP_RMA_UINT64;
	default:
		return 0;
	}
}

/* The board's operation of op, or 0. */
static int rma_nic_op(MPI_Op op)
{
	if (op == MPI_SUM)
		return BIP_RMA_SUM;
	if (op == MPI_PROD)
		return BIP_RMA_PROD;
	if (op == MPI_MIN)
		return BIP_RMA_MIN;
	if (op == MPI_MAX)
		return BIP_RMA_MAX;
	if (op == MPI_BAND)
		return BIP_RMA_BAND;
	if (op == MPI_BOR)
		return BIP_RMA_BOR;
	if (op == MPI_BXOR)
		return BIP_RMA_BXOR;
	if (op == MPI_LAND)
		return BIP_RMA_LAND;
	if (op == MPI_LOR)
		return BIP_RMA_LOR;
	if (op == MPI_LXOR)
		return BIP_RMA_LXOR;
	if (op == MPI_REPLACE)
		return BIP_RMA_REPLACE;
	if (op == MPI_NO_OP)
		return BIP_RMA_NO_OP;
	return 0;
}

static int rma_nic_block(void *arg, int64_t disp, uint64_t len)
{
	struct rma_nic_blocks *b = arg;

	if (!len)
		return 0;
	if (b->base + disp < 0) {
		b->bad = 1;
		return -1;
	}
	if (b->n == b->max) {
		size_t max = b->max ? 2 * b->max : 16;
		struct rma_nic_block *v = realloc(b->b, max * sizeof(*v));

		if (!v)
			return -1;
		b->b = v;
		b->max = max;
	}
	b->b[b->n].off = (uint64_t)(b->base + disp);
	b->b[b->n].len = (size_t)len;
	b->b[b->n].packed = b->packed;
	b->packed += len;
	b->n++;
	return 0;
}

/* The target's blocks of a, as offsets in its exposed memory. */
static int rma_nic_blocks(MPI_Win win, const struct rma_args *a, struct rma_nic_blocks *b)
{
	MPI_Datatype t = a->ttype;
	MPI_Aint tlb, text;
	size_t i;
	int64_t off = (int64_t)a->disp * win->disp_units[a->target];

	memset(b, 0, sizeof(*b));
	if (t->contiguous) {
		b->base = off;
		return rma_nic_block(b, t->true_lb, a->tcount * t->size);
	}
	PMPI_Type_get_extent(t, &tlb, &text);
	for (i = 0; i < a->tcount; i++) {
		b->base = off + (int64_t)i * text;
		if (mpi_shim_datatype_for_each_block(t, rma_nic_block, b))
			return -1;
	}
	return 0;
}

/* Add id (or the error of starting it) to op. */
static void rma_nic_add(struct rma_nic_op *op, int id)
{
	if (id < 0) {
		if (!op->err)
			op->err = id;
		return;
	}
	op->ids[op->nids++] = id;
	op->left++;
}

/* An accumulate the board cannot do as one operation: under the target's
 * accumulate lock word, read, apply here, write back; done at return. */
static int rma_nic_emulate(MPI_Win win, const struct rma_args *a, struct rma_nic_blocks *bl,
			   const void *data, void *old, const char *call)
{
	int node = win->comm->world[a->target], rc, err = MPI_SUCCESS, id;
	uint64_t key = win->nic_keys[2 * a->target];
	int64_t lo = 0, hi = 0, me = win->comm->rank + 1, prev;
	size_t bytes = a->tcount * a->ttype->size, i;
	MPI_Aint tlb, text;
	unsigned spins = 0;
	char *mirror;
	int64_t origin;

	mpi_shim_rma_span(a->ttype, a->tcount, &lo, &hi);
	PMPI_Type_get_extent(a->ttype, &tlb, &text);
	mirror = malloc((size_t)(hi - lo) + (size_t)(text > 0 ? text : 0) + 1);
	if (!mirror)
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	origin = (int64_t)a->disp * win->disp_units[a->target];
	for (;;) {
		if ((rc = rma_nic_word(win, a->target, RMA_NIC_ACC, BIP_RMA_CSWAP, me, 0, &prev,
				       call))) {
			free(mirror);
			return rc;
		}
		if (prev == 0)
			break;
		rma_nic_pause(&spins);
	}
	/* The mirror is laid out as the target's memory at the displacement. */
	for (i = 0; !err && i < bl->n; i++) {
		id = bip_rma_get(node, key, bl->b[i].off,
				 mirror + ((int64_t)bl->b[i].off - origin - lo), bl->b[i].len);
		if (id < 0 || (id = bip_rma_wait(id)) < 0)
			err = rma_nic_class(id);
	}
	if (!err)
		err = mpi_shim_rma_apply(a->kind, a->op, mirror - lo, a->tcount, a->ttype, data,
					 bytes, old);
	if (!err && !(a->kind == RMA_GET_ACC && mpi_shim_op_is_no_op(a->op)))
		for (i = 0; !err && i < bl->n; i++) {
			id = bip_rma_put(node, key, bl->b[i].off,
					 mirror + ((int64_t)bl->b[i].off - origin - lo), bl->b[i].len);
			if (id < 0 || (id = bip_rma_wait(id)) < 0)
				err = rma_nic_class(id);
		}
	rc = rma_nic_word(win, a->target, RMA_NIC_ACC, BIP_RMA_REPLACE, 0, 0, NULL, call);
	free(mirror);
	if (err)
		return mpi_shim_win_err(win, err, call, "an accumulate on rank %d failed",
					a->target);
	return rc;
}

int mpi_shim_rma_nic_issue(MPI_Win win, const struct rma_args *a, MPI_Request *ureq,
			   const char *call)
{
	int node = win->comm->world[a->target], btype = rma_nic_type(a->ttype->basic), bop = 0;
	uint64_t key = win->nic_keys[2 * a->target];
	size_t bytes = a->tcount * a->ttype->size, i;
	struct rma_nic_blocks bl;
	struct rma_nic_op *op;
	const char *src = NULL;
	char *dst = NULL;
	int rc;

	if (rma_nic_blocks(win, a, &bl)) {
		free(bl.b);
		return mpi_shim_win_err(win, bl.bad ? MPI_ERR_RMA_RANGE : MPI_ERR_NO_MEM, call,
					bl.bad ? "a block lies before the window" : "no memory");
	}
	op = calloc(1, sizeof(*op));
	if (op)
		op->ids = malloc(sizeof(int) * (bl.n ? bl.n : 1));
	if (!op || !op->ids)
		goto no_mem;
	op->target = a->target;
	/* Where the origin's data is, packed. */
	if (a->kind == RMA_PUT || a->kind == RMA_ACC ||
	    (a->kind == RMA_GET_ACC && !mpi_shim_op_is_no_op(a->op))) {
		if (a->otype->contiguous) {
			src = mpi_shim_datatype_start(a->origin, a->otype);
		} else {
			if (!(op->tmp = malloc(bytes)))
				goto no_mem;
			mpi_shim_datatype_pack(a->origin, a->ocount, a->otype, 0, op->tmp, bytes);
			src = op->tmp;
		}
	}
	/* Where what is read goes, packed. */
	if (a->kind == RMA_GET || a->kind == RMA_GET_ACC || a->kind == RMA_CAS) {
		if (a->rtype->contiguous) {
			dst = mpi_shim_datatype_start(a->result, a->rtype);
		} else {
			void *in = malloc(bytes ? bytes : 1);

			if (!in)
				goto no_mem;
			if (op->tmp) {
				/* The origin's data is packed too: keep both. */
				char *both = realloc(op->tmp, 2 * bytes);

				free(in);
				if (!both)
					goto no_mem;
				op->tmp = both;
				src = both;
				dst = both + bytes;
			} else {
				op->tmp = in;
				dst = in;
			}
			op->result = a->result;
			op->rcount = a->rcount;
			op->rtype = a->rtype;
			if (!a->rtype->predefined)
				mpi_shim_datatype_retain(a->rtype);
		}
	}
	if (a->kind == RMA_ACC || a->kind == RMA_GET_ACC || a->kind == RMA_CAS) {
		bop = a->kind == RMA_CAS ? BIP_RMA_CSWAP : rma_nic_op(a->op);
		if (!btype || !bop) {
			/* Done at return, under the accumulate lock word. */
			char cas[64];
			const void *data = src;

			if (a->kind == RMA_CAS) {
				if (2 * bytes > sizeof(cas)) {
					rc = mpi_shim_win_err(win, MPI_ERR_TYPE, call,
							      "the datatype is too large");
					goto out;
				}
				memcpy(cas, a->origin, bytes);
				memcpy(cas + bytes, a->compare, bytes);
				data = cas;
			}
			rc = rma_nic_emulate(win, a, &bl, data, dst, call);
			if (!rc && op->result)
				mpi_shim_datatype_unpack(dst, bytes, op->result, op->rcount,
							 op->rtype, 0);
			if (!rc && ureq)
				rc = mpi_shim_request_progress_new(win->comm, &rma_nic_req_ops, NULL, ureq);
			goto out;
		}
	}
	for (i = 0; i < bl.n; i++) {
		const struct rma_nic_block *b = &bl.b[i];
		size_t esize = a->ttype->basic ? a->ttype->basic->size : 1;

		switch (a->kind) {
		case RMA_PUT:
			rma_nic_add(op, bip_rma_put(node, key, b->off, src + b->packed, b->len));
			break;
		case RMA_GET:
			rma_nic_add(op, bip_rma_get(node, key, b->off, dst + b->packed, b->len));
			break;
		case RMA_CAS:
			rma_nic_add(op, bip_rma_atomic(node, key, b->off, bop, btype, 1, a->origin,
						       a->compare, dst));
			break;
		default:
			rma_nic_add(op, bip_rma_atomic(node, key, b->off, bop, btype, b->len / esize,
						       src ? src + b->packed : NULL, NULL,
						       dst ? dst + b->packed : NULL));
			break;
		}
	}
	free(bl.b);
	if (op->err && !op->left) {
		rc = mpi_shim_win_err(win, rma_nic_class(op->err), call,
				      "the NIC refused the operation: %s", strerror(-op->err));
		rma_nic_op_free(op);
		return rc;
	}
	op->landing = dst;
	if (ureq) {
		if ((rc = mpi_shim_request_progress_new(win->comm, &rma_nic_req_ops, op, ureq)))
			return mpi_shim_win_err(win, rc, call, "no memory for a request");
		op->req = *ureq;
	}
	op->listed = 1;
	op->next = win->nic_ops;
	win->nic_ops = op;
	return MPI_SUCCESS;

no_mem:
	rc = mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
out:
	free(bl.b);
	if (op)
		rma_nic_op_free(op);
	return rc;
}
