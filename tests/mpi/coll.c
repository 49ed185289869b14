/* SPDX-License-Identifier: MIT */
/*
 * coll.c - every collective moves the right data: each one on
 * MPI_COMM_WORLD, on the world in reverse order and on its two halves
 * (sizes that are not powers of two, ranks that are not world ranks), with
 * every root, with empty, small and large (rendezvous) buffers, with its
 * MPI_IN_PLACE forms, every element of every receive buffer checked, and
 * the parts of a receive buffer that no data should reach left untouched.
 *
 *   bipload -sz N coll [TEST]    TEST: one of the names below, else all
 */
#include "coll_check.h"

#define GUARD (-7777777)

static const int sizes[] = { 0, 1, 5, 1000, 20000 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

static int *ints(size_t n)
{
	return coll_alloc(n * sizeof(int));
}

static void fill_guard(int *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = GUARD;
}

/*
 * The barrier: a message sent after a barrier cannot arrive before its
 * receiver has entered the barrier.  Each rank looks for one before, and
 * its neighbour sends one after; a message seen before is a broken barrier.
 */
static void test_barrier(MPI_Comm c, int n)
{
	int r, p, k, flag, v;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	(void)n;
	for (k = 0; k < 5; k++) {
		OK(MPI_Iprobe(MPI_ANY_SOURCE, 77, c, &flag, MPI_STATUS_IGNORE));
		CHECK(!flag, "round %d: a message sent after the barrier arrived before it", k);
		OK(MPI_Barrier(c));
		v = r * 100 + k;
		OK(MPI_Send(&v, 1, MPI_INT, (r + 1) % p, 77, c));
		OK(MPI_Recv(&v, 1, MPI_INT, (r - 1 + p) % p, 77, c, MPI_STATUS_IGNORE));
		CHECK(v == ((r - 1 + p) % p) * 100 + k, "round %d: got %d", k, v);
		OK(MPI_Barrier(c));
	}
}

/* Above the shim's switch from the binomial tree to scatter and ring
 * (512 KiB): the largest size also runs a Bcast of this many ints. */
#define BCAST_RING_N 140000

static void bcast_roots(MPI_Comm c, int n);

static void test_bcast(MPI_Comm c, int n)
{
	bcast_roots(c, n);
	if (n == sizes[NSIZES - 1])
		bcast_roots(c, BCAST_RING_N);
}

static void bcast_roots(MPI_Comm c, int n)
{
	int r, p, root, i, *b = ints(n + 1);

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (root = 0; root < p; root++) {
		for (i = 0; i <= n; i++)
			b[i] = r == root ? coll_val(1, root, i) : GUARD;
		if (r != root)
			b[n] = GUARD;
		OK(MPI_Bcast(b, n, MPI_INT, root, c));
		for (i = 0; i < n; i++)
			CHECK(b[i] == coll_val(1, root, i), "root %d, n %d: [%d] = %d", root, n, i,
			      b[i]);
		if (r != root)
			CHECK(b[n] == GUARD, "root %d, n %d: written past the end", root, n);
	}
	free(b);
}

/*
 * Gather with every root, or Allgather (all): the blocks of all ranks in
 * rank order, on the root or on every rank.
 */
static void gather_regular(MPI_Comm c, int n, int all)
{
	int r, p, root, i, in_place, t = all ? 6 : 2, *s = ints(n), *g;
	char where[64];

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	g = ints((size_t)n * p + 1);
	for (i = 0; i < n; i++)
		s[i] = coll_val(t, r, i);
	for (in_place = 0; in_place < 2; in_place++) {
		for (root = 0; root < (all ? 1 : p); root++) {
			int here = all || r == root; /* this rank receives */

			fill_guard(g, (size_t)n * p + 1);
			if (in_place && here)
				memcpy(g + (size_t)r * n, s, n * sizeof(int));
			if (all)
				OK(MPI_Allgather(in_place ? MPI_IN_PLACE : s, n, MPI_INT, g, n,
						 MPI_INT, c));
			else
				OK(MPI_Gather(in_place && r == root ? MPI_IN_PLACE : s, n, MPI_INT,
					      g, n, MPI_INT, root, c));
			if (!here)
				continue;
			if (all)
				snprintf(where, sizeof(where), "n %d, in place %d", n, in_place);
			else
				snprintf(where, sizeof(where), "root %d, n %d, in place %d", root, n,
					 in_place);
			for (i = 0; i < n * p; i++)
				CHECK(g[i] == coll_val(t, i / n, i % n), "%s: [%d] = %d", where, i,
				      g[i]);
			CHECK(g[n * p] == GUARD, "written past the end");
		}
	}
	free(s);
	free(g);
}

static void test_gather(MPI_Comm c, int n)
{
	gather_regular(c, n, 0);
}

static void test_allgather(MPI_Comm c, int n)
{
	gather_regular(c, n, 1);
}

/* Irregular counts and displacements with gaps: rank i has (n + i) % 7 * (i + 1). */
static int vcount(int n, int i)
{
	return n ? (n + i) % 7 * (i + 1) + (n > 100 ? n : 0) : 0;
}

static int vlayout(int n, int p, int *counts, int *displs)
{
	int i, at = 3;

	for (i = 0; i < p; i++)
		counts[i] = vcount(n, i);
	/* Blocks in reverse rank order with a gap of 2 between them. */
	for (i = p - 1; i >= 0; i--) {
		displs[i] = at;
		at += counts[i] + 2;
	}
	return at;
}

/*
 * Gatherv with every root, or Allgatherv (all): the irregular blocks of
 * vlayout, and the gap before the first left untouched.
 */
static void gather_vector(MPI_Comm c, int n, int all)
{
	int r, p, root, i, j, in_place, total, t = all ? 7 : 3, *s, *g, *counts, *displs;
	char where[64];

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	counts = ints(p);
	displs = ints(p);
	total = vlayout(n, p, counts, displs);
	s = ints(counts[r] + 1);
	g = ints(total);
	for (i = 0; i < counts[r]; i++)
		s[i] = coll_val(t, r, i);
	for (in_place = 0; in_place < 2; in_place++) {
		for (root = 0; root < (all ? 1 : p); root++) {
			int here = all || r == root; /* this rank receives */

			fill_guard(g, total);
			if (in_place && here)
				memcpy(g + displs[r], s, counts[r] * sizeof(int));
			if (all)
				OK(MPI_Allgatherv(in_place ? MPI_IN_PLACE : s, counts[r], MPI_INT, g,
						  counts, displs, MPI_INT, c));
			else
				OK(MPI_Gatherv(in_place && r == root ? MPI_IN_PLACE : s, counts[r],
					       MPI_INT, g, counts, displs, MPI_INT, root, c));
			if (!here)
				continue;
			if (all)
				snprintf(where, sizeof(where), "n %d, in place %d", n, in_place);
			else
				snprintf(where, sizeof(where), "root %d, n %d", root, n);
			for (j = 0; j < p; j++)
				for (i = 0; i < counts[j]; i++)
					CHECK(g[displs[j] + i] == coll_val(t, j, i),
					      "%s: block %d [%d] = %d", where, j, i, g[displs[j] + i]);
			for (i = 0; i < 3; i++)
				CHECK(g[i] == GUARD, "gap written");
		}
	}
	free(s);
	free(g);
	free(counts);
	free(displs);
}

static void test_gatherv(MPI_Comm c, int n)
{
	gather_vector(c, n, 0);
}

static void test_allgatherv(MPI_Comm c, int n)
{
	gather_vector(c, n, 1);
}

static void test_scatter(MPI_Comm c, int n)
{
	int r, p, root, i, in_place, *s, *d = ints(n + 1);

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	s = ints((size_t)n * p);
	for (in_place = 0; in_place < 2; in_place++) {
		for (root = 0; root < p; root++) {
			for (i = 0; i < n * p; i++)
				s[i] = r == root ? coll_val(4, root, i) : GUARD;
			fill_guard(d, n + 1);
			OK(MPI_Scatter(s, n, MPI_INT, in_place && r == root ? MPI_IN_PLACE : d, n,
				       MPI_INT, root, c));
			if (in_place && r == root) {
				for (i = 0; i < n * p; i++)
					CHECK(s[i] == coll_val(4, root, i), "send buffer changed");
				continue;
			}
			for (i = 0; i < n; i++)
				CHECK(d[i] == coll_val(4, root, r * n + i), "root %d, n %d: [%d] = %d",
				      root, n, i, d[i]);
			CHECK(d[n] == GUARD, "written past the end");
		}
	}
	free(s);
	free(d);
}

static void test_scatterv(MPI_Comm c, int n)
{
	int r, p, root, i, in_place, total, *s, *d, *counts, *displs;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	counts = ints(p);
	displs = ints(p);
	total = vlayout(n, p, counts, displs);
	s = ints(total);
	d = ints(counts[r] + 1);
	for (in_place = 0; in_place < 2; in_place++) {
		for (root = 0; root < p; root++) {
			for (i = 0; i < total; i++)
				s[i] = r == root ? coll_val(5, root, i) : GUARD;
			fill_guard(d, counts[r] + 1);
			OK(MPI_Scatterv(s, counts, displs, MPI_INT,
					in_place && r == root ? MPI_IN_PLACE : d, counts[r], MPI_INT,
					root, c));
			if (in_place && r == root)
				continue;
			for (i = 0; i < counts[r]; i++)
				CHECK(d[i] == coll_val(5, root, displs[r] + i),
				      "root %d, n %d: [%d] = %d", root, n, i, d[i]);
			CHECK(d[counts[r]] == GUARD, "written past the end");
		}
	}
	free(s);
	free(d);
	free(counts);
	free(displs);
}

/* Alltoall: block j of rank i holds coll_val(8, i, j * n + k). */
static void test_alltoall(MPI_Comm c, int n)
{
	int r, p, i, in_place, *s, *d;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	s = ints((size_t)n * p);
	d = ints((size_t)n * p + 1);
	for (in_place = 0; in_place < 2; in_place++) {
		for (i = 0; i < n * p; i++)
			s[i] = coll_val(8, r, i);
		fill_guard(d, (size_t)n * p + 1);
		if (in_place)
			memcpy(d, s, (size_t)n * p * sizeof(int));
		OK(MPI_Alltoall(in_place ? MPI_IN_PLACE : s, n, MPI_INT, d, n, MPI_INT, c));
		for (i = 0; i < n * p; i++)
			CHECK(d[i] == coll_val(8, i / n, r * n + i % n), "n %d, in place %d: [%d] = %d",
			      n, in_place, i, d[i]);
		CHECK(d[n * p] == GUARD, "written past the end");
	}
	free(s);
	free(d);
}

/* Alltoallv and w: rank i sends (n + i + j) % 5 + (n > 100 ? n : 0) elements to j. */
static int a2a_count(int n, int i, int j)
{
	return n ? (n + i + j) % 5 + (n > 100 ? n : 0) : 0;
}

/* Where the block for rank j starts in the send buffer of rank i. */
static int a2a_offset(int n, int i, int j)
{
	int k, at = 0;

	for (k = 0; k < j; k++)
		at += a2a_count(n, i, k);
	return at;
}

static void test_alltoallv(MPI_Comm c, int n, int w)
{
	int r, p, i, j, in_place, stot = 0, rtot = 0;
	int *s, *d, *sc, *sd, *rc, *rd, *sdb, *rdb;
	MPI_Datatype *types;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	sc = ints(p);
	sd = ints(p);
	rc = ints(p);
	rd = ints(p);
	sdb = ints(p);
	rdb = ints(p);
	types = coll_alloc(p * sizeof(*types));
	/* Send blocks in rank order, receive blocks in reverse with gaps. */
	for (j = 0; j < p; j++) {
		sc[j] = a2a_count(n, r, j);
		sd[j] = stot;
		stot += sc[j];
		types[j] = MPI_INT;
	}
	for (j = p - 1; j >= 0; j--) {
		rc[j] = a2a_count(n, j, r);
		rd[j] = rtot + 1;
		rtot += rc[j] + 1;
	}
	rtot++;
	for (j = 0; j < p; j++) {
		sdb[j] = sd[j] * (int)sizeof(int);
		rdb[j] = rd[j] * (int)sizeof(int);
	}
	s = ints(stot + 1);
	d = ints(rtot + stot + 1);
	for (in_place = 0; in_place < 2; in_place++) {
		for (i = 0; i < stot; i++)
			s[i] = coll_val(9, r, i);
		fill_guard(d, rtot);
		if (in_place) {
			/* In place, the receive side describes what is sent. */
			for (j = 0; j < p; j++)
				for (i = 0; i < rc[j]; i++)
					d[rd[j] + i] = coll_val(9, r, 100000 + j * 1000 + i);
		}
		if (!w)
			OK(MPI_Alltoallv(in_place ? MPI_IN_PLACE : s, sc, sd, MPI_INT, d, rc, rd,
					 MPI_INT, c));
		else
			OK(MPI_Alltoallw(in_place ? MPI_IN_PLACE : s, sc, sdb, types, d, rc, rdb,
					 types, c));
		for (j = 0; j < p; j++)
			for (i = 0; i < rc[j]; i++) {
				int want = in_place ? coll_val(9, j, 100000 + r * 1000 + i) :
						      coll_val(9, j, a2a_offset(n, j, r) + i);

				CHECK(d[rd[j] + i] == want, "n %d, in place %d: from %d [%d] = %d, want %d",
				      n, in_place, j, i, d[rd[j] + i], want);
			}
		CHECK(d[0] == GUARD && d[rtot - 1] == GUARD, "gap written");
	}
	free(s);
	free(d);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(sdb);
	free(rdb);
	free(types);
}

static void test_alltoallv_v(MPI_Comm c, int n)
{
	test_alltoallv(c, n, 0);
}

static void test_alltoallw(MPI_Comm c, int n)
{
	test_alltoallv(c, n, 1);
}

/* Sums of coll_val over ranks: small enough for int (values mod 1000). */
static int rv(int r, int i)
{
	return coll_val(10, r, i) % 1000 - 500;
}

static int sum_below(int r, int i)
{
	int k, s = 0;

	for (k = 0; k < r; k++)
		s += rv(k, i);
	return s;
}

static void test_reduce(MPI_Comm c, int n)
{
	int r, p, root, i, in_place, *s = ints(n + 1), *d = ints(n + 1);

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (in_place = 0; in_place < 2; in_place++) {
		for (root = 0; root < p; root++) {
			for (i = 0; i < n; i++)
				s[i] = rv(r, i);
			fill_guard(d, n + 1);
			if (in_place && r == root)
				memcpy(d, s, n * sizeof(int));
			OK(MPI_Reduce(in_place && r == root ? MPI_IN_PLACE : s, d, n, MPI_INT,
				      MPI_SUM, root, c));
			for (i = 0; i < n; i++)
				CHECK(s[i] == rv(r, i), "send buffer changed");
			if (r != root)
				continue;
			for (i = 0; i < n; i++)
				CHECK(d[i] == sum_below(p, i), "root %d, n %d, in place %d: [%d] = %d",
				      root, n, in_place, i, d[i]);
			CHECK(d[n] == GUARD, "written past the end");
		}
	}
	free(s);
	free(d);
}

static void test_allreduce(MPI_Comm c, int n)
{
	int r, p, i, in_place, *s = ints(n + 1), *d = ints(n + 1);

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (in_place = 0; in_place < 2; in_place++) {
		for (i = 0; i < n; i++)
			s[i] = rv(r, i);
		fill_guard(d, n + 1);
		if (in_place)
			memcpy(d, s, n * sizeof(int));
		OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : s, d, n, MPI_INT, MPI_SUM, c));
		for (i = 0; i < n; i++)
			CHECK(d[i] == sum_below(p, i), "n %d, in place %d: [%d] = %d", n, in_place, i,
			      d[i]);
		CHECK(d[n] == GUARD, "written past the end");
	}
	free(s);
	free(d);
}

