/* SPDX-License-Identifier: MIT */
/*
 * overlap - a long send moves while its sender computes (the progress
 * thread, BIP_PROGRESS_THREAD=1), for tests/system/progress.sh.
 *
 *   overlap bip|mpi FLAGFILE WORDS LIMIT_S
 *
 * Two nodes.  Node 1 receives WORDS words on tag 1 (bip_trecv, or
 * MPI_Recv) and, with the MPI shim, takes part in an MPI_Iallreduce of
 * 1 MiB that node 0 started; once both are complete and every word is
 * checked, it creates FLAGFILE.  Node 0 posts the send (bip_tisend, or
 * MPI_Isend, and the MPI_Iallreduce) and then computes without calling
 * the library until FLAGFILE exists (and a little more, GRACE_S), or
 * LIMIT_S seconds pass (then it says that nothing moved).  Only then does
 * it test its requests, once:
 *
 *   node 0: moved while computing; test after: complete
 *
 * Without something that moves the data behind the application (the
 * progress thread, or a path that needs no help from the sender), node 1
 * cannot complete while node 0 computes: the limit passes and the
 * program says so and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"

#define NRED (1 << 17) /* doubles: 1 MiB */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void work(void)
{
	volatile double x = 1.0;
	int i;

	for (i = 0; i < 100000; i++)
		x = x * 1.0000001 + 1e-9;
}

/*
 * Arithmetic, and a look at the flag file now and then: no library call.
 * Once the flag is there, the same arithmetic for GRACE_S more: the
 * sender's own completion (its NIC's last event, the collective's last
 * step) comes just after the receiver's, and the thread takes it then.
 */
#define GRACE_S 0.5

static int compute_until(const char *flag, double limit)
{
	double end = now_s() + limit;

	while (access(flag, F_OK) != 0) {
		if (now_s() > end)
			return 0;
		work();
	}
	for (end = now_s() + GRACE_S; now_s() < end;)
		work();
	return 1;
}

static int check(const int *buf, int words)
{
	int i;

	for (i = 0; i < words; i++)
		if (buf[i] != i * 7 + 1)
			return 0;
	return 1;
}

static void flag_done(const char *flag)
{
	FILE *f = fopen(flag, "w");

	if (f)
		fclose(f);
}

static int run_bip(int *buf, int words, const char *flag, double limit)
{
	int i, id, moved, done;

	bip_init();
	if (bip_numnodes != 2)
		return 2;
	if (bip_mynode == 1) {
		int got = bip_trecv(1, buf, words);

		if (got != words || !check(buf, words)) {
			printf("node 1: FAIL: got %d words, expected %d, or wrong data\n", got, words);
			return 1;
		}
		flag_done(flag);
		return 0;
	}
	for (i = 0; i < words; i++)
		buf[i] = i * 7 + 1;
	id = bip_tisend(1, 1, buf, words);
	if (id < 0)
		return 1;
	moved = compute_until(flag, limit);
	done = bip_stest(id);
	printf("node 0: %s; test after: %s\n", moved ? "moved while computing" :
	       "FAIL: nothing moved while computing", done == 1 ? "complete" : "not complete");
	if (done != 1)
		bip_swait(id);
	return moved && done == 1 ? 0 : 1;
}

static int run_mpi(int *buf, int words, const char *flag, double limit, int argc, char **argv)
{
	double *in = malloc(NRED * sizeof(double)), *out = malloc(NRED * sizeof(double));
	MPI_Request reqs[2];
	int rank, size, provided, i, moved, done = 0, rc = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || !in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < NRED; i++)
		in[i] = rank + i;
	MPI_Iallreduce(in, out, NRED, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	if (rank == 1) {
		MPI_Recv(buf, words, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
		for (i = 0; i < NRED && out[i] == 1 + 2.0 * i; i++)
			;
		if (!check(buf, words) || i < NRED) {
			printf("rank 1: FAIL: wrong data\n");
			rc = 1;
		} else {
			flag_done(flag);
		}
	} else {
		for (i = 0; i < words; i++)
			buf[i] = i * 7 + 1;
		MPI_Isend(buf, words, MPI_INT, 1, 1, MPI_COMM_WORLD, &reqs[1]);
		moved = compute_until(flag, limit);
		MPI_Testall(2, reqs, &done, MPI_STATUSES_IGNORE);
		printf("rank 0: %s; test after: %s\n", moved ? "moved while computing" :
		       "FAIL: nothing moved while computing", done ? "complete" : "not complete");
		if (!done)
			MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
		for (i = 0; i < NRED && out[i] == 1 + 2.0 * i; i++)
			;
		rc = moved && done && i == NRED ? 0 : 1;
	}
	free(in);
	free(out);
	MPI_Finalize();
	return rc;
}

int main(int argc, char **argv)
{
	int words, rc;
	int *buf;

	if (argc != 5 || (strcmp(argv[1], "bip") && strcmp(argv[1], "mpi"))) {
		fprintf(stderr, "usage: overlap bip|mpi FLAGFILE WORDS LIMIT_S\n");
		return 2;
	}
	words = atoi(argv[3]);
	buf = calloc(words > 0 ? (size_t)words : 1, sizeof(int));
	if (!buf || words < 1)
		return 2;
	if (!strcmp(argv[1], "bip"))
		rc = run_bip(buf, words, argv[2], atof(argv[4]));
	else
		rc = run_mpi(buf, words, argv[2], atof(argv[4]), argc, argv);
	free(buf);
	return rc;
}
