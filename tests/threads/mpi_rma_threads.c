/* SPDX-License-Identifier: MIT */
/*
 * mpi_rma_threads.c - one-sided communication from several threads at once
 * (MPI_THREAD_MULTIPLE): inside one MPI_Win_lock_all epoch every thread of
 * every process puts to its right neighbour and reads its words back,
 * with MPI_Win_flush, and adds 1 to a counter on rank 0 with
 * MPI_Fetch_and_op.  Every word is checked; every value of the counter is
 * fetched exactly once (the sum of the fetched values says so).
 *
 *   bipload -sz N mpi_rma_threads [-t THREADS] [-m OPS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static int rank, size, nthreads = 4, nops = 20;
static long *base;
static MPI_Win win;

struct worker {
	pthread_t tid;
	int id;
	int failures;
	long fetched_sum;
};

#define FAIL(w, ...)                                                              \
	do {                                                                      \
		fprintf(stderr, "rank %d thread %d: ", rank, (w)->id);            \
		fprintf(stderr, __VA_ARGS__);                                     \
		fputc('\n', stderr);                                              \
		(w)->failures++;                                                  \
	} while (0)

/* Word k of the window: the counter at 0, then nops words per thread. */
static void *work(void *arg)
{
	struct worker *w = arg;
	int right = (rank + 1) % size, i;
	const long one = 1;

	for (i = 0; i < nops; i++) {
		MPI_Aint slot = 1 + (MPI_Aint)w->id * nops + i;
		long v = (long)rank * 1000000 + w->id * 1000 + i, got = -1, old = -1;

		if (MPI_Put(&v, 1, MPI_LONG, right, slot, 1, MPI_LONG, win) ||
		    MPI_Win_flush(right, win))
			FAIL(w, "put %d failed", i);
		if (MPI_Get(&got, 1, MPI_LONG, right, slot, 1, MPI_LONG, win) ||
		    MPI_Win_flush(right, win))
			FAIL(w, "get %d failed", i);
		if (got != v)
			FAIL(w, "word %td of rank %d reads %ld, want %ld", slot, right, got, v);
		if (MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win) ||
		    MPI_Win_flush(0, win))
			FAIL(w, "fetch_and_op %d failed", i);
		w->fetched_sum += old;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *ws;
	int provided, opt, i, t, failures = 0, total;
	long fetched = 0, all, n, left;

	while ((opt = getopt(argc, argv, "t:m:")) != -1) {
		if (opt == 't')
			nthreads = atoi(optarg);
		else if (opt == 'm')
			nops = atoi(optarg);
	}
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, "MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
		MPI_Finalize();
		return 1;
	}
	MPI_Win_allocate((MPI_Aint)(1 + nthreads * nops) * (MPI_Aint)sizeof(long), sizeof(long),
			 MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	memset(base, 0, (size_t)(1 + nthreads * nops) * sizeof(long));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	ws = calloc((size_t)nthreads, sizeof(*ws));
	for (t = 0; t < nthreads; t++) {
		ws[t].id = t;
		pthread_create(&ws[t].tid, NULL, work, &ws[t]);
	}
	for (t = 0; t < nthreads; t++) {
		pthread_join(ws[t].tid, NULL);
		failures += ws[t].failures;
		fetched += ws[t].fetched_sum;
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	n = (long)size * nthreads * nops;
	MPI_Allreduce(&fetched, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && (base[0] != n || all != n * (n - 1) / 2)) {
		fprintf(stderr, "counter %ld (want %ld), fetched values sum to %ld (want %ld)\n",
			base[0], n, all, n * (n - 1) / 2);
		failures++;
	}
	left = (rank + size - 1) % size;
	for (t = 0; t < nthreads; t++)
		for (i = 0; i < nops; i++)
			if (base[1 + t * nops + i] != left * 1000000 + t * 1000 + i) {
				fprintf(stderr, "rank %d: word %d is %ld\n", rank, 1 + t * nops + i,
					base[1 + t * nops + i]);
				failures++;
			}
	free(ws);
	MPI_Win_free(&win);
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return total ? 1 : 0;
}
