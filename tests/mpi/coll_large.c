/* SPDX-License-Identifier: MIT */
/*
 * coll_large.c - the large-count (MPI-4.0 "_c") collectives and reductions.
 *
 *   forms    every _c collective, blocking and non-blocking, with counts
 *            that fit an int: the results of the int forms (in place too)
 *   user     MPI_Op_create_c: its function gets MPI_Count lengths and the
 *            datatype, and serves every reduction (the int forms too); an
 *            MPI_Op_create operation serves the _c reductions
 *   address  v and w forms with absolute addresses (MPI_BOTTOM) as
 *            displacements, beyond an int: the v forms divide them by the
 *            common divisor of the counts and displacements, Alltoallw
 *            makes a type per block
 *   inter    the v and w forms on an inter-communicator (arrays of the
 *            remote group's size, MPI_ROOT and MPI_PROC_NULL)
 *   errors   under MPI_ERRORS_RETURN: negative counts MPI_ERR_COUNT, the
 *            forms that cannot carry a count beyond INT_MAX MPI_ERR_COUNT,
 *            bad types, operations, buffers, communicators; the
 *            communicator still works afterwards
 *   big      (bigmem) counts beyond INT_MAX: Bcast_c, Gatherv_c, Allreduce_c,
 *            Iallreduce_c and Reduce_local_c with a user function over
 *            2^31 + 24 bytes
 *
 *   bipload -sz N coll_large [test]
 */
#include <limits.h>
#include <stdint.h>

#include "coll_check.h"

#define N 5

