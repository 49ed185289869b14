/* SPDX-License-Identifier: MIT */
/*
 * inter.c - tests of inter-communicators, run through bipload:
 *   bipload -sz N inter TEST      (N >= 2)
 * The two groups are the even and the odd ranks of MPI_COMM_WORLD, so
 * their sizes differ when N is odd.
 */
#include <string.h>

#include <mpi.h>

#include "mpicheck.h"

static int rank, size;
static int color;          /* 0: even ranks, 1: odd ranks */
static MPI_Comm local;     /* the local group, an intra-communicator */
static MPI_Comm ic;        /* the inter-communicator */
static int lrank, lsize, rsize;

/* World rank of rank r of the group of the given color. */
static int world_of(int group, int r)
{
	return 2 * r + group;
}

static void make(void)
{
	int flag = -1;

	OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
	/* The leaders are world ranks 0 and 1. */
	OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, !color, 77, &ic));
	OK(MPI_Comm_rank(ic, &lrank));
	OK(MPI_Comm_size(ic, &lsize));
	OK(MPI_Comm_remote_size(ic, &rsize));
	CHECK(lrank == rank / 2, "rank %d in the inter-communicator", lrank);
	CHECK(lsize == (size + !color) / 2 && rsize == size - lsize, "sizes %d and %d", lsize,
	      rsize);
	OK(MPI_Comm_test_inter(ic, &flag));
	CHECK(flag == 1, "MPI_Comm_test_inter says %d", flag);
	OK(MPI_Comm_test_inter(local, &flag));
	CHECK(flag == 0, "an intra-communicator tests as inter");
}

static void unmake(void)
{
	OK(MPI_Comm_free(&ic));
	OK(MPI_Comm_free(&local));
	CHECK(ic == MPI_COMM_NULL, "freed handle");
}

/* The groups, and comparisons. */
static void test_groups(void)
{
	MPI_Group g, wg;
	MPI_Comm dup;
	int i, n, res, *in, *out;

	make();
	OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	OK(MPI_Comm_remote_group(ic, &g));
	OK(MPI_Group_size(g, &n));
	CHECK(n == rsize, "remote group of %d", n);
	in = malloc((size_t)n * sizeof(*in));
	out = malloc((size_t)n * sizeof(*out));
	for (i = 0; i < n; i++)
		in[i] = i;
	OK(MPI_Group_translate_ranks(g, n, in, wg, out));
	for (i = 0; i < n; i++)
		CHECK(out[i] == world_of(!color, i), "remote rank %d is world %d", i, out[i]);
	OK(MPI_Group_free(&g));
	OK(MPI_Comm_group(ic, &g));
	OK(MPI_Group_size(g, &n));
	CHECK(n == lsize, "local group of %d", n);
	OK(MPI_Group_free(&g));
	OK(MPI_Group_free(&wg));
	free(in);
	free(out);

	OK(MPI_Comm_dup(ic, &dup));
	OK(MPI_Comm_test_inter(dup, &i));
	CHECK(i == 1, "a dup of an inter-communicator is intra");
	OK(MPI_Comm_compare(ic, dup, &res));
	CHECK(res == MPI_CONGRUENT, "compare with its dup: %d", res);
	OK(MPI_Comm_compare(ic, ic, &res));
	CHECK(res == MPI_IDENT, "compare with itself: %d", res);
	OK(MPI_Comm_compare(ic, local, &res));
	CHECK(res == MPI_UNEQUAL, "compare with the local communicator: %d", res);
	OK(MPI_Comm_remote_size(dup, &n));
	CHECK(n == rsize, "the dup's remote size %d", n);
	OK(MPI_Comm_free(&dup));
	unmake();
}

