/* SPDX-License-Identifier: MIT */
/*
 * comm_object.c - the communicator object: its set-up from a list of
 * world ranks (host and cluster of each rank, group, error handler), its
 * reference count and its release, which frees all that hangs on it
 * (attributes, the collectives' state, topology, groups, hints).
 *
 * The object stands below point-to-point and the requests: a request or a
 * matched message (MPI_Mprobe) holds a reference on its communicator and
 * drops it with mpi_shim_comm_release.  Making a communicator that the
 * members agree on (a context id, the exchange of colors and keys) needs
 * point-to-point, and is comm.c's, intercomm.c's and comm_create.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"

/* The cluster of each rank, kept only when the ranks span several (the
 * collectives then go through each cluster's leader, coll.c). */
static int comm_clusters(struct mpi_shim_comm *c)
{
	const char *env = getenv("BIP_MPI_COLL_CLUSTERS");
	int i, first, several = 0;

	/* BIP_MPI_COLL_CLUSTERS=0: the collectives ignore the clusters. */
	if (env && !strcmp(env, "0"))
		return 0;
	first = bip_layer_cluster(c->world[0]);
	for (i = 1; i < c->size && !several; i++)
		several = bip_layer_cluster(c->world[i]) != first;
	if (!several)
		return 0;
	c->cluster = malloc((size_t)c->size * sizeof(*c->cluster));
	if (!c->cluster)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < c->size; i++)
		c->cluster[i] = bip_layer_cluster(c->world[i]);
	return 0;
}

static int setup(struct mpi_shim_comm *c, int size, int *world, int rank, uint32_t ctx,
		 int hosts)
{
	int i, rc;

	memset(c, 0, sizeof(*c));
	c->rank = rank;
	c->size = size;
	c->world = world;
	c->peer_world = world;
	c->peer_size = size;
	c->host = malloc((size_t)size * sizeof(*c->host));
	if (!c->host)
		goto no_memory;
	for (i = 0; i < size; i++)
		c->host[i] = hosts ? mpi_shim_host_of(world[i]) : -1;
	/* The channel of every node number (dpm/bridge.c), relays among them,
	 * has no collectives: neither hosts nor clusters. */
	rc = hosts ? comm_clusters(c) : 0;
	if (rc)
		goto no_memory;
	rc = mpi_shim_group_new(size, world, &c->group);
	if (rc)
		goto no_memory;
	c->ctx = ctx;
	c->coll_ctx = ctx + 1;
	c->errhandler = &mpi_shim_errors_are_fatal;
	c->refcount = 1;
	c->valid = 1;
	return MPI_SUCCESS;

no_memory:
	free(c->host);
	free(c->cluster);
	free(world);
	c->host = NULL;
	c->cluster = NULL;
	c->world = NULL;
	return MPI_ERR_NO_MEM;
}

int mpi_shim_comm_setup(struct mpi_shim_comm *c, int size, int *world, int rank, uint32_t ctx)
{
	return setup(c, size, world, rank, ctx, 1);
}

int mpi_shim_comm_setup_channel(struct mpi_shim_comm *c, int size, int *world, int rank,
				uint32_t ctx)
{
	return setup(c, size, world, rank, ctx, 0);
}

void mpi_shim_comm_fini(struct mpi_shim_comm *c)
{
	if (!c->world)
		return;
	(void)mpi_shim_attr_delete_all(c);
	if (c->coll_free)
		c->coll_free(c);
	c->coll_free = NULL;
	c->coll = NULL;
	mpi_shim_topo_free(c);
	mpi_shim_errhandler_release(c->errhandler);
	c->errhandler = NULL;
	if (c->group)
		mpi_shim_group_release(c->group);
	c->group = NULL;
	if (c->remote_group)
		mpi_shim_group_release(c->remote_group);
	c->remote_group = NULL;
	if (c->peer_world != c->world)
		free(c->peer_world);
	c->peer_world = NULL;
	if (c->local)
		mpi_shim_comm_release(c->local);
	c->local = NULL;
	free(c->world);
	free(c->host);
	free(c->cluster);
	c->world = NULL;
	c->host = NULL;
	c->cluster = NULL;
	mpi_shim_comm_hints_free(c);
	c->valid = 0;
}

void mpi_shim_comm_release(struct mpi_shim_comm *c)
{
	if (--c->refcount > 0 || c->predefined)
		return;
	mpi_shim_comm_fini(c);
	free(c);
}

/* A communicator of size members (world ranks), rank being this process,
 * with context ctx, inheriting what it inherits from parent. */
int mpi_shim_comm_init(struct mpi_shim_comm *c, MPI_Comm parent, int size, int *world, int rank,
		       uint32_t ctx)
{
	int rc = mpi_shim_comm_setup(c, size, world, rank, ctx);

	if (rc)
		return rc;
	c->errhandler = parent->errhandler;
	if (!c->errhandler->predefined)
		c->errhandler->refcount++;
	return MPI_SUCCESS;
}

int mpi_shim_comm_new(MPI_Comm parent, int size, int *world, int rank, uint32_t ctx,
		      MPI_Comm *newcomm)
{
	struct mpi_shim_comm *c = malloc(sizeof(*c));
	int rc;

	if (!c) {
		free(world);
		return MPI_ERR_NO_MEM;
	}
	rc = mpi_shim_comm_init(c, parent, size, world, rank, ctx);
	if (rc) {
		free(c);
		return rc;
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

/* A topology (topo.c) goes with its communicator. */
void mpi_shim_topo_free(struct mpi_shim_comm *c)
{
	free(c->topo);
	c->topo = NULL;
}
