// SPDX-License-Identifier: MIT
/*
 * topo.c - virtual topologies: Cartesian grids, graphs and distributed
 * graphs attached to communicators, and MPI_Dims_create.
 *
 * A topology is one allocation (struct mpi_shim_topo and its integer
 * arrays) hung on comm->topo; MPI_Comm_dup copies it, the release of the
 * communicator frees it.  Every topology also keeps this process's in- and
 * out-neighbours in the order the neighbourhood collectives use them
 * (coll_neighbor.c), so that they need not know the kinds apart.
 *
 * The mapping is the identity: a process keeps its rank of the old
 * communicator in the new one, whatever `reorder' says (the standard lets
 * an implementation ignore it).  The new communicator is made by
 * MPI_Comm_split, which agrees on its context; processes beyond the size
 * of the topology get MPI_COMM_NULL.
 *
 * A circle stays with comm.c: MPI_Comm_dup copies the topology
 * (mpi_shim_topo_copy, which shares topo_alloc with every constructor
 * here), and the constructors call MPI_Comm_split and MPI_Comm_free.
 * Its release, which needs no allocation, is comm_object.c's.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "topo.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY: their addresses are the values. */
int mpi_shim_unweighted[1], mpi_shim_weights_empty[1];

/* --- allocation --- */

/* The next n ints of an array being cut up. */
static int *take(int **p, int n)
{
	int *a = *p;

	*p += n;
	return a;
}

/* A topology of kind with room for its arrays, each of the length given. */
static struct mpi_shim_topo *topo_alloc(int kind, int ndims, int nnodes, int nedges, int nin,
					int nout)
{
	size_t n = 3 * (size_t)ndims + (size_t)nnodes + (size_t)nedges + 2 * (size_t)nin +
		   2 * (size_t)nout;
	struct mpi_shim_topo *t = malloc(sizeof(*t) + n * sizeof(int));
	int *p;

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->ndims = ndims;
	t->nnodes = nnodes;
	t->nedges = nedges;
	t->nin = nin;
	t->nout = nout;
	t->nints = n;
	p = t->ints;
	t->dims = take(&p, ndims);
	t->periods = take(&p, ndims);
	t->coords = take(&p, ndims);
	t->index = take(&p, nnodes);
	t->edges = take(&p, nedges);
	t->in = take(&p, nin);
	t->inw = take(&p, nin);
	t->out = take(&p, nout);
	t->outw = take(&p, nout);
	return t;
}

int mpi_shim_topo_copy(MPI_Comm from, MPI_Comm to)
{
	const struct mpi_shim_topo *f = from->topo;
	struct mpi_shim_topo *t;

	if (!f)
		return MPI_SUCCESS;
	t = topo_alloc(f->kind, f->ndims, f->nnodes, f->nedges, f->nin, f->nout);
	if (!t)
		return MPI_ERR_NO_MEM;
	t->weighted = f->weighted;
	memcpy(t->ints, f->ints, f->nints * sizeof(int));
	to->topo = t;
	return MPI_SUCCESS;
}

/* --- argument checks --- */

static int check_out(MPI_Comm comm, const void *p, const char *what, const char *call)
{
	if (!p)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "%s is NULL", what);
	return MPI_SUCCESS;
}

/* comm is a valid communicator with a topology of kind (0: any, or none). */
static int check_topo(MPI_Comm comm, int kind, const char *call)
{
	static const char *const names[] = { "no", "a Cartesian", "a graph",
					     "a distributed graph" };
	int rc, has;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "an inter-communicator has no topology");
	if (!kind)
		return MPI_SUCCESS;
	has = comm->topo ? comm->topo->kind : 0;
	if (has != kind)
		return mpi_shim_err(comm, MPI_ERR_TOPOLOGY, call,
				    "the communicator has %s topology, not %s one", names[has],
				    names[kind]);
	return MPI_SUCCESS;
}

/* A rank of comm (not MPI_PROC_NULL). */
static int check_member(MPI_Comm comm, int rank, const char *what, const char *call)
{
	if (rank >= 0 && rank < comm->size)
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_RANK, call,
			    "%s %d is not a rank of the communicator (size %d)", what, rank,
			    comm->size);
}

/*
 * A grid: ndims >= 0 dimensions of at least one process each, dims and
 * periods given when ndims > 0; *nprocs its number of processes, at most
 * the size of comm.
 */
