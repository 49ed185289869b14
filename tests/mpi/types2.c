/* SPDX-License-Identifier: MIT */
/*
 * types2.c - the datatype calls of MPI-3.1 and the large-count ones of
 * MPI-4.0, run with bipload:
 *
 *   bipload -sz 2 mpi_types2 CASE
 *
 * envelope    MPI_Type_get_envelope/get_contents for every combiner
 * subarray    MPI_Type_create_subarray: bounds, data sent between ranks
 * darray      MPI_Type_create_darray: each rank's part, checked element by element
 * match       MPI_Type_match_size, MPI_Type_create_f90_*
 * external32  MPI_Pack_external and co, byte by byte against big-endian encodings
 * typeattr    attributes on datatypes and their callbacks
 * keyvalfree  a freed keyval keeps serving its attributes (communicators and types)
 * fortran     the Fortran and C++ datatypes through point-to-point and reductions
 * zeroblocks  blocks of no copies at extreme displacements
 * large       the _c constructors, queries and packing
 * aint        MPI_Aint_add and MPI_Aint_diff: addresses of the elements
 *             of an array, a struct built from them and sent, wrap-around
 *
 * Errors are returned (MPI_ERRORS_RETURN) and checked by class.
 */
#include <mpi.h>

#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "types2: rank %d: %s:%d: ", rank, __FILE__, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#define MPI_OK(call)                                                                               \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_ != MPI_SUCCESS) {                                                          \
			fprintf(stderr, "types2: rank %d: %s:%d: %s failed with class %d\n", rank, \
				__FILE__, __LINE__, #call, rc_);                                   \
			MPI_Abort(MPI_COMM_WORLD, 2);                                              \
		}                                                                                  \
	} while (0)

static void expect_class(int rc, int want, const char *what)
{
	int cls = MPI_SUCCESS;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

static void check_extent(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, MPI_Count sz,
			 const char *what)
{
	MPI_Aint l, e;
	MPI_Count s;

	MPI_OK(MPI_Type_get_extent(t, &l, &e));
	MPI_OK(MPI_Type_size_x(t, &s));
	CHECK(l == lb && e == extent && s == sz, "%s: lb %ld extent %ld size %lld, want %ld %ld %lld",
	      what, (long)l, (long)e, (long long)s, (long)lb, (long)extent, (long long)sz);
}

/* --- Envelopes and contents --- */

struct env {
	int ni, na, nd, combiner;
	int ints[64];
	MPI_Aint aints[16];
	MPI_Datatype types[16];
};

static void get_env(MPI_Datatype t, struct env *e)
{
	memset(e, 0, sizeof(*e));
	MPI_OK(MPI_Type_get_envelope(t, &e->ni, &e->na, &e->nd, &e->combiner));
	if (e->combiner != MPI_COMBINER_NAMED)
		MPI_OK(MPI_Type_get_contents(t, 64, 16, 16, e->ints, e->aints, e->types));
}

/* Free the derived datatypes get_contents returned. */
static void free_env(struct env *e)
{
	int i, j, ni, na, nd, comb;

	for (i = 0; i < e->nd; i++) {
		MPI_OK(MPI_Type_get_envelope(e->types[i], &ni, &na, &nd, &comb));
		if (comb != MPI_COMBINER_NAMED)
			MPI_OK(MPI_Type_free(&e->types[i]));
		(void)j;
	}
}

static void check_ints(const struct env *e, const int *want, int n, const char *what)
{
	int i;

	CHECK(e->ni == n, "%s: %d integers, want %d", what, e->ni, n);
	for (i = 0; i < n && i < e->ni; i++)
		CHECK(e->ints[i] == want[i], "%s: integer %d is %d, want %d", what, i, e->ints[i],
		      want[i]);
}

static void case_envelope(void)
{
	MPI_Datatype c, v, hv, ix, hix, ixb, hixb, st, rs, dup, sub, dar, f90r, f90c, f90i, c2;
	int bl[3] = {2, 0, 3}, disp[3] = {5, 1, 0}, sizes[2] = {4, 6}, subs[2] = {2, 3},
	    starts[2] = {1, 2}, gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
	    dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 1};
	MPI_Aint adisp[3] = {16, -8, 100};
	MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
	struct env e;
	int ints[64], ni, na, nd, comb, k;
	MPI_Aint aints[4];
	MPI_Datatype dts[4];

	/* Named: no contents. */
	get_env(MPI_INT, &e);
	CHECK(e.combiner == MPI_COMBINER_NAMED && e.ni == 0 && e.na == 0 && e.nd == 0,
	      "MPI_INT: combiner %d (%d %d %d)", e.combiner, e.ni, e.na, e.nd);
	expect_class(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ints, aints, dts), MPI_ERR_ARG,
		     "contents of a named type");
	get_env(MPI_REAL8, &e);
	CHECK(e.combiner == MPI_COMBINER_NAMED, "MPI_REAL8: combiner %d", e.combiner);

	MPI_OK(MPI_Type_contiguous(7, MPI_INT, &c));
	get_env(c, &e);
	CHECK(e.combiner == MPI_COMBINER_CONTIGUOUS && e.nd == 1 && e.types[0] == MPI_INT,
	      "contiguous: combiner %d", e.combiner);
	check_ints(&e, (int[]){7}, 1, "contiguous");

	/* A derived type inside: the returned handle is a new one to free. */
	MPI_OK(MPI_Type_vector(3, 2, 4, c, &v));
	get_env(v, &e);
	CHECK(e.combiner == MPI_COMBINER_VECTOR && e.nd == 1 && e.types[0] == c,
	      "vector: combiner %d", e.combiner);
	check_ints(&e, (int[]){3, 2, 4}, 3, "vector");
	MPI_OK(MPI_Type_free(&c));
	/* c's handle is gone; the one from get_contents still works. */
	{
		struct env e2;
		get_env(e.types[0], &e2);
		CHECK(e2.combiner == MPI_COMBINER_CONTIGUOUS, "the returned handle: combiner %d",
		      e2.combiner);
		free_env(&e2);
	}
	free_env(&e);

	MPI_OK(MPI_Type_create_hvector(3, 2, 40, MPI_DOUBLE, &hv));
	get_env(hv, &e);
	CHECK(e.combiner == MPI_COMBINER_HVECTOR && e.na == 1 && e.aints[0] == 40 &&
	      e.types[0] == MPI_DOUBLE, "hvector: combiner %d", e.combiner);
	check_ints(&e, (int[]){3, 2}, 2, "hvector");

	MPI_OK(MPI_Type_indexed(3, bl, disp, MPI_SHORT, &ix));
	get_env(ix, &e);
	CHECK(e.combiner == MPI_COMBINER_INDEXED && e.types[0] == MPI_SHORT, "indexed: %d",
	      e.combiner);
	check_ints(&e, (int[]){3, 2, 0, 3, 5, 1, 0}, 7, "indexed");

	MPI_OK(MPI_Type_create_hindexed(3, bl, adisp, MPI_SHORT, &hix));
	get_env(hix, &e);
	CHECK(e.combiner == MPI_COMBINER_HINDEXED && e.na == 3 && e.aints[0] == 16 &&
	      e.aints[1] == -8 && e.aints[2] == 100, "hindexed: %d", e.combiner);
	check_ints(&e, (int[]){3, 2, 0, 3}, 4, "hindexed");

	MPI_OK(MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &ixb));
	get_env(ixb, &e);
	CHECK(e.combiner == MPI_COMBINER_INDEXED_BLOCK, "indexed_block: %d", e.combiner);
	check_ints(&e, (int[]){3, 2, 5, 1, 0}, 5, "indexed_block");

	MPI_OK(MPI_Type_create_hindexed_block(3, 2, adisp, MPI_INT, &hixb));
	get_env(hixb, &e);
	CHECK(e.combiner == MPI_COMBINER_HINDEXED_BLOCK && e.na == 3 && e.aints[2] == 100,
	      "hindexed_block: %d", e.combiner);
	check_ints(&e, (int[]){3, 2}, 2, "hindexed_block");

	types[2] = hv;
	MPI_OK(MPI_Type_create_struct(3, bl, adisp, types, &st));
	get_env(st, &e);
	CHECK(e.combiner == MPI_COMBINER_STRUCT && e.na == 3 && e.nd == 3 &&
	      e.types[0] == MPI_INT && e.types[1] == MPI_DOUBLE && e.types[2] == hv,
	      "struct: %d", e.combiner);
	check_ints(&e, (int[]){3, 2, 0, 3}, 4, "struct");
	/* Rebuilt from its contents, the same type. */
	{
		MPI_Datatype again;
		MPI_Aint l1, e1, l2, e2;
		MPI_Count s1, s2;

		MPI_OK(MPI_Type_create_struct(e.ints[0], e.ints + 1, e.aints, e.types, &again));
		MPI_OK(MPI_Type_get_extent(st, &l1, &e1));
		MPI_OK(MPI_Type_get_extent(again, &l2, &e2));
		MPI_OK(MPI_Type_size_x(st, &s1));
		MPI_OK(MPI_Type_size_x(again, &s2));
		CHECK(l1 == l2 && e1 == e2 && s1 == s2, "struct rebuilt from its contents differs");
		MPI_OK(MPI_Type_free(&again));
	}
	free_env(&e);
	/* Arrays too small: MPI_ERR_ARG. */
	expect_class(MPI_Type_get_contents(st, 3, 3, 3, ints, aints, dts), MPI_ERR_ARG,
		     "contents into 3 integers of 4");
	expect_class(MPI_Type_get_contents(st, 4, 2, 3, ints, aints, dts), MPI_ERR_ARG,
		     "contents into 2 addresses of 3");
	expect_class(MPI_Type_get_contents(st, 4, 3, 2, ints, aints, dts), MPI_ERR_ARG,
		     "contents into 2 datatypes of 3");
	expect_class(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb), MPI_ERR_TYPE,
		     "envelope of MPI_DATATYPE_NULL");

	MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 16, &rs));
	get_env(rs, &e);
	CHECK(e.combiner == MPI_COMBINER_RESIZED && e.ni == 0 && e.na == 2 && e.aints[0] == -4 &&
	      e.aints[1] == 16 && e.types[0] == MPI_INT, "resized: %d", e.combiner);

	MPI_OK(MPI_Type_dup(st, &dup));
	get_env(dup, &e);
	CHECK(e.combiner == MPI_COMBINER_DUP && e.ni == 0 && e.na == 0 && e.nd == 1 &&
	      e.types[0] == st, "dup: %d", e.combiner);
	free_env(&e);

	MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &sub));
	get_env(sub, &e);
	CHECK(e.combiner == MPI_COMBINER_SUBARRAY && e.types[0] == MPI_FLOAT, "subarray: %d",
	      e.combiner);
	check_ints(&e, (int[]){2, 4, 6, 2, 3, 1, 2, MPI_ORDER_FORTRAN}, 8, "subarray");

	MPI_OK(MPI_Type_create_darray(2, 1, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &dar));
	get_env(dar, &e);
	CHECK(e.combiner == MPI_COMBINER_DARRAY && e.types[0] == MPI_INT, "darray: %d",
	      e.combiner);
	check_ints(&e,
		   (int[]){2, 1, 2, 4, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
			   MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 1, MPI_ORDER_C},
		   12, "darray");

	MPI_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &f90r));
	get_env(f90r, &e);
	CHECK(e.combiner == MPI_COMBINER_F90_REAL && e.nd == 0, "f90 real: %d", e.combiner);
	check_ints(&e, (int[]){10, MPI_UNDEFINED}, 2, "f90 real");
	MPI_OK(MPI_Type_create_f90_complex(MPI_UNDEFINED, 300, &f90c));
	get_env(f90c, &e);
	CHECK(e.combiner == MPI_COMBINER_F90_COMPLEX, "f90 complex: %d", e.combiner);
	check_ints(&e, (int[]){MPI_UNDEFINED, 300}, 2, "f90 complex");
	MPI_OK(MPI_Type_create_f90_integer(5, &f90i));
	get_env(f90i, &e);
	CHECK(e.combiner == MPI_COMBINER_F90_INTEGER, "f90 integer: %d", e.combiner);
	check_ints(&e, (int[]){5}, 1, "f90 integer");

	/* Large counts: get_envelope_c; the int forms refuse them. */
	MPI_OK(MPI_Type_vector_c(3, 2, (MPI_Count)1 << 33, MPI_CHAR, &c2));
	{
		MPI_Count cni, cna, cnc, cnd, counts[4];

		MPI_OK(MPI_Type_get_envelope_c(c2, &cni, &cna, &cnc, &cnd, &comb));
		CHECK(comb == MPI_COMBINER_VECTOR && cni == 0 && cna == 0 && cnc == 3 && cnd == 1,
		      "vector_c envelope: %d %lld %lld %lld %lld", comb, cni, cna, cnc, cnd);
		MPI_OK(MPI_Type_get_contents_c(c2, 0, 0, 4, 1, ints, aints, counts, dts));
		CHECK(counts[0] == 3 && counts[1] == 2 && counts[2] == (MPI_Count)1 << 33 &&
		      dts[0] == MPI_CHAR, "vector_c contents");
		expect_class(MPI_Type_get_contents_c(c2, 0, 0, 2, 1, ints, aints, counts, dts),
			     MPI_ERR_ARG, "contents_c into 2 large counts of 3");
		expect_class(MPI_Type_get_envelope(c2, &ni, &na, &nd, &comb), MPI_ERR_TYPE,
			     "int envelope of a _c type");
		MPI_OK(MPI_Type_get_envelope_c(st, &cni, &cna, &cnc, &cnd, &comb));
		CHECK(comb == MPI_COMBINER_STRUCT && cni == 4 && cna == 3 && cnc == 0 && cnd == 3,
		      "struct envelope_c");
	}
	MPI_Datatype all[] = {v, hv, ix, hix, ixb, hixb, st, rs, dup, sub, dar, c2};
	for (k = 0; k < (int)(sizeof(all) / sizeof(all[0])); k++)
		MPI_OK(MPI_Type_free(&all[k]));
}

