/* SPDX-License-Identifier: MIT */
/*
 * pt2pt.c - the point-to-point calls: argument checks, then p2p.c.
 *
 * The checks run as one test on the fast path; only a failing call goes
 * through the detailed checks, which name the faulty argument.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "p2p.h"

/* Everything a send (any_source 0) or receive (1) needs; the fast test
 * first, then the one that explains. */
static inline int check_args(const void *buf, int count, MPI_Datatype t, int rank, int tag,
			     MPI_Comm comm, int recv, const char *call)
{
	int rc;

	if (mpi_shim_likely(mpi_shim.initialized && !mpi_shim.finalized && comm &&
			    comm->valid && count >= 0 && t && t->committed && t->refcount > 0 &&
			    ((unsigned)rank < (unsigned)comm->peer_size || rank == MPI_PROC_NULL ||
			     (recv && rank == MPI_ANY_SOURCE)) &&
			    (tag >= 0 || (recv && tag == MPI_ANY_TAG)) &&
			    (buf || !count || !t->predefined || !t->size || rank == MPI_PROC_NULL) &&
			    (uint64_t)count * t->size <= MPI_SHIM_MESSAGE_MAX))
		return MPI_SUCCESS;
	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, t, call)) ||
	    (rc = mpi_shim_check_rank(comm, rank, recv, call)) ||
	    (rc = mpi_shim_check_tag(comm, tag, recv, call)) ||
	    (rank != MPI_PROC_NULL && (rc = mpi_shim_check_buf(comm, buf, count, t, call))))
		return rc;
	/* One message carries what one BIP message does; a receive buffer may
	 * be larger than any message. */
	if (!recv && rank != MPI_PROC_NULL && (uint64_t)count * t->size > MPI_SHIM_MESSAGE_MAX)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call, "a message of %d elements of %zu "
				    "bytes is %llu bytes; one message carries at most %llu (4 GiB - "
				    "1)", count, t->size, (unsigned long long)count * t->size,
				    (unsigned long long)MPI_SHIM_MESSAGE_MAX);
	return MPI_SUCCESS;
}

static int check_request_ptr(MPI_Comm comm, MPI_Request *req, const char *call)
{
	if (mpi_shim_unlikely(!req))
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the request pointer is NULL");
	return MPI_SUCCESS;
}

static int failed_start(MPI_Comm comm, int rc, const char *call, int peer)
{
	return mpi_shim_err(comm, rc, call, "could not start the transfer with rank %d: %s", peer,
			    rc == MPI_ERR_NO_MEM ? "out of memory" : bip_error_string());
}

/* A blocking send in one of the modes. */
static int send_blocking(const void *buf, int count, MPI_Datatype t, int dst, int tag,
			 MPI_Comm comm, int mode, const char *call)
{
	struct mpi_shim_request *r;
	int rc;

	if ((rc = check_args(buf, count, t, dst, tag, comm, 0, call)))
		return rc;
	r = mpi_shim_req_alloc();
	if (mpi_shim_unlikely(!r))
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a request");
	rc = mpi_shim_send_start(r, buf, count, t, dst, tag, comm, comm->ctx, mode);
	if (mpi_shim_unlikely(rc)) {
		mpi_shim_req_free(r);
		return failed_start(comm, rc, call, dst);
	}
	if (!r->done && (rc = mpi_shim_wait_done(r, call, 1)))
		return rc;
	rc = r->error;
	mpi_shim_req_free(r);
	if (mpi_shim_unlikely(rc))
		return mpi_shim_err(comm, rc, call, "sending to rank %d failed: %s", dst,
				    bip_error_string());
	return MPI_SUCCESS;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return send_blocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_STANDARD, "MPI_Send");
}
MPI_SHIM_ALIAS(MPI_Send);

int PMPI_Ssend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	return send_blocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_SYNC, "MPI_Ssend");
}
MPI_SHIM_ALIAS(MPI_Ssend);

int PMPI_Rsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	/* A ready send may go as a standard one: the receive is posted. */
	return send_blocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_READY, "MPI_Rsend");
}
MPI_SHIM_ALIAS(MPI_Rsend);

int PMPI_Bsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_args(buf, count, t, dst, tag, comm, 0, "MPI_Bsend")))
		return rc;
	return mpi_shim_bsend_start(buf, count, t, dst, tag, comm, NULL, "MPI_Bsend");
}
MPI_SHIM_ALIAS(MPI_Bsend);

