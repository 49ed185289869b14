// SPDX-License-Identifier: MIT
/*
 * coll_large.c - the large-count (MPI-4.0 "_c") forms of the collectives
 * and reductions: MPI_Bcast_c ... MPI_Exscan_c, their non-blocking forms
 * MPI_Ibcast_c ... MPI_Iexscan_c, their persistent forms MPI_Bcast_init_c
 * ... MPI_Exscan_init_c, and MPI_Reduce_local_c (MPI_Op_create_c is in
 * op.c).
 *
 * Each calls the int form.  Counts and displacements that fit an int are
 * passed as they are (a negative count too, which the int form refuses
 * with MPI_ERR_COUNT), so such a call behaves exactly as its int form.
 * Beyond INT_MAX the call is rewritten into one that moves the same
 * elements to the same places:
 *
 *   - a count of Bcast, Gather, Scatter, Allgather, Alltoall becomes one
 *     element of a contiguous type of count elements; each rank does so
 *     for its own counts only, the type signatures staying the same;
 *   - the counts and displacements of a v form, and the counts of
 *     Reduce_scatter, are divided by their greatest common divisor g, the
 *     datatype becoming a contiguous type of g elements: this works when
 *     the quotients fit an int;
 *   - Alltoallw gives a block beyond an int a type of its own: one block
 *     of count elements at its displacement, sent as one element at 0;
 *   - a blocking Reduce, Allreduce, Scan or Exscan runs as consecutive
 *     collectives over pieces of the vector (the operations are
 *     elementwise, and every rank cuts the same pieces);
 *   - the non-blocking and persistent ones and Reduce_scatter(_block)
 *     with a predefined operation take a contiguous type, which a
 *     predefined operation reduces element by element; with a user
 *     operation they are
 *     MPI_ERR_COUNT, as are v forms whose quotients are still beyond an
 *     int (mpi_shim(7), Large counts).
 *
 * The argument checks are the int form's, and its name is the one an
 * error message shows, except the checks of this file, which name the _c
 * call.  The types made here are released before the call returns: the
 * schedule of a non-blocking collective holds its own references.
 */
#include <limits.h>
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"
#include "coll.h"

/* A count of at most INT_MAX as the int form takes it (below INT_MIN: -1). */
static int int_of(MPI_Count c)
{
	return c < INT_MIN ? -1 : (int)c;
}

static int fits(MPI_Count c)
{
	return c >= INT_MIN && c <= INT_MAX;
}

/* The checks of the large path, which reads the communicator. */
static int enter(MPI_Comm comm, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	return MPI_SUCCESS;
}

/* A refused call skips its collective, as the int form does. */
static int refuse(MPI_Comm comm, int rc)
{
	coll_skip(comm);
	return rc;
}

/* The three forms of each collective: blocking, non-blocking, persistent. */
enum form { BLOCKING, NONBLOCKING, PERSISTENT };

/* Whether this process is the root of a rooted collective, and whether it
 * takes part as one of the other ranks (the root of an intra-communicator
 * does both; in an inter-communicator, the root's group passes MPI_ROOT or
 * MPI_PROC_NULL, the other group the root's rank). */
static int is_root(MPI_Comm comm, int root)
{
	return mpi_shim_is_inter(comm) ? root == MPI_ROOT : comm->rank == root;
}

static int is_leaf(MPI_Comm comm, int root)
{
	return mpi_shim_is_inter(comm) ? root >= 0 : 1;
}

/* A committed contiguous type of count elements of t. */
static int make_block(MPI_Count count, MPI_Datatype t, MPI_Datatype *made)
{
	int rc = PMPI_Type_contiguous_c(count, t, made);

	if (!rc && (rc = PMPI_Type_commit(made)))
		PMPI_Type_free(made);
	if (rc)
		*made = MPI_DATATYPE_NULL;
	return rc;
}

/* ------------------------------------------------------------------ */
/* One count                                                           */
/* ------------------------------------------------------------------ */

struct large {
	int n;
	MPI_Datatype t;	   /* the type to pass */
	MPI_Datatype made; /* a type made for it, or MPI_DATATYPE_NULL */
};

/* count elements of t; significant 0: the call ignores them here, and a
 * count beyond an int is passed as 0. */
static int large_of(MPI_Comm comm, MPI_Count count, MPI_Datatype t, int significant,
		    struct large *l, const char *call)
{
	int rc;

	l->n = 0;
	l->t = t;
	l->made = MPI_DATATYPE_NULL;
	if (count <= INT_MAX) {
		l->n = int_of(count);
		return MPI_SUCCESS;
	}
	if (!significant)
		return MPI_SUCCESS;
	if ((rc = mpi_shim_check_type(comm, t, call)) || (rc = make_block(count, t, &l->made)))
		return rc;
	l->n = 1;
	l->t = l->made;
	return MPI_SUCCESS;
}

static void large_free(struct large *l)
{
	if (l->made != MPI_DATATYPE_NULL)
		PMPI_Type_free(&l->made);
}

/* ------------------------------------------------------------------ */
/* Counts and displacements of the v forms                             */
/* ------------------------------------------------------------------ */

struct vec {
	int *counts, *displs; /* what to pass (NULL: the caller's NULL) */
	MPI_Datatype t;
	MPI_Datatype made;
};

static MPI_Count gcd(MPI_Count a, MPI_Count b)
{
	while (b) {
		MPI_Count r = a % b;

		a = b;
		b = r;
	}
	return a;
}