/* --- Subarrays --- */

enum { R = 6, C = 8, D3 = 3 };

static void case_subarray(void)
{
	int sizes[2] = {R, C}, subs[2] = {3, 4}, starts[2] = {1, 2}, a[R][C], got[R][C], want[R][C];
	int flat[12], i, j, k, n;
	MPI_Datatype sub, subf, zero, s3;
	MPI_Status st;

	MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
	MPI_OK(MPI_Type_commit(&sub));
	check_extent(sub, 0, (MPI_Aint)sizeof(a), 12 * sizeof(int), "subarray C");
	{
		MPI_Aint tlb, text;
		MPI_OK(MPI_Type_get_true_extent(sub, &tlb, &text));
		CHECK(tlb == (1 * C + 2) * (MPI_Aint)sizeof(int) &&
		      text == ((3 * C + 2 + 4) - (1 * C + 2)) * (MPI_Aint)sizeof(int),
		      "subarray true extent %ld %ld", (long)tlb, (long)text);
	}
	/* The same part in Fortran order: sizes reversed. */
	{
		int fs[2] = {C, R}, fsub[2] = {4, 3}, fst[2] = {2, 1};

		MPI_OK(MPI_Type_create_subarray(2, fs, fsub, fst, MPI_ORDER_FORTRAN, MPI_INT, &subf));
		MPI_OK(MPI_Type_commit(&subf));
	}
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			a[i][j] = 100 * i + j;
	if (rank == 0) {
		MPI_OK(MPI_Send(a, 1, sub, 1, 1, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(a, 1, subf, 1, 2, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(flat, 0, sub, 1, 3, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_OK(MPI_Recv(flat, 12, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
		for (k = 0, i = 1; i < 4; i++)
			for (j = 2; j < 6; j++, k++)
				CHECK(flat[k] == 100 * i + j, "subarray element %d: %d", k, flat[k]);
		/* Into the same subarray of a patterned array: nothing else moves. */
		memset(got, 0x5a, sizeof(got));
		memcpy(want, got, sizeof(got));
		for (i = 1; i < 4; i++)
			for (j = 2; j < 6; j++)
				want[i][j] = a[i][j];
		MPI_OK(MPI_Recv(got, 1, sub, 0, 2, MPI_COMM_WORLD, &st));
		CHECK(!memcmp(got, want, sizeof(got)), "subarray (Fortran order) into subarray (C)");
		MPI_OK(MPI_Get_count(&st, sub, &n));
		CHECK(n == 1, "count %d", n);
		MPI_OK(MPI_Recv(flat, 0, sub, 0, 3, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, sub, &n));
		CHECK(n == 0, "count 0: %d", n);
	}
	/* A subsize of 0: no data, the extent of the whole array. */
	subs[0] = 0;
	MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &zero));
	check_extent(zero, 0, (MPI_Aint)sizeof(a), 0, "empty subarray");
	MPI_OK(MPI_Type_free(&zero));
	/* 3-D, C order, of doubles, packed and checked against the loops. */
	{
		int s[3] = {D3, 4, 5}, ss[3] = {2, 2, 3}, so[3] = {1, 1, 2}, pos = 0;
		double cube[D3][4][5], out[12];

		MPI_OK(MPI_Type_create_subarray(3, s, ss, so, MPI_ORDER_C, MPI_DOUBLE, &s3));
		MPI_OK(MPI_Type_commit(&s3));
		check_extent(s3, 0, (MPI_Aint)sizeof(cube), 12 * sizeof(double), "3-D subarray");
		for (i = 0; i < D3 * 4 * 5; i++)
			(&cube[0][0][0])[i] = i + 0.5;
		MPI_OK(MPI_Pack(cube, 1, s3, out, sizeof(out), &pos, MPI_COMM_SELF));
		k = 0;
		for (i = 1; i < 3; i++)
			for (j = 1; j < 3; j++)
				for (n = 2; n < 5; n++, k++)
					CHECK(out[k] == cube[i][j][n], "3-D element %d: %g", k,
					      out[k]);
		MPI_OK(MPI_Type_free(&s3));
	}
	/* Misuse. */
	subs[0] = 3;
	starts[0] = 4; /* 4 + 3 > 6 */
	expect_class(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &zero),
		     MPI_ERR_ARG, "start past the end");
	starts[0] = 1;
	subs[1] = 9;
	expect_class(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &zero),
		     MPI_ERR_ARG, "subsize past size");
	subs[1] = 4;
	expect_class(MPI_Type_create_subarray(2, sizes, subs, starts, 99, MPI_INT, &zero),
		     MPI_ERR_ARG, "order 99");
	expect_class(MPI_Type_create_subarray(0, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &zero),
		     MPI_ERR_ARG, "ndims 0");
	expect_class(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C,
					      MPI_DATATYPE_NULL, &zero),
		     MPI_ERR_TYPE, "subarray of MPI_DATATYPE_NULL");
	MPI_OK(MPI_Type_free(&sub));
	MPI_OK(MPI_Type_free(&subf));
}

/* --- Distributed arrays --- */

/* The global indices (C order) a darray type holds, as packing sees them. */
static int darray_indices(MPI_Datatype t, int total, int *out)
{
	int *g = malloc((size_t)total * sizeof(int)), pos = 0, i;
	MPI_Count sz;

	for (i = 0; i < total; i++)
		g[i] = i;
	MPI_OK(MPI_Type_size_x(t, &sz));
	MPI_OK(MPI_Pack(g, 1, t, out, (int)(total * sizeof(int)), &pos, MPI_COMM_SELF));
	free(g);
	return (int)(sz / (MPI_Count)sizeof(int));
}

/* Coordinate r of p holds index i of a dimension of n? */
static int owns(int i, int n, int distrib, int darg, int p, int r)
{
	int b;

	if (distrib == MPI_DISTRIBUTE_NONE)
		return 1;
	if (distrib == MPI_DISTRIBUTE_BLOCK) {
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + p - 1) / p : darg;
		return i / b == r;
	}
	b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
	return (i / b) % p == r;
}