static void test_scan(MPI_Comm c, int n)
{
	int r, p, i, in_place, ex, *s = ints(n + 1), *d = ints(n + 1);

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (ex = 0; ex < 2; ex++) {
		for (in_place = 0; in_place < 2; in_place++) {
			for (i = 0; i < n; i++)
				s[i] = rv(r, i);
			fill_guard(d, n + 1);
			if (in_place)
				memcpy(d, s, n * sizeof(int));
			if (ex)
				OK(MPI_Exscan(in_place ? MPI_IN_PLACE : s, d, n, MPI_INT, MPI_SUM, c));
			else
				OK(MPI_Scan(in_place ? MPI_IN_PLACE : s, d, n, MPI_INT, MPI_SUM, c));
			if (ex && r == 0)
				continue; /* undefined at rank 0 */
			for (i = 0; i < n; i++)
				CHECK(d[i] == sum_below(ex ? r : r + 1, i),
				      "exscan %d, n %d, in place %d: [%d] = %d", ex, n, in_place, i,
				      d[i]);
			CHECK(d[n] == GUARD, "written past the end");
		}
	}
	free(s);
	free(d);
}

static void test_reduce_scatter(MPI_Comm c, int n)
{
	int r, p, i, j, in_place, block, total, *s, *d, *counts;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	counts = ints(p);
	for (block = 0; block < 2; block++) {
		int at = 0;

		for (j = 0, total = 0; j < p; j++) {
			counts[j] = block ? n : vcount(n, j);
			total += counts[j];
		}
		for (j = 0; j < r; j++)
			at += counts[j];
		s = ints(total + 1);
		d = ints(total + 1);
		for (in_place = 0; in_place < 2; in_place++) {
			for (i = 0; i < total; i++)
				s[i] = rv(r, i);
			fill_guard(d, total + 1);
			if (in_place)
				memcpy(d, s, total * sizeof(int));
			if (block)
				OK(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : s, d, n, MPI_INT,
							    MPI_SUM, c));
			else
				OK(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : s, d, counts, MPI_INT,
						      MPI_SUM, c));
			for (i = 0; i < counts[r]; i++)
				CHECK(d[i] == sum_below(p, at + i),
				      "block %d, n %d, in place %d: [%d] = %d", block, n, in_place, i,
				      d[i]);
			if (!in_place)
				CHECK(d[counts[r]] == GUARD, "written past the end");
		}
		free(s);
		free(d);
	}
	free(counts);
}