static void vec_free(struct vec *v)
{
	free(v->counts);
	free(v->displs);
	if (v->made != MPI_DATATYPE_NULL)
		PMPI_Type_free(&v->made);
}

/* Whether the n counts (and displacements) need the division: a count or
 * displacement of a non-empty block beyond an int, or counts adding up to
 * more than INT_MAX when the blocks follow each other (no displacements). */
static int vec_big(int n, const MPI_Count *counts, const MPI_Aint *displs, MPI_Count *g_p)
{
	MPI_Count g = 0, total = 0;
	int i, big = 0, neg = 0;

	for (i = 0; i < n; i++) {
		if (counts[i] < 0)
			neg = 1;
		if (counts[i] <= 0)
			continue;
		if (counts[i] > INT_MAX || (displs && !fits(displs[i])))
			big = 1;
		if (!displs && __builtin_add_overflow(total, counts[i], &total))
			big = 1;
		g = gcd(g, counts[i]);
		if (displs)
			g = gcd(g, displs[i] < 0 ? -(MPI_Count)displs[i] : (MPI_Count)displs[i]);
	}
	if (!displs && total > INT_MAX)
		big = 1;
	*g_p = g;
	return big && !neg;
}

/*
 * The n counts and displacements (in elements of t; displs NULL for the
 * counts of Reduce_scatter, whose blocks follow each other) of a v form:
 * copied when they fit an int, else divided by g (vec_big), t becoming a
 * contiguous type of g elements.  significant 0: the call ignores them here.
 */
static int vec_of(MPI_Comm comm, int n, const MPI_Count *counts, const MPI_Aint *displs,
		  int has_displs, MPI_Datatype t, int significant, struct vec *v, const char *what,
		  const char *call)
{
	MPI_Count g = 1, total = 0;
	int i, rc;

	v->counts = v->displs = NULL;
	v->t = t;
	v->made = MPI_DATATYPE_NULL;
	if (!significant || !counts || (has_displs && !displs)) {
		/* The int form reports a missing array: it gets the same NULL,
		 * and n zeros for the other one, which it may read first. */
		size_t m = n > 0 ? (size_t)n : 1;

		if (significant && counts)
			v->counts = calloc(m, sizeof(int));
		if (significant && has_displs && displs)
			v->displs = calloc(m, sizeof(int));
		return MPI_SUCCESS;
	}
	v->counts = malloc((size_t)n * sizeof(int));
	v->displs = has_displs ? malloc((size_t)n * sizeof(int)) : NULL;
	if (!v->counts || (has_displs && !v->displs)) {
		vec_free(v);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for %d counts", n);
	}
	if (!vec_big(n, counts, has_displs ? displs : NULL, &g))
		g = 1;
	for (i = 0; i < n; i++) {
		MPI_Count c = counts[i] > 0 ? counts[i] / g : counts[i];
		MPI_Count d = 0;

		if (has_displs)
			d = counts[i] > 0 ? displs[i] / g : fits(displs[i]) ? displs[i] : 0;

		total += c > 0 ? c : 0;
		if (c > INT_MAX || !fits(d) || (!has_displs && total > INT_MAX)) {
			vec_free(v);
			return mpi_shim_err(comm, MPI_ERR_COUNT, call,
					    "the %s count %lld%s of rank %d does not fit an int, "
					    "even in blocks of %lld elements (the greatest common "
					    "divisor of the counts%s): this form takes at most "
					    "INT_MAX",
					    what, counts[i], has_displs ? " or displacement" : "",
					    i, g, has_displs ? " and displacements" : "");
		}
		v->counts[i] = int_of(c);
		if (has_displs)
			v->displs[i] = (int)d;
	}
	if (g > 1) {
		if ((rc = mpi_shim_check_type(comm, t, call)) ||
		    (rc = make_block(g, t, &v->made))) {
			vec_free(v);
			return rc;
		}
		v->t = v->made;
	}
	return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Bcast, Gather, Scatter, Allgather, Alltoall                         */
/* ------------------------------------------------------------------ */

static int bcast_call(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Info info,
		      MPI_Request *req, enum form form)
{
	if (form == PERSISTENT)
		return PMPI_Bcast_init(buf, n, t, root, comm, info, req);
	return form ? PMPI_Ibcast(buf, n, t, root, comm, req) : PMPI_Bcast(buf, n, t, root, comm);
}

static int bcast_c(void *buf, MPI_Count count, MPI_Datatype t, int root, MPI_Comm comm,
		   MPI_Info info, MPI_Request *req, enum form form, const char *call)
{
	struct large l;
	int rc;

	if (count <= INT_MAX)
		return bcast_call(buf, int_of(count), t, root, comm, info, req, form);
	if ((rc = enter(comm, call)) ||
	    (rc = large_of(comm, count, t, !mpi_shim_is_inter(comm) || root != MPI_PROC_NULL, &l,
			   call)))
		return refuse(comm, rc);
	rc = bcast_call(buf, l.n, l.t, root, comm, info, req, form);
	large_free(&l);
	return rc;
}

int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return bcast_c(buffer, count, datatype, root, comm, MPI_INFO_NULL, NULL, BLOCKING,
		       "MPI_Bcast_c");
}
MPI_SHIM_ALIAS(MPI_Bcast_c);

int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
		  MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return bcast_c(buffer, count, datatype, root, comm, MPI_INFO_NULL, request, NONBLOCKING,
		       "MPI_Ibcast_c");
}
MPI_SHIM_ALIAS(MPI_Ibcast_c);

