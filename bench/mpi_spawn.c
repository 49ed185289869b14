/* SPDX-License-Identifier: MIT */
/*
 * mpi_spawn.c - the cost of growing a job, for bench/compare_spawn.sh:
 *
 *   mpi_spawn spawn N     one process spawns N children (MPI_Comm_spawn of
 *                         this program), sends each one integer and gets it
 *                         back, then disconnects; prints the milliseconds of
 *                         the whole, from the call to the last answer.
 *   mpi_spawn connect R   two processes: rank 0 opens a port and accepts, rank
 *                         1 connects, R times; prints the median microseconds
 *                         of one MPI_Comm_connect (connect to return, on the
 *                         connecting side), and the disconnect.
 *
 * Any MPI: built with the shim's mpicc.bip, Open MPI's or MPICH's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void child(void)
{
	MPI_Comm parent;
	int x;

	MPI_Comm_get_parent(&parent);
	MPI_Recv(&x, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
	MPI_Send(&x, 1, MPI_INT, 0, 1, parent);
	MPI_Comm_disconnect(&parent);
}

static void spawn(const char *self, int n)
{
	char *args[] = { "child", NULL };
	MPI_Comm inter;
	double t0, t1;
	int i, x, sum = 0;

	t0 = MPI_Wtime();
	MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
		       MPI_ERRCODES_IGNORE);
	for (i = 0; i < n; i++)
		MPI_Send(&i, 1, MPI_INT, i, 0, inter);
	for (i = 0; i < n; i++) {
		MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, MPI_STATUS_IGNORE);
		sum += x;
	}
	t1 = MPI_Wtime();
	MPI_Comm_disconnect(&inter);
	if (sum != n * (n - 1) / 2) {
		fprintf(stderr, "mpi_spawn: wrong sum %d\n", sum);
		exit(1);
	}
	printf("spawn %d %.3f\n", n, (t1 - t0) * 1e3);
}

static void connect_accept(int rounds)
{
	char port[MPI_MAX_PORT_NAME];
	double *t = malloc((size_t)rounds * sizeof(double));
	int rank, r;
	MPI_Comm c;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		MPI_Open_port(MPI_INFO_NULL, port);
	MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
	for (r = 0; r < rounds; r++) {
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		if (rank == 0)
			MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
		else
			MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
		t[r] = MPI_Wtime() - t0;
		MPI_Comm_disconnect(&c);
	}
	qsort(t, (size_t)rounds, sizeof(double), cmp);
	if (rank == 1)
		printf("connect %d %.1f\n", rounds, t[rounds / 2] * 1e6);
	if (rank == 0)
		MPI_Close_port(port);
	free(t);
}

int main(int argc, char **argv)
{
	MPI_Comm parent;

	MPI_Init(&argc, &argv);
	MPI_Comm_get_parent(&parent);
	if (parent != MPI_COMM_NULL)
		child();
	else if (argc >= 3 && !strcmp(argv[1], "spawn"))
		spawn(argv[0], atoi(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "connect"))
		connect_accept(atoi(argv[2]));
	else
		fprintf(stderr, "usage: mpi_spawn spawn N | connect ROUNDS\n");
	MPI_Finalize();
	return 0;
}