/* Point-to-point: ranks name the remote group. */
static void test_p2p(void)
{
	int dst, src, v, i, n = 0;
	MPI_Status st;
	MPI_Request req;
	MPI_Comm dup;

	make();
	OK(MPI_Comm_dup(ic, &dup));
	/* Every process sends to every remote process, on both. */
	for (dst = 0; dst < rsize; dst++) {
		v = rank * 1000 + dst;
		OK(MPI_Isend(&v, 1, MPI_INT, dst, 5, ic, &req));
		OK(MPI_Request_free(&req));
		OK(MPI_Send(&v, 1, MPI_INT, dst, 5, dup));
	}
	for (i = 0; i < rsize; i++) {
		OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
		src = st.MPI_SOURCE;
		CHECK(src >= 0 && src < rsize, "source %d", src);
		CHECK(v == world_of(!color, src) * 1000 + lrank, "from %d got %d", src, v);
		n++;
	}
	for (src = 0; src < rsize; src++) {
		OK(MPI_Recv(&v, 1, MPI_INT, src, 5, dup, &st));
		CHECK(v == world_of(!color, src) * 1000 + lrank && st.MPI_SOURCE == src,
		      "on the dup, from %d got %d", src, v);
	}
	CHECK(n == rsize, "%d messages", n);
	/* A message of the inter-communicator does not match on the others. */
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, local, &i, &st));
	CHECK(i == 0, "a message left on the local communicator");
	OK(MPI_Comm_free(&dup));
	unmake();
}

static void test_merge(void)
{
	MPI_Comm m;
	int mr, ms, flag, k, high, first;

	make();
	for (k = 0; k < 3; k++) {
		/* k = 0: the odd group high; 1: the even group high; 2: both the same. */
		high = k == 0 ? color : k == 1 ? !color : 1;
		OK(MPI_Intercomm_merge(ic, high, &m));
		OK(MPI_Comm_rank(m, &mr));
		OK(MPI_Comm_size(m, &ms));
		OK(MPI_Comm_test_inter(m, &flag));
		CHECK(flag == 0 && ms == size, "merged: inter %d, size %d", flag, ms);
		/* First: the group that passed 0; when both passed the same, the
		 * one holding world rank 0. */
		first = k == 2 ? color == 0 : high == 0;
		CHECK(mr == (first ? lrank : rsize + lrank), "merged rank %d (k %d, high %d)", mr,
		      k, high);
		/* It works: a reduction of world ranks. */
		OK(MPI_Allreduce(&rank, &flag, 1, MPI_INT, MPI_SUM, m));
		CHECK(flag == size * (size - 1) / 2, "sum %d", flag);
		OK(MPI_Comm_free(&m));
	}
	unmake();
}

/* Every collective, blocking and not, with the data checked. */
static void coll_round(int nonblocking)
{
	int n = rsize > lsize ? rsize : lsize, i, root;
	size_t cap = (size_t)(2 * lsize * rsize + 4 * n + 4);
	int *sb = malloc(sizeof(int) * cap), *rb = malloc(sizeof(int) * cap);
	int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
	MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)n);
	MPI_Request req;
	int v, sum_remote, x;

