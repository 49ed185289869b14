/* SPDX-License-Identifier: MIT */
/*
 * type_array.c - MPI_Type_create_subarray and MPI_Type_create_darray (and
 * their large-count _c forms): the part of a global array that one process
 * holds, as a datatype over the whole array.
 *
 * Both are built from the other constructors, one dimension at a time from
 * the fastest-varying one (the last in C order, the first in Fortran order):
 * each dimension wraps the type of the dimensions inside it.  The result
 * has lower bound 0 and the extent of the whole array (the product of the
 * sizes times the extent of oldtype), as the standard says, whatever part
 * of it the type touches; its envelope is the call's (MPI_COMBINER_SUBARRAY
 * or MPI_COMBINER_DARRAY), with large counts for the _c forms.
 *
 * The distribution of a darray follows the standard's definition: the
 * processes form a grid of psizes in row-major order whatever `order` is;
 * in a dimension distributed MPI_DISTRIBUTE_BLOCK with block b (default
 * ceil(gsize / psize)), process coordinate r holds elements [r*b, r*b + b)
 * clipped to the dimension; MPI_DISTRIBUTE_CYCLIC with block b (default 1)
 * gives it the blocks r, r + psize, r + 2*psize... of b elements, the last
 * one possibly shorter; MPI_DISTRIBUTE_NONE (psize 1) gives it all.
 */
#include <limits.h>
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"

/* Replace *t by next (built on it): *t's handle is dropped. */
static void step(MPI_Datatype *t, MPI_Datatype next, int owned)
{
	if (owned)
		PMPI_Type_free(t);
	*t = next;
}

static int order_ok(int order)
{
	return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN;
}

/* The dimension handled at step i (fastest-varying first). */
static int dim_at(int ndims, int order, int i)
{
	return order == MPI_ORDER_C ? ndims - 1 - i : i;
}

/* The new type: t resized to [0, extent), the envelope recorded. */
static int finish(MPI_Datatype t, int owned, MPI_Count extent, const char *call, int combiner,
		  int ni, const int *ints, int nc, const MPI_Count *counts, MPI_Datatype oldtype,
		  MPI_Datatype *newtype)
{
	MPI_Datatype r;
	int rc;

	rc = PMPI_Type_create_resized_c(t, 0, extent, &r);
	if (owned)
		PMPI_Type_free(&t);
	if (rc)
		return rc;
	if (mpi_shim_datatype_set_envelope(r, combiner, ni, ints, 0, NULL, nc, counts, 1,
					   &oldtype)) {
		PMPI_Type_free(&r);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
				    "out of memory for the type's envelope");
	}
	*newtype = r;
	return MPI_SUCCESS;
}

/* oldtype and newtype, the checks of every constructor. */
static int check_common(MPI_Datatype oldtype, MPI_Datatype *newtype, int ndims, int order,
			const char *call)
{
	if (oldtype == MPI_DATATYPE_NULL || !mpi_shim_datatype_ok(oldtype))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    "oldtype is MPI_DATATYPE_NULL or has been freed");
	if (!newtype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "newtype is NULL");
	if (ndims < 1)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "ndims %d: at least one dimension", ndims);
	if (!order_ok(order))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
	return MPI_SUCCESS;
}

/* --- Subarrays --- */

static int subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
		    const MPI_Count *starts, int order, MPI_Datatype oldtype,
		    MPI_Datatype *newtype, const char *call, int large)
{
	MPI_Datatype t = oldtype, next;
	MPI_Count stride, disp = 0, total;
	int i, d, rc, owned = 0;

	if ((rc = check_common(oldtype, newtype, ndims, order, call)))
		return rc;
	if (!sizes || !subsizes || !starts)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "an array argument is NULL");
	for (d = 0; d < ndims; d++) {
		if (sizes[d] < 1 || subsizes[d] < 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
		    starts[d] > sizes[d] - subsizes[d])
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "dimension %d: size %lld, subsize %lld, start %lld (want "
					    "size >= 1, 0 <= subsize <= size, 0 <= start <= size - "
					    "subsize)",
					    d, (long long)sizes[d], (long long)subsizes[d],
					    (long long)starts[d]);
	}
	/* stride: bytes between two consecutive indices of dimension d. */
	stride = oldtype->extent;
	for (i = 0; i < ndims; i++) {
		d = dim_at(ndims, order, i);
		if (i == 0)
			rc = PMPI_Type_contiguous_c(subsizes[d], t, &next);
		else
			rc = PMPI_Type_create_hvector_c(subsizes[d], 1, stride, t, &next);
		if (rc) {
			if (owned)
				PMPI_Type_free(&t);
			return rc;
		}
		step(&t, next, owned);
		owned = 1;
		if (__builtin_mul_overflow(starts[d], stride, &total) ||
		    __builtin_add_overflow(disp, total, &disp) ||
		    __builtin_mul_overflow(stride, sizes[d], &stride)) {
			PMPI_Type_free(&t);
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "the array's size in bytes overflows");
		}
	}
	/* Moved to its start within the array. */
	rc = PMPI_Type_create_hindexed_block_c(1, 1, &disp, t, &next);
	PMPI_Type_free(&t);
	if (rc)
		return rc;
	if (large) {
		MPI_Count *c = malloc(3 * (size_t)ndims * sizeof(*c));
		int ints[2] = {ndims, order};

		if (!c) {
			PMPI_Type_free(&next);
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
		}
		for (d = 0; d < ndims; d++) {
			c[d] = sizes[d];
			c[ndims + d] = subsizes[d];
			c[2 * ndims + d] = starts[d];
		}
		rc = finish(next, 1, stride, call, MPI_COMBINER_SUBARRAY, 2, ints, 3 * ndims, c,
			    oldtype, newtype);
		free(c);
	} else {
		int *ints = malloc((3 * (size_t)ndims + 2) * sizeof(*ints));

		if (!ints) {
			PMPI_Type_free(&next);
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
		}
		ints[0] = ndims;
		for (d = 0; d < ndims; d++) {
			ints[1 + d] = (int)sizes[d];
			ints[1 + ndims + d] = (int)subsizes[d];
			ints[1 + 2 * ndims + d] = (int)starts[d];
		}
		ints[1 + 3 * ndims] = order;
		rc = finish(next, 1, stride, call, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0,
			    NULL, oldtype, newtype);
		free(ints);
	}
	return rc;
}

