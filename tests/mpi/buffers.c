/* SPDX-License-Identifier: MIT */
/*
 * buffers.c - buffers that the standard allows and an argument check
 * might refuse: NULL where the count is 0 (such a buffer is never
 * accessed), and MPI_BOTTOM with absolute addresses (legal in every call
 * that takes a buffer).  Every call runs under MPI_ERRORS_RETURN, so a
 * refusal is reported with its message by the rank that got it, and the
 * job stops there instead of leaving the other ranks in the collective.
 *
 *   bipload -sz N buffers TEST
 *
 * zero      every collective on MPI_COMM_WORLD in each of its forms
 *           (blocking, non-blocking, persistent, and the large-count
 *           ones): counts 0 and NULL buffers on every rank, and the v and
 *           w forms with some ranks empty while the others move data,
 *           empty on the sending side and on the receiving side; every
 *           element received is checked
 * inter     the same on an inter-communicator (even and odd ranks)
 * neighbor  the neighbourhood collectives on a complete graph
 * p2p       point-to-point with count 0 and NULL, every send mode,
 *           probes, matched receives, persistent requests
 * bottom    MPI_BOTTOM with byte displacements that are absolute addresses
 *           (the w forms that take MPI_Aint), and with datatypes built
 *           from MPI_Get_address, through point-to-point and collectives
 * bottomlow MPI_BOTTOM with int displacements that are absolute addresses,
 *           in memory mapped below 2 GiB: the v and w forms, also on an
 *           inter-communicator and a graph
 * onebad    rank 1 alone passes a negative count to MPI_Allgatherv under
 *           the default handler: the job must stop with a message, not
 *           hang (run by fatal.sh)
 * onebadreturn  the same under MPI_ERRORS_RETURN, rank 1 then exiting
 *           with status 3: bipload stops the others (fatal.sh)
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "coll_check.h"

#define MAXP 64

static int rank, size;

/*
 * What a program passes for an empty buffer: NULL, or one address that
 * every empty array shares (a language binding's empty buffer), so that the
 * send and the receive buffer of a rank that moves nothing are the same.
 */
static int empty_cell;
static int *empty_buf;
static const char *empty_name = "";

static void empty_as(int shared)
{
	empty_buf = shared ? &empty_cell : NULL;
	empty_name = shared ? "empty buffers at one shared address" : "empty buffers NULL";
}

/* ------------------------------------------------------------------ */
/* The forms of a collective                                           */
/* ------------------------------------------------------------------ */

enum form { BLOCKING, NONBLOCKING, PERSISTENT, LARGE, LARGE_NB, LARGE_PERSIST, NFORMS };

static const char *const form_name[NFORMS] = {
	"blocking", "non-blocking", "persistent", "_c", "_c non-blocking", "_c persistent",
};

static char where[256];
static const char *comm_name = "MPI_COMM_WORLD";

static char *low_mem;
static size_t low_used;

/* Each call starts here, with the low memory (vec_buf) free again. */
static void at(const char *call, enum form f, const char *what)
{
	low_used = 0;
	snprintf(where, sizeof(where), "%s on %s, %s form, %s%s%s", call, comm_name, form_name[f],
		 what, *empty_name ? ", " : "", empty_name);
	coll_where = where;
}

/* The call was accepted; a non-blocking one is waited for, a persistent one
 * started, waited for and freed. */
static void complete(enum form f, int rc, MPI_Request *req)
{
	char msg[MPI_MAX_ERROR_STRING] = "";
	int len;

	if (rc != MPI_SUCCESS)
		MPI_Error_string(rc, msg, &len);
	CHECK(rc == MPI_SUCCESS, "refused: %s", msg);
	switch (f) {
	case NONBLOCKING:
	case LARGE_NB:
		OK(MPI_Wait(req, MPI_STATUS_IGNORE));
		break;
	case PERSISTENT:
	case LARGE_PERSIST:
		OK(MPI_Start(req));
		OK(MPI_Wait(req, MPI_STATUS_IGNORE));
		OK(MPI_Request_free(req));
		break;
	default:
		break;
	}
	CHECK(*req == MPI_REQUEST_NULL || f == BLOCKING || f == LARGE, "request left set");
}

/* The large-count copies of int counts and displacements (NULL stays NULL;
 * w: the displacements are bytes already). */
static MPI_Count ccounts[2][MAXP];
static MPI_Aint cdispls[2][MAXP];

static MPI_Count *cc(int k, const int *counts, int n)
{
	int i;

	if (!counts)
		return NULL;
	for (i = 0; i < n; i++)
		ccounts[k][i] = counts[i];
	return ccounts[k];
}

static MPI_Aint *cd(int k, const int *displs, int n)
{
	int i;

	if (!displs)
		return NULL;
	for (i = 0; i < n; i++)
		cdispls[k][i] = displs[i];
	return cdispls[k];
}

/* ------------------------------------------------------------------ */
/* Who takes part, on an intra- or an inter-communicator               */
/* ------------------------------------------------------------------ */

struct ctx {
	MPI_Comm comm;
	int inter;
	int me;	    /* this process's index among the senders: its rank */
	int npeers; /* blocks of a vector: the size, or the remote size */
	int group;  /* inter: 0 for even world ranks, 1 for odd ones */
	int rsize;
};

static int world_of_peer(const struct ctx *c, int i)
{
	return c->inter ? 2 * i + !c->group : i;
}

/* Pattern 0: every rank empty; 1: odd ranks; 2: even ranks. */
static int empty(int i, int pat)
{
	return pat == 0 || (pat == 1 && i % 2) || (pat == 2 && i % 2 == 0);
}

static int cnt(int i, int pat)
{
	return empty(i, pat) ? 0 : i % 3 + 1;
}

static int val(int world, int to, int k)
{
	return 100000 * (world + 1) + 100 * to + k;
}

static const char *pat_name(int pat, int side)
{
	static const char *const names[2][3] = {
		{ "every rank empty", "odd ranks send nothing", "even ranks send nothing" },
		{ "every rank empty", "odd ranks receive nothing",
		  "even ranks receive nothing" },
	};

	return names[side][pat];
}

static int *ints(int n)
{
	int *p = coll_alloc((size_t)(n > 0 ? n : 1) * sizeof(int)), i;

	for (i = 0; i < n; i++)
		p[i] = -1;
	return p;
}

/* A buffer of n ints, or the empty buffer when n is 0; *keep is what to free. */
static int *buf_or_null(int n, int **keep)
{
	*keep = n ? ints(n) : NULL;
	return n ? *keep : empty_buf;
}

/* Packed blocks in reverse order of rank: displs[i] = sum of counts[j > i]. */
static int reverse_displs(const int *counts, int n, int *displs)
{
	int i, total = 0;

	for (i = n - 1; i >= 0; i--) {
		displs[i] = total;
		total += counts[i];
	}
	return total;
}

/*
 * MPI_BOTTOM with int displacements: the buffer of the blocks of a v or w
 * form lives in memory mapped below 2 GiB, and the call gets MPI_BOTTOM
 * with displacements that are absolute (in elements, or in bytes for
 * Alltoallw).
 */
#define LOW_SIZE (1 << 20)

static int *vec_buf(int n, int **keep)
{
	int *p, i;

	if (!low_mem)
		return buf_or_null(n, keep);
	*keep = NULL;
	CHECK(low_used + (size_t)(n + 1) * sizeof(int) <= LOW_SIZE, "low memory exhausted");
	p = (int *)(low_mem + low_used);
	low_used += (size_t)(n + 1) * sizeof(int);
	for (i = 0; i < n; i++)
		p[i] = -1;
	return p;
}

