// SPDX-License-Identifier: MIT
/*
 * coll_neighbor.c - the neighbourhood collectives, blocking and not.
 *
 * Each call is one round of a schedule (coll.h): a receive from every
 * in-neighbour of the communicator's topology (topo.h) into its block, in
 * the topology's order, then a send to every out-neighbour.  MPI_PROC_NULL
 * neighbours (the edges of a non-periodic grid) keep their block, which is
 * neither sent nor touched.  A blocking call runs the schedule; a
 * non-blocking one hands it to a progress-driven request, as nbc.c does.
 *
 * Messages between two processes match in order (one tag per call), so the
 * k-th message from p to q lands in q's k-th block from p.  On a grid, a
 * process sends to its +1 neighbour before its -1 neighbour of each
 * dimension and receives from the -1 one first: what goes to the +1
 * neighbour arrives in that neighbour's block of its -1 neighbour even when
 * both are the same process (a periodic dimension of 1 or 2 processes).
 */
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"
#include "coll.h"
#include "engine.h"
#include "topo.h"

enum nbr_kind {
	NBR_ALLGATHER,
	NBR_ALLGATHERV,
	NBR_ALLTOALL,
	NBR_ALLTOALLV,
	NBR_ALLTOALLW,
};

struct nbr_args {
	const void *sbuf;
	void *rbuf;
	int scount, rcount;
	MPI_Datatype stype, rtype;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	const MPI_Aint *swdispls, *rwdispls; /* alltoallw: byte displacements */
	const MPI_Datatype *stypes, *rtypes;
};

/* --- argument checks --- */

static int check_data(MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
		      const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, type, call)))
		return rc;
	if (buf == MPI_IN_PLACE)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed in a neighbourhood collective");
	return mpi_shim_check_buf(comm, buf, count, type, call);
}

/*
 * n counts and displacements, one per neighbour, and the type of the data
 * (in elements of type, int displs) or the types of the blocks (in bytes,
 * MPI_Aint displs, which may be absolute addresses from MPI_BOTTOM).
 */
static int check_counts(MPI_Comm comm, const void *buf, int n, const int *counts,
			const void *displs, MPI_Datatype type, const MPI_Datatype *types,
			const char *what, const char *call)
{
	MPI_Aint disp;
	int i, rc;

	if (n > 0 && (!counts || !displs || (!type && !types)))
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "a %s array is NULL", what);
	if (buf == MPI_IN_PLACE)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed in a neighbourhood collective");
	if (type && (rc = mpi_shim_check_type(comm, type, call)))
		return rc;
	for (i = 0; i < n; i++) {
		MPI_Datatype t = type ? type : types[i];

		if (counts[i] < 0)
			return mpi_shim_err(comm, MPI_ERR_COUNT, call,
					    "the %s count of neighbour %d is %d", what, i,
					    counts[i]);
		if (!type && (rc = mpi_shim_check_type(comm, t, call)))
			return rc;
		disp = type ? (MPI_Aint)((const int *)displs)[i] * t->extent :
			      ((const MPI_Aint *)displs)[i];
		if ((rc = mpi_shim_check_block(comm, buf, disp, counts[i], t, call)))
			return rc;
	}
	return MPI_SUCCESS;
}

static int nbr_check(enum nbr_kind kind, MPI_Comm comm, const struct nbr_args *a,
		     const char *call)
{
	const struct mpi_shim_topo *t;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	t = comm->topo;
	if (!t)
		return mpi_shim_err(comm, MPI_ERR_TOPOLOGY, call,
				    "the communicator has no topology");
	switch (kind) {
	case NBR_ALLGATHER:
	case NBR_ALLTOALL:
		if ((rc = check_data(comm, a->sbuf, a->scount, a->stype, call)))
			return rc;
		return check_data(comm, a->rbuf, a->rcount, a->rtype, call);
	case NBR_ALLGATHERV:
		if ((rc = check_data(comm, a->sbuf, a->scount, a->stype, call)))
			return rc;
		return check_counts(comm, a->rbuf, t->nin, a->rcounts, a->rdispls, a->rtype, NULL,
				    "receive", call);
	case NBR_ALLTOALLV:
		if ((rc = check_counts(comm, a->sbuf, t->nout, a->scounts, a->sdispls, a->stype,
				       NULL, "send", call)))
			return rc;
		return check_counts(comm, a->rbuf, t->nin, a->rcounts, a->rdispls, a->rtype, NULL,
				    "receive", call);
	case NBR_ALLTOALLW:
		if ((rc = check_counts(comm, a->sbuf, t->nout, a->scounts, a->swdispls, NULL,
				       a->stypes, "send", call)))
			return rc;
		return check_counts(comm, a->rbuf, t->nin, a->rcounts, a->rwdispls, NULL,
				    a->rtypes, "receive", call);
	}
	return mpi_shim_err(comm, MPI_ERR_INTERN, call, "unknown collective %d", kind);
}

