/* SPDX-License-Identifier: MIT */
/*
 * comm.c - communicators: dup, dup_with_info, split, split_type, create,
 * free, compare.
 *
 * A new communicator needs a context id that every member agrees on and
 * that none of them uses yet: each process keeps the lowest id it has not
 * used (mpi_shim.next_ctx), and the members take the largest of theirs.
 * The exchange runs on the parent's collective context with negative tags,
 * which the collectives never use.  Processes that are not members of the
 * new communicator still advance, which keeps the ids unique.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "p2p.h"

#define TAG MPI_SHIM_TAG_COMM_CREATE

/* The largest next_ctx of the members of c, then known to all of them. */
static int agree_ctx(MPI_Comm c, uint32_t *ctx_p)
{
	int rc = mpi_shim_comm_max_ctx(c, ctx_p);

	if (!rc)
		mpi_shim.next_ctx = *ctx_p + 2;
	return rc;
}

static int check_out(MPI_Comm comm, void *p, const char *call)
{
	if (!p)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the result pointer is NULL");
	return MPI_SUCCESS;
}

/* --- the calls --- */

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_rank")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_rank")) ||
	    (rc = check_out(comm, rank, "MPI_Comm_rank")))
		return rc;
	*rank = comm->rank;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_size")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_size")) ||
	    (rc = check_out(comm, size, "MPI_Comm_size")))
		return rc;
	*size = comm->size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_size);

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_dup";
	uint32_t ctx;
	int *world, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = check_out(comm, newcomm, call)))
		return rc;
	if (mpi_shim_is_inter(comm))
		return mpi_shim_intercomm_dup(comm, newcomm, call);
	if ((rc = agree_ctx(comm, &ctx)))
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	world = malloc((size_t)comm->size * sizeof(*world));
	if (!world)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	memcpy(world, comm->world, (size_t)comm->size * sizeof(*world));
	if ((rc = mpi_shim_comm_new(comm, comm->size, world, comm->rank, ctx, newcomm)))
		return mpi_shim_err(comm, rc, call, "no memory");
	/* The topology (topo.c), the attributes and the hints. */
	if ((rc = mpi_shim_topo_copy(comm, *newcomm)) ||
	    (rc = mpi_shim_attr_copy_all(comm, *newcomm)) ||
	    (rc = mpi_shim_comm_hints_copy(comm, *newcomm))) {
		mpi_shim_comm_fini(*newcomm);
		free(*newcomm);
		*newcomm = MPI_COMM_NULL;
		return mpi_shim_err(comm, rc, call,
				    "copying the topology, an attribute or the hints failed");
	}
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_dup);

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_dup_with_info";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = mpi_shim_info_check(comm, info, call)))
		return rc;
	if ((rc = PMPI_Comm_dup(comm, newcomm)))
		return rc;
	/* The hints are those of info, not comm's. */
	if ((rc = mpi_shim_comm_hints_set(*newcomm, info))) {
		PMPI_Comm_free(newcomm);
		return mpi_shim_err(comm, rc, call, "no memory");
	}
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_dup_with_info);

struct split_entry {
	int color, key, rank;
	uint32_t ctx;
};

static int by_key(const void *a, const void *b)
{
	const struct split_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank - y->rank;
}