/* The buffer and n displacements (in units of unit bytes) to pass. */
static void *vec_arg(void *buf, const int *displs, int n, int unit, int *out)
{
	int i, base = low_mem ? (int)((uintptr_t)buf / (uintptr_t)unit) : 0;

	for (i = 0; i < n; i++)
		out[i] = displs[i] + base;
	return low_mem ? MPI_BOTTOM : buf;
}

/* ------------------------------------------------------------------ */
/* Gatherv and Scatterv                                                */
/* ------------------------------------------------------------------ */

static int gatherv(enum form f, const void *sb, int sc, void *rb, const int *rc, const int *rd,
		   int root, MPI_Comm comm, int n, MPI_Request *q)
{
	switch (f) {
	case BLOCKING:
		return MPI_Gatherv(sb, sc, MPI_INT, rb, rc, rd, MPI_INT, root, comm);
	case NONBLOCKING:
		return MPI_Igatherv(sb, sc, MPI_INT, rb, rc, rd, MPI_INT, root, comm, q);
	case PERSISTENT:
		return MPI_Gatherv_init(sb, sc, MPI_INT, rb, rc, rd, MPI_INT, root, comm,
					MPI_INFO_NULL, q);
	case LARGE:
		return MPI_Gatherv_c(sb, sc, MPI_INT, rb, cc(0, rc, n), cd(0, rd, n), MPI_INT, root,
				     comm);
	case LARGE_NB:
		return MPI_Igatherv_c(sb, sc, MPI_INT, rb, cc(0, rc, n), cd(0, rd, n), MPI_INT,
				      root, comm, q);
	default:
		return MPI_Gatherv_init_c(sb, sc, MPI_INT, rb, cc(0, rc, n), cd(0, rd, n), MPI_INT,
					  root, comm, MPI_INFO_NULL, q);
	}
}

static int scatterv(enum form f, const void *sb, const int *sc, const int *sd, void *rb, int rc,
		    int root, MPI_Comm comm, int n, MPI_Request *q)
{
	switch (f) {
	case BLOCKING:
		return MPI_Scatterv(sb, sc, sd, MPI_INT, rb, rc, MPI_INT, root, comm);
	case NONBLOCKING:
		return MPI_Iscatterv(sb, sc, sd, MPI_INT, rb, rc, MPI_INT, root, comm, q);
	case PERSISTENT:
		return MPI_Scatterv_init(sb, sc, sd, MPI_INT, rb, rc, MPI_INT, root, comm,
					 MPI_INFO_NULL, q);
	case LARGE:
		return MPI_Scatterv_c(sb, cc(0, sc, n), cd(0, sd, n), MPI_INT, rb, rc, MPI_INT,
				      root, comm);
	case LARGE_NB:
		return MPI_Iscatterv_c(sb, cc(0, sc, n), cd(0, sd, n), MPI_INT, rb, rc, MPI_INT,
				       root, comm, q);
	default:
		return MPI_Scatterv_init_c(sb, cc(0, sc, n), cd(0, sd, n), MPI_INT, rb, rc, MPI_INT,
					   root, comm, MPI_INFO_NULL, q);
	}
}

/*
 * The root (an intra-communicator's rank root, or on an inter-communicator
 * rank 0 of group rootgroup) takes cnt(i) elements from each sender i, or
 * gives them; the ranks that have none pass NULL, the root too when the
 * total is 0.  Ranks that are not the root pass NULL arrays, as they may.
 */
static void rooted_v(const struct ctx *c, int scatter, int root, int pat, enum form f)
{
	int counts[MAXP], displs[MAXP], absd[MAXP], i, k, total, arg, is_root, is_leaf;
	int *mine, *all, *keep_mine, *keep_all;
	void *allarg;
	MPI_Request q = MPI_REQUEST_NULL;

	at(scatter ? "MPI_Scatterv" : "MPI_Gatherv", f, pat_name(pat, 0));
	if (c->inter) {
		is_root = c->group == root && c->me == 0;
		is_leaf = c->group != root;
		arg = is_leaf ? 0 : is_root ? MPI_ROOT : MPI_PROC_NULL;
	} else {
		is_root = c->me == root;
		is_leaf = 1;
		arg = root;
	}
	for (i = 0; i < c->npeers; i++)
		counts[i] = cnt(i, pat);
	total = reverse_displs(counts, c->npeers, displs);
	mine = buf_or_null(is_leaf ? cnt(c->me, pat) : 0, &keep_mine);
	all = vec_buf(is_root ? total : 0, &keep_all);
	allarg = vec_arg(all, displs, c->npeers, sizeof(int), absd);
	if (scatter && is_root)
		for (i = 0; i < c->npeers; i++)
			for (k = 0; k < counts[i]; k++)
				all[displs[i] + k] = val(rank, i, k);
	if (!scatter && is_leaf)
		for (k = 0; k < cnt(c->me, pat); k++)
			mine[k] = val(rank, 0, k);

	if (scatter)
		complete(f, scatterv(f, allarg, is_root ? counts : NULL, is_root ? absd : NULL, mine,
				     is_leaf ? cnt(c->me, pat) : 0, arg, c->comm, c->npeers, &q),
			 &q);
	else
		complete(f, gatherv(f, mine, is_leaf ? cnt(c->me, pat) : 0, allarg,
				    is_root ? counts : NULL, is_root ? absd : NULL, arg, c->comm,
				    c->npeers, &q),
			 &q);

	if (scatter && is_leaf) {
		int from = c->inter ? world_of_peer(c, 0) : root;

		for (k = 0; k < cnt(c->me, pat); k++)
			CHECK(mine[k] == val(from, c->me, k), "element %d is %d, want %d", k,
			      mine[k], val(from, c->me, k));
	}
	if (!scatter && is_root)
		for (i = 0; i < c->npeers; i++)
			for (k = 0; k < counts[i]; k++)
				CHECK(all[displs[i] + k] == val(world_of_peer(c, i), 0, k),
				      "element %d from %d is %d, want %d", k, i, all[displs[i] + k],
				      val(world_of_peer(c, i), 0, k));
	free(keep_mine);
	free(keep_all);
}

/* ------------------------------------------------------------------ */
/* Allgatherv                                                          */
/* ------------------------------------------------------------------ */

enum family { WORLD, NEIGHBOR };

static int allgatherv(enum family fam, enum form f, const void *sb, int sc, void *rb,
		      const int *rc, const int *rd, MPI_Comm comm, int n, MPI_Request *q)
{
	if (fam == NEIGHBOR)
		return f == BLOCKING ? MPI_Neighbor_allgatherv(sb, sc, MPI_INT, rb, rc, rd, MPI_INT,
							       comm) :
				       MPI_Ineighbor_allgatherv(sb, sc, MPI_INT, rb, rc, rd,
								MPI_INT, comm, q);
	switch (f) {
	case BLOCKING:
		return MPI_Allgatherv(sb, sc, MPI_INT, rb, rc, rd, MPI_INT, comm);
	case NONBLOCKING:
		return MPI_Iallgatherv(sb, sc, MPI_INT, rb, rc, rd, MPI_INT, comm, q);
	case PERSISTENT:
		return MPI_Allgatherv_init(sb, sc, MPI_INT, rb, rc, rd, MPI_INT, comm,
					   MPI_INFO_NULL, q);
	case LARGE:
		return MPI_Allgatherv_c(sb, sc, MPI_INT, rb, cc(0, rc, n), cd(0, rd, n), MPI_INT,
					comm);
	case LARGE_NB:
		return MPI_Iallgatherv_c(sb, sc, MPI_INT, rb, cc(0, rc, n), cd(0, rd, n), MPI_INT,
					 comm, q);
	default:
		return MPI_Allgatherv_init_c(sb, sc, MPI_INT, rb, cc(0, rc, n), cd(0, rd, n),
					     MPI_INT, comm, MPI_INFO_NULL, q);
	}
}