/* The arguments of a collective of one send and one receive count each. */
struct two {
	const void *sbuf;
	void *rbuf;
	MPI_Datatype stype, rtype;
	int root;
	MPI_Comm comm;
	MPI_Info info;
	MPI_Request *req;
	enum form form;
};

static int two_init(enum coll_kind kind, const struct two *a, int sn, MPI_Datatype st, int rn,
		    MPI_Datatype rt)
{
	switch (kind) {
	case COLL_GATHER:
		return PMPI_Gather_init(a->sbuf, sn, st, a->rbuf, rn, rt, a->root, a->comm, a->info,
					a->req);
	case COLL_SCATTER:
		return PMPI_Scatter_init(a->sbuf, sn, st, a->rbuf, rn, rt, a->root, a->comm,
					 a->info, a->req);
	case COLL_ALLGATHER:
		return PMPI_Allgather_init(a->sbuf, sn, st, a->rbuf, rn, rt, a->comm, a->info,
					   a->req);
	default:
		return PMPI_Alltoall_init(a->sbuf, sn, st, a->rbuf, rn, rt, a->comm, a->info,
					  a->req);
	}
}

static int two_call(enum coll_kind kind, const struct two *a, int sn, MPI_Datatype st, int rn,
		    MPI_Datatype rt)
{
	if (a->form == PERSISTENT)
		return two_init(kind, a, sn, st, rn, rt);
	switch (kind) {
	case COLL_GATHER:
		return a->form ? PMPI_Igather(a->sbuf, sn, st, a->rbuf, rn, rt, a->root, a->comm,
					      a->req)
			       : PMPI_Gather(a->sbuf, sn, st, a->rbuf, rn, rt, a->root, a->comm);
	case COLL_SCATTER:
		return a->form ? PMPI_Iscatter(a->sbuf, sn, st, a->rbuf, rn, rt, a->root, a->comm,
					       a->req)
			       : PMPI_Scatter(a->sbuf, sn, st, a->rbuf, rn, rt, a->root, a->comm);
	case COLL_ALLGATHER:
		return a->form ? PMPI_Iallgather(a->sbuf, sn, st, a->rbuf, rn, rt, a->comm, a->req)
			       : PMPI_Allgather(a->sbuf, sn, st, a->rbuf, rn, rt, a->comm);
	default:
		return a->form ? PMPI_Ialltoall(a->sbuf, sn, st, a->rbuf, rn, rt, a->comm, a->req)
			       : PMPI_Alltoall(a->sbuf, sn, st, a->rbuf, rn, rt, a->comm);
	}
}

static int two_c(enum coll_kind kind, const struct two *a, MPI_Count scount, MPI_Count rcount,
		 const char *call)
{
	MPI_Comm comm = a->comm;
	struct large s, r;
	int rc, ssig, rsig;

	if (scount <= INT_MAX && rcount <= INT_MAX)
		return two_call(kind, a, int_of(scount), a->stype, int_of(rcount), a->rtype);
	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	/* Which counts this process's part of the call reads. */
	if (kind == COLL_GATHER) {
		ssig =
		    is_leaf(comm, a->root) && !(is_root(comm, a->root) && a->sbuf == MPI_IN_PLACE);
		rsig = is_root(comm, a->root);
	} else if (kind == COLL_SCATTER) {
		ssig = is_root(comm, a->root);
		rsig =
		    is_leaf(comm, a->root) && !(is_root(comm, a->root) && a->rbuf == MPI_IN_PLACE);
	} else {
		ssig = a->sbuf != MPI_IN_PLACE;
		rsig = 1;
	}
	if ((rc = large_of(comm, scount, a->stype, ssig, &s, call)))
		return refuse(comm, rc);
	if ((rc = large_of(comm, rcount, a->rtype, rsig, &r, call))) {
		large_free(&s);
		return refuse(comm, rc);
	}
	rc = two_call(kind, a, s.n, s.t, r.n, r.t);
	large_free(&s);
	large_free(&r);
	return rc;
}

#define TWO_ARGS(form_, info_, req_, root_)                                                        \
	{                                                                                          \
		.sbuf = sendbuf, .rbuf = recvbuf, .stype = sendtype, .rtype = recvtype,            \
		.root = (root_), .comm = comm, .info = (info_), .req = (req_), .form = (form_)     \
	}

int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(BLOCKING, MPI_INFO_NULL, NULL, root);

	return two_c(COLL_GATHER, &a, sendcount, recvcount, "MPI_Gather_c");
}
MPI_SHIM_ALIAS(MPI_Gather_c);

int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		   MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(NONBLOCKING, MPI_INFO_NULL, request, root);

	return two_c(COLL_GATHER, &a, sendcount, recvcount, "MPI_Igather_c");
}
MPI_SHIM_ALIAS(MPI_Igather_c);

int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(BLOCKING, MPI_INFO_NULL, NULL, root);

	return two_c(COLL_SCATTER, &a, sendcount, recvcount, "MPI_Scatter_c");
}
MPI_SHIM_ALIAS(MPI_Scatter_c);

int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		    MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(NONBLOCKING, MPI_INFO_NULL, request, root);

	return two_c(COLL_SCATTER, &a, sendcount, recvcount, "MPI_Iscatter_c");
}
MPI_SHIM_ALIAS(MPI_Iscatter_c);

int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(BLOCKING, MPI_INFO_NULL, NULL, 0);

	return two_c(COLL_ALLGATHER, &a, sendcount, recvcount, "MPI_Allgather_c");
}
MPI_SHIM_ALIAS(MPI_Allgather_c);