#define RUN(blocking, nb)                                                                    \
	do {                                                                                 \
		if (nonblocking) {                                                           \
			OK(nb);                                                              \
			OK(MPI_Wait(&req, MPI_STATUS_IGNORE));                               \
		} else {                                                                     \
			OK(blocking);                                                        \
		}                                                                            \
	} while (0)

	RUN(MPI_Barrier(ic), MPI_Ibarrier(ic, &req));
	/* Sum of the remote group's world ranks. */
	for (i = 0, sum_remote = 0; i < rsize; i++)
		sum_remote += world_of(!color, i);
	/* Rooted: each group's last rank is the root once. */
	for (root = 0; root < 2; root++) {
		int rootrank = color == root ? (lrank == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL) :
					       (root == 0 ? (size + 1) / 2 - 1 : size / 2 - 1);
		int am_root = rootrank == MPI_ROOT, in_root_group = color == root;

		/* Bcast */
		v = am_root ? 4242 : -1;
		RUN(MPI_Bcast(&v, 1, MPI_INT, rootrank, ic),
		    MPI_Ibcast(&v, 1, MPI_INT, rootrank, ic, &req));
		CHECK(in_root_group ? v == (am_root ? 4242 : -1) : v == 4242, "bcast got %d", v);
		/* Gather */
		for (i = 0; i < rsize; i++)
			rb[i] = -1;
		v = rank;
		RUN(MPI_Gather(&v, 1, MPI_INT, rb, 1, MPI_INT, rootrank, ic),
		    MPI_Igather(&v, 1, MPI_INT, rb, 1, MPI_INT, rootrank, ic, &req));
		if (am_root)
			for (i = 0; i < rsize; i++)
				CHECK(rb[i] == world_of(!color, i), "gather[%d] = %d", i, rb[i]);
		/* Gatherv: remote rank i sends i + 1 ints, placed in reverse order. */
		for (i = 0, x = 0; i < rsize; i++) {
			counts[i] = i + 1;
			x += i + 1;
		}
		for (i = 0; i < rsize; i++)
			displs[i] = x - (i + 1) * (i + 2) / 2;
		for (i = 0; i < lrank + 1; i++)
			sb[i] = rank * 10 + i;
		memset(rb, 0xff, sizeof(int) * cap);
		RUN(MPI_Gatherv(sb, lrank + 1, MPI_INT, rb, counts, displs, MPI_INT, rootrank, ic),
		    MPI_Igatherv(sb, lrank + 1, MPI_INT, rb, counts, displs, MPI_INT, rootrank, ic,
				 &req));
		if (am_root)
			for (i = 0; i < rsize; i++)
				for (x = 0; x <= i; x++)
					CHECK(rb[displs[i] + x] == world_of(!color, i) * 10 + x,
					      "gatherv block %d [%d] = %d", i, x, rb[displs[i] + x]);
		/* Scatter */
		for (i = 0; i < rsize; i++)
			sb[i] = 500 + world_of(!color, i);
		v = -1;
		RUN(MPI_Scatter(sb, 1, MPI_INT, &v, 1, MPI_INT, rootrank, ic),
		    MPI_Iscatter(sb, 1, MPI_INT, &v, 1, MPI_INT, rootrank, ic, &req));
		if (!in_root_group)
			CHECK(v == 500 + rank, "scatter got %d", v);
		/* Scatterv: remote rank i gets 2 ints from displacement 2 * (rsize - 1 - i). */
		for (i = 0; i < rsize; i++) {
			counts[i] = 2;
			displs[i] = 2 * (rsize - 1 - i);
			sb[displs[i]] = world_of(!color, i);
			sb[displs[i] + 1] = -world_of(!color, i);
		}
		rb[0] = rb[1] = 7;
		RUN(MPI_Scatterv(sb, counts, displs, MPI_INT, rb, 2, MPI_INT, rootrank, ic),
		    MPI_Iscatterv(sb, counts, displs, MPI_INT, rb, 2, MPI_INT, rootrank, ic, &req));
		if (!in_root_group)
			CHECK(rb[0] == rank && rb[1] == -rank, "scatterv got %d %d", rb[0], rb[1]);
		/* Reduce: the root gets the remote group's sum. */
		v = rank;
		x = -1;
		RUN(MPI_Reduce(&v, &x, 1, MPI_INT, MPI_SUM, rootrank, ic),
		    MPI_Ireduce(&v, &x, 1, MPI_INT, MPI_SUM, rootrank, ic, &req));
		if (am_root)
			CHECK(x == sum_remote, "reduce got %d, not %d", x, sum_remote);
	}
	/* Allgather: everyone's world rank from the remote group. */
	v = rank;
	RUN(MPI_Allgather(&v, 1, MPI_INT, rb, 1, MPI_INT, ic),
	    MPI_Iallgather(&v, 1, MPI_INT, rb, 1, MPI_INT, ic, &req));
	for (i = 0; i < rsize; i++)
		CHECK(rb[i] == world_of(!color, i), "allgather[%d] = %d", i, rb[i]);
	for (i = 0; i < rsize; i++) {
		counts[i] = 1;
		displs[i] = rsize - 1 - i;
	}
	RUN(MPI_Allgatherv(&v, 1, MPI_INT, rb, counts, displs, MPI_INT, ic),
	    MPI_Iallgatherv(&v, 1, MPI_INT, rb, counts, displs, MPI_INT, ic, &req));
	for (i = 0; i < rsize; i++)
		CHECK(rb[rsize - 1 - i] == world_of(!color, i), "allgatherv[%d]", i);
	/* Alltoall: block i goes to remote rank i. */
	for (i = 0; i < rsize; i++)
		sb[i] = rank * 100 + i;
	RUN(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ic),
	    MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ic, &req));
	for (i = 0; i < rsize; i++)
		CHECK(rb[i] == world_of(!color, i) * 100 + lrank, "alltoall[%d] = %d", i, rb[i]);
	for (i = 0; i < rsize; i++) {
		counts[i] = 1;
		displs[i] = i;
		types[i] = MPI_INT;
	}
	RUN(MPI_Alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, ic),
	    MPI_Ialltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, ic, &req));
	for (i = 0; i < rsize; i++)
		CHECK(rb[i] == world_of(!color, i) * 100 + lrank, "alltoallv[%d] = %d", i, rb[i]);
	for (i = 0; i < rsize; i++)
		displs[i] = i * (int)sizeof(int);
	RUN(MPI_Alltoallw(sb, counts, displs, types, rb, counts, displs, types, ic),
	    MPI_Ialltoallw(sb, counts, displs, types, rb, counts, displs, types, ic, &req));
	for (i = 0; i < rsize; i++)
		CHECK(rb[i] == world_of(!color, i) * 100 + lrank, "alltoallw[%d] = %d", i, rb[i]);
	/* Allreduce: the remote group's sum. */
	v = rank;
	RUN(MPI_Allreduce(&v, &x, 1, MPI_INT, MPI_SUM, ic),
	    MPI_Iallreduce(&v, &x, 1, MPI_INT, MPI_SUM, ic, &req));
	CHECK(x == sum_remote, "allreduce %d, not %d", x, sum_remote);
	/* Reduce_scatter(_block): a group's vectors hold the sum of its receive
	 * counts, the same in both groups: lsize * rsize * 2 ints, of which
	 * each local member receives rsize * 2. */
	{
		for (i = 0; i < lsize * rsize * 2; i++)
			sb[i] = rank + i;
		RUN(MPI_Reduce_scatter_block(sb, rb, rsize * 2, MPI_INT, MPI_SUM, ic),
		    MPI_Ireduce_scatter_block(sb, rb, rsize * 2, MPI_INT, MPI_SUM, ic, &req));
		for (i = 0; i < rsize * 2; i++)
			CHECK(rb[i] == sum_remote + rsize * (lrank * rsize * 2 + i),
			      "reduce_scatter_block[%d] = %d", i, rb[i]);
		for (i = 0; i < lsize; i++)
			counts[i] = rsize * 2;
		RUN(MPI_Reduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, ic),
		    MPI_Ireduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, ic, &req));
		for (i = 0; i < rsize * 2; i++)
			CHECK(rb[i] == sum_remote + rsize * (lrank * rsize * 2 + i),
			      "reduce_scatter[%d] = %d", i, rb[i]);
	}
	free(sb);
	free(rb);
	free(counts);
	free(displs);
	free(types);
