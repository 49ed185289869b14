/* SPDX-License-Identifier: MIT */
/*
 * group.c - groups: ordered sets of processes, kept as their world ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

int mpi_shim_group_new(int n, const int *world, struct mpi_shim_group **group_p)
{
	struct mpi_shim_group *g = malloc(sizeof(*g));
	int i;

	if (!g)
		return MPI_ERR_NO_MEM;
	g->world = malloc((size_t)(n ? n : 1) * sizeof(*g->world));
	if (!g->world) {
		free(g);
		return MPI_ERR_NO_MEM;
	}
	if (n)
		memcpy(g->world, world, (size_t)n * sizeof(*world));
	g->refcount = 1;
	g->predefined = 0;
	g->size = n;
	g->rank = MPI_UNDEFINED;
	for (i = 0; i < n; i++)
		if (world[i] == mpi_shim.world_rank)
			g->rank = i;
	*group_p = g;
	return MPI_SUCCESS;
}

void mpi_shim_group_release(struct mpi_shim_group *g)
{
	if (g->predefined || --g->refcount > 0)
		return;
	free(g->world);
	free(g);
}

static int check_group(MPI_Group g, const char *call)
{
	if (g == MPI_GROUP_NULL)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_GROUP, call, "the group is MPI_GROUP_NULL");
	if (g->refcount <= 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_GROUP, call, "the group was freed");
	return MPI_SUCCESS;
}

static int check_ptr(const void *p, const char *what, const char *call)
{
	if (!p)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL", what);
	return MPI_SUCCESS;
}

/* Index of world rank w in g, or -1. */
static int find(MPI_Group g, int w)
{
	int i;

	for (i = 0; i < g->size; i++)
		if (g->world[i] == w)
			return i;
	return -1;
}

/* The result of a constructor: MPI_GROUP_EMPTY for no member. */
static int make(int n, const int *world, MPI_Group *newgroup, const char *call)
{
	int rc;

	if (n == 0) {
		*newgroup = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	rc = mpi_shim_group_new(n, world, newgroup);
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "no memory for a group of %d", n);
	return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Group_size")) ||
	    (rc = check_group(group, "MPI_Group_size")) ||
	    (rc = check_ptr(size, "size", "MPI_Group_size")))
		return rc;
	*size = group->size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Group_size);

int PMPI_Group_rank(MPI_Group group, int *rank)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Group_rank")) ||
	    (rc = check_group(group, "MPI_Group_rank")) ||
	    (rc = check_ptr(rank, "rank", "MPI_Group_rank")))
		return rc;
	*rank = group->rank;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Group_rank);

int PMPI_Group_translate_ranks(MPI_Group g1, int n, const int ranks1[], MPI_Group g2,
			       int ranks2[])
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Group_translate_ranks";
	int i, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g1, call)) ||
	    (rc = check_group(g2, call)))
		return rc;
	if (n < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call, "n %d is negative", n);
	if (n > 0 && ((rc = check_ptr(ranks1, "ranks1", call)) ||
		      (rc = check_ptr(ranks2, "ranks2", call))))
		return rc;
	for (i = 0; i < n; i++)
		if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_RANK, call,
					    "ranks1[%d] = %d is not in the group (size %d)", i,
					    ranks1[i], g1->size);
	for (i = 0; i < n; i++) {
		if (ranks1[i] == MPI_PROC_NULL) {
			ranks2[i] = MPI_PROC_NULL;
		} else {
			int j = find(g2, g1->world[ranks1[i]]);

			ranks2[i] = j < 0 ? MPI_UNDEFINED : j;
		}
	}
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Group_translate_ranks);

int PMPI_Group_compare(MPI_Group g1, MPI_Group g2, int *result)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Group_compare";
	int i, rc, same_order = 1;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g1, call)) ||
	    (rc = check_group(g2, call)) || (rc = check_ptr(result, "result", call)))
		return rc;
	if (g1->size != g2->size) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	for (i = 0; i < g1->size; i++) {
		if (g1->world[i] != g2->world[i])
			same_order = 0;
		if (find(g2, g1->world[i]) < 0) {
			*result = MPI_UNEQUAL;
			return MPI_SUCCESS;
		}
	}
	*result = same_order ? MPI_IDENT : MPI_SIMILAR;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Group_compare);

/* Union, intersection, difference: members of g1 (in order) kept by keep(),
 * then for a union the members of g2 not in g1. */
enum setop { UNION, INTERSECTION, DIFFERENCE };

static int setop(MPI_Group g1, MPI_Group g2, enum setop op, MPI_Group *newgroup,
		 const char *call)
{
	int *w, n = 0, i, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g1, call)) ||
	    (rc = check_group(g2, call)) || (rc = check_ptr(newgroup, "newgroup", call)))
		return rc;
	w = malloc((size_t)(g1->size + g2->size + 1) * sizeof(*w));
	if (!w)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	for (i = 0; i < g1->size; i++) {
		int in2 = find(g2, g1->world[i]) >= 0;

		if (op == UNION || (op == INTERSECTION && in2) || (op == DIFFERENCE && !in2))
			w[n++] = g1->world[i];
	}
	if (op == UNION)
		for (i = 0; i < g2->size; i++)
			if (find(g1, g2->world[i]) < 0)
				w[n++] = g2->world[i];
	rc = make(n, w, newgroup, call);
	free(w);
	return rc;
}