static int check_grid(MPI_Comm comm, int ndims, const int *dims, const int *periods,
		      int *nprocs, const char *call)
{
	long long n = 1;
	int i;

	if (ndims < 0)
		return mpi_shim_err(comm, MPI_ERR_DIMS, call, "ndims %d is negative", ndims);
	if (ndims > 0 && (!dims || !periods))
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the %s array is NULL",
				    !dims ? "dims" : "periods");
	for (i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpi_shim_err(comm, MPI_ERR_DIMS, call,
					    "dims[%d] is %d: a dimension has at least one "
					    "process", i, dims[i]);
		n *= dims[i];
		if (n > comm->size)
			return mpi_shim_err(comm, MPI_ERR_TOPOLOGY, call,
					    "the grid has more processes than the "
					    "communicator's %d", comm->size);
	}
	*nprocs = (int)n;
	return MPI_SUCCESS;
}

/* A graph of nnodes nodes: index non-decreasing, edges naming nodes. */
static int check_graph(MPI_Comm comm, int nnodes, const int *index, const int *edges,
		       const char *call)
{
	int i, prev = 0;

	if (nnodes < 0)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "nnodes %d is negative", nnodes);
	if (nnodes > comm->size)
		return mpi_shim_err(comm, MPI_ERR_TOPOLOGY, call,
				    "the graph has %d nodes, more than the communicator's %d "
				    "processes", nnodes, comm->size);
	if (nnodes == 0)
		return MPI_SUCCESS;
	if (!index)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the index array is NULL");
	for (i = 0; i < nnodes; i++) {
		if (index[i] < prev)
			return mpi_shim_err(comm, MPI_ERR_ARG, call,
					    "index[%d] is %d, less than %d before it", i, index[i],
					    prev);
		prev = index[i];
	}
	if (prev > 0 && !edges)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the edges array is NULL");
	for (i = 0; i < prev; i++)
		if (edges[i] < 0 || edges[i] >= nnodes)
			return mpi_shim_err(comm, MPI_ERR_ARG, call,
					    "edges[%d] is %d, not a node (0 to %d)", i, edges[i],
					    nnodes - 1);
	return MPI_SUCCESS;
}

/* --- Cartesian grids --- */

/* The rank of coords, each in its range. */
static int cart_rank_of(const struct mpi_shim_topo *t, const int *coords)
{
	int d, r = 0;

	for (d = 0; d < t->ndims; d++)
		r = r * t->dims[d] + coords[d];
	return r;
}

static void cart_coords_of(const struct mpi_shim_topo *t, int rank, int *coords)
{
	int d;

	for (d = t->ndims - 1; d >= 0; d--) {
		coords[d] = rank % t->dims[d];
		rank /= t->dims[d];
	}
}

/* The rank disp steps away from this process along dimension d, or
 * MPI_PROC_NULL past the edge of a non-periodic dimension. */
static int cart_step(const struct mpi_shim_topo *t, int d, long long disp)
{
	long long x = t->coords[d] + disp, n = t->dims[d];
	int i, stride = 1;

	if (x < 0 || x >= n) {
		if (!t->periods[d])
			return MPI_PROC_NULL;
		x = ((x % n) + n) % n;
	}
	for (i = d + 1; i < t->ndims; i++)
		stride *= t->dims[i];
	return cart_rank_of(t, t->coords) + ((int)x - t->coords[d]) * stride;
}

/* A grid for the process of rank in it; its neighbours are, for each
 * dimension, the one at -1 then the one at +1 (MPI_PROC_NULL included). */
static struct mpi_shim_topo *cart_new(int ndims, const int *dims, const int *periods, int rank)
{
	struct mpi_shim_topo *t = topo_alloc(MPI_CART, ndims, 0, 0, 2 * ndims, 2 * ndims);
	int d;

	if (!t)
		return NULL;
	for (d = 0; d < ndims; d++) {
		t->dims[d] = dims[d];
		t->periods[d] = periods[d] != 0;
	}
	cart_coords_of(t, rank, t->coords);
	for (d = 0; d < ndims; d++) {
		t->in[2 * d] = t->out[2 * d] = cart_step(t, d, -1);
		t->in[2 * d + 1] = t->out[2 * d + 1] = cart_step(t, d, 1);
	}
	return t;
}

/*
 * The new communicator of a topology: the processes of color 0 in their
 * order in comm; *newcomm is MPI_COMM_NULL for the others (color
 * MPI_UNDEFINED).  Split reports its own errors.
 */
