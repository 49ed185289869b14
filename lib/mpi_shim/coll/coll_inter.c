/* SPDX-License-Identifier: MIT */
/*
 * coll_inter.c - the collectives of an inter-communicator, as schedules
 * (coll.h), blocking and non-blocking alike.
 *
 * Ranks in a send or receive step name the remote group; steps built while
 * s->on_local is set run on comm->local, an intra-communicator of the local
 * group (intercomm.c), where the intra-communicator algorithms of coll.c
 * combine the members of one group.  The algorithms are the standard's
 * two-group ones:
 *
 *  - rooted (Bcast, Gather(v), Scatter(v), Reduce): the root passes
 *    MPI_ROOT, the rest of its group MPI_PROC_NULL (they take no part), the
 *    other group the root's rank.  Bcast: the root sends to the remote
 *    group's rank 0, which broadcasts in its group.  Gather, Scatter: the
 *    root receives from, or sends to, each remote process.  Reduce: the
 *    other group reduces to its rank 0, which sends the result to the root.
 *  - Barrier: a barrier in each group, the two ranks 0 trade an empty
 *    message, a barrier in each group again.
 *  - Allgather(v), Alltoall(v, w): each process trades with each process of
 *    the remote group directly.
 *  - Allreduce, Reduce_scatter(_block): each group reduces its data to its
 *    rank 0, the two ranks 0 trade their results, and each broadcasts (or
 *    scatters) what came from the remote group.  The input vectors of a
 *    Reduce_scatter hold the sum of the receive counts of the local group,
 *    which must equal the remote group's sum.
 *
 * Scan and Exscan are not defined on inter-communicators (MPI_ERR_COMM).
 */
#include "shim.h"
#include "coll.h"

/* --- argument checks --- */

static int check_data(MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
		      const char *call)
{
	int rc;

	if (buf == MPI_IN_PLACE)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed on an inter-communicator");
	if ((rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, type, call)) ||
	    (rc = mpi_shim_check_buf(comm, buf, count, type, call)))
		return rc;
	return MPI_SUCCESS;
}

/*
 * n blocks: counts (or count each) and displacements, in elements of type
 * or, with types, in bytes (which may be absolute addresses from
 * MPI_BOTTOM); without counts, the blocks follow each other.
 */
static int check_blocks(MPI_Comm comm, const void *buf, int n, int count, const int *counts,
			const int *displs, MPI_Datatype type, const MPI_Datatype *types,
			const char *what, const char *call)
{
	MPI_Aint disp;
	int i, rc;

	if (buf == MPI_IN_PLACE)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed on an inter-communicator");
	if (types && !counts)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the %s counts array is NULL", what);
	if (counts && !displs)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the %s displacements array is NULL",
				    what);
	for (i = 0; i < n; i++) {
		int c = counts ? counts[i] : count;
		MPI_Datatype t = types ? types[i] : type;

		if ((rc = mpi_shim_check_count(comm, c, call)) ||
		    (rc = mpi_shim_check_type(comm, t, call)))
			return rc;
		disp = !counts ? (MPI_Aint)i * c * t->extent :
		       types  ? displs[i] :
				(MPI_Aint)displs[i] * t->extent;
		if (c && !((uintptr_t)buf + (uintptr_t)disp) && t->predefined)
			return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
					    "the %s buffer is NULL for %d element(s) of the block "
					    "of remote rank %d", what, c, i);
	}
	return MPI_SUCCESS;
}

static int check_root(MPI_Comm comm, int root, const char *call)
{
	if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < comm->peer_size))
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_ROOT, call,
			    "root %d is not MPI_ROOT, MPI_PROC_NULL nor a rank of the remote "
			    "group (size %d)", root, comm->peer_size);
}

static int check_reduction(MPI_Comm comm, const struct coll_args *a, int count, const char *call)
{
	int rc;

	if ((rc = check_data(comm, a->sbuf, count, a->rtype, call)) ||
	    (rc = mpi_shim_check_op(comm, a->op, a->rtype, call)))
		return rc;
	return MPI_SUCCESS;
}

