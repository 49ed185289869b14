/* SPDX-License-Identifier: MIT */
/*
 * intercomm.c - inter-communicators: MPI_Intercomm_create,
 * MPI_Intercomm_merge, MPI_Comm_remote_size, MPI_Comm_remote_group,
 * MPI_Comm_test_inter, and MPI_Comm_dup of an inter-communicator.
 *
 * An inter-communicator is a communicator of its local group (rank, size,
 * world and group as in an intra-communicator) whose point-to-point ranks
 * name the processes of the remote group (peer_world, peer_size).  A
 * message carries the sender's rank in its own group, which is its rank in
 * the receiver's remote group, so matching is the same as in an
 * intra-communicator.
 *
 * Context ids: ctx and ctx + 1 for the inter-communicator (point-to-point,
 * collectives), ctx + 2 and ctx + 3 for `local', an intra-communicator of
 * the local group through which the collectives (coll_inter.c) combine the
 * members of one group.  ctx is the largest next_ctx of the members of both
 * groups: each group agrees on its own (mpi_shim_comm_max_ctx), the two
 * leaders exchange theirs, and each leader broadcasts the larger to its
 * group.  MPI_Intercomm_create's leaders exchange through the peer
 * communicator with the program's tag; the later calls through the
 * inter-communicator's own collective context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "p2p.h"

#define TAG MPI_SHIM_TAG_COMM_CREATE

/* What a leader tells its group: whether the call succeeds (an MPI error
 * class), the remote group's size, the context, and a value of the remote
 * group's (MPI_Intercomm_merge: its high). */
struct leader_news {
	int32_t err;
	int32_t rsize;
	uint32_t ctx;
	int32_t remote_arg;
};

static int *copy_ranks(const int *w, int n)
{
	int *c = malloc((size_t)(n ? n : 1) * sizeof(*c));

	if (c)
		memcpy(c, w, (size_t)n * sizeof(*c));
	return c;
}

/*
 * Sets up c as an inter-communicator of local group (size, world, rank),
 * with remote group (rsize, rworld), and context ctx (ctx to ctx + 3).
 * world and rworld are copied.  Error handler and name inherited from
 * parent.  On an error c holds nothing.
 */
static int inter_init(struct mpi_shim_comm *c, MPI_Comm parent, int size, const int *world,
		      int rank, int rsize, const int *rworld, uint32_t ctx)
{
	int *w = copy_ranks(world, size), *lw = copy_ranks(world, size);
	int *rw = copy_ranks(rworld, rsize);
	MPI_Comm local = MPI_COMM_NULL;
	int rc = MPI_ERR_NO_MEM, made = 0;

	if (!w || !lw || !rw) {
		free(w);
		free(lw);
		goto fail;
	}
	if ((rc = mpi_shim_comm_init(c, parent, size, w, rank, ctx))) {
		free(lw);
		goto fail;
	}
	made = 1;
	if ((rc = mpi_shim_comm_new(parent, size, lw, rank, ctx + 2, &local)) ||
	    (rc = mpi_shim_group_new(rsize, rworld, &c->remote_group)))
		goto fail;
	snprintf(local->name, sizeof(local->name), "the local group of an inter-communicator");
	c->peer_world = rw;
	c->peer_size = rsize;
	c->local = local;
	return MPI_SUCCESS;

fail:
	free(rw);
	if (local)
		mpi_shim_comm_release(local);
	if (made)
		mpi_shim_comm_fini(c);
	return rc;
}

