/* SPDX-License-Identifier: MIT */
/*
 * coll_persist.c - the MPI-4.0 persistent collectives (MPI_Barrier_init ..
 * MPI_Exscan_init).
 *
 * The _init call checks the arguments as the non-blocking collective does
 * (coll_check), keeps a copy of them (of the count, displacement and
 * datatype arrays too), holds the datatypes, the operation and the
 * communicator, and returns an inactive persistent request driven by
 * progress.  Each MPI_Start builds the schedule of the non-blocking
 * collective (coll_build, as nbc.c does) on the tag that the _init call
 * took (the communicator's collective sequence number then), and starts
 * its first round.  So the processes must initialize their persistent
 * collectives in the same order, among their other collectives, but may
 * start them in any order (MPI-4.0 6.13); the rounds of one request
 * share its tag and stay apart by the ordering of messages, since a round
 * completes before the next can start.  Wait, Test and their families complete it; the
 * schedule goes when it completes, and the request becomes inactive and
 * may be started again.  MPI_Request_free frees an inactive one (an active
 * one is refused, request.c).  The info argument is checked and otherwise
 * ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "datatype.h"
#include "coll.h"
#include "engine.h"

struct persist {
	enum coll_kind kind;
	struct coll_args a;   /* the arrays point into copies owned here */
	int *ints[4];         /* copies: scounts, sdispls, rcounts, rdispls */
	MPI_Datatype *types[2]; /* copies: stypes, rtypes */
	MPI_Datatype *held;   /* datatypes retained, released with the request */
	int nheld;
	struct coll_sched *s; /* while started */
	int tag;              /* taken at the _init call */
};

static void persist_sched_end(struct persist *p)
{
	if (p->s) {
		coll_sched_destroy(p->s);
		free(p->s);
		p->s = NULL;
	}
}

static void persist_free(struct mpi_shim_request *r)
{
	struct persist *p = r->state;
	int i;

	persist_sched_end(p);
	for (i = 0; i < p->nheld; i++)
		mpi_shim_datatype_release(p->held[i]);
	free(p->held);
	for (i = 0; i < 4; i++)
		free(p->ints[i]);
	free(p->types[0]);
	free(p->types[1]);
	if (p->a.op)
		mpi_shim_op_release(p->a.op);
	free(p);
	r->state = NULL;
}

static int persist_progress(struct mpi_shim_request *r)
{
	struct persist *p = r->state;
	int done, rc;

	rc = coll_sched_progress(p->s, &done);
	if (!done)
		return 0;
	persist_sched_end(p);
	return rc ? -rc : 1;
}

/* A copy of n elements of size each (NULL stays NULL); 0 or -1. */
static int copy_array(const void *from, int n, size_t size, void **to)
{
	*to = NULL;
	if (!from)
		return 0;
	*to = malloc((size_t)(n ? n : 1) * size);
	if (!*to)
		return -1;
	memcpy(*to, from, (size_t)n * size);
	return 0;
}

static void hold(struct persist *p, MPI_Datatype t)
{
	if (t && t != MPI_DATATYPE_NULL && !t->predefined && mpi_shim_datatype_ok(t)) {
		mpi_shim_datatype_retain(t);
		p->held[p->nheld++] = t;
	}
}