/* MPI_Comm_split and MPI_Comm_split_type. */
static int split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call)
{
	struct split_entry mine = { color, key, comm->rank, mpi_shim.next_ctx };
	struct split_entry *all;
	uint32_t ctx = 0;
	int n = comm->size, i, m, me = -1, rc;
	int *world;

	if (color < 0 && color != MPI_UNDEFINED)
		return mpi_shim_err(comm, MPI_ERR_ARG, call,
				    "color %d is negative (and not MPI_UNDEFINED)", color);
	if (mpi_shim_is_inter(comm))
		return mpi_shim_intercomm_split(comm, color, key, newcomm, call);
	all = malloc((size_t)n * sizeof(*all));
	if (!all)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	/* Everyone's (color, key, next context) to rank 0, and back. */
	if (comm->rank == 0) {
		all[0] = mine;
		for (i = 1; i < n; i++) {
			rc = mpi_shim_coll_recv(&all[i], (int)sizeof(*all), MPI_BYTE, i, TAG, comm,
						MPI_STATUS_IGNORE);
			if (rc)
				goto failed;
		}
	} else {
		rc = mpi_shim_coll_send(&mine, (int)sizeof(mine), MPI_BYTE, 0, TAG, comm);
		if (rc)
			goto failed;
	}
	rc = mpi_shim_comm_bcast0(comm, all, n * (int)sizeof(*all));
	if (rc)
		goto failed;
	for (i = 0; i < n; i++)
		if (all[i].ctx > ctx)
			ctx = all[i].ctx;
	mpi_shim.next_ctx = ctx + 2;
	if (color == MPI_UNDEFINED) {
		free(all);
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	/* The members of my color, ordered by key then by rank. */
	for (i = m = 0; i < n; i++)
		if (all[i].color == color)
			all[m++] = all[i];
	qsort(all, (size_t)m, sizeof(*all), by_key);
	world = malloc((size_t)m * sizeof(*world));
	if (!world) {
		rc = MPI_ERR_NO_MEM;
		goto failed;
	}
	for (i = 0; i < m; i++) {
		world[i] = comm->world[all[i].rank];
		if (all[i].rank == comm->rank)
			me = i;
	}
	free(all);
	rc = mpi_shim_comm_new(comm, m, world, me, ctx, newcomm);
	if (rc)
		return mpi_shim_err(comm, rc, call, "no memory");
	return MPI_SUCCESS;

failed:
	free(all);
	return mpi_shim_err(comm, rc, call, "exchanging colors and keys failed");
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_split")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_split")) ||
	    (rc = check_out(comm, newcomm, "MPI_Comm_split")))
		return rc;
	return split(comm, color, key, newcomm, "MPI_Comm_split");
}
MPI_SHIM_ALIAS(MPI_Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
			 MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_split_type";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = check_out(comm, newcomm, call)))
		return rc;
	if (split_type != MPI_COMM_TYPE_SHARED && split_type != BIP_COMM_TYPE_CLUSTER &&
	    split_type != MPI_UNDEFINED)
		return mpi_shim_err(comm, MPI_ERR_ARG, call,
				    "split type %d is not MPI_COMM_TYPE_SHARED (%d), "
				    "BIP_COMM_TYPE_CLUSTER (%d) nor MPI_UNDEFINED", split_type,
				    MPI_COMM_TYPE_SHARED, BIP_COMM_TYPE_CLUSTER);
	if (split_type == MPI_UNDEFINED)
		return split(comm, MPI_UNDEFINED, key, newcomm, call);
	/* The processes of one cluster: its index in the configuration. */
	if (split_type == BIP_COMM_TYPE_CLUSTER)
		return split(comm, bip_layer_cluster(comm->world[comm->rank]), key, newcomm, call);
	/* The processes on one host: the host index of the configuration. */
	return split(comm, comm->host[comm->rank], key, newcomm, call);
}
MPI_SHIM_ALIAS(MPI_Comm_split_type);

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_create";
	uint32_t ctx;
	int *world, i, j, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = check_out(comm, newcomm, call)))
		return rc;
	if (!group || group->refcount <= 0)
		return mpi_shim_err(comm, MPI_ERR_GROUP, call, "invalid group (%s)",
				    group ? "freed" : "MPI_GROUP_NULL");
	for (i = 0; i < group->size; i++) {
		for (j = 0; j < comm->size && comm->world[j] != group->world[i]; j++)
			;
		if (j == comm->size)
			return mpi_shim_err(comm, MPI_ERR_GROUP, call,
					    "member %d of the group (world rank %d) is not in the "
					    "communicator", i, group->world[i]);
	}
	/* Of an inter-communicator: the members of the group on each side,
	 * in the group's order (intercomm.c). */
	if (mpi_shim_is_inter(comm))
		return mpi_shim_intercomm_split(comm,
						group->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0,
						group->rank, newcomm, call);
	if ((rc = agree_ctx(comm, &ctx)))
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	if (group->rank == MPI_UNDEFINED) {
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	world = malloc((size_t)(group->size ? group->size : 1) * sizeof(*world));
	if (!world)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	memcpy(world, group->world, (size_t)group->size * sizeof(*world));
	if ((rc = mpi_shim_comm_new(comm, group->size, world, group->rank, ctx, newcomm)))
		return mpi_shim_err(comm, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_create);

int PMPI_Comm_free(MPI_Comm *comm)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_free")))
		return rc;
	if (!comm)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free",
				    "the communicator pointer is NULL");
	if ((rc = mpi_shim_check_comm(*comm, "MPI_Comm_free")))
		return rc;
	if ((*comm)->predefined)
		return mpi_shim_err(*comm, MPI_ERR_COMM, "MPI_Comm_free",
				    "%s cannot be freed", (*comm)->name);
	/* The handle is gone now (attributes deleted, as the standard says);
	 * what is still in flight on it completes, then the last request
	 * releases it.  A delete callback that fails makes the call fail,
	 * the communicator being freed all the same. */
	rc = mpi_shim_attr_delete_all(*comm);
	if (rc)
		rc = mpi_shim_err(*comm, rc, "MPI_Comm_free",
				  "an attribute delete callback failed (the communicator is "
				  "freed)");
	(*comm)->valid = 0;
	mpi_shim_comm_release(*comm);
	*comm = MPI_COMM_NULL;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Comm_free);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_compare";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm1, call)) ||
	    (rc = mpi_shim_check_comm(comm2, call)) || (rc = check_out(comm1, result, call)))
		return rc;
	if (comm1 == comm2) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (mpi_shim_is_inter(comm1) != mpi_shim_is_inter(comm2)) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	rc = PMPI_Group_compare(comm1->group, comm2->group, result);
	if (rc)
		return rc;
	if (mpi_shim_is_inter(comm1)) {
		/* Both groups count: the weaker of the two results. */
		int remote;

		rc = PMPI_Group_compare(comm1->remote_group, comm2->remote_group, &remote);
		if (rc)
			return rc;
		if (remote > *result)
			*result = remote;
	}
	if (*result == MPI_IDENT)
		*result = MPI_CONGRUENT;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_compare);

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_group")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_group")) ||
	    (rc = check_out(comm, group, "MPI_Comm_group")))
		return rc;
	comm->group->refcount++;
	*group = comm->group;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_group);

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_set_name")) ||
	    (rc = mpi_shim_check_comm_or_pending(comm, "MPI_Comm_set_name")) ||
	    (rc = check_out(comm, (void *)name, "MPI_Comm_set_name")))
		return rc;
	snprintf(comm->name, sizeof(comm->name), "%s", name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_get_name")) ||
	    (rc = mpi_shim_check_comm_or_pending(comm, "MPI_Comm_get_name")))
		return rc;
	if (!name || !resultlen)
		return mpi_shim_err(comm, MPI_ERR_ARG, "MPI_Comm_get_name",
				    "name or resultlen is NULL");
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_get_name);
