/* SPDX-License-Identifier: MIT */
/*
 * comm_ctx.c - the small collectives that make a communicator: the
 * largest next_ctx of the members (the context id they agree on) and a
 * broadcast from rank 0, binomial trees on the parent's collective
 * context with a negative tag, which the collectives never use.
 *
 * Intra- and inter-communicators are made with them (comm.c,
 * intercomm.c; rma/win.c agrees on a window's name), so they stand below
 * those files, on point-to-point.
 */
#include "shim.h"

#define TAG MPI_SHIM_TAG_COMM_CREATE

int mpi_shim_comm_bcast0(MPI_Comm c, void *buf, int bytes)
{
	int mask = 1, rc;

	while (mask < c->size) {
		if (c->rank & mask) {
			rc = mpi_shim_coll_recv(buf, bytes, MPI_BYTE, c->rank - mask, TAG, c,
						MPI_STATUS_IGNORE);
			if (rc)
				return rc;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (c->rank + mask < c->size) {
			rc = mpi_shim_coll_send(buf, bytes, MPI_BYTE, c->rank + mask, TAG, c);
			if (rc)
				return rc;
		}
	}
	return MPI_SUCCESS;
}

int mpi_shim_comm_max_ctx(MPI_Comm c, uint32_t *ctx_p)
{
	uint32_t v = mpi_shim.next_ctx, x;
	int mask, rc;

	for (mask = 1; mask < c->size; mask <<= 1) {
		if (c->rank & mask) {
			rc = mpi_shim_coll_send(&v, (int)sizeof(v), MPI_BYTE, c->rank - mask, TAG,
						c);
			if (rc)
				return rc;
			break;
		}
		if (c->rank + mask < c->size) {
			rc = mpi_shim_coll_recv(&x, (int)sizeof(x), MPI_BYTE, c->rank + mask, TAG,
						c, MPI_STATUS_IGNORE);
			if (rc)
				return rc;
			if (x > v)
				v = x;
		}
	}
	rc = mpi_shim_comm_bcast0(c, &v, (int)sizeof(v));
	if (rc)
		return rc;
	*ctx_p = v;
	return MPI_SUCCESS;
}
