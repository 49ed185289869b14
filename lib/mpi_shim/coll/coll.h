/* SPDX-License-Identifier: MIT */
/*
 * coll.h - collective operations as schedules.
 *
 * Every collective, blocking or not, is built as a schedule: a list of
 * steps (send, receive, local copy, local reduction) cut into rounds by
 * fences.  Running a schedule starts the steps of a round in order (the
 * local ones at once, the sends and receives as requests on the
 * communicator's collective context) and moves to the next round when every
 * request of the round has completed.  A blocking collective runs its
 * schedule to the end; a non-blocking one hands it to a request whose
 * progress callback advances it.  One engine for both means the algorithms
 * are written, and tested, once.
 *
 * Each collective call takes the next sequence number of its communicator
 * as its tag, so that the messages of collectives in flight at the same
 * time (non-blocking ones, started in the same order everywhere) never
 * match each other's receives.
 */
#ifndef MPI_SHIM_COLL_H
#define MPI_SHIM_COLL_H

#include <stddef.h>

#include "mpi.h"
#include "datatype.h"

enum coll_step_kind {
	STEP_SEND,
	STEP_RECV,
	STEP_COPY,   /* src (count, type) -> dst (dcount, dtype), same signature */
	STEP_REDUCE, /* dst = src op dst, elementwise, count elements of type */
	STEP_FENCE,  /* wait for every send and receive started before */
};

struct coll_step {
	enum coll_step_kind kind;
	int peer;
	const void *src;
	void *dst;
	size_t count;
	MPI_Datatype type;
	size_t dcount;
	MPI_Datatype dtype;
	int local;   /* a send or receive on comm->local (inter-communicators) */
};

struct coll_buf {
	void *p;
	size_t cap;
};

/*
 * What a small collective needs lives in the schedule itself, so that a
 * blocking one allocates nothing: the steps, the requests of a round, the
 * temporary buffers (their list) and two small temporary buffers.
 */
#define COLL_INLINE_STEPS 32
#define COLL_INLINE_REQS 16
#define COLL_INLINE_TMP 4
#define COLL_SCRATCH_BYTES 256

struct coll_sched {
	MPI_Comm comm;
	int tag;
	MPI_Op op;
	struct coll_step *steps;
	int nsteps, cap;
	int next;            /* the first step not yet started */
	MPI_Request *reqs;   /* requests of the round in progress */
	int nreqs, capreqs;
	struct coll_buf *tmp; /* temporary buffers, released with the schedule */
	int ntmp, captmp;
	int on_local;        /* steps added now are on comm->local (coll_inter.c) */
	int err;             /* an error building the schedule: it never runs */
	int run_err;         /* the first error of a step run */
	int nscratch;        /* scratch buffers in use */
	struct coll_step inline_steps[COLL_INLINE_STEPS];
	MPI_Request inline_reqs[COLL_INLINE_REQS];
	struct coll_buf inline_tmp[COLL_INLINE_TMP];
	union {
		long double align;
		char bytes[COLL_SCRATCH_BYTES];
	} scratch[2];
};

/* op.c: what the collectives need of an operation besides shim.h's. */
int mpi_shim_op_commutative(MPI_Op op);
void mpi_shim_op_retain(MPI_Op op);
void mpi_shim_op_release(MPI_Op op);
/* 1 if op is a predefined operation (MPI_SUM...), 0 if the user's or MPI_OP_NULL. */
int mpi_shim_op_predefined(MPI_Op op);

/* coll_sched.c: building and running schedules. */
int coll_sched_init(struct coll_sched *s, MPI_Comm comm, MPI_Op op);
/* The communicator's next collective sequence number, as a tag; and a
 * schedule on a tag taken before (a persistent collective's, at its init). */
int coll_next_tag(MPI_Comm comm);
int coll_sched_init_tag(struct coll_sched *s, MPI_Comm comm, MPI_Op op, int tag);
void coll_sched_destroy(struct coll_sched *s);
void coll_send(struct coll_sched *s, const void *buf, size_t count, MPI_Datatype type, int peer);
void coll_recv(struct coll_sched *s, void *buf, size_t count, MPI_Datatype type, int peer);
void coll_copy(struct coll_sched *s, const void *src, size_t scount, MPI_Datatype stype,
	       void *dst, size_t dcount, MPI_Datatype dtype);
void coll_reduce(struct coll_sched *s, const void *in, void *inout, size_t count,
		 MPI_Datatype type);
void coll_fence(struct coll_sched *s);
void *coll_tmp(struct coll_sched *s, size_t count, MPI_Datatype type);
/* coll_copy's copy done at once, of count elements of type; an MPI error. */
int coll_copy_now(const void *src, void *dst, size_t count, MPI_Datatype type);
int coll_sched_progress(struct coll_sched *s, int *done);
int coll_sched_run(struct coll_sched *s);

/* Element index of a typed buffer. */
static inline void *coll_at(const void *buf, MPI_Aint index, MPI_Datatype type)
{
	return (char *)buf + index * type->extent;
}

/*
 * coll.c: the algorithms.  coll_build builds the schedule of one
 * collective for the calling process from arguments that coll_check has
 * accepted.  For the reductions, the count and datatype are rcount and
 * rtype.
 */
struct coll_args {
	const void *sbuf;
	void *rbuf;
	int scount, rcount;
	MPI_Datatype stype, rtype;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	const MPI_Datatype *stypes, *rtypes;
	MPI_Op op;
	int root;
};

enum coll_kind {
	COLL_BARRIER,
	COLL_BCAST,
	COLL_GATHER,
	COLL_GATHERV,
	COLL_SCATTER,
	COLL_SCATTERV,
	COLL_ALLGATHER,
	COLL_ALLGATHERV,
	COLL_ALLTOALL,
	COLL_ALLTOALLV,
	COLL_ALLTOALLW,
	COLL_REDUCE,
	COLL_ALLREDUCE,
	COLL_REDUCE_SCATTER,
	COLL_REDUCE_SCATTER_BLOCK,
	COLL_SCAN,
	COLL_EXSCAN,
	COLL_KIND_COUNT
};

/* Reports a bad argument through mpi_shim_err, naming call. */
int coll_check(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a, const char *call);
int coll_build(enum coll_kind kind, struct coll_sched *s, const struct coll_args *a);

/* coll.c: algorithms of an intra-communicator that coll_inter.c runs in
 * one group of an inter-communicator (s->on_local set). */
void coll_build_barrier(struct coll_sched *s);
void coll_build_bcast(struct coll_sched *s, void *buf, int count, MPI_Datatype type, int root);
void coll_build_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, int count,
		       MPI_Datatype type, int root);
void coll_build_scatterv(struct coll_sched *s, const struct coll_args *a, int regular);
void coll_build_scatter_result(struct coll_sched *s, void *all, const struct coll_args *a,
			       int regular);

/* coll_inter.c: the collectives of an inter-communicator. */
int coll_check_inter(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a,
		     const char *call);
int coll_build_inter(enum coll_kind kind, struct coll_sched *s, const struct coll_args *a);
void coll_skip(MPI_Comm comm);
int coll_blocking(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a,
		  const char *call);

#endif /* MPI_SHIM_COLL_H */