static void all_v(const struct ctx *c, enum family fam, int pat, enum form f)
{
	int counts[MAXP], displs[MAXP], absd[MAXP], i, k, total, n = cnt(c->me, pat);
	int *mine, *all, *keep_mine, *keep_all;
	void *allarg;
	MPI_Request q = MPI_REQUEST_NULL;

	at(fam == NEIGHBOR ? "MPI_Neighbor_allgatherv" : "MPI_Allgatherv", f, pat_name(pat, 0));
	for (i = 0; i < c->npeers; i++)
		counts[i] = cnt(i, pat);
	total = reverse_displs(counts, c->npeers, displs);
	mine = buf_or_null(n, &keep_mine);
	all = vec_buf(total, &keep_all);
	allarg = vec_arg(all, displs, c->npeers, sizeof(int), absd);
	for (k = 0; k < n; k++)
		mine[k] = val(rank, 0, k);
	complete(f, allgatherv(fam, f, mine, n, allarg, counts, absd, c->comm, c->npeers, &q),
		 &q);
	for (i = 0; i < c->npeers; i++)
		for (k = 0; k < counts[i]; k++)
			CHECK(all[displs[i] + k] == val(world_of_peer(c, i), 0, k),
			      "element %d from %d is %d, want %d", k, i, all[displs[i] + k],
			      val(world_of_peer(c, i), 0, k));
	free(keep_mine);
	free(keep_all);
}

/* ------------------------------------------------------------------ */
/* Alltoallv and Alltoallw                                             */
/* ------------------------------------------------------------------ */

static MPI_Datatype int_types[MAXP];

static int alltoallv(enum family fam, enum form f, const void *sb, const int *sc, const int *sd,
		     void *rb, const int *rc, const int *rd, MPI_Comm comm, int n, MPI_Request *q)
{
	if (fam == NEIGHBOR)
		return f == BLOCKING ? MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd,
							      MPI_INT, comm) :
				       MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd,
							       MPI_INT, comm, q);
	switch (f) {
	case BLOCKING:
		return MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
	case NONBLOCKING:
		return MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, q);
	case PERSISTENT:
		return MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm,
					  MPI_INFO_NULL, q);
	case LARGE:
		return MPI_Alltoallv_c(sb, cc(0, sc, n), cd(0, sd, n), MPI_INT, rb, cc(1, rc, n),
				       cd(1, rd, n), MPI_INT, comm);
	case LARGE_NB:
		return MPI_Ialltoallv_c(sb, cc(0, sc, n), cd(0, sd, n), MPI_INT, rb, cc(1, rc, n),
					cd(1, rd, n), MPI_INT, comm, q);
	default:
		return MPI_Alltoallv_init_c(sb, cc(0, sc, n), cd(0, sd, n), MPI_INT, rb,
					    cc(1, rc, n), cd(1, rd, n), MPI_INT, comm,
					    MPI_INFO_NULL, q);
	}
}

/* The displacements in bytes. */
static int alltoallw(enum family fam, enum form f, const void *sb, const int *sc, const int *sd,
		     void *rb, const int *rc, const int *rd, MPI_Comm comm, int n, MPI_Request *q)
{
	const MPI_Datatype *t = int_types;

	if (fam == NEIGHBOR)
		return f == BLOCKING ?
			       MPI_Neighbor_alltoallw(sb, sc, cd(0, sd, n), t, rb, rc,
						      cd(1, rd, n), t, comm) :
			       MPI_Ineighbor_alltoallw(sb, sc, cd(0, sd, n), t, rb, rc,
						       cd(1, rd, n), t, comm, q);
	switch (f) {
	case BLOCKING:
		return MPI_Alltoallw(sb, sc, sd, t, rb, rc, rd, t, comm);
	case NONBLOCKING:
		return MPI_Ialltoallw(sb, sc, sd, t, rb, rc, rd, t, comm, q);
	case PERSISTENT:
		return MPI_Alltoallw_init(sb, sc, sd, t, rb, rc, rd, t, comm, MPI_INFO_NULL, q);
	case LARGE:
		return MPI_Alltoallw_c(sb, cc(0, sc, n), cd(0, sd, n), t, rb, cc(1, rc, n),
				       cd(1, rd, n), t, comm);
	case LARGE_NB:
		return MPI_Ialltoallw_c(sb, cc(0, sc, n), cd(0, sd, n), t, rb, cc(1, rc, n),
					cd(1, rd, n), t, comm, q);
	default:
		return MPI_Alltoallw_init_c(sb, cc(0, sc, n), cd(0, sd, n), t, rb, cc(1, rc, n),
					    cd(1, rd, n), t, comm, MPI_INFO_NULL, q);
	}
}

/* Elements from sender s to receiver d: none when the side's end is empty. */
static int m(int s, int d, int pat, int side)
{
	return empty(side ? d : s, pat) ? 0 : (s + d) % 3 + 1;
}

static void all_to_all(const struct ctx *c, enum family fam, int w, int pat, int side,
		       enum form f)
{
	int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], i, k, stotal, rtotal;
	int asd[MAXP], ard[MAXP], unit = w ? 1 : sizeof(int);
	int *sb, *rb, *keep_s, *keep_r;
	void *sarg, *rarg;
	MPI_Request q = MPI_REQUEST_NULL;
	static const char *const names[2][2] = {
		{ "MPI_Alltoallv", "MPI_Alltoallw" },
		{ "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw" },
	};

	at(names[fam][w], f, pat_name(pat, side));
	for (i = 0; i < c->npeers; i++) {
		sc[i] = m(c->me, i, pat, side);
		rc[i] = m(i, c->me, pat, side);
	}
	stotal = reverse_displs(sc, c->npeers, sd);
	rtotal = reverse_displs(rc, c->npeers, rd);
	sb = vec_buf(stotal, &keep_s);
	rb = vec_buf(rtotal, &keep_r);
	for (i = 0; i < c->npeers; i++)
		for (k = 0; k < sc[i]; k++)
			sb[sd[i] + k] = val(rank, i, k);
	/* Alltoallw counts its displacements in bytes. */
	for (i = 0; w && i < c->npeers; i++) {
		asd[i] = sd[i] * (int)sizeof(int);
		ard[i] = rd[i] * (int)sizeof(int);
	}
	sarg = vec_arg(sb, w ? asd : sd, c->npeers, unit, asd);
	rarg = vec_arg(rb, w ? ard : rd, c->npeers, unit, ard);
	complete(f,
		 (w ? alltoallw : alltoallv)(fam, f, sarg, sc, asd, rarg, rc, ard, c->comm,
					     c->npeers, &q),
		 &q);
	for (i = 0; i < c->npeers; i++)
		for (k = 0; k < rc[i]; k++)
			CHECK(rb[rd[i] + k] == val(world_of_peer(c, i), c->me, k),
			      "element %d from %d is %d, want %d", k, i, rb[rd[i] + k],
			      val(world_of_peer(c, i), c->me, k));
	free(keep_s);
	free(keep_r);
}