int mpi_shim_intercomm_new(MPI_Comm parent, int size, const int *world, int rank, int rsize,
			   const int *rworld, uint32_t ctx, MPI_Comm *newcomm)
{
	struct mpi_shim_comm *c = malloc(sizeof(*c));
	int rc;

	if (!c)
		return MPI_ERR_NO_MEM;
	if ((rc = inter_init(c, parent, size, world, rank, rsize, rworld, ctx))) {
		free(c);
		return rc;
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

/* MPI_Comm_idup of an inter-communicator (comm_create.c): the copy of
 * comm's groups, on the agreed context. */
int mpi_shim_intercomm_init_dup(struct mpi_shim_comm *c, MPI_Comm comm, uint32_t ctx)
{
	return inter_init(c, comm, comm->size, comm->world, comm->rank, comm->peer_size,
			  comm->peer_world, ctx);
}

static int check_out(MPI_Comm comm, void *p, const char *call)
{
	if (!p)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the result pointer is NULL");
	return MPI_SUCCESS;
}

static int check_inter(MPI_Comm comm, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (!mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "%s is an intra-communicator; an inter-communicator is needed",
				    comm->name[0] ? comm->name : "the communicator");
	return MPI_SUCCESS;
}

/* --- MPI_Intercomm_create --- */

/* The leader's part: trade (size, context, world ranks) with the remote
 * leader through peer_comm; fills news and *rworld_p (malloc'ed). */
static int leaders_trade(MPI_Comm local_comm, MPI_Comm peer_comm, int remote_leader, int tag,
			 uint32_t ctx, struct leader_news *news, int **rworld_p)
{
	int32_t mine[2] = { local_comm->size, (int32_t)ctx }, theirs[2];
	int *rworld, i, j, rc;

	rc = PMPI_Sendrecv(mine, 2, MPI_INT, remote_leader, tag, theirs, 2, MPI_INT, remote_leader,
			   tag, peer_comm, MPI_STATUS_IGNORE);
	if (rc)
		return rc;
	if (theirs[0] <= 0 || theirs[0] > mpi_shim.world_size)
		return MPI_ERR_INTERN;
	rworld = malloc((size_t)theirs[0] * sizeof(*rworld));
	if (!rworld)
		return MPI_ERR_NO_MEM;
	rc = PMPI_Sendrecv(local_comm->world, local_comm->size, MPI_INT, remote_leader, tag, rworld,
			   theirs[0], MPI_INT, remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
	if (rc) {
		free(rworld);
		return rc;
	}
	news->err = MPI_SUCCESS;
	for (i = 0; i < theirs[0]; i++) {
		if (rworld[i] < 0 || rworld[i] >= mpi_shim.world_size)
			news->err = MPI_ERR_INTERN;
		for (j = 0; j < local_comm->size; j++)
			if (rworld[i] == local_comm->world[j])
				news->err = MPI_ERR_COMM;
	}
	news->rsize = theirs[0];
	news->ctx = (uint32_t)theirs[1] > ctx ? (uint32_t)theirs[1] : ctx;
	*rworld_p = rworld;
	return MPI_SUCCESS;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
			  int remote_leader, int tag, MPI_Comm *newintercomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Intercomm_create";
	struct leader_news news = { MPI_SUCCESS, 0, 0, 0 };
	int *rworld = NULL, rc;
	uint32_t ctx;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(local_comm, call)) ||
	    (rc = check_out(local_comm, newintercomm, call)))
		return rc;
	if (mpi_shim_is_inter(local_comm))
		return mpi_shim_err(local_comm, MPI_ERR_COMM, call,
				    "the local communicator is an inter-communicator");
	if (local_leader < 0 || local_leader >= local_comm->size)
		return mpi_shim_err(local_comm, MPI_ERR_RANK, call,
				    "local leader %d is not in the local communicator (size %d)",
				    local_leader, local_comm->size);
	if (tag < 0)
		return mpi_shim_err(local_comm, MPI_ERR_TAG, call, "tag %d is negative", tag);
	if ((rc = mpi_shim_comm_max_ctx(local_comm, &ctx)))
		return mpi_shim_err(local_comm, rc, call, "agreeing on a context failed");
	if (local_comm->rank == local_leader) {
		if (!mpi_shim_comm_ok(peer_comm))
			news.err = MPI_ERR_COMM;
		else if (remote_leader < 0 || remote_leader >= peer_comm->peer_size)
			news.err = MPI_ERR_RANK;
		else if (peer_comm->peer_world[remote_leader] == mpi_shim.world_rank)
			news.err = MPI_ERR_RANK;
		else if ((rc = leaders_trade(local_comm, peer_comm, remote_leader, tag, ctx, &news,
					     &rworld)))
			news.err = rc;
	}
	/* The leader's news, then the remote group's world ranks. */
	rc = PMPI_Bcast(&news, (int)sizeof(news), MPI_BYTE, local_leader, local_comm);
	if (!rc && !news.err) {
		if (local_comm->rank != local_leader) {
			rworld = malloc((size_t)news.rsize * sizeof(*rworld));
			if (!rworld)
				rc = MPI_ERR_NO_MEM;
		}
		if (!rc)
			rc = PMPI_Bcast(rworld, news.rsize, MPI_INT, local_leader, local_comm);
	}
	if (!rc && news.err)
		rc = news.err;
	if (!rc) {
		if (mpi_shim.next_ctx < news.ctx + 4)
			mpi_shim.next_ctx = news.ctx + 4;
		rc = mpi_shim_intercomm_new(local_comm, local_comm->size, local_comm->world,
					    local_comm->rank, news.rsize, rworld, news.ctx,
					    newintercomm);
	}
	free(rworld);
	if (rc)
		return mpi_shim_err(local_comm, rc, call,
				    rc == MPI_ERR_COMM ? "the two groups overlap" :
				    rc == MPI_ERR_RANK ? "the remote leader is not a rank of the peer "
							 "communicator, or is the local leader itself" :
							 "making the inter-communicator failed");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Intercomm_create);

/* --- agreement through an existing inter-communicator --- */

/*
 * The largest next_ctx of both groups of ic, and the remote group's arg:
 * each group agrees on its own, leaders (rank 0) trade, and each leader
 * broadcasts to its group.  next_ctx is not changed.
 */
static int inter_agree(MPI_Comm ic, int32_t arg, uint32_t *ctx_p, int32_t *remote_arg)
{
	struct leader_news news = { MPI_SUCCESS, ic->peer_size, 0, 0 };
	uint32_t mine[2], theirs[2];
	int rc;

	if ((rc = mpi_shim_comm_max_ctx(ic->local, &news.ctx)))
		return rc;
	if (ic->rank == 0) {
		mine[0] = news.ctx;
		mine[1] = (uint32_t)arg;
		rc = mpi_shim_coll_sendrecv(mine, sizeof(mine), MPI_BYTE, 0, TAG, theirs,
					    sizeof(theirs), MPI_BYTE, 0, TAG, ic, MPI_STATUS_IGNORE);
		if (rc)
			news.err = rc;
		if (theirs[0] > news.ctx)
			news.ctx = theirs[0];
		news.remote_arg = (int32_t)theirs[1];
	}
	rc = mpi_shim_comm_bcast0(ic->local, &news, (int)sizeof(news));
	if (rc)
		return rc;
	if (news.err)
		return news.err;
	*ctx_p = news.ctx;
	*remote_arg = news.remote_arg;
	return MPI_SUCCESS;
}

int mpi_shim_intercomm_dup(MPI_Comm comm, MPI_Comm *newcomm, const char *call)
{
	uint32_t ctx;
	int32_t unused;
	int rc;

	if ((rc = inter_agree(comm, 0, &ctx, &unused)))
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	if (mpi_shim.next_ctx < ctx + 4)
		mpi_shim.next_ctx = ctx + 4;
	if ((rc = mpi_shim_intercomm_new(comm, comm->size, comm->world, comm->rank,
					 comm->peer_size, comm->peer_world, ctx, newcomm)))
		return mpi_shim_err(comm, rc, call, "no memory");
	if ((rc = mpi_shim_attr_copy_all(comm, *newcomm)) ||
	    (rc = mpi_shim_comm_hints_copy(comm, *newcomm))) {
		mpi_shim_comm_release(*newcomm);
		*newcomm = MPI_COMM_NULL;
		return mpi_shim_err(comm, rc, call, "copying an attribute or the hints failed");
	}
	return MPI_SUCCESS;
}

/* --- MPI_Intercomm_merge --- */

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Intercomm_merge";
	int n, first, *world, rc;
	int32_t rhigh;
	uint32_t ctx;

	if ((rc = check_inter(intercomm, call)) ||
	    (rc = check_out(intercomm, newintracomm, call)))
		return rc;
	high = high != 0;
	if ((rc = inter_agree(intercomm, high, &ctx, &rhigh)))
		return mpi_shim_err(intercomm, rc, call, "agreeing on a context failed");
	if (mpi_shim.next_ctx < ctx + 2)
		mpi_shim.next_ctx = ctx + 2;
	/* The group that passed high = 0 comes first; when both passed the
	 * same, the one whose first member is first in MPI_COMM_WORLD. */
	if (high != rhigh)
		first = !high;
	else
		first = intercomm->world[0] < intercomm->peer_world[0];
	n = intercomm->size + intercomm->peer_size;
	world = malloc((size_t)n * sizeof(*world));
	if (!world)
		return mpi_shim_err(intercomm, MPI_ERR_NO_MEM, call, "no memory");
	if (first) {
		memcpy(world, intercomm->world, (size_t)intercomm->size * sizeof(*world));
		memcpy(world + intercomm->size, intercomm->peer_world,
		       (size_t)intercomm->peer_size * sizeof(*world));
	} else {
		memcpy(world, intercomm->peer_world, (size_t)intercomm->peer_size * sizeof(*world));
		memcpy(world + intercomm->peer_size, intercomm->world,
		       (size_t)intercomm->size * sizeof(*world));
	}
	rc = mpi_shim_comm_new(intercomm, n,
			       world, intercomm->rank + (first ? 0 : intercomm->peer_size), ctx,
			       newintracomm);
	if (rc)
		return mpi_shim_err(intercomm, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Intercomm_merge);

/* --- the remote group --- */

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_inter(comm, "MPI_Comm_remote_size")) ||
	    (rc = check_out(comm, size, "MPI_Comm_remote_size")))
		return rc;
	*size = comm->peer_size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_remote_size);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_inter(comm, "MPI_Comm_remote_group")) ||
	    (rc = check_out(comm, group, "MPI_Comm_remote_group")))
		return rc;
	comm->remote_group->refcount++;
	*group = comm->remote_group;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_remote_group);

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_test_inter")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_test_inter")) ||
	    (rc = check_out(comm, flag, "MPI_Comm_test_inter")))
		return rc;
	*flag = mpi_shim_is_inter(comm);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_test_inter);

