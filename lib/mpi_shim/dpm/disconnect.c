/* SPDX-License-Identifier: MIT */
/*
 * disconnect.c - MPI_Comm_disconnect (MPI-3.1 10.5.4) on any communicator
 * other than the predefined ones, intra- or inter-communicator, made by
 * the communicator calls or by the bridge of this chapter (ports,
 * MPI_Comm_join).
 *
 * The standard asks that the call wait for all communication pending on
 * the communicator, then free it, so that two groups of processes joined
 * by it are independent afterwards (processes may come and go around
 * such a communicator).  Here: each member first makes progress until
 * none of its requests on the communicator (point-to-point, non-blocking
 * collectives, those of an inter-communicator's local group too) is
 * pending any more (mpi_shim_req_pending), which also completes what
 * other members wait for from it; then the members meet (a barrier,
 * across both groups of an inter-communicator), so that none frees the
 * communicator while another still has a message of it under way; then
 * it is freed as by MPI_Comm_free, its attributes deleted and the handle
 * set to MPI_COMM_NULL.  A receive that no send will ever match keeps the
 * call waiting, as the standard's pending communication would.
 */
#include "shim.h"
#include "engine.h"

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_disconnect";
	struct bip_layer_wait w = { 0, 0 };
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
	while (mpi_shim_req_pending(*comm)) {
		mpi_shim_progress();
		if (!mpi_shim_req_pending(*comm))
			break;
		if (mpi_shim_progress_wait(&w) < 0) {
			mpi_shim_progress();
			if (mpi_shim_req_pending(*comm))
				return mpi_shim_err(*comm, MPI_ERR_OTHER, call,
						    "every other process has ended: the "
						    "communication pending on the communicator "
						    "cannot complete");
		}
	}
	rc = PMPI_Barrier(*comm);
	if (rc)
		return rc;
	return PMPI_Comm_free(comm);
}
MPI_SHIM_ALIAS(MPI_Comm_disconnect);
