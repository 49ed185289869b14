/* SPDX-License-Identifier: MIT */
/*
 * topo.c - tests of the MPI shim's virtual topologies and neighbourhood
 * collectives, run through bipload:
 *   bipload -sz N topo TEST
 * dims        MPI_Dims_create: known factorizations, fixed entries, errors
 * cart        Cartesian grids: get, coords, rank, shift (MPI_PROC_NULL at the
 *             edges), map, dup keeps the topology, split does not
 * cartsub     MPI_Cart_sub of 3-d grids
 * graph       graphs: get, neighbours, dims, map
 * distgraph   distributed graphs, both ways of making them, with and
 *             without weights
 * neighbor    every neighbourhood collective, blocking and not, on grids,
 *             graphs and distributed graphs, every byte checked
 * errors      misuse, each with its error class, and nothing lost after it
 */
#include <stdint.h>
#include <string.h>

#include <mpi.h>

#include "mpicheck.h"

static int rank, size;

/* An error class expected from a call under MPI_ERRORS_RETURN. */
#define FAILS(cls, call)                                                                     \
	do {                                                                                 \
		int fails_rc_ = (call);                                                      \
		CHECK(fails_rc_ == (cls), "returned %d, expected %d (%s)", fails_rc_, (cls), \
		      #cls);                                                                 \
	} while (0)

static int topo_of(MPI_Comm comm)
{
	int status = -1;

	OK(MPI_Topo_test(comm, &status));
	return status;
}

/* Every member sends its rank to every other: the communicator works. */
static void exchange(MPI_Comm comm)
{
	int r, n, i, v;

	OK(MPI_Comm_rank(comm, &r));
	OK(MPI_Comm_size(comm, &n));
	for (i = 0; i < n; i++) {
		MPI_Request req;

		OK(MPI_Irecv(&v, 1, MPI_INT, i, 9, comm, &req));
		OK(MPI_Send(&r, 1, MPI_INT, i, 9, comm));
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(v == i, "from rank %d got %d", i, v);
	}
}

/* --- MPI_Dims_create --- */

static void dims_expect(int nnodes, int ndims, const int *in, const int *want)
{
	int d[8], i;

	memcpy(d, in, (size_t)ndims * sizeof(int));
	OK(MPI_Dims_create(nnodes, ndims, d));
	for (i = 0; i < ndims; i++)
		CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] is %d, expected %d",
		      nnodes, ndims, i, d[i], want[i]);
}

static void test_dims(void)
{
	static const int z[8];
	int d[4];

	dims_expect(12, 2, z, (int[]){ 4, 3 });
	dims_expect(16, 3, z, (int[]){ 4, 2, 2 });
	dims_expect(6, 2, z, (int[]){ 3, 2 });
	dims_expect(7, 2, z, (int[]){ 7, 1 });
	dims_expect(1, 3, z, (int[]){ 1, 1, 1 });
	dims_expect(36, 2, z, (int[]){ 6, 6 });
	dims_expect(24, 3, z, (int[]){ 4, 3, 2 });
	dims_expect(64, 3, z, (int[]){ 4, 4, 4 });
	dims_expect(30, 4, z, (int[]){ 5, 3, 2, 1 });
	dims_expect(8, 1, z, (int[]){ 8 });
	dims_expect(2147483647, 2, z, (int[]){ 2147483647, 1 });
	dims_expect(1 << 30, 2, z, (int[]){ 1 << 15, 1 << 15 });
	/* 180 = 2 * 2 * 3 * 3 * 5: the largest factor as small as it can be. */
	dims_expect(180, 3, z, (int[]){ 6, 6, 5 });
	/* Fixed entries stay; the free ones take the rest, non-increasing. */
	dims_expect(12, 2, (int[]){ 2, 0 }, (int[]){ 2, 6 });
	dims_expect(24, 3, (int[]){ 0, 3, 0 }, (int[]){ 4, 3, 2 });
	dims_expect(16, 3, (int[]){ 0, 0, 1 }, (int[]){ 4, 4, 1 });
	dims_expect(6, 2, (int[]){ 3, 2 }, (int[]){ 3, 2 });
	dims_expect(1, 0, z, z);
	/* Errors, reported through MPI_COMM_WORLD's handler. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	d[0] = 5;
	d[1] = 0;
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(12, 2, d));
	CHECK(d[0] == 5 && d[1] == 0, "dims changed by a failed call: %d %d", d[0], d[1]);
	d[0] = 2;
	d[1] = 3;
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(12, 2, d));
	d[0] = -1;
	d[1] = 0;
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(12, 2, d));
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(12, -1, d));
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(2, 0, d));
	FAILS(MPI_ERR_ARG, MPI_Dims_create(0, 2, d));
	FAILS(MPI_ERR_ARG, MPI_Dims_create(4, 2, NULL));
	/* 4 * 3 fixed, 24 nodes: the free one takes 2. */
	d[0] = 4;
	d[1] = 0;
	d[2] = 3;
	OK(MPI_Dims_create(24, 3, d));
	CHECK(d[0] == 4 && d[1] == 2 && d[2] == 3, "fixed 4 _ 3 of 24: %d %d %d", d[0], d[1],
	      d[2]);
}

/* --- Cartesian grids --- */