/* ints to large counts, for the int forms (NULL stays NULL). */
static MPI_Count *widen(const int *a, int n, int *fail)
{
	MPI_Count *c;
	int i;

	if (!a || n < 1)
		return NULL;
	c = malloc((size_t)n * sizeof(*c));
	if (!c) {
		*fail = 1;
		return NULL;
	}
	for (i = 0; i < n; i++)
		c[i] = a[i];
	return c;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
			      const int array_of_subsizes[], const int array_of_starts[],
			      int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_subarray";
	MPI_Count *sizes, *subsizes, *starts;
	int fail = 0, rc;

	sizes = widen(array_of_sizes, ndims, &fail);
	subsizes = widen(array_of_subsizes, ndims, &fail);
	starts = widen(array_of_starts, ndims, &fail);
	if (fail)
		rc = mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	else
		rc = subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype, call, 0);
	free(sizes);
	free(subsizes);
	free(starts);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Type_create_subarray);

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
				const MPI_Count array_of_subsizes[],
				const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
				MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype,
			newtype, "MPI_Type_create_subarray_c", 1);
}
MPI_SHIM_ALIAS(MPI_Type_create_subarray_c);

/* --- Distributed arrays --- */

/*
 * One dimension of gsize elements of `inner` (each `ext` bytes apart), of
 * which process coordinate r of psize holds the part the distribution
 * gives it; the type made is resized to the whole dimension.
 */
static int darray_dim(MPI_Datatype inner, MPI_Count ext, MPI_Count gsize, int distrib,
		      int darg, int psize, int r, MPI_Datatype *out, const char *call, int dim)
{
	MPI_Datatype t, parts[2];
	MPI_Count b, start, n, nfull, last, bl[2], disp[2];
	int rc, k = 0;

	switch (distrib) {
	case MPI_DISTRIBUTE_NONE:
		if (psize != 1)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "dimension %d is MPI_DISTRIBUTE_NONE over %d processes "
					    "(want 1)",
					    dim, psize);
		rc = PMPI_Type_contiguous_c(gsize, inner, &t);
		break;
	case MPI_DISTRIBUTE_BLOCK:
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
		if (b < 1 || b * psize < gsize)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "dimension %d: blocks of %lld over %d processes do not "
					    "cover %lld elements",
					    dim, (long long)b, psize, (long long)gsize);
		start = r * b;
		n = start >= gsize ? 0 : gsize - start < b ? gsize - start : b;
		disp[0] = start * ext;
		rc = PMPI_Type_contiguous_c(n, inner, &parts[0]);
		if (rc)
			return rc;
		rc = PMPI_Type_create_hindexed_block_c(1, 1, disp, parts[0], &t);
		PMPI_Type_free(&parts[0]);
		break;
	case MPI_DISTRIBUTE_CYCLIC:
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		if (b < 1)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "dimension %d: cyclic block %lld", dim, (long long)b);
		/* Full blocks of b, then the last one, possibly shorter. */
		start = r * b;
		nfull = 0;
		last = 0;
		if (start < gsize) {
			MPI_Count cycle = b * psize, span = gsize - start;

			nfull = span / cycle + (span % cycle >= b ? 1 : 0);
			last = span % cycle < b ? span % cycle : 0;
		}
		if (nfull) {
			rc = PMPI_Type_create_hvector_c(nfull, b, b * psize * ext, inner,
							&parts[k]);
			if (rc)
				return rc;
			bl[k] = 1;
			disp[k++] = start * ext;
		}
		if (last) {
			rc = PMPI_Type_contiguous_c(last, inner, &parts[k]);
			if (rc) {
				if (k)
					PMPI_Type_free(&parts[0]);
				return rc;
			}
			bl[k] = 1;
			disp[k++] = (start + nfull * b * psize) * ext;
		}
		rc = PMPI_Type_create_struct_c(k, bl, disp, parts, &t);
		while (k--)
			PMPI_Type_free(&parts[k]);
		break;
	default:
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "dimension %d: distribution %d is not MPI_DISTRIBUTE_BLOCK, "
				    "_CYCLIC or _NONE",
				    dim, distrib);
	}
	if (rc)
		return rc;
	rc = PMPI_Type_create_resized_c(t, 0, gsize * ext, out);
	PMPI_Type_free(&t);
	return rc;
}

