/* SPDX-License-Identifier: MIT */
/*
 * disconnect.c - MPI_Comm_disconnect (MPI-3.1 10.5.4) on any communicator
 * other than the predefined ones.  The processes of the job are never
 * dynamic here, so disconnecting is freeing collectively: the members meet
 * (by then every message of the communicator has been matched, as the
 * standard requires of the program), then the communicator is freed as by
 * MPI_Comm_free, its attributes deleted and the handle set to MPI_COMM_NULL.
 */
#include "shim.h"

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_disconnect";
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!comm)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "the communicator pointer is NULL");
	if ((rc = mpi_shim_check_comm(*comm, call)))
		return rc;
	if ((*comm)->predefined)
		return mpi_shim_err(*comm, MPI_ERR_COMM, call, "%s cannot be disconnected",
				    (*comm)->name);
	rc = PMPI_Barrier(*comm);
	if (rc)
		return rc;
	return PMPI_Comm_free(comm);
}
MPI_SHIM_ALIAS(MPI_Comm_disconnect);
