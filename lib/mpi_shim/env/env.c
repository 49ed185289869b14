/* SPDX-License-Identifier: MIT */
/*
 * env.c - the environment: MPI_Init and MPI_Finalize, thread levels,
 * MPI_Abort, the clock, the processor name and the versions.
 *
 * MPI_Init starts BIP unless the program did (a program may mix BIP and
 * MPI calls), claims the shim's reserved tag and builds MPI_COMM_WORLD
 * (node i of the configuration is rank i) and MPI_COMM_SELF.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"
#include "engine.h"
#include "shim.h"
#include "p2p.h"

struct mpi_shim_state mpi_shim;

struct mpi_shim_comm mpi_shim_comm_world, mpi_shim_comm_self;
struct mpi_shim_group mpi_shim_group_empty = {
	.refcount = 1,
	.predefined = 1,
	.size = 0,
	.rank = MPI_UNDEFINED,
};

/* Every level: each call runs under BIP's lock once the process has
 * threads (shim.h), and lets go of it while it waits. */
#define PROVIDED_THREAD_LEVEL MPI_THREAD_MULTIPLE

static struct {
	int bip_started; /* MPI_Init started BIP, so MPI_Finalize ends it */
	pthread_t main_thread;
	struct timespec t0;
	const char **hosts;
} env;

static int *host_index;

static void env_fini_comms(void)
{
	mpi_shim_comm_fini(&mpi_shim_comm_self);
	mpi_shim_comm_fini(&mpi_shim_comm_world);
}

/*
 * Host index of each node, numbered in the order hosts first appear.
 * Same host is BIP's notion (bip_layer_same_host), the one that picks the
 * shm driver: the same name, or two names of this machine ("localhost"
 * and its own name).  Asking only "on my host?" per node keeps it to one
 * question per node; the other nodes are told apart by name, which is
 * all BIP can say about them.
 */
static int hosts_init(int n, int me)
{
	unsigned char *mine;
	int i, j, rc = -1;

	host_index = malloc((size_t)n * sizeof(*host_index));
	env.hosts = malloc((size_t)n * sizeof(*env.hosts));
	mine = malloc((size_t)n);
	if (!host_index || !env.hosts || !mine)
		goto out;
	for (i = 0; i < n; i++)
		mine[i] = bip_layer_same_host(me, i) == 1;
	mpi_shim.nhosts = 0;
	for (i = 0; i < n; i++) {
		const char *h = bip_layer_host(i);

		for (j = 0; j < i; j++)
			if (mine[i] ? mine[j] : !mine[j] && !strcmp(bip_layer_host(j), h))
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

static int init(int *argc, char ***argv, int required, int *provided, const char *call)
{
	int n, me, i, rc;
	int *world = NULL, *self = NULL;

	if (mpi_shim.initialized || mpi_shim.finalized) {
		/* Refused (returned under MPI_ERRORS_RETURN): provided still says
		 * the level in force, the one MPI_Query_thread reports, instead of
		 * being left as the caller had it. */
		if (provided && mpi_shim.initialized && !mpi_shim.finalized)
			*provided = mpi_shim.thread_level;
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call, "%s",
				    mpi_shim.finalized ? "MPI cannot start again after MPI_Finalize" :
							 "MPI is already initialised");
	}
	clock_gettime(CLOCK_MONOTONIC, &env.t0);
	env.bip_started = bip_layer_init();
	env.main_thread = pthread_self();
	n = bip_numnodes;
	me = bip_mynode;
	mpi_shim.world_rank = me;
	mpi_shim.world_size = n;
	/* The lower of the level asked for and PROVIDED_THREAD_LEVEL; a value
	 * that is no level (below MPI_THREAD_SINGLE or above
	 * MPI_THREAD_MULTIPLE) gets the nearest level this library provides,
	 * so that provided is always one of the four levels and always what
	 * MPI_Query_thread says. */
	if (required < MPI_THREAD_SINGLE)
		required = MPI_THREAD_SINGLE;
	mpi_shim.thread_level = required < PROVIDED_THREAD_LEVEL ? required : PROVIDED_THREAD_LEVEL;
	if (provided)
		*provided = mpi_shim.thread_level;
	if (hosts_init(n, me) < 0)
		goto no_memory;
	world = malloc((size_t)n * sizeof(*world));
	self = malloc(sizeof(*self));
	if (!world || !self)
		goto no_memory;
	for (i = 0; i < n; i++)
		world[i] = i;
	self[0] = me;
	/* Context ids 0/1 and 2/3: the same on every process. */
	mpi_shim.next_ctx = 4;
	rc = mpi_shim_comm_setup(&mpi_shim_comm_world, n, world, me, 0);
	if (rc == MPI_SUCCESS)
		rc = mpi_shim_comm_setup(&mpi_shim_comm_self, 1, self, 0, 2);
	world = self = NULL; /* owned by the communicators now */
	if (rc)
		goto no_memory;
	mpi_shim_comm_world.predefined = 1;
	mpi_shim_comm_self.predefined = 1;
	strcpy(mpi_shim_comm_world.name, "MPI_COMM_WORLD");
	strcpy(mpi_shim_comm_self.name, "MPI_COMM_SELF");
	mpi_shim_req_init(mpi_shim_comm_release);
	rc = mpi_shim_p2p_init();
	if (rc) {
		fprintf(stderr, "mpi: rank %d: %s: cannot claim BIP tag %d for MPI: %s\n", me, call,
			MPI_SHIM_BIP_TAG, bip_error_string());
		env_fini_comms();
		exit(EXIT_FAILURE);
	}
	mpi_shim.initialized = 1;
	mpi_shim_info_env_init(argc ? *argc : 0, argv ? *argv : NULL);
	/* BIP's progress thread, if any, steps the non-blocking operations. */
	bip_layer_progress(mpi_shim_progress);
	return MPI_SUCCESS;

no_memory:
	free(world);
	free(self);
	fprintf(stderr, "mpi: rank %d: %s: out of memory\n", me, call);
	exit(EXIT_FAILURE);
}

int PMPI_Init(int *argc, char ***argv)
{
	MPI_SHIM_ENTER();
	return init(argc, argv, MPI_THREAD_SINGLE, NULL, "MPI_Init");
}
MPI_SHIM_ALIAS(MPI_Init);

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	MPI_SHIM_ENTER();
	if (!provided)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Init_thread",
				    "provided is NULL");
	return init(argc, argv, required, provided, "MPI_Init_thread");
}
MPI_SHIM_ALIAS(MPI_Init_thread);

