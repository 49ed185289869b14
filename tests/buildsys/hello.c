/* SPDX-License-Identifier: MIT */
/*
 * hello.c - the MPI program that the projects of tests/buildsys build with
 * their build system's MPI discovery.  Every rank sends its rank to rank 0,
 * which checks the sum; each rank prints one line.  Exits non-zero when
 * anything is wrong.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, sum = -1;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	printf("hello from %d of %d\n", rank, size);
	if (rank == 0 && sum != size * (size - 1) / 2) {
		printf("wrong sum %d\n", sum);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Finalize();
	return 0;
}
