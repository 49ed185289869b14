/* SPDX-License-Identifier: MIT */
/*
 * Two programs started apart that connect (attach.sh): the server is a job
 * of its own, the clients are started later with bipload --attach and
 * join it as groups of their own.  attach MODE:
 *
 *   server K   rank 0 opens a port and publishes it as "attach-svc"
 *              (BIP_NAMES_DIR); the job accepts K connections, one after
 *              the other, and with each: sends and receives across,
 *              reduces over the inter-communicator, merges it and reduces
 *              over the merged one, disconnects
 *   client     looks the name up and connects: the same from its side; its
 *              MPI_COMM_WORLD is its own processes, and it has no parent
 *   crash      aborts before MPI_Init ends its work (SIGABRT)
 *   sleep      says "sleeping", then waits to be stopped
 *
 * Each side's values say which side sent them: 1000 * side + rank, side 1
 * the server's, 2 a client's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../mpicheck.h"

static int rank, size;

static void nap(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* What both sides check over one inter-communicator; side: 1 or 2. */
static void exchange(MPI_Comm ic, int side)
{
	int rsize, sum, want, i, merged_rank, msize, total;
	MPI_Comm merged;

	OK(MPI_Comm_remote_size(ic, &rsize));
	/* Point to point: every rank to every remote rank, both ways. */
	{
		int mine = 1000 * side + rank, got_[64];
		MPI_Request rq[128];

		CHECK(rsize <= 64, "remote size %d", rsize);
		for (i = 0; i < rsize; i++) {
			OK(MPI_Irecv(&got_[i], 1, MPI_INT, i, 7, ic, &rq[i]));
			OK(MPI_Isend(&mine, 1, MPI_INT, i, 7, ic, &rq[rsize + i]));
		}
		OK(MPI_Waitall(2 * rsize, rq, MPI_STATUSES_IGNORE));
		for (i = 0; i < rsize; i++)
			CHECK(got_[i] == 1000 * (3 - side) + i, "from remote rank %d: %d", i,
			      got_[i]);
	}
	/* The reduction gives each side the other's sum. */
	i = 1000 * side + rank;
	OK(MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, ic));
	want = 1000 * (3 - side) * rsize + rsize * (rsize - 1) / 2;
	CHECK(sum == want, "allreduce across: %d, want %d", sum, want);
	/* Merged: the server's group first. */
	OK(MPI_Intercomm_merge(ic, side == 2, &merged));
	OK(MPI_Comm_rank(merged, &merged_rank));
	OK(MPI_Comm_size(merged, &msize));
	CHECK(msize == size + rsize, "merged size %d", msize);
	CHECK(merged_rank == (side == 1 ? rank : rsize + rank), "merged rank %d", merged_rank);
	OK(MPI_Allreduce(&merged_rank, &total, 1, MPI_INT, MPI_SUM, merged));
	CHECK(total == msize * (msize - 1) / 2, "allreduce merged: %d", total);
	OK(MPI_Comm_free(&merged));
	OK(MPI_Comm_disconnect(&ic));
	CHECK(ic == MPI_COMM_NULL, "disconnect left a communicator");
}

static void server(int k)
{
	char port[MPI_MAX_PORT_NAME];
	int i;

	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Publish_name("attach-svc", MPI_INFO_NULL, port));
		printf("server: port published\n");
		fflush(stdout);
	}
	for (i = 0; i < k; i++) {
		MPI_Comm ic;

		OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
		exchange(ic, 1);
	}
	if (rank == 0) {
		OK(MPI_Unpublish_name("attach-svc", MPI_INFO_NULL, port));
		OK(MPI_Close_port(port));
		printf("server: served %d\n", k);
	}
}

static void client(void)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm ic, parent;
	int rc, cls;

	OK(MPI_Comm_get_parent(&parent));
	CHECK(parent == MPI_COMM_NULL, "an attached command has a parent");
	if (rank == 0) {
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		while ((rc = MPI_Lookup_name("attach-svc", MPI_INFO_NULL, port)) != MPI_SUCCESS) {
			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_NAME, "lookup: class %d", cls);
			nap();
		}
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
	OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
	exchange(ic, 2);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("client %d: ok\n", size);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check_rank = rank;
	if (!strcmp(mode, "server") && argc > 2) {
		server(atoi(argv[2]));
	} else if (!strcmp(mode, "client")) {
		client();
	} else if (!strcmp(mode, "crash")) {
		abort();
	} else if (!strcmp(mode, "sleep")) {
		printf("sleeping\n");
		fflush(stdout);
		for (;;)
			pause();
	} else {
		fprintf(stderr, "usage: attach server K | client | crash | sleep\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Finalize();
	return 0;
}