/* Check a grid communicator against dims and periods, for every rank. */
static void check_grid(MPI_Comm cart, int ndims, const int *dims, const int *periods)
{
	int gd[8], gp[8], gc[8], c[8], n, r, me, i, d, src, dst, nd;

	CHECK(topo_of(cart) == MPI_CART, "Topo_test says %d", topo_of(cart));
	OK(MPI_Cartdim_get(cart, &nd));
	CHECK(nd == ndims, "Cartdim_get %d, expected %d", nd, ndims);
	OK(MPI_Comm_size(cart, &n));
	OK(MPI_Comm_rank(cart, &me));
	for (d = 0, i = 1; d < ndims; d++)
		i *= dims[d];
	CHECK(n == i, "grid communicator of %d, expected %d", n, i);
	OK(MPI_Cart_get(cart, 8, gd, gp, gc));
	for (d = 0; d < ndims; d++)
		CHECK(gd[d] == dims[d] && !!gp[d] == !!periods[d], "Cart_get dim %d: %d %d", d,
		      gd[d], gp[d]);
	OK(MPI_Cart_coords(cart, me, 8, c));
	for (d = 0; d < ndims; d++)
		CHECK(c[d] == gc[d], "Cart_coords and Cart_get differ in dim %d", d);
	/* Row-major: the last dimension varies fastest. */
	for (r = 0; r < n; r++) {
		int x = r, rr;

		OK(MPI_Cart_coords(cart, r, ndims, c));
		for (d = ndims - 1; d >= 0; d--) {
			CHECK(c[d] == x % dims[d], "rank %d: coords[%d] %d", r, d, c[d]);
			x /= dims[d];
		}
		OK(MPI_Cart_rank(cart, c, &rr));
		CHECK(rr == r, "Cart_rank of the coords of %d is %d", r, rr);
	}
	/* Shifts by -2..2 in each dimension. */
	for (d = 0; d < ndims; d++) {
		int disp;

		for (disp = -2; disp <= 2; disp++) {
			int want_dst, want_src, t[8];

			memcpy(t, gc, sizeof(t));
			OK(MPI_Cart_shift(cart, d, disp, &src, &dst));
			t[d] = gc[d] + disp;
			if (periods[d] || (t[d] >= 0 && t[d] < dims[d])) {
				t[d] = ((t[d] % dims[d]) + dims[d]) % dims[d];
				OK(MPI_Cart_rank(cart, t, &want_dst));
			} else {
				want_dst = MPI_PROC_NULL;
			}
			t[d] = gc[d] - disp;
			if (periods[d] || (t[d] >= 0 && t[d] < dims[d])) {
				t[d] = ((t[d] % dims[d]) + dims[d]) % dims[d];
				OK(MPI_Cart_rank(cart, t, &want_src));
			} else {
				want_src = MPI_PROC_NULL;
			}
			CHECK(src == want_src && dst == want_dst,
			      "shift dim %d by %d: source %d dest %d, expected %d %d", d, disp, src,
			      dst, want_src, want_dst);
			if (!disp)
				CHECK(src == me && dst == me, "shift by 0 is not me");
			if (!periods[d] && gc[d] == 0 && disp < 0)
				CHECK(dst == MPI_PROC_NULL, "no neighbour past the low edge");
			if (!periods[d] && gc[d] == dims[d] - 1 && disp > 0)
				CHECK(dst == MPI_PROC_NULL, "no neighbour past the high edge");
		}
	}
	exchange(cart);
}

static void test_cart(void)
{
	MPI_Comm cart, dup, split, small;
	int dims[3] = { 0, 0, 0 }, periods[3] = { 1, 0, 1 }, r, c[3], nr, sd;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(topo_of(MPI_COMM_WORLD) == MPI_UNDEFINED, "world has a topology");
	/* 2-d, periodic in the second dimension only. */
	OK(MPI_Dims_create(size, 2, dims));
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods + 1, 0, &cart));
	CHECK(cart != MPI_COMM_NULL, "no grid");
	OK(MPI_Comm_rank(cart, &r));
	CHECK(r == rank, "rank %d in the grid, %d in world: the mapping is the identity", r,
	      rank);
	{
		int p2[2] = { 0, 1 };

		check_grid(cart, 2, dims, p2);
	}
	/* Periodic coordinates wrap; non-periodic ones out of range are errors. */
	c[0] = 0;
	c[1] = -1;
	OK(MPI_Cart_rank(cart, c, &nr));
	CHECK(nr == dims[1] - 1, "(0, -1) in a periodic dimension is rank %d", nr);
	c[1] = dims[1];
	OK(MPI_Cart_rank(cart, c, &nr));
	CHECK(nr == 0, "(0, %d) wraps to rank %d", dims[1], nr);
	c[0] = dims[0];
	c[1] = 0;
	FAILS(MPI_ERR_ARG, MPI_Cart_rank(cart, c, &nr));
	/* Dup keeps the topology; split does not carry it. */
	OK(MPI_Comm_dup(cart, &dup));
	{
		int p2[2] = { 0, 1 };

		check_grid(dup, 2, dims, p2);
	}
	OK(MPI_Comm_free(&cart));
	/* The dup's topology outlives the original's. */
	OK(MPI_Cart_coords(dup, size - 1, 2, c));
	CHECK(c[0] == dims[0] - 1 && c[1] == dims[1] - 1, "last coords %d %d", c[0], c[1]);
	OK(MPI_Comm_split(dup, 0, rank, &split));
	CHECK(topo_of(split) == MPI_UNDEFINED, "split of a grid has topology %d",
	      topo_of(split));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(split, &sd));
	OK(MPI_Comm_free(&split));
	OK(MPI_Comm_free(&dup));
	/* 3-d, all sizes from Dims_create, mixed periods. */
	dims[0] = dims[1] = dims[2] = 0;
	OK(MPI_Dims_create(size, 3, dims));
	OK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &cart));
	check_grid(cart, 3, dims, periods);
	OK(MPI_Comm_free(&cart));
	/* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
	dims[0] = size > 1 ? size - 1 : 1;
	OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &nr));
	CHECK(nr == (rank < dims[0] ? rank : MPI_UNDEFINED), "Cart_map gives %d", nr);
	OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &small));
	CHECK((small == MPI_COMM_NULL) == (rank >= dims[0]), "rank %d: grid of %d: %p", rank,
	      dims[0], (void *)small);
	if (small != MPI_COMM_NULL) {
		check_grid(small, 1, dims, periods);
		OK(MPI_Comm_free(&small));
	}
	/* Zero dimensions: one process. */
	OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &small));
	CHECK((small == MPI_COMM_NULL) == (rank != 0), "0-d grid on rank %d", rank);
	if (small != MPI_COMM_NULL) {
		OK(MPI_Cartdim_get(small, &sd));
		OK(MPI_Comm_size(small, &nr));
		CHECK(sd == 0 && nr == 1, "0-d grid: %d dims, %d processes", sd, nr);
		OK(MPI_Comm_free(&small));
	}
	/* 1-d, one process per dimension of 1: periodic shifts land on oneself. */
	dims[0] = 1;
	dims[1] = size;
	periods[0] = 1;
	periods[1] = 0;
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
	{
		int src, dst;

		OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
		CHECK(src == rank && dst == rank, "period of 1: %d %d", src, dst);
		OK(MPI_Cart_shift(cart, 0, 3, &src, &dst));
		CHECK(src == rank && dst == rank, "period of 1, by 3: %d %d", src, dst);
		OK(MPI_Cart_shift(cart, 1, size, &src, &dst));
		CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "shift by the size: %d %d",
		      src, dst);
	}
	check_grid(cart, 2, dims, periods);
	OK(MPI_Comm_free(&cart));
}