static int topo_split(MPI_Comm comm, int member, MPI_Comm *newcomm)
{
	return PMPI_Comm_split(comm, member ? 0 : MPI_UNDEFINED, comm->rank, newcomm);
}

/* Attach t to c, or free c when there is no t (no memory). */
static int topo_attach(MPI_Comm *c, struct mpi_shim_topo *t, MPI_Comm comm, const char *call)
{
	if (!t) {
		PMPI_Comm_free(c);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for the topology");
	}
	(*c)->topo = t;
	return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
		     int reorder, MPI_Comm *comm_cart)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_create";
	int rc, n;

	(void)reorder;
	if ((rc = check_topo(comm, 0, call)) ||
	    (rc = check_out(comm, comm_cart, "comm_cart", call)) ||
	    (rc = check_grid(comm, ndims, dims, periods, &n, call)))
		return rc;
	if ((rc = topo_split(comm, comm->rank < n, comm_cart)))
		return rc;
	if (*comm_cart == MPI_COMM_NULL)
		return MPI_SUCCESS;
	return topo_attach(comm_cart, cart_new(ndims, dims, periods, comm->rank), comm, call);
}
MPI_SHIM_ALIAS(MPI_Cart_create);

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
		  int *newrank)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_map";
	int rc, n;

	if ((rc = check_topo(comm, 0, call)) ||
	    (rc = check_out(comm, newrank, "newrank", call)) ||
	    (rc = check_grid(comm, ndims, dims, periods, &n, call)))
		return rc;
	*newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Cart_map);

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cartdim_get";
	int rc;

	if ((rc = check_topo(comm, MPI_CART, call)) ||
	    (rc = check_out(comm, ndims, "ndims", call)))
		return rc;
	*ndims = comm->topo->ndims;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Cartdim_get);

/* maxdims: the arrays hold all the dimensions. */
static int check_maxdims(MPI_Comm comm, int maxdims, const char *call)
{
	if (maxdims < comm->topo->ndims)
		return mpi_shim_err(comm, MPI_ERR_ARG, call,
				    "maxdims %d is less than the %d dimensions", maxdims,
				    comm->topo->ndims);
	return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_get";
	struct mpi_shim_topo *t;
	size_t bytes;
	int rc;

	if ((rc = check_topo(comm, MPI_CART, call)) || (rc = check_maxdims(comm, maxdims, call)))
		return rc;
	t = comm->topo;
	if (t->ndims && (!dims || !periods || !coords))
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "an output array is NULL");
	bytes = (size_t)t->ndims * sizeof(int);
	if (bytes) {
		memcpy(dims, t->dims, bytes);
		memcpy(periods, t->periods, bytes);
		memcpy(coords, t->coords, bytes);
	}
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Cart_get);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_coords";
	int rc;

	if ((rc = check_topo(comm, MPI_CART, call)) ||
	    (rc = check_member(comm, rank, "rank", call)) ||
	    (rc = check_maxdims(comm, maxdims, call)))
		return rc;
	if (comm->topo->ndims && (rc = check_out(comm, coords, "coords", call)))
		return rc;
	cart_coords_of(comm->topo, rank, coords);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Cart_coords);

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_rank";
	struct mpi_shim_topo *t;
	int rc, d, r;

	if ((rc = check_topo(comm, MPI_CART, call)) ||
	    (rc = check_out(comm, rank, "rank", call)))
		return rc;
	t = comm->topo;
	if (t->ndims && (rc = check_out(comm, coords, "coords", call)))
		return rc;
	for (d = 0, r = 0; d < t->ndims; d++) {
		int c = coords[d], n = t->dims[d];

		if ((c < 0 || c >= n) && !t->periods[d])
			return mpi_shim_err(comm, MPI_ERR_ARG, call,
					    "coords[%d] is %d, outside the non-periodic "
					    "dimension (0 to %d)", d, c, n - 1);
		r = r * n + ((c % n) + n) % n;
	}
	*rank = r;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Cart_rank);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_shift";
	int rc;

	if ((rc = check_topo(comm, MPI_CART, call)) ||
	    (rc = check_out(comm, rank_source, "rank_source", call)) ||
	    (rc = check_out(comm, rank_dest, "rank_dest", call)))
		return rc;
	if (direction < 0 || direction >= comm->topo->ndims)
		return mpi_shim_err(comm, MPI_ERR_ARG, call,
				    "direction %d is not a dimension (0 to %d)", direction,
				    comm->topo->ndims - 1);
	*rank_source = cart_step(comm->topo, direction, -(long long)disp);
	*rank_dest = cart_step(comm->topo, direction, disp);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Cart_shift);

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Cart_sub";
	struct mpi_shim_topo *t;
	int rc, d, color = 0, key = 0, n = 0, *dims, *periods;

	if ((rc = check_topo(comm, MPI_CART, call)) ||
	    (rc = check_out(comm, newcomm, "newcomm", call)))
		return rc;
	t = comm->topo;
	if (t->ndims && (rc = check_out(comm, remain_dims, "remain_dims", call)))
		return rc;
	dims = malloc(2 * (size_t)t->ndims * sizeof(int) + 1);
	if (!dims)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	periods = dims + t->ndims;
	/* Same coordinates in the dimensions dropped: same subgrid; the rank
	 * in it is the row-major rank in the kept ones. */
	for (d = 0; d < t->ndims; d++) {
		if (remain_dims[d]) {
			key = key * t->dims[d] + t->coords[d];
			dims[n] = t->dims[d];
			periods[n++] = t->periods[d];
		} else {
			color = color * t->dims[d] + t->coords[d];
		}
	}
	rc = PMPI_Comm_split(comm, color, key, newcomm);
	if (!rc)
		rc = topo_attach(newcomm, cart_new(n, dims, periods, (*newcomm)->rank), comm,
				 call);
	free(dims);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Cart_sub);

