/* SPDX-License-Identifier: MIT */
/*
 * coll_nbc.c - the non-blocking collectives: many of them in flight at
 * once on one communicator, alongside a blocking collective and the user's
 * own point-to-point traffic (which must never match a collective's
 * messages, even with MPI_ANY_SOURCE and MPI_ANY_TAG), completed by
 * MPI_Waitall, by MPI_Wait in reverse order and by polling MPI_Test; small
 * and large (rendezvous) buffers; every result checked.
 * A user operation or datatype freed while a collective uses it stays
 * valid for it.
 * A collective in flight also moves on while its process waits for
 * something else: rank 0 blocks in MPI_Recv for a message that rank 1 sends
 * only once its MPI_Ialltoall, which needs rank 0's later steps, is over.
 *
 *   bipload -sz N coll_nbc
 */
#include "coll_check.h"

enum { IBARRIER, IBCAST, IREDUCE, IALLREDUCE, IGATHER, IGATHERV, ISCATTER, ISCATTERV,
       IALLGATHER, IALLGATHERV, IALLTOALL, IALLTOALLV, IALLTOALLW, ISCAN, IEXSCAN,
       IREDUCE_SCATTER, IREDUCE_SCATTER_BLOCK, NCOLL };

static const char *const names[NCOLL] = {
	"MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Igather",
	"MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Iallgather", "MPI_Iallgatherv",
	"MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ialltoallw", "MPI_Iscan", "MPI_Iexscan",
	"MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block",
};

struct nbc {
	int *s, *d;        /* send and receive buffers */
	int *counts, *displs, *zero;
	MPI_Datatype *types;
	int root;
};

static int v(int which, int r, int i)
{
	return (coll_val(which, r, i) % 2000) - 1000;
}

static void start(MPI_Comm c, int which, int n, int salt, struct nbc *b, MPI_Request *req)
{
	int r, p, i, j;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	b->s = coll_alloc(((size_t)n * p + 1) * sizeof(int));
	b->d = coll_alloc(((size_t)n * p + 1) * sizeof(int));
	b->counts = coll_alloc(p * sizeof(int));
	b->displs = coll_alloc(p * sizeof(int));
	b->zero = coll_alloc(p * sizeof(int));
	b->types = coll_alloc(p * sizeof(MPI_Datatype));
	b->root = (which + salt) % p;
	for (i = 0; i < n * p; i++)
		b->s[i] = v(which + salt, r, i);
	for (i = 0; i <= n * p; i++)
		b->d[i] = -1;
	for (j = 0; j < p; j++) {
		b->counts[j] = n;
		b->displs[j] = j * n;
		b->zero[j] = j * n * (int)sizeof(int);
		b->types[j] = MPI_INT;
	}
	switch (which) {
	case IBARRIER:
		OK(MPI_Ibarrier(c, req));
		break;
	case IBCAST:
		if (r != b->root)
			memset(b->s, 0, n * sizeof(int));
		OK(MPI_Ibcast(b->s, n, MPI_INT, b->root, c, req));
		break;
	case IREDUCE:
		OK(MPI_Ireduce(b->s, b->d, n, MPI_INT, MPI_SUM, b->root, c, req));
		break;
	case IALLREDUCE:
		OK(MPI_Iallreduce(b->s, b->d, n, MPI_INT, MPI_MAX, c, req));
		break;
	case IGATHER:
		OK(MPI_Igather(b->s, n, MPI_INT, b->d, n, MPI_INT, b->root, c, req));
		break;
	case IGATHERV:
		OK(MPI_Igatherv(b->s, n, MPI_INT, b->d, b->counts, b->displs, MPI_INT, b->root, c,
				req));
		break;
	case ISCATTER:
		OK(MPI_Iscatter(b->s, n, MPI_INT, b->d, n, MPI_INT, b->root, c, req));
		break;
	case ISCATTERV:
		OK(MPI_Iscatterv(b->s, b->counts, b->displs, MPI_INT, b->d, n, MPI_INT, b->root, c,
				 req));
		break;
	case IALLGATHER:
		OK(MPI_Iallgather(b->s, n, MPI_INT, b->d, n, MPI_INT, c, req));
		break;
	case IALLGATHERV:
		OK(MPI_Iallgatherv(b->s, n, MPI_INT, b->d, b->counts, b->displs, MPI_INT, c, req));
		break;
	case IALLTOALL:
		OK(MPI_Ialltoall(b->s, n, MPI_INT, b->d, n, MPI_INT, c, req));
		break;
	case IALLTOALLV:
		OK(MPI_Ialltoallv(b->s, b->counts, b->displs, MPI_INT, b->d, b->counts, b->displs,
				  MPI_INT, c, req));
		break;
	case IALLTOALLW:
		OK(MPI_Ialltoallw(b->s, b->counts, b->zero, b->types, b->d, b->counts, b->zero,
				  b->types, c, req));
		break;
	case ISCAN:
		OK(MPI_Iscan(b->s, b->d, n, MPI_INT, MPI_SUM, c, req));
		break;
	case IEXSCAN:
		OK(MPI_Iexscan(b->s, b->d, n, MPI_INT, MPI_SUM, c, req));
		break;
	case IREDUCE_SCATTER:
		OK(MPI_Ireduce_scatter(b->s, b->d, b->counts, MPI_INT, MPI_SUM, c, req));
		break;
	case IREDUCE_SCATTER_BLOCK:
		OK(MPI_Ireduce_scatter_block(b->s, b->d, n, MPI_INT, MPI_SUM, c, req));
		break;
	}
}