static void test_cartsub(void)
{
	MPI_Comm cart, sub;
	int dims[3] = { 0, 0, 0 }, periods[3] = { 0, 1, 0 }, c[3], mask, d;

	OK(MPI_Dims_create(size, 3, dims));
	OK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart));
	OK(MPI_Cart_coords(cart, rank, 3, c));
	/* Every subset of the dimensions. */
	for (mask = 0; mask < 8; mask++) {
		int remain[3], sdims[3], sper[3], sc[3], n = 0, want_rank = 0, want_size = 1, r, s;
		int nd, gd[3], gp[3], gc[3];

		for (d = 0; d < 3; d++) {
			remain[d] = (mask >> d) & 1;
			if (!remain[d])
				continue;
			sdims[n] = dims[d];
			sper[n] = periods[d];
			sc[n++] = c[d];
			want_rank = want_rank * dims[d] + c[d];
			want_size *= dims[d];
		}
		OK(MPI_Cart_sub(cart, remain, &sub));
		OK(MPI_Comm_rank(sub, &r));
		OK(MPI_Comm_size(sub, &s));
		CHECK(r == want_rank && s == want_size, "sub %d: rank %d of %d, expected %d of %d",
		      mask, r, s, want_rank, want_size);
		OK(MPI_Cartdim_get(sub, &nd));
		CHECK(nd == n, "sub %d has %d dims", mask, nd);
		if (n) {
			OK(MPI_Cart_get(sub, 3, gd, gp, gc));
			for (d = 0; d < n; d++)
				CHECK(gd[d] == sdims[d] && gp[d] == sper[d] && gc[d] == sc[d],
				      "sub %d dim %d: %d %d %d", mask, d, gd[d], gp[d], gc[d]);
			check_grid(sub, n, sdims, sper);
		} else {
			CHECK(topo_of(sub) == MPI_CART, "0-d sub has topology %d", topo_of(sub));
		}
		exchange(sub);
		OK(MPI_Comm_free(&sub));
	}
	OK(MPI_Comm_free(&cart));
}

/* --- graphs --- */

/* A ring with chords: node i is joined to i-1, i+1 and, on even i, to
 * i+2 (and so, on even i, from i-2): the edges both ways. */
static int ring_graph(int n, int *index, int *edges)
{
	int i, e = 0;

	for (i = 0; i < n; i++) {
		edges[e++] = (i + n - 1) % n;
		edges[e++] = (i + 1) % n;
		if (i % 2 == 0 && n % 2 == 0) {
			edges[e++] = (i + 2) % n;
			edges[e++] = (i + n - 2) % n;
		}
		index[i] = e;
	}
	return e;
}

static void test_graph(void)
{
	MPI_Comm g, dup, small;
	int index[64], edges[256], gi[64], ge[256], nedges, nn, ne, i, nb[8], cnt, nr;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	nedges = ring_graph(size, index, edges);
	OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g));
	CHECK(topo_of(g) == MPI_GRAPH, "Topo_test says %d", topo_of(g));
	OK(MPI_Graphdims_get(g, &nn, &ne));
	CHECK(nn == size && ne == nedges, "Graphdims_get %d %d", nn, ne);
	OK(MPI_Graph_get(g, 64, 256, gi, ge));
	CHECK(!memcmp(gi, index, (size_t)size * sizeof(int)) &&
	      !memcmp(ge, edges, (size_t)nedges * sizeof(int)), "Graph_get differs");
	/* Shorter arrays: the first entries. */
	memset(gi, 0xff, sizeof(gi));
	OK(MPI_Graph_get(g, 1, 0, gi, ge));
	CHECK(gi[0] == index[0] && gi[1] == -1, "Graph_get of 1 entry");
	for (i = 0; i < size; i++) {
		int first = i ? index[i - 1] : 0;

		OK(MPI_Graph_neighbors_count(g, i, &cnt));
		CHECK(cnt == index[i] - first, "node %d has %d neighbours", i, cnt);
		OK(MPI_Graph_neighbors(g, i, 8, nb));
		CHECK(!memcmp(nb, edges + first, (size_t)cnt * sizeof(int)), "neighbours of %d",
		      i);
	}
	OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr));
	CHECK(nr == rank, "Graph_map %d", nr);
	OK(MPI_Comm_dup(g, &dup));
	OK(MPI_Graphdims_get(dup, &nn, &ne));
	CHECK(nn == size && ne == nedges, "dup's Graphdims_get %d %d", nn, ne);
	exchange(dup);
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_free(&g));
	/* One node fewer: the last process is left out. */
	if (size > 1) {
		int idx[64], ed[256];

		ring_graph(size - 1, idx, ed);
		OK(MPI_Graph_map(MPI_COMM_WORLD, size - 1, idx, ed, &nr));
		CHECK(nr == (rank < size - 1 ? rank : MPI_UNDEFINED), "Graph_map %d", nr);
		OK(MPI_Graph_create(MPI_COMM_WORLD, size - 1, idx, ed, 0, &small));
		CHECK((small == MPI_COMM_NULL) == (rank == size - 1), "small graph on %d", rank);
		if (small != MPI_COMM_NULL) {
			OK(MPI_Graphdims_get(small, &nn, &ne));
			CHECK(nn == size - 1, "small graph of %d nodes", nn);
			exchange(small);
			OK(MPI_Comm_free(&small));
		}
	}
	/* No nodes: MPI_COMM_NULL everywhere. */
	OK(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &small));
	CHECK(small == MPI_COMM_NULL, "empty graph gave a communicator");
	/* Self-loops and double edges are allowed. */
	index[0] = 2;
	edges[0] = edges[1] = 0;
	for (i = 1; i < size; i++)
		index[i] = 2;
	OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
	OK(MPI_Graph_neighbors_count(g, 0, &cnt));
	CHECK(cnt == 2, "two self-loops, %d neighbours", cnt);
	if (size > 1) {
		OK(MPI_Graph_neighbors_count(g, 1, &cnt));
		CHECK(cnt == 0, "node 1 has %d neighbours", cnt);
	}
	OK(MPI_Comm_free(&g));
}

