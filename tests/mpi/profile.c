/* SPDX-License-Identifier: MIT */
/*
 * profile.c - the profiling interface: a program (a tool) defines MPI_Send
 * and MPI_Recv, counts the calls and forwards them to PMPI_Send and
 * PMPI_Recv.  Calls inside the library go to the PMPI_ names, so they are
 * not counted twice.
 */
#include <string.h>

#include <mpi.h>

#include "mpicheck.h"

static int sends, recvs;

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
	sends++;
	return PMPI_Send(buf, count, t, dst, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	recvs++;
	return PMPI_Recv(buf, count, t, src, tag, comm, status);
}

int main(int argc, char **argv)
{
	int rank, size, next, prev, v, w, i;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	for (i = 0; i < 5; i++) {
		MPI_Request req;

		OK(MPI_Irecv(&w, 1, MPI_INT, prev, i, MPI_COMM_WORLD, &req));
		v = rank + i;
		OK(MPI_Send(&v, 1, MPI_INT, next, i, MPI_COMM_WORLD));
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(w == prev + i, "got %d", w);
	}
	/* Sendrecv and Comm_dup use the PMPI_ calls inside: not counted. */
	OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 9, &w, 1, MPI_INT, prev, 9, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE));
	{
		MPI_Comm dup;

		OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
		OK(MPI_Comm_free(&dup));
	}
	OK(MPI_Recv(&w, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(sends == 5 && recvs == 1, "the tool saw %d sends and %d receives, expected 5 and 1",
	      sends, recvs);
	OK(MPI_Finalize());
	return 0;
}