#undef RUN
}

static void test_coll(void)
{
	make();
	coll_round(0);
	coll_round(1);
	unmake();
}

/* MPI_Comm_split of an inter-communicator: color by (world rank / 2) % 2,
 * key reversing the order; a color one group lacks gives MPI_COMM_NULL. */
static void test_split(void)
{
	MPI_Comm sc;
	int c = (rank / 2) % 2, r, s, rs, v, i, exp_l = 0, exp_r = 0;

	make();
	for (i = 0; i < size; i++) {
		if ((i / 2) % 2 != c)
			continue;
		if (i % 2 == color)
			exp_l++;
		else
			exp_r++;
	}
	OK(MPI_Comm_split(ic, c, -rank, &sc));
	if (exp_r == 0) {
		CHECK(sc == MPI_COMM_NULL, "color %d has no remote member, yet a communicator", c);
	} else {
		OK(MPI_Comm_test_inter(sc, &v));
		OK(MPI_Comm_size(sc, &s));
		OK(MPI_Comm_remote_size(sc, &rs));
		OK(MPI_Comm_rank(sc, &r));
		CHECK(v == 1 && s == exp_l && rs == exp_r, "inter %d, sizes %d %d (want %d %d)", v,
		      s, rs, exp_l, exp_r);
		/* The key reverses the order: the highest world rank is rank 0. */
		for (i = size - 1, v = 0; i > rank; i--)
			v += (i / 2) % 2 == c && i % 2 == color;
		CHECK(r == v, "rank %d, want %d", r, v);
		v = rank;
		OK(MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_MAX, sc));
		for (i = size - 1; i >= 0; i--)
			if ((i / 2) % 2 == c && i % 2 != color)
				break;
		CHECK(v == i, "the remote group's largest world rank is %d, not %d", v, i);
		OK(MPI_Comm_free(&sc));
	}
	OK(MPI_Comm_split(ic, MPI_UNDEFINED, 0, &sc));
	CHECK(sc == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
	/* MPI_Comm_create: each side keeps its even local ranks, in reverse. */
	{
		MPI_Group g, sub;
		int *keep = malloc(sizeof(int) * (size_t)lsize), n = 0;

		for (i = (lsize - 1) / 2 * 2; i >= 0; i -= 2)
			keep[n++] = i;
		OK(MPI_Comm_group(ic, &g));
		OK(MPI_Group_incl(g, n, keep, &sub));
		OK(MPI_Comm_create(ic, sub, &sc));
		if (lrank % 2) {
			CHECK(sc == MPI_COMM_NULL, "a rank outside the group got a communicator");
		} else {
			OK(MPI_Comm_size(sc, &s));
			OK(MPI_Comm_remote_size(sc, &rs));
			OK(MPI_Comm_rank(sc, &r));
			CHECK(s == n && rs == (rsize + 1) / 2 && r == n - 1 - lrank / 2,
			      "created: size %d remote %d rank %d", s, rs, r);
			OK(MPI_Allreduce(&lrank, &v, 1, MPI_INT, MPI_SUM, sc));
			CHECK(v == ((rsize + 1) / 2) * ((rsize + 1) / 2 - 1), "sum %d", v);
			OK(MPI_Comm_free(&sc));
		}
		OK(MPI_Group_free(&sub));
		OK(MPI_Group_free(&g));
		free(keep);
	}
	unmake();
}