/* --- distributed graphs --- */

/* The directed graph of the tests: r -> r+1 and r -> r+3 (mod size, maybe
 * twice the same), of weights 10 r + 1 and 10 r + 3. */
static void digraph_out(int r, int *out, int *w)
{
	out[0] = (r + 1) % size;
	out[1] = (r + 3) % size;
	w[0] = 10 * r + 1;
	w[1] = 10 * r + 3;
}

static void digraph_in(int r, int *in, int *w)
{
	in[0] = (r + size - 1) % size;
	in[1] = (r + 3 * size - 3) % size;
	w[0] = 10 * in[0] + 1;
	w[1] = 10 * in[1] + 3;
}

/* Sort pairs (rank, weight) so that lists in any order compare. */
static void sort_pairs(int *r, int *w, int n)
{
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && (r[j - 1] > r[j] || (r[j - 1] == r[j] && w[j - 1] > w[j]));
		     j--) {
			int t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
			t = w[j];
			w[j] = w[j - 1];
			w[j - 1] = t;
		}
}

/* comm is the distributed digraph: its neighbours and weights, in any order. */
static void check_digraph(MPI_Comm comm, int weighted)
{
	int in[2], inw[2], out[2], outw[2], gi[4], giw[4], go[4], gow[4], nin, nout, wt;

	CHECK(topo_of(comm) == MPI_DIST_GRAPH, "Topo_test says %d", topo_of(comm));
	OK(MPI_Dist_graph_neighbors_count(comm, &nin, &nout, &wt));
	CHECK(nin == 2 && nout == 2 && wt == weighted, "counts %d %d weighted %d", nin, nout,
	      wt);
	digraph_in(rank, in, inw);
	digraph_out(rank, out, outw);
	giw[0] = giw[1] = gow[0] = gow[1] = -7;
	OK(MPI_Dist_graph_neighbors(comm, 4, gi, giw, 4, go, gow));
	if (!weighted) {
		CHECK(giw[0] == -7 && gow[0] == -7, "weights written for an unweighted graph");
		inw[0] = inw[1] = outw[0] = outw[1] = giw[0] = giw[1] = gow[0] = gow[1] = 0;
	}
	sort_pairs(in, inw, 2);
	sort_pairs(out, outw, 2);
	sort_pairs(gi, giw, 2);
	sort_pairs(go, gow, 2);
	CHECK(gi[0] == in[0] && gi[1] == in[1] && giw[0] == inw[0] && giw[1] == inw[1],
	      "sources %d(%d) %d(%d), expected %d(%d) %d(%d)", gi[0], giw[0], gi[1], giw[1],
	      in[0], inw[0], in[1], inw[1]);
	CHECK(go[0] == out[0] && go[1] == out[1] && gow[0] == outw[0] && gow[1] == outw[1],
	      "destinations %d(%d) %d(%d), expected %d(%d) %d(%d)", go[0], gow[0], go[1],
	      gow[1], out[0], outw[0], out[1], outw[1]);
	/* MPI_UNWEIGHTED for the weights: the neighbours only. */
	OK(MPI_Dist_graph_neighbors(comm, 2, gi, MPI_UNWEIGHTED, 2, go, MPI_UNWEIGHTED));
	exchange(comm);
}

