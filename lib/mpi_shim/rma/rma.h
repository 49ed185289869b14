/* SPDX-License-Identifier: MIT */
/*
 * rma.h - one-sided communication inside the shim: the window object
 * (win.c makes, describes and frees it) and what rma.c, the operations,
 * their protocol and the synchronisation calls, keeps in it.  The
 * protocol itself is described at the top of rma.c.
 */
#ifndef MPI_SHIM_RMA_H
#define MPI_SHIM_RMA_H

#include <stdint.h>

#include "shim.h"
#include "engine.h"

/* What the origin side of a window is in (its access epoch). */
enum rma_epoch {
	RMA_EPOCH_NONE,
	RMA_EPOCH_FENCE,      /* after a fence without MPI_MODE_NOSUCCEED */
	RMA_EPOCH_LOCK,       /* one lock or more held (MPI_Win_lock) */
	RMA_EPOCH_LOCK_ALL,   /* MPI_Win_lock_all */
	RMA_EPOCH_START,      /* between MPI_Win_start and MPI_Win_complete */
};

/* Memory attached to a dynamic window. */
struct rma_region {
	uintptr_t base;
	uintptr_t size;
	struct rma_region *next;
};

/* The operations, as the protocol names them (rma.c). */
enum rma_kind {
	RMA_PUT = 1,
	RMA_GET,
	RMA_ACC,
	RMA_GET_ACC,
	RMA_CAS,
	RMA_LOCK,
	RMA_UNLOCK,
	RMA_POST,
	RMA_COMPLETE,
	RMA_ANSWER,
};

/* One communication call, as the origin checked it. */
struct rma_args {
	enum rma_kind kind;
	const void *origin;
	size_t ocount;
	MPI_Datatype otype;
	const void *compare;
	void *result;
	size_t rcount;
	MPI_Datatype rtype;
	int target;
	MPI_Aint disp;
	size_t tcount;
	MPI_Datatype ttype;
	MPI_Op op;
};

/* A lock held (mpi_shim_win.locked): its type, and whether the shared
 * lock word of a direct window was taken for it (not with
 * MPI_MODE_NOCHECK). */
#define RMA_LOCKED_SHARED 1
#define RMA_LOCKED_EXCL 2
#define RMA_LOCKED_TYPE 3
#define RMA_LOCKED_WORD 4

struct rma_op;
struct rma_in;
struct rma_shm_ctl;
struct rma_nic_op;
struct rma_lock_wait;
struct rma_type_cache;

struct mpi_shim_win {
	int valid;                /* 1 from creation until MPI_Win_free */
	int flavor;               /* MPI_WIN_FLAVOR_x */
	int model;                /* MPI_WIN_UNIFIED or MPI_WIN_SEPARATE */
	/* 1: every rank's memory is mapped in every process of the window,
	 * which reach it by loads, stores and processor atomics (rma_shm.c);
	 * 0: by the messages of rma.c. */
	int direct;
	struct rma_shm_ctl *ctl;  /* direct: every rank's lock words */
	/* A direct window of MPI_Win_create: the memory stays the program's,
	 * reached by single copy (process_vm_readv/writev); every rank's
	 * process and base address. */
	int cma;
	int *pids;
	uintptr_t *bases;
	/* A window the NICs serve (rma_nic.c): every rank's two keys (its
	 * memory, its lock words), this rank's, its lock words, and the
	 * operations in flight. */
	int nic;
	uint64_t *nic_keys;
	uint64_t nic_key, nic_ctl_key;
	int64_t *nic_words;
	struct rma_nic_op *nic_ops;
	/* The window's own duplicate of the communicator it was made on: its
	 * point-to-point context carries the protocol, its collective context
	 * the window's collectives; the program never sees it. */
	MPI_Comm comm;
	uint32_t id;              /* comm's context id, in every message */
	void *base;
	MPI_Aint size;
	int disp_unit;
	/* Every rank's size and disp_unit (MPI_Win_shared_query, and the
	 * origin's range check); NULL in a dynamic window. */
	MPI_Aint *sizes;
	int *disp_units;
	/* A shared or direct window's segment (every rank's part, then
	 * every rank's lock words) and where each rank's part starts in it. */
	void *segment;
	size_t segment_len;
	MPI_Aint *offsets;
	void *allocated;          /* MPI_Win_allocate's memory */
	struct rma_region *regions; /* a dynamic window's attached memory */
	struct mpi_shim_errhandler *errhandler;
	MPI_Info info;            /* what MPI_Win_get_info reports */
	char name[MPI_MAX_OBJECT_NAME];
	struct mpi_shim_attr *attrs; /* MPI_Win_set_attr (comm/attr.c) */