/*
 * MPI_Dims_create: the free entries (0) of dims get the factors of nnodes
 * over the fixed ones, as close to each other as possible, in
 * non-increasing order: the smallest difference between the largest and
 * the smallest factor; of the factorizations with that difference, the one
 * with the largest first factor; then the same for the factors after the
 * first, and so on.  (This is what MPICH gives for two and three factors.)
 */

/* The divisors of m, ascending, into out (room for all: an int has at
 * most 1344); returns how many. */
static int divisors(int m, int *out)
{
	int d, n = 0, i, small;

	for (d = 1; (long long)d * d <= m; d++)
		if (m % d == 0)
			out[n++] = d;
	small = n;
	for (i = small - 1; i >= 0; i--)
		if (out[i] != m / out[i])
			out[n++] = m / out[i];
	return n;
}

/* The search for the best factorization: cur is being built, best is the
 * best one found (spread: its largest minus its smallest factor, or -1). */
struct dims_search {
	const int *div;
	int ndiv, n;
	int *cur, *best;
	int spread;
};

/* 1 if k factors, none above g, can multiply to m: g^k >= m. */
static int dims_reach(int g, int k, int m)
{
	long long p = 1;

	while (k-- > 0 && p < m)
		p *= g;
	return p >= m;
}

/* 1 if x^k <= m. */
static int dims_fits(int x, int k, int m)
{
	long long p = 1;

	while (k-- > 0) {
		p *= x;
		if (p > m)
			return 0;
	}
	return 1;
}

/* The largest x with x^k <= m (m >= 1, k >= 1): no more than this can be
 * the smallest of k factors of m. */
