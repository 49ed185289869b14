/* SPDX-License-Identifier: MIT */
/*
 * mpi_startup.c - the smallest MPI job: MPI_Init, a barrier, MPI_Finalize.
 * bench/slurm_start.sh times whole jobs of it under bipload and srun, with
 * the MPI shim and with Open MPI.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