int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
		      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
		      MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(NONBLOCKING, MPI_INFO_NULL, request, 0);

	return two_c(COLL_ALLGATHER, &a, sendcount, recvcount, "MPI_Iallgather_c");
}
MPI_SHIM_ALIAS(MPI_Iallgather_c);

int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(BLOCKING, MPI_INFO_NULL, NULL, 0);

	return two_c(COLL_ALLTOALL, &a, sendcount, recvcount, "MPI_Alltoall_c");
}
MPI_SHIM_ALIAS(MPI_Alltoall_c);

int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
		     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(NONBLOCKING, MPI_INFO_NULL, request, 0);

	return two_c(COLL_ALLTOALL, &a, sendcount, recvcount, "MPI_Ialltoall_c");
}
MPI_SHIM_ALIAS(MPI_Ialltoall_c);

/* ------------------------------------------------------------------ */
/* Gatherv, Scatterv, Allgatherv, Alltoallv                            */
/* ------------------------------------------------------------------ */

static int gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
		     const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype, int root,
		     MPI_Comm comm, MPI_Info info, MPI_Request *req, enum form form,
		     const char *call)
{
	struct large s;
	struct vec r;
	int rc, ssig;

	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	ssig = is_leaf(comm, root) && !(is_root(comm, root) && sbuf == MPI_IN_PLACE);
	if ((rc = large_of(comm, scount, stype, ssig, &s, call)))
		return refuse(comm, rc);
	if ((rc = vec_of(comm, comm->peer_size, rcounts, displs, 1, rtype, is_root(comm, root), &r,
			 "receive", call))) {
		large_free(&s);
		return refuse(comm, rc);
	}
	if (form == PERSISTENT)
		rc = PMPI_Gatherv_init(sbuf, s.n, s.t, rbuf, r.counts, r.displs, r.t, root, comm,
				       info, req);
	else
		rc = form ? PMPI_Igatherv(sbuf, s.n, s.t, rbuf, r.counts, r.displs, r.t, root, comm,
					  req)
			  : PMPI_Gatherv(sbuf, s.n, s.t, rbuf, r.counts, r.displs, r.t, root, comm);
	large_free(&s);
	vec_free(&r);
	return rc;
}

int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
		   int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
			 comm, MPI_INFO_NULL, NULL, BLOCKING, "MPI_Gatherv_c");
}
MPI_SHIM_ALIAS(MPI_Gatherv_c);

int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
		    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
		    int root, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
			 comm, MPI_INFO_NULL, request, NONBLOCKING, "MPI_Igatherv_c");
}
MPI_SHIM_ALIAS(MPI_Igatherv_c);

static int scatterv_c(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
		      MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
		      int root, MPI_Comm comm, MPI_Info info, MPI_Request *req, enum form form,
		      const char *call)
{
	struct vec s;
	struct large r;
	int rc, rsig;

	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	rsig = is_leaf(comm, root) && !(is_root(comm, root) && rbuf == MPI_IN_PLACE);
	if ((rc = large_of(comm, rcount, rtype, rsig, &r, call)))
		return refuse(comm, rc);
	if ((rc = vec_of(comm, comm->peer_size, scounts, displs, 1, stype, is_root(comm, root), &s,
			 "send", call))) {
		large_free(&r);
		return refuse(comm, rc);
	}
	if (form == PERSISTENT)
		rc = PMPI_Scatterv_init(sbuf, s.counts, s.displs, s.t, rbuf, r.n, r.t, root, comm,
					info, req);
	else
		rc = form
			 ? PMPI_Iscatterv(sbuf, s.counts, s.displs, s.t, rbuf, r.n, r.t, root, comm,
					  req)
			 : PMPI_Scatterv(sbuf, s.counts, s.displs, s.t, rbuf, r.n, r.t, root, comm);
	vec_free(&s);
	large_free(&r);
	return rc;
}

int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
		    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
		    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
			  comm, MPI_INFO_NULL, NULL, BLOCKING, "MPI_Scatterv_c");
}
MPI_SHIM_ALIAS(MPI_Scatterv_c);

int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
		     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
		     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
			  comm, MPI_INFO_NULL, request, NONBLOCKING, "MPI_Iscatterv_c");
}
MPI_SHIM_ALIAS(MPI_Iscatterv_c);

static int allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
			const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype,
			MPI_Comm comm, MPI_Info info, MPI_Request *req, enum form form,
			const char *call)
{
	struct large s;
	struct vec r;
	int rc;

	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	if ((rc = large_of(comm, scount, stype, sbuf != MPI_IN_PLACE, &s, call)))
		return refuse(comm, rc);
	if ((rc = vec_of(comm, comm->peer_size, rcounts, displs, 1, rtype, 1, &r, "receive",
			 call))) {
		large_free(&s);
		return refuse(comm, rc);
	}
	if (form == PERSISTENT)
		rc = PMPI_Allgatherv_init(sbuf, s.n, s.t, rbuf, r.counts, r.displs, r.t, comm, info,
					  req);
	else
		rc = form ? PMPI_Iallgatherv(sbuf, s.n, s.t, rbuf, r.counts, r.displs, r.t, comm,
					     req)
			  : PMPI_Allgatherv(sbuf, s.n, s.t, rbuf, r.counts, r.displs, r.t, comm);
	large_free(&s);
	vec_free(&r);
	return rc;
}

int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
		      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
		      MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
			    comm, MPI_INFO_NULL, NULL, BLOCKING, "MPI_Allgatherv_c");
}
MPI_SHIM_ALIAS(MPI_Allgatherv_c);