static int darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
		  const int *dargs, const int *psizes, int order, MPI_Datatype oldtype,
		  MPI_Datatype *newtype, const char *call, int large)
{
	MPI_Datatype t = oldtype, next;
	MPI_Count ext, prod = 1;
	int *coords, i, d, rc, owned = 0, rest;

	if ((rc = check_common(oldtype, newtype, ndims, order, call)))
		return rc;
	if (!gsizes || !distribs || !dargs || !psizes)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "an array argument is NULL");
	if (size < 1 || rank < 0 || rank >= size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "rank %d of size %d is not a process of the grid", rank, size);
	for (d = 0; d < ndims; d++) {
		if (gsizes[d] < 1 || psizes[d] < 1)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "dimension %d: gsize %lld and psize %d must be positive",
					    d, (long long)gsizes[d], psizes[d]);
		if (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG && dargs[d] < 1)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "dimension %d: darg %d", d, dargs[d]);
		prod *= psizes[d];
		if (prod > size)
			break;
	}
	if (prod != size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "the product of psizes is not size %d", size);
	coords = malloc((size_t)ndims * sizeof(*coords));
	if (!coords)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	/* The process grid is row-major, whatever the order of the array. */
	for (rest = rank, d = ndims - 1; d >= 0; d--) {
		coords[d] = rest % psizes[d];
		rest /= psizes[d];
	}
	ext = oldtype->extent;
	for (i = 0; i < ndims; i++) {
		d = dim_at(ndims, order, i);
		rc = darray_dim(t, ext, gsizes[d], distribs[d], dargs[d], psizes[d], coords[d],
				&next, call, d);
		if (rc) {
			if (owned)
				PMPI_Type_free(&t);
			free(coords);
			return rc;
		}
		step(&t, next, owned);
		owned = 1;
		if (__builtin_mul_overflow(ext, gsizes[d], &ext)) {
			PMPI_Type_free(&t);
			free(coords);
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "the array's size in bytes overflows");
		}
	}
	free(coords);
	{
		int ni = large ? 3 * ndims + 4 : 4 * ndims + 4, k = 0;
		int *ints = malloc((size_t)ni * sizeof(*ints));

		if (!ints) {
			PMPI_Type_free(&t);
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
		}
		ints[k++] = size;
		ints[k++] = rank;
		ints[k++] = ndims;
		if (!large)
			for (d = 0; d < ndims; d++)
				ints[k++] = (int)gsizes[d];
		for (d = 0; d < ndims; d++)
			ints[k++] = distribs[d];
		for (d = 0; d < ndims; d++)
			ints[k++] = dargs[d];
		for (d = 0; d < ndims; d++)
			ints[k++] = psizes[d];
		ints[k++] = order;
		rc = finish(t, 1, ext, call, MPI_COMBINER_DARRAY, ni, ints, large ? ndims : 0,
			    large ? gsizes : NULL, oldtype, newtype);
		free(ints);
	}
	return rc;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
			    const int array_of_distribs[], const int array_of_dargs[],
			    const int array_of_psizes[], int order, MPI_Datatype oldtype,
			    MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_darray";
	MPI_Count *gsizes;
	int fail = 0, rc;

	gsizes = widen(array_of_gsizes, ndims, &fail);
	if (fail)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	rc = darray(size, rank, ndims, gsizes, array_of_distribs, array_of_dargs, array_of_psizes,
		    order, oldtype, newtype, call, 0);
	free(gsizes);
	return rc;
}
MPI_SHIM_ALIAS(MPI_Type_create_darray);

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
			      const int array_of_distribs[], const int array_of_dargs[],
			      const int array_of_psizes[], int order, MPI_Datatype oldtype,
			      MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
		      array_of_psizes, order, oldtype, newtype, "MPI_Type_create_darray_c", 1);
}
MPI_SHIM_ALIAS(MPI_Type_create_darray_c);
