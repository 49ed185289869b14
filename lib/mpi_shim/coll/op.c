// SPDX-License-Identifier: MIT
/*
 * op.c - reduction operations: the predefined ones on every datatype the
 * standard defines them for, and the user's (MPI_Op_create, MPI_Op_create_c
 * of MPI-4.0, whose function counts in MPI_Count, and MPI_Op_free).
 *
 * A predefined datatype that a reduction accepts maps to an element kind:
 * C integers by size and signedness (MPI_LONG and MPI_INT64_T share the loop
 * of the machine's 64-bit integer), floating point, complex, logical, byte and
 * the value/index pairs of MINLOC and MAXLOC; the Fortran types map to the
 * same loops (their integers without the logical operations, LOGICAL of
 * each kind with loops of its own, REAL16 and COMPLEX32 in quadruple
 * precision, INTEGER16 where the compiler has __int128).  A table
 * indexed by operation and kind holds one loop per pair the standard defines;
 * an empty slot is an operation that does not apply to that datatype
 * (MPI_ERR_OP).  A derived
 * datatype reduces with a predefined operation when all its elements have the
 * same predefined type; the loop then runs over the elements of its type map.
 */
/* The loops below are the hot part of every reduction and accumulate:
 * GCC vectorizes them at -O2 only with its cheapest cost model, which
 * leaves a loop of unknown length alone; let it weigh them. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif

#include <limits.h>
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "datatype.h"
#include "coll.h"

enum op_kind {
	KIND_NONE = 0, /* no predefined operation applies */
	KIND_I8,
	KIND_U8,
	KIND_I16,
	KIND_U16,
	KIND_I32,
	KIND_U32,
	KIND_I64,
	KIND_U64,
	KIND_FLOAT,
	KIND_DOUBLE,
	KIND_LDOUBLE,
	KIND_CFLOAT,
	KIND_CDOUBLE,
	KIND_CLDOUBLE,
	KIND_BOOL,
	KIND_BYTE,
	KIND_FLOAT_INT,
	KIND_DOUBLE_INT,
	KIND_LONG_INT,
	KIND_2INT,
	KIND_SHORT_INT,
	KIND_LDOUBLE_INT,
	/* Fortran: integers (no logical operations), LOGICAL (4 bytes, .true.
	 * when non-zero), REAL(16) and COMPLEX(16), and the pairs of a value
	 * and an index of the same type */
	KIND_FI8,
	KIND_FI16,
	KIND_FI32,
	KIND_FI64,
	KIND_FLOGICAL,
	KIND_FLOAT128,
	KIND_CFLOAT128,
	KIND_2REAL,
	KIND_2DOUBLE,
	/* the optional Fortran types: LOGICAL(1, 2, 8), INTEGER(16) */
	KIND_FLOGICAL1,
	KIND_FLOGICAL2,
	KIND_FLOGICAL8,
	KIND_FI128,
	KIND_COUNT
};

/* The predefined operations, in the order of the table below. */
enum op_id {
	OP_USER = 0,
	OP_MAX,
	OP_MIN,
	OP_SUM,
	OP_PROD,
	OP_LAND,
	OP_BAND,
	OP_LOR,
	OP_BOR,
	OP_LXOR,
	OP_BXOR,
	OP_MINLOC,
	OP_MAXLOC,
	OP_REPLACE,
	OP_NO_OP,
	OP_COUNT
};

typedef void (*op_loop)(const void *in, void *inout, size_t n);

/*
 * One loop per operation and element type: inout[i] = in[i] op inout[i],
 * the order of the standard (the user function's invec and inoutvec).
 */
#define OP_LOOP(name, T, expr)                                          \
	static void name(const void *in_, void *inout_, size_t n)       \
	{                                                               \
		const T *restrict in = in_;                             \
		T *restrict io = inout_;                                \
		size_t i;                                               \
                                                                        \
		for (i = 0; i < n; i++) {                               \
			T a = in[i], b = io[i];                         \
			io[i] = (expr);                                 \
		}                                                       \
	}