/* Copy what a's arrays and datatypes need; 0 or -1 (no memory). */
static int persist_keep(struct persist *p, MPI_Comm comm)
{
	struct coll_args *a = &p->a;
	int inter = mpi_shim_is_inter(comm), n, root_only, sig, i;
	const void *ints[4] = { a->scounts, a->sdispls, a->rcounts, a->rdispls };

	if (a->op)
		mpi_shim_op_retain(a->op);
	/* One element per rank of the remote group in an inter-communicator
	 * (Reduce_scatter's counts: per rank of the local group). */
	n = inter && p->kind != COLL_REDUCE_SCATTER ? comm->peer_size : comm->size;
	/* The arrays of MPI_Gatherv and MPI_Scatterv mean something at the
	 * root only (MPI_ROOT in an inter-communicator): elsewhere they may be
	 * anything. */
	root_only = p->kind == COLL_GATHERV || p->kind == COLL_SCATTERV;
	sig = !root_only || (inter ? a->root == MPI_ROOT : comm->rank == a->root);
	for (i = 0; i < 4; i++)
		if (copy_array(sig ? ints[i] : NULL, n, sizeof(int), (void **)&p->ints[i]) < 0)
			return -1;
	a->scounts = p->ints[0];
	a->sdispls = p->ints[1];
	a->rcounts = p->ints[2];
	a->rdispls = p->ints[3];
	if (copy_array(a->stypes, n, sizeof(MPI_Datatype), (void **)&p->types[0]) < 0 ||
	    copy_array(a->rtypes, n, sizeof(MPI_Datatype), (void **)&p->types[1]) < 0)
		return -1;
	a->stypes = p->types[0];
	a->rtypes = p->types[1];
	p->held = malloc((size_t)(2 + 2 * n) * sizeof(MPI_Datatype));
	if (!p->held)
		return -1;
	hold(p, a->stype);
	if (a->rtype != a->stype)
		hold(p, a->rtype);
	for (i = 0; i < n; i++) {
		if (a->stypes)
			hold(p, a->stypes[i]);
		if (a->rtypes)
			hold(p, a->rtypes[i]);
	}
	return 0;
}

static int persist_start(struct mpi_shim_request *r, const char *call);

static const struct mpi_shim_req_ops persist_ops = {
	.progress = persist_progress,
	.start = persist_start,
	.release = persist_free,
};

static int persist_init(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a,
			MPI_Info info, MPI_Request *request, const char *call)
{
	struct mpi_shim_request *r;
	struct persist *p;
	int rc;

	if ((rc = coll_check(kind, comm, a, call)) ||
	    (rc = mpi_shim_info_check(comm, info, call)) ||
	    (!request && (rc = mpi_shim_err(comm, MPI_ERR_ARG, call,
					    "the request pointer is NULL")))) {
		coll_skip(comm);
		return rc;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		coll_skip(comm);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	}
	p->tag = coll_next_tag(comm);
	p->kind = kind;
	p->a = *a;
	if (kind < COLL_REDUCE)
		p->a.op = MPI_OP_NULL; /* only the reductions have one */
	r = persist_keep(p, comm) < 0 ? NULL : mpi_shim_req_alloc();
	if (!r) {
		struct mpi_shim_request tmp = { .state = p };

		persist_free(&tmp);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	}
	r->kind = MPI_SHIM_REQ_PROGRESS;
	r->persistent = 1;
	r->internal = 1;
	r->comm = comm;
	r->ops = &persist_ops;
	r->state = p;
	mpi_shim_status_empty(&r->status);
	mpi_shim_req_hold_comm(r);
	*request = r;
	return MPI_SUCCESS;
}

/* MPI_Start: the schedule is built and its first round started. */
static int persist_start(struct mpi_shim_request *r, const char *call)
{
	struct persist *p = r->state;
	MPI_Comm comm = r->comm;
	int rc, done;

	/* The same request twice in one MPI_Startall. */
	if (r->active)
		return mpi_shim_err(comm, MPI_ERR_REQUEST, call, "the request is already active");
	p->s = malloc(sizeof(*p->s));
	if (!p->s)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a schedule");
	coll_sched_init_tag(p->s, comm, p->a.op, p->tag);
	rc = coll_build(p->kind, p->s, &p->a);
	if (rc) {
		persist_sched_end(p);
		return mpi_shim_err(comm, rc, call, "rank %d of %d: cannot start the collective",
				    comm->rank, comm->size);
	}
	r->done = 0;
	r->error = MPI_SUCCESS;
	mpi_shim_status_empty(&r->status);
	r->active = 1;
	mpi_shim_progress_track(r);
	/* The first round starts now; an error completes the request with it. */
	coll_sched_progress(p->s, &done);
	return MPI_SUCCESS;
}

