/* SPDX-License-Identifier: MIT */
/*
 * request.c - the calls on requests: the Wait and Test families,
 * Request_get_status, Request_free, Cancel, Start and Startall; their
 * argument checks and the errors they report, over engine.c's waiting and
 * testing.
 *
 * A request is done when its operation has completed; Wait or Test then
 * reports it and releases it (a persistent one becomes inactive instead).
 * A request the user freed before completion is released when it
 * completes (mpi_shim_req_complete).
 */
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "engine.h"

/* The error class of a complete request, reported on its communicator. */
static int report(MPI_Request r, const char *call)
{
	int err = r->error;

	if (!err)
		return MPI_SUCCESS;
	if (r->kind == MPI_SHIM_REQ_GREQ)
		return mpi_shim_err(r->comm, err, call,
				    "a callback of the generalized request returned %d", err);
	if (err == MPI_ERR_TRUNCATE)
		return mpi_shim_err(r->comm, err, call,
				    "message of %zu bytes from rank %d with tag %d is longer than "
				    "the receive buffer (%zu bytes)",
				    r->len, r->status.MPI_SOURCE, r->status.MPI_TAG, r->bytes);
	return mpi_shim_err(r->comm, err, call, "the request failed: %s", bip_error_string());
}

/* The checks of a request array; MPI_SUCCESS or the reported error. */
static int check_requests(int count, MPI_Request reqs[], const char *call)
{
	int i;

	if (count < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call,
				    "count %d is negative", count);
	if (count > 0 && !reqs)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
				    "the array of requests is NULL");
	for (i = 0; i < count; i++)
		if (reqs[i] != MPI_REQUEST_NULL && reqs[i]->kind == MPI_SHIM_REQ_INVALID)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
					    "request %d was already freed", i);
	return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Wait")))
		return rc;
	if (!req || (*req && (*req)->kind == MPI_SHIM_REQ_INVALID))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Wait",
				    "invalid request (NULL pointer or already freed)");
	r = *req;
	if (!mpi_shim_req_active(r)) {
		if (status && status != MPI_STATUS_IGNORE)
			mpi_shim_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!r->done && (rc = mpi_shim_wait_done(r, "MPI_Wait", 1)))
		return rc;
	mpi_shim_req_query(r, 1);
	if (r->error) {
		/* Report before the request (and what the message needs) goes. */
		rc = report(r, "MPI_Wait");
		mpi_shim_req_finish(req, status);
		return rc;
	}
	mpi_shim_req_finish(req, status);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Wait);

int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Test")))
		return rc;
	if (!req || !flag || (*req && (*req)->kind == MPI_SHIM_REQ_INVALID))
		return mpi_shim_err(MPI_COMM_NULL, !flag ? MPI_ERR_ARG : MPI_ERR_REQUEST,
				    "MPI_Test", "invalid request or flag (NULL or freed)");
	r = *req;
	if (!mpi_shim_req_active(r)) {
		*flag = 1;
		if (status && status != MPI_STATUS_IGNORE)
			mpi_shim_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!r->done) {
		mpi_shim_progress();
		mpi_shim_req_step(r);
	}
	if (!r->done) {
		*flag = 0;
		return MPI_SUCCESS;
	}
	*flag = 1;
	mpi_shim_req_query(r, 1);
	rc = r->error ? report(r, "MPI_Test") : MPI_SUCCESS;
	mpi_shim_req_finish(req, status);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Test);

/* Statuses of an array, or MPI_STATUSES_IGNORE. */
static MPI_Status *nth(MPI_Status *sts, int i)
{
	return sts == MPI_STATUSES_IGNORE || !sts ? MPI_STATUS_IGNORE : &sts[i];
}