static int dims_root(int m, int k)
{
	int lo = 1, hi = m, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (dims_fits(mid, k, m))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void dims_first(struct dims_search *s, int m);

/* 1 if cur is better than best (see above); both have n factors. */
static int dims_better(const int *cur, const int *best, int n)
{
	int i;

	for (i = 0; i < n - 1; i++) {
		if (cur[i] - cur[n - 1] != best[i] - best[n - 1])
			return cur[i] - cur[n - 1] < best[i] - best[n - 1];
		if (cur[i] != best[i])
			return cur[i] > best[i];
	}
	return 0;
}

/*
 * Factors i.. of the factorization: they multiply to m, none above limit.
 * Divisors are tried from the largest (the first factor: dims_first).
 */
static void dims_search(struct dims_search *s, int i, int m, int limit)
{
	int j, g, spread;

	if (i == s->n - 1) {
		if (m > limit)
			return;
		s->cur[i] = m;
		spread = s->cur[0] - m;
		if (s->spread < 0 || dims_better(s->cur, s->best, s->n)) {
			s->spread = spread;
			memcpy(s->best, s->cur, (size_t)s->n * sizeof(int));
		}
		return;
	}
	if (i == 0) {
		dims_first(s, m);
		return;
	}
	/* The smallest factor is at most the root: no better spread here. */
	if (s->spread >= 0 && s->cur[0] - dims_root(m, s->n - i) > s->spread)
		return;
	for (j = s->ndiv - 1; j >= 0; j--) {
		g = s->div[j];
		if (g > limit || m % g)
			continue;
		/* Smaller factors only make the rest larger or unreachable. */
		if (!dims_reach(g, s->n - i, m))
			break;
		/* The smallest factor is at most g: no better spread below. */
		if (s->spread >= 0 && s->cur[0] - g > s->spread)
			break;
		s->cur[i] = g;
		dims_search(s, i + 1, m / g, g);
	}
}

/*
 * The largest factor, from the smallest that can be (its n-th power reaches
 * m) upwards, so that balanced factorizations are found first; the larger
 * it is, the smaller the smallest factor can be.
 */
static void dims_first(struct dims_search *s, int m)
{
	int j, g;

	for (j = 0; j < s->ndiv; j++) {
		g = s->div[j];
		if (!dims_reach(g, s->n, m))
			continue;
		if (s->spread >= 0 && g - dims_root(m / g, s->n - 1) > s->spread)
			break;
		s->cur[0] = g;
		dims_search(s, 1, m / g, g);
	}
}

/* Split m into k > 0 factors, best first (see above), into f. */
static int dims_balance(int m, int k, int *f)
{
	struct dims_search s = { .n = k, .best = f, .spread = -1 };
	int div[1400];

	s.cur = malloc((size_t)k * sizeof(int));
	if (!s.cur)
		return MPI_ERR_NO_MEM;
	s.ndiv = divisors(m, div);
	s.div = div;
	dims_search(&s, 0, m, m);
	free(s.cur);
	return MPI_SUCCESS;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Dims_create";
	int rc, i, nfree = 0, fixed = 1, m, k, *f;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (ndims < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_DIMS, call, "ndims %d is negative",
				    ndims);
	if (nnodes <= 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "nnodes %d is not positive", nnodes);
	if (ndims > 0 && !dims)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "dims is NULL");
	for (i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_DIMS, call,
					    "dims[%d] is %d, negative", i, dims[i]);
		if (!dims[i]) {
			nfree++;
			continue;
		}
		if (nnodes % dims[i] || (nnodes / dims[i]) % fixed)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_DIMS, call,
					    "%d nodes are not a multiple of the product of the "
					    "fixed dims (dims[%d] is %d)", nnodes, i, dims[i]);
		fixed *= dims[i];
	}
	m = nnodes / fixed;
	if (!nfree) {
		if (m != 1)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_DIMS, call,
					    "the fixed dims make %d nodes, not %d", fixed, nnodes);
		return MPI_SUCCESS;
	}
	f = malloc((size_t)nfree * sizeof(*f));
	if (!f)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	if (dims_balance(m, nfree, f)) {
		free(f);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	}
	for (i = k = 0; i < ndims; i++)
		if (!dims[i])
			dims[i] = f[k++];
	free(f);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Dims_create);

/* --- graphs --- */

/* The neighbours of node r: edges[first .. index[r]). */
static int graph_first(const struct mpi_shim_topo *t, int r)
{
	return r ? t->index[r - 1] : 0;
}

int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
		      int reorder, MPI_Comm *comm_graph)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Graph_create";
	struct mpi_shim_topo *t;
	int rc, nedges, first, n;

	(void)reorder;
	if ((rc = check_topo(comm, 0, call)) ||
	    (rc = check_out(comm, comm_graph, "comm_graph", call)) ||
	    (rc = check_graph(comm, nnodes, index, edges, call)))
		return rc;
	if ((rc = topo_split(comm, comm->rank < nnodes, comm_graph)))
		return rc;
	if (*comm_graph == MPI_COMM_NULL)
		return MPI_SUCCESS;
	nedges = index[nnodes - 1];
	first = comm->rank ? index[comm->rank - 1] : 0;
	n = index[comm->rank] - first;
	t = topo_alloc(MPI_GRAPH, 0, nnodes, nedges, n, n);
	if (t) {
		memcpy(t->index, index, (size_t)nnodes * sizeof(int));
		/* edges may be NULL when there are none */
		if (nedges)
			memcpy(t->edges, edges, (size_t)nedges * sizeof(int));
		if (n) {
			memcpy(t->in, edges + first, (size_t)n * sizeof(int));
			memcpy(t->out, edges + first, (size_t)n * sizeof(int));
		}
	}
	return topo_attach(comm_graph, t, comm, call);
}
MPI_SHIM_ALIAS(MPI_Graph_create);

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
		   int *newrank)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Graph_map";
	int rc;

	if ((rc = check_topo(comm, 0, call)) ||
	    (rc = check_out(comm, newrank, "newrank", call)) ||
	    (rc = check_graph(comm, nnodes, index, edges, call)))
		return rc;
	*newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Graph_map);

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Graphdims_get";
	int rc;

	if ((rc = check_topo(comm, MPI_GRAPH, call)) ||
	    (rc = check_out(comm, nnodes, "nnodes", call)) ||
	    (rc = check_out(comm, nedges, "nedges", call)))
		return rc;
	*nnodes = comm->topo->nnodes;
	*nedges = comm->topo->nedges;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Graphdims_get);