static int send_nonblocking(const void *buf, int count, MPI_Datatype t, int dst, int tag,
			    MPI_Comm comm, int mode, MPI_Request *req, const char *call)
{
	struct mpi_shim_request *r;
	int rc;

	if ((rc = check_args(buf, count, t, dst, tag, comm, 0, call)) ||
	    (rc = check_request_ptr(comm, req, call)))
		return rc;
	r = mpi_shim_req_alloc();
	if (mpi_shim_unlikely(!r))
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a request");
	if (mode == MPI_SHIM_MODE_BUFFERED) {
		/* The data is copied before the call returns: done at once. */
		r->kind = MPI_SHIM_REQ_SEND;
		r->ops = &mpi_shim_bsend_ops;
		r->mode = MPI_SHIM_MODE_BUFFERED;
		r->comm = comm;
		r->peer = dst;
		rc = mpi_shim_bsend_start(buf, count, t, dst, tag, comm, r, call);
		if (rc) {
			mpi_shim_req_free(r);
			return rc;
		}
		r->done = 1;
	} else {
		rc = mpi_shim_send_start(r, buf, count, t, dst, tag, comm, comm->ctx, mode);
		if (mpi_shim_unlikely(rc)) {
			mpi_shim_req_free(r);
			return failed_start(comm, rc, call, dst);
		}
	}
	r->active = 1;
	*req = r;
	return MPI_SUCCESS;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
	       MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return send_nonblocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_STANDARD, req,
				"MPI_Isend");
}
MPI_SHIM_ALIAS(MPI_Isend);

int PMPI_Issend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
		MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return send_nonblocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_SYNC, req,
				"MPI_Issend");
}
MPI_SHIM_ALIAS(MPI_Issend);

int PMPI_Irsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
		MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return send_nonblocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_READY, req,
				"MPI_Irsend");
}
MPI_SHIM_ALIAS(MPI_Irsend);

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
		MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return send_nonblocking(buf, count, t, dst, tag, comm, MPI_SHIM_MODE_BUFFERED, req,
				"MPI_Ibsend");
}
MPI_SHIM_ALIAS(MPI_Ibsend);

int PMPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
	      MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_request *r;
	int rc;

	if ((rc = check_args(buf, count, t, src, tag, comm, 1, "MPI_Recv")))
		return rc;
	r = mpi_shim_req_alloc();
	if (mpi_shim_unlikely(!r))
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, "MPI_Recv", "no memory for a request");
	mpi_shim_recv_start(r, buf, count, t, src, tag, comm, comm->ctx);
	if (!r->done && (rc = mpi_shim_wait_done(r, "MPI_Recv", 1)))
		return rc;
	if (status && status != MPI_STATUS_IGNORE)
		mpi_shim_status_report(status, &r->status);
	rc = r->error;
	if (mpi_shim_unlikely(rc)) {
		rc = mpi_shim_err(comm, rc, "MPI_Recv",
				  "message of %zu bytes from rank %d with tag %d is longer than "
				  "the receive buffer (%zu bytes)",
				  r->len, r->status.MPI_SOURCE, r->status.MPI_TAG, r->bytes);
	}
	mpi_shim_req_free(r);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Recv);

int PMPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
	       MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_request *r;
	int rc;

	if ((rc = check_args(buf, count, t, src, tag, comm, 1, "MPI_Irecv")) ||
	    (rc = check_request_ptr(comm, req, "MPI_Irecv")))
		return rc;
	r = mpi_shim_req_alloc();
	if (mpi_shim_unlikely(!r))
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, "MPI_Irecv", "no memory for a request");
	mpi_shim_recv_start(r, buf, count, t, src, tag, comm, comm->ctx);
	r->active = 1;
	*req = r;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Irecv);

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
		  void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
		  MPI_Status *status)
{
	MPI_SHIM_ENTER();
	MPI_Request reqs[2];
	MPI_Status sts[2];
	int rc;

	if ((rc = check_args(sbuf, scount, stype, dst, stag, comm, 0, "MPI_Sendrecv")) ||
	    (rc = check_args(rbuf, rcount, rtype, src, rtag, comm, 1, "MPI_Sendrecv")))
		return rc;
	if ((rc = PMPI_Irecv(rbuf, rcount, rtype, src, rtag, comm, &reqs[1])))
		return rc;
	if ((rc = PMPI_Isend(sbuf, scount, stype, dst, stag, comm, &reqs[0]))) {
		PMPI_Cancel(&reqs[1]);
		PMPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
		return rc;
	}
	rc = PMPI_Waitall(2, reqs, sts);
	if (status && status != MPI_STATUS_IGNORE)
		mpi_shim_status_report(status, &sts[1]);
	if (rc == MPI_ERR_IN_STATUS)
		rc = sts[0].MPI_ERROR ? sts[0].MPI_ERROR : sts[1].MPI_ERROR;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Sendrecv);

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dst, int stag, int src,
			  int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	size_t bytes;
	void *copy;
	int rc;

	if ((rc = check_args(buf, count, t, dst, stag, comm, 0, "MPI_Sendrecv_replace")) ||
	    (rc = check_args(buf, count, t, src, rtag, comm, 1, "MPI_Sendrecv_replace")))
		return rc;
	/* The data to send, packed, so that the receive may overwrite buf. */
	bytes = (size_t)count * t->size;
	copy = malloc(bytes ? bytes : 1);
	if (!copy)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace",
				    "no memory to keep %zu bytes", bytes);
	if (bytes)
		mpi_shim_datatype_pack(buf, count, t, 0, copy, bytes);
	rc = PMPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dst, stag, buf, count, t, src, rtag, comm,
			   status);
	free(copy);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Sendrecv_replace);