/* Finish every done request of reqs[]; MPI_ERR_IN_STATUS if one failed. */
static int finish_all(int count, MPI_Request reqs[], MPI_Status sts[], const char *call)
{
	MPI_Comm failed = MPI_COMM_NULL;
	int i, nfailed = 0, first = -1, err;

	for (i = 0; i < count; i++) {
		MPI_Status *st = nth(sts, i);

		if (!mpi_shim_req_active(reqs[i])) {
			if (st != MPI_STATUS_IGNORE)
				mpi_shim_status_empty(st);
			continue;
		}
		mpi_shim_req_query(reqs[i], 1);
		if (reqs[i]->error && nfailed++ == 0) {
			first = reqs[i]->error;
			failed = reqs[i]->comm;
		}
		err = mpi_shim_req_finish(&reqs[i], st);
		if (st != MPI_STATUS_IGNORE)
			st->MPI_ERROR = err;
	}
	if (!nfailed)
		return MPI_SUCCESS;
	return mpi_shim_err(failed, MPI_ERR_IN_STATUS, call,
			    "%d request(s) failed, the first with %s", nfailed,
			    mpi_shim_err_name(first));
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
	MPI_SHIM_ENTER();
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Waitall")) ||
	    (rc = check_requests(count, reqs, "MPI_Waitall")))
		return rc;
	for (i = 0; i < count; i++) {
		if (mpi_shim_req_active(reqs[i]) && !reqs[i]->done &&
		    (rc = mpi_shim_wait_done(reqs[i], "MPI_Waitall", 1)))
			return rc;
	}
	return finish_all(count, reqs, sts, "MPI_Waitall");
}
MPI_SHIM_ALIAS(MPI_Waitall);

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	MPI_SHIM_ENTER();
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Testall")) ||
	    (rc = check_requests(count, reqs, "MPI_Testall")))
		return rc;
	if (!flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
	mpi_shim_progress();
	for (i = 0; i < count; i++) {
		if (mpi_shim_req_active(reqs[i]))
			mpi_shim_req_step(reqs[i]);
		if (mpi_shim_req_active(reqs[i]) && !reqs[i]->done) {
			*flag = 0;
			return MPI_SUCCESS;
		}
	}
	*flag = 1;
	return finish_all(count, reqs, sts, "MPI_Testall");
}
MPI_SHIM_ALIAS(MPI_Testall);

static int finish_one(MPI_Request reqs[], int i, MPI_Status *st, const char *call)
{
	int rc;

	mpi_shim_req_query(reqs[i], 1);
	rc = reqs[i]->error ? report(reqs[i], call) : MPI_SUCCESS;

	mpi_shim_req_finish(&reqs[i], st);
	return rc;
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Waitany")) ||
	    (rc = check_requests(count, reqs, "MPI_Waitany")))
		return rc;
	if (!index)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
	if ((rc = mpi_shim_req_wait_any(count, reqs, &i, "MPI_Waitany")))
		return rc;
	if (i == MPI_UNDEFINED) {
		*index = MPI_UNDEFINED;
		if (status && status != MPI_STATUS_IGNORE)
			mpi_shim_status_empty(status);
		return MPI_SUCCESS;
	}
	*index = i;
	return finish_one(reqs, i, status, "MPI_Waitany");
}
MPI_SHIM_ALIAS(MPI_Waitany);

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Testany")) ||
	    (rc = check_requests(count, reqs, "MPI_Testany")))
		return rc;
	if (!index || !flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testany",
				    "index or flag is NULL");
	mpi_shim_progress();
	i = mpi_shim_req_find_done(count, reqs);
	if (i == MPI_UNDEFINED || i < 0) {
		*flag = i == MPI_UNDEFINED;
		*index = MPI_UNDEFINED;
		if (*flag && status && status != MPI_STATUS_IGNORE)
			mpi_shim_status_empty(status);
		return MPI_SUCCESS;
	}
	*flag = 1;
	*index = i;
	return finish_one(reqs, i, status, "MPI_Testany");
}
MPI_SHIM_ALIAS(MPI_Testany);

/* Finish every done request; the count, or MPI_UNDEFINED if none is active. */
static int some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[],
		const char *call)
{
	int i, n = 0, nactive = 0, nfailed = 0, first = MPI_SUCCESS;
	MPI_Comm failed = MPI_COMM_NULL;

	for (i = 0; i < count; i++) {
		if (!mpi_shim_req_active(reqs[i]))
			continue;
		nactive++;
		mpi_shim_req_step(reqs[i]);
		if (!reqs[i]->done)
			continue;
		mpi_shim_req_query(reqs[i], 1);
		if (reqs[i]->error && nfailed++ == 0) {
			first = reqs[i]->error;
			failed = reqs[i]->comm;
		}
		indices[n] = i;
		{
			MPI_Status *st = nth(sts, n);
			int err = mpi_shim_req_finish(&reqs[i], st);

			if (st != MPI_STATUS_IGNORE)
				st->MPI_ERROR = err;
		}
		n++;
	}
	*outcount = nactive ? n : MPI_UNDEFINED;
	if (nfailed)
		return mpi_shim_err(failed, MPI_ERR_IN_STATUS, call,
				    "%d request(s) failed, the first with %s", nfailed,
				    mpi_shim_err_name(first));
	return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
		  MPI_Status sts[])
{
	MPI_SHIM_ENTER();
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Waitsome")) ||
	    (rc = check_requests(incount, reqs, "MPI_Waitsome")))
		return rc;
	if (!outcount || (incount > 0 && !indices))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Waitsome",
				    "outcount or indices is NULL");
	if ((rc = mpi_shim_req_wait_any(incount, reqs, &i, "MPI_Waitsome")))
		return rc;
	return some(incount, reqs, outcount, indices, sts, "MPI_Waitsome");
}
MPI_SHIM_ALIAS(MPI_Waitsome);

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
		  MPI_Status sts[])
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Testsome")) ||
	    (rc = check_requests(incount, reqs, "MPI_Testsome")))
		return rc;
	if (!outcount || (incount > 0 && !indices))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testsome",
				    "outcount or indices is NULL");
	mpi_shim_progress();
	return some(incount, reqs, outcount, indices, sts, "MPI_Testsome");
}
MPI_SHIM_ALIAS(MPI_Testsome);

