/* SPDX-License-Identifier: MIT */
/*
 * greq.c - tests of generalized requests, MPI-4.0 persistent collectives
 * and MPI_Isendrecv[_replace], run through bipload:
 *   bipload -sz N greq TEST
 *   greq       the callbacks of generalized requests: when each is called,
 *              how often, with what, and what their error codes become,
 *              through every Wait/Test call and MPI_Request_get_status
 *   pcoll      every persistent collective started several times (Start,
 *              Startall; in another order on each rank), with a blocking
 *              collective between, completed
 *              by Waitall, Wait and Test, every result checked each time;
 *              misuse by class
 *   isendrecv  ring exchanges, replace, MPI_PROC_NULL peers, a long
 *              (rendezvous) message, truncation, misuse by class
 */
#include "coll_check.h"

static int rank, size;

/* A call that must fail with class cls. */
#define FAILS(cls, call)                                                                     \
	do {                                                                                 \
		int fails_rc_ = (call);                                                      \
		CHECK(fails_rc_ == (cls), "returned %d, not %s (%d)", fails_rc_, #cls, cls); \
	} while (0)

/* --- generalized requests --- */

struct greq_state {
	int queries, frees, cancels, last_complete;
	int query_rc, free_rc, cancel_rc;
	int order;      /* 1 if free_fn came after a query_fn (or no query) */
	int count;      /* elements the query reports */
	int cancelled;  /* the query says cancelled */
};

static int query_fn(void *extra, MPI_Status *st)
{
	struct greq_state *g = extra;

	g->queries++;
	st->MPI_SOURCE = 7;
	st->MPI_TAG = 11;
	MPI_Status_set_elements(st, MPI_INT, g->count);
	MPI_Status_set_cancelled(st, g->cancelled);
	return g->query_rc;
}

static int free_fn(void *extra)
{
	struct greq_state *g = extra;

	g->frees++;
	return g->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
	struct greq_state *g = extra;

	g->cancels++;
	g->last_complete = complete;
	return g->cancel_rc;
}

static MPI_Request greq_new(struct greq_state *g)
{
	MPI_Request r = MPI_REQUEST_NULL;

	memset(g, 0, sizeof(*g));
	g->count = 3;
	OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &r));
	CHECK(r != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
	return r;
}

static void check_status(const MPI_Status *st, int count)
{
	int n = -1, flag = -1;

	CHECK(st->MPI_SOURCE == 7 && st->MPI_TAG == 11, "status source %d tag %d",
	      st->MPI_SOURCE, st->MPI_TAG);
	OK(MPI_Get_count(st, MPI_INT, &n));
	CHECK(n == count, "count %d, not %d", n, count);
	OK(MPI_Test_cancelled(st, &flag));
	CHECK(flag == 0, "cancelled %d", flag);
}