static const struct {
	const char *name;
	void (*fn)(MPI_Comm c, int n);
} tests[] = {
	{ "barrier", test_barrier },
	{ "bcast", test_bcast },
	{ "gather", test_gather },
	{ "gatherv", test_gatherv },
	{ "scatter", test_scatter },
	{ "scatterv", test_scatterv },
	{ "allgather", test_allgather },
	{ "allgatherv", test_allgatherv },
	{ "alltoall", test_alltoall },
	{ "alltoallv", test_alltoallv_v },
	{ "alltoallw", test_alltoallw },
	{ "reduce", test_reduce },
	{ "allreduce", test_allreduce },
	{ "scan", test_scan },
	{ "reduce_scatter", test_reduce_scatter },
};
#define NTESTS (int)(sizeof(tests) / sizeof(tests[0]))

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	int k, t, z, ran = 0;

	coll_init(&argc, &argv);
	for (t = 0; t < NTESTS; t++)
		ran += !only || !strcmp(only, tests[t].name);
	CHECK(ran > 0, "no test named '%s'", only);
	for (k = 0; k < COLL_NCOMMS; k++) {
		const char *cname;
		MPI_Comm c = coll_comm(k, &cname);

		for (t = 0; t < NTESTS; t++) {
			if (only && strcmp(only, tests[t].name))
				continue;
			for (z = 0; z < NSIZES; z++) {
				char where[128];

				snprintf(where, sizeof(where), "%s on %s, %d elements", tests[t].name,
					 cname, sizes[z]);
				coll_where = where;
				tests[t].fn(c, sizes[z]);
				if (tests[t].fn == test_barrier)
					break;
			}
		}
		coll_comm_done(&c);
	}
	coll_where = "finalize";
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll: %s passed\n", only ? only : "all");
	return 0;
}