/* --- the schedule --- */

/* Where block i of a buffer is, how many elements of which type. */
static const void *block(enum nbr_kind kind, const void *buf, int i, int count,
			 MPI_Datatype type, const int *counts, const int *displs,
			 const MPI_Aint *wdispls, const MPI_Datatype *types, size_t *n,
			 MPI_Datatype *t)
{
	switch (kind) {
	case NBR_ALLGATHER:
	case NBR_ALLTOALL:
		*n = (size_t)count;
		*t = type;
		return coll_at(buf, (MPI_Aint)i * count, type);
	case NBR_ALLGATHERV:
	case NBR_ALLTOALLV:
		*n = (size_t)counts[i];
		*t = type;
		return coll_at(buf, displs[i], type);
	case NBR_ALLTOALLW:
		*n = (size_t)counts[i];
		*t = types[i];
		return (const char *)buf + wdispls[i];
	}
	return NULL;
}

static int nbr_build(enum nbr_kind kind, struct coll_sched *s, const struct nbr_args *a)
{
	const struct mpi_shim_topo *t = s->comm->topo;
	int i, j;

	for (i = 0; i < t->nin; i++) {
		MPI_Datatype type;
		size_t n;
		void *p;

		if (t->in[i] == MPI_PROC_NULL)
			continue;
		/* allgather(v): the receive side has blocks per neighbour too. */
		p = (void *)block(kind == NBR_ALLGATHER ? NBR_ALLTOALL :
				  kind == NBR_ALLGATHERV ? NBR_ALLTOALLV : kind,
				  a->rbuf, i, a->rcount, a->rtype, a->rcounts, a->rdispls,
				  a->rwdispls, a->rtypes, &n, &type);
		coll_recv(s, p, n, type, t->in[i]);
	}
	for (i = 0; i < t->nout; i++) {
		MPI_Datatype type;
		size_t n;
		const void *p;

		/* A grid's pairs of neighbours go +1 first (see the top). */
		j = t->kind == MPI_CART ? i ^ 1 : i;
		if (t->out[j] == MPI_PROC_NULL)
			continue;
		if (kind == NBR_ALLGATHER || kind == NBR_ALLGATHERV) {
			coll_send(s, a->sbuf, (size_t)a->scount, a->stype, t->out[j]);
			continue;
		}
		p = block(kind, a->sbuf, j, a->scount, a->stype, a->scounts, a->sdispls,
			  a->swdispls, a->stypes, &n, &type);
		coll_send(s, p, n, type, t->out[j]);
	}
	return s->err;
}

/* --- blocking --- */

static int nbr_blocking(enum nbr_kind kind, MPI_Comm comm, const struct nbr_args *a,
			const char *call)
{
	struct coll_sched s;
	int rc;

	rc = nbr_check(kind, comm, a, call);
	if (rc) {
		coll_skip(comm);
		return rc;
	}
	coll_sched_init(&s, comm, MPI_OP_NULL);
	rc = nbr_build(kind, &s, a);
	if (!rc)
		rc = coll_sched_run(&s);
	coll_sched_destroy(&s);
	if (rc)
		return mpi_shim_err(comm, rc, call, "rank %d of %d: %s", comm->rank, comm->size,
				    rc == MPI_ERR_TRUNCATE ?
					    "a message was longer than its receive buffer "
					    "(do the neighbours pass matching counts and types?)" :
					    "the collective failed");
	return MPI_SUCCESS;
}

/* --- non-blocking --- */