static void greq_basic(void)
{
	struct greq_state g, h;
	MPI_Request r, q, reqs[3];
	MPI_Status st, sts[3];
	int flag, idx, out, ind[3];

	/* Not complete: Test says so and calls nothing. */
	r = greq_new(&g);
	OK(MPI_Test(&r, &flag, &st));
	CHECK(!flag && g.queries == 0 && g.frees == 0, "Test before completion: flag %d", flag);
	OK(MPI_Request_get_status(r, &flag, &st));
	CHECK(!flag && g.queries == 0, "get_status before completion: flag %d", flag);
	OK(MPI_Grequest_complete(r));
	CHECK(g.queries == 0 && g.frees == 0, "Grequest_complete called a callback");
	/* get_status queries, frees nothing; each call queries again. */
	OK(MPI_Request_get_status(r, &flag, &st));
	CHECK(flag && g.queries == 1 && g.frees == 0, "get_status: flag %d q %d f %d", flag,
	      g.queries, g.frees);
	check_status(&st, 3);
	g.count = 4;
	OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
	CHECK(flag && g.queries == 2 && g.frees == 0, "get_status again: q %d", g.queries);
	/* Wait: query then free, once each; the handle becomes null. */
	OK(MPI_Wait(&r, &st));
	CHECK(r == MPI_REQUEST_NULL, "Wait left the handle");
	CHECK(g.queries == 3 && g.frees == 1, "Wait: q %d f %d", g.queries, g.frees);
	check_status(&st, 4);
	/* With MPI_STATUS_IGNORE the query is still made. */
	r = greq_new(&g);
	OK(MPI_Grequest_complete(r));
	OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
	CHECK(flag && r == MPI_REQUEST_NULL && g.queries == 1 && g.frees == 1,
	      "Test: flag %d q %d f %d", flag, g.queries, g.frees);

	/* MPI_Request_free before completion: free_fn at MPI_Grequest_complete,
	 * no query ever. */
	r = greq_new(&g);
	q = r;
	OK(MPI_Request_free(&r));
	CHECK(r == MPI_REQUEST_NULL && g.frees == 0, "Request_free: f %d", g.frees);
	OK(MPI_Grequest_complete(q));
	CHECK(g.frees == 1 && g.queries == 0, "complete after free: q %d f %d", g.queries,
	      g.frees);
	/* ... after completion: free_fn in MPI_Request_free. */
	r = greq_new(&g);
	OK(MPI_Grequest_complete(r));
	OK(MPI_Request_free(&r));
	CHECK(g.frees == 1 && g.queries == 0, "free after complete: q %d f %d", g.queries,
	      g.frees);

	/* Cancel: cancel_fn with complete = 0, then 1; the query reports it. */
	r = greq_new(&g);
	OK(MPI_Cancel(&r));
	CHECK(g.cancels == 1 && g.last_complete == 0, "cancel before: %d %d", g.cancels,
	      g.last_complete);
	g.cancelled = 1;
	OK(MPI_Grequest_complete(r));
	OK(MPI_Cancel(&r));
	CHECK(g.cancels == 2 && g.last_complete == 1, "cancel after: %d %d", g.cancels,
	      g.last_complete);
	OK(MPI_Wait(&r, &st));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag == 1, "not cancelled in the status");

	/* The array calls: only complete ones are reported and queried. */
	reqs[0] = greq_new(&g);
	reqs[1] = greq_new(&h);
	reqs[2] = MPI_REQUEST_NULL;
	OK(MPI_Testany(3, reqs, &idx, &flag, &st));
	CHECK(!flag && idx == MPI_UNDEFINED, "Testany: %d %d", flag, idx);
	OK(MPI_Testall(3, reqs, &flag, sts));
	CHECK(!flag && g.queries == 0 && h.queries == 0, "Testall: %d", flag);
	OK(MPI_Testsome(3, reqs, &out, ind, sts));
	CHECK(out == 0, "Testsome: %d", out);
	/* One complete and one not: Testall reports neither, queries neither. */
	OK(MPI_Grequest_complete(reqs[0]));
	OK(MPI_Testall(3, reqs, &flag, sts));
	CHECK(!flag && g.queries == 0 && reqs[0] != MPI_REQUEST_NULL, "Testall, one done: %d",
	      flag);
	OK(MPI_Wait(&reqs[0], &st));
	CHECK(g.queries == 1 && g.frees == 1, "Wait: q %d f %d", g.queries, g.frees);
	reqs[0] = greq_new(&g);
	OK(MPI_Grequest_complete(reqs[1]));
	OK(MPI_Waitany(3, reqs, &idx, &st));
	CHECK(idx == 1 && reqs[1] == MPI_REQUEST_NULL && h.queries == 1 && h.frees == 1 &&
	      g.queries == 0, "Waitany: %d q %d f %d", idx, h.queries, h.frees);
	check_status(&st, 3);
	reqs[1] = greq_new(&h);
	OK(MPI_Grequest_complete(reqs[0]));
	OK(MPI_Waitsome(3, reqs, &out, ind, sts));
	CHECK(out == 1 && ind[0] == 0 && g.queries == 1 && g.frees == 1 && h.queries == 0,
	      "Waitsome: %d [%d]", out, ind[0]);
	check_status(&sts[0], 3);
	reqs[0] = greq_new(&g);
	OK(MPI_Grequest_complete(reqs[0]));
	OK(MPI_Grequest_complete(reqs[1]));
	OK(MPI_Waitall(3, reqs, sts));
	CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Waitall handles");
	CHECK(g.queries == 1 && g.frees == 1 && h.queries == 1 && h.frees == 1, "Waitall calls");
	check_status(&sts[0], 3);
	check_status(&sts[1], 3);
	reqs[0] = greq_new(&g);
	reqs[1] = greq_new(&h);
	OK(MPI_Grequest_complete(reqs[0]));
	OK(MPI_Grequest_complete(reqs[1]));
	OK(MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE));
	CHECK(flag && g.frees == 1 && h.frees == 1, "Testall: %d", flag);
	/* Testany and Testsome report the complete ones. */
	reqs[0] = greq_new(&g);
	reqs[1] = greq_new(&h);
	OK(MPI_Grequest_complete(reqs[1]));
	OK(MPI_Testany(2, reqs, &idx, &flag, &st));
	CHECK(flag && idx == 1 && h.queries == 1 && h.frees == 1 && g.queries == 0,
	      "Testany: %d %d", flag, idx);
	check_status(&st, 3);
	OK(MPI_Grequest_complete(reqs[0]));
	OK(MPI_Testsome(2, reqs, &out, ind, sts));
	CHECK(out == 1 && ind[0] == 0 && g.queries == 1 && g.frees == 1, "Testsome: %d", out);
	check_status(&sts[0], 3);
	OK(MPI_Testsome(2, reqs, &out, ind, sts));
	CHECK(out == MPI_UNDEFINED, "Testsome of none active: %d", out);

	/* Mixed with a point-to-point request. */
	{
		int x = rank, y = -1;

		reqs[0] = greq_new(&g);
		OK(MPI_Irecv(&y, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &reqs[1]));
		OK(MPI_Send(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD));
		OK(MPI_Waitany(2, reqs, &idx, &st));
		CHECK(idx == 1 && y == rank && g.queries == 0, "Waitany mixed: %d", idx);
		OK(MPI_Grequest_complete(reqs[0]));
		OK(MPI_Wait(&reqs[0], &st));
		CHECK(g.queries == 1 && g.frees == 1, "mixed: q %d f %d", g.queries, g.frees);
	}
}