int coll_check_inter(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a,
		     const char *call)
{
	int p = comm->peer_size, rc, i;
	long long total;

	switch (kind) {
	case COLL_BARRIER:
		return MPI_SUCCESS;
	case COLL_BCAST:
		if ((rc = check_root(comm, a->root, call)) || a->root == MPI_PROC_NULL)
			return rc;
		return check_data(comm, a->rbuf, a->rcount, a->rtype, call);
	case COLL_GATHER:
	case COLL_GATHERV:
		if ((rc = check_root(comm, a->root, call)) || a->root == MPI_PROC_NULL)
			return rc;
		if (a->root != MPI_ROOT)
			return check_data(comm, a->sbuf, a->scount, a->stype, call);
		return check_blocks(comm, a->rbuf, p, a->rcount,
				    kind == COLL_GATHERV ? a->rcounts : NULL, a->rdispls, a->rtype,
				    NULL, "receive", call);
	case COLL_SCATTER:
	case COLL_SCATTERV:
		if ((rc = check_root(comm, a->root, call)) || a->root == MPI_PROC_NULL)
			return rc;
		if (a->root != MPI_ROOT)
			return check_data(comm, a->rbuf, a->rcount, a->rtype, call);
		return check_blocks(comm, a->sbuf, p, a->scount,
				    kind == COLL_SCATTERV ? a->scounts : NULL, a->sdispls, a->stype,
				    NULL, "send", call);
	case COLL_ALLGATHER:
	case COLL_ALLGATHERV:
		if ((rc = check_data(comm, a->sbuf, a->scount, a->stype, call)))
			return rc;
		return check_blocks(comm, a->rbuf, p, a->rcount,
				    kind == COLL_ALLGATHERV ? a->rcounts : NULL, a->rdispls,
				    a->rtype, NULL, "receive", call);
	case COLL_ALLTOALL:
	case COLL_ALLTOALLV:
	case COLL_ALLTOALLW:
		if ((kind == COLL_ALLTOALLW && (!a->stypes || !a->rtypes)))
			return mpi_shim_err(comm, MPI_ERR_ARG, call, "a types array is NULL");
		if ((rc = check_blocks(comm, a->sbuf, p, a->scount,
				       kind == COLL_ALLTOALL ? NULL : a->scounts, a->sdispls,
				       a->stype, kind == COLL_ALLTOALLW ? a->stypes : NULL, "send",
				       call)))
			return rc;
		return check_blocks(comm, a->rbuf, p, a->rcount,
				    kind == COLL_ALLTOALL ? NULL : a->rcounts, a->rdispls, a->rtype,
				    kind == COLL_ALLTOALLW ? a->rtypes : NULL, "receive", call);
	case COLL_REDUCE:
		if ((rc = check_root(comm, a->root, call)) || a->root == MPI_PROC_NULL)
			return rc;
		if (a->root == MPI_ROOT) {
			if ((rc = check_data(comm, a->rbuf, a->rcount, a->rtype, call)))
				return rc;
			return mpi_shim_check_op(comm, a->op, a->rtype, call);
		}
		return check_reduction(comm, a, a->rcount, call);
	case COLL_ALLREDUCE:
		if ((rc = check_reduction(comm, a, a->rcount, call)))
			return rc;
		return check_data(comm, a->rbuf, a->rcount, a->rtype, call);
	case COLL_REDUCE_SCATTER:
	case COLL_REDUCE_SCATTER_BLOCK:
		if (kind == COLL_REDUCE_SCATTER && !a->rcounts)
			return mpi_shim_err(comm, MPI_ERR_ARG, call,
					    "the receive counts array is NULL");
		for (i = 0, total = 0; i < comm->size; i++) {
			int c = kind == COLL_REDUCE_SCATTER ? a->rcounts[i] : a->rcount;

			if ((rc = mpi_shim_check_count(comm, c, call)))
				return rc;
			total += c;
		}
		if (total > 0x7fffffff)
			return mpi_shim_err(comm, MPI_ERR_COUNT, call,
					    "the receive counts add up to %lld elements", total);
		if ((rc = check_reduction(comm, a, (int)total, call)))
			return rc;
		return check_data(comm, a->rbuf,
				  kind == COLL_REDUCE_SCATTER ? a->rcounts[comm->rank] : a->rcount,
				  a->rtype, call);
	case COLL_SCAN:
	case COLL_EXSCAN:
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "not defined on an inter-communicator");
	default:
		return mpi_shim_err(comm, MPI_ERR_INTERN, call, "unknown collective %d", kind);
	}
}

