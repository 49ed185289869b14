/* SPDX-License-Identifier: MIT */
/*
 * coll_ops.c - the reduction operations: every predefined operation on
 * every datatype it applies to, through MPI_Allreduce and MPI_Reduce, its
 * result compared with the same reduction computed here; MPI_ERR_OP for
 * every pair the standard does not define; user operations, commutative
 * and not, through every reducing collective, a non-commutative one
 * checking that the ranks are combined in rank order; MINLOC and MAXLOC
 * on a derived type of pairs with gaps.
 *
 *   bipload -sz N coll_ops [predefined | invalid | user | pairs]
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "coll_check.h"

#define N 37 /* elements per reduction: not a power of two */

enum cat { INTEGER, FLOATING, COMPLEX, LOGICAL, BYTE, PAIR, NONE };

struct tinfo {
	MPI_Datatype t;
	const char *name;
	enum cat cat;
	size_t size;
	int is_signed;
	void (*set)(void *b, int i, long long v, int idx);
	long long (*get)(const void *b, int i, int *idx);
};

#define SCALAR(fn, T)                                                       \
	static void set_##fn(void *b, int i, long long v, int idx)          \
	{                                                                   \
		(void)idx;                                                  \
		((T *)b)[i] = (T)v;                                         \
	}                                                                   \
	static long long get_##fn(const void *b, int i, int *idx)           \
	{                                                                   \
		*idx = 0;                                                   \
		return (long long)((const T *)b)[i];                        \
	}

/* Complex: the real part holds the value, the imaginary part value % 3. */
#define CPLX(fn, T, RT)                                                     \
	static void set_##fn(void *b, int i, long long v, int idx)          \
	{                                                                   \
		(void)idx;                                                  \
		((T *)b)[i] = (RT)v + (RT)(v % 3) * I;                      \
	}                                                                   \
	static long long get_##fn(const void *b, int i, int *idx)           \
	{                                                                   \
		*idx = (int)cimagl(((const T *)b)[i]);                      \
		return (long long)creall(((const T *)b)[i]);                \
	}

