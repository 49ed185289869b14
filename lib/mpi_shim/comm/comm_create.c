/* SPDX-License-Identifier: MIT */
/*
 * comm_create.c - communicators made by part of their parent, or in the
 * background: MPI_Comm_create_group, MPI_Comm_idup, MPI_Comm_idup_with_info.
 *
 * MPI_Comm_create_group is collective over the group only: its members
 * agree on a context id (the largest of their next_ctx, as comm.c does)
 * through messages on the parent's collective context, with a negative tag
 * made from the program's tag, so that groups creating communicators at the
 * same time from one parent do not mix.
 *
 * MPI_Comm_idup returns at once and agrees on the context in the
 * background, driven by progress like a non-blocking collective, on a tag
 * of its own (the parent's next collective sequence number, taken at the
 * call, so it cannot meet a collective's messages).  The agreement is not
 * atomic any more: between proposing its next_ctx and learning the largest
 * proposal, a member may have used that id for a communicator made in the
 * meantime.  So there are two rounds, each an allreduce (a binomial reduce
 * to rank 0, then a broadcast):
 *
 *  1. propose: the largest next_ctx of the members is the candidate M;
 *  2. verify: each member checks that M is still unused there (M is not
 *     below its next_ctx: every id in use or reserved is below it) and, if
 *     so, reserves it at once (next_ctx = M + 2); the round's result is
 *     whether every member could.
 *
 * If one could not, the candidate is dropped (those who reserved it lose
 * two ids) and both rounds run again from the members' new next_ctx.  Then
 * the communicator is made, with the parent's topology, attributes and
 * hints (or the info's).  Its handle is given at the call (a Fortran
 * program converts it then), and is usable once the request completes.
 *
 * Of an inter-communicator, the members of both groups agree, and the
 * copy takes four ids (intercomm.c).  Each allreduce is then: a reduce
 * within the local group (on `local', intercomm.c) to its rank 0, an
 * exchange between the two ranks 0 through the inter-communicator, and a
 * broadcast within the local group.  Of the two leaders, the one of the
 * lower world rank sends first.
 */
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "engine.h"
#include "coll.h"

/* --- MPI_Comm_create_group --- */

/* The rank in comm of each member of group; -1 if one is not in comm. */
static int group_ranks(MPI_Comm comm, MPI_Group group, int *ranks)
{
	int i, j;

	for (i = 0; i < group->size; i++) {
		for (j = 0; j < comm->size && comm->world[j] != group->world[i]; j++)
			;
		if (j == comm->size)
			return -1;
		ranks[i] = j;
	}
	return 0;
}

/* The largest next_ctx of the members of group (ranks in comm), then known
 * to all of them: a binomial tree over the group's ranks. */
