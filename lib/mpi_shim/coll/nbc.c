// SPDX-License-Identifier: MIT
/*
 * nbc.c - the non-blocking collectives.
 *
 * A non-blocking collective builds the same schedule as its blocking form
 * (coll.c) and hands it to a progress-driven request: Wait, Test and their
 * families call nbc_progress, which starts the next round once every send
 * and receive of the current one has completed.  The first round starts in
 * the call itself, so the communication overlaps whatever the caller does
 * next.  Each collective has its own tag (the communicator's sequence
 * number), so any number of them may be in flight on one communicator.
 */
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"
#include "coll.h"
#include "engine.h"

static int nbc_progress(struct mpi_shim_request *req)
{
	struct coll_sched *s = req->state;
	int done, rc;

	rc = coll_sched_progress(s, &done);
	if (!done)
		return 0;
	return rc ? -rc : 1;
}

static void nbc_free(struct mpi_shim_request *req)
{
	struct coll_sched *s = req->state;

	if (s->op)
		mpi_shim_op_release(s->op);
	coll_sched_destroy(s);
	free(s);
	req->state = NULL;
}

static const struct mpi_shim_req_ops nbc_ops = {
	.progress = nbc_progress,
	.release = nbc_free,
};

static int nbc_start(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a,
		     MPI_Request *request, const char *call)
{
	struct coll_sched *s;
	int rc, done;

	rc = coll_check(kind, comm, a, call);
	if (!rc && !request)
		rc = mpi_shim_err(comm, MPI_ERR_ARG, call, "the request pointer is NULL");
	if (rc) {
		coll_skip(comm);
		return rc;
	}
	s = malloc(sizeof(*s));
	if (!s)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a schedule");
	coll_sched_init(s, comm, a->op);
	rc = coll_build(kind, s, a);
	if (rc)
		goto destroy_sched;
	if (s->op)
		mpi_shim_op_retain(s->op);
	rc = mpi_shim_request_progress_new(comm, &nbc_ops, s, request);
	if (rc)
		goto release_op;
	/* An error from here on completes the request with it. */
	coll_sched_progress(s, &done);
	return MPI_SUCCESS;

release_op:
	if (s->op)
		mpi_shim_op_release(s->op);
destroy_sched:
	coll_sched_destroy(s);
	free(s);
	return mpi_shim_err(comm, rc, call, "rank %d of %d: cannot start the collective",
			    comm->rank, comm->size);
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { 0 };

	return nbc_start(COLL_BARRIER, comm, &a, request, "MPI_Ibarrier");
}
MPI_SHIM_ALIAS(MPI_Ibarrier);

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
		MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root };

	return nbc_start(COLL_BCAST, comm, &a, request, "MPI_Ibcast");
}
MPI_SHIM_ALIAS(MPI_Ibcast);

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		 MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			       .root = root };

	return nbc_start(COLL_GATHER, comm, &a, request, "MPI_Igather");
}
MPI_SHIM_ALIAS(MPI_Igather);

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		  MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			       .rtype = recvtype, .root = root };

	return nbc_start(COLL_GATHERV, comm, &a, request, "MPI_Igatherv");
}
MPI_SHIM_ALIAS(MPI_Igatherv);

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		  MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			       .root = root };

	return nbc_start(COLL_SCATTER, comm, &a, request, "MPI_Iscatter");
}
MPI_SHIM_ALIAS(MPI_Iscatter);

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
		   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   int root, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
			       .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
			       .rtype = recvtype, .root = root };

	return nbc_start(COLL_SCATTERV, comm, &a, request, "MPI_Iscatterv");
}
MPI_SHIM_ALIAS(MPI_Iscatterv);

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return nbc_start(COLL_ALLGATHER, comm, &a, request, "MPI_Iallgather");
}
MPI_SHIM_ALIAS(MPI_Iallgather);

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
		     MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			       .rtype = recvtype };

	return nbc_start(COLL_ALLGATHERV, comm, &a, request, "MPI_Iallgatherv");
}
MPI_SHIM_ALIAS(MPI_Iallgatherv);

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return nbc_start(COLL_ALLTOALL, comm, &a, request, "MPI_Ialltoall");
}
MPI_SHIM_ALIAS(MPI_Ialltoall);

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		    MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			       .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rdispls = rdispls, .rtype = recvtype };

	return nbc_start(COLL_ALLTOALLV, comm, &a, request, "MPI_Ialltoallv");
}
MPI_SHIM_ALIAS(MPI_Ialltoallv);

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
		    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
		    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
		    MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			       .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rdispls = rdispls, .rtypes = recvtypes };

	return nbc_start(COLL_ALLTOALLW, comm, &a, request, "MPI_Ialltoallw");
}
MPI_SHIM_ALIAS(MPI_Ialltoallw);

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		 MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op, .root = root };

	return nbc_start(COLL_REDUCE, comm, &a, request, "MPI_Ireduce");
}
MPI_SHIM_ALIAS(MPI_Ireduce);

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		    MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return nbc_start(COLL_ALLREDUCE, comm, &a, request, "MPI_Iallreduce");
}
MPI_SHIM_ALIAS(MPI_Iallreduce);

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
			 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rtype = datatype, .op = op };

	return nbc_start(COLL_REDUCE_SCATTER, comm, &a, request, "MPI_Ireduce_scatter");
}
MPI_SHIM_ALIAS(MPI_Ireduce_scatter);

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
			       MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount,
			       .rtype = datatype, .op = op };

	return nbc_start(COLL_REDUCE_SCATTER_BLOCK, comm, &a, request,
			 "MPI_Ireduce_scatter_block");
}
MPI_SHIM_ALIAS(MPI_Ireduce_scatter_block);

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	       MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return nbc_start(COLL_SCAN, comm, &a, request, "MPI_Iscan");
}
MPI_SHIM_ALIAS(MPI_Iscan);

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return nbc_start(COLL_EXSCAN, comm, &a, request, "MPI_Iexscan");
}
MPI_SHIM_ALIAS(MPI_Iexscan);