int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
		       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
		       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
			    comm, MPI_INFO_NULL, request, NONBLOCKING, "MPI_Iallgatherv_c");
}
MPI_SHIM_ALIAS(MPI_Iallgatherv_c);

static int alltoallv_c(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
		       MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
		       const MPI_Aint *rdispls, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
		       MPI_Request *req, enum form form, const char *call)
{
	struct vec s, r;
	int rc;

	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	if ((rc = vec_of(comm, comm->peer_size, scounts, sdispls, 1, stype, sbuf != MPI_IN_PLACE,
			 &s, "send", call)))
		return refuse(comm, rc);
	if ((rc = vec_of(comm, comm->peer_size, rcounts, rdispls, 1, rtype, 1, &r, "receive",
			 call))) {
		vec_free(&s);
		return refuse(comm, rc);
	}
	if (form == PERSISTENT)
		rc = PMPI_Alltoallv_init(sbuf, s.counts, s.displs, s.t, rbuf, r.counts, r.displs,
					 r.t, comm, info, req);
	else
		rc = form ? PMPI_Ialltoallv(sbuf, s.counts, s.displs, s.t, rbuf, r.counts, r.displs,
					    r.t, comm, req)
			  : PMPI_Alltoallv(sbuf, s.counts, s.displs, s.t, rbuf, r.counts, r.displs,
					   r.t, comm);
	vec_free(&s);
	vec_free(&r);
	return rc;
}

int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
		     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
		     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
			   recvtype, comm, MPI_INFO_NULL, NULL, BLOCKING, "MPI_Alltoallv_c");
}
MPI_SHIM_ALIAS(MPI_Alltoallv_c);

int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
		      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
		      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		      MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
			   recvtype, comm, MPI_INFO_NULL, request, NONBLOCKING, "MPI_Ialltoallv_c");
}
MPI_SHIM_ALIAS(MPI_Ialltoallv_c);

/* ------------------------------------------------------------------ */
/* Alltoallw                                                           */
/* ------------------------------------------------------------------ */

struct wvec {
	int n;
	int *counts, *displs; /* what to pass (NULL: the caller's NULL) */
	MPI_Datatype *types;  /* the types to pass */
	MPI_Datatype *made;   /* the types made, MPI_DATATYPE_NULL where none */
};

static void wvec_free(struct wvec *w)
{
	int i;

	for (i = 0; w->made && i < w->n; i++)
		if (w->made[i] != MPI_DATATYPE_NULL)
			PMPI_Type_free(&w->made[i]);
	free(w->counts);
	free(w->displs);
	free(w->types);
	free(w->made);
}

/* The blocks of one side of Alltoallw (displacements in bytes): a block
 * beyond an int becomes one element of a type of its own holding it. */
static int wvec_of(MPI_Comm comm, int n, const MPI_Count *counts, const MPI_Aint *displs,
		   const MPI_Datatype *types, int significant, struct wvec *w, const char *call)
{
	int i, rc;

	w->n = n;
	w->counts = w->displs = NULL;
	w->types = w->made = NULL;
	if (!significant)
		return MPI_SUCCESS;
	if (!counts || !displs || !types) {
		/* The int form reports a missing array; it may read the others
		 * whole before it does. */
		size_t m = n > 0 ? (size_t)n : 1;

		w->counts = counts ? calloc(m, sizeof(int)) : NULL;
		w->displs = displs ? calloc(m, sizeof(int)) : NULL;
		w->types = types ? calloc(m, sizeof(MPI_Datatype)) : NULL;
		return MPI_SUCCESS;
	}
	w->counts = malloc((size_t)n * sizeof(int));
	w->displs = malloc((size_t)n * sizeof(int));
	w->types = malloc((size_t)n * sizeof(MPI_Datatype));
	w->made = calloc((size_t)n, sizeof(MPI_Datatype));
	if (!w->counts || !w->displs || !w->types || !w->made) {
		wvec_free(w);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for %d blocks", n);
	}
	for (i = 0; i < n; i++) {
		MPI_Count c = counts[i], d = displs[i];

		w->types[i] = types[i];
		w->made[i] = MPI_DATATYPE_NULL;
		if (c <= INT_MAX && (c <= 0 || fits(d))) {
			w->counts[i] = int_of(c);
			w->displs[i] = fits(d) ? (int)d : 0;
			continue;
		}
		if ((rc = mpi_shim_check_type(comm, types[i], call)) ||
		    (rc = PMPI_Type_create_hindexed_c(1, &c, &d, types[i], &w->made[i])) ||
		    (rc = PMPI_Type_commit(&w->made[i]))) {
			wvec_free(w);
			return rc;
		}
		w->counts[i] = 1;
		w->displs[i] = 0;
		w->types[i] = w->made[i];
	}
	return MPI_SUCCESS;
}

static int alltoallw_c(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
		       const MPI_Datatype *stypes, void *rbuf, const MPI_Count *rcounts,
		       const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm,
		       MPI_Info info, MPI_Request *req, enum form form, const char *call)
{
	struct wvec s, r;
	int rc;

	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	if ((rc = wvec_of(comm, comm->peer_size, scounts, sdispls, stypes, sbuf != MPI_IN_PLACE, &s,
			  call)))
		return refuse(comm, rc);
	if ((rc = wvec_of(comm, comm->peer_size, rcounts, rdispls, rtypes, 1, &r, call))) {
		wvec_free(&s);
		return refuse(comm, rc);
	}
	if (form == PERSISTENT)
		rc = PMPI_Alltoallw_init(sbuf, s.counts, s.displs, s.types, rbuf, r.counts,
					 r.displs, r.types, comm, info, req);
	else
		rc = form ? PMPI_Ialltoallw(sbuf, s.counts, s.displs, s.types, rbuf, r.counts,
					    r.displs, r.types, comm, req)
			  : PMPI_Alltoallw(sbuf, s.counts, s.displs, s.types, rbuf, r.counts,
					   r.displs, r.types, comm);
	wvec_free(&s);
	wvec_free(&r);
	return rc;
}

