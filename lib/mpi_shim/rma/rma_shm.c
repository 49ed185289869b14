// SPDX-License-Identifier: MIT
/*
 * rma_shm.c - direct windows: one-sided operations done by loads, stores
 * and processor atomics, on a window whose every rank's memory is mapped
 * in every process of it (MPI_Win_allocate and MPI_Win_allocate_shared on
 * a communicator within one host, win.c).  No target takes part: an
 * operation is complete, at its origin and at its target, when its call
 * returns, so that flush is a processor barrier and a target that
 * computes, or sleeps in a blocking wait, is never needed.
 *
 * The segment (win.c) holds every rank's part, then one struct
 * rma_shm_ctl per rank, 64 bytes each, so that two ranks' words never
 * share a cache line:
 *
 *   lock   the rank's window lock (MPI_Win_lock): RMA_SHM_EXCL while one
 *          process holds it exclusively, plus the number of processes
 *          holding it shared.  An exclusive lock is taken by
 *          compare-and-swap from 0 and given back by subtracting
 *          RMA_SHM_EXCL; a shared one by adding 1, which is taken back
 *          to wait while the exclusive bit is set, and given back by
 *          subtracting 1.  There is no queue: a process that wants it
 *          exclusively may wait as long as shared holders keep coming.
 *          MPI_MODE_NOCHECK takes no lock word at all.
 *   acc    the rank's accumulate lock: held (compare-and-swap from 0 to 1,
 *          store of 0) around every accumulate, get-accumulate,
 *          fetch-and-op and compare-and-swap on the rank's memory, so
 *          that they are atomic per element whatever their origin, for
 *          every operation and datatype alike (MPI-3.1 11.7.1).  Put and
 *          get do not take it.
 *
 * Waiting on a word spins a little, then yields the processor; the wait
 * for a window lock also drives the progress engine, whose messages the
 * holder may be waiting for.  So a host with more processes than
 * processors goes on.
 *
 * Every process of the job can write these words: the segment is opened
 * under the owner checks of bip_segment_open, as every shared segment
 * of BIP is, and a process of the same job that spoils a word can only
 * make another one wait.  No address is ever read from the segment:
 * where an operation lands is computed from this process's own copy of
 * every rank's offset, size and disp_unit, after the range check of
 * rma.c (MPI_ERR_RMA_RANGE, nothing touched).
 *
 * A window of MPI_Win_create keeps the program's memory: its segment
 * holds the lock words only, and the data moves by single copy,
 * process_vm_writev and process_vm_readv between this process and the
 * target's pid, at the addresses the target gave when the window was
 * made, over the blocks of the target datatype (rma_cma_op).  An
 * accumulate reads the blocks into a local mirror, applies the operation
 * there and writes them back, under the accumulate lock.  The window is
 * made so only where every rank could read a word of every other's
 * (Yama may forbid it); messages otherwise.
 *
 * Every rank of the window chooses the direct way or the messages of
 * rma.c alike (win.c agrees on it when the window is made): BIP_MPI_RMA=
 * messages asks for messages even here.  The window's memory model is
 * MPI_WIN_UNIFIED.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rma.h"
#include "datatype.h"
#include "../../bip/base/atomics.h"

#define RMA_SHM_EXCL 0x80000000u

struct rma_shm_ctl {
	uint32_t lock;
	uint32_t acc;
	uint32_t spare[14];
};
_Static_assert(sizeof(struct rma_shm_ctl) == 64, "one cache line per rank");

size_t mpi_shim_rma_shm_ctl_len(int nranks)
{
	return (size_t)nranks * sizeof(struct rma_shm_ctl);
}

/* One step of a wait on a word another process holds. */
static void rma_shm_pause(unsigned *spins)
{
	if (++*spins < 128)
		bip_cpu_relax();
	else
		sched_yield();
}