static void check_darray(int np, int me, int g0, int g1, int d0, int d1, int a0, int a1, int p0,
			 int p1, int order, const char *what)
{
	int gs[2] = {g0, g1}, dist[2] = {d0, d1}, dargs[2] = {a0, a1}, ps[2] = {p0, p1};
	int r0 = me / p1, r1 = me % p1, i, j, k = 0, n, got[256];
	MPI_Datatype t;

	MPI_OK(MPI_Type_create_darray(np, me, 2, gs, dist, dargs, ps, order, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	{
		MPI_Aint lb, ext;

		MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
		CHECK(lb == 0 && ext == (MPI_Aint)(g0 * g1 * sizeof(int)),
		      "%s: lb %ld extent %ld, want the whole array", what, (long)lb, (long)ext);
	}
	n = darray_indices(t, g0 * g1, got);
	/* Memory order: C order is row-major over (g0, g1); Fortran order is
	 * column-major, so the flat index of (i, j) is i + j * g0. */
	if (order == MPI_ORDER_C) {
		for (i = 0; i < g0; i++)
			for (j = 0; j < g1; j++)
				if (owns(i, g0, d0, a0, p0, r0) && owns(j, g1, d1, a1, p1, r1)) {
					CHECK(k < n && got[k] == i * g1 + j,
					      "%s: element %d is %d, want %d", what, k,
					      k < n ? got[k] : -1, i * g1 + j);
					k++;
				}
	} else {
		for (j = 0; j < g1; j++)
			for (i = 0; i < g0; i++)
				if (owns(i, g0, d0, a0, p0, r0) && owns(j, g1, d1, a1, p1, r1)) {
					CHECK(k < n && got[k] == i + j * g0,
					      "%s: element %d is %d, want %d", what, k,
					      k < n ? got[k] : -1, i + j * g0);
					k++;
				}
	}
	CHECK(k == n, "%s: %d elements, want %d", what, n, k);
	MPI_OK(MPI_Type_free(&t));
}

static void case_darray(void)
{
	const int B = MPI_DISTRIBUTE_BLOCK, Y = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
		  DF = MPI_DISTRIBUTE_DFLT_DARG;
	int me, gs[2] = {10, 1}, dist[2] = {Y, N}, dargs[2] = {2, DF}, ps[2] = {2, 1}, g[10], i;
	MPI_Datatype t, bad;

	/* Every rank of grids of 2, 3 and 4 processes, both orders. */
	for (me = 0; me < 2; me++) {
		check_darray(2, me, 10, 1, B, N, DF, DF, 2, 1, MPI_ORDER_C, "block 10/2");
		check_darray(2, me, 11, 1, B, N, DF, DF, 2, 1, MPI_ORDER_C, "block 11/2");
		check_darray(2, me, 10, 1, Y, N, 2, DF, 2, 1, MPI_ORDER_C, "cyclic(2) 10/2");
		check_darray(2, me, 7, 1, Y, N, DF, DF, 2, 1, MPI_ORDER_FORTRAN, "cyclic 7/2");
		check_darray(2, me, 4, 6, B, N, DF, DF, 2, 1, MPI_ORDER_C, "4x6 block,none");
		check_darray(2, me, 4, 6, N, Y, DF, 4, 1, 2, MPI_ORDER_FORTRAN,
			     "4x6 none,cyclic(4) Fortran");
		check_darray(2, me, 5, 3, B, N, 4, DF, 2, 1, MPI_ORDER_FORTRAN, "5x3 block(4)");
	}
	for (me = 0; me < 4; me++) {
		check_darray(4, me, 5, 7, B, Y, DF, 3, 2, 2, MPI_ORDER_C, "5x7 block,cyclic(3)");
		check_darray(4, me, 5, 7, Y, B, DF, DF, 2, 2, MPI_ORDER_FORTRAN,
			     "5x7 cyclic,block Fortran");
	}
	for (me = 0; me < 3; me++)
		check_darray(3, me, 8, 2, Y, N, 1, DF, 3, 1, MPI_ORDER_C, "8x2 cyclic/3");
	/* A rank whose block is empty: 5 in blocks of 4 over 2, then 3 ranks of 2. */
	check_darray(2, 1, 4, 1, B, N, 4, DF, 2, 1, MPI_ORDER_C, "empty block");
	/* Sent between the two ranks: rank 0 sends its cyclic(2) part. */
	MPI_OK(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	if (rank == 0) {
		for (i = 0; i < 10; i++)
			g[i] = 1000 + i;
		MPI_OK(MPI_Send(g, 1, t, 1, 7, MPI_COMM_WORLD));
	} else if (rank == 1) {
		int want[6] = {1000, 1001, 1004, 1005, 1008, 1009}, got[6], n;
		MPI_Status st;

		memset(g, 0, sizeof(g));
		MPI_OK(MPI_Recv(got, 6, MPI_INT, 0, 7, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
		CHECK(n == 6 && !memcmp(got, want, sizeof(want)), "darray sent: %d ints", n);
	}
	MPI_OK(MPI_Type_free(&t));
	/* Misuse. */
	expect_class(MPI_Type_create_darray(3, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "psizes product 2, size 3");
	expect_class(MPI_Type_create_darray(2, 2, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "rank 2 of 2");
	ps[0] = 1;
	ps[1] = 2;
	expect_class(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "MPI_DISTRIBUTE_NONE over 2 processes");
	ps[0] = 2;
	ps[1] = 1;
	dist[0] = B;
	dargs[0] = 4; /* 4 * 2 < 10 */
	expect_class(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "blocks too small");
	dist[0] = 77;
	expect_class(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "distribution 77");
	dist[0] = Y;
	dargs[0] = 0;
	expect_class(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "darg 0");
	dargs[0] = 2;
	expect_class(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, 3, MPI_INT, &bad),
		     MPI_ERR_ARG, "order 3");
	gs[0] = 0;
	expect_class(MPI_Type_create_darray(2, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &bad),
		     MPI_ERR_ARG, "gsize 0");
}

/* --- Matching types --- */

static void case_match(void)
{
	static const struct {
		int cls, size;
		MPI_Datatype want;
	} m[] = {
		{MPI_TYPECLASS_REAL, 4, MPI_REAL4},	     {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
		{MPI_TYPECLASS_REAL, 16, MPI_REAL16},	     {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
		{MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},    {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
		{MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},    {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},
		{MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
		{MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
	};
	MPI_Datatype t, t2;
	size_t i;
	int sz;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		t = MPI_DATATYPE_NULL;
		MPI_OK(MPI_Type_match_size(m[i].cls, m[i].size, &t));
		CHECK(t == m[i].want, "match_size(%d, %d)", m[i].cls, m[i].size);
		MPI_OK(MPI_Type_size(t, &sz));
		CHECK(sz == m[i].size, "match_size(%d, %d): size %d", m[i].cls, m[i].size, sz);
	}
	expect_class(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t), MPI_ERR_ARG, "a real of 2");
	expect_class(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 32, &t), MPI_ERR_ARG,
		     "an integer of 32");
	expect_class(MPI_Type_match_size(42, 4, &t), MPI_ERR_ARG, "typeclass 42");
	expect_class(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, NULL), MPI_ERR_ARG, "NULL result");

	MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 4, "f90 real p=6: %d bytes", sz);
	MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t2));
	CHECK(t == t2, "f90 real: another handle for the same arguments");
	expect_class(MPI_Type_free(&t2), MPI_ERR_TYPE, "freeing an f90 type");
	MPI_OK(MPI_Type_create_f90_real(7, 38, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 8, "f90 real p=7 r=38: %d bytes", sz);
	MPI_OK(MPI_Type_create_f90_real(30, MPI_UNDEFINED, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 16, "f90 real p=30: %d bytes", sz);
	expect_class(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t), MPI_ERR_ARG, "p=40");
	MPI_OK(MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 16, "f90 complex p=15: %d bytes", sz);
	MPI_OK(MPI_Type_create_f90_integer(3, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 2, "f90 integer r=3: %d bytes", sz);
	MPI_OK(MPI_Type_create_f90_integer(10, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 8, "f90 integer r=10: %d bytes", sz);
	/* gfortran's INTEGER(16) holds 38 digits, nothing holds 39. */
	MPI_OK(MPI_Type_create_f90_integer(19, &t2));
	MPI_OK(MPI_Type_size(t2, &sz));
	CHECK(sz == 16, "f90 integer r=19: %d bytes", sz);
	expect_class(MPI_Type_create_f90_integer(39, &t2), MPI_ERR_ARG, "r=39");
	/* Usable for communication and reductions as their base type. */
	{
		long long in = rank + 1, out = 0;

		MPI_OK(MPI_Allreduce(&in, &out, 1, t, MPI_SUM, MPI_COMM_WORLD));
		CHECK(out == (long long)size * (size + 1) / 2, "f90 integer sum %lld", out);
	}
}

/* --- external32 --- */

static void check_packed(const unsigned char *got, const unsigned char *want, size_t n,
			 const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			CHECK(0, "%s: byte %zu is 0x%02x, want 0x%02x", what, i, got[i], want[i]);
			return;
		}
}

/* Pack one value of t, compare with the encoding, unpack and compare. */
static void ext_one(const void *value, MPI_Datatype t, const unsigned char *want, size_t n,
		    size_t native, const char *what)
{
	unsigned char out[64], back[64];
	MPI_Aint pos = 0, sz;

	MPI_OK(MPI_Pack_external_size("external32", 1, t, &sz));
	CHECK(sz == (MPI_Aint)n, "%s: external size %ld, want %zu", what, (long)sz, n);
	memset(out, 0xee, sizeof(out));
	MPI_OK(MPI_Pack_external("external32", value, 1, t, out, sizeof(out), &pos));
	CHECK(pos == (MPI_Aint)n, "%s: position %ld, want %zu", what, (long)pos, n);
	check_packed(out, want, n, what);
	CHECK(out[n] == 0xee, "%s: a byte past the packed value was written", what);
	memset(back, 0, sizeof(back));
	pos = 0;
	MPI_OK(MPI_Unpack_external("external32", out, (MPI_Aint)n, &pos, back, 1, t));
	CHECK(pos == (MPI_Aint)n && !memcmp(back, value, native), "%s: unpacked value differs",
	      what);
}

static void case_external32(void)
{
	int i32 = 0x01020304;
	short s16 = -2;
	long l = -5;
	unsigned long ul = 0xfedcba98ul;
	double d = 1.0;
	float f = -2.0f;
	long double ld = 1.0L;
	float _Complex cf = 1.0f - 2.0f * I;
	long long ll = 0x0102030405060708ll;
	wchar_t wc = 0x263a;
	struct {
		double v;
		int i;
	} di = {0.5, 7};
	static const unsigned char e_i32[] = {1, 2, 3, 4}, e_s16[] = {0xff, 0xfe},
				   e_l[] = {0xff, 0xff, 0xff, 0xfb}, e_ul[] = {0xfe, 0xdc, 0xba, 0x98},
				   e_d[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, e_f[] = {0xc0, 0, 0, 0},
				   e_ld[16] = {0x3f, 0xff},
				   e_cf[] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0},
				   e_ll[] = {1, 2, 3, 4, 5, 6, 7, 8}, e_wc[] = {0x26, 0x3a},
				   e_di[] = {0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

	ext_one(&i32, MPI_INT, e_i32, 4, 4, "MPI_INT");
	ext_one(&i32, MPI_INTEGER, e_i32, 4, 4, "MPI_INTEGER");
	ext_one(&s16, MPI_SHORT, e_s16, 2, 2, "MPI_SHORT");
	ext_one(&l, MPI_LONG, e_l, 4, sizeof(long), "MPI_LONG");
	ext_one(&ul, MPI_UNSIGNED_LONG, e_ul, 4, sizeof(long), "MPI_UNSIGNED_LONG");
	ext_one(&d, MPI_DOUBLE, e_d, 8, 8, "MPI_DOUBLE");
	ext_one(&f, MPI_FLOAT, e_f, 4, 4, "MPI_FLOAT");
	ext_one(&ld, MPI_LONG_DOUBLE, e_ld, 16, 10, "MPI_LONG_DOUBLE");
	ext_one(&cf, MPI_C_FLOAT_COMPLEX, e_cf, 8, 8, "MPI_C_FLOAT_COMPLEX");
	ext_one(&ll, MPI_LONG_LONG, e_ll, 8, 8, "MPI_LONG_LONG");
	ext_one(&ll, MPI_AINT, e_ll, 8, 8, "MPI_AINT");
	ext_one(&wc, MPI_WCHAR, e_wc, 2, sizeof(wchar_t), "MPI_WCHAR");
	ext_one(&di, MPI_DOUBLE_INT, e_di, 12, 12, "MPI_DOUBLE_INT");
	ext_one(&s16, MPI_LOGICAL2, e_s16, 2, 2, "MPI_LOGICAL2");
	ext_one(&ll, MPI_LOGICAL8, e_ll, 8, 8, "MPI_LOGICAL8");
#if defined(__SIZEOF_INT128__)
	{
		__int128 i16 = ((__int128)0x0102030405060708ll << 64) | 0x090a0b0c0d0e0f10ll;
		static const unsigned char e_i16[] = {1, 2,  3,  4,  5,  6,  7,  8,
						      9, 10, 11, 12, 13, 14, 15, 16};

		ext_one(&i16, MPI_INTEGER16, e_i16, 16, 16, "MPI_INTEGER16");
	}
#endif

	/* A vector with gaps of a struct: the external form is the data only. */
	{
		struct {
			char c;
			int i;
		} recs[3] = {{'a', 0x11223344}, {'b', 0x55667788}, {'c', 0x01020304}}, back[3];
		int bl[2] = {1, 1};
		MPI_Aint disp[2] = {0, offsetof(__typeof__(recs[0]), i)}, pos = 0, sz;
		MPI_Datatype types[2] = {MPI_CHAR, MPI_INT}, st, vec;
		unsigned char out[32];
		static const unsigned char want[] = {'a', 0x11, 0x22, 0x33, 0x44,
						     'c', 0x01, 0x02, 0x03, 0x04};

		MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &st));
		MPI_OK(MPI_Type_vector(2, 1, 2, st, &vec));
		MPI_OK(MPI_Type_commit(&vec));
		MPI_OK(MPI_Pack_external_size("external32", 1, vec, &sz));
		CHECK(sz == 10, "struct vector: external size %ld", (long)sz);
		MPI_OK(MPI_Pack_external("external32", recs, 1, vec, out, sizeof(out), &pos));
		CHECK(pos == 10, "struct vector: position %ld", (long)pos);
		check_packed(out, want, 10, "struct vector");
		memset(back, 0, sizeof(back));
		pos = 0;
		MPI_OK(MPI_Unpack_external("external32", out, 10, &pos, back, 1, vec));
		CHECK(back[0].c == 'a' && back[0].i == 0x11223344 && back[1].c == 0 &&
		      back[2].c == 'c' && back[2].i == 0x01020304, "struct vector unpacked");
		/* The _c forms. */
		{
			MPI_Count cpos = 0, csz;

			MPI_OK(MPI_Pack_external_size_c("external32", 3, vec, &csz));
			CHECK(csz == 30, "external size _c %lld", csz);
			MPI_OK(MPI_Pack_external_c("external32", recs, 1, vec, out, 32, &cpos));
			CHECK(cpos == 10, "pack_external_c position %lld", cpos);
			check_packed(out, want, 10, "pack_external_c");
			cpos = 0;
			memset(back, 0, sizeof(back));
			MPI_OK(MPI_Unpack_external_c("external32", out, 10, &cpos, back, 1, vec));
			CHECK(cpos == 10 && back[2].i == 0x01020304, "unpack_external_c");
		}
		/* Misuse. */
		pos = 0;
		expect_class(MPI_Pack_external("native", recs, 1, vec, out, 32, &pos),
			     MPI_ERR_UNSUPPORTED_DATAREP, "datarep native");
		expect_class(MPI_Pack_external(NULL, recs, 1, vec, out, 32, &pos), MPI_ERR_ARG,
			     "datarep NULL");
		expect_class(MPI_Pack_external("external32", recs, 1, vec, out, 9, &pos),
			     MPI_ERR_TRUNCATE, "10 bytes into 9");
		CHECK(pos == 0, "a failed pack moved the position");
		expect_class(MPI_Pack_external("external32", recs, -1, vec, out, 32, &pos),
			     MPI_ERR_COUNT, "count -1");
		expect_class(MPI_Unpack_external("external32", out, 5, &pos, back, 1, vec),
			     MPI_ERR_TRUNCATE, "unpack 10 bytes from 5");
		expect_class(MPI_Pack_external_size("external64", 1, vec, &sz),
			     MPI_ERR_UNSUPPORTED_DATAREP, "size in external64");
		MPI_OK(MPI_Type_free(&st));
		expect_class(MPI_Pack_external("external32", recs, 1, st, out, 32, &pos),
			     MPI_ERR_TYPE, "a freed type");
		MPI_OK(MPI_Type_free(&vec));
		/* Count 0: nothing written, the position stays. */
		pos = 3;
		MPI_OK(MPI_Pack_external("external32", NULL, 0, MPI_INT, out, 3, &pos));
		CHECK(pos == 3, "count 0 moved the position to %ld", (long)pos);
	}
	/* A long beyond 32 bits has no external32 form. */
	{
		long big = 1L << 40;
		unsigned char out[8];
		MPI_Aint pos = 0;

		expect_class(MPI_Pack_external("external32", &big, 1, MPI_LONG, out, 8, &pos),
			     MPI_ERR_CONVERSION, "a long of 2^40");
	}
	/* Between ranks: rank 0 packs, rank 1 unpacks. */
	if (rank == 0) {
		double v[4] = {1.5, -3.25, 1e300, 0};
		unsigned char out[32];
		MPI_Aint pos = 0;

		MPI_OK(MPI_Pack_external("external32", v, 4, MPI_DOUBLE, out, 32, &pos));
		MPI_OK(MPI_Send(out, (int)pos, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
	} else if (rank == 1) {
		double v[4];
		unsigned char in[32];
		MPI_Aint pos = 0;

		MPI_OK(MPI_Recv(in, 32, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(in[0] == 0x3f && in[1] == 0xf8, "1.5 in external32: %02x %02x", in[0], in[1]);
		MPI_OK(MPI_Unpack_external("external32", in, 32, &pos, v, 4, MPI_DOUBLE));
		CHECK(v[0] == 1.5 && v[1] == -3.25 && v[2] == 1e300 && v[3] == 0,
		      "doubles through external32");
	}
}

/* --- Attributes on datatypes --- */

static int copies, deletes, last_deleted;

static int copy_plus_one(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
	(void)t;
	(void)key;
	copies++;
	*(intptr_t *)out = (intptr_t)in + 1 + (extra ? 100 : 0);
	*flag = 1;
	return MPI_SUCCESS;
}

static int note_delete(MPI_Datatype t, int key, void *value, void *extra)
{
	(void)t;
	(void)key;
	(void)extra;
	deletes++;
	last_deleted = (int)(intptr_t)value;
	return MPI_SUCCESS;
}

static int refuse_copy(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
	(void)t;
	(void)key;
	(void)extra;
	(void)in;
	(void)out;
	*flag = 0;
	return MPI_ERR_OTHER;
}

static void case_typeattr(void)
{
	MPI_Datatype t, d, d2;
	int key, key2, key3, ckey, flag;
	void *v;

	MPI_OK(MPI_Type_create_keyval(copy_plus_one, note_delete, &key, NULL));
	MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &key2, NULL));
	MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, note_delete, &key3, NULL));
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
	MPI_OK(MPI_Type_get_attr(t, key, &v, &flag));
	CHECK(!flag, "an attribute before any was set");
	MPI_OK(MPI_Type_set_attr(t, key, (void *)(intptr_t)10));
	MPI_OK(MPI_Type_set_attr(t, key2, (void *)(intptr_t)20));
	MPI_OK(MPI_Type_set_attr(t, key3, (void *)(intptr_t)30));
	MPI_OK(MPI_Type_get_attr(t, key, &v, &flag));
	CHECK(flag && (intptr_t)v == 10, "get: %d %ld", flag, (long)(intptr_t)v);
	/* Replacing calls the delete callback on the old value. */
	MPI_OK(MPI_Type_set_attr(t, key, (void *)(intptr_t)11));
	CHECK(deletes == 1 && last_deleted == 10, "replace: %d deletes, last %d", deletes,
	      last_deleted);
	/* Dup: copy callbacks. */
	MPI_OK(MPI_Type_dup(t, &d));
	CHECK(copies == 1, "dup: %d copies", copies);
	MPI_OK(MPI_Type_get_attr(d, key, &v, &flag));
	CHECK(flag && (intptr_t)v == 12, "dup: key copied as %ld", (long)(intptr_t)v);
	MPI_OK(MPI_Type_get_attr(d, key2, &v, &flag));
	CHECK(!flag, "MPI_TYPE_NULL_COPY_FN copied");
	MPI_OK(MPI_Type_get_attr(d, key3, &v, &flag));
	CHECK(flag && (intptr_t)v == 30, "MPI_TYPE_DUP_FN: %d %ld", flag, (long)(intptr_t)v);
	/* Delete, then free: delete callbacks. */
	MPI_OK(MPI_Type_delete_attr(d, key));
	CHECK(deletes == 2 && last_deleted == 12, "delete_attr: %d deletes", deletes);
	expect_class(MPI_Type_delete_attr(d, key), MPI_ERR_KEYVAL, "deleting an absent attribute");
	MPI_OK(MPI_Type_free(&d));
	CHECK(deletes == 3 && last_deleted == 30, "free: %d deletes, last %d", deletes,
	      last_deleted);
	/* A copy callback that fails: the dup fails, nothing is left. */
	{
		int kf;

		MPI_OK(MPI_Type_create_keyval(refuse_copy, note_delete, &kf, NULL));
		MPI_OK(MPI_Type_set_attr(t, kf, (void *)(intptr_t)5));
		d2 = MPI_DATATYPE_NULL;
		expect_class(MPI_Type_dup(t, &d2), MPI_ERR_OTHER, "dup with a failing copy");
		CHECK(d2 == MPI_DATATYPE_NULL, "a failed dup returned a type");
		MPI_OK(MPI_Type_delete_attr(t, kf));
		MPI_OK(MPI_Type_free_keyval(&kf));
	}
	deletes = 0;
	/* Predefined types take attributes too. */
	MPI_OK(MPI_Type_set_attr(MPI_INT, key2, (void *)(intptr_t)7));
	MPI_OK(MPI_Type_get_attr(MPI_INT, key2, &v, &flag));
	CHECK(flag && (intptr_t)v == 7, "attribute on MPI_INT");
	MPI_OK(MPI_Type_delete_attr(MPI_INT, key2));
	/* Keys of the other kind. */
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
	expect_class(MPI_Type_set_attr(t, ckey, NULL), MPI_ERR_KEYVAL, "a communicator key on a type");
	expect_class(MPI_Type_get_attr(t, ckey, &v, &flag), MPI_ERR_KEYVAL,
		     "get with a communicator key");
	expect_class(MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL), MPI_ERR_KEYVAL,
		     "a type key on a communicator");
	expect_class(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL, "Comm_free_keyval of a type key");
	expect_class(MPI_Type_free_keyval(&ckey), MPI_ERR_KEYVAL, "Type_free_keyval of a comm key");
	MPI_OK(MPI_Comm_free_keyval(&ckey));
	expect_class(MPI_Type_set_attr(MPI_DATATYPE_NULL, key, NULL), MPI_ERR_TYPE,
		     "set on MPI_DATATYPE_NULL");
	expect_class(MPI_Type_get_attr(t, 12345, &v, &flag), MPI_ERR_KEYVAL, "key 12345");
	/* Freeing the type deletes what remains: key (11), key2 (20), key3 (30). */
	MPI_OK(MPI_Type_free(&t));
	CHECK(deletes == 2, "free of the original: %d delete callbacks", deletes);
	MPI_OK(MPI_Type_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "freed key not MPI_KEYVAL_INVALID");
	MPI_OK(MPI_Type_free_keyval(&key2));
	MPI_OK(MPI_Type_free_keyval(&key3));
}

/* --- A freed keyval keeps serving its attributes --- */

static int comm_deletes, comm_copies;

static int comm_copy(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
	(void)c;
	(void)key;
	(void)extra;
	comm_copies++;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

static int comm_delete(MPI_Comm c, int key, void *value, void *extra)
{
	(void)c;
	(void)key;
	(void)value;
	(void)extra;
	comm_deletes++;
	return MPI_SUCCESS;
}

static void case_keyvalfree(void)
{
	MPI_Comm c, c2;
	MPI_Datatype t;
	int key, saved, again, other, flag, a = 1, b = 2;
	void *v;

	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	MPI_OK(MPI_Comm_create_keyval(comm_copy, comm_delete, &key, NULL));
	saved = key;
	MPI_OK(MPI_Comm_set_attr(c, key, &a));
	MPI_OK(MPI_Comm_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "freed key not MPI_KEYVAL_INVALID");
	/* The attribute still works with its callbacks. */
	MPI_OK(MPI_Comm_get_attr(c, saved, &v, &flag));
	CHECK(flag && v == &a, "get after the key was freed");
	MPI_OK(MPI_Comm_set_attr(c, saved, &b));
	CHECK(comm_deletes == 1, "replace after the key was freed: %d deletes", comm_deletes);
	MPI_OK(MPI_Comm_get_attr(c, saved, &v, &flag));
	CHECK(flag && v == &b, "the replaced value");
	MPI_OK(MPI_Comm_dup(c, &c2));
	CHECK(comm_copies == 1, "dup after the key was freed: %d copies", comm_copies);
	/* Its number is not given to a new key while attributes use it. */
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &other, NULL));
	CHECK(other != saved, "a key in use was given again (%d)", other);
	/* Freed again (a copy of the handle) while attributes use it: nothing
	 * more to free, the attributes keep it. */
	again = saved;
	MPI_OK(MPI_Comm_free_keyval(&again));
	CHECK(again == MPI_KEYVAL_INVALID, "freed again: not MPI_KEYVAL_INVALID");
	MPI_OK(MPI_Comm_delete_attr(c, saved));
	CHECK(comm_deletes == 2, "delete after the key was freed: %d", comm_deletes);
	MPI_OK(MPI_Comm_free(&c2));
	CHECK(comm_deletes == 3, "free of the dup: %d deletes", comm_deletes);
	/* No attribute uses it now: the number is gone. */
	expect_class(MPI_Comm_get_attr(c, saved, &v, &flag), MPI_ERR_KEYVAL,
		     "the key once no attribute uses it");
	again = saved;
	expect_class(MPI_Comm_free_keyval(&again), MPI_ERR_KEYVAL,
		     "freeing the key once no attribute uses it");
	MPI_OK(MPI_Comm_free_keyval(&other));
	MPI_OK(MPI_Comm_free(&c));

	/* The same for datatypes. */
	deletes = 0;
	MPI_OK(MPI_Type_contiguous(3, MPI_CHAR, &t));
	MPI_OK(MPI_Type_create_keyval(copy_plus_one, note_delete, &key, NULL));
	saved = key;
	MPI_OK(MPI_Type_set_attr(t, key, (void *)(intptr_t)1));
	MPI_OK(MPI_Type_free_keyval(&key));
	MPI_OK(MPI_Type_get_attr(t, saved, &v, &flag));
	CHECK(flag && (intptr_t)v == 1, "type attribute after its key was freed");
	MPI_OK(MPI_Type_set_attr(t, saved, (void *)(intptr_t)2));
	CHECK(deletes == 1 && last_deleted == 1, "type replace: %d deletes", deletes);
	MPI_OK(MPI_Type_free(&t));
	CHECK(deletes == 2 && last_deleted == 2, "type free: %d deletes", deletes);
	expect_class(MPI_Type_set_attr(MPI_INT, saved, NULL), MPI_ERR_KEYVAL,
		     "the type key once no attribute uses it");
}

/* --- Fortran and C++ datatypes --- */


static void case_fortran(void)
{
	static const struct {
		MPI_Datatype t;
		int size;
		const char *name;
	} sizes[] = {
		{MPI_INTEGER, 4, "MPI_INTEGER"},
		{MPI_REAL, 4, "MPI_REAL"},
		{MPI_DOUBLE_PRECISION, 8, "MPI_DOUBLE_PRECISION"},
		{MPI_COMPLEX, 8, "MPI_COMPLEX"},
		{MPI_DOUBLE_COMPLEX, 16, "MPI_DOUBLE_COMPLEX"},
		{MPI_LOGICAL, 4, "MPI_LOGICAL"},
		{MPI_CHARACTER, 1, "MPI_CHARACTER"},
		{MPI_2REAL, 8, "MPI_2REAL"},
		{MPI_2DOUBLE_PRECISION, 16, "MPI_2DOUBLE_PRECISION"},
		{MPI_2INTEGER, 8, "MPI_2INTEGER"},
		{MPI_INTEGER1, 1, "MPI_INTEGER1"},
		{MPI_INTEGER2, 2, "MPI_INTEGER2"},
		{MPI_INTEGER4, 4, "MPI_INTEGER4"},
		{MPI_INTEGER8, 8, "MPI_INTEGER8"},
		{MPI_REAL4, 4, "MPI_REAL4"},
		{MPI_REAL8, 8, "MPI_REAL8"},
		{MPI_REAL16, 16, "MPI_REAL16"},
		{MPI_COMPLEX8, 8, "MPI_COMPLEX8"},
		{MPI_COMPLEX16, 16, "MPI_COMPLEX16"},
		{MPI_COMPLEX32, 32, "MPI_COMPLEX32"},
		{MPI_CXX_BOOL, 1, "MPI_CXX_BOOL"},
		{MPI_CXX_FLOAT_COMPLEX, 8, "MPI_CXX_FLOAT_COMPLEX"},
		{MPI_CXX_DOUBLE_COMPLEX, 16, "MPI_CXX_DOUBLE_COMPLEX"},
		{MPI_CXX_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double), "MPI_CXX_LONG_DOUBLE_COMPLEX"},
		{MPI_LOGICAL1, 1, "MPI_LOGICAL1"},
		{MPI_LOGICAL2, 2, "MPI_LOGICAL2"},
		{MPI_LOGICAL4, 4, "MPI_LOGICAL4"},
		{MPI_LOGICAL8, 8, "MPI_LOGICAL8"},
		{MPI_INTEGER16, 16, "MPI_INTEGER16"},
	};
	size_t i;
	int sz, len, n;
	char name[MPI_MAX_OBJECT_NAME];
	MPI_Status st;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		MPI_Aint lb, ext;

		MPI_OK(MPI_Type_size(sizes[i].t, &sz));
		MPI_OK(MPI_Type_get_extent(sizes[i].t, &lb, &ext));
		MPI_OK(MPI_Type_get_name(sizes[i].t, name, &len));
		CHECK(sz == sizes[i].size && lb == 0 && ext == sz && !strcmp(name, sizes[i].name),
		      "%s: size %d extent %ld name %s", sizes[i].name, sz, (long)ext, name);
	}
	/* Point-to-point: 2DOUBLE_PRECISION counts two elements each. */
	if (rank == 0) {
		double p[3][2] = {{1, 2}, {3, 4}, {5, 6}};
		int32_t ints[4] = {-1, 2, -3, 4};

		MPI_OK(MPI_Send(p, 3, MPI_2DOUBLE_PRECISION, 1, 11, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(ints, 4, MPI_INTEGER, 1, 12, MPI_COMM_WORLD));
	} else if (rank == 1) {
		double p[3][2];
		int32_t ints[4];

		MPI_OK(MPI_Recv(p, 3, MPI_2DOUBLE_PRECISION, 0, 11, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_elements(&st, MPI_2DOUBLE_PRECISION, &n));
		CHECK(n == 6 && p[2][1] == 6, "2DOUBLE_PRECISION: %d elements", n);
		MPI_OK(MPI_Recv(ints, 4, MPI_INTEGER, 0, 12, MPI_COMM_WORLD, &st));
		CHECK(ints[0] == -1 && ints[3] == 4, "MPI_INTEGER received");
	}
	/* Reductions over all ranks. */
	{
		int32_t in = rank + 1, out;
		float rin = 0.5f * (rank + 1), rout;
		double din = rank + 1, dout;
		__float128 qin = (__float128)(rank + 1), qout;
		float _Complex cin = (rank + 1) + 1.0f * I, cout;
		double _Complex zin = 1.0 + (rank + 1) * I, zout;
		int64_t i8in = (int64_t)1 << 40 | rank, i8out;
		int32_t lin = rank == 0 ? 7 : -1, lout; /* non-zero: .true. */
		int32_t fin = rank == 0 ? 0 : 5, fout;
		_Bool bin = rank == 0, bout;
		int tot = size * (size + 1) / 2;

		MPI_OK(MPI_Allreduce(&in, &out, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
		CHECK(out == tot, "INTEGER sum %d", out);
		MPI_OK(MPI_Allreduce(&in, &out, 1, MPI_INTEGER4, MPI_MAX, MPI_COMM_WORLD));
		CHECK(out == size, "INTEGER4 max %d", out);
		MPI_OK(MPI_Allreduce(&in, &out, 1, MPI_INTEGER, MPI_BOR, MPI_COMM_WORLD));
		MPI_OK(MPI_Allreduce(&rin, &rout, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD));
		CHECK(rout == 0.5f * tot, "REAL sum %g", rout);
		MPI_OK(MPI_Allreduce(&din, &dout, 1, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD));
		{
			double fact = 1;
			int k;

			for (k = 2; k <= size; k++)
				fact *= k;
			CHECK(dout == fact, "DOUBLE PRECISION prod %g", dout);
		}
		MPI_OK(MPI_Allreduce(&qin, &qout, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
		CHECK(qout == (__float128)tot, "REAL16 sum %g", (double)qout);
		MPI_OK(MPI_Allreduce(&qin, &qout, 1, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD));
		CHECK(qout == 1, "REAL16 min %g", (double)qout);
		MPI_OK(MPI_Allreduce(&cin, &cout, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
		CHECK(crealf(cout) == tot && cimagf(cout) == size, "COMPLEX sum");
		MPI_OK(MPI_Allreduce(&zin, &zout, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
		if (size == 2) /* (1 + i)(1 + 2i) = -1 + 3i */
			CHECK(creal(zout) == -1 && cimag(zout) == 3, "DOUBLE COMPLEX prod %g%+gi",
			      creal(zout), cimag(zout));
		MPI_OK(MPI_Allreduce(&i8in, &i8out, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD));
		CHECK(i8out == ((int64_t)size << 40) + size * (size - 1) / 2, "INTEGER8 sum");
		MPI_OK(MPI_Allreduce(&lin, &lout, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
		CHECK(lout != 0, "LOGICAL land of non-zero values: %d", lout);
		MPI_OK(MPI_Allreduce(&fin, &fout, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
		CHECK(fout == 0, "LOGICAL land with a .false.: %d", fout);
		MPI_OK(MPI_Allreduce(&fin, &fout, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
		CHECK(fout != 0 || size == 1, "LOGICAL lor: %d", fout);
		MPI_OK(MPI_Allreduce(&lin, &lout, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
		CHECK(lout == (size % 2), "LOGICAL lxor of %d trues: %d", size, lout);
		MPI_OK(MPI_Allreduce(&bin, &bout, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD));
		CHECK(bout, "CXX_BOOL lor");
		/* The optional kinds: logicals of 1, 2, 4 and 8 bytes, INTEGER16. */
		{
			int8_t l1[2] = {rank == 0 ? 3 : 1, rank == 0}, l1o[2];
			int16_t l2[2] = {-1, rank != 0}, l2o[2];
			int32_t l4 = rank == 0, l4o;
			int64_t l8[2] = {(int64_t)1 << 40, 0}, l8o[2];

			MPI_OK(MPI_Allreduce(l1, l1o, 2, MPI_LOGICAL1, MPI_LAND, MPI_COMM_WORLD));
			CHECK(l1o[0] == 1 && l1o[1] == (size == 1), "LOGICAL1 land %d %d", l1o[0],
			      l1o[1]);
			MPI_OK(MPI_Allreduce(l1, l1o, 2, MPI_LOGICAL1, MPI_LOR, MPI_COMM_WORLD));
			CHECK(l1o[0] == 1 && l1o[1] == 1, "LOGICAL1 lor %d %d", l1o[0], l1o[1]);
			MPI_OK(MPI_Allreduce(l2, l2o, 2, MPI_LOGICAL2, MPI_LXOR, MPI_COMM_WORLD));
			CHECK(l2o[0] == size % 2 && l2o[1] == (size - 1) % 2, "LOGICAL2 lxor %d %d",
			      l2o[0], l2o[1]);
			MPI_OK(MPI_Allreduce(&l4, &l4o, 1, MPI_LOGICAL4, MPI_LOR, MPI_COMM_WORLD));
			CHECK(l4o == 1, "LOGICAL4 lor %d", l4o);
			/* .true. in the high bytes only: still .true. */
			MPI_OK(MPI_Allreduce(l8, l8o, 2, MPI_LOGICAL8, MPI_LAND, MPI_COMM_WORLD));
			CHECK(l8o[0] == 1 && l8o[1] == 0, "LOGICAL8 land %lld %lld",
			      (long long)l8o[0], (long long)l8o[1]);
			expect_class(MPI_Allreduce(l1, l1o, 1, MPI_LOGICAL1, MPI_SUM, MPI_COMM_WORLD),
				     MPI_ERR_OP, "SUM on MPI_LOGICAL1");
			expect_class(MPI_Allreduce(l8, l8o, 1, MPI_LOGICAL8, MPI_BAND, MPI_COMM_WORLD),
				     MPI_ERR_OP, "BAND on MPI_LOGICAL8");
		}
#if defined(__SIZEOF_INT128__)
		{
			/* Values past 64 bits: 2^100 + rank from each rank. */
			__int128 big = ((__int128)1 << 100) + rank, bigo, want;

			MPI_OK(MPI_Allreduce(&big, &bigo, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
			want = ((__int128)size << 100) + size * (size - 1) / 2;
			CHECK(bigo == want, "INTEGER16 sum: high %llx low %llx",
			      (unsigned long long)(bigo >> 64), (unsigned long long)bigo);
			big = -big;
			MPI_OK(MPI_Allreduce(&big, &bigo, 1, MPI_INTEGER16, MPI_MIN, MPI_COMM_WORLD));
			CHECK(bigo == -(((__int128)1 << 100) + size - 1), "INTEGER16 min");
			MPI_OK(MPI_Allreduce(&big, &bigo, 1, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD));
			CHECK(bigo == -((__int128)1 << 100), "INTEGER16 max");
			expect_class(MPI_Allreduce(&big, &bigo, 1, MPI_INTEGER16, MPI_LOR,
						   MPI_COMM_WORLD),
				     MPI_ERR_OP, "LOR on MPI_INTEGER16");
		}
#endif
		/* MINLOC/MAXLOC on Fortran pairs. */
		{
			float r2[2] = {(float)(rank == 1 ? -5 : rank), (float)rank}, r2o[2];
			double d2[2] = {(double)(10 - rank), (double)rank}, d2o[2];
			int32_t i2[2] = {rank % 2, rank}, i2o[2];

			MPI_OK(MPI_Allreduce(r2, r2o, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
			CHECK(r2o[0] == -5 && r2o[1] == 1, "2REAL minloc %g at %g", r2o[0], r2o[1]);
			MPI_OK(MPI_Allreduce(d2, d2o, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC,
					     MPI_COMM_WORLD));
			CHECK(d2o[0] == 10 && d2o[1] == 0, "2DOUBLE_PRECISION maxloc");
			MPI_OK(MPI_Allreduce(i2, i2o, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
			CHECK(i2o[0] == 1 && i2o[1] == 1, "2INTEGER maxloc: ties take the lowest index");
		}
		/* Where the standard defines no operation. */
		expect_class(MPI_Allreduce(&in, &out, 1, MPI_INTEGER, MPI_LAND, MPI_COMM_WORLD),
			     MPI_ERR_OP, "LAND on MPI_INTEGER");
		expect_class(MPI_Allreduce(&in, &out, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD),
			     MPI_ERR_OP, "SUM on MPI_LOGICAL");
		expect_class(MPI_Allreduce(name, name + 8, 1, MPI_CHARACTER, MPI_MAX, MPI_COMM_WORLD),
			     MPI_ERR_OP, "MAX on MPI_CHARACTER");
		expect_class(MPI_Allreduce(&cin, &cout, 1, MPI_COMPLEX, MPI_MAX, MPI_COMM_WORLD),
			     MPI_ERR_OP, "MAX on MPI_COMPLEX");
		expect_class(MPI_Allreduce(&rin, &rout, 1, MPI_REAL, MPI_BAND, MPI_COMM_WORLD),
			     MPI_ERR_OP, "BAND on MPI_REAL");
		{
			float pa[2] = {0, 0}, pb[2];

			expect_class(MPI_Allreduce(pa, pb, 1, MPI_2REAL, MPI_SUM, MPI_COMM_WORLD),
				     MPI_ERR_OP, "SUM on MPI_2REAL");
		}
	}
	expect_class(MPI_Type_free(&(MPI_Datatype){MPI_REAL16}), MPI_ERR_TYPE,
		     "freeing MPI_REAL16");
}

/* --- Blocks of no copies at extreme displacements --- */

static void case_zeroblocks(void)
{
	int bl[3] = {0, 2, 0}, one = 1, ints[6] = {1, 2, 3, 4, 5, 6}, got[6];
	MPI_Aint disp[3] = {PTRDIFF_MAX, 4, PTRDIFF_MIN}, sd[2] = {0, 16}, lb, ext;
	MPI_Datatype h, s, types[2], r, sr, hv, ix, big;

	/* The empty blocks are no part of the type map: bounds of the data. */
	MPI_OK(MPI_Type_create_hindexed(3, bl, disp, MPI_INT, &h));
	check_extent(h, 4, 8, 8, "hindexed with empty blocks at the extremes");
	{
		MPI_Aint tlb, text;

		MPI_OK(MPI_Type_get_true_extent(h, &tlb, &text));
		CHECK(tlb == 4 && text == 8, "true extent %ld %ld", (long)tlb, (long)text);
	}
	/* A struct of it, committed and used. */
	types[0] = h;
	types[1] = MPI_INT;
	{
		int sbl[2] = {1, 1};

		MPI_OK(MPI_Type_create_struct(2, sbl, sd, types, &s));
	}
	MPI_OK(MPI_Type_commit(&s));
	check_extent(s, 4, 16, 12, "struct of it");
	/* Only empty blocks: an empty type of extent 0, in a struct at an
	 * extreme displacement too. */
	bl[1] = 0;
	MPI_OK(MPI_Type_create_hindexed(3, bl, disp, MPI_INT, &big));
	check_extent(big, 0, 0, 0, "hindexed of empty blocks only");
	sd[0] = PTRDIFF_MAX;
	types[0] = big;
	{
		MPI_Datatype sb;
		int sbl[2] = {1, 1};

		sd[1] = 8;
		MPI_OK(MPI_Type_create_struct(2, sbl, sd, types, &sb));
		MPI_OK(MPI_Type_commit(&sb));
		check_extent(sb, 8, 4, 4, "struct of an empty type at PTRDIFF_MAX");
		MPI_OK(MPI_Type_free(&sb));
	}
	/* A block of 0 of a resized type (explicit bounds): its markers are no
	 * part of the type map either. */
	MPI_OK(MPI_Type_create_resized(MPI_INT, -100, 1000, &r));
	{
		int rbl[2] = {0, 1};
		MPI_Aint rd[2] = {PTRDIFF_MIN / 2, 0};
		MPI_Datatype rt[2] = {r, MPI_INT};

		MPI_OK(MPI_Type_create_struct(2, rbl, rd, rt, &sr));
		MPI_OK(MPI_Type_commit(&sr));
		check_extent(sr, 0, 4, 4, "struct with 0 copies of a resized type");
	}
	/* hvector with blocks of 0 and a stride that overflows; indexed with an
	 * empty block whose displacement in bytes would overflow. */
	MPI_OK(MPI_Type_create_hvector(5, 0, PTRDIFF_MAX, MPI_INT, &hv));
	check_extent(hv, 0, 0, 0, "hvector of empty blocks");
	{
		int ibl[2] = {1, 0}, idisp[2] = {0, 0x7fffffff};

		MPI_OK(MPI_Type_indexed(2, ibl, idisp, r, &ix));
		check_extent(ix, -100, 1000, 4, "indexed with an empty far block");
	}
	/* Real data beyond the address range is refused. */
	{
		int bbl[2] = {1, 1};
		MPI_Aint bd[2] = {0, PTRDIFF_MAX};
		MPI_Datatype bad = MPI_DATATYPE_NULL;

		expect_class(MPI_Type_create_hindexed(2, bbl, bd, MPI_INT, &bad), MPI_ERR_ARG,
			     "an int at PTRDIFF_MAX");
		CHECK(bad == MPI_DATATYPE_NULL, "a refused type was returned");
	}
	/* The struct moves its data between ranks. */
	if (rank == 0) {
		MPI_OK(MPI_Send(ints, 1, s, 1, 20, MPI_COMM_WORLD));
	} else if (rank == 1) {
		memset(got, 0, sizeof(got));
		MPI_OK(MPI_Recv(got, 3, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(got[0] == 2 && got[1] == 3 && got[2] == 5, "struct data: %d %d %d", got[0],
		      got[1], got[2]);
	}
	(void)one;
	(void)lb;
	(void)ext;
	MPI_OK(MPI_Type_free(&h));
	MPI_OK(MPI_Type_free(&s));
	MPI_OK(MPI_Type_free(&big));
	MPI_OK(MPI_Type_free(&r));
	MPI_OK(MPI_Type_free(&sr));
	MPI_OK(MPI_Type_free(&hv));
	MPI_OK(MPI_Type_free(&ix));
}

/* --- Large counts --- */

/* Two types with the same bounds, size and packed bytes of buf. */
static void same_type(MPI_Datatype a, MPI_Datatype b, const void *buf, const char *what)
{
	MPI_Count la, ea, lb, eb, sa, sb, ta, tea, tb, teb;
	unsigned char pa[512], pb[512];
	MPI_Count posa = 0, posb = 0;

	MPI_OK(MPI_Type_get_extent_c(a, &la, &ea));
	MPI_OK(MPI_Type_get_extent_c(b, &lb, &eb));
	MPI_OK(MPI_Type_size_c(a, &sa));
	MPI_OK(MPI_Type_size_c(b, &sb));
	MPI_OK(MPI_Type_get_true_extent_c(a, &ta, &tea));
	MPI_OK(MPI_Type_get_true_extent_c(b, &tb, &teb));
	CHECK(la == lb && ea == eb && sa == sb && ta == tb && tea == teb,
	      "%s: (%lld %lld %lld) and (%lld %lld %lld)", what, la, ea, sa, lb, eb, sb);
	MPI_OK(MPI_Type_commit(&a));
	MPI_OK(MPI_Type_commit(&b));
	MPI_OK(MPI_Pack_c(buf, 1, a, pa, sizeof(pa), &posa, MPI_COMM_SELF));
	MPI_OK(MPI_Pack_c(buf, 1, b, pb, sizeof(pb), &posb, MPI_COMM_SELF));
	CHECK(posa == sa && posb == sb && !memcmp(pa, pb, (size_t)sa), "%s: packed bytes differ",
	      what);
	MPI_OK(MPI_Type_free(&a));
	MPI_OK(MPI_Type_free(&b));
}

static void case_large(void)
{
	int buf[64], i, bl[3] = {2, 1, 3}, disp[3] = {4, 0, 10}, n;
	MPI_Count cbl[3] = {2, 1, 3}, cdisp[3] = {4, 0, 10}, cadisp[3] = {16, 0, 40};
	MPI_Aint adisp[3] = {16, 0, 40};
	MPI_Datatype a, b, types[3] = {MPI_INT, MPI_SHORT, MPI_CHAR};

	for (i = 0; i < 64; i++)
		buf[i] = i * 3 + 1;
	MPI_OK(MPI_Type_contiguous(5, MPI_INT, &a));
	MPI_OK(MPI_Type_contiguous_c(5, MPI_INT, &b));
	same_type(a, b, buf, "contiguous_c");
	MPI_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &a));
	MPI_OK(MPI_Type_vector_c(3, 2, 5, MPI_INT, &b));
	same_type(a, b, buf, "vector_c");
	MPI_OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &a));
	MPI_OK(MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &b));
	same_type(a, b, buf, "hvector_c");
	MPI_OK(MPI_Type_indexed(3, bl, disp, MPI_INT, &a));
	MPI_OK(MPI_Type_indexed_c(3, cbl, cdisp, MPI_INT, &b));
	same_type(a, b, buf, "indexed_c");
	MPI_OK(MPI_Type_create_hindexed(3, bl, adisp, MPI_INT, &a));
	MPI_OK(MPI_Type_create_hindexed_c(3, cbl, cadisp, MPI_INT, &b));
	same_type(a, b, buf, "hindexed_c");
	MPI_OK(MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &a));
	MPI_OK(MPI_Type_create_indexed_block_c(3, 2, cdisp, MPI_INT, &b));
	same_type(a, b, buf, "indexed_block_c");
	MPI_OK(MPI_Type_create_hindexed_block(3, 2, adisp, MPI_INT, &a));
	MPI_OK(MPI_Type_create_hindexed_block_c(3, 2, cadisp, MPI_INT, &b));
	same_type(a, b, buf, "hindexed_block_c");
	MPI_OK(MPI_Type_create_struct(3, bl, adisp, types, &a));
	MPI_OK(MPI_Type_create_struct_c(3, cbl, cadisp, types, &b));
	same_type(a, b, buf, "struct_c");
	MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &a));
	MPI_OK(MPI_Type_create_resized_c(MPI_INT, -4, 12, &b));
	same_type(a, b, buf, "resized_c");
	{
		int s[2] = {8, 8}, ss[2] = {3, 2}, st[2] = {2, 5};
		MPI_Count cs[2] = {8, 8}, css[2] = {3, 2}, cst[2] = {2, 5};

		MPI_OK(MPI_Type_create_subarray(2, s, ss, st, MPI_ORDER_C, MPI_INT, &a));
		MPI_OK(MPI_Type_create_subarray_c(2, cs, css, cst, MPI_ORDER_C, MPI_INT, &b));
		same_type(a, b, buf, "subarray_c");
	}
	{
		int gs[2] = {8, 8}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
		    dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
		MPI_Count cgs[2] = {8, 8};
		MPI_Count cni, cna, cnc, cnd, counts[2];
		int comb, ints[16];
		MPI_Aint aints[1];
		MPI_Datatype dts[1];

		MPI_OK(MPI_Type_create_darray(4, 3, 2, gs, dist, dargs, ps, MPI_ORDER_FORTRAN,
					      MPI_INT, &a));
		MPI_OK(MPI_Type_create_darray_c(4, 3, 2, cgs, dist, dargs, ps, MPI_ORDER_FORTRAN,
						MPI_INT, &b));
		MPI_OK(MPI_Type_get_envelope_c(b, &cni, &cna, &cnc, &cnd, &comb));
		CHECK(comb == MPI_COMBINER_DARRAY && cni == 3 * 2 + 4 && cna == 0 && cnc == 2 &&
		      cnd == 1, "darray_c envelope");
		MPI_OK(MPI_Type_get_contents_c(b, 16, 0, 2, 1, ints, aints, counts, dts));
		CHECK(ints[0] == 4 && ints[1] == 3 && ints[2] == 2 &&
		      ints[3] == MPI_DISTRIBUTE_CYCLIC && ints[9] == MPI_ORDER_FORTRAN &&
		      counts[0] == 8 && counts[1] == 8 && dts[0] == MPI_INT, "darray_c contents");
		same_type(a, b, buf, "darray_c");
	}
	/* Packing and counts with MPI_Count. */
	{
		MPI_Count sz, pos = 0, cnt;
		int out[8], back[8];
		MPI_Status st;

		MPI_OK(MPI_Pack_size_c(8, MPI_INT, MPI_COMM_WORLD, &sz));
		CHECK(sz == 32, "pack_size_c %lld", sz);
		MPI_OK(MPI_Pack_c(buf, 8, MPI_INT, out, 32, &pos, MPI_COMM_WORLD));
		CHECK(pos == 32, "pack_c position %lld", pos);
		pos = 0;
		MPI_OK(MPI_Unpack_c(out, 32, &pos, back, 8, MPI_INT, MPI_COMM_WORLD));
		CHECK(pos == 32 && !memcmp(back, buf, 32), "unpack_c");
		pos = 0;
		expect_class(MPI_Pack_c(buf, 9, MPI_INT, out, 32, &pos, MPI_COMM_WORLD),
			     MPI_ERR_TRUNCATE, "pack_c past the end");
		expect_class(MPI_Pack_c(buf, -1, MPI_INT, out, 32, &pos, MPI_COMM_WORLD),
			     MPI_ERR_COUNT, "pack_c count -1");
		expect_class(MPI_Type_contiguous_c(-1, MPI_INT, &a), MPI_ERR_COUNT,
			     "contiguous_c count -1");
		expect_class(MPI_Type_vector_c(2, -1, 1, MPI_INT, &a), MPI_ERR_ARG,
			     "vector_c blocklength -1");
		expect_class(MPI_Type_size_c(MPI_DATATYPE_NULL, &sz), MPI_ERR_TYPE,
			     "size_c of MPI_DATATYPE_NULL");
		/* A size past an int. */
		MPI_OK(MPI_Type_contiguous_c((MPI_Count)3 << 31, MPI_CHAR, &a));
		MPI_OK(MPI_Type_size_c(a, &sz));
		CHECK(sz == (MPI_Count)3 << 31, "size_c of 3 * 2^31 chars: %lld", sz);
		MPI_OK(MPI_Type_free(&a));
		if (rank == 0) {
			MPI_OK(MPI_Send(buf, 10, MPI_SHORT, 1, 30, MPI_COMM_WORLD));
		} else if (rank == 1) {
			MPI_OK(MPI_Recv(out, 8, MPI_INT, 0, 30, MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Get_count_c(&st, MPI_INT, &cnt));
			CHECK(cnt == 5, "get_count_c %lld", cnt);
			MPI_OK(MPI_Get_count_c(&st, MPI_DOUBLE, &cnt));
			CHECK(cnt == MPI_UNDEFINED, "get_count_c of doubles %lld", cnt);
			MPI_OK(MPI_Get_elements_c(&st, MPI_SHORT, &cnt));
			CHECK(cnt == 10, "get_elements_c %lld", cnt);
			expect_class(MPI_Get_count_c(MPI_STATUS_IGNORE, MPI_INT, &cnt), MPI_ERR_ARG,
				     "get_count_c of MPI_STATUS_IGNORE");
		}
	}
	(void)n;
}

/*
 * MPI_Aint_add and MPI_Aint_diff do what the pointer arithmetic they stand
 * for does, on the addresses MPI_Get_address gives: a struct built from
 * a base address and displacements that MPI_Aint_diff computed carries
 * its fields, and the PMPI_ names are the same calls.
 */
static void case_aint(void)
{
	struct rec {
		int tag;
		double x[3];
		char c;
	} out = { 7 + rank, { 1.5, -2.25, 1e100 }, 'q' }, in = { 0, { 0, 0, 0 }, 0 };
	int lens[3] = { 1, 3, 1 }, i;
	MPI_Aint base, a[3], d[3];
	MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, t, tabs;
	double arr[10] = { 0 };

	MPI_OK(MPI_Get_address(&arr[0], &base));
	for (i = 0; i < 10; i++) {
		MPI_Aint want;

		MPI_OK(MPI_Get_address(&arr[i], &want));
		CHECK(MPI_Aint_add(base, i * (MPI_Aint)sizeof(double)) == want,
		      "MPI_Aint_add(base, %d doubles) is not &arr[%d]", i, i);
		CHECK(MPI_Aint_diff(want, base) == i * (MPI_Aint)sizeof(double),
		      "MPI_Aint_diff(&arr[%d], &arr[0]) is %ld", i, (long)MPI_Aint_diff(want, base));
		CHECK(MPI_Aint_diff(base, want) == -i * (MPI_Aint)sizeof(double),
		      "MPI_Aint_diff(&arr[0], &arr[%d]) is %ld", i, (long)MPI_Aint_diff(base, want));
		CHECK(PMPI_Aint_add(want, -i * (MPI_Aint)sizeof(double)) == base,
		      "PMPI_Aint_add back from &arr[%d]", i);
		CHECK(PMPI_Aint_diff(want, base) == MPI_Aint_diff(want, base),
		      "PMPI_Aint_diff differs");
	}
	/* Like the addresses they stand for, sums wrap around instead of
	 * overflowing. */
	CHECK(MPI_Aint_add(PTRDIFF_MAX, 1) == PTRDIFF_MIN, "MPI_Aint_add does not wrap");
	CHECK(MPI_Aint_diff(PTRDIFF_MIN, 1) == PTRDIFF_MAX, "MPI_Aint_diff does not wrap");

	/* The displacements of a struct relative to its first field. */
	MPI_OK(MPI_Get_address(&out.tag, &a[0]));
	MPI_OK(MPI_Get_address(&out.x[0], &a[1]));
	MPI_OK(MPI_Get_address(&out.c, &a[2]));
	for (i = 0; i < 3; i++)
		d[i] = MPI_Aint_diff(a[i], a[0]);
	CHECK(d[1] == offsetof(struct rec, x) && d[2] == offsetof(struct rec, c),
	      "displacements %ld %ld, want %zu %zu", (long)d[1], (long)d[2],
	      offsetof(struct rec, x), offsetof(struct rec, c));
	MPI_OK(MPI_Type_create_struct(3, lens, d, types, &t));
	MPI_OK(MPI_Type_commit(&t));
	MPI_OK(MPI_Sendrecv(&out, 1, t, (rank + 1) % size, 5, &in, 1, t,
			    (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(in.tag == 7 + (rank + size - 1) % size && in.x[0] == 1.5 && in.x[1] == -2.25 &&
		      in.x[2] == 1e100 && in.c == 'q',
	      "the struct received is %d %g %g %g %c", in.tag, in.x[0], in.x[1], in.x[2], in.c);
	/* Sent from MPI_BOTTOM, its fields at the addresses MPI_Aint_add gives
	 * from the first field's, received with the relative type. */
	for (i = 0; i < 3; i++)
		a[i] = MPI_Aint_add(a[0], d[i]);
	MPI_OK(MPI_Type_create_struct(3, lens, a, types, &tabs));
	MPI_OK(MPI_Type_commit(&tabs));
	memset(&in, 0, sizeof(in));
	out.tag = 70 + rank;
	MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, tabs, (rank + 1) % size, 6, &in, 1, t,
			    (rank + size - 1) % size, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(in.tag == 70 + (rank + size - 1) % size && in.x[2] == 1e100 && in.c == 'q',
	      "the struct sent from MPI_BOTTOM came as %d %g %c", in.tag, in.x[2], in.c);
	MPI_OK(MPI_Type_free(&tabs));
	MPI_OK(MPI_Type_free(&t));
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{"envelope", case_envelope},
	{"subarray", case_subarray},
	{"darray", case_darray},
	{"match", case_match},
	{"external32", case_external32},
	{"typeattr", case_typeattr},
	{"keyvalfree", case_keyvalfree},
	{"fortran", case_fortran},
	{"zeroblocks", case_zeroblocks},
	{"large", case_large},
	{"aint", case_aint},
};

int main(int argc, char **argv)
{
	size_t i;
	int found = 0;

	MPI_OK(MPI_Init(&argc, &argv));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (size < 2) {
		if (rank == 0)
			printf("types2: needs 2 processes, has %d: skipped\n", size);
		MPI_Finalize();
		return 77;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		found = 1;
		cases[i].fn();
	}
	if (!found) {
		fprintf(stderr, "types2: no case named %s\n", argc > 1 ? argv[1] : "");
		failures++;
	}
	MPI_Finalize();
	return failures ? 1 : 0;
}