/* --- the algorithms --- */

static void on_local(struct coll_sched *s, int yes)
{
	coll_fence(s);
	s->on_local = yes;
}

static void inter_barrier(struct coll_sched *s)
{
	on_local(s, 1);
	coll_build_barrier(s);
	on_local(s, 0);
	if (s->comm->rank == 0) {
		coll_send(s, NULL, 0, MPI_BYTE, 0);
		coll_recv(s, NULL, 0, MPI_BYTE, 0);
	}
	on_local(s, 1);
	coll_build_barrier(s);
	on_local(s, 0);
}

static void inter_bcast(struct coll_sched *s, const struct coll_args *a)
{
	if (a->root == MPI_ROOT) {
		coll_send(s, a->rbuf, a->rcount, a->rtype, 0);
	} else if (a->root != MPI_PROC_NULL) {
		if (s->comm->rank == 0)
			coll_recv(s, a->rbuf, a->rcount, a->rtype, a->root);
		on_local(s, 1);
		coll_build_bcast(s, a->rbuf, a->rcount, a->rtype, 0);
		on_local(s, 0);
	}
	coll_fence(s);
}

/* Gather(v) and Scatter(v): the root trades with each remote process. */
static void inter_rooted(struct coll_sched *s, const struct coll_args *a, enum coll_kind kind)
{
	int gather = kind == COLL_GATHER || kind == COLL_GATHERV, i;

	if (a->root == MPI_PROC_NULL)
		return;
	if (a->root != MPI_ROOT) {
		if (gather)
			coll_send(s, a->sbuf, a->scount, a->stype, a->root);
		else
			coll_recv(s, a->rbuf, a->rcount, a->rtype, a->root);
		coll_fence(s);
		return;
	}
	for (i = 0; i < s->comm->peer_size; i++) {
		if (kind == COLL_GATHER)
			coll_recv(s, coll_at(a->rbuf, (MPI_Aint)i * a->rcount, a->rtype), a->rcount,
				  a->rtype, i);
		else if (kind == COLL_GATHERV)
			coll_recv(s, coll_at(a->rbuf, a->rdispls[i], a->rtype), a->rcounts[i],
				  a->rtype, i);
		else if (kind == COLL_SCATTER)
			coll_send(s, coll_at(a->sbuf, (MPI_Aint)i * a->scount, a->stype), a->scount,
				  a->stype, i);
		else
			coll_send(s, coll_at(a->sbuf, a->sdispls[i], a->stype), a->scounts[i],
				  a->stype, i);
	}
	coll_fence(s);
}

/* Allgather(v) and Alltoall(v, w): each remote process directly. */
static void inter_exchange(struct coll_sched *s, const struct coll_args *a, enum coll_kind kind)
{
	int i;

	for (i = 0; i < s->comm->peer_size; i++) {
		switch (kind) {
		case COLL_ALLGATHER:
			coll_send(s, a->sbuf, a->scount, a->stype, i);
			coll_recv(s, coll_at(a->rbuf, (MPI_Aint)i * a->rcount, a->rtype), a->rcount,
				  a->rtype, i);
			break;
		case COLL_ALLGATHERV:
			coll_send(s, a->sbuf, a->scount, a->stype, i);
			coll_recv(s, coll_at(a->rbuf, a->rdispls[i], a->rtype), a->rcounts[i],
				  a->rtype, i);
			break;
		case COLL_ALLTOALL:
			coll_send(s, coll_at(a->sbuf, (MPI_Aint)i * a->scount, a->stype), a->scount,
				  a->stype, i);
			coll_recv(s, coll_at(a->rbuf, (MPI_Aint)i * a->rcount, a->rtype), a->rcount,
				  a->rtype, i);
			break;
		case COLL_ALLTOALLV:
			coll_send(s, coll_at(a->sbuf, a->sdispls[i], a->stype), a->scounts[i],
				  a->stype, i);
			coll_recv(s, coll_at(a->rbuf, a->rdispls[i], a->rtype), a->rcounts[i],
				  a->rtype, i);
			break;
		default: /* Alltoallw: displacements in bytes */
			coll_send(s, (const char *)a->sbuf + a->sdispls[i], a->scounts[i],
				  a->stypes[i], i);
			coll_recv(s, (char *)a->rbuf + a->rdispls[i], a->rcounts[i], a->rtypes[i], i);
			break;
		}
	}
	coll_fence(s);
}