/* ------------------------------------------------------------------ */
/* Reduce_scatter with some ranks receiving nothing                    */
/* ------------------------------------------------------------------ */

static int reduce_scatter(enum form f, const void *sb, void *rb, const int *rc, MPI_Comm comm,
			  int n, MPI_Request *q)
{
	switch (f) {
	case BLOCKING:
		return MPI_Reduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, comm);
	case NONBLOCKING:
		return MPI_Ireduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, comm, q);
	case PERSISTENT:
		return MPI_Reduce_scatter_init(sb, rb, rc, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
					       q);
	case LARGE:
		return MPI_Reduce_scatter_c(sb, rb, cc(0, rc, n), MPI_INT, MPI_SUM, comm);
	case LARGE_NB:
		return MPI_Ireduce_scatter_c(sb, rb, cc(0, rc, n), MPI_INT, MPI_SUM, comm, q);
	default:
		return MPI_Reduce_scatter_init_c(sb, rb, cc(0, rc, n), MPI_INT, MPI_SUM, comm,
						 MPI_INFO_NULL, q);
	}
}

/*
 * Intra-communicator: rank i gets a block of cnt(i) elements, the blocks
 * following each other in rank order.  Inter-communicator: each group's
 * input is reduced and scattered over the other group, whose counts must
 * add up to the same total: rank 0 of each group gets all of it, the others
 * nothing.  Input element g of rank q is q + g.
 */
static void red_scatter(const struct ctx *c, int pat, enum form f)
{
	int counts[MAXP], i, k, lsize, total = 0, first = 0, mine;
	int *sb, *rb, *keep_s, *keep_r;
	MPI_Request q = MPI_REQUEST_NULL;

	at("MPI_Reduce_scatter", f, pat_name(pat, 1));
	OK(MPI_Comm_size(c->comm, &lsize));
	for (i = 0; i < lsize; i++) {
		counts[i] = c->inter ? (i == 0 && pat ? 3 : 0) : cnt(i, pat);
		if (i < c->me)
			first += counts[i];
		total += counts[i];
	}
	mine = counts[c->me];
	sb = buf_or_null(total, &keep_s);
	rb = buf_or_null(mine, &keep_r);
	for (k = 0; k < total; k++)
		sb[k] = rank + k;
	complete(f, reduce_scatter(f, sb, rb, counts, c->comm, lsize, &q), &q);
	for (k = 0; k < mine; k++) {
		int want = 0, j;

		for (j = 0; j < c->npeers; j++)
			want += world_of_peer(c, j) + first + k;
		CHECK(rb[k] == want, "element %d is %d, want %d", k, rb[k], want);
	}
	free(keep_s);
	free(keep_r);
}

/* ------------------------------------------------------------------ */
/* The collectives without vectors: count 0 and NULL everywhere         */
/* ------------------------------------------------------------------ */

enum simple {
	BCAST,
	GATHER,
	SCATTER,
	ALLGATHER,
	ALLTOALL,
	REDUCE,
	ALLREDUCE,
	RSB,
	SCAN,
	EXSCAN,
	NSIMPLE
};

static const char *const simple_name[NSIMPLE] = {
	"MPI_Bcast",	 "MPI_Gather",	  "MPI_Scatter",		"MPI_Allgather",
	"MPI_Alltoall",	 "MPI_Reduce",	  "MPI_Allreduce",		"MPI_Reduce_scatter_block",
	"MPI_Scan",	 "MPI_Exscan",
};

#define I MPI_INT
#define S MPI_SUM
#define N MPI_INFO_NULL