static void verify(MPI_Comm c, int which, int n, int salt, struct nbc *b)
{
	int r, p, i, k, want, w = which + salt;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < n * p; i++) {
		int blk = i / (n ? n : 1), at = i % (n ? n : 1);

		switch (which) {
		case IBCAST:
			if (i >= n)
				continue;
			CHECK(b->s[i] == v(w, b->root, i), "%s: [%d] = %d", names[which], i, b->s[i]);
			continue;
		case IREDUCE:
		case IALLREDUCE:
		case ISCAN:
		case IEXSCAN:
			if (i >= n || (which == IREDUCE && r != b->root) || (which == IEXSCAN && !r))
				continue;
			want = which == IALLREDUCE ? -1000000 : 0;
			for (k = 0; k < (which == ISCAN ? r + 1 : which == IEXSCAN ? r : p); k++)
				want = which == IALLREDUCE ? (want > v(w, k, i) ? want : v(w, k, i)) :
							     want + v(w, k, i);
			break;
		case IGATHER:
		case IGATHERV:
			if (r != b->root)
				continue;
			/* fall through */
		case IALLGATHER:
		case IALLGATHERV:
			want = v(w, blk, at);
			break;
		case ISCATTER:
		case ISCATTERV:
			if (i >= n)
				continue;
			want = v(w, b->root, r * n + i);
			break;
		case IALLTOALL:
		case IALLTOALLV:
		case IALLTOALLW:
			want = v(w, blk, r * n + at);
			break;
		case IREDUCE_SCATTER:
		case IREDUCE_SCATTER_BLOCK:
			if (i >= n)
				continue;
			for (k = 0, want = 0; k < p; k++)
				want += v(w, k, r * n + i);
			break;
		default:
			continue;
		}
		CHECK(b->d[i] == want, "%s (n %d, root %d): [%d] = %d, want %d", names[which], n,
		      b->root, i, b->d[i], want);
	}
	free(b->s);
	free(b->d);
	free(b->counts);
	free(b->displs);
	free(b->zero);
	free(b->types);
}

/*
 * Start every non-blocking collective, with user messages on the same
 * communicator and a blocking collective in the middle, then complete
 * them all in the given way.
 */
