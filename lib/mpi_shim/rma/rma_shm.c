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
 * Every rank of the window chooses the direct way or the messages of
 * rma.c alike (win.c agrees on it when the window is made): BIP_MPI_RMA=
 * messages asks for messages even here.  The window's memory model is
 * MPI_WIN_UNIFIED.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int mpi_shim_rma_shm_wanted(void)
{
	static int wanted = -1;
	const char *s;

	if (wanted >= 0)
		return wanted;
	s = getenv("BIP_MPI_RMA");
	wanted = 1;
	if (s && !strcmp(s, "messages")) {
		wanted = 0;
	} else if (s && s[0] && strcmp(s, "auto")) {
		fprintf(stderr, "BIP_MPI_RMA=%s: the values are auto and messages; "
				"auto is used\n", s);
	}
	return wanted;
}

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

int mpi_shim_rma_shm_issue(MPI_Win win, const struct rma_args *a, const char *call)
{
	char *taddr = (char *)win->segment + win->offsets[a->target] +
		      (int64_t)a->disp * win->disp_units[a->target];
	size_t bytes = a->tcount * a->ttype->size;
	const void *data = NULL;
	void *packed = NULL, *old = NULL, *old_tmp = NULL;
	char cas[64];
	int rc = MPI_SUCCESS;

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
