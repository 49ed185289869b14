/* SPDX-License-Identifier: MIT */
/*
 * pt2pt_large.c - the large-count (MPI-4.0 "_c") forms of the
 * point-to-point calls: MPI_Send_c ... MPI_Isendrecv_replace_c.
 *
 * Each takes its count as an MPI_Count and calls the int form: directly
 * when the count fits an int (or is negative, which the int form refuses
 * with MPI_ERR_COUNT), otherwise with one element of a contiguous type of
 * count elements (MPI_Type_contiguous_c), which moves the same bytes and
 * whose receive status counts in the same bytes.  A message still carries
 * at most what one BIP message carries (mpi_shim(7), Sizes).  The argument
 * checks are the int form's, and its name is the one an error message
 * shows.
 */
#include <limits.h>

#include "shim.h"

struct large {
	int n;
	MPI_Datatype t;     /* the type to pass */
	MPI_Datatype block; /* a contiguous type made for it, or NULL */
};

static int large_of(MPI_Count count, MPI_Datatype t, struct large *l)
{
	int rc;

	l->block = MPI_DATATYPE_NULL;
	l->t = t;
	if (count <= INT_MAX) {
		l->n = count < 0 ? -1 : (int)count;
		return MPI_SUCCESS;
	}
	if ((rc = PMPI_Type_contiguous_c(count, t, &l->block)) ||
	    (rc = PMPI_Type_commit(&l->block)))
		return rc;
	l->n = 1;
	l->t = l->block;
	return MPI_SUCCESS;
}

/* The call holds its own reference on the type (requests keep it). */
static int large_done(struct large *l, int rc)
{
	if (l->block != MPI_DATATYPE_NULL)
		PMPI_Type_free(&l->block);
	return rc;
}

#define LARGE_SEND(name)                                                                       \
	int P##name##_c(const void *buf, MPI_Count count, MPI_Datatype t, int dst, int tag,     \
			MPI_Comm comm)                                                          \
	{                                                                                      \
		MPI_SHIM_ENTER();                                                              \
		struct large l;                                                                \
		int rc = large_of(count, t, &l);                                               \
                                                                                               \
		return rc ? rc : large_done(&l, P##name(buf, l.n, l.t, dst, tag, comm));       \
	}                                                                                      \
	MPI_SHIM_ALIAS(name##_c)

#define LARGE_ISEND(name)                                                                      \
	int P##name##_c(const void *buf, MPI_Count count, MPI_Datatype t, int dst, int tag,     \
			MPI_Comm comm, MPI_Request *req)                                        \
	{                                                                                      \
		MPI_SHIM_ENTER();                                                              \
		struct large l;                                                                \
		int rc = large_of(count, t, &l);                                               \
                                                                                               \
		return rc ? rc : large_done(&l, P##name(buf, l.n, l.t, dst, tag, comm, req));  \
	}                                                                                      \
	MPI_SHIM_ALIAS(name##_c)

LARGE_SEND(MPI_Send);
LARGE_SEND(MPI_Bsend);
LARGE_SEND(MPI_Ssend);
LARGE_SEND(MPI_Rsend);
LARGE_ISEND(MPI_Isend);
LARGE_ISEND(MPI_Ibsend);
LARGE_ISEND(MPI_Issend);
LARGE_ISEND(MPI_Irsend);
LARGE_ISEND(MPI_Send_init);
LARGE_ISEND(MPI_Bsend_init);
LARGE_ISEND(MPI_Ssend_init);
LARGE_ISEND(MPI_Rsend_init);

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
		MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc : large_done(&l, PMPI_Recv(buf, l.n, l.t, src, tag, comm, status));
}
MPI_SHIM_ALIAS(MPI_Recv_c);

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
		 MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc : large_done(&l, PMPI_Irecv(buf, l.n, l.t, src, tag, comm, req));
}
MPI_SHIM_ALIAS(MPI_Irecv_c);

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag,
		     MPI_Comm comm, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc : large_done(&l, PMPI_Recv_init(buf, l.n, l.t, src, tag, comm, req));
}
MPI_SHIM_ALIAS(MPI_Recv_init_c);

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype t, MPI_Message *message,
		 MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc : large_done(&l, PMPI_Mrecv(buf, l.n, l.t, message, status));
}
MPI_SHIM_ALIAS(MPI_Mrecv_c);

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype t, MPI_Message *message,
		  MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc : large_done(&l, PMPI_Imrecv(buf, l.n, l.t, message, req));
}
MPI_SHIM_ALIAS(MPI_Imrecv_c);

int PMPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dst, int stag,
		    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag,
		    MPI_Comm comm, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct large s, r;
	int rc;

	if ((rc = large_of(scount, stype, &s)))
		return rc;
	if ((rc = large_of(rcount, rtype, &r)))
		return large_done(&s, rc);
	rc = PMPI_Sendrecv(sbuf, s.n, s.t, dst, stag, rbuf, r.n, r.t, src, rtag, comm, status);
	large_done(&s, 0);
	return large_done(&r, rc);
}
MPI_SHIM_ALIAS(MPI_Sendrecv_c);

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype t, int dst, int stag,
			    int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc :
		    large_done(&l, PMPI_Sendrecv_replace(buf, l.n, l.t, dst, stag, src, rtag, comm,
							 status));
}
MPI_SHIM_ALIAS(MPI_Sendrecv_replace_c);

int PMPI_Isendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dst, int stag,
		     void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag,
		     MPI_Comm comm, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct large s, r;
	int rc;

	if ((rc = large_of(scount, stype, &s)))
		return rc;
	if ((rc = large_of(rcount, rtype, &r)))
		return large_done(&s, rc);
	rc = PMPI_Isendrecv(sbuf, s.n, s.t, dst, stag, rbuf, r.n, r.t, src, rtag, comm, req);
	large_done(&s, 0);
	return large_done(&r, rc);
}
MPI_SHIM_ALIAS(MPI_Isendrecv_c);

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype t, int dst, int stag,
			     int src, int rtag, MPI_Comm comm, MPI_Request *req)
{
	MPI_SHIM_ENTER();
	struct large l;
	int rc = large_of(count, t, &l);

	return rc ? rc :
		    large_done(&l, PMPI_Isendrecv_replace(buf, l.n, l.t, dst, stag, src, rtag, comm,
							  req));
}
MPI_SHIM_ALIAS(MPI_Isendrecv_replace_c);