	/* Origin */
	enum rma_epoch epoch;
	int fence_ops;            /* operations issued since the last fence */
	uint8_t *locked;          /* per target: the lock type held, or 0 */
	int nlocked;
	int null_locks;           /* MPI_Win_lock on MPI_PROC_NULL not unlocked */
	int *pending;             /* per target: operations not yet answered */
	long npending;
	struct rma_op *ops, *ops_tail; /* in flight, in issue order */
	int deferred_err;         /* first error a target answered, for the next sync */
	uint32_t next_tag;
	int *start_group;         /* MPI_Win_start's ranks (in comm) */
	int nstart;
	/* Per target: the MPI_Win_post messages it sent that no
	 * MPI_Win_start has consumed yet. */
	int *posts;

	/* Target */
	int fence_open;           /* exposed to every rank (fence epoch) */
	uint8_t *granted;         /* per origin: the lock type it holds, or 0 */
	int excl_holder;          /* rank holding the exclusive lock, or -1 */
	int nshared;              /* shared locks held */
	struct rma_lock_wait *lock_waits, *lock_waits_tail;
	uint8_t *exposed;         /* per origin: in the group of MPI_Win_post */
	int nexposed;             /* completes still to come from that group */
	int posted;               /* between MPI_Win_post and MPI_Win_wait/test */
	struct rma_in *in, *in_tail; /* requests being received, in arrival order */
	struct rma_out *out;      /* answers being sent */
	/* The derived target datatypes of recent requests, rebuilt once. */
	struct rma_type_cache *types;

	struct mpi_shim_win *next; /* the windows of this process */
};

/* 1 if win may be used. */
static inline int mpi_shim_win_ok(MPI_Win win)
{
	return win != MPI_WIN_NULL && win->valid;
}

/* Report errclass raised by call on win through the window's error
 * handler (as mpi_shim_err does for a communicator); returns errclass. */
mpi_shim_cold int mpi_shim_win_err(MPI_Win win, int errclass, const char *call, const char *fmt,
				   ...) __attribute__((format(printf, 4, 5)));

/* MPI_SUCCESS, or MPI_ERR_WIN reported on MPI_COMM_WORLD. */
int mpi_shim_check_win(MPI_Win win, const char *call);

/* rma.c: the protocol's part of a new window (after win.c filled the rest,
 * comm included) and of MPI_Win_free (MPI_ERR_RMA_SYNC, reported, while an
 * epoch is open or operations are in flight; nothing is freed then). */
int mpi_shim_rma_win_init(MPI_Win win);
int mpi_shim_rma_win_busy(MPI_Win win, const char *call);
void mpi_shim_rma_win_fini(MPI_Win win);

/* rma.c: the bytes [lo, hi) around an element origin that count elements
 * of t reach: 0, or -1 on overflow. */
int mpi_shim_rma_span(MPI_Datatype t, uint64_t count, int64_t *lo_p, int64_t *hi_p);

/* rma.c: apply the operation kind (PUT, GET, ACC, GET_ACC, CAS) to count
 * elements of t at addr, inside a window: data is what the origin packed
 * (CAS: the new value, then the compare value), need the packed bytes of
 * count elements of t, old (may be NULL) receives need bytes, the values
 * before the operation, packed.  MPI_SUCCESS or MPI_ERR_NO_MEM. */