static void greq_errors(void)
{
	struct greq_state g, h;
	MPI_Request r, reqs[2];
	MPI_Status st, sts[2];
	int flag, cls, code, idx;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Add_error_class(&cls));
	OK(MPI_Add_error_code(cls, &code));
	/* The query's error is the call's, an added code too. */
	r = greq_new(&g);
	g.query_rc = code;
	OK(MPI_Grequest_complete(r));
	FAILS(code, MPI_Wait(&r, &st));
	CHECK(r == MPI_REQUEST_NULL && g.queries == 1 && g.frees == 1, "failed Wait: q %d f %d",
	      g.queries, g.frees);
	/* MPI_Request_get_status returns it too, and keeps the request. */
	r = greq_new(&g);
	g.query_rc = MPI_ERR_OTHER;
	OK(MPI_Grequest_complete(r));
	FAILS(MPI_ERR_OTHER, MPI_Request_get_status(r, &flag, &st));
	CHECK(flag && r != MPI_REQUEST_NULL && g.frees == 0, "get_status with an error");
	/* free_fn's error is the last one, the one returned. */
	g.free_rc = MPI_ERR_INTERN;
	FAILS(MPI_ERR_INTERN, MPI_Test(&r, &flag, &st));
	CHECK(flag && r == MPI_REQUEST_NULL && g.frees == 1, "Test with a failing free");
	/* The arrays: MPI_ERR_IN_STATUS, each status its request's. */
	reqs[0] = greq_new(&g);
	reqs[1] = greq_new(&h);
	h.query_rc = MPI_ERR_OTHER;
	OK(MPI_Grequest_complete(reqs[0]));
	OK(MPI_Grequest_complete(reqs[1]));
	FAILS(MPI_ERR_IN_STATUS, MPI_Waitall(2, reqs, sts));
	CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_OTHER,
	      "statuses %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
	CHECK(g.frees == 1 && h.frees == 1, "Waitall freed %d %d", g.frees, h.frees);
	reqs[0] = greq_new(&g);
	g.query_rc = code;
	OK(MPI_Grequest_complete(reqs[0]));
	FAILS(code, MPI_Waitany(1, reqs, &idx, &st));
	/* Errors of the free and cancel callbacks. */
	r = greq_new(&g);
	g.free_rc = MPI_ERR_OTHER;
	OK(MPI_Grequest_complete(r));
	FAILS(MPI_ERR_OTHER, MPI_Request_free(&r));
	CHECK(r == MPI_REQUEST_NULL && g.frees == 1, "free error");
	r = greq_new(&g);
	g.cancel_rc = MPI_ERR_OTHER;
	FAILS(MPI_ERR_OTHER, MPI_Cancel(&r));
	OK(MPI_Grequest_complete(r));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	/* Misuse. */
	FAILS(MPI_ERR_ARG, MPI_Grequest_start(NULL, free_fn, cancel_fn, &g, &r));
	FAILS(MPI_ERR_ARG, MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, NULL));
	FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(MPI_REQUEST_NULL));
	OK(MPI_Irecv(&flag, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r));
	FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
	OK(MPI_Send(&rank, 1, MPI_INT, rank, 9, MPI_COMM_WORLD));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	r = greq_new(&g);
	OK(MPI_Grequest_complete(r));
	FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(g.queries == 1 && g.frees == 1, "after a second complete: q %d f %d", g.queries,
	      g.frees);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_greq(void)
{
	greq_basic();
	greq_errors();
}

