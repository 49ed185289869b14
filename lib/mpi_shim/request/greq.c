/* SPDX-License-Identifier: MIT */
/*
 * greq.c - generalized requests (MPI_Grequest_start, MPI_Grequest_complete):
 * requests of kind MPI_SHIM_REQ_GREQ whose operation the program carries
 * out itself and declares complete.
 *
 * The callbacks are called as MPI-3.1 section 12.2 says:
 *   query_fn  by each Wait, Test (and their families) or
 *             MPI_Request_get_status call that finds the request complete,
 *             to fill the status; what it returns is the request's error;
 *   free_fn   once, right after query_fn by the call that completes the
 *             request, or, for a request given to MPI_Request_free, by
 *             MPI_Request_free or MPI_Grequest_complete, whichever comes
 *             last; an error it returns replaces query_fn's;
 *   cancel_fn by MPI_Cancel, with complete = whether MPI_Grequest_complete
 *             was called already.
 * The error code a callback returns (an added one too) is what the call
 * returns, through the error handler of MPI_COMM_WORLD, or in the status
 * of the request for the calls on arrays (MPI_ERR_IN_STATUS).
 *
 * The request plugs into the engine through greq_ops: it calls greq_query
 * where a call reports the done request, greq_free from MPI_Request_free,
 * greq_cancel from MPI_Cancel, greq_release when the request goes.  The
 * request completes only through MPI_Grequest_complete,
 * never by progress: a Wait on one that nothing completes cannot return
 * (with MPI_THREAD_SERIALIZED, no other thread may complete it meanwhile).
 */
#include <stdlib.h>

#include "shim.h"
#include "engine.h"

struct greq {
	MPI_Grequest_query_function *query;
	MPI_Grequest_free_function *free;
	MPI_Grequest_cancel_function *cancel;
	void *extra;
	int freed_fn; /* free_fn was called */
};

/* Call free_fn once; its error code. */
static int call_free(struct mpi_shim_request *r)
{
	struct greq *g = r->state;

	if (g->freed_fn)
		return MPI_SUCCESS;
	g->freed_fn = 1;
	return g->free(g->extra);
}

static void greq_release(struct mpi_shim_request *r)
{
	call_free(r);
	free(r->state);
	r->state = NULL;
}

static void greq_query(struct mpi_shim_request *r, int release);
static int greq_free(struct mpi_shim_request *r);
static int greq_cancel(struct mpi_shim_request *r);

static const struct mpi_shim_req_ops greq_ops = {
	.cancel = greq_cancel,
	.query = greq_query,
	.free = greq_free,
	.release = greq_release,
};

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
			MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
			MPI_Request *request)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Grequest_start";
	struct mpi_shim_request *r;
	struct greq *g;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!query_fn || !free_fn || !cancel_fn || !request)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "a callback or the request pointer is NULL");
	g = calloc(1, sizeof(*g));
	r = g ? mpi_shim_req_alloc() : NULL;
	if (!r) {
		free(g);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory for a request");
	}
	g->query = query_fn;
	g->free = free_fn;
	g->cancel = cancel_fn;
	g->extra = extra_state;
	r->kind = MPI_SHIM_REQ_GREQ;
	r->comm = MPI_COMM_NULL; /* its errors go to MPI_COMM_WORLD's handler */
	r->state = g;
	r->ops = &greq_ops;
	r->active = 1;
	mpi_shim_status_empty(&r->status);
	*request = r;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Grequest_start);

static int check_greq(MPI_Request r, const char *call)
{
	if (r == MPI_REQUEST_NULL || r->kind != MPI_SHIM_REQ_GREQ)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
				    "not a generalized request (MPI_Grequest_start), or freed");
	return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Grequest_complete";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_greq(request, call)))
		return rc;
	if (request->done)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
				    "the generalized request was already completed");
	request->done = 1;
	if (!request->freed)
		return MPI_SUCCESS;
	/* MPI_Request_free came first: the request goes now. */
	rc = call_free(request);
	mpi_shim_request_release(request);
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "the free function returned %d", rc);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Grequest_complete);

/* query_fn fills r's status and error (release: free_fn too, the request
 * being released next). */
static void greq_query(struct mpi_shim_request *r, int release)
{
	struct greq *g = r->state;
	MPI_Status st;
	int err, ferr;

	mpi_shim_status_empty(&st);
	err = g->query(g->extra, &st);
	if (release && (ferr = call_free(r)))
		err = ferr;
	r->status = st;
	r->status.MPI_ERROR = err;
	r->error = err;
}

/* MPI_Request_free of a generalized request. */
static int greq_free(struct mpi_shim_request *r)
{
	int rc;

	if (!r->done) {
		/* free_fn waits for MPI_Grequest_complete. */
		r->freed = 1;
		return MPI_SUCCESS;
	}
	rc = call_free(r);
	mpi_shim_request_release(r);
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, "MPI_Request_free",
				    "the free function of the generalized request returned %d", rc);
	return MPI_SUCCESS;
}

static int greq_cancel(struct mpi_shim_request *r)
{
	struct greq *g = r->state;
	int rc = g->cancel(g->extra, r->done);

	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, "MPI_Cancel",
				    "the cancel function of the generalized request returned %d", rc);
	return MPI_SUCCESS;
}