static int simple(enum simple s, enum form f, int root, MPI_Comm c, MPI_Request *q)
{
	void *e = empty_buf;

	switch (s * NFORMS + f) {
	case BCAST *NFORMS + BLOCKING: return MPI_Bcast(e, 0, I, root, c);
	case BCAST *NFORMS + NONBLOCKING: return MPI_Ibcast(e, 0, I, root, c, q);
	case BCAST *NFORMS + PERSISTENT: return MPI_Bcast_init(e, 0, I, root, c, N, q);
	case BCAST *NFORMS + LARGE: return MPI_Bcast_c(e, 0, I, root, c);
	case BCAST *NFORMS + LARGE_NB: return MPI_Ibcast_c(e, 0, I, root, c, q);
	case BCAST *NFORMS + LARGE_PERSIST: return MPI_Bcast_init_c(e, 0, I, root, c, N, q);
	case GATHER *NFORMS + BLOCKING: return MPI_Gather(e, 0, I, e, 0, I, root, c);
	case GATHER *NFORMS + NONBLOCKING: return MPI_Igather(e, 0, I, e, 0, I, root, c, q);
	case GATHER *NFORMS + PERSISTENT:
		return MPI_Gather_init(e, 0, I, e, 0, I, root, c, N, q);
	case GATHER *NFORMS + LARGE: return MPI_Gather_c(e, 0, I, e, 0, I, root, c);
	case GATHER *NFORMS + LARGE_NB:
		return MPI_Igather_c(e, 0, I, e, 0, I, root, c, q);
	case GATHER *NFORMS + LARGE_PERSIST:
		return MPI_Gather_init_c(e, 0, I, e, 0, I, root, c, N, q);
	case SCATTER *NFORMS + BLOCKING: return MPI_Scatter(e, 0, I, e, 0, I, root, c);
	case SCATTER *NFORMS + NONBLOCKING:
		return MPI_Iscatter(e, 0, I, e, 0, I, root, c, q);
	case SCATTER *NFORMS + PERSISTENT:
		return MPI_Scatter_init(e, 0, I, e, 0, I, root, c, N, q);
	case SCATTER *NFORMS + LARGE: return MPI_Scatter_c(e, 0, I, e, 0, I, root, c);
	case SCATTER *NFORMS + LARGE_NB:
		return MPI_Iscatter_c(e, 0, I, e, 0, I, root, c, q);
	case SCATTER *NFORMS + LARGE_PERSIST:
		return MPI_Scatter_init_c(e, 0, I, e, 0, I, root, c, N, q);
	case ALLGATHER *NFORMS + BLOCKING: return MPI_Allgather(e, 0, I, e, 0, I, c);
	case ALLGATHER *NFORMS + NONBLOCKING:
		return MPI_Iallgather(e, 0, I, e, 0, I, c, q);
	case ALLGATHER *NFORMS + PERSISTENT:
		return MPI_Allgather_init(e, 0, I, e, 0, I, c, N, q);
	case ALLGATHER *NFORMS + LARGE: return MPI_Allgather_c(e, 0, I, e, 0, I, c);
	case ALLGATHER *NFORMS + LARGE_NB:
		return MPI_Iallgather_c(e, 0, I, e, 0, I, c, q);
	case ALLGATHER *NFORMS + LARGE_PERSIST:
		return MPI_Allgather_init_c(e, 0, I, e, 0, I, c, N, q);
	case ALLTOALL *NFORMS + BLOCKING: return MPI_Alltoall(e, 0, I, e, 0, I, c);
	case ALLTOALL *NFORMS + NONBLOCKING: return MPI_Ialltoall(e, 0, I, e, 0, I, c, q);
	case ALLTOALL *NFORMS + PERSISTENT:
		return MPI_Alltoall_init(e, 0, I, e, 0, I, c, N, q);
	case ALLTOALL *NFORMS + LARGE: return MPI_Alltoall_c(e, 0, I, e, 0, I, c);
	case ALLTOALL *NFORMS + LARGE_NB: return MPI_Ialltoall_c(e, 0, I, e, 0, I, c, q);
	case ALLTOALL *NFORMS + LARGE_PERSIST:
		return MPI_Alltoall_init_c(e, 0, I, e, 0, I, c, N, q);
	case REDUCE *NFORMS + BLOCKING: return MPI_Reduce(e, e, 0, I, S, root, c);
	case REDUCE *NFORMS + NONBLOCKING: return MPI_Ireduce(e, e, 0, I, S, root, c, q);
	case REDUCE *NFORMS + PERSISTENT:
		return MPI_Reduce_init(e, e, 0, I, S, root, c, N, q);
	case REDUCE *NFORMS + LARGE: return MPI_Reduce_c(e, e, 0, I, S, root, c);
	case REDUCE *NFORMS + LARGE_NB: return MPI_Ireduce_c(e, e, 0, I, S, root, c, q);
	case REDUCE *NFORMS + LARGE_PERSIST:
		return MPI_Reduce_init_c(e, e, 0, I, S, root, c, N, q);
	case ALLREDUCE *NFORMS + BLOCKING: return MPI_Allreduce(e, e, 0, I, S, c);
	case ALLREDUCE *NFORMS + NONBLOCKING: return MPI_Iallreduce(e, e, 0, I, S, c, q);
	case ALLREDUCE *NFORMS + PERSISTENT:
		return MPI_Allreduce_init(e, e, 0, I, S, c, N, q);
	case ALLREDUCE *NFORMS + LARGE: return MPI_Allreduce_c(e, e, 0, I, S, c);
	case ALLREDUCE *NFORMS + LARGE_NB: return MPI_Iallreduce_c(e, e, 0, I, S, c, q);
	case ALLREDUCE *NFORMS + LARGE_PERSIST:
		return MPI_Allreduce_init_c(e, e, 0, I, S, c, N, q);
	case RSB *NFORMS + BLOCKING: return MPI_Reduce_scatter_block(e, e, 0, I, S, c);
	case RSB *NFORMS + NONBLOCKING:
		return MPI_Ireduce_scatter_block(e, e, 0, I, S, c, q);
	case RSB *NFORMS + PERSISTENT:
		return MPI_Reduce_scatter_block_init(e, e, 0, I, S, c, N, q);
	case RSB *NFORMS + LARGE: return MPI_Reduce_scatter_block_c(e, e, 0, I, S, c);
	case RSB *NFORMS + LARGE_NB:
		return MPI_Ireduce_scatter_block_c(e, e, 0, I, S, c, q);
	case RSB *NFORMS + LARGE_PERSIST:
		return MPI_Reduce_scatter_block_init_c(e, e, 0, I, S, c, N, q);
	case SCAN *NFORMS + BLOCKING: return MPI_Scan(e, e, 0, I, S, c);
	case SCAN *NFORMS + NONBLOCKING: return MPI_Iscan(e, e, 0, I, S, c, q);
	case SCAN *NFORMS + PERSISTENT: return MPI_Scan_init(e, e, 0, I, S, c, N, q);
	case SCAN *NFORMS + LARGE: return MPI_Scan_c(e, e, 0, I, S, c);
	case SCAN *NFORMS + LARGE_NB: return MPI_Iscan_c(e, e, 0, I, S, c, q);
	case SCAN *NFORMS + LARGE_PERSIST: return MPI_Scan_init_c(e, e, 0, I, S, c, N, q);
	case EXSCAN *NFORMS + BLOCKING: return MPI_Exscan(e, e, 0, I, S, c);
	case EXSCAN *NFORMS + NONBLOCKING: return MPI_Iexscan(e, e, 0, I, S, c, q);
	case EXSCAN *NFORMS + PERSISTENT: return MPI_Exscan_init(e, e, 0, I, S, c, N, q);
	case EXSCAN *NFORMS + LARGE: return MPI_Exscan_c(e, e, 0, I, S, c);
	case EXSCAN *NFORMS + LARGE_NB: return MPI_Iexscan_c(e, e, 0, I, S, c, q);
	default: return MPI_Exscan_init_c(e, e, 0, I, S, c, N, q);
	}
}

#undef I
#undef S
#undef N

/* An inter-communicator's root argument: rank 0 of group 0 is the root. */
static int inter_root(const struct ctx *c)
{
	return c->group ? 0 : c->me == 0 ? MPI_ROOT : MPI_PROC_NULL;
}

static void run_forms(const struct ctx *c, int vectors_only)
{
	int f, pat, root, side, s, w;
	MPI_Request q;

	comm_name = c->inter ? "an inter-communicator" : "MPI_COMM_WORLD";
	for (f = 0; f < NFORMS; f++) {
		for (s = 0; s < NSIMPLE && !vectors_only; s++) {
			if (c->inter && (s == SCAN || s == EXSCAN))
				continue;
			q = MPI_REQUEST_NULL;
			at(simple_name[s], f, "count 0");
			complete(f, simple(s, f, c->inter ? inter_root(c) : size - 1, c->comm, &q),
				 &q);
		}
		for (pat = 0; pat < 3; pat++) {
			for (root = 0; root < 2; root++) {
				int r = c->inter ? root : root ? size - 1 : 0;

				rooted_v(c, 0, r, pat, f);
				rooted_v(c, 1, r, pat, f);
			}
			all_v(c, WORLD, pat, f);
			for (w = 0; w < 2; w++)
				for (side = 0; side < 2; side++)
					all_to_all(c, WORLD, w, pat, side, f);
			if (!vectors_only)
				red_scatter(c, pat, f);
		}
	}
}

static void run_all(const struct ctx *c)
{
	empty_as(0);
	run_forms(c, 0);
	empty_as(1);
	run_forms(c, 0);
}

static void test_zero(void)
{
	struct ctx c = { .comm = MPI_COMM_WORLD, .me = rank, .npeers = size, .rsize = size };

	run_all(&c);
}

/* Even world ranks form group 0, odd ones group 1. */
static void make_inter(struct ctx *c, MPI_Comm *local)
{
	if (size < 2) {
		fprintf(stderr, "buffers: an inter-communicator needs 2 processes or more\n");
		exit(2);
	}
	memset(c, 0, sizeof(*c));
	c->inter = 1;
	c->group = rank % 2;
	OK(MPI_Comm_split(MPI_COMM_WORLD, c->group, rank, local));
	OK(MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, !c->group, 7, &c->comm));
	OK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(c->comm, &c->me));
	OK(MPI_Comm_remote_size(c->comm, &c->rsize));
	c->npeers = c->rsize;
}

static void free_inter(struct ctx *c, MPI_Comm *local)
{
	OK(MPI_Comm_free(&c->comm));
	OK(MPI_Comm_free(local));
}

static void test_inter(void)
{
	struct ctx c;
	MPI_Comm local;

	make_inter(&c, &local);
	run_all(&c);
	free_inter(&c, &local);
}

/* Every rank an in- and out-neighbour of every rank, itself included, in
 * rank order: block i is rank i's. */