static void test_distgraph(void)
{
	MPI_Comm g, dup;
	int in[2], inw[2], out[2], outw[2], i, nin, nout, wt;
	int srcs[4], degs[4], dsts[8], ws[8], n;

	/* Adjacent: each process gives its own neighbours, in this order. */
	digraph_in(rank, in, inw);
	digraph_out(rank, out, outw);
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, inw, 2, out, outw,
					  MPI_INFO_NULL, 1, &g));
	check_digraph(g, 1);
	{
		int gi[2], giw[2], go[2], gow[2];

		OK(MPI_Dist_graph_neighbors(g, 2, gi, giw, 2, go, gow));
		CHECK(!memcmp(gi, in, sizeof(in)) && !memcmp(go, out, sizeof(out)) &&
		      !memcmp(giw, inw, sizeof(inw)) && !memcmp(gow, outw, sizeof(outw)),
		      "adjacent: the neighbours are not in the order given");
	}
	OK(MPI_Comm_dup(g, &dup));
	check_digraph(dup, 1);
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_free(&g));
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out,
					  MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
	check_digraph(g, 0);
	OK(MPI_Comm_free(&g));
	/* No neighbours at all, MPI_WEIGHTS_EMPTY. */
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
					  MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
	OK(MPI_Dist_graph_neighbors_count(g, &nin, &nout, &wt));
	CHECK(nin == 0 && nout == 0 && wt == 1, "empty graph: %d %d %d", nin, nout, wt);
	OK(MPI_Comm_free(&g));

	/* General: the edges given by other processes.  Rank r gives the edge
	 * r+1 -> r+2 (weight of r+1's first edge) and r+3 -> r+6 (r+3's
	 * second), each process's out-edges given by two others. */
	n = 0;
	srcs[n] = (rank + 1) % size;
	degs[n] = 1;
	dsts[0] = (rank + 2) % size;
	ws[0] = 10 * srcs[n] + 1;
	n++;
	srcs[n] = (rank + 3) % size;
	degs[n] = 1;
	dsts[1] = (rank + 6) % size;
	ws[1] = 10 * srcs[n] + 3;
	n++;
	OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, ws, MPI_INFO_NULL, 0, &g));
	check_digraph(g, 1);
	OK(MPI_Comm_free(&g));
	{
		int s2[1], d2[2], dg[1];

		/* Each process gives its own out-edges, as one entry of degree 2. */
		s2[0] = rank;
		dg[0] = 2;
		digraph_out(rank, d2, outw);
		OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, s2, dg, d2, MPI_UNWEIGHTED,
					 MPI_INFO_NULL, 0, &g));
		check_digraph(g, 0);
		OK(MPI_Comm_free(&g));
	}
	/* Rank 0 gives every edge; the others give nothing. */
	{
		int s3[64], d3[128], dg3[64], w3[128], e = 0, k = 0;

		if (rank == 0)
			for (i = 0; i < size; i++) {
				s3[k] = i;
				dg3[k++] = 2;
				digraph_out(i, d3 + e, w3 + e);
				e += 2;
			}
		OK(MPI_Dist_graph_create(MPI_COMM_WORLD, k, s3, dg3, d3,
					 rank == 0 ? w3 : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
		check_digraph(g, 1);
		OK(MPI_Comm_free(&g));
	}
}

/* --- neighbourhood collectives --- */

/*
 * The neighbours of this process in comm's topology, and for each source
 * (in-neighbour) slot the block of the sender's that lands there.  On a
 * grid, the -1 neighbour's +1 block and the other way round.  Elsewhere,
 * the k-th slot from p gets p's k-th block to this process, which needs
 * every process's destinations (an allgather).
 */
struct nbrs {
	int nin, nout, cart;
	int in[64], out[64], from_block[64];
};

static void get_nbrs(MPI_Comm comm, struct nbrs *nb)
{
	int kind = topo_of(comm), i, j, me, n;

	OK(MPI_Comm_rank(comm, &me));
	OK(MPI_Comm_size(comm, &n));
	nb->cart = kind == MPI_CART;
	if (kind == MPI_CART) {
		int nd;

		OK(MPI_Cartdim_get(comm, &nd));
		for (i = 0; i < nd; i++)
			OK(MPI_Cart_shift(comm, i, 1, &nb->in[2 * i], &nb->in[2 * i + 1]));
		nb->nin = nb->nout = 2 * nd;
		memcpy(nb->out, nb->in, sizeof(nb->in));
		for (i = 0; i < nb->nin; i++)
			nb->from_block[i] = i ^ 1;
		return;
	}
	if (kind == MPI_GRAPH) {
		OK(MPI_Graph_neighbors_count(comm, me, &nb->nin));
		OK(MPI_Graph_neighbors(comm, me, 64, nb->in));
		nb->nout = nb->nin;
		memcpy(nb->out, nb->in, sizeof(nb->in));
	} else {
		int wt;

		OK(MPI_Dist_graph_neighbors_count(comm, &nb->nin, &nb->nout, &wt));
		OK(MPI_Dist_graph_neighbors(comm, 64, nb->in, MPI_UNWEIGHTED, 64, nb->out,
					    MPI_UNWEIGHTED));
	}
	{
		int all[64 * 65], mine[65];

		mine[0] = nb->nout;
		memcpy(mine + 1, nb->out, (size_t)nb->nout * sizeof(int));
		OK(MPI_Allgather(mine, 65, MPI_INT, all, 65, MPI_INT, comm));
		for (i = 0; i < nb->nin; i++) {
			int p = nb->in[i], k = 0, seen = 0;
			const int *po = all + 65 * p;

			for (j = 0; j < i; j++)
				k += nb->in[j] == p;
			nb->from_block[i] = -1;
			for (j = 0; j < po[0]; j++)
				if (po[1 + j] == me && seen++ == k) {
					nb->from_block[i] = j;
					break;
				}
			CHECK(nb->from_block[i] >= 0, "slot %d from %d: no matching edge", i, p);
		}
	}
}

/* The data of block j of process p, element e, in call number call. */
static int val(int p, int j, int e, int call)
{
	return (p + 1) * 100000 + j * 1000 + e * 10 + call;
}

/* Counts of the v and w forms: block j of process p. */
static int cnt(int p, int j)
{
	return 1 + (p + j) % 3;
}

#define SENTINEL (-12345)
#define MAXB 64
#define MAXE 8

struct bufs {
	int sbuf[MAXB * MAXE], rbuf[MAXB * (MAXE + 1)];
	int scounts[MAXB], sdispls[MAXB], rcounts[MAXB], rdispls[MAXB];
	MPI_Aint swd[MAXB], rwd[MAXB];
	MPI_Datatype stypes[MAXB], rtypes[MAXB];
};

static MPI_Datatype pair;

/* Fill the buffers of one call of kind (0 allgather, 1 allgatherv, 2 alltoall,
 * 3 alltoallv, 4 alltoallw). */
static void prepare(const struct nbrs *nb, int me, int kind, int call, struct bufs *b)
{
	int i, e, off;

	for (i = 0; i < MAXB * (MAXE + 1); i++)
		b->rbuf[i] = SENTINEL;
	if (kind <= 1) {
		int sc = kind == 0 ? 2 : cnt(me, 0);

		for (e = 0; e < sc; e++)
			b->sbuf[e] = val(me, 0, e, call);
		b->scounts[0] = sc;
	} else {
		for (i = off = 0; i < nb->nout; i++) {
			int c = kind == 2 ? 2 : cnt(me, i);

			b->scounts[i] = c;
			b->sdispls[i] = off;
			b->swd[i] = (MPI_Aint)off * (MPI_Aint)sizeof(int);
			b->stypes[i] = MPI_INT;
			for (e = 0; e < c; e++)
				b->sbuf[off + e] = val(me, i, e, call);
			off += kind == 2 ? 2 : c + 1;
		}
	}
	for (i = off = 0; i < nb->nin; i++) {
		int p = nb->in[i], c;

		if (p == MPI_PROC_NULL)
			c = 1;
		else if (kind == 0 || kind == 2)
			c = 2;
		else if (kind == 1)
			c = cnt(p, 0);
		else
			c = cnt(p, nb->from_block[i]);
		b->rcounts[i] = c;
		/* a gap of one element after each block of the v and w forms */
		b->rdispls[i] = off;
		b->rwd[i] = (MPI_Aint)off * (MPI_Aint)sizeof(int);
		b->rtypes[i] = MPI_INT;
		if (kind == 4 && c % 2 == 0) {
			b->rtypes[i] = pair;
			b->rcounts[i] = c / 2;
		}
		off += (kind == 0 || kind == 2) ? 2 : c + 1;
	}
}

static void verify(const struct nbrs *nb, int kind, int call, const struct bufs *b)
{
	int i, e, off, c;

	for (i = off = 0; i < nb->nin; i++) {
		int p = nb->in[i], blk = kind <= 1 ? 0 : nb->from_block[i];
		int step;

		c = (kind == 0 || kind == 2) ? 2 : p == MPI_PROC_NULL ? 1 :
			 kind == 1 ? cnt(p, 0) : cnt(p, blk);
		step = (kind == 0 || kind == 2) ? 2 : c + 1;
		for (e = 0; e < step; e++) {
			int got = b->rbuf[off + e];
			int want = (p == MPI_PROC_NULL || e >= c) ? SENTINEL : val(p, blk, e, call);

			CHECK(got == want, "kind %d call %d: slot %d (from %d, block %d) element "
			      "%d is %d, expected %d", kind, call, i, p, blk, e, got, want);
		}
		off += step;
	}
}

static int start(int kind, MPI_Comm comm, struct bufs *b, MPI_Request *req)
{
	switch (kind) {
	case 0:
		return req ? MPI_Ineighbor_allgather(b->sbuf, b->scounts[0], MPI_INT, b->rbuf, 2,
						     MPI_INT, comm, req) :
			     MPI_Neighbor_allgather(b->sbuf, b->scounts[0], MPI_INT, b->rbuf, 2,
						    MPI_INT, comm);
	case 1:
		return req ? MPI_Ineighbor_allgatherv(b->sbuf, b->scounts[0], MPI_INT, b->rbuf,
						      b->rcounts, b->rdispls, MPI_INT, comm,
						      req) :
			     MPI_Neighbor_allgatherv(b->sbuf, b->scounts[0], MPI_INT, b->rbuf,
						     b->rcounts, b->rdispls, MPI_INT, comm);
	case 2:
		return req ? MPI_Ineighbor_alltoall(b->sbuf, 2, MPI_INT, b->rbuf, 2, MPI_INT, comm,
						    req) :
			     MPI_Neighbor_alltoall(b->sbuf, 2, MPI_INT, b->rbuf, 2, MPI_INT, comm);
	case 3:
		return req ? MPI_Ineighbor_alltoallv(b->sbuf, b->scounts, b->sdispls, MPI_INT,
						     b->rbuf, b->rcounts, b->rdispls, MPI_INT,
						     comm, req) :
			     MPI_Neighbor_alltoallv(b->sbuf, b->scounts, b->sdispls, MPI_INT,
						    b->rbuf, b->rcounts, b->rdispls, MPI_INT,
						    comm);
	default:
		return req ? MPI_Ineighbor_alltoallw(b->sbuf, b->scounts, b->swd, b->stypes,
						     b->rbuf, b->rcounts, b->rwd, b->rtypes,
						     comm, req) :
			     MPI_Neighbor_alltoallw(b->sbuf, b->scounts, b->swd, b->stypes,
						    b->rbuf, b->rcounts, b->rwd, b->rtypes,
						    comm);
	}
}

static struct bufs nbufs[5];

/* Every collective on comm: blocking, then all five non-blocking at once. */
static void run_neighbor(MPI_Comm comm, const char *what)
{
	struct nbrs nb;
	MPI_Request reqs[5];
	int me, kind, call, flag;

	OK(MPI_Comm_rank(comm, &me));
	get_nbrs(comm, &nb);
	CHECK(nb.nin <= MAXB && nb.nout <= MAXB, "%s: too many neighbours", what);
	for (call = 1; call <= 2; call++)
		for (kind = 0; kind < 5; kind++) {
			prepare(&nb, me, kind, call, &nbufs[kind]);
			OK(start(kind, comm, &nbufs[kind], NULL));
			verify(&nb, kind, call, &nbufs[kind]);
		}
	for (call = 3; call <= 4; call++) {
		for (kind = 0; kind < 5; kind++) {
			prepare(&nb, me, kind, call, &nbufs[kind]);
			OK(start(kind, comm, &nbufs[kind], &reqs[kind]));
		}
		/* Test a while, then wait for the rest. */
		OK(MPI_Testall(5, reqs, &flag, MPI_STATUSES_IGNORE));
		if (!flag)
			OK(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
		for (kind = 0; kind < 5; kind++) {
			CHECK(reqs[kind] == MPI_REQUEST_NULL, "request %d not freed", kind);
			verify(&nb, kind, call, &nbufs[kind]);
		}
	}
	/* On a dup (same topology) freed while the collective is in flight. */
	{
		MPI_Comm dup;

		OK(MPI_Comm_dup(comm, &dup));
		prepare(&nb, me, 4, 5, &nbufs[4]);
		OK(start(4, dup, &nbufs[4], &reqs[0]));
		OK(MPI_Comm_free(&dup));
		OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
		verify(&nb, 4, 5, &nbufs[4]);
	}
}

static void test_neighbor(void)
{
	MPI_Comm c;
	int dims[3], periods[3], index[64], edges[256], in[2], inw[2], out[2], outw[2];

	OK(MPI_Type_contiguous(2, MPI_INT, &pair));
	OK(MPI_Type_commit(&pair));
	/* 2-d, periodic in the first dimension (of 1 or 2 processes, too). */
	dims[0] = dims[1] = 0;
	periods[0] = 1;
	periods[1] = 0;
	OK(MPI_Dims_create(size, 2, dims));
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
	run_neighbor(c, "2-d grid");
	OK(MPI_Comm_free(&c));
	/* The other way round: the small dimension non-periodic. */
	periods[0] = 0;
	periods[1] = 1;
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
	run_neighbor(c, "2-d grid, second periodic");
	OK(MPI_Comm_free(&c));
	/* 3-d, all periodic: dimensions of 1 and 2 where size is small. */
	dims[0] = dims[1] = dims[2] = 0;
	periods[0] = periods[1] = periods[2] = 1;
	OK(MPI_Dims_create(size, 3, dims));
	OK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &c));
	run_neighbor(c, "3-d periodic grid");
	OK(MPI_Comm_free(&c));
	/* 1-d, non-periodic: a line, and its dup. */
	dims[0] = size;
	periods[0] = 0;
	OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
	{
		MPI_Comm d;

		OK(MPI_Comm_dup(c, &d));
		run_neighbor(d, "dup of a line");
		OK(MPI_Comm_free(&d));
	}
	run_neighbor(c, "line");
	OK(MPI_Comm_free(&c));
	/* 0-d grid: no neighbours. */
	OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c));
	if (c != MPI_COMM_NULL) {
		run_neighbor(c, "0-d grid");
		OK(MPI_Comm_free(&c));
	}
	/* A graph: ring with chords (double edges on 2 and 4 nodes). */
	ring_graph(size, index, edges);
	OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c));
	run_neighbor(c, "graph");
	OK(MPI_Comm_free(&c));
	/* Distributed graphs: directed, adjacent and general. */
	digraph_in(rank, in, inw);
	digraph_out(rank, out, outw);
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, inw, 2, out, outw,
					  MPI_INFO_NULL, 0, &c));
	run_neighbor(c, "adjacent distributed graph");
	OK(MPI_Comm_free(&c));
	{
		int s[1] = { rank }, dg[1] = { 2 };

		OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, s, dg, out, MPI_UNWEIGHTED,
					 MPI_INFO_NULL, 0, &c));
		run_neighbor(c, "distributed graph");
		OK(MPI_Comm_free(&c));
	}
	/* Only sources on some, only destinations on others. */
	{
		int src = (rank + 1) % size, dst = (rank + size - 1) % size;

		/* Edges r -> r-1 from even r (from all r when size is odd). */
		if (size % 2 == 0) {
			int has_in = rank % 2 == 1, has_out = rank % 2 == 0;

			OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, has_in, &src,
							  MPI_UNWEIGHTED, has_out, &dst,
							  MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
		} else {
			OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED,
							  1, &dst, MPI_UNWEIGHTED,
							  MPI_INFO_NULL, 0, &c));
		}
		run_neighbor(c, "one-way distributed graph");
		OK(MPI_Comm_free(&c));
	}
	OK(MPI_Type_free(&pair));
}