#define EXPECT(cls, call)                                                                          \
	do {                                                                                       \
		int got_ = (call);                                                                 \
		CHECK(got_ == (cls), "%s returned %d, want %s (%d)", #call, got_, #cls, cls);      \
	} while (0)

/* The blocking form (nb 0), the non-blocking one and a wait (1), or the
 * persistent one started, waited for and freed (2). */
#define RUN(nb, blocking, nonblocking, persistent, ...)                                            \
	do {                                                                                       \
		MPI_Request rq_ = MPI_REQUEST_NULL;                                                \
                                                                                                   \
		if ((nb) == 2) {                                                                   \
			OK(persistent(__VA_ARGS__, MPI_INFO_NULL, &rq_));                          \
			OK(MPI_Start(&rq_));                                                       \
			OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                     \
			CHECK(rq_ != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");     \
			OK(MPI_Request_free(&rq_));                                                \
		} else if (nb) {                                                                   \
			OK(nonblocking(__VA_ARGS__, &rq_));                                        \
			OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                     \
		} else {                                                                           \
			OK(blocking(__VA_ARGS__));                                                 \
		}                                                                                  \
	} while (0)

static int val(int r, int i)
{
	return coll_val(7, r, i);
}

static void fill(int *b, int n, int r)
{
	int i;

	for (i = 0; i < n; i++)
		b[i] = val(r, i);
}

static void clear(int *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		b[i] = -1;
}

/* ------------------------------------------------------------------ */
/* forms                                                               */
/* ------------------------------------------------------------------ */

static void test_rooted(MPI_Comm c, int nb)
{
	int r, p, root, i, j, *a, *b;
	MPI_Count *counts;
	MPI_Aint *displs;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	a = coll_alloc(sizeof(int) * N * p * p);
	b = coll_alloc(sizeof(int) * N * p * p);
	counts = coll_alloc(sizeof(MPI_Count) * p);
	displs = coll_alloc(sizeof(MPI_Aint) * p);
	for (root = 0; root < p; root++) {
		/* Bcast */
		if (r == root)
			fill(a, N, root);
		else
			clear(a, N);
		RUN(nb, MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c, a, N, MPI_INT, root, c);
		for (i = 0; i < N; i++)
			CHECK(a[i] == val(root, i), "Bcast_c: [%d] = %d", i, a[i]);

		/* Gather, and Gather in place at the root */
		fill(a, N, r);
		clear(b, N * p);
		RUN(nb, MPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c, a, N, MPI_INT, b, N,
		    MPI_INT, root, c);
		if (r == root)
			for (j = 0; j < p; j++)
				for (i = 0; i < N; i++)
					CHECK(b[j * N + i] == val(j, i), "Gather_c: [%d][%d] = %d",
					      j, i, b[j * N + i]);
		clear(b, N * p);
		if (r == root)
			fill(b + r * N, N, r);
		RUN(nb, MPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c,
		    r == root ? MPI_IN_PLACE : a, N, MPI_INT, b, N, MPI_INT, root, c);
		if (r == root)
			for (j = 0; j < p; j++)
				CHECK(b[j * N + 1] == val(j, 1), "Gather_c in place: [%d] = %d", j,
				      b[j * N + 1]);

		/* Gatherv: rank j sends j + 1, placed in reverse rank order */
		for (j = 0, i = 0; j < p; j++)
			i += j + 1;
		for (j = p - 1, displs[p - 1] = 0; j >= 0; j--) {
			counts[j] = j + 1;
			displs[j] = j == p - 1 ? 0 : displs[j + 1] + counts[j + 1];
		}
		fill(a, r + 1, r);
		clear(b, i);
		RUN(nb, MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c, a, r + 1, MPI_INT, b,
		    counts, displs, MPI_INT, root, c);
		if (r == root)
			for (j = 0; j < p; j++)
				for (i = 0; i < j + 1; i++)
					CHECK(b[displs[j] + i] == val(j, i),
					      "Gatherv_c: rank %d [%d] = %d", j, i,
					      b[displs[j] + i]);

		/* Scatter */
		for (j = 0; j < p; j++)
			fill(b + j * N, N, j);
		clear(a, N);
		RUN(nb, MPI_Scatter_c, MPI_Iscatter_c, MPI_Scatter_init_c, b, N, MPI_INT, a, N,
		    MPI_INT, root, c);
		for (i = 0; i < N; i++)
			CHECK(a[i] == val(r, i), "Scatter_c: [%d] = %d", i, a[i]);

		/* Scatterv with the Gatherv layout */
		for (j = 0; j < p; j++)
			fill(b + displs[j], j + 1, j);
		clear(a, p + 1);
		RUN(nb, MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c, b, counts, displs,
		    MPI_INT, a, r + 1, MPI_INT, root, c);
		for (i = 0; i < r + 1; i++)
			CHECK(a[i] == val(r, i), "Scatterv_c: [%d] = %d", i, a[i]);
		CHECK(a[r + 1] == -1, "Scatterv_c wrote past its count");

		/* Reduce, and in place at the root */
		fill(a, N, r);
		clear(b, N);
		RUN(nb, MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c, a, b, N, MPI_INT, MPI_SUM,
		    root, c);
		for (i = 0; r == root && i < N; i++) {
			long long want = 0;

			for (j = 0; j < p; j++)
				want += val(j, i);
			CHECK(b[i] == (int)want, "Reduce_c: [%d] = %d, want %lld", i, b[i], want);
		}
		fill(b, N, r);
		RUN(nb, MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c,
		    r == root ? MPI_IN_PLACE : b, a, N, MPI_INT, MPI_MAX, root, c);
		if (r == root)
			CHECK(a[2] == val(p - 1, 2), "Reduce_c in place: %d", a[2]);
	}
	free(a);
	free(b);
	free(counts);
	free(displs);
}

static void test_all(MPI_Comm c, int nb)
{
	int r, p, i, j, *a, *b, total;
	MPI_Count *sc, *rcnt;
	MPI_Aint *sd, *rd, *wsd, *wrd;
	MPI_Datatype *types;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	a = coll_alloc(sizeof(int) * N * p * p);
	b = coll_alloc(sizeof(int) * N * p * p);
	sc = coll_alloc(sizeof(MPI_Count) * p);
	rcnt = coll_alloc(sizeof(MPI_Count) * p);
	sd = coll_alloc(sizeof(MPI_Aint) * p);
	rd = coll_alloc(sizeof(MPI_Aint) * p);
	wsd = coll_alloc(sizeof(MPI_Aint) * p);
	wrd = coll_alloc(sizeof(MPI_Aint) * p);
	types = coll_alloc(sizeof(MPI_Datatype) * p);

	/* Allgather, and in place */
	fill(a, N, r);
	clear(b, N * p);
	RUN(nb, MPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c, a, N, MPI_INT, b, N,
	    MPI_INT, c);
	for (j = 0; j < p; j++)
		for (i = 0; i < N; i++)
			CHECK(b[j * N + i] == val(j, i), "Allgather_c: [%d][%d] = %d", j, i,
			      b[j * N + i]);
	clear(b, N * p);
	fill(b + r * N, N, r);
	RUN(nb, MPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c, MPI_IN_PLACE, 0,
	    MPI_DATATYPE_NULL, b, N, MPI_INT, c);
	for (j = 0; j < p; j++)
		CHECK(b[j * N + N - 1] == val(j, N - 1), "Allgather_c in place: [%d] = %d", j,
		      b[j * N + N - 1]);

	/* Allgatherv: rank j contributes j % 3 elements (some none) */
	for (j = 0, total = 0; j < p; j++) {
		rcnt[j] = j % 3;
		rd[j] = total;
		total += j % 3;
	}
	fill(a, r % 3, r);
	clear(b, total + 1);
	RUN(nb, MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, a, r % 3, MPI_INT, b,
	    rcnt, rd, MPI_INT, c);
	for (j = 0; j < p; j++)
		for (i = 0; i < j % 3; i++)
			CHECK(b[rd[j] + i] == val(j, i), "Allgatherv_c: rank %d [%d] = %d", j, i,
			      b[rd[j] + i]);
	CHECK(b[total] == -1, "Allgatherv_c wrote past the end");

	/* Alltoall: block j of rank r is val(r, j * N + i) */
	for (j = 0; j < p * N; j++)
		a[j] = val(r, j);
	clear(b, N * p);
	RUN(nb, MPI_Alltoall_c, MPI_Ialltoall_c, MPI_Alltoall_init_c, a, N, MPI_INT, b, N, MPI_INT,
	    c);
	for (j = 0; j < p; j++)
		for (i = 0; i < N; i++)
			CHECK(b[j * N + i] == val(j, r * N + i), "Alltoall_c: [%d][%d] = %d", j, i,
			      b[j * N + i]);

	/* Alltoallv: rank r sends j + 1 elements to rank j, blocks in reverse order */
	for (j = p - 1, i = 0; j >= 0; j--) {
		sc[j] = j + 1;
		sd[j] = i;
		i += j + 1;
	}
	for (j = 0, i = 0; j < p; j++) {
		rcnt[j] = r + 1;
		rd[j] = i;
		i += r + 1;
	}
	for (j = 0; j < p; j++)
		for (i = 0; i < j + 1; i++)
			a[sd[j] + i] = val(r, j * 100 + i);
	clear(b, (r + 1) * p);
	RUN(nb, MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, a, sc, sd, MPI_INT, b,
	    rcnt, rd, MPI_INT, c);
	for (j = 0; j < p; j++)
		for (i = 0; i < r + 1; i++)
			CHECK(b[rd[j] + i] == val(j, r * 100 + i), "Alltoallv_c: from %d [%d] = %d",
			      j, i, b[rd[j] + i]);

	/* Alltoallv and Allgatherv in place: 2 elements from each rank */
	for (j = 0; j < p; j++) {
		rcnt[j] = 2;
		rd[j] = 2 * (p - 1 - j);
		b[rd[j]] = val(r, j);
		b[rd[j] + 1] = -val(r, j);
	}
	RUN(nb, MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, MPI_IN_PLACE, NULL, NULL,
	    MPI_DATATYPE_NULL, b, rcnt, rd, MPI_INT, c);
	for (j = 0; j < p; j++)
		CHECK(b[rd[j]] == val(j, r) && b[rd[j] + 1] == -val(j, r),
		      "Alltoallv_c in place: from %d: %d", j, b[rd[j]]);
	clear(b, 2 * p);
	b[rd[r]] = val(r, 0);
	b[rd[r] + 1] = val(r, 1);
	RUN(nb, MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, MPI_IN_PLACE, 0,
	    MPI_DATATYPE_NULL, b, rcnt, rd, MPI_INT, c);
	for (j = 0; j < p; j++)
		CHECK(b[rd[j]] == val(j, 0) && b[rd[j] + 1] == val(j, 1),
		      "Allgatherv_c in place: rank %d: %d", j, b[rd[j]]);
	for (j = 0, i = 0; j < p; j++) {
		rcnt[j] = r + 1;
		rd[j] = i;
		i += r + 1;
	}

	/* Alltoallw: the same in bytes, with MPI_INT types */
	for (j = 0; j < p; j++) {
		wsd[j] = sd[j] * (MPI_Aint)sizeof(int);
		wrd[j] = rd[j] * (MPI_Aint)sizeof(int);
		types[j] = MPI_INT;
	}
	clear(b, (r + 1) * p);
	RUN(nb, MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c, a, sc, wsd, types, b, rcnt,
	    wrd, types, c);
	for (j = 0; j < p; j++)
		for (i = 0; i < r + 1; i++)
			CHECK(b[rd[j] + i] == val(j, r * 100 + i), "Alltoallw_c: from %d [%d] = %d",
			      j, i, b[rd[j] + i]);

	/* Allreduce, in place too */
	fill(a, N, r);
	clear(b, N);
	RUN(nb, MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, a, b, N, MPI_INT, MPI_MIN,
	    c);
	CHECK(b[3] == val(0, 3), "Allreduce_c: %d", b[3]);
	fill(b, N, r);
	RUN(nb, MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, MPI_IN_PLACE, b, N,
	    MPI_INT, MPI_MAX, c);
	CHECK(b[3] == val(p - 1, 3), "Allreduce_c in place: %d", b[3]);

	/* Reduce_scatter: rank j gets j + 1 sums; Reduce_scatter_block: N each */
	for (j = 0, total = 0; j < p; j++) {
		rcnt[j] = j + 1;
		total += j + 1;
	}
	for (i = 0; i < total; i++)
		a[i] = r + i;
	clear(b, total);
	RUN(nb, MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c, a, b, rcnt,
	    MPI_INT, MPI_SUM, c);
	for (i = 0; i < r + 1; i++) {
		int first = r * (r + 1) / 2 + i;

		CHECK(b[i] == p * (p - 1) / 2 + p * first, "Reduce_scatter_c: [%d] = %d", i, b[i]);
	}
	for (i = 0; i < N * p; i++)
		a[i] = r + i;
	clear(b, N);
	RUN(nb, MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c,
	    MPI_Reduce_scatter_block_init_c, a, b, N, MPI_INT, MPI_SUM, c);
	for (i = 0; i < N; i++)
		CHECK(b[i] == p * (p - 1) / 2 + p * (r * N + i),
		      "Reduce_scatter_block_c: [%d] = %d", i, b[i]);

	/* Scan, Exscan */
	for (i = 0; i < N; i++)
		a[i] = r + 1 + i;
	clear(b, N);
	RUN(nb, MPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c, a, b, N, MPI_INT, MPI_SUM, c);
	for (i = 0; i < N; i++)
		CHECK(b[i] == (r + 1) * (r + 2) / 2 + (r + 1) * i, "Scan_c: [%d] = %d", i, b[i]);
	clear(b, N);
	RUN(nb, MPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c, a, b, N, MPI_INT, MPI_SUM, c);
	for (i = 0; r > 0 && i < N; i++)
		CHECK(b[i] == r * (r + 1) / 2 + r * i, "Exscan_c: [%d] = %d", i, b[i]);

	free(a);
	free(b);
	free(sc);
	free(rcnt);
	free(sd);
	free(rd);
	free(wsd);
	free(wrd);
	free(types);
}

static void test_forms(MPI_Comm c)
{
	int nb, a[N], b[N], i;

	for (nb = 0; nb < 3; nb++) {
		test_rooted(c, nb);
		test_all(c, nb);
	}
	/* Reduce_local_c */
	fill(a, N, 1);
	fill(b, N, 2);
	OK(MPI_Reduce_local_c(a, b, N, MPI_INT, MPI_BXOR));
	for (i = 0; i < N; i++)
		CHECK(b[i] == (val(1, i) ^ val(2, i)), "Reduce_local_c: [%d] = %d", i, b[i]);
}

/* ------------------------------------------------------------------ */
/* user                                                                */
/* ------------------------------------------------------------------ */

/* (first, last) pairs: associative, not commutative; a rank contributes
 * (r, r), a reduction over ranks a..b gives (a, b). */
static long long range_calls, sum_calls;
static MPI_Count range_last_len;

static void range_c(void *in_, void *inout_, MPI_Count *len, MPI_Datatype *t)
{
	const int *in = in_;
	int *io = inout_;
	MPI_Count i;

	CHECK(*t == MPI_2INT, "the function got another datatype");
	range_calls++;
	range_last_len = *len;
	for (i = 0; i < *len; i++) {
		CHECK(in[2 * i + 1] + 1 == io[2 * i], "range_c: (%d, %d) then (%d, %d)", in[2 * i],
		      in[2 * i + 1], io[2 * i], io[2 * i + 1]);
		io[2 * i] = in[2 * i];
	}
}

/* An MPI_Op_create function: commutative sum. */
static void sum_int(void *in_, void *inout_, int *len, MPI_Datatype *t)
{
	const int *in = in_;
	int *io = inout_, i;

	CHECK(*t == MPI_INT, "the function got another datatype");
	sum_calls++;
	for (i = 0; i < *len; i++)
		io[i] += in[i];
}

static void range_fill(int *b, int n, int r)
{
	int i;

	for (i = 0; i < n; i++) {
		b[2 * i] = r;
		b[2 * i + 1] = r;
	}
}

static void range_check(const int *b, int n, int lo, int hi, const char *what)
{
	int i;

	for (i = 0; i < n; i++)
		CHECK(b[2 * i] == lo && b[2 * i + 1] == hi, "%s: [%d] = (%d, %d), want (%d, %d)",
		      what, i, b[2 * i], b[2 * i + 1], lo, hi);
}

static void test_user(MPI_Comm c)
{
	int r, p, nb, root, i, commute, s[2 * N], d[2 * N * 8 + 2 * N], x[N], y[N];
	MPI_Count counts[64];
	MPI_Op range, sum;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	OK(MPI_Op_create_c(range_c, 0, &range));
	OK(MPI_Op_create(sum_int, 1, &sum));
	OK(MPI_Op_commutative(range, &commute));
	CHECK(commute == 0, "MPI_Op_commutative of an MPI_Op_create_c operation: %d", commute);

	for (nb = 0; nb < 3; nb++) {
		for (root = 0; root < p; root++) {
			range_fill(s, N, r);
			range_fill(d, N, -1);
			RUN(nb, MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c, s, d, N, MPI_2INT,
			    range, root, c);
			if (r == root)
				range_check(d, N, 0, p - 1, "Reduce_c");
		}
		range_fill(s, N, r);
		RUN(nb, MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, s, d, N, MPI_2INT,
		    range, c);
		range_check(d, N, 0, p - 1, "Allreduce_c");
		range_fill(d, N, r);
		RUN(nb, MPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c, MPI_IN_PLACE, d, N, MPI_2INT,
		    range, c);
		range_check(d, N, 0, r, "Scan_c");
		range_fill(d, N, -1);
		RUN(nb, MPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c, s, d, N, MPI_2INT, range,
		    c);
		if (r > 0)
			range_check(d, N, 0, r - 1, "Exscan_c");
		for (i = 0; i < p; i++)
			counts[i] = i % 2 + 1;
		range_fill(s, N, r);
		{
			int big[2 * 2 * 64];

			range_fill(big, 2 * p, r);
			RUN(nb, MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c,
			    MPI_Reduce_scatter_init_c, big, d, counts, MPI_2INT, range, c);
			range_check(d, r % 2 + 1, 0, p - 1, "Reduce_scatter_c");
			RUN(nb, MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c,
			    MPI_Reduce_scatter_block_init_c, big, d, 2, MPI_2INT, range, c);
			range_check(d, 2, 0, p - 1, "Reduce_scatter_block_c");
		}
		/* An MPI_Op_create operation with the _c forms. */
		for (i = 0; i < N; i++)
			x[i] = r * i;
		sum_calls = 0;
		RUN(nb, MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, x, y, N, MPI_INT,
		    sum, c);
		for (i = 0; i < N; i++)
			CHECK(y[i] == p * (p - 1) / 2 * i, "Allreduce_c, MPI_Op_create: [%d] = %d",
			      i, y[i]);
		CHECK(p == 1 || sum_calls > 0, "the MPI_Op_create function was not called");
	}
	/* The int forms with an MPI_Op_create_c operation. */
	range_fill(s, N, r);
	range_calls = 0;
	OK(MPI_Allreduce(s, d, N, MPI_2INT, range, c));
	range_check(d, N, 0, p - 1, "MPI_Allreduce");
	CHECK(p == 1 || range_calls > 0, "the MPI_Op_create_c function was not called");
	range_fill(d, N, r);
	OK(MPI_Scan(MPI_IN_PLACE, d, N, MPI_2INT, range, c));
	range_check(d, N, 0, r, "MPI_Scan");

	/* Reduce_local_c: the function gets the whole length. */
	range_fill(s, N, 3);
	range_fill(d, N, 4);
	range_calls = 0;
	OK(MPI_Reduce_local_c(s, d, N, MPI_2INT, range));
	range_check(d, N, 3, 4, "Reduce_local_c");
	CHECK(range_calls == 1 && range_last_len == N, "%lld calls, the last of %lld elements",
	      range_calls, (long long)range_last_len);
	sum_calls = 0;
	for (i = 0; i < N; i++) {
		x[i] = i;
		y[i] = 10 * i;
	}
	OK(MPI_Reduce_local_c(x, y, N, MPI_INT, sum));
	CHECK(sum_calls == 1 && y[4] == 44, "Reduce_local_c with MPI_Op_create: %d", y[4]);

	OK(MPI_Op_free(&range));
	OK(MPI_Op_free(&sum));
	CHECK(range == MPI_OP_NULL, "MPI_Op_free left the handle");
}

/* ------------------------------------------------------------------ */
/* address                                                             */
/* ------------------------------------------------------------------ */

/* 128 KiB blocks, aligned on 128 KiB: absolute addresses (below 2^47) divided by their common
 * divisor with the counts fit an int. */
#define BLOCK (1 << 17)

static void test_address(MPI_Comm c)
{
	int r, p, j, nb;
	unsigned char *snd, *rcv;
	MPI_Count *counts, *wcounts;
	MPI_Aint *displs, *sdispls, base;
	MPI_Datatype *types;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	snd = aligned_alloc(BLOCK, (size_t)BLOCK * p);
	rcv = aligned_alloc(BLOCK, (size_t)BLOCK * p);
	CHECK(snd && rcv, "cannot allocate %d blocks", 2 * p);
	counts = coll_alloc(sizeof(MPI_Count) * p);
	wcounts = coll_alloc(sizeof(MPI_Count) * p);
	displs = coll_alloc(sizeof(MPI_Aint) * p);
	sdispls = coll_alloc(sizeof(MPI_Aint) * p);
	types = coll_alloc(sizeof(MPI_Datatype) * p);
	OK(MPI_Get_address(rcv, &base));
	CHECK(base > INT_MAX, "the heap lies below 2 GiB: this test needs it above");

	for (nb = 0; nb < 3; nb++) {
		/* Allgatherv into MPI_BOTTOM: displacements are addresses. */
		memset(snd, r + 1, BLOCK);
		memset(rcv, 0, (size_t)BLOCK * p);
		for (j = 0; j < p; j++) {
			counts[j] = BLOCK;
			displs[j] = base + (MPI_Aint)(p - 1 - j) * BLOCK;
		}
		RUN(nb, MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, snd, BLOCK,
		    MPI_BYTE, MPI_BOTTOM, counts, displs, MPI_BYTE, c);
		for (j = 0; j < p; j++) {
			const unsigned char *blk = rcv + (size_t)(p - 1 - j) * BLOCK;

			CHECK(blk[0] == j + 1 && blk[BLOCK - 1] == j + 1,
			      "Allgatherv_c at addresses: block of rank %d has %d", j, blk[0]);
		}

		/* Alltoallv from and to MPI_BOTTOM. */
		for (j = 0; j < p; j++) {
			memset(snd + (size_t)j * BLOCK, r * 16 + j, BLOCK);
			OK(MPI_Get_address(snd + (size_t)j * BLOCK, &sdispls[j]));
			displs[j] = base + (MPI_Aint)j * BLOCK;
		}
		memset(rcv, 0xff, (size_t)BLOCK * p);
		RUN(nb, MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, MPI_BOTTOM, counts,
		    sdispls, MPI_BYTE, MPI_BOTTOM, counts, displs, MPI_BYTE, c);
		for (j = 0; j < p; j++)
			CHECK(rcv[(size_t)j * BLOCK + 7] == (unsigned char)(j * 16 + r),
			      "Alltoallv_c at addresses: from %d: %d", j, rcv[(size_t)j * BLOCK]);

		/* Alltoallw at byte addresses that no common divisor brings under
		 * INT_MAX (+ 1 + j): a type per block. */
		for (j = 0; j < p; j++) {
			memset(snd + (size_t)j * BLOCK, 0, BLOCK);
			snd[(size_t)j * BLOCK + 1 + j] = (unsigned char)(r * 16 + j);
			OK(MPI_Get_address(snd + (size_t)j * BLOCK + 1 + j, &sdispls[j]));
			displs[j] = base + (MPI_Aint)j * BLOCK + 3;
			wcounts[j] = 1;
			types[j] = MPI_BYTE;
		}
		memset(rcv, 0xff, (size_t)BLOCK * p);
		RUN(nb, MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c, MPI_BOTTOM,
		    wcounts, sdispls, types, MPI_BOTTOM, wcounts, displs, types, c);
		for (j = 0; j < p; j++) {
			CHECK(rcv[(size_t)j * BLOCK + 3] == (unsigned char)(j * 16 + r),
			      "Alltoallw_c at addresses: from %d: %d", j,
			      rcv[(size_t)j * BLOCK + 3]);
			CHECK(rcv[(size_t)j * BLOCK + 2] == 0xff &&
				  rcv[(size_t)j * BLOCK + 4] == 0xff,
			      "Alltoallw_c wrote beside its byte");
		}
	}
	free(snd);
	free(rcv);
	free(counts);
	free(wcounts);
	free(displs);
	free(sdispls);
	free(types);
}

/* ------------------------------------------------------------------ */
/* inter                                                               */
/* ------------------------------------------------------------------ */

/* The v and w forms on an inter-communicator between the lower and the
 * upper half of the world: arrays of the remote group's size, a root group
 * (MPI_ROOT, MPI_PROC_NULL) and a leaf group. */
static void test_inter(int nb)
{
	int wr, wp, half, low, lr, ls, rs, j, i, total, *a, *b;
	MPI_Comm local, ic;
	MPI_Count *counts, *wcounts;
	MPI_Aint *displs, *wdispls;
	MPI_Datatype *types;

	MPI_Comm_rank(MPI_COMM_WORLD, &wr);
	MPI_Comm_size(MPI_COMM_WORLD, &wp);
	if (wp < 2)
		return;
	half = (wp + 1) / 2;
	low = wr < half;
	OK(MPI_Comm_split(MPI_COMM_WORLD, low, wr, &local));
	OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 77, &ic));
	MPI_Comm_rank(ic, &lr);
	MPI_Comm_size(ic, &ls);
	MPI_Comm_remote_size(ic, &rs);
	a = coll_alloc(sizeof(int) * 64 * wp);
	b = coll_alloc(sizeof(int) * 64 * wp);
	counts = coll_alloc(sizeof(MPI_Count) * wp);
	wcounts = coll_alloc(sizeof(MPI_Count) * wp);
	displs = coll_alloc(sizeof(MPI_Aint) * wp);
	wdispls = coll_alloc(sizeof(MPI_Aint) * wp);
	types = coll_alloc(sizeof(MPI_Datatype) * wp);

	/* Gatherv to rank 0 of the lower half: upper rank j sends j + 1. */
	for (j = 0, total = 0; j < rs; j++) {
		counts[j] = j + 1;
		displs[j] = total;
		total += j + 1;
	}
	fill(a, lr + 1, lr);
	clear(b, total);
	if (low)
		RUN(nb, MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c, NULL, 0, MPI_INT, b,
		    counts, displs, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
	else
		RUN(nb, MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c, a, lr + 1, MPI_INT, NULL,
		    NULL, NULL, MPI_INT, 0, ic);
	for (j = 0; low && lr == 0 && j < rs; j++)
		for (i = 0; i < j + 1; i++)
			CHECK(b[displs[j] + i] == val(j, i), "inter Gatherv_c: rank %d [%d] = %d",
			      j, i, b[displs[j] + i]);

	/* Scatterv from rank 0 of the upper half: lower rank j gets j + 1. */
	for (j = 0, total = 0; j < rs; j++) {
		counts[j] = j + 1;
		displs[j] = total;
		fill(b + total, j + 1, j);
		total += j + 1;
	}
	clear(a, ls + 1);
	if (!low)
		RUN(nb, MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c, b, counts, displs,
		    MPI_INT, NULL, 0, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
	else
		RUN(nb, MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c, NULL, NULL, NULL,
		    MPI_INT, a, lr + 1, MPI_INT, 0, ic);
	for (i = 0; low && i < lr + 1; i++)
		CHECK(a[i] == val(lr, i), "inter Scatterv_c: [%d] = %d", i, a[i]);

	/* Allgatherv: each rank sends lr + 1, receives from the remote group. */
	for (j = 0, total = 0; j < rs; j++) {
		counts[j] = j + 1;
		displs[j] = total;
		total += j + 1;
	}
	fill(a, lr + 1, lr + 100 * low);
	clear(b, total);
	RUN(nb, MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, a, lr + 1, MPI_INT, b,
	    counts, displs, MPI_INT, ic);
	for (j = 0; j < rs; j++)
		for (i = 0; i < j + 1; i++)
			CHECK(b[displs[j] + i] == val(j + 100 * !low, i),
			      "inter Allgatherv_c: rank %d [%d] = %d", j, i, b[displs[j] + i]);

	/* Alltoallv and Alltoallw: 2 elements to each remote rank. */
	for (j = 0; j < rs; j++) {
		counts[j] = 2;
		displs[j] = 2 * (rs - 1 - j);
		wcounts[j] = 2;
		wdispls[j] = displs[j] * (MPI_Aint)sizeof(int);
		types[j] = MPI_INT;
		a[displs[j]] = val(lr + 100 * low, j);
		a[displs[j] + 1] = -val(lr + 100 * low, j);
	}
	clear(b, 2 * rs);
	RUN(nb, MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, a, counts, displs, MPI_INT,
	    b, counts, displs, MPI_INT, ic);
	for (j = 0; j < rs; j++)
		CHECK(b[displs[j]] == val(j + 100 * !low, lr) &&
			  b[displs[j] + 1] == -val(j + 100 * !low, lr),
		      "inter Alltoallv_c: from %d: %d", j, b[displs[j]]);
	clear(b, 2 * rs);
	RUN(nb, MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c, a, wcounts, wdispls, types,
	    b, wcounts, wdispls, types, ic);
	for (j = 0; j < rs; j++)
		CHECK(b[displs[j]] == val(j + 100 * !low, lr), "inter Alltoallw_c: from %d: %d", j,
		      b[displs[j]]);

	free(a);
	free(b);
	free(counts);
	free(wcounts);
	free(displs);
	free(wdispls);
	free(types);
	OK(MPI_Comm_free(&ic));
	OK(MPI_Comm_free(&local));
}

/* ------------------------------------------------------------------ */
/* errors                                                              */
/* ------------------------------------------------------------------ */

#define BEYOND ((MPI_Count)INT_MAX + 1)

static void noop_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *t)
{
	(void)in;
	(void)inout;
	(void)len;
	(void)t;
}

static void still_works(MPI_Comm c)
{
	int r, p, x, y;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	x = r + 1;
	OK(MPI_Allreduce_c(&x, &y, 1, MPI_INT, MPI_SUM, c));
	CHECK(y == p * (p + 1) / 2, "MPI_Allreduce_c after the errors gives %d", y);
	OK(MPI_Barrier(c));
}

static void test_errors(MPI_Comm c)
{
	int r, p, i, a[64] = {0}, b[64 * 64] = {0};
	MPI_Count counts[64];
	MPI_Aint displs[64];
	MPI_Datatype types[64];
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_Op user;
	MPI_Datatype uncommitted;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < 64; i++) {
		counts[i] = 1;
		displs[i] = i;
		types[i] = MPI_INT;
	}
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Op_create_c(noop_c, 1, &user));

	/* Negative counts, small and below INT_MIN, on every rank. */
	EXPECT(MPI_ERR_COUNT, MPI_Bcast_c(a, -1, MPI_INT, 0, c));
	EXPECT(MPI_ERR_COUNT, MPI_Bcast_c(a, -((MPI_Count)1 << 40), MPI_INT, 0, c));
	EXPECT(MPI_ERR_COUNT, MPI_Ibcast_c(a, -3, MPI_INT, 0, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Allgather_c(a, -1, MPI_INT, b, 1, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT, MPI_Alltoall_c(a, 1, MPI_INT, b, -((MPI_Count)1 << 33), MPI_INT, c));
	EXPECT(MPI_ERR_COUNT, MPI_Ialltoall_c(a, -1, MPI_INT, b, 1, MPI_INT, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Allreduce_c(a, b, -5, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_COUNT,
	       MPI_Iallreduce_c(a, b, -((MPI_Count)1 << 35), MPI_INT, MPI_SUM, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Scan_c(a, b, -1, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_COUNT, MPI_Iexscan_c(a, b, -1, MPI_INT, MPI_SUM, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_block_c(a, b, -1, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_c(a, b, -1, MPI_INT, MPI_SUM, 0, c));
	counts[p - 1] = -1;
	EXPECT(MPI_ERR_COUNT, MPI_Allgatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT,
	       MPI_Alltoallv_c(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT,
	       MPI_Ialltoallw_c(a, counts, displs, types, b, counts, displs, types, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_c(a, b, counts, MPI_INT, MPI_SUM, c));
	counts[p - 1] = -((MPI_Count)1 << 40);
	EXPECT(MPI_ERR_COUNT, MPI_Ireduce_scatter_c(a, b, counts, MPI_INT, MPI_SUM, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Gatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, r, c));
	EXPECT(MPI_ERR_COUNT, MPI_Scatterv_c(a, counts, displs, MPI_INT, b, 1, MPI_INT, r, c));
	counts[p - 1] = 1;
	CHECK(req == MPI_REQUEST_NULL, "a refused call set the request");

	/* Counts beyond INT_MAX where the form cannot carry them (refused
	 * before any data is touched, on every rank). */
	EXPECT(MPI_ERR_COUNT, MPI_Iallreduce_c(a, b, BEYOND, MPI_BYTE, user, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Ireduce_c(a, b, BEYOND, MPI_INT, user, 0, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Iscan_c(a, b, BEYOND, MPI_INT, user, c, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_block_c(a, b, BEYOND, MPI_INT, user, c));
	counts[0] = p > 1 ? INT_MAX : BEYOND;
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_c(a, b, counts, MPI_INT, user, c));
	counts[0] = BEYOND + 2;
	EXPECT(MPI_ERR_COUNT, MPI_Ireduce_scatter_c(a, b, counts, MPI_INT, user, c, &req));
	/* A count beyond INT_MAX and a displacement that share no divisor. */
	counts[0] = BEYOND + 1;
	displs[0] = 2;
	EXPECT(MPI_ERR_COUNT, MPI_Allgatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, c));
	EXPECT(MPI_ERR_COUNT,
	       MPI_Iallgatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, c, &req));
	counts[0] = 1;
	displs[0] = (MPI_Aint)INT_MAX + 2;
	EXPECT(MPI_ERR_COUNT,
	       MPI_Alltoallv_c(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT, c));
	displs[0] = 0;
	counts[r] = BEYOND + 1;
	displs[r] = 1;
	EXPECT(MPI_ERR_COUNT, MPI_Gatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, r, c));
	EXPECT(MPI_ERR_COUNT,
	       MPI_Iscatterv_c(a, counts, displs, MPI_INT, b, 1, MPI_INT, r, c, &req));
	counts[r] = 1;
	displs[r] = r;
	CHECK(req == MPI_REQUEST_NULL, "a refused call set the request");

	/* Other arguments of the large path: the datatype, the operation, the
	 * communicator, a type that is not committed. */
	EXPECT(MPI_ERR_TYPE, MPI_Bcast_c(a, BEYOND, MPI_DATATYPE_NULL, 0, c));
	EXPECT(MPI_ERR_TYPE, MPI_Allgather_c(a, BEYOND, MPI_DATATYPE_NULL, b, 1, MPI_INT, c));
	OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
	EXPECT(MPI_ERR_TYPE, MPI_Alltoall_c(a, 1, MPI_INT, b, BEYOND, uncommitted, c));
	OK(MPI_Type_free(&uncommitted));
	EXPECT(MPI_ERR_OP, MPI_Allreduce_c(a, b, BEYOND, MPI_INT, MPI_OP_NULL, c));
	EXPECT(MPI_ERR_OP, MPI_Iallreduce_c(a, b, BEYOND, MPI_DOUBLE, MPI_BAND, c, &req));
	EXPECT(MPI_ERR_OP, MPI_Reduce_c(a, b, BEYOND, MPI_INT, MPI_REPLACE, 0, c));
	EXPECT(MPI_ERR_TYPE, MPI_Scan_c(a, b, BEYOND, MPI_DATATYPE_NULL, MPI_SUM, c));
	EXPECT(MPI_ERR_COMM, MPI_Bcast_c(a, BEYOND, MPI_INT, 0, MPI_COMM_NULL));
	EXPECT(MPI_ERR_COMM,
	       MPI_Gatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_NULL));
	EXPECT(MPI_ERR_COMM, MPI_Allreduce_c(a, b, BEYOND, MPI_INT, MPI_SUM, MPI_COMM_NULL));
	/* The int forms' checks through the _c forms. */
	EXPECT(MPI_ERR_ROOT, MPI_Bcast_c(a, 1, MPI_INT, p, c));
	EXPECT(MPI_ERR_ROOT, MPI_Gatherv_c(a, 1, MPI_INT, b, counts, displs, MPI_INT, -2, c));
	EXPECT(MPI_ERR_ARG, MPI_Allgatherv_c(a, 1, MPI_INT, b, NULL, displs, MPI_INT, c));
	EXPECT(MPI_ERR_ARG,
	       MPI_Alltoallv_c(a, counts, NULL, MPI_INT, b, counts, displs, MPI_INT, c));
	EXPECT(MPI_ERR_ARG, MPI_Alltoallw_c(a, counts, displs, NULL, b, counts, displs, types, c));
	EXPECT(MPI_ERR_ARG, MPI_Reduce_scatter_c(a, b, NULL, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_ARG, MPI_Ibcast_c(a, 1, MPI_INT, 0, c, NULL));
	EXPECT(MPI_ERR_BUFFER, MPI_Allreduce_c(a, a, 1, MPI_INT, MPI_SUM, c));
	EXPECT(MPI_ERR_OP, MPI_Allreduce_c(a, b, 1, MPI_DOUBLE, MPI_LXOR, c));
	CHECK(req == MPI_REQUEST_NULL, "a refused call set the request");

	/* Reduce_local_c and Op_create_c, beyond INT_MAX and not. */
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_local_c(a, b, -1, MPI_INT, MPI_SUM));
	EXPECT(MPI_ERR_COUNT, MPI_Reduce_local_c(a, b, (MPI_Count)1 << 62, MPI_INT, MPI_SUM));
	EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local_c(NULL, b, BEYOND, MPI_INT, MPI_SUM));
	EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local_c(a, MPI_IN_PLACE, BEYOND, MPI_INT, MPI_SUM));
	EXPECT(MPI_ERR_OP, MPI_Reduce_local_c(a, b, BEYOND, MPI_INT, MPI_OP_NULL));
	EXPECT(MPI_ERR_OP, MPI_Reduce_local_c(a, b, BEYOND, MPI_FLOAT, MPI_BOR));
	EXPECT(MPI_ERR_TYPE, MPI_Reduce_local_c(a, b, BEYOND, MPI_DATATYPE_NULL, MPI_SUM));
	EXPECT(MPI_ERR_ARG, MPI_Op_create_c(NULL, 1, &user));
	EXPECT(MPI_ERR_ARG, MPI_Op_create_c(noop_c, 1, NULL));

	OK(MPI_Op_free(&user));
	still_works(c);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* ------------------------------------------------------------------ */
/* big (bigmem)                                                        */
/* ------------------------------------------------------------------ */

#define BIG (BEYOND + 24)

static long long big_calls;
static MPI_Count big_len;

static void bxor_c(void *in_, void *inout_, MPI_Count *len, MPI_Datatype *t)
{
	const unsigned char *in = in_;
	unsigned char *io = inout_;
	MPI_Count i;

	CHECK(*t == MPI_BYTE, "the function got another datatype");
	big_calls++;
	big_len = *len;
	for (i = 0; i < *len; i++)
		io[i] ^= in[i];
}

static unsigned char big_val(MPI_Count i, int r)
{
	return (unsigned char)(i * 7 + (i >> 20) + r * 13);
}

static void test_big(void)
{
	int r, p;
	MPI_Count i, *counts;
	MPI_Aint *displs;
	unsigned char *buf, *other;
	MPI_Op op;

	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	buf = malloc((size_t)BIG);
	CHECK(buf, "cannot allocate %lld bytes", (long long)BIG);

	/* Bcast_c of more than INT_MAX bytes. */
	for (i = 0; i < BIG; i++)
		buf[i] = r == 0 ? big_val(i, 0) : 0;
	OK(MPI_Bcast_c(buf, BIG, MPI_BYTE, 0, MPI_COMM_WORLD));
	for (i = 0; i < BIG; i += 4093)
		CHECK(buf[i] == big_val(i, 0), "Bcast_c: byte %lld is %d", (long long)i, buf[i]);
	CHECK(buf[BIG - 1] == big_val(BIG - 1, 0), "Bcast_c: the last byte");

	/* Iallreduce_c in place, MPI_BXOR, in one piece (a contiguous type);
	 * then Allreduce_c over pieces, of vectors now the same everywhere:
	 * their xor over an even number of ranks is 0 (over an odd number,
	 * the vector itself).  The second reuses the first's temporary buffer. */
	for (i = 0; i < BIG; i++)
		buf[i] = big_val(i, r);
	{
		MPI_Request req;

		OK(MPI_Iallreduce_c(MPI_IN_PLACE, buf, BIG, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD,
				    &req));
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	}
	for (i = 0; i < BIG; i += 4099) {
		unsigned char want = 0;
		int j;

		for (j = 0; j < p; j++)
			want ^= big_val(i, j);
		CHECK(buf[i] == want, "Iallreduce_c: byte %lld is %d, want %d", (long long)i,
		      buf[i], want);
	}
	other = malloc(64);
	CHECK(other, "no memory");
	for (i = 0; i < 64; i++)
		other[i] = buf[(BIG - 1) - i * 33554467];
	OK(MPI_Allreduce_c(MPI_IN_PLACE, buf, BIG, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD));
	for (i = 0; i < 64; i++)
		CHECK(buf[(BIG - 1) - i * 33554467] == (p % 2 ? other[i] : 0),
		      "Allreduce_c: byte %lld is %d", (long long)((BIG - 1) - i * 33554467),
		      buf[(BIG - 1) - i * 33554467]);
	free(other);

	/* Gatherv_c to rank 0 in place: rank 1 sends BIG - 24 bytes after the
	 * root's 24 (divided by their common divisor, 8). */
	if (p >= 2) {
		counts = calloc((size_t)p, sizeof(*counts));
		displs = calloc((size_t)p, sizeof(*displs));
		CHECK(counts && displs, "no memory");
		counts[0] = 24;
		counts[1] = BIG - 24;
		displs[1] = 24;
		for (i = 0; i < BIG; i++)
			buf[i] = r == 0 ? 0 : big_val(i, 5);
		if (r == 0)
			OK(MPI_Gatherv_c(MPI_IN_PLACE, 0, MPI_BYTE, buf, counts, displs, MPI_BYTE,
					 0, MPI_COMM_WORLD));
		else
			OK(MPI_Gatherv_c(buf, r == 1 ? BIG - 24 : 0, MPI_BYTE, NULL, NULL, NULL,
					 MPI_BYTE, 0, MPI_COMM_WORLD));
		for (i = 24; r == 0 && i < BIG; i += 4091)
			CHECK(buf[i] == big_val(i - 24, 5), "Gatherv_c: byte %lld is %d",
			      (long long)i, buf[i]);
		free(counts);
		free(displs);
	}

	/* Reduce_local_c with an MPI_Op_create_c function: one call over all. */
	if (r == 0) {
		other = malloc((size_t)BIG);
		CHECK(other, "cannot allocate %lld bytes", (long long)BIG);
		for (i = 0; i < BIG; i++) {
			buf[i] = big_val(i, 1);
			other[i] = big_val(i, 2);
		}
		OK(MPI_Op_create_c(bxor_c, 1, &op));
		OK(MPI_Reduce_local_c(buf, other, BIG, MPI_BYTE, op));
		CHECK(big_calls == 1 && big_len == BIG, "%lld calls, the last of %lld bytes",
		      big_calls, (long long)big_len);
		for (i = 0; i < BIG; i += 4093)
			CHECK(other[i] == (big_val(i, 1) ^ big_val(i, 2)),
			      "Reduce_local_c: byte %lld", (long long)i);
		OK(MPI_Op_free(&op));
		free(other);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	int k;

	coll_init(&argc, &argv);
	CHECK(!only || !strcmp(only, "forms") || !strcmp(only, "user") ||
		  !strcmp(only, "address") || !strcmp(only, "errors") || !strcmp(only, "inter") ||
		  !strcmp(only, "big"),
	      "no test named '%s'", only);
	if (only && !strcmp(only, "big")) {
		coll_where = "big";
		test_big();
	} else {
		coll_where = "inter-communicator";
		if (!only || !strcmp(only, "inter")) {
			test_inter(0);
			test_inter(1);
			test_inter(2);
		}
		for (k = 0; k < COLL_NCOMMS; k++) {
			const char *cname;
			MPI_Comm c = coll_comm(k, &cname);
			char where[96];

			snprintf(where, sizeof(where), "on %s", cname);
			coll_where = where;
			if (!only || !strcmp(only, "forms"))
				test_forms(c);
			if (!only || !strcmp(only, "user"))
				test_user(c);
			if (!only || !strcmp(only, "address"))
				test_address(c);
			if (!only || !strcmp(only, "errors"))
				test_errors(c);
			coll_comm_done(&c);
		}
	}
	coll_where = "finalize";
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll_large: %s passed\n", only ? only : "all");
	return 0;
}
