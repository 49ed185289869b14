/* SPDX-License-Identifier: MIT */
/*
 * coll_errors.c - misuse of the collectives under MPI_ERRORS_RETURN: each
 * bad argument gets its error class (a bad root MPI_ERR_ROOT, a bad or
 * inapplicable operation MPI_ERR_OP, a negative count MPI_ERR_COUNT, a null
 * datatype MPI_ERR_TYPE, a null communicator MPI_ERR_COMM, the same buffer
 * for sending and receiving or MPI_IN_PLACE where it is not allowed
 * MPI_ERR_BUFFER, a missing array MPI_ERR_ARG, more data than the receive
 * buffer holds MPI_ERR_TRUNCATE) from the blocking and non-blocking forms
 * alike, and the communicator still works afterwards.
 *
 *   bipload -sz N coll_errors
 */
#include "coll_check.h"

#define EXPECT(cls, call)                                                                    \
	do {                                                                                 \
		int rc_ = (call);                                                            \
		CHECK(rc_ == (cls), "%s returned %d, want %s (%d)", #call, rc_, #cls, cls);  \
	} while (0)

static void still_works(MPI_Comm c)
{
	int r, p, x, y;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	x = r + 1;
	OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
	CHECK(y == p * (p + 1) / 2, "MPI_Allreduce after the errors gives %d", y);
	OK(MPI_Barrier(c));
}

static void test_comm(MPI_Comm c)
{
	int r, p, i, a[16] = { 0 }, b[16 * 16] = { 0 }, counts[16], displs[16];
	MPI_Datatype types[16];
	MPI_Request req = MPI_REQUEST_NULL;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < 16; i++) {
		counts[i] = 1;
		displs[i] = i;
		types[i] = MPI_INT;
	}
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));

	/* Roots out of range, the same on every rank. */
	EXPECT(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, p, c));
	EXPECT(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, -1, c));
	EXPECT(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, p + 3, c));
	EXPECT(MPI_ERR_ROOT, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -2, c));
	EXPECT(MPI_ERR_ROOT, MPI_Gatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, p, c));
	EXPECT(MPI_ERR_ROOT, MPI_Scatter(b, 1, MPI_INT, a, 1, MPI_INT, p, c));
	EXPECT(MPI_ERR_ROOT, MPI_Scatterv(b, counts, displs, MPI_INT, a, 1, MPI_INT, p, c));
	EXPECT(MPI_ERR_ROOT, MPI_Ibcast(a, 1, MPI_INT, p, c, &req));
	EXPECT(MPI_ERR_ROOT, MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, -1, c, &req));
	EXPECT(MPI_ERR_ROOT, MPI_Igather(a, 1, MPI_INT, b, 1, MPI_INT, p, c, &req));
	EXPECT(MPI_ERR_ROOT, MPI_Iscatter(b, 1, MPI_INT, a, 1, MPI_INT, p, c, &req));

	/* Operations: null, or not defined on the datatype. */
	EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, c));
	EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_BAND, c));
	EXPECT(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_INT, MPI_MINLOC, 0, c));
	EXPECT(MPI_ERR_OP, MPI_Scan(a, b, 1, MPI_WCHAR, MPI_SUM, c));
	EXPECT(MPI_ERR_OP, MPI_Exscan(a, b, 1, MPI_FLOAT, MPI_LXOR, c));
	EXPECT(MPI_ERR_OP, MPI_Reduce_scatter_block(a, b, 1, MPI_2INT, MPI_SUM, c));
	EXPECT(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_REPLACE, c));
	EXPECT(MPI_ERR_OP, MPI_Iallreduce(a, b, 1, MPI_C_BOOL, MPI_MAX, c, &req));
	EXPECT(MPI_ERR_OP, MPI_Ireduce(a, b, 1, MPI_BYTE, MPI_SUM, 0, c, &req));
	CHECK(req == MPI_REQUEST_NULL, "a refused call set the request");

	/* Counts. */
	EXPECT(MPI_ERR_COUNT, MPI_Bcast(a, -1, MPI_INT, 0, c));
	EXPECT(MPI_ERR_COUNT, MPI_Allreduce(a, b, -5, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_COUNT, MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT, MPI_Alltoall(a, 1, MPI_INT, b, -1, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, c));
	counts[p - 1] = -1;
	EXPECT(MPI_ERR_COUNT, MPI_Allgatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_COUNT, MPI_Ialltoallv(a, counts, displs, MPI_INT, b, counts, displs,
					     MPI_INT, c, &req));
	counts[p - 1] = 1;

	/* Datatypes. */
	EXPECT(MPI_ERR_TYPE, MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, c));
	EXPECT(MPI_ERR_TYPE, MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, c));
	EXPECT(MPI_ERR_TYPE, MPI_Allgather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, c));
	EXPECT(MPI_ERR_TYPE, MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, c, &req));
	types[p - 1] = MPI_DATATYPE_NULL;
	EXPECT(MPI_ERR_TYPE, MPI_Alltoallw(a, counts, displs, types, b, counts, displs, types,
					   c));
	types[p - 1] = MPI_INT;

	/* Buffers: aliased, or MPI_IN_PLACE where the standard has none. */
	EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(a, a, 1, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_BUFFER, MPI_Iallreduce(a, a, 1, MPI_INT, MPI_SUM, c, &req));
	EXPECT(MPI_ERR_BUFFER, MPI_Allgather(b, 1, MPI_INT, b, 1, MPI_INT, c));
	EXPECT(MPI_ERR_BUFFER, MPI_Alltoall(b, 1, MPI_INT, b, 1, MPI_INT, c));
	EXPECT(MPI_ERR_BUFFER, MPI_Scan(a, a, 1, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_BUFFER, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, c));
	EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_BUFFER, MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, c));
	/*
	 * Where only the root may pass MPI_IN_PLACE, every other rank errs;
	 * the root errs too here (a negative count), so that no rank waits
	 * for the others.
	 */
	if (p > 1) {
		int root = p - 1;

		EXPECT(r == root ? MPI_ERR_COUNT : MPI_ERR_BUFFER,
		       MPI_Reduce(MPI_IN_PLACE, b, r == root ? -1 : 1, MPI_INT, MPI_SUM, root, c));
		EXPECT(r == root ? MPI_ERR_COUNT : MPI_ERR_BUFFER,
		       MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, b, r == root ? -1 : 1, MPI_INT, root,
				  c));
		EXPECT(r == root ? MPI_ERR_COUNT : MPI_ERR_BUFFER,
		       MPI_Scatter(b, r == root ? -1 : 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root,
				   c));
	}

	/* Arrays missing. */
	EXPECT(MPI_ERR_ARG, MPI_Allgatherv(a, 1, MPI_INT, b, NULL, displs, MPI_INT, c));
	EXPECT(MPI_ERR_ARG, MPI_Alltoallv(a, counts, NULL, MPI_INT, b, counts, displs, MPI_INT,
					  c));
	EXPECT(MPI_ERR_ARG, MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_ARG, MPI_Gatherv(a, 1, MPI_INT, b, NULL, displs, MPI_INT, r, c));

	/* A rank's own block larger than its slot. */
	EXPECT(MPI_ERR_TRUNCATE, MPI_Allgather(a, 2, MPI_INT, b, 1, MPI_INT, c));
	EXPECT(MPI_ERR_TRUNCATE, MPI_Alltoall(a, 2, MPI_INT, b, 1, MPI_INT, c));

	/*
	 * Counts that disagree between ranks: the others send 2 elements to a
	 * root that has room for 1 from each.  The root sees MPI_ERR_TRUNCATE,
	 * the others' sends complete, and the communicator goes on working.
	 */
	if (p > 1) {
		a[0] = a[1] = r;
		EXPECT(r == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS,
		       MPI_Gather(a, r == 0 ? 1 : 2, MPI_INT, b, 1, MPI_INT, 0, c));
		OK(MPI_Igather(a, r == 0 ? 1 : 2, MPI_INT, b, 1, MPI_INT, 0, c, &req));
		EXPECT(r == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS, MPI_Wait(&req, MPI_STATUS_IGNORE));
	}

	still_works(c);
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
	int k, rc, x = 0, y;

	coll_init(&argc, &argv);
	for (k = 0; k < COLL_NCOMMS; k++) {
		const char *cname;
		MPI_Comm c = coll_comm(k, &cname);
		char where[96];

		snprintf(where, sizeof(where), "on %s", cname);
		coll_where = where;
		test_comm(c);
		coll_comm_done(&c);
	}

	/* A null communicator: reported through MPI_COMM_WORLD's handler. */
	coll_where = "MPI_COMM_NULL";
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	rc = MPI_Barrier(MPI_COMM_NULL);
	CHECK(rc == MPI_ERR_COMM, "MPI_Barrier(MPI_COMM_NULL) returned %d", rc);
	rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
	CHECK(rc == MPI_ERR_COMM, "MPI_Allreduce(MPI_COMM_NULL) returned %d", rc);
	{
		MPI_Request req;

		rc = MPI_Ibarrier(MPI_COMM_NULL, &req);
		CHECK(rc == MPI_ERR_COMM, "MPI_Ibarrier(MPI_COMM_NULL) returned %d", rc);
	}
	rc = MPI_Op_create(NULL, 1, NULL);
	CHECK(rc == MPI_ERR_ARG, "MPI_Op_create(NULL) returned %d", rc);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	still_works(MPI_COMM_WORLD);

	coll_where = "finalize";
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll_errors: passed\n");
	return 0;
}