/* --- persistent collectives --- */

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER,
       ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, SCAN, EXSCAN, REDUCE_SCATTER,
       REDUCE_SCATTER_BLOCK, NCOLL };

static const char *const names[NCOLL] = {
	"MPI_Barrier_init", "MPI_Bcast_init", "MPI_Reduce_init", "MPI_Allreduce_init",
	"MPI_Gather_init", "MPI_Gatherv_init", "MPI_Scatter_init", "MPI_Scatterv_init",
	"MPI_Allgather_init", "MPI_Allgatherv_init", "MPI_Alltoall_init", "MPI_Alltoallv_init",
	"MPI_Alltoallw_init", "MPI_Scan_init", "MPI_Exscan_init", "MPI_Reduce_scatter_init",
	"MPI_Reduce_scatter_block_init",
};

struct pc {
	int *s, *d;
	int *counts, *displs, *bytes;
	MPI_Datatype *types;
	int root, n;
	MPI_Request req;
};

static int val(int which, int iter, int r, int i)
{
	return (coll_val(which * 10 + iter, r, i) % 2000) - 1000;
}

static void pc_init(MPI_Comm c, int which, int n, struct pc *b, MPI_Datatype type, MPI_Info info)
{
	int p, j;

	MPI_Comm_size(c, &p);
	b->n = n;
	b->s = coll_alloc(((size_t)n * p + 1) * sizeof(int));
	b->d = coll_alloc(((size_t)n * p + 1) * sizeof(int));
	b->counts = coll_alloc(p * sizeof(int));
	b->displs = coll_alloc(p * sizeof(int));
	b->bytes = coll_alloc(p * sizeof(int));
	b->types = coll_alloc(p * sizeof(MPI_Datatype));
	b->root = which % p;
	for (j = 0; j < p; j++) {
		b->counts[j] = n;
		b->displs[j] = j * n;
		b->bytes[j] = j * n * (int)sizeof(int);
		b->types[j] = type;
	}
	b->req = MPI_REQUEST_NULL;
	switch (which) {
	case BARRIER:
		OK(MPI_Barrier_init(c, info, &b->req));
		break;
	case BCAST:
		OK(MPI_Bcast_init(b->s, n, type, b->root, c, info, &b->req));
		break;
	case REDUCE:
		OK(MPI_Reduce_init(b->s, b->d, n, type, MPI_SUM, b->root, c, info, &b->req));
		break;
	case ALLREDUCE:
		OK(MPI_Allreduce_init(b->s, b->d, n, type, MPI_MAX, c, info, &b->req));
		break;
	case GATHER:
		OK(MPI_Gather_init(b->s, n, type, b->d, n, type, b->root, c, info, &b->req));
		break;
	case GATHERV:
		OK(MPI_Gatherv_init(b->s, n, type, b->d, b->counts, b->displs, type, b->root, c,
				    info, &b->req));
		break;
	case SCATTER:
		OK(MPI_Scatter_init(b->s, n, type, b->d, n, type, b->root, c, info, &b->req));
		break;
	case SCATTERV:
		OK(MPI_Scatterv_init(b->s, b->counts, b->displs, type, b->d, n, type, b->root, c,
				     info, &b->req));
		break;
	case ALLGATHER:
		OK(MPI_Allgather_init(b->s, n, type, b->d, n, type, c, info, &b->req));
		break;
	case ALLGATHERV:
		OK(MPI_Allgatherv_init(b->s, n, type, b->d, b->counts, b->displs, type, c, info,
				       &b->req));
		break;
	case ALLTOALL:
		OK(MPI_Alltoall_init(b->s, n, type, b->d, n, type, c, info, &b->req));
		break;
	case ALLTOALLV:
		OK(MPI_Alltoallv_init(b->s, b->counts, b->displs, type, b->d, b->counts,
				      b->displs, type, c, info, &b->req));
		break;
	case ALLTOALLW:
		OK(MPI_Alltoallw_init(b->s, b->counts, b->bytes, b->types, b->d, b->counts,
				      b->bytes, b->types, c, info, &b->req));
		break;
	case SCAN:
		OK(MPI_Scan_init(b->s, b->d, n, type, MPI_SUM, c, info, &b->req));
		break;
	case EXSCAN:
		OK(MPI_Exscan_init(b->s, b->d, n, type, MPI_SUM, c, info, &b->req));
		break;
	case REDUCE_SCATTER:
		OK(MPI_Reduce_scatter_init(b->s, b->d, b->counts, type, MPI_SUM, c, info,
					   &b->req));
		break;
	case REDUCE_SCATTER_BLOCK:
		OK(MPI_Reduce_scatter_block_init(b->s, b->d, n, type, MPI_SUM, c, info, &b->req));
		break;
	}
	CHECK(b->req != MPI_REQUEST_NULL, "%s gave MPI_REQUEST_NULL", names[which]);
	/* The arrays were copied: changing them now changes nothing. */
	for (j = 0; j < p; j++)
		b->counts[j] = b->displs[j] = b->bytes[j] = -7;
}

