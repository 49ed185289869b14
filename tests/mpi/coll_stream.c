/* SPDX-License-Identifier: MIT */
/*
 * coll_stream.c - collectives called back to back, many times, the way
 * benchmarks and iterative programs call them, each result checked and the
 * root moving from call to call.  Where data flows only towards the root
 * (Reduce, Gather), a rank may run calls ahead of its parent; the shim
 * bounds that lead every few calls, which this crosses many times, with
 * each shape of reduction tree: a commutative and a non-commutative
 * operation, vectors short enough for the receives of all children to be
 * posted at once and longer ones taken child by child, in place at the
 * root or not.  Reduce_scatter_block (a Reduce, then a Scatter, in one
 * call), Allreduce (short vectors: one exchange of every vector, combined
 * in rank order; longer: recursive doubling) and a non-blocking barrier in
 * flight across each round run in between, on the communicators of
 * coll_check.h.
 *
 *   bipload -sz N coll_stream
 */
#include "coll_check.h"

/*
 * Each round makes 9 calls, so over 128 rounds each kind of call takes
 * every value of the sequence number modulo 128 (the shim bounds the lead
 * every 128th call): every kind meets that bound on every communicator.
 */
#define ROUNDS 130

/* A non-commutative operation: [lo, hi] ranges joined in rank order. */
struct range {
	int lo, hi;
};

static void range_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
	struct range *a = in, *b = inout;
	int i;

	(void)type;
	for (i = 0; i < *len; i++) {
		if (a[i].lo < 0 || b[i].lo < 0 || a[i].hi + 1 != b[i].lo)
			b[i].lo = b[i].hi = -1 - (a[i].hi * 1000 + b[i].lo);
		else
			b[i].lo = a[i].lo;
	}
}

/* Element counts in turn: short (all children at once) and long vectors. */
static const int sum_counts[] = { 1, 300, 1000 };  /* ints: 4, 1200, 4000 bytes */
static const int range_counts[] = { 1, 5, 600 };   /* pairs: 8, 40, 4800 bytes */
static const int gather_counts[] = { 1, 40, 3000 }; /* ints per rank */
#define NCOUNTS 3

static void stream_reduce_sum(MPI_Comm c, int k, int *s, int *d)
{
	int r, p, i, j, n = sum_counts[k % NCOUNTS], root;
	int in_place;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	root = k % p;
	in_place = (k / NCOUNTS) % 2 && r == root;
	for (i = 0; i < n; i++) {
		s[i] = coll_val(k, r, i);
		d[i] = in_place ? s[i] : -1;
	}
	OK(MPI_Reduce(in_place ? MPI_IN_PLACE : s, d, n, MPI_INT, MPI_SUM, root, c));
	if (r != root)
		return;
	for (i = 0; i < n; i++) {
		int want = 0;

		for (j = 0; j < p; j++)
			want += coll_val(k, j, i);
		CHECK(d[i] == want, "call %d: MPI_Reduce(MPI_SUM) of %d to root %d%s: [%d] = %d, "
		      "expected %d", k, n, root, in_place ? " in place" : "", i, d[i], want);
	}
}

static void stream_reduce_range(MPI_Comm c, MPI_Op op, int k, struct range *s,
				struct range *d)
{
	int r, p, i, n = range_counts[k % NCOUNTS], root, in_place;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	root = (k * 3 + 1) % p;
	in_place = (k / NCOUNTS) % 2 && r == root;
	for (i = 0; i < n; i++) {
		s[i].lo = s[i].hi = r;
		d[i].lo = d[i].hi = in_place ? r : -5;
	}
	OK(MPI_Reduce(in_place ? MPI_IN_PLACE : s, d, n, MPI_2INT, op, root, c));
	if (r != root)
		return;
	for (i = 0; i < n; i++)
		CHECK(d[i].lo == 0 && d[i].hi == p - 1,
		      "call %d: MPI_Reduce(non-commutative) of %d to root %d%s: [%d] = [%d, %d], "
		      "expected [0, %d]", k, n, root, in_place ? " in place" : "", i, d[i].lo,
		      d[i].hi, p - 1);
}

/* Allreduce, non-commutative: vectors short enough for one exchange of all, and longer. */
static void stream_allreduce_range(MPI_Comm c, MPI_Op op, int k, struct range *s,
				   struct range *d)
{
	int r, p, i, n = range_counts[k % NCOUNTS], in_place = (k / NCOUNTS) % 2;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < n; i++) {
		s[i].lo = s[i].hi = r;
		d[i].lo = d[i].hi = in_place ? r : -5;
	}
	OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : s, d, n, MPI_2INT, op, c));
	for (i = 0; i < n; i++)
		CHECK(d[i].lo == 0 && d[i].hi == p - 1,
		      "call %d: MPI_Allreduce(non-commutative) of %d%s: [%d] = [%d, %d], "
		      "expected [0, %d]", k, n, in_place ? " in place" : "", i, d[i].lo, d[i].hi,
		      p - 1);
}