int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
		     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
		     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
			   recvtypes, comm, MPI_INFO_NULL, NULL, BLOCKING, "MPI_Alltoallw_c");
}
MPI_SHIM_ALIAS(MPI_Alltoallw_c);

int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
		      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
		      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
		      MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
			   recvtypes, comm, MPI_INFO_NULL, request, NONBLOCKING,
			   "MPI_Ialltoallw_c");
}
MPI_SHIM_ALIAS(MPI_Ialltoallw_c);

/* ------------------------------------------------------------------ */
/* Reductions                                                          */
/* ------------------------------------------------------------------ */

struct red {
	const void *sbuf;
	void *rbuf;
	MPI_Datatype type;
	MPI_Op op;
	int root;
	MPI_Comm comm;
	MPI_Info info;
	MPI_Request *req;
	enum form form;
};

static int red_init(enum coll_kind kind, const struct red *a, const void *sbuf, void *rbuf, int n,
		    MPI_Datatype t)
{
	switch (kind) {
	case COLL_REDUCE:
		return PMPI_Reduce_init(sbuf, rbuf, n, t, a->op, a->root, a->comm, a->info, a->req);
	case COLL_ALLREDUCE:
		return PMPI_Allreduce_init(sbuf, rbuf, n, t, a->op, a->comm, a->info, a->req);
	case COLL_REDUCE_SCATTER_BLOCK:
		return PMPI_Reduce_scatter_block_init(sbuf, rbuf, n, t, a->op, a->comm, a->info,
						      a->req);
	case COLL_SCAN:
		return PMPI_Scan_init(sbuf, rbuf, n, t, a->op, a->comm, a->info, a->req);
	default:
		return PMPI_Exscan_init(sbuf, rbuf, n, t, a->op, a->comm, a->info, a->req);
	}
}

static int red_call(enum coll_kind kind, const struct red *a, const void *sbuf, void *rbuf, int n,
		    MPI_Datatype t)
{
	if (a->form == PERSISTENT)
		return red_init(kind, a, sbuf, rbuf, n, t);
	switch (kind) {
	case COLL_REDUCE:
		return a->form ? PMPI_Ireduce(sbuf, rbuf, n, t, a->op, a->root, a->comm, a->req)
			       : PMPI_Reduce(sbuf, rbuf, n, t, a->op, a->root, a->comm);
	case COLL_ALLREDUCE:
		return a->form ? PMPI_Iallreduce(sbuf, rbuf, n, t, a->op, a->comm, a->req)
			       : PMPI_Allreduce(sbuf, rbuf, n, t, a->op, a->comm);
	case COLL_REDUCE_SCATTER_BLOCK:
		return a->form
			   ? PMPI_Ireduce_scatter_block(sbuf, rbuf, n, t, a->op, a->comm, a->req)
			   : PMPI_Reduce_scatter_block(sbuf, rbuf, n, t, a->op, a->comm);
	case COLL_SCAN:
		return a->form ? PMPI_Iscan(sbuf, rbuf, n, t, a->op, a->comm, a->req)
			       : PMPI_Scan(sbuf, rbuf, n, t, a->op, a->comm);
	default:
		return a->form ? PMPI_Iexscan(sbuf, rbuf, n, t, a->op, a->comm, a->req)
			       : PMPI_Exscan(sbuf, rbuf, n, t, a->op, a->comm);
	}
}

/* Element index of a buffer that may be NULL or MPI_IN_PLACE (left so). */
static void *red_at(const void *buf, MPI_Count index, MPI_Datatype t)
{
	if (!buf || buf == MPI_IN_PLACE)
		return (void *)buf;
	return coll_at(buf, index, t);
}

/*
 * A blocking reduction over consecutive pieces of its vector, each a
 * collective of its own: at most INT_MAX elements, and at most what one
 * message carries.  Every rank cuts the same pieces, the count and the
 * datatype being the same everywhere.
 */
static int red_pieces(enum coll_kind kind, const struct red *a, MPI_Count count)
{
	MPI_Count done, piece = INT_MAX;
	MPI_Datatype t = a->type;
	int rc = MPI_SUCCESS;

	if (t->size && (MPI_Count)(MPI_SHIM_MESSAGE_MAX / t->size) < piece)
		piece = (MPI_Count)(MPI_SHIM_MESSAGE_MAX / t->size);
	if (piece < 1)
		piece = 1;
	for (done = 0; done < count && !rc; done += piece) {
		int n = (int)(count - done < piece ? count - done : piece);

		rc = red_call(kind, a, red_at(a->sbuf, done, t), red_at(a->rbuf, done, t), n, t);
	}
	return rc;
}