/* New data for start number iter. */
static void pc_fill(MPI_Comm c, int which, int iter, struct pc *b)
{
	int r, p, i, n = b->n;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < n * p; i++)
		b->s[i] = which == BCAST && r != b->root ? 0 : val(which, iter, r, i);
	for (i = 0; i <= n * p; i++)
		b->d[i] = -1;
}

static void pc_verify(MPI_Comm c, int which, int iter, struct pc *b)
{
	int r, p, i, k, want, n = b->n;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	coll_where = names[which];
	for (i = 0; i < n * p; i++) {
		int blk = i / (n ? n : 1), at = i % (n ? n : 1);

		switch (which) {
		case BCAST:
			if (i >= n)
				continue;
			CHECK(b->s[i] == val(which, iter, b->root, i), "start %d: [%d] = %d", iter,
			      i, b->s[i]);
			continue;
		case REDUCE:
		case ALLREDUCE:
		case SCAN:
		case EXSCAN:
			if (i >= n || (which == REDUCE && r != b->root) || (which == EXSCAN && !r))
				continue;
			want = which == ALLREDUCE ? -1000000 : 0;
			for (k = 0; k < (which == SCAN ? r + 1 : which == EXSCAN ? r : p); k++) {
				int x = val(which, iter, k, i);

				want = which == ALLREDUCE ? (want > x ? want : x) : want + x;
			}
			break;
		case GATHER:
		case GATHERV:
			if (r != b->root)
				continue;
			/* fall through */
		case ALLGATHER:
		case ALLGATHERV:
			want = val(which, iter, blk, at);
			break;
		case SCATTER:
		case SCATTERV:
			if (i >= n)
				continue;
			want = val(which, iter, b->root, r * n + i);
			break;
		case ALLTOALL:
		case ALLTOALLV:
		case ALLTOALLW:
			want = val(which, iter, blk, r * n + at);
			break;
		case REDUCE_SCATTER:
		case REDUCE_SCATTER_BLOCK:
			if (i >= n)
				continue;
			for (k = 0, want = 0; k < p; k++)
				want += val(which, iter, k, r * n + i);
			break;
		default:
			continue;
		}
		CHECK(b->d[i] == want, "start %d (n %d, root %d): [%d] = %d, want %d", iter, n,
		      b->root, i, b->d[i], want);
	}
	coll_where = "";
}

static void pc_free(struct pc *b)
{
	OK(MPI_Request_free(&b->req));
	CHECK(b->req == MPI_REQUEST_NULL, "Request_free left the handle");
	free(b->s);
	free(b->d);
	free(b->counts);
	free(b->displs);
	free(b->bytes);
	free(b->types);
}

/* Every persistent collective, started 3 times, completed each time in
 * another way, with a blocking collective between start and completion. */