static void stream_allreduce_sum(MPI_Comm c, int k, int *s, int *d)
{
	int r, p, i, j, n = sum_counts[k % NCOUNTS] % 64;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < n; i++) {
		s[i] = coll_val(k, r, i);
		d[i] = -1;
	}
	OK(MPI_Allreduce(s, d, n, MPI_INT, MPI_SUM, c));
	for (i = 0; i < n; i++) {
		int want = 0;

		for (j = 0; j < p; j++)
			want += coll_val(k, j, i);
		CHECK(d[i] == want, "call %d: MPI_Allreduce(MPI_SUM) of %d: [%d] = %d, "
		      "expected %d", k, n, i, d[i], want);
	}
}

static void stream_gather(MPI_Comm c, int k, int *s, int *d)
{
	int r, p, i, n = gather_counts[k % NCOUNTS], root;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	root = (k * 5 + 2) % p;
	for (i = 0; i < n; i++)
		s[i] = coll_val(k, r, i);
	for (i = 0; i < n * p; i++)
		d[i] = -1;
	OK(MPI_Gather(s, n, MPI_INT, d, n, MPI_INT, root, c));
	if (r != root)
		return;
	for (i = 0; i < n * p; i++)
		CHECK(d[i] == coll_val(k, i / n, i % n),
		      "call %d: MPI_Gather of %d per rank to root %d: [%d] = %d, expected %d", k, n,
		      root, i, d[i], coll_val(k, i / n, i % n));
}

/* Rank i sends i + 1 blocks of n: the linear gather of the v form. */
static void stream_gatherv(MPI_Comm c, int k, int *s, int *d, int *counts, int *displs)
{
	int r, p, i, j, n = gather_counts[k % NCOUNTS] / 8 + 1, root, at = 0;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	root = (k * 7 + 3) % p;
	for (j = 0; j < p; j++) {
		counts[j] = n * (j + 1);
		displs[j] = at;
		at += counts[j];
	}
	for (i = 0; i < counts[r]; i++)
		s[i] = coll_val(k, r, i);
	for (i = 0; i < at; i++)
		d[i] = -1;
	OK(MPI_Gatherv(s, counts[r], MPI_INT, d, counts, displs, MPI_INT, root, c));
	if (r != root)
		return;
	for (j = 0; j < p; j++)
		for (i = 0; i < counts[j]; i++)
			CHECK(d[displs[j] + i] == coll_val(k, j, i),
			      "call %d: MPI_Gatherv to root %d: block %d [%d] = %d, expected %d", k,
			      root, j, i, d[displs[j] + i], coll_val(k, j, i));
}

static void stream_reduce_scatter(MPI_Comm c, int k, int *s, int *d)
{
	int r, p, i, j, n = sum_counts[k % NCOUNTS] / 4 + 1;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (i = 0; i < n * p; i++)
		s[i] = coll_val(k, r, i);
	for (i = 0; i < n; i++)
		d[i] = -1;
	OK(MPI_Reduce_scatter_block(s, d, n, MPI_INT, MPI_SUM, c));
	for (i = 0; i < n; i++) {
		int want = 0;

		for (j = 0; j < p; j++)
			want += coll_val(k, j, r * n + i);
		CHECK(d[i] == want, "call %d: MPI_Reduce_scatter_block of %d: [%d] = %d, "
		      "expected %d", k, n, i, d[i], want);
	}
}

int main(int argc, char **argv)
{
	int k, m, p, big;
	int *s, *d, *counts, *displs;
	struct range *rs, *rd;
	MPI_Op range;

	coll_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	OK(MPI_Op_create(range_op, 0, &range));
	/* Large enough for the longest vector of any call on p ranks. */
	big = 4000 * (p + 1) * (p + 1);
	s = coll_alloc(big * sizeof(int));
	d = coll_alloc(big * sizeof(int));
	counts = coll_alloc(p * sizeof(int));
	displs = coll_alloc(p * sizeof(int));
	rs = coll_alloc(1000 * sizeof(*rs));
	rd = coll_alloc(1000 * sizeof(*rd));
	for (m = 0; m < COLL_NCOMMS; m++) {
		const char *cname;
		MPI_Comm c = coll_comm(m, &cname);
		char where[96];

		for (k = 0; k < ROUNDS; k++) {
			MPI_Request bar;

			snprintf(where, sizeof(where), "round %d on %s", k, cname);
			coll_where = where;
			OK(MPI_Ibarrier(c, &bar));
			stream_reduce_sum(c, k, s, d);
			stream_reduce_range(c, range, k, rs, rd);
			stream_gather(c, k, s, d);
			stream_reduce_sum(c, k + 1, s, d);
			stream_gatherv(c, k, s, d, counts, displs);
			stream_reduce_scatter(c, k, s, d);
			stream_allreduce_range(c, range, k, rs, rd);
			stream_allreduce_sum(c, k, s, d);
			OK(MPI_Wait(&bar, MPI_STATUS_IGNORE));
		}
		coll_comm_done(&c);
	}
	coll_where = "finalize";
	OK(MPI_Op_free(&range));
	free(s);
	free(d);
	free(counts);
	free(displs);
	free(rs);
	free(rd);
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll_stream: %d rounds passed\n", ROUNDS);
	return 0;
}