int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Request_get_status")))
		return rc;
	if (!flag || (req && req->kind == MPI_SHIM_REQ_INVALID))
		return mpi_shim_err(MPI_COMM_NULL, !flag ? MPI_ERR_ARG : MPI_ERR_REQUEST,
				    "MPI_Request_get_status", "invalid request or flag");
	if (!mpi_shim_req_active(req)) {
		*flag = 1;
		if (status && status != MPI_STATUS_IGNORE)
			mpi_shim_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!req->done) {
		mpi_shim_progress();
		mpi_shim_req_step(req);
	}
	*flag = req->done;
	if (!req->done)
		return MPI_SUCCESS;
	mpi_shim_req_query(req, 0);
	if (status && status != MPI_STATUS_IGNORE)
		mpi_shim_status_report(status, &req->status);
	return req->kind == MPI_SHIM_REQ_GREQ ? report(req, "MPI_Request_get_status") :
						MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Request_get_status);

int PMPI_Request_free(MPI_Request *req)
{
	MPI_SHIM_ENTER();
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Request_free")))
		return rc;
	if (!req || !*req || (*req)->kind == MPI_SHIM_REQ_INVALID)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Request_free",
				    "invalid request (NULL, MPI_REQUEST_NULL or already freed)");
	r = *req;
	if (r->persistent && r->active && r->kind == MPI_SHIM_REQ_PROGRESS)
		return mpi_shim_err(r->comm, MPI_ERR_REQUEST, "MPI_Request_free",
				    "the persistent collective request is active: complete it "
				    "(MPI_Wait...) before freeing it");
	*req = MPI_REQUEST_NULL;
	return mpi_shim_req_user_free(r);
}
MPI_SHIM_ALIAS(MPI_Request_free);

int PMPI_Cancel(MPI_Request *req)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Cancel")))
		return rc;
	if (!req || !*req || (*req)->kind == MPI_SHIM_REQ_INVALID)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Cancel",
				    "invalid request (NULL, MPI_REQUEST_NULL or already freed)");
	/* A receive not yet matched is cancelled at once; a send is asked
	 * to be (p2p.c), and Wait or Test reports the answer (MPI_Test_cancelled
	 * says whether it was); a generalized request's cancel_fn is called. */
	return mpi_shim_req_cancel(*req);
}
MPI_SHIM_ALIAS(MPI_Cancel);

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	MPI_SHIM_ENTER();
	if (!status || status == MPI_STATUS_IGNORE || !flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Test_cancelled",
				    "status or flag is NULL or MPI_STATUS_IGNORE");
	*flag = status->mpi_shim_cancelled;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Test_cancelled);

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	MPI_SHIM_ENTER();
	if (!status || status == MPI_STATUS_IGNORE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled",
				    "status is NULL or MPI_STATUS_IGNORE");
	status->mpi_shim_cancelled = !!flag;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Status_set_cancelled);

/* --- persistent requests --- */

static int check_startable(MPI_Request r, const char *call)
{
	if (!r || r->kind == MPI_SHIM_REQ_INVALID || !r->persistent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
				    "not a persistent request (from MPI_Send_init, "
				    "MPI_Recv_init...)");
	if (r->active)
		return mpi_shim_err(r->comm, MPI_ERR_REQUEST, call,
				    "the request is already active (started and not completed)");
	return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *req)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Start")))
		return rc;
	if (!req)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start",
				    "request pointer is NULL");
	if ((rc = check_startable(*req, "MPI_Start")))
		return rc;
	return mpi_shim_start(*req, "MPI_Start");
}
MPI_SHIM_ALIAS(MPI_Start);

int PMPI_Startall(int count, MPI_Request reqs[])
{
	MPI_SHIM_ENTER();
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Startall")) ||
	    (rc = check_requests(count, reqs, "MPI_Startall")))
		return rc;
	for (i = 0; i < count; i++)
		if ((rc = check_startable(reqs[i], "MPI_Startall")))
			return rc;
	for (i = 0; i < count; i++)
		if ((rc = mpi_shim_start(reqs[i], "MPI_Startall")))
			return rc;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Startall);