static MPI_Comm complete_graph(void)
{
	int nb[MAXP], i;
	MPI_Comm g;

	for (i = 0; i < size; i++)
		nb[i] = i;
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, size, nb, MPI_UNWEIGHTED, size, nb,
					  MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
	OK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
	return g;
}

static void neighbor_forms(MPI_Comm comm, int vectors_only)
{
	struct ctx c = { .comm = comm, .me = rank, .npeers = size, .rsize = size };
	void *e = empty_buf;
	enum form f;
	int pat, side, w;
	MPI_Request q;

	comm_name = "a complete graph";
	for (f = BLOCKING; f <= NONBLOCKING; f++) {
		q = MPI_REQUEST_NULL;
		at("MPI_Neighbor_allgather", f, "count 0");
		if (vectors_only)
			goto vectors;
		complete(f,
			 f ? MPI_Ineighbor_allgather(e, 0, MPI_INT, e, 0, MPI_INT, comm, &q) :
			     MPI_Neighbor_allgather(e, 0, MPI_INT, e, 0, MPI_INT, comm),
			 &q);
		at("MPI_Neighbor_alltoall", f, "count 0");
		complete(f,
			 f ? MPI_Ineighbor_alltoall(e, 0, MPI_INT, e, 0, MPI_INT, comm, &q) :
			     MPI_Neighbor_alltoall(e, 0, MPI_INT, e, 0, MPI_INT, comm),
			 &q);
vectors:
		for (pat = 0; pat < 3; pat++) {
			all_v(&c, NEIGHBOR, pat, f);
			for (w = 0; w < 2; w++)
				for (side = 0; side < 2; side++)
					all_to_all(&c, NEIGHBOR, w, pat, side, f);
		}
	}
}

static void test_neighbor(void)
{
	MPI_Comm g = complete_graph();

	empty_as(0);
	neighbor_forms(g, 0);
	empty_as(1);
	neighbor_forms(g, 0);
	OK(MPI_Comm_free(&g));
}

/* ------------------------------------------------------------------ */
/* Point-to-point with count 0 and NULL                                 */
/* ------------------------------------------------------------------ */

static void empty_status(const MPI_Status *st, int source, int tag)
{
	int n = -1;

	OK(MPI_Get_count(st, MPI_INT, &n));
	CHECK(n == 0, "count %d", n);
	CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag, "source %d tag %d, want %d %d",
	      st->MPI_SOURCE, st->MPI_TAG, source, tag);
}