static int nbr_progress(struct mpi_shim_request *req)
{
	int done, rc = coll_sched_progress(req->state, &done);

	if (!done)
		return 0;
	return rc ? -rc : 1;
}

static void nbr_free(struct mpi_shim_request *req)
{
	coll_sched_destroy(req->state);
	free(req->state);
	req->state = NULL;
}

static const struct mpi_shim_req_ops nbr_ops = {
	.progress = nbr_progress,
	.release = nbr_free,
};

static int nbr_start(enum nbr_kind kind, MPI_Comm comm, const struct nbr_args *a,
		     MPI_Request *request, const char *call)
{
	struct coll_sched *s;
	int rc, done;

	rc = nbr_check(kind, comm, a, call);
	if (!rc && !request)
		rc = mpi_shim_err(comm, MPI_ERR_ARG, call, "the request pointer is NULL");
	if (rc) {
		coll_skip(comm);
		return rc;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		coll_skip(comm);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a schedule");
	}
	coll_sched_init(s, comm, MPI_OP_NULL);
	rc = nbr_build(kind, s, a);
	if (!rc)
		rc = mpi_shim_request_progress_new(comm, &nbr_ops, s, request);
	if (rc) {
		coll_sched_destroy(s);
		free(s);
		return mpi_shim_err(comm, rc, call, "rank %d of %d: cannot start the collective",
				    comm->rank, comm->size);
	}
	/* The first round starts now; an error from here on completes the
	 * request with it. */
	coll_sched_progress(s, &done);
	return MPI_SUCCESS;
}

/* --- the calls --- */

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return nbr_blocking(NBR_ALLGATHER, comm, &a, "MPI_Neighbor_allgather");
}
MPI_SHIM_ALIAS(MPI_Neighbor_allgather);

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, const int recvcounts[], const int displs[],
			     MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			      .rtype = recvtype };

	return nbr_blocking(NBR_ALLGATHERV, comm, &a, "MPI_Neighbor_allgatherv");
}
MPI_SHIM_ALIAS(MPI_Neighbor_allgatherv);

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			   void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return nbr_blocking(NBR_ALLTOALL, comm, &a, "MPI_Neighbor_alltoall");
}
MPI_SHIM_ALIAS(MPI_Neighbor_alltoall);

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
			      .rdispls = rdispls, .rtype = recvtype };

	return nbr_blocking(NBR_ALLTOALLV, comm, &a, "MPI_Neighbor_alltoallv");
}
MPI_SHIM_ALIAS(MPI_Neighbor_alltoallv);

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
			    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
			    void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
			    const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scounts = sendcounts, .swdispls = sdispls,
			      .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
			      .rwdispls = rdispls, .rtypes = recvtypes };

	return nbr_blocking(NBR_ALLTOALLW, comm, &a, "MPI_Neighbor_alltoallw");
}
MPI_SHIM_ALIAS(MPI_Neighbor_alltoallw);

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return nbr_start(NBR_ALLGATHER, comm, &a, request, "MPI_Ineighbor_allgather");
}
MPI_SHIM_ALIAS(MPI_Ineighbor_allgather);

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			      void *recvbuf, const int recvcounts[], const int displs[],
			      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			      .rtype = recvtype };

	return nbr_start(NBR_ALLGATHERV, comm, &a, request, "MPI_Ineighbor_allgatherv");
}
MPI_SHIM_ALIAS(MPI_Ineighbor_allgatherv);

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return nbr_start(NBR_ALLTOALL, comm, &a, request, "MPI_Ineighbor_alltoall");
}
MPI_SHIM_ALIAS(MPI_Ineighbor_alltoall);

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
			      .rdispls = rdispls, .rtype = recvtype };

	return nbr_start(NBR_ALLTOALLV, comm, &a, request, "MPI_Ineighbor_alltoallv");
}
MPI_SHIM_ALIAS(MPI_Ineighbor_alltoallv);

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
			     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
			     void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
			     const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct nbr_args a = { .sbuf = sendbuf, .scounts = sendcounts, .swdispls = sdispls,
			      .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
			      .rwdispls = rdispls, .rtypes = recvtypes };

	return nbr_start(NBR_ALLTOALLW, comm, &a, request, "MPI_Ineighbor_alltoallw");
}
MPI_SHIM_ALIAS(MPI_Ineighbor_alltoallw);