static void round_of_all(MPI_Comm c, int n, int salt, int how)
{
	struct nbc b[NCOLL];
	MPI_Request req[NCOLL], ureq[2];
	int r, p, k, done, flag, out, in = -1, x, y;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	/* A user receive that would take any collective message, if one leaked. */
	OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &ureq[0]));
	for (k = 0; k < NCOLL; k++) {
		start(c, k, n, salt, &b[k], &req[k]);
		if (k == NCOLL / 2) {
			x = r + 1;
			OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
			CHECK(y == p * (p + 1) / 2, "MPI_Allreduce among them: %d", y);
		}
	}
	out = 1000 + r;
	OK(MPI_Isend(&out, 1, MPI_INT, (r + 1) % p, 5, c, &ureq[1]));
	switch (how) {
	case 0:
		OK(MPI_Waitall(NCOLL, req, MPI_STATUSES_IGNORE));
		break;
	case 1:
		for (k = NCOLL - 1; k >= 0; k--)
			OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
		break;
	default:
		for (done = 0; done < NCOLL;) {
			for (k = 0; k < NCOLL; k++) {
				if (req[k] == MPI_REQUEST_NULL)
					continue;
				OK(MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE));
				if (flag) {
					CHECK(req[k] == MPI_REQUEST_NULL, "%s: completed request not freed",
					      names[k]);
					done++;
				}
			}
		}
		break;
	}
	for (k = 0; k < NCOLL; k++)
		CHECK(req[k] == MPI_REQUEST_NULL, "%s: request not MPI_REQUEST_NULL", names[k]);
	OK(MPI_Waitall(2, ureq, MPI_STATUSES_IGNORE));
	CHECK(in == 1000 + (r - 1 + p) % p, "the user's receive got %d", in);
	for (k = 0; k < NCOLL; k++)
		verify(c, k, n, salt, &b[k]);
}

/*
 * Affine maps x -> m x + c as pairs (m, c); in op inout is "in, then
 * inout": associative, not commutative, so a wrong order shows.
 */
static void affine_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
	long *f = in, *g = inout;
	int i;

	(void)type;
	for (i = 0; i + 1 < *len; i += 2) {
		g[i + 1] = f[i + 1] * g[i] + g[i + 1];
		g[i] = f[i] * g[i];
	}
}

/*
 * A user operation freed while a collective that uses it is in flight: the
 * collective goes on with it (MPI_Op_free only marks it for freeing).
 */
static void op_freed_in_flight(MPI_Comm c)
{
	int r, p, k;
	long x[2], y[2] = { -1, -1 }, m = 1, off = 0;
	MPI_Op op;
	MPI_Request req;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	OK(MPI_Op_create(affine_op, 0, &op));
	x[0] = r % 2 + 1;
	x[1] = r + 1;
	OK(MPI_Iallreduce(x, y, 2, MPI_LONG, op, c, &req));
	OK(MPI_Op_free(&op));
	CHECK(op == MPI_OP_NULL, "the freed handle is not MPI_OP_NULL");
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	/* The maps of ranks 0, 1, ..., p - 1 applied in that order. */
	for (k = 0; k < p; k++) {
		m *= k % 2 + 1;
		off = off * (k % 2 + 1) + k + 1;
	}
	CHECK(y[0] == m && y[1] == off, "MPI_Iallreduce with a freed operation gave (%ld, %ld), "
	      "want (%ld, %ld)", y[0], y[1], m, off);
}

/* Derived datatypes freed while collectives use them: each holds its own
 * reference (an Igather into a dup of MPI_INT, and an Ialltoallw whose
 * types are freed at once, a vector among them). */