/* MPI_Comm_idup of an inter-communicator: two at once, with a collective
 * on the parent and a blocking dup made meanwhile; the copies work. */
static void test_idup(void)
{
	MPI_Comm c[2], d;
	MPI_Request reqs[2];
	int i, v, sum, res, key, *attr, flag, expect;
	static int value = 5;
	MPI_Errhandler eh;

	make();
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
	OK(MPI_Comm_set_attr(ic, key, &value));
	/* While the first is under way, a collective of the parent and a
	 * blocking dup, which takes context ids meanwhile. */
	OK(MPI_Comm_idup(ic, &c[0], &reqs[0]));
	/* What a language binding does at once: the handler of the new
	 * communicator, set on its handle before the request completes. */
	OK(MPI_Comm_set_errhandler(c[0], MPI_ERRORS_RETURN));
	OK(MPI_Barrier(ic));
	OK(MPI_Comm_dup(ic, &d));
	OK(MPI_Comm_idup_with_info(ic, MPI_INFO_NULL, &c[1], &reqs[1]));
	OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
	for (i = 0; i < 2; i++) {
		OK(MPI_Comm_test_inter(c[i], &v));
		CHECK(v == 1, "idup %d is not an inter-communicator", i);
		OK(MPI_Comm_remote_size(c[i], &v));
		CHECK(v == rsize, "idup %d: remote size %d", i, v);
		OK(MPI_Comm_compare(ic, c[i], &res));
		CHECK(res == MPI_CONGRUENT, "idup %d compares %d", i, res);
		OK(MPI_Comm_get_attr(c[i], key, &attr, &flag));
		CHECK(flag && attr == &value, "idup %d: the attribute was not copied", i);
		/* The sum of the remote group's world ranks. */
		OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c[i]));
		expect = 0;
		for (v = 0; v < rsize; v++)
			expect += world_of(!color, v);
		CHECK(sum == expect, "idup %d: allreduce %d, not %d", i, sum, expect);
		/* Point-to-point: rank r to remote rank r, where both exist. */
		if (lrank < rsize) {
			OK(MPI_Sendrecv(&rank, 1, MPI_INT, lrank, 9, &v, 1, MPI_INT, lrank, 9,
					c[i], MPI_STATUS_IGNORE));
			CHECK(v == world_of(!color, lrank), "idup %d: got %d", i, v);
		}
	}
	OK(MPI_Comm_get_errhandler(c[0], &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "the handler set before completion was lost");
	v = MPI_Send(&v, 1, MPI_INT, rsize + 3, 0, c[0]);
	MPI_Error_class(v, &res);
	CHECK(res == MPI_ERR_RANK, "an error on the copy returned %d", v);
	/* Nothing crossed between the copies and their parent. */
	OK(MPI_Comm_compare(c[0], c[1], &res));
	CHECK(res == MPI_CONGRUENT, "the two idups compare %d", res);
	OK(MPI_Comm_free(&c[0]));
	OK(MPI_Comm_free(&c[1]));
	OK(MPI_Comm_free(&d));
	OK(MPI_Comm_free_keyval(&key));
	unmake();
}