/* --- persistent requests --- */

static int init_request(const void *buf, int count, MPI_Datatype t, int peer, int tag,
			MPI_Comm comm, int recv, int mode, MPI_Request *req, const char *call)
{
	struct mpi_shim_request *r;
	int rc;

	if ((rc = check_args(buf, count, t, peer, tag, comm, recv, call)) ||
	    (rc = check_request_ptr(comm, req, call)))
		return rc;
	r = mpi_shim_req_alloc();
	if (!r)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a request");
	r->kind = recv ? MPI_SHIM_REQ_RECV : MPI_SHIM_REQ_SEND;
	r->ops = mode == MPI_SHIM_MODE_BUFFERED ? &mpi_shim_bsend_ops : &mpi_shim_p2p_ops;
	r->mode = (uint8_t)mode;
	r->persistent = 1;
	r->buf = (void *)buf;
	r->count = count;
	r->type = t;
	r->peer = peer;
	r->tag = tag;
	r->comm = comm;
	r->ctx = comm->ctx;
	mpi_shim_status_empty(&r->status);
	/* The type stays while the request exists (released with it). */
	if (!t->predefined)
		mpi_shim_datatype_retain(t);
	*req = r;
	return MPI_SUCCESS;
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
		   MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return init_request(buf, count, t, dst, tag, comm, 0, MPI_SHIM_MODE_STANDARD, req,
			    "MPI_Send_init");
}
MPI_SHIM_ALIAS(MPI_Send_init);

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype t, int dst, int tag,
		    MPI_Comm comm, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return init_request(buf, count, t, dst, tag, comm, 0, MPI_SHIM_MODE_BUFFERED, req,
			    "MPI_Bsend_init");
}
MPI_SHIM_ALIAS(MPI_Bsend_init);

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype t, int dst, int tag,
		    MPI_Comm comm, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return init_request(buf, count, t, dst, tag, comm, 0, MPI_SHIM_MODE_SYNC, req,
			    "MPI_Ssend_init");
}
MPI_SHIM_ALIAS(MPI_Ssend_init);

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype t, int dst, int tag,
		    MPI_Comm comm, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return init_request(buf, count, t, dst, tag, comm, 0, MPI_SHIM_MODE_READY, req,
			    "MPI_Rsend_init");
}
MPI_SHIM_ALIAS(MPI_Rsend_init);

int PMPI_Recv_init(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
		   MPI_Request *req)
{
	MPI_SHIM_ENTER();
	return init_request(buf, count, t, src, tag, comm, 1, MPI_SHIM_MODE_STANDARD, req,
			    "MPI_Recv_init");
}
MPI_SHIM_ALIAS(MPI_Recv_init);

/* --- probe and status --- */

static int check_probe(int src, int tag, MPI_Comm comm, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = mpi_shim_check_rank(comm, src, 1, call)) ||
	    (rc = mpi_shim_check_tag(comm, tag, 1, call)))
		return rc;
	return MPI_SUCCESS;
}

/* The status of a probe of MPI_PROC_NULL; MPI_ERROR stays the program's
 * (a call returning one status does not set it). */
static void status_proc_null(MPI_Status *status)
{
	if (status && status != MPI_STATUS_IGNORE) {
		int err = status->MPI_ERROR;

		mpi_shim_status_empty(status);
		status->MPI_SOURCE = MPI_PROC_NULL;
		status->MPI_ERROR = err;
	}
}

int PMPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_probe(src, tag, comm, "MPI_Iprobe")))
		return rc;
	if (!flag)
		return mpi_shim_err(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
	if (src == MPI_PROC_NULL) {
		*flag = 1;
		status_proc_null(status);
		return MPI_SUCCESS;
	}
	mpi_shim_progress();
	*flag = mpi_shim_probe_unexpected(comm, src, tag, status);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Iprobe);

int PMPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct bip_layer_wait w = { 0, 0 };
	int rc;

	if ((rc = check_probe(src, tag, comm, "MPI_Probe")))
		return rc;
	if (src == MPI_PROC_NULL) {
		status_proc_null(status);
		return MPI_SUCCESS;
	}
	for (;;) {
		mpi_shim_progress();
		if (mpi_shim_probe_unexpected(comm, src, tag, status))
			return MPI_SUCCESS;
		if (mpi_shim_progress_wait(&w) < 0) {
			mpi_shim_progress();
			if (mpi_shim_probe_unexpected(comm, src, tag, status))
				return MPI_SUCCESS;
			return mpi_shim_err(comm, MPI_ERR_OTHER, "MPI_Probe",
					    "every other process has ended: no message from rank %d "
					    "with tag %d can come", src, tag);
		}
	}
}
MPI_SHIM_ALIAS(MPI_Probe);

static int check_status_type(const MPI_Status *status, MPI_Datatype t, void *out,
			     const char *call)
{
	int rc;

	if (!status || status == MPI_STATUS_IGNORE || !out)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "status or result is NULL or MPI_STATUS_IGNORE");
	if ((rc = mpi_shim_check_type(MPI_COMM_NULL, t, call)))
		return rc;
	return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype t, int *count)
{
	MPI_SHIM_ENTER();
	MPI_Count bytes;
	int rc;

	if ((rc = check_status_type(status, t, count, "MPI_Get_count")))
		return rc;
	bytes = status->mpi_shim_bytes;
	if (t->size == 0)
		*count = bytes ? MPI_UNDEFINED : 0;
	else if (bytes % (MPI_Count)t->size || bytes / (MPI_Count)t->size > INT_MAX)
		*count = MPI_UNDEFINED;
	else
		*count = (int)(bytes / (MPI_Count)t->size);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_count);

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype t, MPI_Count *count)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_status_type(status, t, count, "MPI_Get_elements")))
		return rc;
	*count = mpi_shim_datatype_elements(t, status->mpi_shim_bytes);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_elements_x);

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype t, int *count)
{
	MPI_SHIM_ENTER();
	MPI_Count n;
	int rc;

	if ((rc = check_status_type(status, t, count, "MPI_Get_elements")))
		return rc;
	n = mpi_shim_datatype_elements(t, status->mpi_shim_bytes);
	*count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_elements);

static int set_elements(MPI_Status *status, MPI_Datatype t, MPI_Count count, const char *call)
{
	int rc;

	if ((rc = check_status_type(status, t, status, call)))
		return rc;
	if (count < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call, "count %lld is negative",
				    (long long)count);
	status->mpi_shim_bytes = mpi_shim_datatype_elements_bytes(t, count);
	return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype t, int count)
{
	MPI_SHIM_ENTER();
	return set_elements(status, t, count, "MPI_Status_set_elements");
}
MPI_SHIM_ALIAS(MPI_Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype t, MPI_Count count)
{
	MPI_SHIM_ENTER();
	return set_elements(status, t, count, "MPI_Status_set_elements_x");
}
MPI_SHIM_ALIAS(MPI_Status_set_elements_x);

int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype t, MPI_Count count)
{
	MPI_SHIM_ENTER();
	return set_elements(status, t, count, "MPI_Status_set_elements_c");
}
MPI_SHIM_ALIAS(MPI_Status_set_elements_c);

/* --- matched probe: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv --- */

/* A message handle: the message taken out of the queue, and its
 * communicator (held until the message is received). */
struct mpi_shim_message {
	void *msg;
	MPI_Comm comm;
};

struct mpi_shim_message mpi_shim_message_no_proc;

static int claim(int src, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status,
		 const char *call)
{
	struct mpi_shim_message *m;
	void *u;

	m = malloc(sizeof(*m));
	if (!m)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a message handle");
	u = mpi_shim_message_claim(comm, src, tag, status);
	if (!u) {
		free(m);
		return 0;
	}
	m->msg = u;
	m->comm = comm;
	comm->refcount++;
	*message = m;
	return 1;
}

static int check_mprobe(int src, int tag, MPI_Comm comm, MPI_Message *message, const char *call)
{
	int rc;

	if ((rc = check_probe(src, tag, comm, call)))
		return rc;
	if (!message)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "message is NULL");
	return MPI_SUCCESS;
}

int PMPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
		 MPI_Status *status)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_mprobe(src, tag, comm, message, "MPI_Improbe")))
		return rc;
	if (!flag)
		return mpi_shim_err(comm, MPI_ERR_ARG, "MPI_Improbe", "flag is NULL");
	if (src == MPI_PROC_NULL) {
		*flag = 1;
		*message = MPI_MESSAGE_NO_PROC;
		status_proc_null(status);
		return MPI_SUCCESS;
	}
	mpi_shim_progress();
	rc = claim(src, tag, comm, message, status, "MPI_Improbe");
	if (rc < 0 || rc > 1)
		return rc;
	*flag = rc;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Improbe);

int PMPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct bip_layer_wait w = { 0, 0 };
	int rc;

	if ((rc = check_mprobe(src, tag, comm, message, "MPI_Mprobe")))
		return rc;
	if (src == MPI_PROC_NULL) {
		*message = MPI_MESSAGE_NO_PROC;
		status_proc_null(status);
		return MPI_SUCCESS;
	}
	for (int dead = 0;;) {
		mpi_shim_progress();
		rc = claim(src, tag, comm, message, status, "MPI_Mprobe");
		if (rc)
			return rc == 1 ? MPI_SUCCESS : rc;
		if (dead)
			return mpi_shim_err(comm, MPI_ERR_OTHER, "MPI_Mprobe",
					    "every other process has ended: no message from rank %d "
					    "with tag %d can come", src, tag);
		dead = mpi_shim_progress_wait(&w) < 0;
	}
}
MPI_SHIM_ALIAS(MPI_Mprobe);

static int check_mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *message,
		       const char *call)
{
	MPI_Comm comm;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!message || *message == MPI_MESSAGE_NULL)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_REQUEST, call,
				    "the message is %s (not from MPI_Mprobe or MPI_Improbe, "
				    "or already received)", message ? "MPI_MESSAGE_NULL" : "NULL");
	comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_NULL : (*message)->comm;
	if ((rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, t, call)) ||
	    (rc = mpi_shim_check_buf(comm, buf, count, t, call)))
		return rc;
	return MPI_SUCCESS;
}

/* Start the receive of *message on r; *message becomes MPI_MESSAGE_NULL. */
static void mrecv_start(struct mpi_shim_request *r, void *buf, int count, MPI_Datatype t,
			MPI_Message *message)
{
	struct mpi_shim_message *m = *message;

	*message = MPI_MESSAGE_NULL;
	if (m == MPI_MESSAGE_NO_PROC) {
		mpi_shim_recv_start(r, buf, (size_t)count, t, MPI_PROC_NULL, 0, MPI_COMM_SELF,
				    MPI_COMM_SELF->ctx);
		return;
	}
	mpi_shim_message_recv(r, buf, (size_t)count, t, m->comm, m->msg);
	mpi_shim_comm_release(m->comm);
	free(m);
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *message, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_request *r;
	MPI_Comm comm;
	int rc;

	if ((rc = check_mrecv(buf, count, t, message, "MPI_Mrecv")))
		return rc;
	comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_SELF : (*message)->comm;
	r = mpi_shim_req_alloc();
	if (mpi_shim_unlikely(!r))
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, "MPI_Mrecv", "no memory for a request");
	mrecv_start(r, buf, count, t, message);
	if (!r->done && (rc = mpi_shim_wait_done(r, "MPI_Mrecv", 1)))
		return rc;
	if (status && status != MPI_STATUS_IGNORE)
		mpi_shim_status_report(status, &r->status);
	rc = r->error;
	if (mpi_shim_unlikely(rc)) {
		rc = mpi_shim_err(comm, rc, "MPI_Mrecv",
				  "message of %zu bytes from rank %d with tag %d is longer than "
				  "the receive buffer (%zu bytes)",
				  r->len, r->status.MPI_SOURCE, r->status.MPI_TAG, r->bytes);
	}
	mpi_shim_req_free(r);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Mrecv);

int PMPI_Imrecv(void *buf, int count, MPI_Datatype t, MPI_Message *message, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_request *r;
	MPI_Comm comm;
	int rc;

	if ((rc = check_mrecv(buf, count, t, message, "MPI_Imrecv")))
		return rc;
	comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_SELF : (*message)->comm;
	if ((rc = check_request_ptr(comm, req, "MPI_Imrecv")))
		return rc;
	r = mpi_shim_req_alloc();
	if (mpi_shim_unlikely(!r))
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, "MPI_Imrecv", "no memory for a request");
	mrecv_start(r, buf, count, t, message);
	r->active = 1;
	*req = r;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Imrecv);