static int group_max_ctx(MPI_Comm comm, MPI_Group group, const int *ranks, int tag,
			 uint32_t *ctx_p)
{
	int r = group->rank, n = group->size, mask, rc;
	uint32_t v = mpi_shim.next_ctx, x;

	for (mask = 1; mask < n; mask <<= 1) {
		if (r & mask) {
			rc = mpi_shim_coll_send(&v, sizeof(v), MPI_BYTE, ranks[r - mask], tag, comm);
			if (rc)
				return rc;
			break;
		}
		if (r + mask < n) {
			rc = mpi_shim_coll_recv(&x, sizeof(x), MPI_BYTE, ranks[r + mask], tag, comm,
						MPI_STATUS_IGNORE);
			if (rc)
				return rc;
			if (x > v)
				v = x;
		}
	}
	/* Back down the same tree. */
	if (r) {
		rc = mpi_shim_coll_recv(&v, sizeof(v), MPI_BYTE, ranks[r - (r & -r)], tag, comm,
					MPI_STATUS_IGNORE);
		if (rc)
			return rc;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if ((r & (2 * mask - 1)) == 0 && r + mask < n) {
			rc = mpi_shim_coll_send(&v, sizeof(v), MPI_BYTE, ranks[r + mask], tag, comm);
			if (rc)
				return rc;
		}
	}
	*ctx_p = v;
	return MPI_SUCCESS;
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_create_group";
	int *ranks, *world, rc;
	uint32_t ctx;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (!newcomm)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the result pointer is NULL");
	if (mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "an inter-communicator is not allowed");
	if (!group || group->refcount <= 0)
		return mpi_shim_err(comm, MPI_ERR_GROUP, call, "invalid group (%s)",
				    group ? "freed" : "MPI_GROUP_NULL");
	if (tag < 0)
		return mpi_shim_err(comm, MPI_ERR_TAG, call, "tag %d is negative", tag);
	ranks = malloc((size_t)(group->size ? group->size : 1) * sizeof(*ranks));
	if (!ranks)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	if (group_ranks(comm, group, ranks)) {
		free(ranks);
		return mpi_shim_err(comm, MPI_ERR_GROUP, call,
				    "a member of the group is not in the communicator");
	}
	if (group->rank == MPI_UNDEFINED) {
		/* Not a member: nothing to take part in. */
		free(ranks);
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	rc = group_max_ctx(comm, group, ranks, MPI_SHIM_TAG_COMM_CREATE - 1 - (tag & 0x3fffffff),
			   &ctx);
	free(ranks);
	if (rc)
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	mpi_shim.next_ctx = ctx + 2;
	world = malloc((size_t)group->size * sizeof(*world));
	if (!world)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	memcpy(world, group->world, (size_t)group->size * sizeof(*world));
	if ((rc = mpi_shim_comm_new(comm, group->size, world, group->rank, ctx, newcomm)))
		return mpi_shim_err(comm, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_create_group);

/* --- MPI_Comm_idup --- */

#define IDUP_MAX_STEPS 70 /* 2 per bit of a rank, and some */

struct idup_step {
	int peer;
	int recv;    /* receive, else send */
	int combine; /* a receive of the way up: combine, not replace */
	int across;  /* between the leaders of an inter-communicator's groups */
};

struct idup {
	MPI_Comm parent;
	struct mpi_shim_comm *c; /* the new communicator, set up at the end */
	int made;
	MPI_Info info;     /* MPI_Comm_idup_with_info: a copy of its info */
	int with_info;
	int tag;
	int verifying;     /* round 2 */
	uint32_t val[2];   /* this member's view: the largest context, all ok */
	uint32_t in[2];
	int nsteps, step;
	MPI_Request req;
	struct idup_step steps[IDUP_MAX_STEPS];
};

static void idup_add(struct idup *d, int peer, int recv, int combine, int across)
{
	d->steps[d->nsteps++] = (struct idup_step){ peer, recv, combine, across };
}

static void idup_plan(struct idup *d)
{
	MPI_Comm p = d->parent;
	int r = p->rank, n = p->size, mask;

	d->nsteps = d->step = 0;
	for (mask = 1; mask < n; mask <<= 1) {
		if (r & mask) {
			idup_add(d, r - mask, 0, 0, 0);
			break;
		}
		if (r + mask < n)
			idup_add(d, r + mask, 1, 1, 0);
	}
	if (r == 0 && mpi_shim_is_inter(p)) {
		int first = p->world[0] < p->peer_world[0];

		idup_add(d, 0, !first, !first, 1);
		idup_add(d, 0, first, first, 1);
	}
	if (r)
		idup_add(d, r - (r & -r), 1, 0, 0);
	for (mask >>= 1; mask > 0; mask >>= 1)
		if ((r & (2 * mask - 1)) == 0 && r + mask < n)
			idup_add(d, r + mask, 0, 0, 0);
}

static int idup_start_step(struct idup *d)
{
	const struct idup_step *st = &d->steps[d->step];
	MPI_Comm on = mpi_shim_is_inter(d->parent) && !st->across ? d->parent->local : d->parent;

	if (st->recv)
		return mpi_shim_coll_irecv(st->combine ? d->in : d->val, sizeof(d->val), MPI_BYTE,
					   st->peer, d->tag, on, &d->req);
	return mpi_shim_coll_isend(d->val, sizeof(d->val), MPI_BYTE, st->peer, d->tag, on,
				   &d->req);
}

static void idup_round(struct idup *d, uint32_t ctx, uint32_t ok)
{
	d->val[0] = ctx;
	d->val[1] = ok;
	idup_plan(d);
}

/*
 * The agreed context: make the communicator.  What the program set on the
 * pending handle meanwhile (error handler, name, attributes) is kept across
 * the set-up, which clears the structure, and stays the communicator's:
 * the parent's attributes are copied after, except those of keys it set.
 */
static int idup_finish(struct idup *d)
{
	MPI_Comm parent = d->parent, c = d->c;
	struct mpi_shim_errhandler *eh = c->errhandler;
	struct mpi_shim_attr *attrs = c->attrs;
	char name[MPI_MAX_OBJECT_NAME];
	int *world, rc;

	memcpy(name, c->name, sizeof(name));
	if (mpi_shim_is_inter(parent)) {
		rc = mpi_shim_intercomm_init_dup(c, parent, d->val[0]);
	} else {
		world = malloc((size_t)parent->size * sizeof(*world));
		if (!world)
			return MPI_ERR_NO_MEM;
		memcpy(world, parent->world, (size_t)parent->size * sizeof(*world));
		rc = mpi_shim_comm_init(c, parent, parent->size, world, parent->rank, d->val[0]);
	}
	if (rc) {
		/* Not set up: still the pending handle, which idup_free releases. */
		c->pending = 1;
		c->errhandler = eh;
		c->attrs = attrs;
		return rc;
	}
	d->made = 1;
	mpi_shim_errhandler_release(c->errhandler); /* the parent's, taken by the set-up */
	c->errhandler = eh;
	c->attrs = attrs;
	memcpy(c->name, name, sizeof(name));
	if ((rc = mpi_shim_topo_copy(parent, c)) || (rc = mpi_shim_attr_copy_all(parent, c)) ||
	    (rc = d->with_info ? mpi_shim_comm_hints_set(c, d->info) :
				 mpi_shim_comm_hints_copy(parent, c))) {
		/* Unusable: the program's handle stays, invalid. */
		c->valid = 0;
		return rc;
	}
	return MPI_SUCCESS;
}

static int idup_progress(struct mpi_shim_request *req)
{
	struct idup *d = req->state;
	int rc;

	for (;;) {
		if (d->req != MPI_REQUEST_NULL) {
			if (!mpi_shim_request_test(d->req))
				return 0;
			rc = mpi_shim_request_wait(&d->req, MPI_STATUS_IGNORE);
			d->req = MPI_REQUEST_NULL;
			if (rc)
				return -rc;
			if (d->steps[d->step].combine) {
				if (d->in[0] > d->val[0])
					d->val[0] = d->in[0];
				if (d->in[1] < d->val[1])
					d->val[1] = d->in[1];
			}
			d->step++;
		}
		if (d->step < d->nsteps) {
			if ((rc = idup_start_step(d)))
				return -rc;
			continue;
		}
		if (!d->verifying) {
			/* The candidate: still unused here?  Then it is ours. */
			uint32_t m = d->val[0];
			uint32_t ok = m >= mpi_shim.next_ctx;

			if (ok)
				mpi_shim.next_ctx = m + (mpi_shim_is_inter(d->parent) ? 4 : 2);
			d->verifying = 1;
			idup_round(d, m, ok);
			continue;
		}
		if (d->val[1]) {
			rc = idup_finish(d);
			return rc ? -rc : 1;
		}
		/* Someone had used it meanwhile: again, from where we are. */
		d->verifying = 0;
		idup_round(d, mpi_shim.next_ctx, 1);
	}
}

static void idup_free(struct mpi_shim_request *req)
{
	struct idup *d = req->state;

	if (d->info != MPI_INFO_NULL)
		PMPI_Info_free(&d->info);
	if (!d->made) {
		/* Never set up: the program's handle is not valid, and what it
		 * set on it is released. */
		(void)mpi_shim_attr_delete_all(d->c);
		mpi_shim_errhandler_release(d->c->errhandler);
		free(d->c);
	}
	free(d);
	req->state = NULL;
}

static const struct mpi_shim_req_ops idup_ops = {
	.progress = idup_progress,
	.release = idup_free,
};

static int idup(MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm,
		MPI_Request *request, const char *call)
{
	struct idup *d;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (with_info && (rc = mpi_shim_info_check(comm, info, call)))
		return rc;
	if (!newcomm || !request)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "%s is NULL",
				    newcomm ? "the request pointer" : "the result pointer");
	d = calloc(1, sizeof(*d));
	if (d)
		d->c = calloc(1, sizeof(*d->c)); /* not valid until set up */
	if (!d || !d->c) {
		free(d);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	}
	/* Pending: it takes an error handler, a name and attributes, and has
	 * the parent's handler until the program sets another. */
	d->c->pending = 1;
	d->c->errhandler = comm->errhandler;
	if (!comm->errhandler->predefined)
		comm->errhandler->refcount++;
	d->parent = comm;
	d->req = MPI_REQUEST_NULL;
	d->with_info = with_info;
	d->info = MPI_INFO_NULL;
	if (with_info && info != MPI_INFO_NULL && (rc = PMPI_Info_dup(info, &d->info))) {
		mpi_shim_errhandler_release(d->c->errhandler);
		free(d->c);
		free(d);
		return rc;
	}
	/* The tag of a collective started now. */
	d->tag = coll_next_tag(comm);
	idup_round(d, mpi_shim.next_ctx, 1);
	*newcomm = d->c;
	rc = mpi_shim_request_progress_new(comm, &idup_ops, d, request);
	if (rc) {
		idup_free(&(struct mpi_shim_request){ .state = d });
		*newcomm = MPI_COMM_NULL;
		return mpi_shim_err(comm, rc, call, "no memory for a request");
	}
	mpi_shim_progress_step(*request);
	return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return idup(comm, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup");
}
MPI_SHIM_ALIAS(MPI_Comm_idup);

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
			     MPI_Request *request)
{
	MPI_SHIM_ENTER();
	return idup(comm, info, 1, newcomm, request, "MPI_Comm_idup_with_info");
}
MPI_SHIM_ALIAS(MPI_Comm_idup_with_info);