/* Copy the first min(n, max) of src; max < 0 is an error. */
static int copy_out(MPI_Comm comm, int *dst, const int *src, int n, int max, const char *what,
		    const char *call)
{
	if (max < 0)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the length of %s is %d", what, max);
	if (n > max)
		n = max;
	if (n > 0 && !dst)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "%s is NULL", what);
	if (n > 0)
		memcpy(dst, src, (size_t)n * sizeof(int));
	return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Graph_get";
	int rc;

	if ((rc = check_topo(comm, MPI_GRAPH, call)) ||
	    (rc = copy_out(comm, index, comm->topo->index, comm->topo->nnodes, maxindex, "index",
			   call)) ||
	    (rc = copy_out(comm, edges, comm->topo->edges, comm->topo->nedges, maxedges, "edges",
			   call)))
		return rc;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Graph_get);

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Graph_neighbors_count";
	int rc;

	if ((rc = check_topo(comm, MPI_GRAPH, call)) ||
	    (rc = check_member(comm, rank, "rank", call)) ||
	    (rc = check_out(comm, nneighbors, "nneighbors", call)))
		return rc;
	*nneighbors = comm->topo->index[rank] - graph_first(comm->topo, rank);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Graph_neighbors";
	struct mpi_shim_topo *t;
	int rc, first;

	if ((rc = check_topo(comm, MPI_GRAPH, call)) ||
	    (rc = check_member(comm, rank, "rank", call)))
		return rc;
	t = comm->topo;
	first = graph_first(t, rank);
	return copy_out(comm, neighbors, t->edges + first, t->index[rank] - first, maxneighbors,
			"neighbors", call);
}
MPI_SHIM_ALIAS(MPI_Graph_neighbors);

/* --- distributed graphs --- */

/*
 * n ranks of comm (none MPI_PROC_NULL) and their weights: an array of n
 * non-negative weights, MPI_UNWEIGHTED, or MPI_WEIGHTS_EMPTY (or NULL)
 * when n is 0.
 */
static int check_ranks(MPI_Comm comm, const int *ranks, int n, const char *what,
		       const char *call)
{
	int i, rc;

	if (n < 0)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the number of %s is %d", what, n);
	if (n > 0 && !ranks)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the %s array is NULL", what);
	for (i = 0; i < n; i++)
		if ((rc = check_member(comm, ranks[i], what, call)))
			return rc;
	return MPI_SUCCESS;
}

static int check_weights(MPI_Comm comm, const int *w, int n, const char *what,
			 const char *call)
{
	int i;

	if (w == MPI_UNWEIGHTED || n == 0)
		return MPI_SUCCESS;
	if (!w || w == MPI_WEIGHTS_EMPTY)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "%d %s but no weights (%s)", n, what,
				    w ? "MPI_WEIGHTS_EMPTY" : "NULL");
	for (i = 0; i < n; i++)
		if (w[i] < 0)
			return mpi_shim_err(comm, MPI_ERR_ARG, call,
					    "the weight of %s %d is %d, negative", what, i, w[i]);
	return MPI_SUCCESS;
}