static int red_c(enum coll_kind kind, const struct red *a, MPI_Count count, const char *call)
{
	MPI_Comm comm = a->comm;
	struct large l;
	int rc;

	if (count <= INT_MAX)
		return red_call(kind, a, a->sbuf, a->rbuf, int_of(count), a->type);
	if ((rc = enter(comm, call)) || (rc = mpi_shim_check_type(comm, a->type, call)) ||
	    (rc = mpi_shim_check_op(comm, a->op, a->type, call)))
		return refuse(comm, rc);
	if (a->form == BLOCKING && kind != COLL_REDUCE_SCATTER_BLOCK)
		return red_pieces(kind, a, count);
	if (!mpi_shim_op_predefined(a->op))
		return refuse(comm, mpi_shim_err(comm, MPI_ERR_COUNT, call,
						 "count %lld is beyond INT_MAX: with a user "
						 "operation, only the blocking Reduce, Allreduce, "
						 "Scan and Exscan take such a count",
						 count));
	/* A predefined operation reduces a contiguous type element by element. */
	if ((rc = large_of(comm, count, a->type, 1, &l, call)))
		return refuse(comm, rc);
	rc = red_call(kind, a, a->sbuf, a->rbuf, l.n, l.t);
	large_free(&l);
	return rc;
}

#define RED_ARGS(form_, info_, req_, root_)                                                        \
	{                                                                                          \
		.sbuf = sendbuf, .rbuf = recvbuf, .type = datatype, .op = op, .root = (root_),     \
		.comm = comm, .info = (info_), .req = (req_), .form = (form_)                      \
	}

int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		  MPI_Op op, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(BLOCKING, MPI_INFO_NULL, NULL, root);

	return red_c(COLL_REDUCE, &a, count, "MPI_Reduce_c");
}
MPI_SHIM_ALIAS(MPI_Reduce_c);

int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		   MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(NONBLOCKING, MPI_INFO_NULL, request, root);

	return red_c(COLL_REDUCE, &a, count, "MPI_Ireduce_c");
}
MPI_SHIM_ALIAS(MPI_Ireduce_c);

int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		     MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(BLOCKING, MPI_INFO_NULL, NULL, 0);

	return red_c(COLL_ALLREDUCE, &a, count, "MPI_Allreduce_c");
}
MPI_SHIM_ALIAS(MPI_Allreduce_c);

int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(NONBLOCKING, MPI_INFO_NULL, request, 0);

	return red_c(COLL_ALLREDUCE, &a, count, "MPI_Iallreduce_c");
}
MPI_SHIM_ALIAS(MPI_Iallreduce_c);

int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
				MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(BLOCKING, MPI_INFO_NULL, NULL, 0);

	return red_c(COLL_REDUCE_SCATTER_BLOCK, &a, recvcount, "MPI_Reduce_scatter_block_c");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_block_c);

int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
				 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
				 MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(NONBLOCKING, MPI_INFO_NULL, request, 0);

	return red_c(COLL_REDUCE_SCATTER_BLOCK, &a, recvcount, "MPI_Ireduce_scatter_block_c");
}
MPI_SHIM_ALIAS(MPI_Ireduce_scatter_block_c);

int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(BLOCKING, MPI_INFO_NULL, NULL, 0);

	return red_c(COLL_SCAN, &a, count, "MPI_Scan_c");
}
MPI_SHIM_ALIAS(MPI_Scan_c);

int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(NONBLOCKING, MPI_INFO_NULL, request, 0);

	return red_c(COLL_SCAN, &a, count, "MPI_Iscan_c");
}
MPI_SHIM_ALIAS(MPI_Iscan_c);

int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		  MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(BLOCKING, MPI_INFO_NULL, NULL, 0);

	return red_c(COLL_EXSCAN, &a, count, "MPI_Exscan_c");
}
MPI_SHIM_ALIAS(MPI_Exscan_c);

int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(NONBLOCKING, MPI_INFO_NULL, request, 0);

	return red_c(COLL_EXSCAN, &a, count, "MPI_Iexscan_c");
}
MPI_SHIM_ALIAS(MPI_Iexscan_c);

/* Reduce_scatter: the counts divided by their greatest common divisor
 * when they do not fit an int (or add up to more), with a predefined
 * operation only. */
static int reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype t,
			    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req,
			    enum form form, const char *call)
{
	struct vec v;
	MPI_Count g;
	int rc, big;

	if ((rc = enter(comm, call)))
		return refuse(comm, rc);
	big = rcounts && vec_big(comm->size, rcounts, NULL, &g);
	if (big && ((rc = mpi_shim_check_type(comm, t, call)) ||
		    (rc = mpi_shim_check_op(comm, op, t, call))))
		return refuse(comm, rc);
	if (big && !mpi_shim_op_predefined(op))
		return refuse(comm, mpi_shim_err(comm, MPI_ERR_COUNT, call,
						 "the receive counts add up to more than INT_MAX "
						 "or one is beyond it: with a user operation, "
						 "this form takes at most INT_MAX"));
	if ((rc = vec_of(comm, comm->size, rcounts, NULL, 0, t, 1, &v, "receive", call)))
		return refuse(comm, rc);
	if (form == PERSISTENT)
		rc = PMPI_Reduce_scatter_init(sbuf, rbuf, v.counts, v.t, op, comm, info, req);
	else
		rc = form ? PMPI_Ireduce_scatter(sbuf, rbuf, v.counts, v.t, op, comm, req)
			  : PMPI_Reduce_scatter(sbuf, rbuf, v.counts, v.t, op, comm);
	vec_free(&v);
	return rc;
}

int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
			  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, MPI_INFO_NULL,
				NULL, BLOCKING, "MPI_Reduce_scatter_c");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_c);