int mpi_shim_rma_apply(enum rma_kind kind, MPI_Op op, char *addr, uint64_t count,
		       MPI_Datatype t, const void *data, size_t need, void *old);

/* What BIP_MPI_RMA asks for (win.c): direct windows where they can be,
 * then NIC windows, then messages (auto); NIC windows, then messages
 * (nic); messages only (messages). */
enum rma_mode { RMA_MODE_AUTO, RMA_MODE_NIC, RMA_MODE_MESSAGES };
enum rma_mode mpi_shim_rma_mode(void);

/* rma_shm.c: a direct window: the size of its lock words, the operations
 * and the lock words at the calls of rma.c. */
size_t mpi_shim_rma_shm_ctl_len(int nranks);
/* A window of MPI_Win_create whose lock words are mapped: whether every
 * rank can reach every other's memory by single copy (collective; 0 and
 * *ok, or an MPI error), and the pids and bases it needs then. */
int mpi_shim_rma_shm_cma_setup(MPI_Win win, int *ok);
int mpi_shim_rma_shm_issue(MPI_Win win, const struct rma_args *a, const char *call);
/* MPI_Fetch_and_op of one element of the contiguous predefined type t at
 * taddr, in target's part, with op that applies to t (checked): NO_OP,
 * REPLACE, or loop, the op's loop on t. */
void mpi_shim_rma_shm_fop(MPI_Win win, const void *origin, void *result, MPI_Datatype t,
			  int target, char *taddr, MPI_Op op, mpi_shim_op_loop loop);
/* MPI_Accumulate of count elements of the contiguous predefined type t
 * from origin at taddr, in target's part: NO_OP, REPLACE, or loop. */
void mpi_shim_rma_shm_acc(MPI_Win win, const void *origin, int count, MPI_Datatype t, int target,
			  char *taddr, MPI_Op op, mpi_shim_op_loop loop);
/* MPI_Compare_and_swap of one element of the predefined type t (at most
 * 32 bytes) at taddr, in target's part. */
void mpi_shim_rma_shm_cas(MPI_Win win, const void *origin, const void *compare, void *result,
			  MPI_Datatype t, int target, char *taddr);
int mpi_shim_rma_shm_lock(MPI_Win win, int rank, int type, const char *call);
void mpi_shim_rma_shm_unlock(MPI_Win win, int rank, int type);

/* rma_nic.c: a window the NICs serve.  setup (collective) says whether
 * every rank's NIC can and exposes the memory (0 and *ok, or an MPI
 * error; nothing left when not ok); the operations, the lock words and
 * the completion of the operations to target (-1: all) at the calls of
 * rma.c; whether any is in flight; fini withdraws the memory. */
int mpi_shim_rma_nic_setup(MPI_Win win, int *ok);
int mpi_shim_rma_nic_issue(MPI_Win win, const struct rma_args *a, MPI_Request *ureq,
			   const char *call);
int mpi_shim_rma_nic_lock(MPI_Win win, int rank, int type, const char *call);
int mpi_shim_rma_nic_unlock(MPI_Win win, int rank, int held, const char *call);
int mpi_shim_rma_nic_complete(MPI_Win win, int target, const char *call);
int mpi_shim_rma_nic_pending(MPI_Win win);
void mpi_shim_rma_nic_fini(MPI_Win win);

/* comm/attr.c: a user key's attribute of win (MPI_Win_get_attr past
 * the predefined keys; reported), and every attribute deleted when win
 * is freed (the first failed delete callback's error, or MPI_SUCCESS). */
int mpi_shim_win_attr_get(MPI_Win win, int keyval, void *value, int *flag);
int mpi_shim_win_attr_delete_all(MPI_Win win);

#endif /* MPI_SHIM_RMA_H */