/* in/out weights: the given ones, or 1 when unweighted. */
static void set_weights(int *dst, const int *w, int n)
{
	int i;

	for (i = 0; i < n; i++)
		dst[i] = w == MPI_UNWEIGHTED ? 1 : w[i];
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
				    const int sourceweights[], int outdegree,
				    const int destinations[], const int destweights[],
				    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Dist_graph_create_adjacent";
	struct mpi_shim_topo *t;
	int rc;

	(void)info;
	(void)reorder;
	if ((rc = check_topo(comm, 0, call)) ||
	    (rc = check_out(comm, comm_dist_graph, "comm_dist_graph", call)) ||
	    (rc = check_ranks(comm, sources, indegree, "sources", call)) ||
	    (rc = check_ranks(comm, destinations, outdegree, "destinations", call)) ||
	    (rc = check_weights(comm, sourceweights, indegree, "sources", call)) ||
	    (rc = check_weights(comm, destweights, outdegree, "destinations", call)))
		return rc;
	if ((sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
		return mpi_shim_err(comm, MPI_ERR_ARG, call,
				    "MPI_UNWEIGHTED for the %s but not for the %s",
				    sourceweights == MPI_UNWEIGHTED ? "sources" : "destinations",
				    sourceweights == MPI_UNWEIGHTED ? "destinations" : "sources");
	if ((rc = topo_split(comm, 1, comm_dist_graph)))
		return rc;
	t = topo_alloc(MPI_DIST_GRAPH, 0, 0, 0, indegree, outdegree);
	if (t) {
		t->weighted = sourceweights != MPI_UNWEIGHTED;
		if (indegree)
			memcpy(t->in, sources, (size_t)indegree * sizeof(int));
		if (outdegree)
			memcpy(t->out, destinations, (size_t)outdegree * sizeof(int));
		set_weights(t->inw, sourceweights, indegree);
		set_weights(t->outw, destweights, outdegree);
	}
	return topo_attach(comm_dist_graph, t, comm, call);
}
MPI_SHIM_ALIAS(MPI_Dist_graph_create_adjacent);

/*
 * MPI_Dist_graph_create: every edge s -> d given anywhere is sent to s (an
 * out-edge) and to d (an in-edge) by an all-to-all.  Each process takes
 * its edges in the order of the processes that gave them, and of their
 * lists: the same order on both ends of the edges between two processes.
 */
struct edge_rec {
	int peer;   /* the other end */
	int weight;
	int out;    /* 1: an out-edge of the receiver, 0: an in-edge */
};

static int dist_exchange(MPI_Comm comm, int n, const int *sources, const int *degrees,
			 const int *dests, const int *weights, struct edge_rec **recs_p,
			 int *nrecs_p)
{
	int p = comm->size, i, j, k, e, rc = MPI_ERR_NO_MEM, total = 0;
	int *cnt = calloc(4 * (size_t)p, sizeof(int));
	int *sdisp = cnt + p, *rcnt = cnt + 2 * p, *rdisp = cnt + 3 * p;
	struct edge_rec *out = NULL, *in = NULL;
	long long nedges = 0;

	if (!cnt)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < n; i++)
		nedges += degrees[i];
	out = malloc((size_t)(2 * nedges + 1) * sizeof(*out));
	if (!out)
		goto fail;
	/* Count, then place, the records for each process (ints: 3 a record). */
	for (i = e = 0; i < n; i++)
		for (j = 0; j < degrees[i]; j++, e++) {
			cnt[sources[i]] += 3;
			cnt[dests[e]] += 3;
		}
	for (i = 1; i < p; i++)
		sdisp[i] = sdisp[i - 1] + cnt[i - 1];
	for (i = 0; i < p; i++)
		cnt[i] = 0;
	for (i = e = 0; i < n; i++)
		for (j = 0; j < degrees[i]; j++, e++) {
			int w = weights == MPI_UNWEIGHTED ? 1 : weights[e];
			int s = sources[i], d = dests[e];

			k = (sdisp[s] + cnt[s]) / 3;
			out[k] = (struct edge_rec){ d, w, 1 };
			cnt[s] += 3;
			k = (sdisp[d] + cnt[d]) / 3;
			out[k] = (struct edge_rec){ s, w, 0 };
			cnt[d] += 3;
		}
	if ((rc = PMPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm)))
		goto fail;
	for (i = 0; i < p; i++) {
		rdisp[i] = total;
		total += rcnt[i];
	}
	in = malloc((size_t)total * sizeof(int) + 1);
	rc = MPI_ERR_NO_MEM;
	if (!in)
		goto fail;
	rc = PMPI_Alltoallv(out, cnt, sdisp, MPI_INT, in, rcnt, rdisp, MPI_INT, comm);
	if (rc)
		goto fail;
	free(out);
	free(cnt);
	*recs_p = in;
	*nrecs_p = total / 3;
	return MPI_SUCCESS;

fail:
	free(in);
	free(out);
	free(cnt);
	return rc;
}