static void pc_rounds(MPI_Comm c, int n, MPI_Datatype type, MPI_Info info)
{
	struct pc b[NCOLL];
	MPI_Request reqs[NCOLL];
	MPI_Status sts[NCOLL];
	int w, iter, done, flag, one = 1, sum;
	int p;

	MPI_Comm_size(c, &p);
	for (w = 0; w < NCOLL; w++)
		pc_init(c, w, n, &b[w], type, info);
	for (iter = 0; iter < 3; iter++) {
		for (w = 0; w < NCOLL; w++) {
			pc_fill(c, w, iter, &b[w]);
			reqs[w] = b[w].req;
		}
		/* The processes start them in different orders (MPI-4.0 6.13: they
		 * match by the order of the init calls): odd ranks backwards,
		 * then each rank from its own place in the list. */
		if (iter == 0) {
			OK(MPI_Startall(NCOLL, reqs));
		} else {
			for (w = 0; w < NCOLL; w++) {
				int k = iter == 1 ? (rank % 2 ? NCOLL - 1 - w : w) :
						    (w + rank) % NCOLL;

				OK(MPI_Start(&reqs[k]));
			}
		}
		OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
		CHECK(sum == p, "Allreduce among the persistent ones: %d", sum);
		switch (iter) {
		case 0:
			OK(MPI_Waitall(NCOLL, reqs, sts));
			break;
		case 1:
			for (w = NCOLL - 1; w >= 0; w--)
				OK(MPI_Wait(&reqs[w], &sts[w]));
			break;
		default:
			for (done = 0; done < NCOLL;) {
				for (w = 0, done = 0; w < NCOLL; w++) {
					OK(MPI_Test(&reqs[w], &flag, &sts[w]));
					done += flag;
				}
			}
		}
		for (w = 0; w < NCOLL; w++) {
			/* Inactive, not freed: the handle stays, a Wait returns at once. */
			CHECK(reqs[w] == b[w].req, "%s: the handle changed", names[w]);
			OK(MPI_Wait(&reqs[w], &sts[w]));
			CHECK(sts[w].MPI_SOURCE == MPI_ANY_SOURCE && sts[w].MPI_TAG == MPI_ANY_TAG,
			      "%s: status of an inactive request", names[w]);
			pc_verify(c, w, iter, &b[w]);
		}
	}
	for (w = 0; w < NCOLL; w++)
		pc_free(&b[w]);
}

static void pc_errors(MPI_Comm c)
{
	int x[8] = { 0 }, y[8], counts[64], p, r;
	MPI_Request req = MPI_REQUEST_NULL, q;
	MPI_Info info, stale;

	MPI_Comm_size(c, &p);
	MPI_Comm_rank(c, &r);
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	FAILS(MPI_ERR_ROOT, MPI_Bcast_init(x, 1, MPI_INT, p, c, MPI_INFO_NULL, &req));
	FAILS(MPI_ERR_ROOT, MPI_Reduce_init(x, y, 1, MPI_INT, MPI_SUM, -1, c, MPI_INFO_NULL,
					    &req));
	FAILS(MPI_ERR_COUNT, MPI_Allreduce_init(x, y, -1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL,
						&req));
	FAILS(MPI_ERR_TYPE, MPI_Allgather_init(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, c,
					       MPI_INFO_NULL, &req));
	FAILS(MPI_ERR_OP, MPI_Allreduce_init(x, y, 1, MPI_INT, MPI_OP_NULL, c, MPI_INFO_NULL,
					     &req));
	FAILS(MPI_ERR_COMM, MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &req));
	FAILS(MPI_ERR_ARG, MPI_Barrier_init(c, MPI_INFO_NULL, NULL));
	for (int i = 0; i < p; i++)
		counts[i] = -1;
	FAILS(MPI_ERR_COUNT, MPI_Reduce_scatter_init(x, y, counts, MPI_INT, MPI_SUM, c,
						     MPI_INFO_NULL, &req));
	OK(MPI_Info_create(&info));
	stale = info;
	OK(MPI_Info_free(&info));
	FAILS(MPI_ERR_INFO, MPI_Barrier_init(c, stale, &req));
	CHECK(req == MPI_REQUEST_NULL, "a refused init gave a request");
	/* Every process refused the same calls above: this one matches. */
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "some_hint", "ignored"));
	x[0] = r + 1;
	OK(MPI_Allreduce_init(x, y, 1, MPI_INT, MPI_SUM, c, info, &req));
	OK(MPI_Info_free(&info));
	/* An inactive request: Wait returns at once; freeing it is fine. */
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(req != MPI_REQUEST_NULL, "Wait on an inactive request nulled it");
	OK(MPI_Start(&req));
	/* Active: neither started again nor freed. */
	FAILS(MPI_ERR_REQUEST, MPI_Start(&req));
	q = req;
	FAILS(MPI_ERR_REQUEST, MPI_Startall(1, &q));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(y[0] == p * (p + 1) / 2, "sum %d", y[0]);
	{
		MPI_Request twice[2] = { req, req };

		/* The same request twice: the second start is refused. */
		FAILS(MPI_ERR_REQUEST, MPI_Startall(2, twice));
	}
	FAILS(MPI_ERR_REQUEST, MPI_Request_free(&req));
	CHECK(req == q, "a refused Request_free changed the handle");
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(y[0] == p * (p + 1) / 2, "sum %d after the refusals", y[0]);
	OK(MPI_Request_free(&req));
	FAILS(MPI_ERR_REQUEST, MPI_Start(&req));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* A derived datatype freed after the init call stays valid for the request,
 * and the communicator freed after it stays usable by it. */