int PMPI_Query_thread(int *provided)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Query_thread")))
		return rc;
	if (!provided)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Query_thread",
				    "provided is NULL");
	*provided = mpi_shim.thread_level;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Query_thread);

int PMPI_Is_thread_main(int *flag)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Is_thread_main")))
		return rc;
	if (!flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Is_thread_main",
				    "flag is NULL");
	*flag = pthread_equal(pthread_self(), env.main_thread) != 0;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Is_thread_main);

int PMPI_Finalize(void)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Finalize")))
		return rc;
	/* BIP's progress thread leaves the shim alone from now on: its state
	 * goes while Finalize waits below (and lets go of the lock). */
	bip_layer_progress(NULL);
	/* What this process owes others (acknowledgements) leaves now; BIP
	 * then waits for its sends to be taken. */
	mpi_shim_progress_poll();
	mpi_shim_bsend_flush();
	mpi_shim_attr_fini();
	mpi_shim_p2p_fini();
	mpi_shim_req_fini();
	env_fini_comms();
	mpi_shim_attr_free_keys();
	mpi_shim_coll_fini();
	mpi_shim_info_fini();
	mpi_shim_errcode_fini();
	free(host_index);
	host_index = NULL;
	free(env.hosts);
	env.hosts = NULL;
	mpi_shim.finalized = 1;
	if (env.bip_started)
		bip_finalize();
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Finalize);

int PMPI_Initialized(int *flag)
{
	MPI_SHIM_ENTER();
	if (!flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
	*flag = mpi_shim.initialized;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Initialized);

int PMPI_Finalized(int *flag)
{
	MPI_SHIM_ENTER();
	if (!flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
	*flag = mpi_shim.finalized;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Finalized);

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
	MPI_SHIM_ENTER();
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	fflush(stdout);
	fprintf(stderr, "mpi: host %s, pid %d, rank %d: MPI_Abort called with error code %d: "
		"stopping the job\n", host, (int)getpid(),
		mpi_shim.initialized ? mpi_shim.world_rank : -1, errorcode);
	fflush(stderr);
	/* Through the launcher (srun ends the step), or a failing exit status
	 * that makes bipload stop every other process. */
	bip_layer_abort(errorcode, "MPI_Abort");
}
MPI_SHIM_ALIAS(MPI_Abort);

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

/* The host index of a world rank (MPI_Comm_split_type). */
int mpi_shim_host_of(int world_rank)
{
	return host_index[world_rank];
}