int PMPI_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	return setop(g1, g2, UNION, newgroup, "MPI_Group_union");
}
MPI_SHIM_ALIAS(MPI_Group_union);

int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	return setop(g1, g2, INTERSECTION, newgroup, "MPI_Group_intersection");
}
MPI_SHIM_ALIAS(MPI_Group_intersection);

int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	return setop(g1, g2, DIFFERENCE, newgroup, "MPI_Group_difference");
}
MPI_SHIM_ALIAS(MPI_Group_difference);

/* ranks[] must be distinct ranks of g. */
static int check_ranks(MPI_Group g, int n, const int ranks[], const char *call)
{
	char *seen;
	int i;

	if (n < 0 || n > g->size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "n %d is not 0 to the group size %d", n, g->size);
	if (n > 0 && !ranks)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "ranks is NULL");
	seen = calloc((size_t)g->size + 1, 1);
	if (!seen)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	for (i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]]) {
			int r = ranks[i];

			free(seen);
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_RANK, call,
					    "ranks[%d] = %d is %s (group size %d)", i, r,
					    r < 0 || r >= g->size ? "not in the group" :
								    "given twice",
					    g->size);
		}
		seen[ranks[i]] = 1;
	}
	free(seen);
	return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group g, int n, const int ranks[], MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Group_incl";
	int *w, i, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g, call)) ||
	    (rc = check_ptr(newgroup, "newgroup", call)) || (rc = check_ranks(g, n, ranks, call)))
		return rc;
	w = malloc((size_t)(n + 1) * sizeof(*w));
	if (!w)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	for (i = 0; i < n; i++)
		w[i] = g->world[ranks[i]];
	rc = make(n, w, newgroup, call);
	free(w);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Group_incl);

int PMPI_Group_excl(MPI_Group g, int n, const int ranks[], MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Group_excl";
	int *w, i, j, m = 0, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g, call)) ||
	    (rc = check_ptr(newgroup, "newgroup", call)) || (rc = check_ranks(g, n, ranks, call)))
		return rc;
	w = malloc((size_t)(g->size + 1) * sizeof(*w));
	if (!w)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	for (i = 0; i < g->size; i++) {
		for (j = 0; j < n && ranks[j] != i; j++)
			;
		if (j == n)
			w[m++] = g->world[i];
	}
	rc = make(m, w, newgroup, call);
	free(w);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Group_excl);

/* The ranks named by ranges (first, last, stride), checked; count in *n_p. */
static int expand_ranges(MPI_Group g, int n, int ranges[][3], int **ranks_p, int *n_p,
			 const char *call)
{
	int i, m = 0, *ranks;
	long total = 0;

	if (n < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "n %d is negative", n);
	if (n > 0 && !ranges)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "ranges is NULL");
	for (i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];

		if (stride == 0 || first < 0 || first >= g->size || last < 0 ||
		    last >= g->size || (stride > 0 && first > last) ||
		    (stride < 0 && first < last))
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_RANK, call,
					    "range %d (%d, %d, %d) is invalid for a group of %d", i,
					    first, last, stride, g->size);
		total += (last - first) / stride + 1;
	}
	ranks = malloc((size_t)(total + 1) * sizeof(*ranks));
	if (!ranks)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	for (i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2], r;

		for (r = first; stride > 0 ? r <= last : r >= last; r += stride)
			ranks[m++] = r;
	}
	*ranks_p = ranks;
	*n_p = m;
	return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group g, int n, int ranges[][3], MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Group_range_incl";
	int *ranks, m, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g, call)) ||
	    (rc = check_ptr(newgroup, "newgroup", call)) ||
	    (rc = expand_ranges(g, n, ranges, &ranks, &m, call)))
		return rc;
	rc = PMPI_Group_incl(g, m, ranks, newgroup);
	free(ranks);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Group_range_incl);

int PMPI_Group_range_excl(MPI_Group g, int n, int ranges[][3], MPI_Group *newgroup)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Group_range_excl";
	int *ranks, m, rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = check_group(g, call)) ||
	    (rc = check_ptr(newgroup, "newgroup", call)) ||
	    (rc = expand_ranges(g, n, ranges, &ranks, &m, call)))
		return rc;
	rc = PMPI_Group_excl(g, m, ranks, newgroup);
	free(ranks);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Group_range_excl);

int PMPI_Group_free(MPI_Group *group)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Group_free")))
		return rc;
	if (!group)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_free",
				    "the group pointer is NULL");
	if ((rc = check_group(*group, "MPI_Group_free")))
		return rc;
	mpi_shim_group_release(*group);
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Group_free);