static void types_freed_in_flight(MPI_Comm c)
{
	int r, p, i, k, n = 5;
	int *s, *d, *counts, *displs;
	MPI_Datatype t, *types;
	MPI_Request reqs[2];

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	s = coll_alloc((size_t)n * p * sizeof(int));
	d = coll_alloc((size_t)n * p * sizeof(int));
	counts = coll_alloc((size_t)p * sizeof(int));
	displs = coll_alloc((size_t)p * sizeof(int));
	types = coll_alloc((size_t)p * sizeof(MPI_Datatype));
	for (i = 0; i < n * p; i++) {
		s[i] = v(50, r, i);
		d[i] = -1;
	}
	OK(MPI_Type_dup(MPI_INT, &t));
	OK(MPI_Igather(s, n, MPI_INT, d, n, t, 0, c, &reqs[0]));
	OK(MPI_Type_free(&t));
	OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
	if (r == 0)
		for (k = 0; k < p; k++)
			for (i = 0; i < n; i++)
				CHECK(d[k * n + i] == v(50, k, i), "Igather with a freed type: "
				      "block %d [%d] = %d", k, i, d[k * n + i]);
	/* Block k: n ints, as one vector of n blocks of 1. */
	for (k = 0; k < p; k++) {
		counts[k] = 1;
		displs[k] = k * n * (int)sizeof(int);
		OK(MPI_Type_vector(n, 1, 1, MPI_INT, &types[k]));
		OK(MPI_Type_commit(&types[k]));
	}
	OK(MPI_Ialltoallw(s, counts, displs, types, d, counts, displs, types, c, &reqs[1]));
	for (k = 0; k < p; k++)
		OK(MPI_Type_free(&types[k]));
	OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
	for (k = 0; k < p; k++)
		for (i = 0; i < n; i++)
			CHECK(d[k * n + i] == v(50, k, r * n + i), "Ialltoallw with freed types: "
			      "block %d [%d] = %d", k, i, d[k * n + i]);
	free(s);
	free(d);
	free(counts);
	free(displs);
	free(types);
}

/* Progress of a pending collective while rank 0 waits in a receive. */
static void progress_while_blocked(MPI_Comm c)
{
	int r, p, i, n = 64, x = -1;
	int *s, *d;
	MPI_Request req;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	s = coll_alloc((size_t)n * p * sizeof(int));
	d = coll_alloc((size_t)n * p * sizeof(int));
	for (i = 0; i < n * p; i++)
		s[i] = v(40, r, i);
	OK(MPI_Ialltoall(s, n, MPI_INT, d, n, MPI_INT, c, &req));
	if (r == 0 && p > 1) {
		OK(MPI_Recv(&x, 1, MPI_INT, 1, 9, c, MPI_STATUS_IGNORE));
		CHECK(x == 4242, "got %d", x);
	}
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	if (r == 1) {
		x = 4242;
		OK(MPI_Send(&x, 1, MPI_INT, 0, 9, c));
	}
	for (i = 0; i < n * p; i++)
		CHECK(d[i] == v(40, i / n, r * n + i % n), "MPI_Ialltoall: [%d] = %d", i, d[i]);
	free(s);
	free(d);
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1, 3, 300, 9000 };
	int k, z, how;

	coll_init(&argc, &argv);
	for (k = 0; k < COLL_NCOMMS; k++) {
		const char *cname;
		MPI_Comm c = coll_comm(k, &cname);

		coll_where = "progress while rank 0 waits in MPI_Recv";
		progress_while_blocked(c);
		coll_where = "a user operation freed in flight";
		op_freed_in_flight(c);
		coll_where = "datatypes freed in flight";
		types_freed_in_flight(c);
		for (z = 0; z < (int)(sizeof(sizes) / sizeof(sizes[0])); z++) {
			for (how = 0; how < 3; how++) {
				char where[128];

				snprintf(where, sizeof(where), "on %s, %d elements, completion %s",
					 cname, sizes[z],
					 how == 0 ? "Waitall" : how == 1 ? "Wait reversed" : "Test");
				coll_where = where;
				round_of_all(c, sizes[z], z * 3 + how, how);
			}
		}
		coll_comm_done(&c);
	}
	coll_where = "finalize";
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll_nbc: passed\n");
	return 0;
}