int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
			   const int destinations[], const int weights[], MPI_Info info,
			   int reorder, MPI_Comm *comm_dist_graph)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Dist_graph_create";
	struct mpi_shim_topo *t;
	struct edge_rec *recs;
	int rc, i, nrecs, nin = 0, nout = 0, nedges = 0;

	(void)info;
	(void)reorder;
	if ((rc = check_topo(comm, 0, call)) ||
	    (rc = check_out(comm, comm_dist_graph, "comm_dist_graph", call)) ||
	    (rc = check_ranks(comm, sources, n, "sources", call)))
		return rc;
	if (n > 0 && !degrees)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the degrees array is NULL");
	for (i = 0; i < n; i++) {
		if (degrees[i] < 0 || degrees[i] > INT_MAX - nedges)
			return mpi_shim_err(comm, MPI_ERR_ARG, call, "degrees[%d] is %d", i,
					    degrees[i]);
		nedges += degrees[i];
	}
	if ((rc = check_ranks(comm, destinations, nedges, "destinations", call)) ||
	    (rc = check_weights(comm, weights, nedges, "edges", call)))
		return rc;
	rc = dist_exchange(comm, n, sources, degrees, destinations, weights, &recs, &nrecs);
	if (rc)
		return mpi_shim_err(comm, rc, call, "exchanging the edges failed");
	for (i = 0; i < nrecs; i++)
		recs[i].out ? nout++ : nin++;
	if ((rc = topo_split(comm, 1, comm_dist_graph))) {
		free(recs);
		return rc;
	}
	t = topo_alloc(MPI_DIST_GRAPH, 0, 0, 0, nin, nout);
	if (t) {
		t->weighted = weights != MPI_UNWEIGHTED;
		nin = nout = 0;
		for (i = 0; i < nrecs; i++) {
			if (recs[i].out) {
				t->outw[nout] = recs[i].weight;
				t->out[nout++] = recs[i].peer;
			} else {
				t->inw[nin] = recs[i].weight;
				t->in[nin++] = recs[i].peer;
			}
		}
	}
	free(recs);
	return topo_attach(comm_dist_graph, t, comm, call);
}
MPI_SHIM_ALIAS(MPI_Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
				    int *weighted)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Dist_graph_neighbors_count";
	int rc;

	if ((rc = check_topo(comm, MPI_DIST_GRAPH, call)) ||
	    (rc = check_out(comm, indegree, "indegree", call)) ||
	    (rc = check_out(comm, outdegree, "outdegree", call)) ||
	    (rc = check_out(comm, weighted, "weighted", call)))
		return rc;
	*indegree = comm->topo->nin;
	*outdegree = comm->topo->nout;
	*weighted = comm->topo->weighted;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Dist_graph_neighbors_count);

/* The weights, if the graph has some and the caller wants them. */
static int copy_weights(MPI_Comm comm, int *dst, const int *src, int n, int max,
			const char *what, const char *call)
{
	if (!comm->topo->weighted || dst == MPI_UNWEIGHTED || dst == MPI_WEIGHTS_EMPTY)
		return MPI_SUCCESS;
	return copy_out(comm, dst, src, n, max, what, call);
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
			      int sourceweights[], int maxoutdegree, int destinations[],
			      int destweights[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Dist_graph_neighbors";
	struct mpi_shim_topo *t;
	int rc;

	if ((rc = check_topo(comm, MPI_DIST_GRAPH, call)))
		return rc;
	t = comm->topo;
	if ((rc = copy_out(comm, sources, t->in, t->nin, maxindegree, "sources", call)) ||
	    (rc = copy_out(comm, destinations, t->out, t->nout, maxoutdegree, "destinations",
			   call)) ||
	    (rc = copy_weights(comm, sourceweights, t->inw, t->nin, maxindegree,
			       "sourceweights", call)) ||
	    (rc = copy_weights(comm, destweights, t->outw, t->nout, maxoutdegree,
			       "destweights", call)))
		return rc;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Dist_graph_neighbors);

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Topo_test";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = check_out(comm, status, "status", call)))
		return rc;
	*status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Topo_test);
