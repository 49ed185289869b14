/* SPDX-License-Identifier: MIT */
/*
 * trace_prog.c - programs whose traces are known (tests/trace/check.py).
 *
 *   trace_prog ring N       N rounds: each rank sends 8 bytes to its right
 *                           neighbour (MPI_Send, tag = the round) and
 *                           receives from its left one (MPI_Recv); even
 *                           ranks send first, odd ranks receive first
 *   trace_prog allreduce N  N MPI_Allreduce of one int (MPI_SUM)
 *   trace_prog hang N       the ring, then an MPI_Recv that nothing
 *                           matches: the job ends by bipload --timeout
 *
 * Apart from these, the program calls only MPI_Init, MPI_Comm_rank,
 * MPI_Comm_size and MPI_Finalize.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static void check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "trace_prog: %s: error %d\n", what, rc);
		exit(1);
	}
}

static void ring(int rank, int size, int n)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size, i;
	uint64_t out, in;

	for (i = 0; i < n; i++) {
		out = (uint64_t)rank * 1000 + (uint64_t)i;
		if (rank % 2 == 0)
			check(MPI_Send(&out, 1, MPI_UINT64_T, right, i, MPI_COMM_WORLD), "MPI_Send");
		check(MPI_Recv(&in, 1, MPI_UINT64_T, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
		      "MPI_Recv");
		if (rank % 2 == 1)
			check(MPI_Send(&out, 1, MPI_UINT64_T, right, i, MPI_COMM_WORLD), "MPI_Send");
		if (in != (uint64_t)left * 1000 + (uint64_t)i) {
			fprintf(stderr, "trace_prog: rank %d round %d: got %llu\n", rank, i,
				(unsigned long long)in);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	int rank, size, n, i, one = 1, sum;
	uint64_t never;

	if (argc != 3 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: trace_prog ring|allreduce|hang N\n");
		return 2;
	}
	check(MPI_Init(&argc, &argv), "MPI_Init");
	check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
	check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
	if (!strcmp(argv[1], "ring") || !strcmp(argv[1], "hang")) {
		ring(rank, size, n);
		if (!strcmp(argv[1], "hang"))
			check(MPI_Recv(&never, 1, MPI_UINT64_T, (rank + size - 1) % size, n,
				       MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
	} else if (!strcmp(argv[1], "allreduce")) {
		for (i = 0; i < n; i++) {
			check(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
			      "MPI_Allreduce");
			if (sum != size) {
				fprintf(stderr, "trace_prog: allreduce %d: %d\n", i, sum);
				return 1;
			}
		}
	} else {
		fprintf(stderr, "trace_prog: unknown program %s\n", argv[1]);
		return 2;
	}
	check(MPI_Finalize(), "MPI_Finalize");
	return 0;
}