/* The reduction of the local group's count elements at rank 0 (returned
 * there; NULL elsewhere). */
static void *reduce_local(struct coll_sched *s, const void *sbuf, int count, MPI_Datatype t)
{
	void *tmp = s->comm->rank == 0 ? coll_tmp(s, count, t) : NULL;

	on_local(s, 1);
	coll_build_reduce(s, sbuf, tmp, count, t, 0);
	on_local(s, 0);
	return tmp;
}

static void inter_reduce(struct coll_sched *s, const struct coll_args *a)
{
	void *tmp;

	if (a->root == MPI_PROC_NULL)
		return;
	if (a->root == MPI_ROOT) {
		coll_recv(s, a->rbuf, a->rcount, a->rtype, 0);
		coll_fence(s);
		return;
	}
	tmp = reduce_local(s, a->sbuf, a->rcount, a->rtype);
	if (s->comm->rank == 0)
		coll_send(s, tmp, a->rcount, a->rtype, a->root);
	coll_fence(s);
}

static void inter_allreduce(struct coll_sched *s, const struct coll_args *a)
{
	void *tmp = reduce_local(s, a->sbuf, a->rcount, a->rtype);

	if (s->comm->rank == 0) {
		coll_send(s, tmp, a->rcount, a->rtype, 0);
		coll_recv(s, a->rbuf, a->rcount, a->rtype, 0);
	}
	on_local(s, 1);
	coll_build_bcast(s, a->rbuf, a->rcount, a->rtype, 0);
	on_local(s, 0);
	coll_fence(s);
}

static void inter_reduce_scatter(struct coll_sched *s, const struct coll_args *a, int regular)
{
	int p = s->comm->size, i, total = 0;
	void *mine, *theirs = NULL;

	for (i = 0; i < p; i++)
		total += regular ? a->rcount : a->rcounts[i];
	mine = reduce_local(s, a->sbuf, total, a->rtype);
	if (s->comm->rank == 0) {
		theirs = coll_tmp(s, total, a->rtype);
		coll_send(s, mine, total, a->rtype, 0);
		coll_recv(s, theirs, total, a->rtype, 0);
	}
	on_local(s, 1);
	coll_build_scatter_result(s, theirs, a, regular);
	on_local(s, 0);
	coll_fence(s);
}

int coll_build_inter(enum coll_kind kind, struct coll_sched *s, const struct coll_args *a)
{
	switch (kind) {
	case COLL_BARRIER:
		inter_barrier(s);
		break;
	case COLL_BCAST:
		inter_bcast(s, a);
		break;
	case COLL_GATHER:
	case COLL_GATHERV:
	case COLL_SCATTER:
	case COLL_SCATTERV:
		inter_rooted(s, a, kind);
		break;
	case COLL_ALLGATHER:
	case COLL_ALLGATHERV:
	case COLL_ALLTOALL:
	case COLL_ALLTOALLV:
	case COLL_ALLTOALLW:
		inter_exchange(s, a, kind);
		break;
	case COLL_REDUCE:
		inter_reduce(s, a);
		break;
	case COLL_ALLREDUCE:
		inter_allreduce(s, a);
		break;
	case COLL_REDUCE_SCATTER:
		inter_reduce_scatter(s, a, 0);
		break;
	case COLL_REDUCE_SCATTER_BLOCK:
		inter_reduce_scatter(s, a, 1);
		break;
	default:
		return MPI_ERR_COMM;
	}
	return s->err;
}