static void test_p2p(void)
{
	int to = (rank + 1) % size, from = (rank + size - 1) % size, flag;
	MPI_Request q[2];
	MPI_Status st;
	MPI_Message msg;
	void *bbuf;
	int bsize;

	coll_where = "MPI_Send, MPI_Recv";
	OK(MPI_Sendrecv(NULL, 0, MPI_INT, to, 1, NULL, 0, MPI_INT, from, 1, MPI_COMM_WORLD, &st));
	empty_status(&st, from, 1);
	OK(MPI_Sendrecv_replace(NULL, 0, MPI_INT, to, 2, from, 2, MPI_COMM_WORLD, &st));
	empty_status(&st, from, 2);

	coll_where = "MPI_Isend, MPI_Irecv, MPI_Issend";
	OK(MPI_Irecv(NULL, 0, MPI_INT, from, 3, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Isend(NULL, 0, MPI_INT, to, 3, MPI_COMM_WORLD, &q[1]));
	OK(MPI_Wait(&q[0], &st));
	empty_status(&st, from, 3);
	OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
	OK(MPI_Irecv(NULL, 0, MPI_INT, from, 4, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Issend(NULL, 0, MPI_INT, to, 4, MPI_COMM_WORLD, &q[1]));
	OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));

	coll_where = "MPI_Rsend";
	OK(MPI_Irecv(NULL, 0, MPI_INT, from, 5, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Rsend(NULL, 0, MPI_INT, to, 5, MPI_COMM_WORLD));
	OK(MPI_Wait(&q[0], &st));
	empty_status(&st, from, 5);

	coll_where = "MPI_Bsend";
	OK(MPI_Pack_size(0, MPI_INT, MPI_COMM_WORLD, &bsize));
	bsize += MPI_BSEND_OVERHEAD;
	bbuf = coll_alloc((size_t)bsize);
	OK(MPI_Buffer_attach(bbuf, bsize));
	OK(MPI_Bsend(NULL, 0, MPI_INT, to, 6, MPI_COMM_WORLD));
	OK(MPI_Recv(NULL, 0, MPI_INT, from, 6, MPI_COMM_WORLD, &st));
	empty_status(&st, from, 6);
	OK(MPI_Buffer_detach(&bbuf, &bsize));
	free(bbuf);

	coll_where = "MPI_Ssend, MPI_Probe, MPI_Mprobe, MPI_Mrecv";
	OK(MPI_Isend(NULL, 0, MPI_INT, to, 7, MPI_COMM_WORLD, &q[1]));
	OK(MPI_Probe(from, 7, MPI_COMM_WORLD, &st));
	empty_status(&st, from, 7);
	OK(MPI_Mprobe(from, 7, MPI_COMM_WORLD, &msg, &st));
	OK(MPI_Mrecv(NULL, 0, MPI_INT, &msg, &st));
	empty_status(&st, from, 7);
	OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
	OK(MPI_Isend(NULL, 0, MPI_INT, to, 8, MPI_COMM_WORLD, &q[1]));
	do
		OK(MPI_Improbe(from, 8, MPI_COMM_WORLD, &flag, &msg, &st));
	while (!flag);
	OK(MPI_Imrecv(NULL, 0, MPI_INT, &msg, &q[0]));
	OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
	OK(MPI_Irecv(NULL, 0, MPI_INT, from, 9, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Ssend(NULL, 0, MPI_INT, to, 9, MPI_COMM_WORLD));
	OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));

	coll_where = "MPI_Send_init, MPI_Recv_init, MPI_Isendrecv";
	OK(MPI_Recv_init(NULL, 0, MPI_INT, from, 10, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Send_init(NULL, 0, MPI_INT, to, 10, MPI_COMM_WORLD, &q[1]));
	OK(MPI_Startall(2, q));
	OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
	OK(MPI_Request_free(&q[0]));
	OK(MPI_Request_free(&q[1]));
	OK(MPI_Isendrecv(NULL, 0, MPI_INT, to, 11, NULL, 0, MPI_INT, from, 11, MPI_COMM_WORLD,
			 &q[0]));
	OK(MPI_Wait(&q[0], &st));
	empty_status(&st, from, 11);

	coll_where = "MPI_Send_c, MPI_Recv_c";
	OK(MPI_Irecv_c(NULL, 0, MPI_INT, from, 12, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Send_c(NULL, 0, MPI_INT, to, 12, MPI_COMM_WORLD));
	OK(MPI_Wait(&q[0], &st));
	empty_status(&st, from, 12);
}

/* ------------------------------------------------------------------ */
/* MPI_BOTTOM                                                          */
/* ------------------------------------------------------------------ */

static MPI_Aint addr(const void *p)
{
	MPI_Aint a;

	OK(MPI_Get_address(p, &a));
	return a;
}

/* One int at an absolute address, with an extent of one int: element j of
 * a buffer of this type at MPI_BOTTOM is p[j]. */
static MPI_Datatype abs_int(const int *p)
{
	MPI_Aint d = addr(p);
	int one = 1;
	MPI_Datatype t, r;

	OK(MPI_Type_create_hindexed(1, &one, &d, MPI_INT, &t));
	OK(MPI_Type_create_resized(t, d, sizeof(int), &r));
	OK(MPI_Type_free(&t));
	OK(MPI_Type_commit(&r));
	return r;
}

/* n ints at p, as one element of a struct at absolute addresses (two
 * pieces, so that it is not contiguous from the type's point of view). */
static MPI_Datatype abs_block(const int *p, int n)
{
	int lens[2] = { n / 2, n - n / 2 };
	MPI_Aint d[2] = { addr(p), addr(p + n / 2) };
	MPI_Datatype types[2] = { MPI_INT, MPI_INT }, t;

	OK(MPI_Type_create_struct(2, lens, d, types, &t));
	OK(MPI_Type_commit(&t));
	return t;
}

static void expect(const int *got, int n, int (*want)(int), const char *what)
{
	int k;

	for (k = 0; k < n; k++)
		CHECK(got[k] == want(k), "%s: element %d is %d, want %d", what, k, got[k],
		      want(k));
}

static int bottom_peer; /* the world rank whose data an expect checks */
static int bottom_to;

static int want_peer(int k)
{
	return val(bottom_peer, bottom_to, k);
}

/* Byte displacements that are absolute addresses: the w forms that take
 * MPI_Aint (Neighbor_alltoallw, Alltoallw_c). */
static void bottom_w(MPI_Comm comm, enum family fam, enum form f)
{
	int sb[MAXP * 2], rb[MAXP * 2], sc[MAXP], rc[MAXP], i, k;
	MPI_Aint sd[MAXP], rd[MAXP];
	MPI_Count csc[MAXP], crc[MAXP];
	MPI_Request q = MPI_REQUEST_NULL;
	int rc_;

	comm_name = fam == NEIGHBOR ? "a complete graph" : "MPI_COMM_WORLD";
	at(fam == NEIGHBOR ? "MPI_Neighbor_alltoallw" : "MPI_Alltoallw_c", f,
	   "MPI_BOTTOM, absolute displacements");
	for (i = 0; i < size; i++) {
		sc[i] = rc[i] = 2;
		csc[i] = crc[i] = 2;
		/* Block i in reverse order, so that no displacement is the first. */
		sd[i] = addr(&sb[2 * (size - 1 - i)]);
		rd[i] = addr(&rb[2 * (size - 1 - i)]);
		for (k = 0; k < 2; k++) {
			sb[2 * (size - 1 - i) + k] = val(rank, i, k);
			rb[2 * i + k] = -1;
		}
	}
	if (fam == NEIGHBOR)
		rc_ = f == BLOCKING ? MPI_Neighbor_alltoallw(MPI_BOTTOM, sc, sd, int_types,
							    MPI_BOTTOM, rc, rd, int_types, comm) :
				      MPI_Ineighbor_alltoallw(MPI_BOTTOM, sc, sd, int_types,
							     MPI_BOTTOM, rc, rd, int_types, comm,
							     &q);
	else if (f == LARGE)
		rc_ = MPI_Alltoallw_c(MPI_BOTTOM, csc, sd, int_types, MPI_BOTTOM, crc, rd,
				      int_types, comm);
	else if (f == LARGE_NB)
		rc_ = MPI_Ialltoallw_c(MPI_BOTTOM, csc, sd, int_types, MPI_BOTTOM, crc, rd,
				       int_types, comm, &q);
	else
		rc_ = MPI_Alltoallw_init_c(MPI_BOTTOM, csc, sd, int_types, MPI_BOTTOM, crc, rd,
					   int_types, comm, MPI_INFO_NULL, &q);
	complete(f, rc_, &q);
	bottom_to = rank;
	for (i = 0; i < size; i++) {
		bottom_peer = i;
		expect(&rb[2 * (size - 1 - i)], 2, want_peer, "block");
	}
}

/* Datatypes at absolute addresses, the buffer MPI_BOTTOM: each call with a
 * buffer argument, sending and receiving side; nb: Ibcast, Iallgatherv and
 * Ialltoallw for their blocking forms. */
static void bottom_types(int nb)
{
	int to = (rank + 1) % size, from = (rank + size - 1) % size, i, k;
	int sb[MAXP * 4], rb[MAXP * 4], counts[MAXP], displs[MAXP], zeros[MAXP];
	MPI_Datatype ts, tr, sa, ra, types_s[MAXP], types_r[MAXP];
	MPI_Request q[2];

	for (k = 0; k < 4; k++)
		sb[k] = val(rank, 0, k);
	for (k = 0; k < MAXP * 4; k++)
		rb[k] = -1;
	ts = abs_block(sb, 4);
	tr = abs_block(rb, 4);
	bottom_to = 0;

	coll_where = "MPI_Send, MPI_Recv from MPI_BOTTOM";
	OK(MPI_Sendrecv(MPI_BOTTOM, 1, ts, to, 1, MPI_BOTTOM, 1, tr, from, 1, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE));
	bottom_peer = from;
	expect(rb, 4, want_peer, "MPI_Sendrecv");
	for (k = 0; k < 4; k++)
		rb[k] = -1;
	OK(MPI_Irecv(MPI_BOTTOM, 1, tr, from, 2, MPI_COMM_WORLD, &q[0]));
	OK(MPI_Isend(MPI_BOTTOM, 1, ts, to, 2, MPI_COMM_WORLD, &q[1]));
	OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
	expect(rb, 4, want_peer, "MPI_Isend");

	coll_where = "MPI_Bcast of MPI_BOTTOM";
	for (k = 0; k < 4; k++)
		rb[k] = rank == 0 ? val(0, 0, k) : -1;
	if (nb) {
		OK(MPI_Ibcast(MPI_BOTTOM, 1, tr, 0, MPI_COMM_WORLD, &q[0]));
		OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
	} else {
		OK(MPI_Bcast(MPI_BOTTOM, 1, tr, 0, MPI_COMM_WORLD));
	}
	bottom_peer = 0;
	expect(rb, 4, want_peer, "MPI_Bcast");

	coll_where = "MPI_Allreduce in place at MPI_BOTTOM";
	for (k = 0; k < 4; k++)
		rb[k] = val(rank, 0, k);
	OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, tr, MPI_SUM, MPI_COMM_WORLD));
	for (k = 0; k < 4; k++) {
		int want = 0;

		for (i = 0; i < size; i++)
			want += val(i, 0, k);
		CHECK(rb[k] == want, "element %d is %d, want %d", k, rb[k], want);
	}
	OK(MPI_Type_free(&tr));
	OK(MPI_Type_free(&ts));

	/* Gather and Allgather: each rank's 4 ints from MPI_BOTTOM into blocks
	 * of 4 at absolute addresses. */
	sa = abs_block(sb, 4);
	ra = abs_int(rb);
	coll_where = "MPI_Gather, MPI_Allgather from and to MPI_BOTTOM";
	OK(MPI_Allgather(MPI_BOTTOM, 1, sa, MPI_BOTTOM, 4, ra, MPI_COMM_WORLD));
	for (i = 0; i < size; i++) {
		bottom_peer = i;
		expect(&rb[4 * i], 4, want_peer, "MPI_Allgather");
	}
	for (k = 0; k < MAXP * 4; k++)
		rb[k] = -1;
	OK(MPI_Gather(MPI_BOTTOM, 1, sa, MPI_BOTTOM, 4, ra, size - 1, MPI_COMM_WORLD));
	if (rank == size - 1)
		for (i = 0; i < size; i++) {
			bottom_peer = i;
			expect(&rb[4 * i], 4, want_peer, "MPI_Gather");
		}

	/* The v forms: element displacements from the absolute int. */
	coll_where = "MPI_Allgatherv, MPI_Alltoallv of MPI_BOTTOM";
	for (k = 0; k < MAXP * 4; k++)
		rb[k] = -1;
	for (i = 0; i < size; i++) {
		counts[i] = 4;
		displs[i] = 4 * (size - 1 - i);
		zeros[i] = 0;
	}
	if (nb) {
		OK(MPI_Iallgatherv(MPI_BOTTOM, 1, sa, MPI_BOTTOM, counts, displs, ra,
				   MPI_COMM_WORLD, &q[0]));
		OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
	} else {
		OK(MPI_Allgatherv(MPI_BOTTOM, 1, sa, MPI_BOTTOM, counts, displs, ra,
				  MPI_COMM_WORLD));
	}
	for (i = 0; i < size; i++) {
		bottom_peer = i;
		expect(&rb[4 * (size - 1 - i)], 4, want_peer, "MPI_Allgatherv");
	}
	{
		MPI_Datatype si = abs_int(sb);
		int scounts[MAXP], sdispls[MAXP];

		for (k = 0; k < MAXP * 4; k++)
			rb[k] = -1;
		/* Every rank sends its 4 ints to every rank. */
		for (i = 0; i < size; i++) {
			scounts[i] = 4;
			sdispls[i] = 0;
		}
		OK(MPI_Alltoallv(MPI_BOTTOM, scounts, sdispls, si, MPI_BOTTOM, counts, displs, ra,
				 MPI_COMM_WORLD));
		for (i = 0; i < size; i++) {
			bottom_peer = i;
			expect(&rb[4 * (size - 1 - i)], 4, want_peer, "MPI_Alltoallv");
		}

		/* Alltoallw: int displacements 0, each block's type absolute. */
		coll_where = "MPI_Alltoallw of MPI_BOTTOM";
		for (k = 0; k < MAXP * 4; k++)
			rb[k] = -1;
		for (i = 0; i < size; i++) {
			types_s[i] = sa;
			types_r[i] = abs_block(&rb[4 * (size - 1 - i)], 4);
			scounts[i] = 1;
		}
		if (nb) {
			OK(MPI_Ialltoallw(MPI_BOTTOM, scounts, zeros, types_s, MPI_BOTTOM, scounts,
					  zeros, types_r, MPI_COMM_WORLD, &q[0]));
			OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
		} else {
			OK(MPI_Alltoallw(MPI_BOTTOM, scounts, zeros, types_s, MPI_BOTTOM, scounts,
					 zeros, types_r, MPI_COMM_WORLD));
		}
		for (i = 0; i < size; i++) {
			bottom_peer = i;
			expect(&rb[4 * (size - 1 - i)], 4, want_peer, "MPI_Alltoallw");
			OK(MPI_Type_free(&types_r[i]));
		}
		OK(MPI_Type_free(&si));
	}
	OK(MPI_Type_free(&sa));
	OK(MPI_Type_free(&ra));
}