int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
			   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, MPI_INFO_NULL,
				request, NONBLOCKING, "MPI_Ireduce_scatter_c");
}
MPI_SHIM_ALIAS(MPI_Ireduce_scatter_c);

/* ------------------------------------------------------------------ */
/* Persistent (MPI_Bcast_init_c ... MPI_Exscan_init_c)                 */
/* ------------------------------------------------------------------ */

/* The int _init form holds the datatypes (those made here too) and copies
 * the arrays: they are released here once it has them. */

int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
		      MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return bcast_c(buffer, count, datatype, root, comm, info, request, PERSISTENT,
		       "MPI_Bcast_init_c");
}
MPI_SHIM_ALIAS(MPI_Bcast_init_c);

int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
		       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
		       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(PERSISTENT, info, request, root);

	return two_c(COLL_GATHER, &a, sendcount, recvcount, "MPI_Gather_init_c");
}
MPI_SHIM_ALIAS(MPI_Gather_init_c);

int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
			void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
			MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
			 comm, info, request, PERSISTENT, "MPI_Gatherv_init_c");
}
MPI_SHIM_ALIAS(MPI_Gatherv_init_c);

int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
			void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
			MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(PERSISTENT, info, request, root);

	return two_c(COLL_SCATTER, &a, sendcount, recvcount, "MPI_Scatter_init_c");
}
MPI_SHIM_ALIAS(MPI_Scatter_init_c);

int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
			 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
			 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			 MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
			  comm, info, request, PERSISTENT, "MPI_Scatterv_init_c");
}
MPI_SHIM_ALIAS(MPI_Scatterv_init_c);

int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
			  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			  MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(PERSISTENT, info, request, 0);

	return two_c(COLL_ALLGATHER, &a, sendcount, recvcount, "MPI_Allgather_init_c");
}
MPI_SHIM_ALIAS(MPI_Allgather_init_c);

int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
			   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
			   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			   MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
			    comm, info, request, PERSISTENT, "MPI_Allgatherv_init_c");
}
MPI_SHIM_ALIAS(MPI_Allgatherv_init_c);

int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
			 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			 MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct two a = TWO_ARGS(PERSISTENT, info, request, 0);

	return two_c(COLL_ALLTOALL, &a, sendcount, recvcount, "MPI_Alltoall_init_c");
}
MPI_SHIM_ALIAS(MPI_Alltoall_init_c);

int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
			  const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
			  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
			  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
			   recvtype, comm, info, request, PERSISTENT, "MPI_Alltoallv_init_c");
}
MPI_SHIM_ALIAS(MPI_Alltoallv_init_c);

int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
			  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
			  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
			  const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
			  MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
			   recvtypes, comm, info, request, PERSISTENT, "MPI_Alltoallw_init_c");
}
MPI_SHIM_ALIAS(MPI_Alltoallw_init_c);

int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(PERSISTENT, info, request, root);

	return red_c(COLL_REDUCE, &a, count, "MPI_Reduce_init_c");
}
MPI_SHIM_ALIAS(MPI_Reduce_init_c);

int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
			  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
			  MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(PERSISTENT, info, request, 0);

	return red_c(COLL_ALLREDUCE, &a, count, "MPI_Allreduce_init_c");
}
MPI_SHIM_ALIAS(MPI_Allreduce_init_c);

int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
			       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
			       MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request,
				PERSISTENT, "MPI_Reduce_scatter_init_c");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_init_c);

int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
				     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
				     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(PERSISTENT, info, request, 0);

	return red_c(COLL_REDUCE_SCATTER_BLOCK, &a, recvcount, "MPI_Reduce_scatter_block_init_c");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_block_init_c);

int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(PERSISTENT, info, request, 0);

	return red_c(COLL_SCAN, &a, count, "MPI_Scan_init_c");
}
MPI_SHIM_ALIAS(MPI_Scan_init_c);

int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
		       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	struct red a = RED_ARGS(PERSISTENT, info, request, 0);

	return red_c(COLL_EXSCAN, &a, count, "MPI_Exscan_init_c");
}
MPI_SHIM_ALIAS(MPI_Exscan_init_c);

/* ------------------------------------------------------------------ */
/* Reduce_local                                                        */
/* ------------------------------------------------------------------ */

/* Beyond INT_MAX the vector is reduced at once (a user function of
 * MPI_Op_create gets it INT_MAX elements at a time). */
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
			MPI_Op op)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Reduce_local_c";
	size_t bytes, extent;
	int rc;

	if (count <= INT_MAX)
		return PMPI_Reduce_local(inbuf, inoutbuf, int_of(count), datatype, op);
	if ((rc = mpi_shim_check_init(call)) ||
	    (rc = mpi_shim_check_type(MPI_COMM_NULL, datatype, call)) ||
	    (rc = mpi_shim_check_op(MPI_COMM_NULL, op, datatype, call)))
		return rc;
	extent = (size_t)(datatype->extent < 0 ? -datatype->extent : datatype->extent);
	if (__builtin_mul_overflow((size_t)count, datatype->size, &bytes) ||
	    __builtin_mul_overflow((size_t)count, extent, &bytes))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call,
				    "count %lld times the datatype's size or extent overflows the "
				    "byte count",
				    count);
	if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed here");
	if ((!inbuf || !inoutbuf) && datatype->size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_BUFFER, call,
				    "the %s buffer is NULL and count is %lld",
				    !inbuf ? "input" : "input-output", count);
	mpi_shim_op_apply(op, inbuf, inoutbuf, (size_t)count, datatype);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Reduce_local_c);
