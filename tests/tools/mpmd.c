/* SPDX-License-Identifier: MIT */
/*
 * mpmd - one MPI program of an MPMD launch (bipload -sz 1 mpmd a : -sz 2
 * mpmd b).  Each rank prints its rank, the size, MPI_APPNUM and its first
 * argument, then all check that they share one MPI_COMM_WORLD (an
 * allreduce of the ranks).
 */
#include <stdio.h>

#include "mpi.h"

int main(int argc, char **argv)
{
	int rank, size, *appnum, flag, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d appnum %d arg %s sum %s\n", rank, size, flag ? *appnum : -1,
	       argc > 1 ? argv[1] : "-", sum == size * (size - 1) / 2 ? "right" : "WRONG");
	MPI_Finalize();
	return 0;
}