static void test_errors(void)
{
	MPI_Comm c;
	MPI_Group g;
	int v = 0, x;

	make();
	OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Comm_remote_size(local, &x) == MPI_ERR_COMM, "remote size of an intra");
	CHECK(MPI_Comm_remote_group(MPI_COMM_WORLD, &g) == MPI_ERR_COMM, "remote group of world");
	CHECK(MPI_Intercomm_merge(local, 0, &c) == MPI_ERR_COMM, "merge of an intra");
	CHECK(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &c) == MPI_ERR_COMM,
	      "an inter-communicator as the local one");
	CHECK(MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 1, &c) == MPI_ERR_RANK,
	      "local leader out of range");
	CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 0, -1, &c) == MPI_ERR_TAG,
	      "negative tag");
	CHECK(MPI_Send(&v, 1, MPI_INT, rsize, 0, ic) == MPI_ERR_RANK, "send to rank %d", rsize);
	CHECK(MPI_Scan(&v, &x, 1, MPI_INT, MPI_SUM, ic) == MPI_ERR_COMM, "scan on an inter");
	CHECK(MPI_Exscan(&v, &x, 1, MPI_INT, MPI_SUM, ic) == MPI_ERR_COMM, "exscan on an inter");
	CHECK(MPI_Bcast(&v, 1, MPI_INT, rsize, ic) == MPI_ERR_ROOT, "root %d", rsize);
	CHECK(MPI_Bcast(&v, 1, MPI_INT, -7, ic) == MPI_ERR_ROOT, "root -7");
	CHECK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, ic) == MPI_ERR_BUFFER,
	      "MPI_IN_PLACE on an inter");
	OK(MPI_Topo_test(ic, &x));
	CHECK(x == MPI_UNDEFINED, "an inter-communicator's topology %d", x);
	CHECK(MPI_Cart_create(ic, 1, &lsize, &v, 0, &c) == MPI_ERR_COMM, "Cart_create on inter");
	/* It still works after the refusals. */
	OK(MPI_Barrier(ic));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	unmake();
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "groups", test_groups }, { "p2p", test_p2p },	      { "merge", test_merge },
	{ "coll", test_coll },	   { "errors", test_errors }, { "split", test_split },
	{ "idup", test_idup },
};

int main(int argc, char **argv)
{
	size_t i;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	color = rank % 2;
	if (argc != 2 || size < 2) {
		fprintf(stderr, "usage: inter TEST, on 2 processes or more\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		OK(MPI_Finalize());
		return 0;
	}
	fprintf(stderr, "inter: no test %s\n", argv[1]);
	return 2;
}
