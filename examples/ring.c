/* SPDX-License-Identifier: MIT */
/*
 * The token of the manual's quick start as an MPI program: rank 0 starts
 * the token, each rank adds its rank and passes it on, and rank 0 checks
 * the sum against what an allreduce of the ranks gives.
 *   bipcc ring.c -o ring -lmpi && bipload -sz 4 ./ring
 */
#include <stdio.h>
#include <mpi.h>

int main(int argc, char *argv[])
{
	int rank, size, token, sum;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0) {
		token = 0;
		MPI_Send(&token, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
		MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		token += rank;
		MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
	}
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("token went round %d ranks: %d, allreduce %d\n", size, token, sum);
	MPI_Finalize();
	return rank == 0 && token != sum;
}
