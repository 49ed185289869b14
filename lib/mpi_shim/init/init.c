/* SPDX-License-Identifier: MIT */
/*
 * init.c - the start and the end of the library: MPI_Init,
 * MPI_Init_thread, MPI_Finalize, MPI_Initialized, MPI_Finalized, the
 * thread level (MPI_Query_thread, MPI_Is_thread_main) and MPI_Abort.
 *
 * MPI_Init starts BIP unless the program did (a program may mix BIP and
 * MPI calls), claims the shim's reserved tag and builds MPI_COMM_WORLD
 * (node i of the configuration is rank i) and MPI_COMM_SELF.
 * MPI_Finalize ends every chapter in turn.  This is the one file that
 * calls into all the others to start and stop them, so it stands above
 * every chapter; the state it fills (struct mpi_shim_state, the hosts,
 * the clock) is env/'s, which every chapter may read.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "engine.h"
#include "shim.h"
#include "p2p.h"
#include "io.h"
#include "dpm.h"

/* Every level: each call runs under BIP's lock once the process has
 * threads (shim.h), and lets go of it while it waits. */
#define PROVIDED_THREAD_LEVEL MPI_THREAD_MULTIPLE

static struct {
	int bip_started; /* MPI_Init started BIP, so MPI_Finalize ends it */
	pthread_t main_thread;
} env;

static void env_fini_comms(void)
{
	mpi_shim_comm_fini(&mpi_shim_comm_self);
	mpi_shim_comm_fini(&mpi_shim_comm_world);
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
	mpi_shim_clock_start();
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
	if (mpi_shim_hosts_init(n, me) < 0)
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
	mpi_shim_dpm_fini();
	mpi_shim_attr_fini();
	mpi_shim_p2p_fini();
	mpi_shim_req_fini();
	env_fini_comms();
	mpi_shim_attr_free_keys();
	mpi_shim_coll_fini();
	mpi_shim_info_fini();
	mpi_shim_errcode_fini();
	mpi_shim_datarep_fini();
	mpi_shim_io_fini();
	mpi_shim_hosts_fini();
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
