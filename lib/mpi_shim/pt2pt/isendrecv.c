/* SPDX-License-Identifier: MIT */
/*
 * isendrecv.c - MPI-4.0 MPI_Isendrecv and MPI_Isendrecv_replace.
 *
 * The call posts the receive, then starts the send (MPI_Irecv, MPI_Isend),
 * and returns one request driven by progress that completes once both have:
 * its status is the receive's, its error the send's or else the
 * receive's.  MPI_Isendrecv_replace first packs the data to send into a
 * buffer of its own, freed with the request, so that the receive may
 * overwrite the user's buffer at once.  MPI_Cancel has no effect on these
 * requests (the operation completes normally).
 */
#include <limits.h>
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"
#include "engine.h"

struct sendrecv {
	MPI_Request send, recv;
	void *copy;          /* the packed send data of the _replace form */
};

static void drop(MPI_Request *r)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	if ((*r)->done)
		mpi_shim_request_release(*r);
	else
		(*r)->freed = 1; /* released when it completes */
	*r = MPI_REQUEST_NULL;
}

static void sendrecv_free(struct mpi_shim_request *r)
{
	struct sendrecv *x = r->state;

	drop(&x->send);
	drop(&x->recv);
	free(x->copy);
	free(x);
	r->state = NULL;
}

static int sendrecv_progress(struct mpi_shim_request *r)
{
	struct sendrecv *x = r->state;
	int err;

	if (!x->send->done || !x->recv->done)
		return 0;
	r->status = x->recv->status;
	r->len = x->recv->len;
	r->bytes = x->recv->bytes;
	err = x->send->error ? x->send->error : x->recv->error;
	drop(&x->send);
	drop(&x->recv);
	free(x->copy);
	x->copy = NULL;
	return err ? -err : 1;
}

static const struct mpi_shim_req_ops sendrecv_ops = {
	.progress = sendrecv_progress,
	.release = sendrecv_free,
};

/* The checks of one side (recv: the receive), reported as call's. */
static int check_side(const void *buf, int count, MPI_Datatype t, int rank, int tag,
		      MPI_Comm comm, int recv, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, t, call)) ||
	    (rc = mpi_shim_check_rank(comm, rank, recv, call)) ||
	    (rc = mpi_shim_check_tag(comm, tag, recv, call)) ||
	    (rank != MPI_PROC_NULL && (rc = mpi_shim_check_buf(comm, buf, count, t, call))))
		return rc;
	return MPI_SUCCESS;
}

/* Post the receive and start the send; the request owns copy. */
static int start(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag, void *rbuf,
		 int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, void *copy,
		 MPI_Request *request, const char *call)
{
	struct sendrecv *x = calloc(1, sizeof(*x));
	int rc;

	if (!x) {
		free(copy);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	}
	x->copy = copy;
	if ((rc = PMPI_Irecv(rbuf, rcount, rtype, src, rtag, comm, &x->recv)))
		goto fail;
	if ((rc = PMPI_Isend(sbuf, scount, stype, dst, stag, comm, &x->send))) {
		PMPI_Cancel(&x->recv);
		PMPI_Wait(&x->recv, MPI_STATUS_IGNORE);
		goto fail;
	}
	rc = mpi_shim_request_progress_new(comm, &sendrecv_ops, x, request);
	if (rc) {
		/* Both complete on their own and are released then. */
		drop(&x->send);
		drop(&x->recv);
		free(x->copy);
		free(x);
		return mpi_shim_err(comm, rc, call, "no memory for a request");
	}
	return MPI_SUCCESS;

fail:
	free(x->copy);
	free(x);
	return rc; /* reported */
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
		   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
		   int recvtag, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Isendrecv";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = check_side(sendbuf, sendcount, sendtype, dest, sendtag, comm, 0, call)) ||
	    (rc = check_side(recvbuf, recvcount, recvtype, source, recvtag, comm, 1, call)))
		return rc;
	if (!request)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the request pointer is NULL");
	return start(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
		     source, recvtag, comm, NULL, request, call);
}
MPI_SHIM_ALIAS(MPI_Isendrecv);

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
			   int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Isendrecv_replace";
	size_t bytes;
	void *copy;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = check_side(buf, count, datatype, dest, sendtag, comm, 0, call)) ||
	    (rc = check_side(buf, count, datatype, source, recvtag, comm, 1, call)))
		return rc;
	if (!request)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the request pointer is NULL");
	bytes = dest == MPI_PROC_NULL ? 0 : (size_t)count * datatype->size;
	if (bytes > (size_t)INT_MAX)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call,
				    "%zu bytes to send: more than this call can keep (%d)", bytes,
				    INT_MAX);
	/* The data to send, packed, so that the receive may overwrite buf. */
	copy = malloc(bytes ? bytes : 1);
	if (!copy)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory to keep %zu bytes",
				    bytes);
	if (bytes)
		mpi_shim_datatype_pack(buf, count, datatype, 0, copy, bytes);
	return start(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype, source,
		     recvtag, comm, copy, request, call);
}
MPI_SHIM_ALIAS(MPI_Isendrecv_replace);