/* --- errors --- */

static void test_errors(void)
{
	MPI_Comm cart, g, dg, c = MPI_COMM_NULL;
	MPI_Request req;
	int dims[2] = { size, 1 }, periods[2] = { 0, 0 }, r, s, coords[2], status, v[8];
	int index[2] = { 1, 1 }, edges[2] = { 0, 0 }, in[1], w[1] = { 1 }, neg[1] = { -1 };
	int buf[8] = { 0 }, cnts[4] = { 1, 1, 1, 1 }, displs[4] = { 0, 1, 2, 3 };

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	/* No topology, or a freed or null communicator. */
	FAILS(MPI_ERR_COMM, MPI_Topo_test(MPI_COMM_NULL, &status));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &s));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_get(MPI_COMM_WORLD, 2, dims, periods, coords));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &r, &s));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Graphdims_get(MPI_COMM_WORLD, &r, &s));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &r, &s, &status));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(buf, 1, MPI_INT, buf + 1, 1, MPI_INT,
						       MPI_COMM_WORLD));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Ineighbor_alltoall(buf, 1, MPI_INT, buf + 1, 1, MPI_INT,
						       MPI_COMM_WORLD, &req));
	FAILS(MPI_ERR_COMM, MPI_Cart_create(MPI_COMM_NULL, 2, dims, periods, 0, &c));
	FAILS(MPI_ERR_COMM, MPI_Neighbor_alltoall(buf, 1, MPI_INT, buf + 1, 1, MPI_INT,
						  MPI_COMM_NULL));
	/* Bad grids. */
	FAILS(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c));
	dims[1] = 0;
	FAILS(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
	dims[1] = 2;
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &r));
	FAILS(MPI_ERR_ARG, MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, periods, 0, &c));
	FAILS(MPI_ERR_ARG, MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, NULL));
	CHECK(c == MPI_COMM_NULL, "a failed create set the communicator");
	dims[1] = 1;
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
	FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, size, 2, coords));
	FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, -1, 2, coords));
	FAILS(MPI_ERR_ARG, MPI_Cart_coords(cart, 0, 1, coords));
	FAILS(MPI_ERR_ARG, MPI_Cart_get(cart, 1, dims, periods, coords));
	FAILS(MPI_ERR_ARG, MPI_Cart_shift(cart, 2, 1, &r, &s));
	FAILS(MPI_ERR_ARG, MPI_Cart_shift(cart, -1, 1, &r, &s));
	coords[0] = size;
	coords[1] = 0;
	FAILS(MPI_ERR_ARG, MPI_Cart_rank(cart, coords, &r));
	coords[0] = 0;
	coords[1] = -1;
	FAILS(MPI_ERR_ARG, MPI_Cart_rank(cart, coords, &r));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(cart, 0, &r));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors(cart, 1, in, MPI_UNWEIGHTED, 1, in,
							 MPI_UNWEIGHTED));
	/* Bad arguments to the neighbourhood collectives, on a grid. */
	FAILS(MPI_ERR_BUFFER, MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT,
						     cart));
	FAILS(MPI_ERR_COUNT, MPI_Neighbor_alltoall(buf, -1, MPI_INT, buf + 4, 1, MPI_INT, cart));
	FAILS(MPI_ERR_TYPE, MPI_Neighbor_alltoall(buf, 1, MPI_DATATYPE_NULL, buf + 4, 1,
						  MPI_INT, cart));
	FAILS(MPI_ERR_ARG, MPI_Neighbor_allgatherv(buf, 1, MPI_INT, buf + 4, NULL, displs,
						   MPI_INT, cart));
	cnts[1] = -1;
	FAILS(MPI_ERR_COUNT, MPI_Neighbor_alltoallv(buf, cnts, displs, MPI_INT, buf + 4, cnts,
						    displs, MPI_INT, cart));
	cnts[1] = 1;
	FAILS(MPI_ERR_ARG, MPI_Ineighbor_allgather(buf, 1, MPI_INT, buf + 4, 1, MPI_INT, cart,
						   NULL));
	FAILS(MPI_ERR_ARG, MPI_Neighbor_alltoallw(buf, cnts, NULL, NULL, buf + 4, cnts, NULL,
						  NULL, cart));
	/* Nothing lost: the grid's collectives still line up. */
	v[0] = rank;
	v[1] = v[2] = v[3] = v[4] = -1;
	OK(MPI_Neighbor_allgather(v, 1, MPI_INT, v + 1, 1, MPI_INT, cart));
	CHECK(v[1] == (rank > 0 ? rank - 1 : -1) && v[2] == (rank < size - 1 ? rank + 1 : -1) &&
	      v[3] == -1 && v[4] == -1, "after the errors: %d %d %d %d", v[1], v[2], v[3], v[4]);
	OK(MPI_Comm_free(&cart));
	/* Bad graphs. */
	FAILS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g));
	edges[0] = 1;
	FAILS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &g));
	FAILS(MPI_ERR_ARG, MPI_Graph_map(MPI_COMM_WORLD, 1, index, edges, &r));
	edges[0] = 0;
	index[0] = 2;
	index[1] = 1;
	if (size > 1)
		FAILS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &g));
	index[0] = 1;
	OK(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &g));
	if (g != MPI_COMM_NULL) {
		FAILS(MPI_ERR_RANK, MPI_Graph_neighbors(g, 1, 2, v));
		FAILS(MPI_ERR_RANK, MPI_Graph_neighbors_count(g, -1, &r));
		FAILS(MPI_ERR_ARG, MPI_Graph_neighbors(g, 0, -1, v));
		FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_coords(g, 0, 1, v));
		FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(g, &r, &s, &status));
		OK(MPI_Comm_free(&g));
	}
	/* Bad distributed graphs. */
	in[0] = size;
	FAILS(MPI_ERR_RANK, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in, w, 0, NULL,
							   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
							   &dg));
	in[0] = MPI_PROC_NULL;
	FAILS(MPI_ERR_RANK, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in, w, 0, NULL,
							   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
							   &dg));
	in[0] = 0;
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, in, w, 0, NULL,
							  MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
							  &dg));
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in, neg, 0, NULL,
							  MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
							  &dg));
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in, MPI_UNWEIGHTED,
							  1, in, w, MPI_INFO_NULL, 0, &dg));
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in,
							  MPI_WEIGHTS_EMPTY, 0, NULL,
							  MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
							  &dg));
	s = -1;
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, in, &s, in, w,
						 MPI_INFO_NULL, 0, &dg));
	s = 1;
	r = size;
	FAILS(MPI_ERR_RANK, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, in, &s, &r, w,
						  MPI_INFO_NULL, 0, &dg));
	FAILS(MPI_ERR_RANK, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, &s, in, w,
						  MPI_INFO_NULL, 0, &dg));
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, in, &s, in, neg,
						 MPI_INFO_NULL, 0, &dg));
	/* A good one after all that, and its errors. */
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
					  MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
	FAILS(MPI_ERR_ARG, MPI_Dist_graph_neighbors(dg, -1, in, MPI_UNWEIGHTED, 0, in,
						    MPI_UNWEIGHTED));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_get(dg, 1, 1, v, v));
	FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_sub(dg, periods, &c));
	OK(MPI_Neighbor_alltoall(buf, 1, MPI_INT, buf + 1, 1, MPI_INT, dg));
	OK(MPI_Topo_test(dg, &status));
	CHECK(status == MPI_DIST_GRAPH, "Topo_test %d", status);
	OK(MPI_Comm_free(&dg));
	FAILS(MPI_ERR_COMM, MPI_Topo_test(dg, &status));
	/* The world's collectives still line up too. */
	OK(MPI_Allreduce(&rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(r == size * (size - 1) / 2, "allreduce after the errors: %d", r);
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "dims", test_dims },
	{ "cart", test_cart },
	{ "cartsub", test_cartsub },
	{ "graph", test_graph },
	{ "distgraph", test_distgraph },
	{ "neighbor", test_neighbor },
	{ "errors", test_errors },
};

int main(int argc, char **argv)
{
	size_t i;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	if (argc != 2) {
		fprintf(stderr, "usage: topo TEST\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		OK(MPI_Finalize());
		return 0;
	}
	fprintf(stderr, "topo: no test %s\n", argv[1]);
	return 2;
}