static void pc_freed_objects(void)
{
	MPI_Datatype pair;
	MPI_Comm dup;
	MPI_Request req;
	int s[2], iter;

	OK(MPI_Type_contiguous(2, MPI_INT, &pair));
	OK(MPI_Type_commit(&pair));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Bcast_init(s, 1, pair, size - 1, dup, MPI_INFO_NULL, &req));
	OK(MPI_Type_free(&pair));
	OK(MPI_Comm_free(&dup));
	for (iter = 0; iter < 3; iter++) {
		s[0] = rank == size - 1 ? 100 + iter : -1;
		s[1] = rank == size - 1 ? 200 + iter : -1;
		OK(MPI_Start(&req));
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(s[0] == 100 + iter && s[1] == 200 + iter, "start %d: %d %d", iter, s[0], s[1]);
	}
	OK(MPI_Request_free(&req));
}

static void test_pcoll(void)
{
	static const int sizes[] = { 1, 5, 3000 };
	MPI_Datatype t;
	MPI_Comm c;
	const char *name;
	size_t i;
	int k;

	for (k = 0; k < COLL_NCOMMS; k++) {
		c = coll_comm(k, &name);
		coll_where = name;
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			pc_rounds(c, sizes[i], MPI_INT, MPI_INFO_NULL);
		coll_comm_done(&c);
	}
	/* A derived datatype of one int: the same results. */
	OK(MPI_Type_contiguous(1, MPI_INT, &t));
	OK(MPI_Type_commit(&t));
	pc_rounds(MPI_COMM_WORLD, 4, t, MPI_INFO_ENV);
	OK(MPI_Type_free(&t));
	pc_freed_objects();
	pc_errors(MPI_COMM_WORLD);
}

/* --- MPI_Isendrecv --- */

static void isr_ring(int n)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size, i, count, flag;
	int *s = coll_alloc((size_t)n * sizeof(int)), *d = coll_alloc((size_t)(n + 1) * sizeof(int));
	MPI_Request req, reqs[2];
	MPI_Status st, sts[2];

	for (i = 0; i < n; i++)
		s[i] = coll_val(1, rank, i);
	for (i = 0; i <= n; i++)
		d[i] = -1;
	OK(MPI_Isendrecv(s, n, MPI_INT, right, 3, d, n + 1, MPI_INT, left, 3, MPI_COMM_WORLD,
			 &req));
	OK(MPI_Wait(&req, &st));
	CHECK(req == MPI_REQUEST_NULL, "Wait left the handle");
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 3 && count == n, "status %d %d %d",
	      st.MPI_SOURCE, st.MPI_TAG, count);
	for (i = 0; i < n; i++)
		CHECK(d[i] == coll_val(1, left, i), "[%d] = %d", i, d[i]);
	CHECK(d[n] == -1, "written past the message");

	/* Replace: both ways round, polled by MPI_Test. */
	for (i = 0; i < n; i++)
		s[i] = coll_val(2, rank, i);
	OK(MPI_Isendrecv_replace(s, n, MPI_INT, left, 4, right, 4, MPI_COMM_WORLD, &req));
	do
		OK(MPI_Test(&req, &flag, &st));
	while (!flag);
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(st.MPI_SOURCE == right && count == n, "replace status %d %d", st.MPI_SOURCE, count);
	for (i = 0; i < n; i++)
		CHECK(s[i] == coll_val(2, right, i), "replace [%d] = %d", i, s[i]);

	/* Two at once, any source on one, completed together. */
	for (i = 0; i < n; i++)
		s[i] = coll_val(3, rank, i);
	OK(MPI_Isendrecv_replace(s, n, MPI_INT, right, 5, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD,
				 &reqs[0]));
	OK(MPI_Isendrecv(&rank, 1, MPI_INT, left, 6, &d[0], 1, MPI_INT, right, MPI_ANY_TAG,
			 MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Waitall(2, reqs, sts));
	CHECK(sts[0].MPI_SOURCE == left && sts[1].MPI_SOURCE == right && sts[1].MPI_TAG == 6,
	      "statuses %d %d %d", sts[0].MPI_SOURCE, sts[1].MPI_SOURCE, sts[1].MPI_TAG);
	CHECK(d[0] == right, "got %d from %d", d[0], right);
	for (i = 0; i < n; i++)
		CHECK(s[i] == coll_val(3, left, i), "second replace [%d] = %d", i, s[i]);
	free(s);
	free(d);
}