/* --- the calls --- */

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { 0 };

	return persist_init(COLL_BARRIER, comm, &a, info, request, "MPI_Barrier_init");
}
MPI_SHIM_ALIAS(MPI_Barrier_init);

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
		    MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root };

	return persist_init(COLL_BCAST, comm, &a, info, request, "MPI_Bcast_init");
}
MPI_SHIM_ALIAS(MPI_Bcast_init);

int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
		     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			       .root = root };

	return persist_init(COLL_GATHER, comm, &a, info, request, "MPI_Gather_init");
}
MPI_SHIM_ALIAS(MPI_Gather_init);

int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			       .rtype = recvtype, .root = root };

	return persist_init(COLL_GATHERV, comm, &a, info, request, "MPI_Gatherv_init");
}
MPI_SHIM_ALIAS(MPI_Gatherv_init);

int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		      MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			       .root = root };

	return persist_init(COLL_SCATTER, comm, &a, info, request, "MPI_Scatter_init");
}
MPI_SHIM_ALIAS(MPI_Scatter_init);

int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
		       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
			       .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
			       .rtype = recvtype, .root = root };

	return persist_init(COLL_SCATTERV, comm, &a, info, request, "MPI_Scatterv_init");
}
MPI_SHIM_ALIAS(MPI_Scatterv_init);

int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return persist_init(COLL_ALLGATHER, comm, &a, info, request, "MPI_Allgather_init");
}
MPI_SHIM_ALIAS(MPI_Allgather_init);

int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			 void *recvbuf, const int recvcounts[], const int displs[],
			 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			 MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			       .rtype = recvtype };

	return persist_init(COLL_ALLGATHERV, comm, &a, info, request, "MPI_Allgatherv_init");
}
MPI_SHIM_ALIAS(MPI_Allgatherv_init);

int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
		       MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return persist_init(COLL_ALLTOALL, comm, &a, info, request, "MPI_Alltoall_init");
}
MPI_SHIM_ALIAS(MPI_Alltoall_init);

int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
			MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			       .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rdispls = rdispls, .rtype = recvtype };

	return persist_init(COLL_ALLTOALLV, comm, &a, info, request, "MPI_Alltoallv_init");
}
MPI_SHIM_ALIAS(MPI_Alltoallv_init);

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
			const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
			MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			       .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rdispls = rdispls, .rtypes = recvtypes };

	return persist_init(COLL_ALLTOALLW, comm, &a, info, request, "MPI_Alltoallw_init");
}
MPI_SHIM_ALIAS(MPI_Alltoallw_init);

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op, .root = root };

	return persist_init(COLL_REDUCE, comm, &a, info, request, "MPI_Reduce_init");
}
MPI_SHIM_ALIAS(MPI_Reduce_init);

int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return persist_init(COLL_ALLREDUCE, comm, &a, info, request, "MPI_Allreduce_init");
}
MPI_SHIM_ALIAS(MPI_Allreduce_init);

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
			     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
			     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rtype = datatype, .op = op };

	return persist_init(COLL_REDUCE_SCATTER, comm, &a, info, request,
			    "MPI_Reduce_scatter_init");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_init);

int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
				   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
				   MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount,
			       .rtype = datatype, .op = op };

	return persist_init(COLL_REDUCE_SCATTER_BLOCK, comm, &a, info, request,
			    "MPI_Reduce_scatter_block_init");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_block_init);

int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return persist_init(COLL_SCAN, comm, &a, info, request, "MPI_Scan_init");
}
MPI_SHIM_ALIAS(MPI_Scan_init);

int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return persist_init(COLL_EXSCAN, comm, &a, info, request, "MPI_Exscan_init");
}
MPI_SHIM_ALIAS(MPI_Exscan_init);