/* --- MPI_Comm_split of an inter-communicator --- */

struct split_pick {
	int32_t color, key, rank;
};

static int by_key_rank(const void *a, const void *b)
{
	const struct split_pick *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank - y->rank;
}

/* The members of color in picks[n], ordered by key then rank: their world
 * ranks (from world[]) in out; how many.  The table came from other
 * processes: a rank out of range makes it -1. */
static int pick_color(struct split_pick *picks, int n, int color, const int *world, int *out)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (picks[i].rank < 0 || picks[i].rank >= n)
			return -1;
	qsort(picks, (size_t)n, sizeof(*picks), by_key_rank);
	for (i = 0; i < n; i++)
		if (picks[i].color == color)
			out[m++] = world[picks[i].rank];
	return m;
}

/*
 * Each group gathers its members' (color, key) at rank 0 and the two ranks 0
 * trade them, so that every process knows both groups' choices; one context
 * (agreed by both groups) serves every color, since the new
 * inter-communicators have no member in common.
 */
int mpi_shim_intercomm_split(MPI_Comm ic, int color, int key, MPI_Comm *newcomm, const char *call)
{
	struct split_pick mine = { color, key, ic->rank };
	struct split_pick *local = NULL, *remote = NULL;
	int n = ic->size, rn = ic->peer_size, i, rc, me = -1, m, rm;
	int *lw = NULL, *rw = NULL;
	int32_t unused;
	uint32_t ctx;

	if ((rc = inter_agree(ic, 0, &ctx, &unused)))
		return mpi_shim_err(ic, rc, call, "agreeing on a context failed");
	if (mpi_shim.next_ctx < ctx + 4)
		mpi_shim.next_ctx = ctx + 4;
	local = malloc((size_t)n * sizeof(*local));
	remote = malloc((size_t)rn * sizeof(*remote));
	lw = malloc((size_t)n * sizeof(*lw));
	rw = malloc((size_t)rn * sizeof(*rw));
	rc = !local || !remote || !lw || !rw ? MPI_ERR_NO_MEM : MPI_SUCCESS;
	/* Everyone takes part in the exchanges, even without memory. */
	if (ic->rank == 0) {
		if (local)
			local[0] = mine;
		for (i = 1; i < n; i++) {
			struct split_pick p;
			int r = mpi_shim_coll_recv(&p, sizeof(p), MPI_BYTE, i, TAG, ic->local,
						   MPI_STATUS_IGNORE);

			if (r)
				rc = r;
			else if (local)
				local[i] = p;
		}
		if (!rc)
			rc = mpi_shim_coll_sendrecv(local, (size_t)n * sizeof(*local), MPI_BYTE, 0,
						    TAG, remote, (size_t)rn * sizeof(*remote),
						    MPI_BYTE, 0, TAG, ic, MPI_STATUS_IGNORE);
	} else {
		int r = mpi_shim_coll_send(&mine, sizeof(mine), MPI_BYTE, 0, TAG, ic->local);

		if (r)
			rc = r;
	}
	{
		/* Rank 0's verdict first, then both tables. */
		int32_t verdict = rc;

		if (mpi_shim_comm_bcast0(ic->local, &verdict, (int)sizeof(verdict)))
			verdict = MPI_ERR_OTHER;
		rc = verdict ? verdict : rc;
	}
	if (!rc)
		rc = mpi_shim_comm_bcast0(ic->local, local, n * (int)sizeof(*local));
	if (!rc)
		rc = mpi_shim_comm_bcast0(ic->local, remote, rn * (int)sizeof(*remote));
	if (!rc && color != MPI_UNDEFINED) {
		m = pick_color(local, n, color, ic->world, lw);
		rm = pick_color(remote, rn, color, ic->peer_world, rw);
		for (i = 0; i < m; i++)
			if (lw[i] == mpi_shim.world_rank)
				me = i;
		*newcomm = MPI_COMM_NULL;
		if (m < 0 || rm < 0)
			rc = MPI_ERR_INTERN;
		else if (rm > 0 && me >= 0)
			rc = mpi_shim_intercomm_new(ic, m, lw, me, rm, rw, ctx, newcomm);
	} else if (!rc) {
		*newcomm = MPI_COMM_NULL;
	}
	free(local);
	free(remote);
	free(lw);
	free(rw);
	if (rc)
		return mpi_shim_err(ic, rc, call, "splitting the inter-communicator failed");
	return MPI_SUCCESS;
}