static void isr_proc_null(void)
{
	int x[3] = { 1, 2, 3 }, y[3] = { -1, -1, -1 }, count = -1, idx;
	MPI_Request req;
	MPI_Status st;

	/* Nothing to either side: complete at once, the empty status. */
	OK(MPI_Isendrecv(x, 3, MPI_INT, MPI_PROC_NULL, 0, y, 3, MPI_INT, MPI_PROC_NULL, 0,
			 MPI_COMM_WORLD, &req));
	OK(MPI_Waitany(1, &req, &idx, &st));
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(idx == 0 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
	      count == 0, "status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, count);
	CHECK(y[0] == -1 && y[2] == -1, "received from MPI_PROC_NULL");
	OK(MPI_Isendrecv_replace(x, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0,
				 MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(x[0] == 1 && x[2] == 3 && st.MPI_SOURCE == MPI_PROC_NULL, "replace with none");
	/* Send to oneself, receive from no one; and the other way round. */
	OK(MPI_Isendrecv(x, 3, MPI_INT, rank, 8, y, 3, MPI_INT, MPI_PROC_NULL, 8,
			 MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "source %d", st.MPI_SOURCE);
	OK(MPI_Isendrecv_replace(y, 3, MPI_INT, MPI_PROC_NULL, 0, rank, 8, MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(st.MPI_SOURCE == rank && y[0] == 1 && y[1] == 2 && y[2] == 3,
	      "from oneself: %d %d %d", y[0], y[1], y[2]);
}

static void isr_errors(void)
{
	int x[4] = { 0 }, y[4];
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_Status st;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	FAILS(MPI_ERR_RANK, MPI_Isendrecv(x, 1, MPI_INT, size, 0, y, 1, MPI_INT, 0, 0,
					  MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_RANK, MPI_Isendrecv(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, y, 1, MPI_INT, 0, 0,
					  MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_RANK, MPI_Isendrecv_replace(x, 1, MPI_INT, 0, 0, -7, 0, MPI_COMM_WORLD,
						  &req));
	FAILS(MPI_ERR_TAG, MPI_Isendrecv(x, 1, MPI_INT, 0, -3, y, 1, MPI_INT, 0, 0,
					 MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_TAG, MPI_Isendrecv_replace(x, 1, MPI_INT, 0, MPI_ANY_TAG, 0, 0,
						 MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_COUNT, MPI_Isendrecv(x, -1, MPI_INT, 0, 0, y, 1, MPI_INT, 0, 0,
					   MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_TYPE, MPI_Isendrecv(x, 1, MPI_INT, 0, 0, y, 1, MPI_DATATYPE_NULL, 0, 0,
					  MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_BUFFER, MPI_Isendrecv_replace(NULL, 1, MPI_INT, 0, 0, 0, 0,
						    MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_COMM, MPI_Isendrecv(x, 1, MPI_INT, 0, 0, y, 1, MPI_INT, 0, 0,
					  MPI_COMM_NULL, &req));
	FAILS(MPI_ERR_ARG, MPI_Isendrecv(x, 1, MPI_INT, 0, 0, y, 1, MPI_INT, 0, 0,
					 MPI_COMM_WORLD, NULL));
	CHECK(req == MPI_REQUEST_NULL, "a refused call gave a request");
	/* A message longer than the receive: the request's error. */
	x[0] = 41;
	x[1] = 42;
	y[0] = y[1] = -1;
	OK(MPI_Isendrecv(x, 2, MPI_INT, rank, 1, y, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_TRUNCATE, MPI_Wait(&req, &st));
	CHECK(req == MPI_REQUEST_NULL && y[0] == 41 && y[1] == -1, "truncated: %d %d", y[0],
	      y[1]);
	/* Nothing was left behind: a message on the same tag arrives alone. */
	OK(MPI_Isendrecv(x, 1, MPI_INT, rank, 1, y, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(y[0] == 41, "after the truncation: %d", y[0]);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_isendrecv(void)
{
	isr_ring(1);
	isr_ring(0);
	isr_ring(100000); /* rendezvous */
	isr_proc_null();
	isr_errors();
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "greq", test_greq },
	{ "pcoll", test_pcoll },
	{ "isendrecv", test_isendrecv },
};

int main(int argc, char **argv)
{
	size_t i;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	coll_world_rank = rank;
	if (argc != 2) {
		fprintf(stderr, "usage: greq TEST\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		OK(MPI_Barrier(MPI_COMM_WORLD));
		OK(MPI_Finalize());
		return 0;
	}
	fprintf(stderr, "greq: no test %s\n", argv[1]);
	return 2;
}