#define PAIRT(fn, VT)                                                       \
	struct pair_##fn {                                                  \
		VT v;                                                       \
		int i;                                                      \
	};                                                                  \
	static void set_##fn(void *b, int i, long long v, int idx)          \
	{                                                                   \
		((struct pair_##fn *)b)[i].v = (VT)v;                       \
		((struct pair_##fn *)b)[i].i = idx;                         \
	}                                                                   \
	static long long get_##fn(const void *b, int i, int *idx)           \
	{                                                                   \
		*idx = ((const struct pair_##fn *)b)[i].i;                  \
		return (long long)((const struct pair_##fn *)b)[i].v;       \
	}

SCALAR(char, char)
SCALAR(schar, signed char)
SCALAR(uchar, unsigned char)
SCALAR(short, short)
SCALAR(ushort, unsigned short)
SCALAR(int, int)
SCALAR(uint, unsigned)
SCALAR(long, long)
SCALAR(ulong, unsigned long)
SCALAR(llong, long long)
SCALAR(ullong, unsigned long long)
SCALAR(i8, int8_t)
SCALAR(i16, int16_t)
SCALAR(i32, int32_t)
SCALAR(i64, int64_t)
SCALAR(u8, uint8_t)
SCALAR(u16, uint16_t)
SCALAR(u32, uint32_t)
SCALAR(u64, uint64_t)
SCALAR(aint, MPI_Aint)
SCALAR(offset, MPI_Offset)
SCALAR(count, MPI_Count)
SCALAR(float, float)
SCALAR(double, double)
SCALAR(ldouble, long double)
SCALAR(bool, bool)
SCALAR(wchar, wchar_t)
CPLX(cf, float complex, float)
CPLX(cd, double complex, double)
CPLX(cld, long double complex, long double)
PAIRT(fi, float)
PAIRT(di, double)
PAIRT(li, long)
PAIRT(ii, int)
PAIRT(si, short)
PAIRT(ldi, long double)

#define T(mpi, fn, cat, ctype, sgn) { mpi, #mpi, cat, sizeof(ctype), sgn, set_##fn, get_##fn }

static const struct tinfo types[] = {
	T(MPI_SIGNED_CHAR, schar, INTEGER, signed char, 1),
	T(MPI_UNSIGNED_CHAR, uchar, INTEGER, unsigned char, 0),
	T(MPI_SHORT, short, INTEGER, short, 1),
	T(MPI_UNSIGNED_SHORT, ushort, INTEGER, unsigned short, 0),
	T(MPI_INT, int, INTEGER, int, 1),
	T(MPI_UNSIGNED, uint, INTEGER, unsigned, 0),
	T(MPI_LONG, long, INTEGER, long, 1),
	T(MPI_UNSIGNED_LONG, ulong, INTEGER, unsigned long, 0),
	T(MPI_LONG_LONG, llong, INTEGER, long long, 1),
	T(MPI_LONG_LONG_INT, llong, INTEGER, long long, 1),
	T(MPI_UNSIGNED_LONG_LONG, ullong, INTEGER, unsigned long long, 0),
	T(MPI_INT8_T, i8, INTEGER, int8_t, 1),
	T(MPI_INT16_T, i16, INTEGER, int16_t, 1),
	T(MPI_INT32_T, i32, INTEGER, int32_t, 1),
	T(MPI_INT64_T, i64, INTEGER, int64_t, 1),
	T(MPI_UINT8_T, u8, INTEGER, uint8_t, 0),
	T(MPI_UINT16_T, u16, INTEGER, uint16_t, 0),
	T(MPI_UINT32_T, u32, INTEGER, uint32_t, 0),
	T(MPI_UINT64_T, u64, INTEGER, uint64_t, 0),
	T(MPI_AINT, aint, INTEGER, MPI_Aint, 1),
	T(MPI_OFFSET, offset, INTEGER, MPI_Offset, 1),
	T(MPI_COUNT, count, INTEGER, MPI_Count, 1),
	T(MPI_FLOAT, float, FLOATING, float, 1),
	T(MPI_DOUBLE, double, FLOATING, double, 1),
	T(MPI_LONG_DOUBLE, ldouble, FLOATING, long double, 1),
	T(MPI_C_FLOAT_COMPLEX, cf, COMPLEX, float complex, 1),
	T(MPI_C_COMPLEX, cf, COMPLEX, float complex, 1),
	T(MPI_C_DOUBLE_COMPLEX, cd, COMPLEX, double complex, 1),
	T(MPI_C_LONG_DOUBLE_COMPLEX, cld, COMPLEX, long double complex, 1),
	T(MPI_C_BOOL, bool, LOGICAL, bool, 0),
	T(MPI_BYTE, uchar, BYTE, unsigned char, 0),
	T(MPI_FLOAT_INT, fi, PAIR, struct pair_fi, 1),
	T(MPI_DOUBLE_INT, di, PAIR, struct pair_di, 1),
	T(MPI_LONG_INT, li, PAIR, struct pair_li, 1),
	T(MPI_2INT, ii, PAIR, struct pair_ii, 1),
	T(MPI_SHORT_INT, si, PAIR, struct pair_si, 1),
	T(MPI_LONG_DOUBLE_INT, ldi, PAIR, struct pair_ldi, 1),
	/* MPI_CHAR: a C integer here, as in Open MPI and MPICH (mpi_shim(7)). */
	T(MPI_CHAR, char, INTEGER, char, 1),
	/* Characters: no reduction applies. */
	T(MPI_WCHAR, wchar, NONE, wchar_t, 1),
};
#define NTYPES (int)(sizeof(types) / sizeof(types[0]))

enum opid { MAX, MIN, SUM, PROD, LAND, BAND, LOR, BOR, LXOR, BXOR, MINLOC, MAXLOC, REPLACE, NO_OP };

static const struct {
	MPI_Op op;
	const char *name;
	enum opid id;
} ops[] = {
	{ MPI_MAX, "MPI_MAX", MAX },	     { MPI_MIN, "MPI_MIN", MIN },
	{ MPI_SUM, "MPI_SUM", SUM },	     { MPI_PROD, "MPI_PROD", PROD },
	{ MPI_LAND, "MPI_LAND", LAND },	     { MPI_BAND, "MPI_BAND", BAND },
	{ MPI_LOR, "MPI_LOR", LOR },	     { MPI_BOR, "MPI_BOR", BOR },
	{ MPI_LXOR, "MPI_LXOR", LXOR },	     { MPI_BXOR, "MPI_BXOR", BXOR },
	{ MPI_MINLOC, "MPI_MINLOC", MINLOC }, { MPI_MAXLOC, "MPI_MAXLOC", MAXLOC },
	{ MPI_REPLACE, "MPI_REPLACE", REPLACE }, { MPI_NO_OP, "MPI_NO_OP", NO_OP },
};
#define NOPS (int)(sizeof(ops) / sizeof(ops[0]))

/* Which operations the standard defines on which category. */
static int defined(enum opid op, enum cat cat)
{
	switch (op) {
	case MAX:
	case MIN:
		return cat == INTEGER || cat == FLOATING;
	case SUM:
	case PROD:
		return cat == INTEGER || cat == FLOATING || cat == COMPLEX;
	case LAND:
	case LOR:
	case LXOR:
		return cat == INTEGER || cat == LOGICAL;
	case BAND:
	case BOR:
	case BXOR:
		return cat == INTEGER || cat == BYTE;
	case MINLOC:
	case MAXLOC:
		return cat == PAIR;
	default:
		return 0;
	}
}

/*
 * The value of rank r at index i: small, so that no sum or product
 * overflows the narrowest type (8 processes at most are run); signed
 * types get negative values too; products get mostly ones.
 */
static long long value(const struct tinfo *t, enum opid op, int r, int i)
{
	long long v;

	switch (op) {
	case PROD:
		return (r + i) % 4 == 0 ? 2 : (t->is_signed && (r + i) % 5 == 1 ? -1 : 1);
	case LAND:
	case LOR:
	case LXOR:
		if (t->cat == LOGICAL)
			return (r * 3 + i) % 4 != 0;
		return (r * 3 + i) % 4 == 0 ? 0 : (r + i) % 3 + 1;
	case BAND:
	case BOR:
	case BXOR:
		return ((r * 5 + i * 3) & 0x7f) | (i % 2 ? 0x40 : 0);
	default:
		v = (r * 7 + i * 3) % 13;
		if (t->is_signed && t->cat != COMPLEX)
			v -= 6;
		return v;
	}
}

static long long combine(enum opid op, long long a, long long b)
{
	switch (op) {
	case MAX: return a > b ? a : b;
	case MIN: return a < b ? a : b;
	case SUM: return a + b;
	case PROD: return a * b;
	case LAND: return a && b;
	case LOR: return a || b;
	case LXOR: return !a != !b;
	case BAND: return a & b;
	case BOR: return a | b;
	case BXOR: return a ^ b;
	default: return 0;
	}
}

/* The expected result at index i over ranks 0..p-1 (value, index). */
static void expect(const struct tinfo *t, enum opid op, int p, int i, long long *v, int *idx)
{
	int r;

	if (t->cat == COMPLEX) {
		long double complex acc = 0;

		for (r = 0; r < p; r++) {
			long long x = value(t, op, r, i);
			long double complex z = (long double)x + (long double)(x % 3) * I;

			acc = r == 0 ? z : op == SUM ? acc + z : acc * z;
		}
		*v = (long long)creall(acc);
		*idx = (int)cimagl(acc);
		return;
	}
	*v = value(t, op, 0, i);
	*idx = 0;
	for (r = 1; r < p; r++) {
		long long x = value(t, op, r, i);

		if (op == MINLOC || op == MAXLOC) {
			/* Ties keep the lower index, which is the earlier rank. */
			if (op == MINLOC ? x < *v : x > *v) {
				*v = x;
				*idx = r;
			}
		} else {
			*v = combine(op, *v, x);
		}
	}
	if (t->cat == LOGICAL || op == LAND || op == LOR || op == LXOR)
		*v = !!*v;
}

static void fill(const struct tinfo *t, enum opid op, int r, void *b)
{
	int i;

	for (i = 0; i < N; i++)
		t->set(b, i, value(t, op, r, i), r);
}

static void verify(const struct tinfo *t, enum opid op, const char *opname, int p,
		   const void *b, const char *how)
{
	int i;

	for (i = 0; i < N; i++) {
		long long want, got;
		int wi, gi;

		expect(t, op, p, i, &want, &wi);
		got = t->get(b, i, &gi);
		if (t->cat == LOGICAL || (t->cat == INTEGER && (op == LAND || op == LOR ||
								op == LXOR)))
			got = !!got;
		if (t->cat == INTEGER && !t->is_signed && t->size < sizeof(long long))
			want &= (1ll << (8 * t->size)) - 1;
		if (t->cat == BYTE)
			want &= 0xff;
		CHECK(got == want && ((t->cat != PAIR && t->cat != COMPLEX) || gi == wi),
		      "%s on %s by %s: [%d] = %lld (index %d), want %lld (index %d)", opname,
		      t->name, how, i, got, gi, want, wi);
	}
}

static void test_predefined(MPI_Comm c)
{
	int r, p, ti, oi, root, in_place;
	char *s = coll_alloc(N * 32), *d = coll_alloc(N * 32);

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (ti = 0; ti < NTYPES; ti++) {
		const struct tinfo *t = &types[ti];

		for (oi = 0; oi < NOPS; oi++) {
			enum opid op = ops[oi].id;

			if (!defined(op, t->cat))
				continue;
			for (in_place = 0; in_place < 2; in_place++) {
				fill(t, op, r, s);
				memset(d, 0, N * 32);
				if (in_place)
					fill(t, op, r, d);
				OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : s, d, N, t->t, ops[oi].op,
						 c));
				verify(t, op, ops[oi].name, p, d,
				       in_place ? "MPI_Allreduce in place" : "MPI_Allreduce");
			}
			root = (ti + oi) % p;
			memset(d, 0, N * 32);
			OK(MPI_Reduce(s, d, N, t->t, ops[oi].op, root, c));
			if (r == root)
				verify(t, op, ops[oi].name, p, d, "MPI_Reduce");
		}
	}
	free(s);
	free(d);
}

/* Every pair the standard does not define fails with MPI_ERR_OP, everywhere. */
static void test_invalid(MPI_Comm c)
{
	int ti, oi, rc, r, x[64] = { 0 }, y[64];
	MPI_Request req;

	MPI_Comm_rank(c, &r);
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	/* MPI_Reduce_local has no communicator: MPI_COMM_WORLD's handler applies. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	for (ti = 0; ti < NTYPES; ti++) {
		for (oi = 0; oi < NOPS; oi++) {
			if (defined(ops[oi].id, types[ti].cat))
				continue;
			rc = MPI_Allreduce(x, y, 1, types[ti].t, ops[oi].op, c);
			CHECK(rc == MPI_ERR_OP, "MPI_Allreduce(%s, %s) returned %d", types[ti].name,
			      ops[oi].name, rc);
			rc = MPI_Reduce(x, y, 1, types[ti].t, ops[oi].op, 0, c);
			CHECK(rc == MPI_ERR_OP, "MPI_Reduce(%s, %s) returned %d", types[ti].name,
			      ops[oi].name, rc);
			rc = MPI_Iallreduce(x, y, 1, types[ti].t, ops[oi].op, c, &req);
			CHECK(rc == MPI_ERR_OP, "MPI_Iallreduce(%s, %s) returned %d",
			      types[ti].name, ops[oi].name, rc);
			rc = MPI_Reduce_local(x, y, 1, types[ti].t, ops[oi].op);
			CHECK(rc == MPI_ERR_OP, "MPI_Reduce_local(%s, %s) returned %d",
			      types[ti].name, ops[oi].name, rc);
		}
	}
	rc = MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, c);
	CHECK(rc == MPI_ERR_OP, "MPI_OP_NULL: returned %d", rc);
	/* Nothing was left half done: a valid reduction still works. */
	x[0] = r + 1;
	OK(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, c));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/*
 * A non-commutative operation: each element is the range of ranks it
 * combines, [lo, hi]; in op inout the ranges must be adjacent, in order
 * (in just below inout), or the result is marked broken.
 */
struct range {
	int lo, hi;
};

static int user_calls;

static void range_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
	struct range *a = in, *b = inout;
	int i;

	user_calls++;
	CHECK(*type == MPI_2INT, "the user function got another datatype");
	for (i = 0; i < *len; i++) {
		if (a[i].lo < 0 || b[i].lo < 0 || a[i].hi + 1 != b[i].lo)
			b[i].lo = b[i].hi = -1 - (a[i].hi * 1000 + b[i].lo);
		else
			b[i].lo = a[i].lo;
	}
}

/* A commutative one: the sum of squares of x and a count in y. */
static void sumsq_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
	int *a = in, *b = inout, i;

	(void)type;
	user_calls++;
	for (i = 0; i < 2 * *len; i += 2) {
		b[i] += a[i];
		b[i + 1] += a[i + 1];
	}
}

static void range_fill(struct range *v, int n, int r)
{
	int i;

	for (i = 0; i < n; i++)
		v[i].lo = v[i].hi = r;
}

static void range_check(const struct range *v, int n, int lo, int hi, const char *how)
{
	int i;

	for (i = 0; i < n; i++)
		CHECK(v[i].lo == lo && v[i].hi == hi, "%s: [%d] = [%d, %d], want [%d, %d]", how, i,
		      v[i].lo, v[i].hi, lo, hi);
}

static void test_user(MPI_Comm c)
{
	int r, p, root, in_place, commute, i, *counts;
	struct range s[N], d[N * 8 + N];
	MPI_Op range, sumsq;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	OK(MPI_Op_create(range_op, 0, &range));
	OK(MPI_Op_create(sumsq_op, 1, &sumsq));
	OK(MPI_Op_commutative(range, &commute));
	CHECK(commute == 0, "MPI_Op_commutative says %d", commute);
	OK(MPI_Op_commutative(sumsq, &commute));
	CHECK(commute == 1, "MPI_Op_commutative says %d", commute);
	OK(MPI_Op_commutative(MPI_SUM, &commute));
	CHECK(commute == 1, "MPI_Op_commutative(MPI_SUM) says %d", commute);

	for (root = 0; root < p; root++) {
		for (in_place = 0; in_place < 2; in_place++) {
			range_fill(s, N, r);
			range_fill(d, N, r);
			OK(MPI_Reduce(in_place && r == root ? MPI_IN_PLACE : s, d, N, MPI_2INT,
				      range, root, c));
			if (r == root)
				range_check(d, N, 0, p - 1, "MPI_Reduce");
		}
	}
	for (in_place = 0; in_place < 2; in_place++) {
		range_fill(s, N, r);
		range_fill(d, N, r);
		OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : s, d, N, MPI_2INT, range, c));
		range_check(d, N, 0, p - 1, "MPI_Allreduce");
		range_fill(d, N, r);
		OK(MPI_Scan(in_place ? MPI_IN_PLACE : s, d, N, MPI_2INT, range, c));
		range_check(d, N, 0, r, "MPI_Scan");
		range_fill(d, N, r);
		OK(MPI_Exscan(in_place ? MPI_IN_PLACE : s, d, N, MPI_2INT, range, c));
		if (r > 0)
			range_check(d, N, 0, r - 1, "MPI_Exscan");
	}
	/* Reduce_scatter: rank j gets j + 1 elements (not all the same). */
	counts = coll_alloc(p * sizeof(int));
	{
		int total = 0;
		struct range *all, *out;

		for (i = 0; i < p; i++)
			total += counts[i] = i % 3 + 1;
		all = coll_alloc(total * sizeof(*all));
		out = coll_alloc((total > 2 * p ? total : 2 * p) * sizeof(*out));
		range_fill(all, total, r);
		OK(MPI_Reduce_scatter(all, out, counts, MPI_2INT, range, c));
		range_check(out, counts[r], 0, p - 1, "MPI_Reduce_scatter");
		range_fill(out, p * 2, r);
		OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, out, 2, MPI_2INT, range, c));
		range_check(out, 2, 0, p - 1, "MPI_Reduce_scatter_block in place");
		free(all);
		free(out);
	}
	free(counts);

	/* The commutative user operation, and user_calls proves it was called. */
	{
		int x[2 * N], y[2 * N];

		for (i = 0; i < N; i++) {
			x[2 * i] = (r + i) * (r + i);
			x[2 * i + 1] = 1;
		}
		user_calls = 0;
		OK(MPI_Allreduce(x, y, N, MPI_2INT, sumsq, c));
		for (i = 0; i < N; i++) {
			int k, want = 0;

			for (k = 0; k < p; k++)
				want += (k + i) * (k + i);
			CHECK(y[2 * i] == want && y[2 * i + 1] == p, "sum of squares [%d] = %d/%d", i,
			      y[2 * i], y[2 * i + 1]);
		}
		if (p > 1) {
			int calls = user_calls, all;

			OK(MPI_Allreduce(&calls, &all, 1, MPI_INT, MPI_SUM, c));
			CHECK(all > 0, "the user function was never called");
		}
	}

	/* Op_free: predefined ones refuse; a freed handle becomes MPI_OP_NULL. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	{
		MPI_Op sum = MPI_SUM;
		int rc = MPI_Op_free(&sum);

		CHECK(rc == MPI_ERR_OP, "MPI_Op_free(MPI_SUM) returned %d", rc);
	}
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Op_free(&range));
	OK(MPI_Op_free(&sumsq));
	CHECK(range == MPI_OP_NULL && sumsq == MPI_OP_NULL, "freed handles are not MPI_OP_NULL");
}

/*
 * MINLOC and MAXLOC through a derived type with gaps: every other element
 * of an array of MPI_DOUBLE_INT (a vector).  The reduction works on the
 * packed form, whose pairs have lost their padding; the elements between
 * the vector's blocks stay as they were.
 */
static void test_pairs(MPI_Comm c)
{
	enum { NP = 700 }; /* pairs reduced: more than one chunk of the reduction */
	struct di {
		double v;
		int i;
	} *in = coll_alloc(2 * NP * sizeof(*in)), *out = coll_alloc(2 * NP * sizeof(*out));
	MPI_Datatype every_other;
	int r, p, k, op, root, in_place;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	OK(MPI_Type_vector(NP, 1, 2, MPI_DOUBLE_INT, &every_other));
	OK(MPI_Type_commit(&every_other));
	for (op = 0; op < 2; op++) {
		for (k = 0; k < 2 * NP; k++) {
			/* Rank (k + op) % p holds the extreme of element k; ties
			 * elsewhere go to the lower index. */
			in[k].v = (k + op) % p == r ? (op ? 1e6 + k : -1e6 - k) : (double)(k % 5);
			in[k].i = r;
			out[k].v = -7.0;
			out[k].i = -7;
		}
		OK(MPI_Allreduce(in, out, 1, every_other, op ? MPI_MAXLOC : MPI_MINLOC, c));
		for (k = 0; k < 2 * NP; k++) {
			if (k % 2) {
				CHECK(out[k].v == -7.0 && out[k].i == -7,
				      "element %d between the blocks was written", k);
				continue;
			}
			if (p == 1) {
				CHECK(out[k].v == in[k].v && out[k].i == 0, "element %d", k);
				continue;
			}
			CHECK(out[k].v == (op ? 1e6 + k : -1e6 - k) && out[k].i == (k + op) % p,
			      "%s element %d: %g at %d", op ? "MAXLOC" : "MINLOC", k, out[k].v,
			      out[k].i);
		}
	}
	/* The same through MPI_Reduce, to every root, in place at the root and
	 * not (on two ranks the shim takes its path without a schedule). */
	for (root = 0; root < p; root++) {
		for (in_place = 0; in_place < 2; in_place++) {
			for (k = 0; k < 2 * NP; k++) {
				in[k].v = k % p == r ? 1e6 + k : (double)(k % 5);
				in[k].i = r;
				out[k] = r == root && in_place && !(k % 2) ? in[k] :
									     (struct di){ -7.0, -7 };
			}
			OK(MPI_Reduce(r == root && in_place ? MPI_IN_PLACE : in, out, 1,
				      every_other, MPI_MAXLOC, root, c));
			if (r != root)
				continue;
			for (k = 0; k < 2 * NP; k++) {
				if (k % 2) {
					CHECK(out[k].v == -7.0 && out[k].i == -7,
					      "MPI_Reduce to %d: element %d between the blocks was "
					      "written", root, k);
					continue;
				}
				CHECK(out[k].v == (p == 1 ? in[k].v : 1e6 + k) &&
					      out[k].i == (p == 1 ? 0 : k % p),
				      "MPI_Reduce to %d%s: MAXLOC element %d: %g at %d", root,
				      in_place ? " in place" : "", k, out[k].v, out[k].i);
			}
		}
	}
	OK(MPI_Type_free(&every_other));
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	int k;

	coll_init(&argc, &argv);
	CHECK(!only || !strcmp(only, "predefined") || !strcmp(only, "invalid") ||
		      !strcmp(only, "user") || !strcmp(only, "pairs"),
	      "no test named '%s'", only);
	for (k = 0; k < COLL_NCOMMS; k++) {
		const char *cname;
		MPI_Comm c = coll_comm(k, &cname);
		char where[96];

		snprintf(where, sizeof(where), "on %s", cname);
		coll_where = where;
		if (!only || !strcmp(only, "predefined"))
			test_predefined(c);
		if (!only || !strcmp(only, "invalid"))
			test_invalid(c);
		if (!only || !strcmp(only, "user"))
			test_user(c);
		if (!only || !strcmp(only, "pairs"))
			test_pairs(c);
		coll_comm_done(&c);
	}
	coll_where = "finalize";
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll_ops: %s passed\n", only ? only : "all");
	return 0;
}
