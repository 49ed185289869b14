/* SPDX-License-Identifier: MIT */
/*
 * env.c - the shim's global state (struct mpi_shim_state, the predefined
 * communicators and the empty group), the hosts of the job, the clock,
 * the processor name, the versions, MPI_Alloc_mem and MPI_Free_mem.
 *
 * This is the bottom of the shim: it calls no other chapter, and every
 * chapter may use it.  MPI_Init and MPI_Finalize (init/init.c) fill and
 * empty what is here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"
#include "shim.h"

struct mpi_shim_state mpi_shim;

struct mpi_shim_comm mpi_shim_comm_world, mpi_shim_comm_self;
struct mpi_shim_group mpi_shim_group_empty = {
	.refcount = 1,
	.predefined = 1,
	.size = 0,
	.rank = MPI_UNDEFINED,
};

static struct {
	struct timespec t0;
	const char **hosts;
} env;

static int *host_index;
static int host_me;

/*
 * Host index of each node, numbered in the order hosts first appear.
 * Same host is BIP's notion (bip_layer_same_host), the one that picks the
 * shm driver: the same name, or two names of this machine ("localhost"
 * and its own name).  Asking only "on my host?" per node keeps it to one
 * question per node; the other nodes are told apart by name, which is
 * all BIP can say about them.  A node that joined the job (at or above
 * bip_numnodes) is looked at again each time: BIP learns its host from
 * bipload when first asked (bip_layer_host), and until it has joined its
 * entry names where nodes join by default.
 */
int mpi_shim_hosts_init(int n, int me)
{
	unsigned char *mine;
	int i, j, rc = -1;

	host_index = malloc((size_t)n * sizeof(*host_index));
	env.hosts = malloc((size_t)n * sizeof(*env.hosts));
	mine = malloc((size_t)n);
	if (!host_index || !env.hosts || !mine)
		goto out;
	/* Nodes that may join later are not asked about now (that would ask
	 * bipload about each): mpi_shim_host_of looks at them when they are
	 * members of a communicator. */
	for (i = 0; i < n; i++)
		mine[i] = (i < bip_numnodes || i == me) && bip_layer_same_host(me, i) == 1;
	mpi_shim.nhosts = 0;
	host_me = me;
	for (i = 0; i < n; i++) {
		const char *h;

		if (i >= bip_numnodes && i != me) {
			host_index[i] = -1;
			continue;
		}
		h = bip_layer_host(i);
		for (j = 0; j < i; j++)
			if (host_index[j] >= 0 &&
			    (mine[i] ? mine[j] : !mine[j] && !strcmp(bip_layer_host(j), h)))
				break;
		if (j == i)
			env.hosts[host_index[i] = mpi_shim.nhosts++] = h;
		else
			host_index[i] = host_index[j];
	}
	mpi_shim.hostnames = env.hosts;
	rc = 0;
out:
	free(mine);
	return rc;
}

void mpi_shim_hosts_fini(void)
{
	free(host_index);
	host_index = NULL;
	free(env.hosts);
	env.hosts = NULL;
}

/* MPI_Wtime counts from here. */
void mpi_shim_clock_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &env.t0);
}

double PMPI_Wtime(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - env.t0.tv_sec) + (double)(t.tv_nsec - env.t0.tv_nsec) * 1e-9;
}
MPI_SHIM_ALIAS(MPI_Wtime);

double PMPI_Wtick(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC, &res) < 0)
		return 1e-9;
	return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}
MPI_SHIM_ALIAS(MPI_Wtick);

int PMPI_Get_processor_name(char *name, int *resultlen)
{
	MPI_SHIM_ENTER();
	struct utsname u;

	if (!name || !resultlen)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_processor_name",
				    "name or resultlen is NULL");
	if (uname(&u) < 0)
		strcpy(u.nodename, "unknown");
	snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", u.nodename);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_processor_name);

int PMPI_Get_version(int *version, int *subversion)
{
	MPI_SHIM_ENTER();
	if (!version || !subversion)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_version",
				    "version or subversion is NULL");
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_version);

int PMPI_Get_library_version(char *version, int *resultlen)
{
	MPI_SHIM_ENTER();
	int n;

	if (!version || !resultlen)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_library_version",
				    "version or resultlen is NULL");
	n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
		     "MPI shim %d.%d over BIP %d.%d: MPI %d.%d point-to-point, collectives, "
		     "groups, communicators, datatypes; thread level %s; see mpi_shim(7)",
		     MPI_SHIM_VERSION_MAJOR, MPI_SHIM_VERSION_MINOR, BIP_VERSION_MAJOR,
		     BIP_VERSION_MINOR, MPI_VERSION, MPI_SUBVERSION, "MPI_THREAD_SERIALIZED");
	*resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_library_version);

int PMPI_Pcontrol(const int level, ...)
{
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Pcontrol);

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	MPI_SHIM_ENTER();
	void *p;

	if (size < 0 || !baseptr)
		return mpi_shim_err(MPI_COMM_WORLD, size < 0 ? MPI_ERR_SIZE : MPI_ERR_ARG,
				    "MPI_Alloc_mem", "size %ld, baseptr %p", (long)size, baseptr);
	p = malloc(size ? (size_t)size : 1);
	if (!p)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem",
				    "cannot allocate %ld bytes", (long)size);
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Alloc_mem);

int PMPI_Free_mem(void *base)
{
	MPI_SHIM_ENTER();
	free(base);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Free_mem);

/* The host index of a node that joined, by the rule of mpi_shim_hosts_init:
 * there are as many slots for hosts as nodes, so a new name has room. */
static int joined_host(int node)
{
	const char *h;
	int j;

	if (bip_layer_same_host(host_me, node) == 1)
		return host_index[host_me];
	h = bip_layer_host(node);
	for (j = 0; j < mpi_shim.nhosts; j++)
		if (j != host_index[host_me] && !strcmp(env.hosts[j], h))
			return j;
	env.hosts[mpi_shim.nhosts] = h;
	return mpi_shim.nhosts++;
}

/* The host index of a world rank (MPI_Comm_split_type). */
int mpi_shim_host_of(int world_rank)
{
	if (world_rank >= bip_numnodes && world_rank != host_me)
		host_index[world_rank] = joined_host(world_rank);
	return host_index[world_rank];
}
