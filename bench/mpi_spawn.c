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
 *   mpi_spawn server R FILE    two jobs started apart, one process each: the
 *   mpi_spawn client R FILE    server opens a port, writes its name to FILE
 *                         and accepts R times; the client reads FILE and
 *                         connects R times, each time sending one integer
 *                         that comes back, then disconnecting; the client
 *                         prints the median microseconds of one connect and
 *                         of the whole first round (the job's start to the
 *                         first answer is the caller's to time).
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

static void across(int server, int rounds, const char *file)
{
	char port[MPI_MAX_PORT_NAME] = "";
	double *t = malloc((size_t)rounds * sizeof(double)), first = 0;
	int r, x;
	MPI_Comm c;
	FILE *f;

	if (server) {
		MPI_Open_port(MPI_INFO_NULL, port);
		f = fopen(file, "w");
		if (!f || fprintf(f, "%s\n", port) < 0 || fclose(f)) {
			fprintf(stderr, "mpi_spawn: cannot write %s\n", file);
			exit(1);
		}
	} else {
		f = fopen(file, "r");
		if (!f || !fgets(port, sizeof(port), f)) {
			fprintf(stderr, "mpi_spawn: cannot read %s\n", file);
			exit(1);
		}
		fclose(f);
		port[strcspn(port, "\n")] = '\0';
	}
	for (r = 0; r < rounds; r++) {
		double t0 = MPI_Wtime();

		if (server) {
			MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
			MPI_Recv(&x, 1, MPI_INT, 0, 0, c, MPI_STATUS_IGNORE);
			MPI_Send(&x, 1, MPI_INT, 0, 1, c);
		} else {
			MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
			t[r] = MPI_Wtime() - t0;
			MPI_Send(&r, 1, MPI_INT, 0, 0, c);
			MPI_Recv(&x, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE);
			if (!r)
				first = MPI_Wtime() - t0;
		}
		MPI_Comm_disconnect(&c);
	}
	if (server) {
		MPI_Close_port(port);
	} else {
		qsort(t, (size_t)rounds, sizeof(double), cmp);
		printf("across %d %.1f\n", rounds, t[rounds / 2] * 1e6);
		printf("first %d %.1f\n", rounds, first * 1e6);
	}
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
	else if (argc >= 4 && (!strcmp(argv[1], "server") || !strcmp(argv[1], "client")))
		across(!strcmp(argv[1], "server"), atoi(argv[2]), argv[3]);
	else
		fprintf(stderr, "usage: mpi_spawn spawn N | connect ROUNDS | server|client ROUNDS "
			"FILE\n");
	MPI_Finalize();
	return 0;
}