static void test_bottom(void)
{
	MPI_Comm g = complete_graph();
	enum form f;

	bottom_types(0);
	bottom_types(1);
	for (f = BLOCKING; f <= NONBLOCKING; f++)
		bottom_w(g, NEIGHBOR, f);
	for (f = LARGE; f <= LARGE_PERSIST; f++)
		bottom_w(MPI_COMM_WORLD, WORLD, f);
	OK(MPI_Comm_free(&g));
}

/*
 * The v and w forms with int displacements, at MPI_BOTTOM: their blocks
 * are at absolute addresses below 2 GiB, where this test maps memory (a
 * system that maps nothing so low skips it).
 */
static void test_bottomlow(void)
{
	static const uintptr_t tries[] = { 0x10000000, 0x20000000, 0x40000000 };
	struct ctx c = { .comm = MPI_COMM_WORLD, .me = rank, .npeers = size, .rsize = size };
	MPI_Comm local, g;
	size_t i;
	void *p;

	for (i = 0; i < sizeof(tries) / sizeof(tries[0]) && !low_mem; i++) {
		p = mmap((void *)tries[i], LOW_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)tries[i])
			low_mem = p;
		else if (p != MAP_FAILED)
			munmap(p, LOW_SIZE);
	}
	if (!low_mem) {
		fprintf(stderr, "buffers bottomlow: no memory could be mapped below 2 GiB: "
				"skipped\n");
		MPI_Finalize();
		exit(77);
	}
	empty_as(0);
	empty_name = "blocks at MPI_BOTTOM plus absolute int displacements";
	run_forms(&c, 1);
	g = complete_graph();
	neighbor_forms(g, 1);
	OK(MPI_Comm_free(&g));
	if (size > 1) {
		make_inter(&c, &local);
		run_forms(&c, 1);
		free_inter(&c, &local);
	}
	munmap(low_mem, LOW_SIZE);
	low_mem = NULL;
}

/* ------------------------------------------------------------------ */
/* An argument only one rank gets wrong                                 */
/* ------------------------------------------------------------------ */

/*
 * Rank 1 alone passes a negative count.  Under the default handler it stops
 * the job there (fatal.sh onebad); under MPI_ERRORS_RETURN it gets the error
 * class and ends with a status of its own, while the other ranks are still
 * in the collective: bipload stops them (fatal.sh onebadreturn).
 */
static void onebad(MPI_Errhandler eh)
{
	int counts[MAXP], displs[MAXP], x = rank, all[MAXP], i, rc;

	for (i = 0; i < size; i++) {
		counts[i] = 1;
		displs[i] = i;
	}
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
	rc = MPI_Allgatherv(&x, rank == 1 ? -1 : 1, MPI_INT, all, counts, displs, MPI_INT,
			    MPI_COMM_WORLD);
	CHECK(rank == 1 && eh == MPI_ERRORS_RETURN, "MPI_Allgatherv returned %d on rank %d", rc,
	      rank);
	CHECK(rc == MPI_ERR_COUNT, "MPI_Allgatherv returned %d, not MPI_ERR_COUNT", rc);
	fprintf(stderr, "rank 1: MPI_Allgatherv returned MPI_ERR_COUNT: exiting with status 3\n");
	exit(3);
}

static void test_onebad(void)
{
	onebad(MPI_ERRORS_ARE_FATAL);
}

static void test_onebadreturn(void)
{
	onebad(MPI_ERRORS_RETURN);
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "zero", test_zero },	     { "inter", test_inter },	{ "neighbor", test_neighbor },
	{ "p2p", test_p2p },	     { "bottom", test_bottom }, { "bottomlow", test_bottomlow },
	{ "onebad", test_onebad },   { "onebadreturn", test_onebadreturn },
};

int main(int argc, char **argv)
{
	size_t i;

	coll_init(&argc, &argv);
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (argc != 2 || size > MAXP) {
		fprintf(stderr, "usage: buffers TEST, on at most %d processes\n", MAXP);
		return 2;
	}
	for (i = 0; i < MAXP; i++)
		int_types[i] = MPI_INT;
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		OK(MPI_Finalize());
		return 0;
	}
	fprintf(stderr, "buffers: no test %s\n", argv[1]);
	return 2;
}