int mpi_shim_rma_shm_lock(MPI_Win win, int rank, int type, const char *call)
{
	uint32_t *w = &win->ctl[rank].lock;
	unsigned spins = 0;

	(void)call;
	for (;;) {
		if (type == MPI_LOCK_EXCLUSIVE) {
			uint32_t zero = 0;

			if (__atomic_compare_exchange_n(w, &zero, RMA_SHM_EXCL, 0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return MPI_SUCCESS;
		} else {
			if (!(__atomic_fetch_add(w, 1, __ATOMIC_ACQUIRE) & RMA_SHM_EXCL))
				return MPI_SUCCESS;
			__atomic_fetch_sub(w, 1, __ATOMIC_RELAXED);
		}
		do {
			rma_shm_pause(&spins);
			if (!(spins & 63))
				mpi_shim_progress();
		} while (type == MPI_LOCK_EXCLUSIVE ? bip_load_relaxed(w) != 0 :
						      (bip_load_relaxed(w) & RMA_SHM_EXCL) != 0);
	}
}

void mpi_shim_rma_shm_unlock(MPI_Win win, int rank, int held)
{
	uint32_t *w = &win->ctl[rank].lock;

	if (!(held & RMA_LOCKED_WORD)) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return;
	}
	if ((held & RMA_LOCKED_TYPE) == RMA_LOCKED_EXCL)
		__atomic_fetch_sub(w, RMA_SHM_EXCL, __ATOMIC_RELEASE);
	else
		__atomic_fetch_sub(w, 1, __ATOMIC_RELEASE);
}

static void rma_shm_acc_lock(uint32_t *w)
{
	unsigned spins = 0;
	uint32_t zero;

	for (;;) {
		zero = 0;
		if (__atomic_compare_exchange_n(w, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		while (bip_load_relaxed(w))
			rma_shm_pause(&spins);
	}
}

static void rma_shm_acc_unlock(uint32_t *w)
{
	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
}

void mpi_shim_rma_shm_fop(MPI_Win win, const void *origin, void *result, MPI_Datatype t,
			  int target, char *taddr, MPI_Op op, mpi_shim_op_loop loop)
{
	union {
		long double align;
		char c[64];
	} in;

	/* The origin's value copied first: it may lie in the window. */
	if (op != MPI_NO_OP)
		memcpy(in.c, origin, t->size);
	rma_shm_acc_lock(&win->ctl[target].acc);
	memcpy(result, taddr, t->size);
	if (loop)
		loop(in.c, taddr, 1);
	else if (op == MPI_REPLACE)
		memcpy(taddr, in.c, t->size);
	rma_shm_acc_unlock(&win->ctl[target].acc);
}

void mpi_shim_rma_shm_acc(MPI_Win win, const void *origin, int count, MPI_Datatype t, int target,
			  char *taddr, MPI_Op op, mpi_shim_op_loop loop)
{
	if (op == MPI_NO_OP)
		return;
	rma_shm_acc_lock(&win->ctl[target].acc);
	if (loop)
		loop(origin, taddr, (size_t)count);
	else
		memmove(taddr, origin, (size_t)count * t->size);
	rma_shm_acc_unlock(&win->ctl[target].acc);
}

void mpi_shim_rma_shm_cas(MPI_Win win, const void *origin, const void *compare, void *result,
			  MPI_Datatype t, int target, char *taddr)
{
	union {
		long double align;
		char c[32];
	} in, cmp;

	memcpy(in.c, origin, t->size);
	memcpy(cmp.c, compare, t->size);
	rma_shm_acc_lock(&win->ctl[target].acc);
	memcpy(result, taddr, t->size);
	if (!memcmp(result, cmp.c, t->size))
		memcpy(taddr, in.c, t->size);
	rma_shm_acc_unlock(&win->ctl[target].acc);
}

/* Copy bytes of data from count elements of stype at src into dcount
 * elements of dtype at dst: 0, or -1 without memory. */
static int rma_shm_copy(void *dst, size_t dcount, MPI_Datatype dtype, const void *src,
			size_t scount, MPI_Datatype stype, size_t bytes)
{
	void *tmp;

	if (!bytes)
		return 0;
	if (dtype->contiguous && stype->contiguous) {
		/* memmove: a process may put into its own part from it. */
		memmove(mpi_shim_datatype_start(dst, dtype), mpi_shim_datatype_start(src, stype),
			bytes);
		return 0;
	}
	if (dtype->contiguous) {
		mpi_shim_datatype_pack(src, scount, stype, 0, mpi_shim_datatype_start(dst, dtype),
				       bytes);
		return 0;
	}
	if (stype->contiguous) {
		mpi_shim_datatype_unpack(mpi_shim_datatype_start(src, stype), bytes, dst, dcount,
					 dtype, 0);
		return 0;
	}
	tmp = malloc(bytes);
	if (!tmp)
		return -1;
	mpi_shim_datatype_pack(src, scount, stype, 0, tmp, bytes);
	mpi_shim_datatype_unpack(tmp, bytes, dst, dcount, dtype, 0);
	free(tmp);
	return 0;
}

/* --- single copy (windows of MPI_Win_create) --- */

static const char rma_cma_probe = 1;

int mpi_shim_rma_shm_cma_setup(MPI_Win win, int *ok)
{
	struct {
		int64_t pid;
		uint64_t base, probe;
	} me, *all;
	MPI_Comm c = win->comm;
	int i, rc;

	*ok = 0;
	all = malloc(sizeof(*all) * (size_t)c->size);
	win->pids = malloc(sizeof(*win->pids) * (size_t)c->size);
	win->bases = malloc(sizeof(*win->bases) * (size_t)c->size);
	me.pid = getpid();
	me.base = (uintptr_t)win->base;
	me.probe = (uintptr_t)&rma_cma_probe;
	*ok = all && win->pids && win->bases;
	/* Everyone takes part in the exchange, with or without memory. */
	rc = PMPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_LAND, c);
	if (rc || !*ok) {
		free(all);
		*ok = 0;
		return rc;
	}
	rc = PMPI_Allgather(&me, 3, MPI_INT64_T, all, 3, MPI_INT64_T, c);
	for (i = 0; !rc && i < c->size; i++) {
		char got = 0;
		struct iovec l = { &got, 1 }, r = { (void *)(uintptr_t)all[i].probe, 1 };

		win->pids[i] = (int)all[i].pid;
		win->bases[i] = (uintptr_t)all[i].base;
		if (i != c->rank && *ok &&
		    (process_vm_readv(win->pids[i], &l, 1, &r, 1, 0) != 1 || got != 1))
			*ok = 0;
	}
	free(all);
	if (!rc)
		rc = PMPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_LAND, c);
	return rc;
}

/* The blocks of count elements of t at addr, relative to addr: the span
 * [lo, hi) comes from rma.c's rule (mpi_shim_rma_span). */
struct rma_cma_blocks {
	struct iovec *v;
	size_t n, max;
	int64_t base;
};

static int rma_cma_block(void *arg, int64_t disp, uint64_t len)
{
	struct rma_cma_blocks *b = arg;

	if (!len)
		return 0;
	if (b->n == b->max) {
		size_t max = b->max ? 2 * b->max : 16;
		struct iovec *v = realloc(b->v, max * sizeof(*v));

		if (!v)
			return -1;
		b->v = v;
		b->max = max;
	}
	b->v[b->n].iov_base = (void *)(intptr_t)(b->base + disp);
	b->v[b->n].iov_len = (size_t)len;
	b->n++;
	return 0;
}

/* Move the blocks: remote (in pid) from or to local, the same lengths. */
static int rma_cma_move(int pid, int write, struct iovec *local, struct iovec *remote, size_t n)
{
	while (n) {
		size_t k = n < IOV_MAX ? n : IOV_MAX, want = 0, i;
		ssize_t done;

		for (i = 0; i < k; i++)
			want += local[i].iov_len;
		done = write ? process_vm_writev(pid, local, k, remote, k, 0) :
			       process_vm_readv(pid, local, k, remote, k, 0);
		if (done < 0)
			return -errno;
		if ((size_t)done != want)
			return -EFAULT;
		local += k;
		remote += k;
		n -= k;
	}
	return 0;
}

/*
 * Operation a on a window of single copy: the target's blocks of the
 * target type, as iovecs, are mirrored in local memory laid out the same
 * way (the span of the elements), which the operation reads or writes as
 * if it were the target's.
 */
static int rma_cma_op(MPI_Win win, const struct rma_args *a, const char *call)
{
	MPI_Datatype t = a->ttype;
	size_t bytes = a->tcount * t->size, i;
	uintptr_t taddr = win->bases[a->target] +
			  (uintptr_t)((int64_t)a->disp * win->disp_units[a->target]);
	struct rma_cma_blocks rb = { 0 };
	struct iovec *lv = NULL;
	int64_t lo = 0, hi = 0;
	char *mirror = NULL, cas[64];
	void *packed = NULL, *old = NULL;
	const void *data = NULL;
	int pid = win->pids[a->target], rc = 0, err = MPI_SUCCESS, locked = 0;
	MPI_Aint tlb, text;

	if (t->contiguous && ((a->kind == RMA_PUT && a->otype->contiguous) ||
			      (a->kind == RMA_GET && a->rtype->contiguous))) {
		/* One block each side: straight between the buffers. */
		struct iovec l, r = { (void *)(taddr + (uintptr_t)t->true_lb), bytes };

		l.iov_base = a->kind == RMA_PUT ?
				     mpi_shim_datatype_start(a->origin, a->otype) :
				     mpi_shim_datatype_start(a->result, a->rtype);
		l.iov_len = bytes;
		if ((rc = rma_cma_move(pid, a->kind == RMA_PUT, &l, &r, 1)))
			return mpi_shim_win_err(win, MPI_ERR_OTHER, call,
						"single copy with rank %d (pid %d) failed: %s",
						a->target, pid, strerror(-rc));
		return MPI_SUCCESS;
	}
	mpi_shim_rma_span(t, a->tcount, &lo, &hi);
	PMPI_Type_get_extent(t, &tlb, &text);
	/* The remote blocks, element by element. */
	if (t->contiguous) {
		rb.base = (int64_t)taddr;
		rc = rma_cma_block(&rb, t->true_lb, bytes);
	} else {
		for (i = 0; !rc && i < a->tcount; i++) {
			rb.base = (int64_t)taddr + (int64_t)i * text;
			rc = mpi_shim_datatype_for_each_block(t, rma_cma_block, &rb);
		}
	}
	/* The mirror: the span and a whole extent more (rma.c's pair rule). */
	mirror = rc ? NULL : malloc((size_t)(hi - lo) + (size_t)(text > 0 ? text : 0) + 1);
	lv = rc ? NULL : malloc(sizeof(*lv) * (rb.n ? rb.n : 1));
	if (!mirror || !lv) {
		err = MPI_ERR_NO_MEM;
		goto out;
	}
	for (i = 0; i < rb.n; i++) {
		lv[i].iov_base = mirror + ((intptr_t)rb.v[i].iov_base - (int64_t)taddr - lo);
		lv[i].iov_len = rb.v[i].iov_len;
	}
	mirror -= lo; /* now laid out as the target at taddr */
	switch (a->kind) {
	case RMA_PUT:
		if (a->otype->contiguous)
			mpi_shim_datatype_unpack(mpi_shim_datatype_start(a->origin, a->otype), bytes,
						 mirror, a->tcount, t, 0);
		else if ((packed = malloc(bytes))) {
			mpi_shim_datatype_pack(a->origin, a->ocount, a->otype, 0, packed, bytes);
			mpi_shim_datatype_unpack(packed, bytes, mirror, a->tcount, t, 0);
		} else {
			err = MPI_ERR_NO_MEM;
			break;
		}
		rc = rma_cma_move(pid, 1, lv, rb.v, rb.n);
		break;
	case RMA_GET:
		if (!(rc = rma_cma_move(pid, 0, lv, rb.v, rb.n))) {
			if ((packed = malloc(bytes))) {
				mpi_shim_datatype_pack(mirror, a->tcount, t, 0, packed, bytes);
				mpi_shim_datatype_unpack(packed, bytes, a->result, a->rcount, a->rtype,
							 0);
			} else {
				err = MPI_ERR_NO_MEM;
			}
		}
		break;
	default:
		/* ACC, GET_ACC, CAS: read, apply on the mirror, write back. */
		if (a->kind == RMA_CAS) {
			if (2 * bytes > sizeof(cas)) {
				err = MPI_ERR_TYPE;
				break;
			}
			memcpy(cas, a->origin, bytes);
			memcpy(cas + bytes, a->compare, bytes);
			data = cas;
		} else if (!(a->kind == RMA_GET_ACC && mpi_shim_op_is_no_op(a->op))) {
			if (!(packed = malloc(bytes))) {
				err = MPI_ERR_NO_MEM;
				break;
			}
			mpi_shim_datatype_pack(a->origin, a->ocount, a->otype, 0, packed, bytes);
			data = packed;
		}
		if ((a->kind == RMA_GET_ACC || a->kind == RMA_CAS) && !(old = malloc(bytes))) {
			err = MPI_ERR_NO_MEM;
			break;
		}
		rma_shm_acc_lock(&win->ctl[a->target].acc);
		locked = 1;
		if ((rc = rma_cma_move(pid, 0, lv, rb.v, rb.n)))
			break;
		err = mpi_shim_rma_apply(a->kind, a->op, mirror, a->tcount, t, data, bytes, old);
		if (!err && !(a->kind == RMA_GET_ACC && mpi_shim_op_is_no_op(a->op)))
			rc = rma_cma_move(pid, 1, lv, rb.v, rb.n);
		break;
	}
	if (locked)
		rma_shm_acc_unlock(&win->ctl[a->target].acc);
	if (!err && !rc && old)
		mpi_shim_datatype_unpack(old, bytes, a->result, a->rcount, a->rtype, 0);
	mirror += lo;
out:
	free(mirror);
	free(lv);
	free(rb.v);
	free(packed);
	free(old);
	if (!err && rc)
		return mpi_shim_win_err(win, MPI_ERR_OTHER, call,
					"single copy with rank %d (pid %d) failed: %s", a->target, pid,
					strerror(-rc));
	if (err)
		return mpi_shim_win_err(win, err, call, "no memory");
	return MPI_SUCCESS;
}

int mpi_shim_rma_shm_issue(MPI_Win win, const struct rma_args *a, const char *call)
{
	char *taddr = (char *)win->segment + win->offsets[a->target] +
		      (int64_t)a->disp * win->disp_units[a->target];
	size_t bytes = a->tcount * a->ttype->size;
	const void *data = NULL;
	void *packed = NULL, *old = NULL, *old_tmp = NULL;
	char cas[64];
	int rc = MPI_SUCCESS;

	if (win->cma)
		return rma_cma_op(win, a, call);
	switch (a->kind) {
	case RMA_PUT:
		if (rma_shm_copy(taddr, a->tcount, a->ttype, a->origin, a->ocount, a->otype, bytes))
			return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
		return MPI_SUCCESS;
	case RMA_GET:
		if (rma_shm_copy(a->result, a->rcount, a->rtype, taddr, a->tcount, a->ttype, bytes))
			return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
		return MPI_SUCCESS;
	case RMA_CAS:
		if (2 * bytes > sizeof(cas))
			return mpi_shim_win_err(win, MPI_ERR_TYPE, call, "the datatype is too large");
		memcpy(cas, a->origin, bytes);
		memcpy(cas + bytes, a->compare, bytes);
		data = cas;
		break;
	default:
		/* ACC, GET_ACC: the origin's data packed (in place when it is). */
		if (a->kind == RMA_GET_ACC && mpi_shim_op_is_no_op(a->op)) {
			data = NULL;
		} else if (a->otype->contiguous) {
			data = mpi_shim_datatype_start(a->origin, a->otype);
		} else {
			packed = malloc(bytes ? bytes : 1);
			if (!packed)
				return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
			mpi_shim_datatype_pack(a->origin, a->ocount, a->otype, 0, packed, bytes);
			data = packed;
		}
		break;
	}
	if (a->kind == RMA_GET_ACC || a->kind == RMA_CAS) {
		/* What the target held: straight into the result buffer when it
		 * is contiguous. */
		if (a->rtype->contiguous) {
			old = mpi_shim_datatype_start(a->result, a->rtype);
		} else {
			old = old_tmp = malloc(bytes ? bytes : 1);
			if (!old) {
				free(packed);
				return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
			}
		}
	}
	rma_shm_acc_lock(&win->ctl[a->target].acc);
	rc = mpi_shim_rma_apply(a->kind, a->op, taddr, a->tcount, a->ttype, data, bytes, old);
	rma_shm_acc_unlock(&win->ctl[a->target].acc);
	if (!rc && old_tmp)
		mpi_shim_datatype_unpack(old_tmp, bytes, a->result, a->rcount, a->rtype, 0);
	free(packed);
	free(old_tmp);
	if (rc)
		return mpi_shim_win_err(win, rc, call, "no memory");
	return MPI_SUCCESS;
}