/* Integers: every operation but MINLOC/MAXLOC. */
#define INT_LOOPS(sfx, T)                                   \
	OP_LOOP(max_##sfx, T, a > b ? a : b)                \
	OP_LOOP(min_##sfx, T, a < b ? a : b)                \
	OP_LOOP(sum_##sfx, T, (T)(a + b))                   \
	OP_LOOP(prod_##sfx, T, (T)(a * b))                  \
	OP_LOOP(land_##sfx, T, (T)(a && b))                 \
	OP_LOOP(lor_##sfx, T, (T)(a || b))                  \
	OP_LOOP(lxor_##sfx, T, (T)(!a != !b))               \
	OP_LOOP(band_##sfx, T, (T)(a & b))                  \
	OP_LOOP(bor_##sfx, T, (T)(a | b))                   \
	OP_LOOP(bxor_##sfx, T, (T)(a ^ b))

/*
 * Signed sums and products wrap as two's complement (what every MPI does)
 * rather than invoke undefined behaviour: the unsigned type does the work.
 */
#define SINT_LOOPS(sfx, T, UT)                              \
	OP_LOOP(max_##sfx, T, a > b ? a : b)                \
	OP_LOOP(min_##sfx, T, a < b ? a : b)                \
	OP_LOOP(sum_##sfx, T, (T)((UT)a + (UT)b))           \
	OP_LOOP(prod_##sfx, T, (T)((UT)a * (UT)b))          \
	OP_LOOP(land_##sfx, T, (T)(a && b))                 \
	OP_LOOP(lor_##sfx, T, (T)(a || b))                  \
	OP_LOOP(lxor_##sfx, T, (T)(!a != !b))               \
	OP_LOOP(band_##sfx, T, (T)(a & b))                  \
	OP_LOOP(bor_##sfx, T, (T)(a | b))                   \
	OP_LOOP(bxor_##sfx, T, (T)(a ^ b))

SINT_LOOPS(i8, int8_t, uint8_t)
INT_LOOPS(u8, uint8_t)
SINT_LOOPS(i16, int16_t, uint16_t)
INT_LOOPS(u16, uint16_t)
SINT_LOOPS(i32, int32_t, uint32_t)
INT_LOOPS(u32, uint32_t)
SINT_LOOPS(i64, int64_t, uint64_t)
INT_LOOPS(u64, uint64_t)

/* Floating point: MAX, MIN, SUM, PROD. */
#define FLOAT_LOOPS(sfx, T)                                 \
	OP_LOOP(max_##sfx, T, a > b ? a : b)                \
	OP_LOOP(min_##sfx, T, a < b ? a : b)                \
	OP_LOOP(sum_##sfx, T, a + b)                        \
	OP_LOOP(prod_##sfx, T, a * b)

FLOAT_LOOPS(f, float)
FLOAT_LOOPS(d, double)
FLOAT_LOOPS(ld, long double)

/* Complex: SUM and PROD. */
OP_LOOP(sum_cf, float complex, a + b)
OP_LOOP(prod_cf, float complex, a * b)
OP_LOOP(sum_cd, double complex, a + b)
OP_LOOP(prod_cd, double complex, a * b)
OP_LOOP(sum_cld, long double complex, a + b)
OP_LOOP(prod_cld, long double complex, a * b)

/* Quadruple precision (MPI_REAL16, MPI_COMPLEX32). */
FLOAT_LOOPS(q, mpi_shim_quad)
OP_LOOP(sum_cq, mpi_shim_complex_quad, a + b)
OP_LOOP(prod_cq, mpi_shim_complex_quad, a * b)

/* Fortran LOGICAL of each kind: non-zero is .true.; the results are 1 and 0. */
#define FLOGICAL_LOOPS(sfx, T)                                  \
	OP_LOOP(land_##sfx, T, (a != 0) && (b != 0))            \
	OP_LOOP(lor_##sfx, T, (a != 0) || (b != 0))             \
	OP_LOOP(lxor_##sfx, T, (a != 0) != (b != 0))

FLOGICAL_LOOPS(fl1, int8_t)
FLOGICAL_LOOPS(fl2, int16_t)
FLOGICAL_LOOPS(fl, int32_t)
FLOGICAL_LOOPS(fl8, int64_t)

#if defined(__SIZEOF_INT128__)
/* INTEGER(16): the operations of the Fortran integers; sums and products
 * wrap as the other signed ones do. */
OP_LOOP(max_i128, __int128, a > b ? a : b)
OP_LOOP(min_i128, __int128, a < b ? a : b)
OP_LOOP(sum_i128, __int128, (__int128)((unsigned __int128)a + (unsigned __int128)b))
OP_LOOP(prod_i128, __int128, (__int128)((unsigned __int128)a * (unsigned __int128)b))
OP_LOOP(band_i128, __int128, a & b)
OP_LOOP(bor_i128, __int128, a | b)
OP_LOOP(bxor_i128, __int128, a ^ b)
#endif

/* Logical (MPI_C_BOOL): LAND, LOR, LXOR. */
OP_LOOP(land_b, bool, a && b)
OP_LOOP(lor_b, bool, a || b)
OP_LOOP(lxor_b, bool, a != b)

/*
 * The value/index pairs, laid out as the C structures the datatypes
 * describe.  On a tie the lower index wins, for MINLOC and MAXLOC alike.
 */
struct pair_float_int { float v; int i; };
struct pair_double_int { double v; int i; };
struct pair_long_int { long v; int i; };
struct pair_2int { int v; int i; };
struct pair_short_int { short v; int i; };
struct pair_ldouble_int { long double v; int i; };

#define LOC_LOOPS(sfx, T)                                                                  \
	OP_LOOP(minloc_##sfx, T,                                                           \
		(a.v < b.v ? a : b.v < a.v ? b : (T){ b.v, a.i < b.i ? a.i : b.i }))     \
	OP_LOOP(maxloc_##sfx, T,                                                           \
		(a.v > b.v ? a : b.v > a.v ? b : (T){ b.v, a.i < b.i ? a.i : b.i }))

LOC_LOOPS(fi, struct pair_float_int)
LOC_LOOPS(di, struct pair_double_int)
LOC_LOOPS(li, struct pair_long_int)
LOC_LOOPS(ii, struct pair_2int)
LOC_LOOPS(si, struct pair_short_int)
LOC_LOOPS(ldi, struct pair_ldouble_int)

/* MPI_2REAL and MPI_2DOUBLE_PRECISION: the index is of the value's type. */
struct pair_2real { float v, i; };
struct pair_2double { double v, i; };
LOC_LOOPS(rr, struct pair_2real)
LOC_LOOPS(dd, struct pair_2double)

#define INT_ROW(K, sfx)                                                                  \
	[OP_MAX][K] = max_##sfx, [OP_MIN][K] = min_##sfx, [OP_SUM][K] = sum_##sfx,       \
	[OP_PROD][K] = prod_##sfx, [OP_LAND][K] = land_##sfx, [OP_LOR][K] = lor_##sfx,   \
	[OP_LXOR][K] = lxor_##sfx, [OP_BAND][K] = band_##sfx, [OP_BOR][K] = bor_##sfx,   \
	[OP_BXOR][K] = bxor_##sfx

/* Fortran integers: no logical operations. */
#define FINT_ROW(K, sfx)                                                                 \
	[OP_MAX][K] = max_##sfx, [OP_MIN][K] = min_##sfx, [OP_SUM][K] = sum_##sfx,       \
	[OP_PROD][K] = prod_##sfx, [OP_BAND][K] = band_##sfx, [OP_BOR][K] = bor_##sfx,   \
	[OP_BXOR][K] = bxor_##sfx

#define FLOGICAL_ROW(K, sfx)                                                             \
	[OP_LAND][K] = land_##sfx, [OP_LOR][K] = lor_##sfx, [OP_LXOR][K] = lxor_##sfx

#define FLOAT_ROW(K, sfx)                                                                \
	[OP_MAX][K] = max_##sfx, [OP_MIN][K] = min_##sfx, [OP_SUM][K] = sum_##sfx,       \
	[OP_PROD][K] = prod_##sfx

static const op_loop op_table[OP_COUNT][KIND_COUNT] = {
	INT_ROW(KIND_I8, i8),
	INT_ROW(KIND_U8, u8),
	INT_ROW(KIND_I16, i16),
	INT_ROW(KIND_U16, u16),
	INT_ROW(KIND_I32, i32),
	INT_ROW(KIND_U32, u32),
	INT_ROW(KIND_I64, i64),
	INT_ROW(KIND_U64, u64),
	FLOAT_ROW(KIND_FLOAT, f),
	FLOAT_ROW(KIND_DOUBLE, d),
	FLOAT_ROW(KIND_LDOUBLE, ld),
	[OP_SUM][KIND_CFLOAT] = sum_cf,
	[OP_PROD][KIND_CFLOAT] = prod_cf,
	[OP_SUM][KIND_CDOUBLE] = sum_cd,
	[OP_PROD][KIND_CDOUBLE] = prod_cd,
	[OP_SUM][KIND_CLDOUBLE] = sum_cld,
	[OP_PROD][KIND_CLDOUBLE] = prod_cld,
	[OP_LAND][KIND_BOOL] = land_b,
	[OP_LOR][KIND_BOOL] = lor_b,
	[OP_LXOR][KIND_BOOL] = lxor_b,
	/* MPI_BYTE: the bitwise operations only, on unsigned bytes. */
	[OP_BAND][KIND_BYTE] = band_u8,
	[OP_BOR][KIND_BYTE] = bor_u8,
	[OP_BXOR][KIND_BYTE] = bxor_u8,
	[OP_MINLOC][KIND_FLOAT_INT] = minloc_fi,
	[OP_MAXLOC][KIND_FLOAT_INT] = maxloc_fi,
	[OP_MINLOC][KIND_DOUBLE_INT] = minloc_di,
	[OP_MAXLOC][KIND_DOUBLE_INT] = maxloc_di,
	[OP_MINLOC][KIND_LONG_INT] = minloc_li,
	[OP_MAXLOC][KIND_LONG_INT] = maxloc_li,
	[OP_MINLOC][KIND_2INT] = minloc_ii,
	[OP_MAXLOC][KIND_2INT] = maxloc_ii,
	[OP_MINLOC][KIND_SHORT_INT] = minloc_si,
	[OP_MAXLOC][KIND_SHORT_INT] = maxloc_si,
	[OP_MINLOC][KIND_LDOUBLE_INT] = minloc_ldi,
	[OP_MAXLOC][KIND_LDOUBLE_INT] = maxloc_ldi,
	FINT_ROW(KIND_FI8, i8),
	FINT_ROW(KIND_FI16, i16),
	FINT_ROW(KIND_FI32, i32),
	FINT_ROW(KIND_FI64, i64),
	FLOGICAL_ROW(KIND_FLOGICAL1, fl1),
	FLOGICAL_ROW(KIND_FLOGICAL2, fl2),
	FLOGICAL_ROW(KIND_FLOGICAL, fl),
	FLOGICAL_ROW(KIND_FLOGICAL8, fl8),
#if defined(__SIZEOF_INT128__)
	FINT_ROW(KIND_FI128, i128),
#endif
	FLOAT_ROW(KIND_FLOAT128, q),
	[OP_SUM][KIND_CFLOAT128] = sum_cq,
	[OP_PROD][KIND_CFLOAT128] = prod_cq,
	[OP_MINLOC][KIND_2REAL] = minloc_rr,
	[OP_MAXLOC][KIND_2REAL] = maxloc_rr,
	[OP_MINLOC][KIND_2DOUBLE] = minloc_dd,
	[OP_MAXLOC][KIND_2DOUBLE] = maxloc_dd,
};

/* The element kind of a C integer type of size bytes. */
static enum op_kind int_kind(size_t size, int is_signed)
{
	switch (size) {
	case 1: return is_signed ? KIND_I8 : KIND_U8;
	case 2: return is_signed ? KIND_I16 : KIND_U16;
	case 4: return is_signed ? KIND_I32 : KIND_U32;
	case 8: return is_signed ? KIND_I64 : KIND_U64;
	default: return KIND_NONE;
	}
}

#define SINT_KIND(T) int_kind(sizeof(T), 1)
#define UINT_KIND(T) int_kind(sizeof(T), 0)

static enum op_kind op_kind_of(enum mpi_shim_basic basic)
{
	switch (basic) {
	/* Not a C integer type in MPI-3.1 (5.9.2), but one in Open MPI and
	 * MPICH, and programs use it so (the OSU one-sided benchmarks):
	 * char, signed or not as the compiler has it. */
	case MPI_SHIM_BASIC_CHAR: return int_kind(sizeof(char), (char)-1 < 0);
	case MPI_SHIM_BASIC_SIGNED_CHAR: return SINT_KIND(signed char);
	case MPI_SHIM_BASIC_UNSIGNED_CHAR: return UINT_KIND(unsigned char);
	case MPI_SHIM_BASIC_SHORT: return SINT_KIND(short);
	case MPI_SHIM_BASIC_UNSIGNED_SHORT: return UINT_KIND(unsigned short);
	case MPI_SHIM_BASIC_INT: return SINT_KIND(int);
	case MPI_SHIM_BASIC_UNSIGNED: return UINT_KIND(unsigned);
	case MPI_SHIM_BASIC_LONG: return SINT_KIND(long);
	case MPI_SHIM_BASIC_UNSIGNED_LONG: return UINT_KIND(unsigned long);
	case MPI_SHIM_BASIC_LONG_LONG: return SINT_KIND(long long);
	case MPI_SHIM_BASIC_UNSIGNED_LONG_LONG: return UINT_KIND(unsigned long long);
	case MPI_SHIM_BASIC_INT8_T: return KIND_I8;
	case MPI_SHIM_BASIC_INT16_T: return KIND_I16;
	case MPI_SHIM_BASIC_INT32_T: return KIND_I32;
	case MPI_SHIM_BASIC_INT64_T: return KIND_I64;
	case MPI_SHIM_BASIC_UINT8_T: return KIND_U8;
	case MPI_SHIM_BASIC_UINT16_T: return KIND_U16;
	case MPI_SHIM_BASIC_UINT32_T: return KIND_U32;
	case MPI_SHIM_BASIC_UINT64_T: return KIND_U64;
	case MPI_SHIM_BASIC_AINT: return SINT_KIND(MPI_Aint);
	case MPI_SHIM_BASIC_OFFSET: return SINT_KIND(MPI_Offset);
	case MPI_SHIM_BASIC_COUNT: return SINT_KIND(MPI_Count);
	case MPI_SHIM_BASIC_FLOAT: return KIND_FLOAT;
	case MPI_SHIM_BASIC_DOUBLE: return KIND_DOUBLE;
	case MPI_SHIM_BASIC_LONG_DOUBLE: return KIND_LDOUBLE;
	case MPI_SHIM_BASIC_C_FLOAT_COMPLEX: return KIND_CFLOAT;
	case MPI_SHIM_BASIC_C_DOUBLE_COMPLEX: return KIND_CDOUBLE;
	case MPI_SHIM_BASIC_C_LONG_DOUBLE_COMPLEX: return KIND_CLDOUBLE;
	case MPI_SHIM_BASIC_C_BOOL: return KIND_BOOL;
	case MPI_SHIM_BASIC_BYTE: return KIND_BYTE;
	case MPI_SHIM_BASIC_FLOAT_INT: return KIND_FLOAT_INT;
	case MPI_SHIM_BASIC_DOUBLE_INT: return KIND_DOUBLE_INT;
	case MPI_SHIM_BASIC_LONG_INT: return KIND_LONG_INT;
	case MPI_SHIM_BASIC_2INT: return KIND_2INT;
	case MPI_SHIM_BASIC_SHORT_INT: return KIND_SHORT_INT;
	case MPI_SHIM_BASIC_LONG_DOUBLE_INT: return KIND_LDOUBLE_INT;
	case MPI_SHIM_BASIC_INTEGER: return KIND_FI32;
	case MPI_SHIM_BASIC_INTEGER1: return KIND_FI8;
	case MPI_SHIM_BASIC_INTEGER2: return KIND_FI16;
	case MPI_SHIM_BASIC_INTEGER4: return KIND_FI32;
	case MPI_SHIM_BASIC_INTEGER8: return KIND_FI64;
	case MPI_SHIM_BASIC_REAL: return KIND_FLOAT;
	case MPI_SHIM_BASIC_REAL4: return KIND_FLOAT;
	case MPI_SHIM_BASIC_DOUBLE_PRECISION: return KIND_DOUBLE;
	case MPI_SHIM_BASIC_REAL8: return KIND_DOUBLE;
	case MPI_SHIM_BASIC_REAL16: return KIND_FLOAT128;
	case MPI_SHIM_BASIC_COMPLEX: return KIND_CFLOAT;
	case MPI_SHIM_BASIC_COMPLEX8: return KIND_CFLOAT;
	case MPI_SHIM_BASIC_CXX_FLOAT_COMPLEX: return KIND_CFLOAT;
	case MPI_SHIM_BASIC_DOUBLE_COMPLEX: return KIND_CDOUBLE;
	case MPI_SHIM_BASIC_COMPLEX16: return KIND_CDOUBLE;
	case MPI_SHIM_BASIC_CXX_DOUBLE_COMPLEX: return KIND_CDOUBLE;
	case MPI_SHIM_BASIC_CXX_LONG_DOUBLE_COMPLEX: return KIND_CLDOUBLE;
	case MPI_SHIM_BASIC_COMPLEX32: return KIND_CFLOAT128;
	case MPI_SHIM_BASIC_LOGICAL: return KIND_FLOGICAL;
	case MPI_SHIM_BASIC_LOGICAL1: return KIND_FLOGICAL1;
	case MPI_SHIM_BASIC_LOGICAL2: return KIND_FLOGICAL2;
	case MPI_SHIM_BASIC_LOGICAL4: return KIND_FLOGICAL;
	case MPI_SHIM_BASIC_LOGICAL8: return KIND_FLOGICAL8;
	case MPI_SHIM_BASIC_INTEGER16: return KIND_FI128;
	case MPI_SHIM_BASIC_CXX_BOOL: return KIND_BOOL;
	case MPI_SHIM_BASIC_2REAL: return KIND_2REAL;
	case MPI_SHIM_BASIC_2DOUBLE_PRECISION: return KIND_2DOUBLE;
	case MPI_SHIM_BASIC_2INTEGER: return KIND_2INT;
	/* MPI_WCHAR and MPI_CHARACTER are characters, MPI_PACKED is opaque: no
	 * reduction applies to them. */
	default: return KIND_NONE;
	}
}

struct mpi_shim_op {
	enum op_id id;
	int commute;
	int predefined;
	MPI_User_function *fn; /* a user operation */
	MPI_User_function_c *fn_c; /* or one made by MPI_Op_create_c */
	int refcount;          /* the user's handle, plus collectives in flight */
	const char *name;
};

#define MPI_SHIM_OP(obj, op_id, mpiname) \
	struct mpi_shim_op obj = { .id = op_id, .commute = 1, .predefined = 1, .name = mpiname }

MPI_SHIM_OP(mpi_shim_op_max, OP_MAX, "MPI_MAX");
MPI_SHIM_OP(mpi_shim_op_min, OP_MIN, "MPI_MIN");
MPI_SHIM_OP(mpi_shim_op_sum, OP_SUM, "MPI_SUM");
MPI_SHIM_OP(mpi_shim_op_prod, OP_PROD, "MPI_PROD");
MPI_SHIM_OP(mpi_shim_op_land, OP_LAND, "MPI_LAND");
MPI_SHIM_OP(mpi_shim_op_band, OP_BAND, "MPI_BAND");
MPI_SHIM_OP(mpi_shim_op_lor, OP_LOR, "MPI_LOR");
MPI_SHIM_OP(mpi_shim_op_bor, OP_BOR, "MPI_BOR");
MPI_SHIM_OP(mpi_shim_op_lxor, OP_LXOR, "MPI_LXOR");
MPI_SHIM_OP(mpi_shim_op_bxor, OP_BXOR, "MPI_BXOR");
MPI_SHIM_OP(mpi_shim_op_minloc, OP_MINLOC, "MPI_MINLOC");
MPI_SHIM_OP(mpi_shim_op_maxloc, OP_MAXLOC, "MPI_MAXLOC");
/* For one-sided accumulate only: no collective accepts them. */
MPI_SHIM_OP(mpi_shim_op_replace, OP_REPLACE, "MPI_REPLACE");
MPI_SHIM_OP(mpi_shim_op_no_op, OP_NO_OP, "MPI_NO_OP");

/* The predefined operations by their id, for one-sided messages. */
static struct mpi_shim_op *const predefined_ops[OP_COUNT] = {
	[OP_MAX] = &mpi_shim_op_max,       [OP_MIN] = &mpi_shim_op_min,
	[OP_SUM] = &mpi_shim_op_sum,       [OP_PROD] = &mpi_shim_op_prod,
	[OP_LAND] = &mpi_shim_op_land,     [OP_BAND] = &mpi_shim_op_band,
	[OP_LOR] = &mpi_shim_op_lor,       [OP_BOR] = &mpi_shim_op_bor,
	[OP_LXOR] = &mpi_shim_op_lxor,     [OP_BXOR] = &mpi_shim_op_bxor,
	[OP_MINLOC] = &mpi_shim_op_minloc, [OP_MAXLOC] = &mpi_shim_op_maxloc,
	[OP_REPLACE] = &mpi_shim_op_replace, [OP_NO_OP] = &mpi_shim_op_no_op,
};

int mpi_shim_op_index(MPI_Op op)
{
	return op != MPI_OP_NULL && op->predefined ? (int)op->id : -1;
}

MPI_Op mpi_shim_op_of_index(unsigned index)
{
	return index < OP_COUNT ? predefined_ops[index] : MPI_OP_NULL;
}

int mpi_shim_op_is_replace(MPI_Op op)
{
	return op->id == OP_REPLACE;
}

int mpi_shim_op_is_no_op(MPI_Op op)
{
	return op->id == OP_NO_OP;
}

/* The loop of a predefined op on the basic type of t, or NULL. */
static op_loop op_loop_of(MPI_Op op, MPI_Datatype t)
{
	if (!t->basic || op->id <= OP_USER || op->id >= OP_COUNT)
		return NULL;
	return op_table[op->id][op_kind_of(t->basic->kind)];
}

mpi_shim_op_loop mpi_shim_op_loop_of(MPI_Op op, MPI_Datatype t)
{
	if (op == MPI_OP_NULL || t == MPI_DATATYPE_NULL || !op->predefined || t != t->basic ||
	    !t->contiguous)
		return NULL;
	return op_loop_of(op, t);
}

int mpi_shim_op_valid(MPI_Op op, MPI_Datatype t)
{
	if (op == MPI_OP_NULL || t == MPI_DATATYPE_NULL)
		return MPI_ERR_OP;
	if (op->id == OP_USER)
		return op->fn || op->fn_c ? MPI_SUCCESS : MPI_ERR_OP;
	return op_loop_of(op, t) ? MPI_SUCCESS : MPI_ERR_OP;
}

/* The argument check of shim.h: the operation, and whether it applies to t. */
int mpi_shim_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype t, const char *call)
{
	if (op == MPI_OP_NULL)
		return mpi_shim_err(comm, MPI_ERR_OP, call, "the operation is MPI_OP_NULL");
	if (op->id == OP_REPLACE || op->id == OP_NO_OP)
		return mpi_shim_err(comm, MPI_ERR_OP, call,
				    "%s is for one-sided accumulate only, not for reductions",
				    op->name);
	if (mpi_shim_op_valid(op, t))
		return mpi_shim_err(comm, MPI_ERR_OP, call, "%s is not defined on %s%s", op->name,
				    t->name[0] ? t->name : "this datatype",
				    t->basic ? "" : " (a derived type of several basic types)");
	return MPI_SUCCESS;
}

/* Bytes of a non-contiguous buffer reduced at a time. */
#define OP_CHUNK 4096

void mpi_shim_op_apply(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype t)
{
	union {
		long double align;
		char c[OP_CHUNK];
	} a, b, sa, sb;
	size_t n, bytes, off, esize, step;
	int pairs;
	op_loop loop;

	if (!count)
		return;
	if (op->id == OP_USER && op->fn_c) {
		/* A large-count function takes the whole vector at once. */
		MPI_Datatype dt = t;
		MPI_Count len = (MPI_Count)count;

		op->fn_c((void *)in, inout, &len, &dt);
		return;
	}
	if (op->id == OP_USER) {
		/* The user's function counts in int: at most INT_MAX at a time. */
		const char *ip = in;
		char *op_ = inout;

		while (count) {
			MPI_Datatype dt = t;
			int len = count > INT_MAX ? INT_MAX : (int)count;

			op->fn((void *)ip, op_, &len, &dt);
			ip += (size_t)len * (size_t)t->extent;
			op_ += (size_t)len * (size_t)t->extent;
			count -= (size_t)len;
		}
		return;
	}
	loop = op_loop_of(op, t);
	if (!loop)
		return; /* refused by mpi_shim_op_valid before */
	n = (size_t)count * t->nbasic;
	/* A predefined pair type has holes but lies in memory as the C struct
	 * the MINLOC/MAXLOC loops expect. */
	if (t->contiguous || t == t->basic) {
		loop(mpi_shim_datatype_start(in, t), mpi_shim_datatype_start(inout, t), n);
		return;
	}
	/*
	 * A derived type of one basic type with gaps: reduce its packed form
	 * a chunk at a time (a whole number of basic elements per chunk).
	 * Packed pairs lose their padding: they are expanded back into
	 * structs for the loop, and compressed again after it.
	 */
	esize = t->basic->size;
	pairs = (MPI_Aint)t->basic->size != t->basic->extent;
	bytes = n * esize;
	step = pairs ? OP_CHUNK / t->basic->extent * esize : OP_CHUNK - OP_CHUNK % esize;
	for (off = 0; off < bytes; off += step) {
		size_t len = bytes - off < step ? bytes - off : step;

		mpi_shim_datatype_pack(in, count, t, off, a.c, len);
		mpi_shim_datatype_pack(inout, count, t, off, b.c, len);
		if (pairs) {
			mpi_shim_datatype_pairs_expand(t->basic, a.c, sa.c, len / esize);
			mpi_shim_datatype_pairs_expand(t->basic, b.c, sb.c, len / esize);
			loop(sa.c, sb.c, len / esize);
			mpi_shim_datatype_pairs_compress(t->basic, sb.c, b.c, len / esize);
		} else {
			loop(a.c, b.c, len / esize);
		}
		mpi_shim_datatype_unpack(b.c, len, inout, count, t, off);
	}
}

int mpi_shim_op_commutative(MPI_Op op)
{
	return op->commute;
}

void mpi_shim_op_retain(MPI_Op op)
{
	if (!op->predefined)
		op->refcount++;
}

void mpi_shim_op_release(MPI_Op op)
{
	if (!op->predefined && --op->refcount == 0)
		free(op);
}

/* A user operation of function fn (or fn_c): MPI_Op_create and MPI_Op_create_c. */
static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op,
		     const char *call)
{
	struct mpi_shim_op *o;
	int rc;

	rc = mpi_shim_check_init(call);
	if (rc)
		return rc;
	if ((!fn && !fn_c) || !op)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL",
				    !fn && !fn_c ? "the function" : "the op pointer");
	o = calloc(1, sizeof(*o));
	if (!o)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
				    "no memory for an operation");
	o->id = OP_USER;
	o->commute = !!commute;
	o->fn = fn;
	o->fn_c = fn_c;
	o->refcount = 1;
	o->name = "user operation";
	*op = o;
	return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
	MPI_SHIM_ENTER();
	return op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}
MPI_SHIM_ALIAS(MPI_Op_create);

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
	MPI_SHIM_ENTER();
	return op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}
MPI_SHIM_ALIAS(MPI_Op_create_c);

int mpi_shim_op_predefined(MPI_Op op)
{
	return op != MPI_OP_NULL && op->predefined;
}

int PMPI_Op_free(MPI_Op *op)
{
	MPI_SHIM_ENTER();
	int rc;

	rc = mpi_shim_check_init("MPI_Op_free");
	if (rc)
		return rc;
	if (!op || *op == MPI_OP_NULL)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free",
				    "the operation is MPI_OP_NULL");
	if ((*op)->predefined)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free",
				    "%s is predefined and cannot be freed", (*op)->name);
	/* A non-blocking collective in flight holds it until it completes. */
	mpi_shim_op_release(*op);
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Op_free);

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
	MPI_SHIM_ENTER();
	int rc;

	rc = mpi_shim_check_init("MPI_Op_commutative");
	if (rc)
		return rc;
	if (op == MPI_OP_NULL)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_commutative",
				    "the operation is MPI_OP_NULL");
	if (!commute)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_commutative",
				    "the result pointer is NULL");
	*commute = op->commute;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Op_commutative);

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
		      MPI_Op op)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Reduce_local";
	int rc;

	if ((rc = mpi_shim_check_init(call)) ||
	    (rc = mpi_shim_check_count(MPI_COMM_NULL, count, call)) ||
	    (rc = mpi_shim_check_type(MPI_COMM_NULL, datatype, call)) ||
	    (rc = mpi_shim_check_op(MPI_COMM_NULL, op, datatype, call)) ||
	    (rc = mpi_shim_check_buf(MPI_COMM_NULL, inbuf, count, datatype, call)) ||
	    (rc = mpi_shim_check_buf(MPI_COMM_NULL, inoutbuf, count, datatype, call)))
		return rc;
	if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed here");
	mpi_shim_op_apply(op, inbuf, inoutbuf, count, datatype);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Reduce_local);
