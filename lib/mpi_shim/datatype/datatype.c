/* SPDX-License-Identifier: MIT */
/*
 * datatype.c - MPI datatypes: the predefined types, the type constructors,
 * their bounds, packing and element counts.
 *
 * A type's private part (struct type_info, behind mpi_shim_type.layout)
 * holds its memory layout (type_layout.h), which packing walks, and the
 * description it was built from (block lengths and component types), which
 * only element counting reads.  Bounds follow the standard's type maps,
 * including the "sticky" markers: the lower and upper bounds set by
 * MPI_Type_create_resized stay the bounds of every type built on it, even
 * when data lies beyond them; without markers, a struct's extent is padded
 * to the alignment of its most aligned basic member, as a C compiler does.
 *
 * A derived type holds a reference on each of its component types (for
 * Get_elements); the user's MPI_Type_free drops the handle's reference, so
 * a type stays alive while types built on it or requests using it need it.
 *
 * Every constructor also records the type's envelope, the combiner and the
 * arguments it was called with (MPI_Type_get_envelope/get_contents), with
 * a reference on each datatype argument; the large-count _c constructors
 * keep their counts as large counts.  MPI_Type_get_contents hands out new
 * handles to derived types, so a type counts its user handles.
 */
#include <errno.h>
#include <limits.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "shim.h"
#include "datatype.h"
#include "type_layout.h"

enum type_combiner {
	TYPE_PREDEFINED,
	TYPE_CONTIGUOUS,
	TYPE_VECTOR,
	TYPE_INDEXED,
	TYPE_STRUCT,
	TYPE_RESIZED,
	TYPE_DUP,
};

/*
 * The private part.  The layout comes first: unit tests read it through
 * mpi_shim_type.layout (see type_layout.h).
 */
struct type_info {
	struct mpi_shim_layout layout;
	enum type_combiner combiner;
	uint8_t user_freed; /* MPI_Type_free was called on its last handle */
	int handles;	    /* the user's handles (MPI_Type_get_contents adds some) */
	uint8_t lb_marker;  /* lb was set explicitly (resized), and sticks */
	uint8_t ub_marker;  /* the same for ub */
	size_t align;	    /* strictest alignment of its basic members */
	uint64_t nelem;	    /* basic elements in one element (a pair counts 2) */
	size_t pair_value;  /* a pair type: bytes of the value before the int */
	int nblocks;	    /* the description: block i is blocklen[i] */
	int64_t *blocklen;  /* consecutive copies of types[ntypes > 1 ? i : 0] */
	struct mpi_shim_type **types;
	int ntypes;
	/* How it was made (MPI_COMBINER_x; 0 for a named type) and with what. */
	int env_combiner;
	int env_ni, env_na, env_nc, env_nd;
	int *env_ints;
	MPI_Aint *env_aints;
	MPI_Count *env_counts;
	MPI_Datatype *env_types;
};

_Static_assert(offsetof(struct type_info, layout) == 0, "the layout opens type_info");

static inline struct type_info *type_info(MPI_Datatype t)
{
	return t->layout;
}

/* --- Predefined types --- */

struct pair_float_int {
	float value;
	int index;
};
struct pair_double_int {
	double value;
	int index;
};
struct pair_long_int {
	long value;
	int index;
};
struct pair_2int {
	int value;
	int index;
};
struct pair_short_int {
	short value;
	int index;
};
struct pair_long_double_int {
	long double value;
	int index;
};

/* clang-format off */
/*
 * A predefined type of one basic element of C type c.  Sizes, bounds and
 * layouts are completed by datatype_init (pairs have holes).
 */
#define PREDEFINED(obj, c, k, mpiname)                                                             \
	static struct type_info obj##_info = {                                                     \
		.combiner = TYPE_PREDEFINED,                                                       \
		.align = alignof(c),                                                               \
		.nelem = 1,                                                                        \
	};                                                                                         \
	struct mpi_shim_type obj = {                                                               \
		.size = sizeof(c),                                                                 \
		.lb = 0,                                                                           \
		.extent = sizeof(c),                                                               \
		.true_lb = 0,                                                                      \
		.true_extent = sizeof(c),                                                          \
		.contiguous = 1,                                                                   \
		.committed = 1,                                                                    \
		.predefined = 1,                                                                   \
		.basic = &obj,                                                                     \
		.nbasic = 1,                                                                       \
		.kind = k,                                                                         \
		.refcount = 1,                                                                     \
		.layout = &obj##_info,                                                             \
		.name = mpiname,                                                                   \
	}

PREDEFINED(mpi_shim_type_char, char, MPI_SHIM_BASIC_CHAR, "MPI_CHAR");
PREDEFINED(mpi_shim_type_signed_char, signed char, MPI_SHIM_BASIC_SIGNED_CHAR, "MPI_SIGNED_CHAR");
PREDEFINED(mpi_shim_type_unsigned_char, unsigned char, MPI_SHIM_BASIC_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
PREDEFINED(mpi_shim_type_byte, unsigned char, MPI_SHIM_BASIC_BYTE, "MPI_BYTE");
PREDEFINED(mpi_shim_type_packed, unsigned char, MPI_SHIM_BASIC_PACKED, "MPI_PACKED");
PREDEFINED(mpi_shim_type_wchar, wchar_t, MPI_SHIM_BASIC_WCHAR, "MPI_WCHAR");
PREDEFINED(mpi_shim_type_short, short, MPI_SHIM_BASIC_SHORT, "MPI_SHORT");
PREDEFINED(mpi_shim_type_unsigned_short, unsigned short, MPI_SHIM_BASIC_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
PREDEFINED(mpi_shim_type_int, int, MPI_SHIM_BASIC_INT, "MPI_INT");
PREDEFINED(mpi_shim_type_unsigned, unsigned, MPI_SHIM_BASIC_UNSIGNED, "MPI_UNSIGNED");
PREDEFINED(mpi_shim_type_long, long, MPI_SHIM_BASIC_LONG, "MPI_LONG");
PREDEFINED(mpi_shim_type_unsigned_long, unsigned long, MPI_SHIM_BASIC_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
PREDEFINED(mpi_shim_type_long_long, long long, MPI_SHIM_BASIC_LONG_LONG, "MPI_LONG_LONG");
PREDEFINED(mpi_shim_type_unsigned_long_long, unsigned long long, MPI_SHIM_BASIC_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
PREDEFINED(mpi_shim_type_float, float, MPI_SHIM_BASIC_FLOAT, "MPI_FLOAT");
PREDEFINED(mpi_shim_type_double, double, MPI_SHIM_BASIC_DOUBLE, "MPI_DOUBLE");
PREDEFINED(mpi_shim_type_long_double, long double, MPI_SHIM_BASIC_LONG_DOUBLE, "MPI_LONG_DOUBLE");
PREDEFINED(mpi_shim_type_c_bool, _Bool, MPI_SHIM_BASIC_C_BOOL, "MPI_C_BOOL");
PREDEFINED(mpi_shim_type_int8_t, int8_t, MPI_SHIM_BASIC_INT8_T, "MPI_INT8_T");
PREDEFINED(mpi_shim_type_int16_t, int16_t, MPI_SHIM_BASIC_INT16_T, "MPI_INT16_T");
PREDEFINED(mpi_shim_type_int32_t, int32_t, MPI_SHIM_BASIC_INT32_T, "MPI_INT32_T");
PREDEFINED(mpi_shim_type_int64_t, int64_t, MPI_SHIM_BASIC_INT64_T, "MPI_INT64_T");
PREDEFINED(mpi_shim_type_uint8_t, uint8_t, MPI_SHIM_BASIC_UINT8_T, "MPI_UINT8_T");
PREDEFINED(mpi_shim_type_uint16_t, uint16_t, MPI_SHIM_BASIC_UINT16_T, "MPI_UINT16_T");
PREDEFINED(mpi_shim_type_uint32_t, uint32_t, MPI_SHIM_BASIC_UINT32_T, "MPI_UINT32_T");
PREDEFINED(mpi_shim_type_uint64_t, uint64_t, MPI_SHIM_BASIC_UINT64_T, "MPI_UINT64_T");
PREDEFINED(mpi_shim_type_aint, MPI_Aint, MPI_SHIM_BASIC_AINT, "MPI_AINT");
PREDEFINED(mpi_shim_type_offset, MPI_Offset, MPI_SHIM_BASIC_OFFSET, "MPI_OFFSET");
PREDEFINED(mpi_shim_type_count, MPI_Count, MPI_SHIM_BASIC_COUNT, "MPI_COUNT");
/* MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one type: named by the first. */
PREDEFINED(mpi_shim_type_c_float_complex, float _Complex, MPI_SHIM_BASIC_C_FLOAT_COMPLEX, "MPI_C_COMPLEX");
PREDEFINED(mpi_shim_type_c_double_complex, double _Complex, MPI_SHIM_BASIC_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
PREDEFINED(mpi_shim_type_c_long_double_complex, long double _Complex, MPI_SHIM_BASIC_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
PREDEFINED(mpi_shim_type_float_int, struct pair_float_int, MPI_SHIM_BASIC_FLOAT_INT, "MPI_FLOAT_INT");
PREDEFINED(mpi_shim_type_double_int, struct pair_double_int, MPI_SHIM_BASIC_DOUBLE_INT, "MPI_DOUBLE_INT");
PREDEFINED(mpi_shim_type_long_int, struct pair_long_int, MPI_SHIM_BASIC_LONG_INT, "MPI_LONG_INT");
PREDEFINED(mpi_shim_type_2int, struct pair_2int, MPI_SHIM_BASIC_2INT, "MPI_2INT");
PREDEFINED(mpi_shim_type_short_int, struct pair_short_int, MPI_SHIM_BASIC_SHORT_INT, "MPI_SHORT_INT");
PREDEFINED(mpi_shim_type_long_double_int, struct pair_long_double_int, MPI_SHIM_BASIC_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");

/* Fortran, gfortran's sizes; REAL16 is IEEE quadruple precision. */
struct pair_2real {
	float value, index;
};
struct pair_2double_precision {
	double value, index;
};
struct pair_2integer {
	int32_t value, index;
};

PREDEFINED(mpi_shim_type_integer, int32_t, MPI_SHIM_BASIC_INTEGER, "MPI_INTEGER");
PREDEFINED(mpi_shim_type_real, float, MPI_SHIM_BASIC_REAL, "MPI_REAL");
PREDEFINED(mpi_shim_type_double_precision, double, MPI_SHIM_BASIC_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION");
PREDEFINED(mpi_shim_type_complex, float _Complex, MPI_SHIM_BASIC_COMPLEX, "MPI_COMPLEX");
PREDEFINED(mpi_shim_type_double_complex, double _Complex, MPI_SHIM_BASIC_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX");
PREDEFINED(mpi_shim_type_logical, int32_t, MPI_SHIM_BASIC_LOGICAL, "MPI_LOGICAL");
PREDEFINED(mpi_shim_type_character, char, MPI_SHIM_BASIC_CHARACTER, "MPI_CHARACTER");
PREDEFINED(mpi_shim_type_integer1, int8_t, MPI_SHIM_BASIC_INTEGER1, "MPI_INTEGER1");
PREDEFINED(mpi_shim_type_integer2, int16_t, MPI_SHIM_BASIC_INTEGER2, "MPI_INTEGER2");
PREDEFINED(mpi_shim_type_integer4, int32_t, MPI_SHIM_BASIC_INTEGER4, "MPI_INTEGER4");
PREDEFINED(mpi_shim_type_integer8, int64_t, MPI_SHIM_BASIC_INTEGER8, "MPI_INTEGER8");
PREDEFINED(mpi_shim_type_real4, float, MPI_SHIM_BASIC_REAL4, "MPI_REAL4");
PREDEFINED(mpi_shim_type_real8, double, MPI_SHIM_BASIC_REAL8, "MPI_REAL8");
PREDEFINED(mpi_shim_type_real16, mpi_shim_quad, MPI_SHIM_BASIC_REAL16, "MPI_REAL16");
PREDEFINED(mpi_shim_type_complex8, float _Complex, MPI_SHIM_BASIC_COMPLEX8, "MPI_COMPLEX8");
PREDEFINED(mpi_shim_type_complex16, double _Complex, MPI_SHIM_BASIC_COMPLEX16, "MPI_COMPLEX16");
PREDEFINED(mpi_shim_type_complex32, mpi_shim_complex_quad, MPI_SHIM_BASIC_COMPLEX32, "MPI_COMPLEX32");
PREDEFINED(mpi_shim_type_cxx_bool, _Bool, MPI_SHIM_BASIC_CXX_BOOL, "MPI_CXX_BOOL");
PREDEFINED(mpi_shim_type_cxx_float_complex, float _Complex, MPI_SHIM_BASIC_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX");
PREDEFINED(mpi_shim_type_cxx_double_complex, double _Complex, MPI_SHIM_BASIC_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX");
PREDEFINED(mpi_shim_type_cxx_long_double_complex, long double _Complex, MPI_SHIM_BASIC_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX");
PREDEFINED(mpi_shim_type_2real, struct pair_2real, MPI_SHIM_BASIC_2REAL, "MPI_2REAL");
PREDEFINED(mpi_shim_type_2double_precision, struct pair_2double_precision, MPI_SHIM_BASIC_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION");
PREDEFINED(mpi_shim_type_2integer, struct pair_2integer, MPI_SHIM_BASIC_2INTEGER, "MPI_2INTEGER");
/* The optional Fortran types that gfortran has (no REAL(2), so no MPI_REAL2 nor MPI_COMPLEX4). */
PREDEFINED(mpi_shim_type_logical1, int8_t, MPI_SHIM_BASIC_LOGICAL1, "MPI_LOGICAL1");
PREDEFINED(mpi_shim_type_logical2, int16_t, MPI_SHIM_BASIC_LOGICAL2, "MPI_LOGICAL2");
PREDEFINED(mpi_shim_type_logical4, int32_t, MPI_SHIM_BASIC_LOGICAL4, "MPI_LOGICAL4");
PREDEFINED(mpi_shim_type_logical8, int64_t, MPI_SHIM_BASIC_LOGICAL8, "MPI_LOGICAL8");
PREDEFINED(mpi_shim_type_integer16, mpi_shim_int128, MPI_SHIM_BASIC_INTEGER16, "MPI_INTEGER16");

/* The Fortran pairs have no holes: two basic elements of half the size. */
static struct mpi_shim_type *const fortran_pairs[] = {
	&mpi_shim_type_2real,
	&mpi_shim_type_2double_precision,
	&mpi_shim_type_2integer,
};

/* The pairs: the value's size and where the int index lies. */
#define PAIR(obj, s) { &obj, sizeof(((struct s *)0)->value), offsetof(struct s, index) }
static const struct {
	struct mpi_shim_type *type;
	size_t value_size, index_offset;
} pairs[] = {
	PAIR(mpi_shim_type_float_int, pair_float_int),
	PAIR(mpi_shim_type_double_int, pair_double_int),
	PAIR(mpi_shim_type_long_int, pair_long_int),
	PAIR(mpi_shim_type_2int, pair_2int),
	PAIR(mpi_shim_type_short_int, pair_short_int),
	PAIR(mpi_shim_type_long_double_int, pair_long_double_int),
};

static struct mpi_shim_type *const basics[] = {
	&mpi_shim_type_char,
	&mpi_shim_type_signed_char,
	&mpi_shim_type_unsigned_char,
	&mpi_shim_type_byte,
	&mpi_shim_type_packed,
	&mpi_shim_type_wchar,
	&mpi_shim_type_short,
	&mpi_shim_type_unsigned_short,
	&mpi_shim_type_int,
	&mpi_shim_type_unsigned,
	&mpi_shim_type_long,
	&mpi_shim_type_unsigned_long,
	&mpi_shim_type_long_long,
	&mpi_shim_type_unsigned_long_long,
	&mpi_shim_type_float,
	&mpi_shim_type_double,
	&mpi_shim_type_long_double,
	&mpi_shim_type_c_bool,
	&mpi_shim_type_int8_t,
	&mpi_shim_type_int16_t,
	&mpi_shim_type_int32_t,
	&mpi_shim_type_int64_t,
	&mpi_shim_type_uint8_t,
	&mpi_shim_type_uint16_t,
	&mpi_shim_type_uint32_t,
	&mpi_shim_type_uint64_t,
	&mpi_shim_type_aint,
	&mpi_shim_type_offset,
	&mpi_shim_type_count,
	&mpi_shim_type_c_float_complex,
	&mpi_shim_type_c_double_complex,
	&mpi_shim_type_c_long_double_complex,
	&mpi_shim_type_integer,
	&mpi_shim_type_real,
	&mpi_shim_type_double_precision,
	&mpi_shim_type_complex,
	&mpi_shim_type_double_complex,
	&mpi_shim_type_logical,
	&mpi_shim_type_character,
	&mpi_shim_type_integer1,
	&mpi_shim_type_integer2,
	&mpi_shim_type_integer4,
	&mpi_shim_type_integer8,
	&mpi_shim_type_real4,
	&mpi_shim_type_real8,
	&mpi_shim_type_real16,
	&mpi_shim_type_complex8,
	&mpi_shim_type_complex16,
	&mpi_shim_type_complex32,
	&mpi_shim_type_cxx_bool,
	&mpi_shim_type_cxx_float_complex,
	&mpi_shim_type_cxx_double_complex,
	&mpi_shim_type_cxx_long_double_complex,
	&mpi_shim_type_2real,
	&mpi_shim_type_2double_precision,
	&mpi_shim_type_2integer,
	&mpi_shim_type_logical1,
	&mpi_shim_type_logical2,
	&mpi_shim_type_logical4,
	&mpi_shim_type_logical8,
	&mpi_shim_type_integer16,
};
/* clang-format on */

/*
 * A pair is the struct { value; int index; } of C: its data are the value
 * and the index (the padding between and after them is not), its extent
 * the struct's size.  Built when the library is loaded, before any call.
 */
__attribute__((constructor)) static void datatype_init(void)
{
	size_t i;

	for (i = 0; i < sizeof(basics) / sizeof(basics[0]); i++)
		mpi_shim_layout_block(&type_info(basics[i])->layout, 0, basics[i]->size);
	for (i = 0; i < sizeof(fortran_pairs) / sizeof(fortran_pairs[0]); i++) {
		type_info(fortran_pairs[i])->nelem = 2;
		type_info(fortran_pairs[i])->pair_value = fortran_pairs[i]->size / 2;
	}
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct mpi_shim_type *t = pairs[i].type;
		struct type_info *info = type_info(t);
		struct mpi_shim_layout parts[2];

		mpi_shim_layout_block(&parts[0], 0, pairs[i].value_size);
		mpi_shim_layout_block(&parts[1], (int64_t)pairs[i].index_offset, sizeof(int));
		/* Two blocks: only an allocation failure at load time can fail. */
		if (mpi_shim_layout_concat(&info->layout, parts, 2) < 0)
			abort();
		t->size = pairs[i].value_size + sizeof(int);
		t->true_extent = (MPI_Aint)(pairs[i].index_offset + sizeof(int));
		t->contiguous = t->size == (size_t)t->extent;
		info->nelem = 2;
		info->pair_value = pairs[i].value_size;
	}
}

MPI_Datatype mpi_shim_datatype_of_kind(unsigned kind)
{
	size_t i;

	for (i = 0; i < sizeof(basics) / sizeof(basics[0]); i++)
		if ((unsigned)basics[i]->kind == kind)
			return basics[i];
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if ((unsigned)pairs[i].type->kind == kind)
			return pairs[i].type;
	return MPI_DATATYPE_NULL;
}

int mpi_shim_datatype_for_each_block(MPI_Datatype t, int (*fn)(void *arg, int64_t disp, uint64_t len),
				     void *arg)
{
	return mpi_shim_layout_for_each_block(&type_info(t)->layout, fn, arg);
}

/* --- Reference counts and validity --- */

int mpi_shim_datatype_ok(MPI_Datatype t)
{
	return t != MPI_DATATYPE_NULL && t->refcount > 0 && !type_info(t)->user_freed;
}

void mpi_shim_datatype_retain(MPI_Datatype t)
{
	if (!t->predefined)
		__atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
}

static void type_destroy(struct mpi_shim_type *t);
static void envelope_clear(struct type_info *info);

void mpi_shim_datatype_release(MPI_Datatype t)
{
	if (t->predefined)
		return;
	if (__atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		type_destroy(t);
}

static void type_destroy(struct mpi_shim_type *t)
{
	struct type_info *info = type_info(t);
	int i;

	for (i = 0; i < info->ntypes; i++)
		mpi_shim_datatype_release(info->types[i]);
	envelope_clear(info);
	mpi_shim_layout_free(&info->layout);
	free(info->types);
	free(info->blocklen);
	free(info);
	free(t);
}

/* --- Checks --- */

/* oldtype (or a struct member type) is usable to build a new type. */
static int check_oldtype(MPI_Datatype t, const char *call, const char *what)
{
	if (t == MPI_DATATYPE_NULL)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call, "%s is MPI_DATATYPE_NULL",
				    what);
	if (!mpi_shim_datatype_ok(t))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call, "%s %p has been freed", what,
				    (void *)t);
	return MPI_SUCCESS;
}

/* t is usable to move data (packing, communication): valid and committed. */
static int check_committed(MPI_Comm comm, MPI_Datatype t, const char *call)
{
	if (t == MPI_DATATYPE_NULL)
		return mpi_shim_err(comm, MPI_ERR_TYPE, call, "datatype is MPI_DATATYPE_NULL");
	if (!mpi_shim_datatype_ok(t))
		return mpi_shim_err(comm, MPI_ERR_TYPE, call, "datatype %p has been freed",
				    (void *)t);
	if (!t->committed)
		return mpi_shim_err(comm, MPI_ERR_TYPE, call,
				    "datatype %s is not committed (MPI_Type_commit)",
				    t->name[0] ? t->name : "(derived)");
	return MPI_SUCCESS;
}

static int check_newtype(MPI_Datatype *newtype, const char *call)
{
	if (!newtype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "newtype is NULL");
	return MPI_SUCCESS;
}

/* --- Building --- */

/*
 * The bounds of a type map being assembled from copies of component types.
 * Data bounds and marker bounds are kept apart: markers, where any exist,
 * decide (the standard's lb/ub of a type map with explicit markers).
 */
struct bounds {
	int has_data, has_lb_marker, has_ub_marker;
	int64_t data_lb, data_ub;     /* from types without markers */
	int64_t marker_lb, marker_ub; /* from types with markers */
	int64_t true_lb, true_ub;     /* the data bytes */
	size_t align;
	uint64_t size, nelem;
	const struct mpi_shim_type *basic; /* common basic type, NULL if mixed */
	int basic_set;
	size_t nbasic;
};

static void bounds_init(struct bounds *b)
{
	memset(b, 0, sizeof(*b));
	b->data_lb = b->marker_lb = b->true_lb = INT64_MAX;
	b->data_ub = b->marker_ub = b->true_ub = INT64_MIN;
	b->align = 1;
}

/*
 * `copies` copies of t placed at displacements between dmin and dmax (both
 * used).  Returns -EOVERFLOW when the sizes do not fit.
 */
static int bounds_add(struct bounds *b, MPI_Datatype t, uint64_t copies, int64_t dmin, int64_t dmax)
{
	struct type_info *info = type_info(t);
	uint64_t bytes, elems;
	int64_t lo, hi, tlo, thi;

	if (!copies)
		return 0;
	if (__builtin_mul_overflow(copies, (uint64_t)t->size, &bytes) ||
	    __builtin_add_overflow(b->size, bytes, &b->size) || b->size > INT64_MAX)
		return -EOVERFLOW;
	if (__builtin_mul_overflow(copies, info->nelem, &elems) ||
	    __builtin_add_overflow(b->nelem, elems, &b->nelem))
		return -EOVERFLOW;
	/* The bounds of the copies, each of which must be an address. */
	if (__builtin_add_overflow(dmin, (int64_t)t->lb, &lo) ||
	    __builtin_add_overflow(dmax, (int64_t)t->lb, &hi) ||
	    __builtin_add_overflow(hi, (int64_t)t->extent, &hi) ||
	    __builtin_add_overflow(dmin, (int64_t)t->true_lb, &tlo) ||
	    __builtin_add_overflow(dmax, (int64_t)t->true_lb, &thi) ||
	    __builtin_add_overflow(thi, (int64_t)t->true_extent, &thi))
		return -ERANGE;
	if (info->lb_marker) {
		b->has_lb_marker = 1;
		if (lo < b->marker_lb)
			b->marker_lb = lo;
	} else if (t->size) {
		if (lo < b->data_lb)
			b->data_lb = lo;
	}
	if (info->ub_marker) {
		b->has_ub_marker = 1;
		if (hi > b->marker_ub)
			b->marker_ub = hi;
	} else if (t->size) {
		if (hi > b->data_ub)
			b->data_ub = hi;
	}
	if (t->size) {
		b->has_data = 1;
		if (tlo < b->true_lb)
			b->true_lb = tlo;
		if (thi > b->true_ub)
			b->true_ub = thi;
		if (!b->basic_set) {
			b->basic = t->basic;
			b->basic_set = 1;
		} else if (b->basic != t->basic) {
			b->basic = NULL;
		}
		b->nbasic += copies * t->nbasic;
	}
	if (info->align > b->align)
		b->align = info->align;
	return 0;
}

/* Fill t's size and bounds; pad is set for a struct (C alignment rule). */
static void bounds_finish(const struct bounds *b, struct mpi_shim_type *t, int pad)
{
	struct type_info *info = type_info(t);
	int64_t lb, ub;

	if (b->has_lb_marker)
		lb = b->marker_lb;
	else if (b->has_data)
		lb = b->data_lb;
	else
		lb = 0;
	if (b->has_ub_marker)
		ub = b->marker_ub;
	else if (b->has_data)
		ub = b->data_ub;
	else
		ub = lb;
	if (pad && !b->has_ub_marker && b->has_data && b->align > 1) {
		int64_t ext = ub - lb, a = (int64_t)b->align;

		if (ext % a)
			ub += a - ext % a;
	}
	t->size = b->size;
	t->lb = lb;
	t->extent = ub - lb;
	t->true_lb = b->has_data ? b->true_lb : 0;
	t->true_extent = b->has_data ? b->true_ub - b->true_lb : 0;
	t->basic = b->basic_set ? b->basic : NULL;
	t->nbasic = t->basic ? b->nbasic : 0;
	info->lb_marker = b->has_lb_marker;
	info->ub_marker = b->has_ub_marker;
	info->align = b->align;
	info->nelem = b->nelem;
}

/* A contiguous type is its own packed form: one block, copies abutting. */
static void type_set_contiguous(struct mpi_shim_type *t)
{
	const struct mpi_shim_layout *l = &type_info(t)->layout;

	if (!t->size)
		t->contiguous = t->extent == 0;
	else
		t->contiguous = !l->nchild && l->count == 1 && l->blen == t->size &&
				(size_t)t->extent == t->size && l->disp == t->true_lb;
}

/* A new derived type with room for its description. */
static int type_alloc(enum type_combiner combiner, int nblocks, int ntypes,
		      struct mpi_shim_type **t_p)
{
	struct mpi_shim_type *t = calloc(1, sizeof(*t));
	struct type_info *info = calloc(1, sizeof(*info));

	if (!t || !info)
		goto free_type;
	info->combiner = combiner;
	info->nblocks = nblocks;
	info->blocklen = calloc(nblocks ? (size_t)nblocks : 1, sizeof(*info->blocklen));
	info->types = calloc(ntypes ? (size_t)ntypes : 1, sizeof(*info->types));
	if (!info->blocklen || !info->types)
		goto free_arrays;
	mpi_shim_layout_block(&info->layout, 0, 0);
	info->handles = 1;
	t->refcount = 1;
	t->layout = info;
	t->kind = MPI_SHIM_BASIC_NONE;
	*t_p = t;
	return 0;

free_arrays:
	free(info->blocklen);
	free(info->types);
free_type:
	free(info);
	free(t);
	return -ENOMEM;
}

/* Record component type i of a new type, holding a reference on it. */
static void type_set_component(struct mpi_shim_type *t, int i, MPI_Datatype old)
{
	struct type_info *info = type_info(t);

	mpi_shim_datatype_retain(old);
	info->types[i] = old;
	info->ntypes = i + 1 > info->ntypes ? i + 1 : info->ntypes;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The error class (reported) of a failure to build a layout or its sizes. */
static int build_error(int err, const char *call)
{
	if (err == -ENOMEM)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
				    "out of memory for the type's layout");
	if (err == -ERANGE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "the type's data would lie beyond the address range");
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call,
			    "the type would hold more than 2^63 bytes");
}

/*
 * The heart of every constructor but struct and resized: nblk blocks, block
 * i being bl[i] consecutive copies of old at byte displacement disp[i]
 * (each block's copies `extent` apart); repeated `reps` times `rstride`
 * bytes apart (vectors: one block, reps = count).
 */
static int build_blocks(enum type_combiner combiner, int nblk, const int64_t *bl,
			const int64_t *disp, uint64_t reps, int64_t rstride, MPI_Datatype old,
			const char *call, MPI_Datatype *newtype)
{
	struct mpi_shim_type *t;
	struct type_info *info;
	struct mpi_shim_layout *parts = NULL, one;
	const struct mpi_shim_layout *ol = &type_info(old)->layout;
	struct bounds b;
	int i, err;

	err = type_alloc(combiner, nblk, 1, &t);
	if (err)
		return build_error(err, call);
	info = type_info(t);
	type_set_component(t, 0, old);
	parts = calloc(nblk ? (size_t)nblk : 1, sizeof(*parts));
	if (!parts) {
		err = -ENOMEM;
		goto free_type;
	}
	bounds_init(&b);
	for (i = 0; i < nblk; i++) {
		info->blocklen[i] = bl[i] * (int64_t)reps;
		/* A block of no copies adds nothing to the type map: not its
		 * displacement either, however far it lies. */
		if (bl[i] && reps) {
			int64_t span, rspan, lo, hi;

			if (__builtin_mul_overflow(bl[i] - 1, (int64_t)old->extent, &span) ||
			    __builtin_mul_overflow((int64_t)(reps - 1), rstride, &rspan) ||
			    __builtin_add_overflow(disp[i], min64(0, span), &lo) ||
			    __builtin_add_overflow(lo, min64(0, rspan), &lo) ||
			    __builtin_add_overflow(disp[i], max64(0, span), &hi) ||
			    __builtin_add_overflow(hi, max64(0, rspan), &hi)) {
				err = -ERANGE;
				goto free_parts;
			}
			err = bounds_add(&b, old, (uint64_t)bl[i] * reps, lo, hi);
			if (err)
				goto free_parts;
		}
		err = mpi_shim_layout_repeat(&parts[i], ol, (uint64_t)bl[i], old->extent, disp[i]);
		if (err) {
			while (i--)
				mpi_shim_layout_free(&parts[i]);
			goto free_parts;
		}
	}
	err = mpi_shim_layout_concat(&one, parts, (size_t)nblk);
	if (err)
		goto free_parts;
	err = mpi_shim_layout_repeat(&info->layout, &one, reps, rstride, 0);
	mpi_shim_layout_free(&one);
	if (err)
		goto free_parts;
	free(parts);
	bounds_finish(&b, t, 0);
	type_set_contiguous(t);
	*newtype = t;
	return MPI_SUCCESS;

free_parts:
	free(parts);
free_type:
	mpi_shim_datatype_release(t);
	return build_error(err, call);
}

/* --- Envelopes (MPI_Type_get_envelope, MPI_Type_get_contents) --- */

static void envelope_clear(struct type_info *info)
{
	int i;

	for (i = 0; i < info->env_nd; i++)
		mpi_shim_datatype_release(info->env_types[i]);
	free(info->env_ints);
	free(info->env_aints);
	free(info->env_counts);
	free(info->env_types);
	info->env_ints = NULL;
	info->env_aints = NULL;
	info->env_counts = NULL;
	info->env_types = NULL;
	info->env_ni = info->env_na = info->env_nc = info->env_nd = 0;
}

static void *dup_array(const void *a, int n, size_t size, int *fail)
{
	void *p;

	if (n <= 0)
		return NULL;
	p = malloc((size_t)n * size);
	if (!p)
		*fail = 1;
	else
		memcpy(p, a, (size_t)n * size);
	return p;
}

int mpi_shim_datatype_set_envelope(MPI_Datatype t, int combiner, int ni, const int *ints, int na,
				   const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd,
				   const MPI_Datatype *types)
{
	struct type_info *info = type_info(t);
	int i, fail = 0;

	envelope_clear(info);
	info->env_ints = dup_array(ints, ni, sizeof(*ints), &fail);
	info->env_aints = dup_array(aints, na, sizeof(*aints), &fail);
	info->env_counts = dup_array(counts, nc, sizeof(*counts), &fail);
	info->env_types = dup_array(types, nd, sizeof(*types), &fail);
	if (fail) {
		envelope_clear(info);
		return MPI_ERR_NO_MEM;
	}
	for (i = 0; i < nd; i++)
		mpi_shim_datatype_retain(types[i]);
	info->env_combiner = combiner;
	info->env_ni = ni;
	info->env_na = na;
	info->env_nc = nc;
	info->env_nd = nd;
	return MPI_SUCCESS;
}

void mpi_shim_datatype_discard(MPI_Datatype t)
{
	type_info(t)->handles = 0;
	type_info(t)->user_freed = 1;
	mpi_shim_datatype_release(t);
}

void mpi_shim_datatype_make_predefined(MPI_Datatype t)
{
	t->predefined = 1;
	t->committed = 1;
}

/* Record the envelope of a type a public constructor returns, or fail. */
static int envelope_or_fail(MPI_Datatype t, const char *call, int combiner, int ni,
			    const int *ints, int na, const MPI_Aint *aints, int nc,
			    const MPI_Count *counts, int nd, const MPI_Datatype *types,
			    MPI_Datatype *newtype)
{
	if (mpi_shim_datatype_set_envelope(t, combiner, ni, ints, na, aints, nc, counts, nd,
					   types)) {
		mpi_shim_datatype_discard(t);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
				    "out of memory for the type's envelope");
	}
	*newtype = t;
	return MPI_SUCCESS;
}

static int envelope_query(MPI_Datatype t, const char *call, MPI_Count *ni, MPI_Count *na,
			  MPI_Count *nc, MPI_Count *nd, int *combiner)
{
	struct type_info *info;
	int rc;

	if ((rc = check_oldtype(t, call, "datatype")))
		return rc;
	if (!ni || !na || !nd || !combiner)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "an output argument is NULL");
	info = type_info(t);
	if (!info->env_combiner) {
		*ni = *na = *nc = *nd = 0;
		*combiner = MPI_COMBINER_NAMED;
		return MPI_SUCCESS;
	}
	*ni = info->env_ni;
	*na = info->env_na;
	*nc = info->env_nc;
	*nd = info->env_nd;
	*combiner = info->env_combiner;
	return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
			   int *num_datatypes, int *combiner)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_envelope";
	MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
	int rc;

	rc = envelope_query(datatype, call, &ni, &na, &nc, &nd, combiner);
	if (rc)
		return rc;
	if (!num_integers || !num_addresses || !num_datatypes)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "an output argument is NULL");
	if (nc)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    "the datatype was made by a large-count (_c) constructor: "
				    "use MPI_Type_get_envelope_c");
	*num_integers = (int)ni;
	*num_addresses = (int)na;
	*num_datatypes = (int)nd;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_envelope);

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
			     MPI_Count *num_addresses, MPI_Count *num_large_counts,
			     MPI_Count *num_datatypes, int *combiner)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_envelope_c";

	if (!num_large_counts)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "num_large_counts is NULL");
	return envelope_query(datatype, call, num_integers, num_addresses, num_large_counts,
			      num_datatypes, combiner);
}
MPI_SHIM_ALIAS(MPI_Type_get_envelope_c);

/*
 * The arguments a type was made with; the datatypes returned are new
 * references (MPI_Type_free-able) for derived types, the handles themselves
 * for predefined ones.
 */
static int contents(MPI_Datatype t, const char *call, MPI_Count mi, MPI_Count ma, MPI_Count mc,
		    MPI_Count md, int *ints, MPI_Aint *aints, MPI_Count *counts,
		    MPI_Datatype *types)
{
	struct type_info *info;
	int i, rc;

	if ((rc = check_oldtype(t, call, "datatype")))
		return rc;
	info = type_info(t);
	if (!info->env_combiner)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "%s is a named (predefined) datatype: it has no contents",
				    t->name);
	if (mi < info->env_ni || ma < info->env_na || mc < info->env_nc || md < info->env_nd)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "the arrays are too small: %d integers, %d addresses, %d large "
				    "counts and %d datatypes are needed",
				    info->env_ni, info->env_na, info->env_nc, info->env_nd);
	if ((info->env_ni && !ints) || (info->env_na && !aints) || (info->env_nc && !counts) ||
	    (info->env_nd && !types))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "an output array is NULL");
	if (info->env_ni)
		memcpy(ints, info->env_ints, (size_t)info->env_ni * sizeof(*ints));
	if (info->env_na)
		memcpy(aints, info->env_aints, (size_t)info->env_na * sizeof(*aints));
	if (info->env_nc)
		memcpy(counts, info->env_counts, (size_t)info->env_nc * sizeof(*counts));
	for (i = 0; i < info->env_nd; i++) {
		types[i] = info->env_types[i];
		/* A derived type comes back as a handle the user frees. */
		if (!types[i]->predefined) {
			mpi_shim_datatype_retain(types[i]);
			type_info(types[i])->handles++;
			type_info(types[i])->user_freed = 0;
		}
	}
	return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
			   int max_datatypes, int array_of_integers[],
			   MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_contents";

	if (mpi_shim_datatype_ok(datatype) && type_info(datatype)->env_nc)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    "the datatype was made by a large-count (_c) constructor: "
				    "use MPI_Type_get_contents_c");
	return contents(datatype, call, max_integers, max_addresses, 0, max_datatypes,
			array_of_integers, array_of_addresses, NULL, array_of_datatypes);
}
MPI_SHIM_ALIAS(MPI_Type_get_contents);

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
			     MPI_Count max_addresses, MPI_Count max_large_counts,
			     MPI_Count max_datatypes, int array_of_integers[],
			     MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
			     MPI_Datatype array_of_datatypes[])
{
	MPI_SHIM_ENTER();
	return contents(datatype, "MPI_Type_get_contents_c", max_integers, max_addresses,
			max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
			array_of_large_counts, array_of_datatypes);
}
MPI_SHIM_ALIAS(MPI_Type_get_contents_c);

/* --- Constructors --- */

/*
 * The arguments of the constructors, int or MPI_Count (the _c calls), read
 * through one accessor: a count array is either ints (i) or large counts (c).
 */
struct counts {
	const int *i;
	const MPI_Count *c;
};

static inline int64_t count_at(struct counts a, int64_t k)
{
	return a.c ? (int64_t)a.c[k] : (int64_t)a.i[k];
}

static int check_count64(int64_t count, const char *call, const char *what)
{
	if (count < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call, "%s %lld is negative", what,
				    (long long)count);
	return MPI_SUCCESS;
}

static int contiguous(int64_t count, MPI_Datatype oldtype, MPI_Datatype *newtype,
		      const char *call)
{
	int64_t disp = 0;
	int rc;

	if ((rc = check_count64(count, call, "count")) ||
	    (rc = check_oldtype(oldtype, call, "oldtype")) || (rc = check_newtype(newtype, call)))
		return rc;
	return build_blocks(TYPE_CONTIGUOUS, 1, &count, &disp, 1, 0, oldtype, call, newtype);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_contiguous";
	MPI_Datatype t;
	int rc = contiguous(count, oldtype, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 0, NULL, 1,
				&oldtype, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_contiguous);

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_contiguous_c";
	MPI_Datatype t;
	int rc = contiguous(count, oldtype, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_CONTIGUOUS, 0, NULL, 0, NULL, 1, &count, 1,
				&oldtype, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_contiguous_c);

/* stride in bytes, or in extents of oldtype when `elements`. */
static int hvector(int64_t count, int64_t blocklength, int64_t stride, int elements,
		   MPI_Datatype oldtype, MPI_Datatype *newtype, const char *call)
{
	int64_t disp = 0;
	int rc;

	if ((rc = check_count64(count, call, "count")) ||
	    (rc = check_oldtype(oldtype, call, "oldtype")) || (rc = check_newtype(newtype, call)))
		return rc;
	if (blocklength < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "blocklength %lld is negative", (long long)blocklength);
	if (elements && __builtin_mul_overflow(stride, (int64_t)oldtype->extent, &stride))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "the stride in bytes overflows");
	return build_blocks(TYPE_VECTOR, 1, &blocklength, &disp, (uint64_t)count, stride, oldtype,
			    call, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
		     MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_vector";
	int ints[3] = {count, blocklength, stride};
	MPI_Datatype t;
	int rc = hvector(count, blocklength, stride, 1, oldtype, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 0, NULL, 1,
				&oldtype, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_vector);

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
		       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_vector_c";
	MPI_Count c[3] = {count, blocklength, stride};
	MPI_Datatype t;
	int rc = hvector(count, blocklength, stride, 1, oldtype, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_VECTOR, 0, NULL, 0, NULL, 3, c, 1, &oldtype,
				newtype);
}
MPI_SHIM_ALIAS(MPI_Type_vector_c);

static int hvector_int(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
		       MPI_Datatype *newtype, const char *call)
{
	int ints[2] = {count, blocklength};
	MPI_Datatype t;
	int rc = hvector(count, blocklength, stride, 0, oldtype, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 0, NULL, 1,
				&oldtype, newtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
			     MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return hvector_int(count, blocklength, stride, oldtype, newtype,
			   "MPI_Type_create_hvector");
}
MPI_SHIM_ALIAS(MPI_Type_create_hvector);

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
		      MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return hvector_int(count, blocklength, stride, oldtype, newtype, "MPI_Type_hvector");
}
MPI_SHIM_ALIAS(MPI_Type_hvector);

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
			       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_hvector_c";
	MPI_Count c[3] = {count, blocklength, stride};
	MPI_Datatype t;
	int rc = hvector(count, blocklength, stride, 0, oldtype, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_HVECTOR, 0, NULL, 0, NULL, 3, c, 1, &oldtype,
				newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_hvector_c);

/*
 * The indexed family: block lengths from bls (or all blocklength when
 * bls has neither array), displacements from disps (ints or large counts)
 * in units of the old extent when `elements`, or from adisp in bytes.
 */
static int indexed(int64_t count, struct counts bls, int64_t blocklength, struct counts disps,
		   const MPI_Aint *adisp, int elements, MPI_Datatype oldtype,
		   MPI_Datatype *newtype, const char *call)
{
	int64_t *bl, *disp, i;
	int rc;

	if ((rc = check_count64(count, call, "count")) ||
	    (rc = check_oldtype(oldtype, call, "oldtype")) || (rc = check_newtype(newtype, call)))
		return rc;
	if (count > INT_MAX)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call,
				    "count %lld: at most INT_MAX blocks", (long long)count);
	if (count > 0 && !disps.i && !disps.c && !adisp)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "array_of_displacements is NULL");
	if (blocklength < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "blocklength %lld is negative", (long long)blocklength);
	bl = calloc(count ? (size_t)count : 1, sizeof(*bl));
	disp = calloc(count ? (size_t)count : 1, sizeof(*disp));
	if (!bl || !disp) {
		free(bl);
		free(disp);
		return build_error(-ENOMEM, call);
	}
	for (i = 0; i < count; i++) {
		bl[i] = bls.i || bls.c ? count_at(bls, i) : blocklength;
		if (bl[i] < 0) {
			rc = mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					  "array_of_blocklengths[%lld] = %lld is negative",
					  (long long)i, (long long)bl[i]);
			goto free_arrays;
		}
		disp[i] = adisp ? adisp[i] : count_at(disps, i);
		if (!bl[i])
			disp[i] = 0; /* an empty block: not part of the type map */
		else if (elements &&
			 __builtin_mul_overflow(disp[i], (int64_t)oldtype->extent, &disp[i])) {
			rc = mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					  "displacement %lld in bytes overflows", (long long)i);
			goto free_arrays;
		}
	}
	rc = build_blocks(TYPE_INDEXED, (int)count, bl, disp, 1, 0, oldtype, call, newtype);
free_arrays:
	free(bl);
	free(disp);
	return rc;
}

/* The envelope's integers: count, then the arrays given (NULL: none). */
static int *envelope_ints(int count, const int *a, int na, const int *b, int nb, int extra,
			  int *n)
{
	int *ints = malloc((size_t)(1 + na + nb + 1) * sizeof(*ints)), k = 0;

	if (!ints)
		return NULL;
	ints[k++] = count;
	if (extra >= 0)
		ints[k++] = extra;
	if (na)
		memcpy(ints + k, a, (size_t)na * sizeof(*ints));
	k += na;
	if (nb)
		memcpy(ints + k, b, (size_t)nb * sizeof(*ints));
	k += nb;
	*n = k;
	return ints;
}

/* The same for large counts. */
static MPI_Count *envelope_counts(MPI_Count count, const MPI_Count *a, MPI_Count na,
				  const MPI_Count *b, MPI_Count nb, int has_extra, MPI_Count extra,
				  int *n)
{
	MPI_Count *c = malloc((size_t)(1 + na + nb + 1) * sizeof(*c));
	int k = 0;

	if (!c)
		return NULL;
	c[k++] = count;
	if (has_extra)
		c[k++] = extra;
	if (na)
		memcpy(c + k, a, (size_t)na * sizeof(*c));
	k += (int)na;
	if (nb)
		memcpy(c + k, b, (size_t)nb * sizeof(*c));
	k += (int)nb;
	*n = k;
	return c;
}

/* Record an envelope of ints and/or large counts built above. */
static int envelope_built(MPI_Datatype t, const char *call, int combiner, int *ints, int ni,
			  const MPI_Aint *aints, int na, MPI_Count *counts, int nc,
			  int nd, const MPI_Datatype *types, int fail, MPI_Datatype *newtype)
{
	int rc;

	if (fail) {
		free(ints);
		free(counts);
		mpi_shim_datatype_discard(t);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
				    "out of memory for the type's envelope");
	}
	rc = envelope_or_fail(t, call, combiner, ni, ints, na, aints, nc, counts, nd, types,
			      newtype);
	free(ints);
	free(counts);
	return rc;
}

static const struct counts no_counts;

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
		      const int array_of_displacements[], MPI_Datatype oldtype,
		      MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_indexed";
	struct counts bl = {.i = array_of_blocklengths}, d = {.i = array_of_displacements};
	MPI_Datatype t;
	int *ints, n = 0, rc;

	if (count > 0 && !array_of_blocklengths)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "array_of_blocklengths is NULL");
	rc = indexed(count, bl, 0, d, NULL, 1, oldtype, &t, call);
	if (rc)
		return rc;
	ints = envelope_ints(count, array_of_blocklengths, count, array_of_displacements, count,
			     -1, &n);
	return envelope_built(t, call, MPI_COMBINER_INDEXED, ints, n, NULL, 0, NULL, 0, 1,
			      &oldtype, !ints, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_indexed);

/* MPI_Type_indexed_c (displacements in elements) and
 * MPI_Type_create_hindexed_c (in bytes). */
static int indexed_large(MPI_Count count, const MPI_Count *bls, const MPI_Count *disps,
			 int in_elements, MPI_Datatype oldtype, MPI_Datatype *newtype,
			 const char *call)
{
	struct counts bl = {.c = bls}, d = {.c = disps};
	MPI_Datatype t;
	MPI_Count *c;
	int n = 0, rc;

	if (count > 0 && !bls)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "array_of_blocklengths is NULL");
	rc = indexed(count, bl, 0, d, NULL, in_elements, oldtype, &t, call);
	if (rc)
		return rc;
	c = envelope_counts(count, bls, count, disps, count, 0, 0, &n);
	return envelope_built(t, call, in_elements ? MPI_COMBINER_INDEXED : MPI_COMBINER_HINDEXED,
			      NULL, 0, NULL, 0, c, n, 1, &oldtype, !c, newtype);
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
			const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
			MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return indexed_large(count, array_of_blocklengths, array_of_displacements, 1, oldtype,
			     newtype, "MPI_Type_indexed_c");
}
MPI_SHIM_ALIAS(MPI_Type_indexed_c);

static int hindexed(int count, const int *bls, const MPI_Aint *disps, MPI_Datatype oldtype,
		    MPI_Datatype *newtype, const char *call)
{
	struct counts bl = {.i = bls};
	MPI_Datatype t;
	int *ints, n = 0, rc;

	if (count > 0 && !bls)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "array_of_blocklengths is NULL");
	rc = indexed(count, bl, 0, no_counts, disps, 0, oldtype, &t, call);
	if (rc)
		return rc;
	ints = envelope_ints(count, bls, count, NULL, 0, -1, &n);
	return envelope_built(t, call, MPI_COMBINER_HINDEXED, ints, n, disps, count, NULL, 0, 1,
			      &oldtype, !ints, newtype);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
			      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
			      MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype,
			"MPI_Type_create_hindexed");
}
MPI_SHIM_ALIAS(MPI_Type_create_hindexed);

int PMPI_Type_hindexed(int count, const int array_of_blocklengths[],
		       const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
		       MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype,
			"MPI_Type_hindexed");
}
MPI_SHIM_ALIAS(MPI_Type_hindexed);

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
				const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
				MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return indexed_large(count, array_of_blocklengths, array_of_displacements, 0, oldtype,
			     newtype, "MPI_Type_create_hindexed_c");
}
MPI_SHIM_ALIAS(MPI_Type_create_hindexed_c);

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
				   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_indexed_block";
	struct counts d = {.i = array_of_displacements};
	MPI_Datatype t;
	int *ints, n = 0, rc;

	rc = indexed(count, no_counts, blocklength, d, NULL, 1, oldtype, &t, call);
	if (rc)
		return rc;
	ints = envelope_ints(count, array_of_displacements, count, NULL, 0, blocklength, &n);
	return envelope_built(t, call, MPI_COMBINER_INDEXED_BLOCK, ints, n, NULL, 0, NULL, 0, 1,
			      &oldtype, !ints, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_indexed_block);

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
				     const MPI_Count array_of_displacements[],
				     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_indexed_block_c";
	struct counts d = {.c = array_of_displacements};
	MPI_Datatype t;
	MPI_Count *c;
	int n = 0, rc;

	rc = indexed(count, no_counts, blocklength, d, NULL, 1, oldtype, &t, call);
	if (rc)
		return rc;
	c = envelope_counts(count, array_of_displacements, count, NULL, 0, 1, blocklength, &n);
	return envelope_built(t, call, MPI_COMBINER_INDEXED_BLOCK, NULL, 0, NULL, 0, c, n, 1,
			      &oldtype, !c, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_indexed_block_c);

int PMPI_Type_create_hindexed_block(int count, int blocklength,
				    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
				    MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_hindexed_block";
	int ints[2] = {count, blocklength};
	MPI_Datatype t;
	int rc;

	rc = indexed(count, no_counts, blocklength, no_counts, array_of_displacements, 0, oldtype,
		     &t, call);
	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, count,
				array_of_displacements, 0, NULL, 1, &oldtype, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_hindexed_block);

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
				      const MPI_Count array_of_displacements[],
				      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_hindexed_block_c";
	struct counts d = {.c = array_of_displacements};
	MPI_Datatype t;
	MPI_Count *c;
	int n = 0, rc;

	rc = indexed(count, no_counts, blocklength, d, NULL, 0, oldtype, &t, call);
	if (rc)
		return rc;
	c = envelope_counts(count, array_of_displacements, count, NULL, 0, 1, blocklength, &n);
	return envelope_built(t, call, MPI_COMBINER_HINDEXED_BLOCK, NULL, 0, NULL, 0, c, n, 1,
			      &oldtype, !c, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_hindexed_block_c);

static int type_struct(int64_t count, struct counts bls, struct counts disps,
		       const MPI_Aint *adisp, const MPI_Datatype types[], MPI_Datatype *newtype,
		       const char *call)
{
	struct mpi_shim_layout *parts;
	struct mpi_shim_type *t;
	struct type_info *info;
	struct bounds b;
	int64_t i;
	int rc, err;

	if ((rc = check_count64(count, call, "count")) || (rc = check_newtype(newtype, call)))
		return rc;
	if (count > INT_MAX)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call,
				    "count %lld: at most INT_MAX blocks", (long long)count);
	if (count > 0 && ((!bls.i && !bls.c) || (!disps.c && !adisp) || !types))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "array_of_%s is NULL",
				    !bls.i && !bls.c		 ? "blocklengths"
				    : !disps.c && !adisp ? "displacements"
							 : "types");
	for (i = 0; i < count; i++) {
		char what[48];

		snprintf(what, sizeof(what), "array_of_types[%lld]", (long long)i);
		if ((rc = check_oldtype(types[i], call, what)))
			return rc;
		if (count_at(bls, i) < 0)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
					    "array_of_blocklengths[%lld] = %lld is negative",
					    (long long)i, (long long)count_at(bls, i));
	}
	err = type_alloc(TYPE_STRUCT, (int)count, (int)count, &t);
	if (err)
		return build_error(err, call);
	info = type_info(t);
	parts = calloc(count ? (size_t)count : 1, sizeof(*parts));
	if (!parts) {
		err = -ENOMEM;
		goto free_type;
	}
	bounds_init(&b);
	for (i = 0; i < count; i++) {
		MPI_Datatype old = types[i];
		int64_t bl = count_at(bls, i), d = adisp ? adisp[i] : count_at(disps, i);
		int64_t span;

		type_set_component(t, (int)i, old);
		info->blocklen[i] = bl;
		if (bl) {
			int64_t lo, hi;

			if (__builtin_mul_overflow(bl - 1, (int64_t)old->extent, &span) ||
			    __builtin_add_overflow(d, min64(0, span), &lo) ||
			    __builtin_add_overflow(d, max64(0, span), &hi)) {
				err = -ERANGE;
				break;
			}
			err = bounds_add(&b, old, (uint64_t)bl, lo, hi);
			if (err)
				break;
		}
		err = mpi_shim_layout_repeat(&parts[i], &type_info(old)->layout, (uint64_t)bl,
					     old->extent, d);
		if (err)
			break;
	}
	if (err) {
		while (i--)
			mpi_shim_layout_free(&parts[i]);
		goto free_parts;
	}
	err = mpi_shim_layout_concat(&info->layout, parts, (size_t)count);
	if (err)
		goto free_parts;
	free(parts);
	bounds_finish(&b, t, 1);
	type_set_contiguous(t);
	*newtype = t;
	return MPI_SUCCESS;

free_parts:
	free(parts);
free_type:
	mpi_shim_datatype_release(t);
	return build_error(err, call);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
			    const MPI_Aint array_of_displacements[],
			    const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_struct";
	struct counts bl = {.i = array_of_blocklengths};
	MPI_Datatype t;
	int *ints, n = 0, rc;

	rc = type_struct(count, bl, no_counts, array_of_displacements, array_of_types, &t, call);
	if (rc)
		return rc;
	ints = envelope_ints(count, array_of_blocklengths, count, NULL, 0, -1, &n);
	return envelope_built(t, call, MPI_COMBINER_STRUCT, ints, n, array_of_displacements,
			      count, NULL, 0, count, array_of_types, !ints, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_struct);

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
			      const MPI_Count array_of_displacements[],
			      const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_struct_c";
	struct counts bl = {.c = array_of_blocklengths}, d = {.c = array_of_displacements};
	MPI_Datatype t;
	MPI_Count *c;
	int n = 0, rc;

	rc = type_struct(count, bl, d, NULL, array_of_types, &t, call);
	if (rc)
		return rc;
	c = envelope_counts(count, array_of_blocklengths, count, array_of_displacements, count, 0,
			    0, &n);
	return envelope_built(t, call, MPI_COMBINER_STRUCT, NULL, 0, NULL, 0, c, n, (int)count,
			      array_of_types, !c, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_struct_c);

/* resized (markers set) and dup (everything kept): a copy of old's layout. */
static int type_copy(enum type_combiner combiner, MPI_Datatype old, MPI_Datatype *newtype,
		     const char *call)
{
	struct mpi_shim_type *t;
	struct type_info *info, *oinfo = type_info(old);
	int err;

	err = type_alloc(combiner, 1, 1, &t);
	if (err)
		return build_error(err, call);
	info = type_info(t);
	err = mpi_shim_layout_copy(&info->layout, &oinfo->layout);
	if (err) {
		mpi_shim_datatype_release(t);
		return build_error(err, call);
	}
	type_set_component(t, 0, old);
	info->blocklen[0] = 1;
	info->lb_marker = oinfo->lb_marker;
	info->ub_marker = oinfo->ub_marker;
	info->align = oinfo->align;
	info->nelem = oinfo->nelem;
	t->size = old->size;
	t->lb = old->lb;
	t->extent = old->extent;
	t->true_lb = old->true_lb;
	t->true_extent = old->true_extent;
	t->basic = old->basic;
	t->nbasic = old->nbasic;
	*newtype = t;
	return MPI_SUCCESS;
}

static int resized(MPI_Datatype oldtype, int64_t lb, int64_t extent, MPI_Datatype *newtype,
		   const char *call)
{
	MPI_Datatype t;
	int rc;

	if ((rc = check_oldtype(oldtype, call, "oldtype")) || (rc = check_newtype(newtype, call)))
		return rc;
	rc = type_copy(TYPE_RESIZED, oldtype, &t, call);
	if (rc)
		return rc;
	t->lb = lb;
	t->extent = extent;
	type_info(t)->lb_marker = 1;
	type_info(t)->ub_marker = 1;
	type_set_contiguous(t);
	*newtype = t;
	return MPI_SUCCESS;
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
			     MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_resized";
	MPI_Aint a[2] = {lb, extent};
	MPI_Datatype t;
	int rc = resized(oldtype, lb, extent, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 0, NULL, 1,
				&oldtype, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_resized);

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
			       MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_resized_c";
	MPI_Count c[2] = {lb, extent};
	MPI_Datatype t;
	int rc = resized(oldtype, lb, extent, &t, call);

	if (rc)
		return rc;
	return envelope_or_fail(t, call, MPI_COMBINER_RESIZED, 0, NULL, 0, NULL, 2, c, 1,
				&oldtype, newtype);
}
MPI_SHIM_ALIAS(MPI_Type_create_resized_c);

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_dup";
	MPI_Datatype t;
	int rc;

	if ((rc = check_oldtype(oldtype, call, "oldtype")) || (rc = check_newtype(newtype, call)))
		return rc;
	/* No new type on failure. */
	*newtype = MPI_DATATYPE_NULL;
	rc = type_copy(TYPE_DUP, oldtype, &t, call);
	if (rc)
		return rc;
	t->contiguous = oldtype->contiguous;
	t->committed = oldtype->committed;
	if (mpi_shim_datatype_set_envelope(t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 0, NULL, 1,
					   &oldtype)) {
		mpi_shim_datatype_discard(t);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call,
				    "out of memory for the type's envelope");
	}
	rc = mpi_shim_type_attr_copy_all(oldtype, t);
	if (rc) {
		/* The copies made so far are deleted with their callbacks. */
		(void)mpi_shim_type_attr_delete_all(t);
		mpi_shim_datatype_discard(t);
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "an attribute copy callback failed (error %d)", rc);
	}
	*newtype = t;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_dup);

int PMPI_Type_commit(MPI_Datatype *datatype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_commit";
	int rc;

	if (!datatype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "datatype is NULL");
	if ((rc = check_oldtype(*datatype, call, "datatype")))
		return rc;
	/* The layout is normalised as it is built: nothing left to do. */
	(*datatype)->committed = 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_commit);

int PMPI_Type_free(MPI_Datatype *datatype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_free";
	struct type_info *info;
	MPI_Datatype t;
	int rc;

	if (!datatype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "datatype is NULL");
	t = *datatype;
	if ((rc = check_oldtype(t, call, "datatype")))
		return rc;
	if (t->predefined)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    "%s is predefined and cannot be freed",
				    t->name[0] ? t->name : "this datatype");
	info = type_info(t);
	/* The last of the user's handles (MPI_Type_get_contents gives more)
	 * takes the attributes with it, their delete callbacks called. */
	if (--info->handles == 0) {
		rc = mpi_shim_type_attr_delete_all(t);
		info->user_freed = 1;
	}
	*datatype = MPI_DATATYPE_NULL;
	mpi_shim_datatype_release(t);
	/* A delete callback that failed: the call fails, the type is freed. */
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "an attribute delete callback failed (the datatype is freed)");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_free);

/* --- Queries --- */

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_size_x";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "size is NULL");
	*size = (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_size_x);

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_size";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "size is NULL");
	*size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_size);

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_extent";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!lb || !extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL",
				    !lb ? "lb" : "extent");
	*lb = datatype->lb;
	*extent = datatype->extent;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
	MPI_SHIM_ENTER();
	MPI_Aint l, e;
	int rc = PMPI_Type_get_extent(datatype, &l, &e);

	if (rc)
		return rc;
	if (!lb || !extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_extent_x",
				    "%s is NULL", !lb ? "lb" : "extent");
	*lb = l;
	*extent = e;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_extent_x);

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_extent";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "extent is NULL");
	*extent = datatype->extent;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_extent);

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_true_extent";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!true_lb || !true_extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL",
				    !true_lb ? "true_lb" : "true_extent");
	*true_lb = datatype->true_lb;
	*true_extent = datatype->true_extent;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
	MPI_SHIM_ENTER();
	MPI_Aint l, e;
	int rc = PMPI_Type_get_true_extent(datatype, &l, &e);

	if (rc)
		return rc;
	if (!true_lb || !true_extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_true_extent_x",
				    "%s is NULL", !true_lb ? "true_lb" : "true_extent");
	*true_lb = l;
	*true_extent = e;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_true_extent_x);

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_set_name";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!type_name)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "type_name is NULL");
	/* A predefined type may be renamed too (MPI-3.1 6.8: its default
	 * name is only the default). */
	snprintf(datatype->name, sizeof(datatype->name), "%s", type_name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_set_name);

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_name";
	int rc;

	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!type_name || !resultlen)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL",
				    !type_name ? "type_name" : "resultlen");
	snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", datatype->name);
	*resultlen = (int)strlen(type_name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_name);

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
	MPI_SHIM_ENTER();
	if (!address)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_address",
				    "address is NULL");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_address);

/*
 * Addresses as MPI_Get_address gives them, with a displacement added or
 * between two of them.  The sum is computed unsigned: an address and a
 * displacement may be any MPI_Aint, and the result wraps as the pointer
 * arithmetic it stands for would, never overflowing a signed integer.
 */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
MPI_SHIM_ALIAS(MPI_Aint_add);

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
MPI_SHIM_ALIAS(MPI_Aint_diff);

int PMPI_Address(void *location, MPI_Aint *address)
{
	MPI_SHIM_ENTER();
	if (!address)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Address", "address is NULL");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Address);

/* --- Packing --- */

void mpi_shim_datatype_pack(const void *buf, size_t count, MPI_Datatype t, size_t offset, void *out,
			    size_t len)
{
	if (t->contiguous) {
		memcpy(out, mpi_shim_datatype_start(buf, t) + offset, len);
		return;
	}
	mpi_shim_layout_copy_bytes(&type_info(t)->layout, (uint64_t)count, t->extent, (void *)buf,
				   offset, out, len, 0);
}

void mpi_shim_datatype_unpack(const void *in, size_t len, void *buf, size_t count, MPI_Datatype t,
			      size_t offset)
{
	if (t->contiguous) {
		memcpy(mpi_shim_datatype_start(buf, t) + offset, in, len);
		return;
	}
	mpi_shim_layout_copy_bytes(&type_info(t)->layout, (uint64_t)count, t->extent, buf, offset,
				   (void *)in, len, 1);
}

/* The checks common to Pack and Unpack; the packed size in *bytes_p. */
static int check_pack(int count, MPI_Datatype t, int size, const int *position, MPI_Comm comm,
		      const char *call, const char *sizename, uint64_t *bytes_p)
{
	uint64_t bytes;
	int rc;

	if ((rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (count < 0)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call, "count %d is negative", count);
	if ((rc = check_committed(comm, t, call)))
		return rc;
	if (!position)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "position is NULL");
	if (size < 0 || *position < 0 || *position > size)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "position %d outside %s %d", *position,
				    sizename, size);
	bytes = (uint64_t)count * t->size;
	if (bytes > (uint64_t)(size - *position))
		return mpi_shim_err(comm, MPI_ERR_TRUNCATE, call,
				    "%d elements of %zu bytes (%llu) do not fit in %s %d from "
				    "position %d",
				    count, t->size, (unsigned long long)bytes, sizename, size,
				    *position);
	*bytes_p = bytes;
	return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
	      int *position, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Pack";
	uint64_t bytes;
	int rc;

	rc = check_pack(incount, datatype, outsize, position, comm, call, "outsize", &bytes);
	if (rc)
		return rc;
	if (bytes && !outbuf)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call, "outbuf is NULL");
	mpi_shim_datatype_pack(inbuf, incount, datatype, 0, (char *)outbuf + *position, bytes);
	*position += (int)bytes;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Pack);

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
		MPI_Datatype datatype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Unpack";
	uint64_t bytes;
	int rc;

	rc = check_pack(outcount, datatype, insize, position, comm, call, "insize", &bytes);
	if (rc)
		return rc;
	if (bytes && !inbuf)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call, "inbuf is NULL");
	mpi_shim_datatype_unpack((const char *)inbuf + *position, bytes, outbuf, outcount, datatype,
				 0);
	*position += (int)bytes;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Unpack);

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Pack_size";
	uint64_t bytes;
	int rc;

	if ((rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (incount < 0)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call, "incount %d is negative", incount);
	if ((rc = check_oldtype(datatype, call, "datatype")))
		return rc;
	if (!size)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "size is NULL");
	bytes = (uint64_t)incount * datatype->size;
	if (bytes > INT_MAX)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call,
				    "%d elements of %zu bytes exceed an int", incount,
				    datatype->size);
	*size = (int)bytes;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Pack_size);

/* --- The basic elements in packed order --- */

int mpi_shim_datatype_for_each_basic(MPI_Datatype t, uint64_t count,
				     int (*fn)(void *arg, MPI_Datatype basic, uint64_t n),
				     void *arg)
{
	struct type_info *info = type_info(t);
	uint64_t c;
	int i, rc;

	if (!count || !t->size)
		return 0;
	if (t->basic)
		return fn(arg, (MPI_Datatype)t->basic, count * t->nbasic);
	for (c = 0; c < count; c++) {
		for (i = 0; i < info->nblocks; i++) {
			rc = mpi_shim_datatype_for_each_basic(info->types[info->ntypes > 1 ? i : 0],
							      (uint64_t)info->blocklen[i], fn, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* --- Element counts --- */

static int elements_prefix(MPI_Datatype t, uint64_t bytes, uint64_t *elems);

/* Basic elements in the first `bytes` bytes of consecutive copies of t. */
static int elements_copies(MPI_Datatype t, uint64_t bytes, uint64_t *elems)
{
	uint64_t whole, part;

	if (!t->size) {
		*elems = 0;
		return bytes == 0;
	}
	whole = bytes / t->size;
	if (!elements_prefix(t, bytes % t->size, &part))
		return 0;
	*elems = whole * type_info(t)->nelem + part;
	return 1;
}

/*
 * Basic elements in the first `bytes` (< size) bytes of the packed form of
 * one element of t; 0 when bytes ends inside a basic element.
 */
static int elements_prefix(MPI_Datatype t, uint64_t bytes, uint64_t *elems)
{
	struct type_info *info = type_info(t);
	uint64_t acc = 0;
	int i;

	if (!bytes) {
		*elems = 0;
		return 1;
	}
	if (info->combiner == TYPE_PREDEFINED) {
		/* Only a pair can end between its basic elements. */
		if (info->pair_value && bytes == info->pair_value) {
			*elems = 1;
			return 1;
		}
		return 0;
	}
	for (i = 0; i < info->nblocks; i++) {
		MPI_Datatype c = info->types[info->ntypes > 1 ? i : 0];
		uint64_t bbytes = (uint64_t)info->blocklen[i] * c->size, part;

		if (bytes >= bbytes) {
			bytes -= bbytes;
			acc += (uint64_t)info->blocklen[i] * type_info(c)->nelem;
			if (!bytes)
				break;
			continue;
		}
		if (!elements_copies(c, bytes, &part))
			return 0;
		acc += part;
		bytes = 0;
		break;
	}
	if (bytes)
		return 0;
	*elems = acc;
	return 1;
}

MPI_Count mpi_shim_datatype_elements(MPI_Datatype t, MPI_Count bytes)
{
	uint64_t elems;

	if (bytes < 0 || !elements_copies(t, (uint64_t)bytes, &elems) || elems > LLONG_MAX)
		return MPI_UNDEFINED;
	return (MPI_Count)elems;
}

static uint64_t bytes_prefix(MPI_Datatype t, uint64_t elems);

/* Bytes of the first `elems` basic elements of consecutive copies of t. */
static uint64_t bytes_copies(MPI_Datatype t, uint64_t elems)
{
	uint64_t nelem = type_info(t)->nelem;

	if (!nelem)
		return 0;
	return elems / nelem * t->size + bytes_prefix(t, elems % nelem);
}

/* Bytes of the first `elems` (< nelem) basic elements of one element of t. */
static uint64_t bytes_prefix(MPI_Datatype t, uint64_t elems)
{
	struct type_info *info = type_info(t);
	uint64_t acc = 0;
	int i;

	if (!elems)
		return 0;
	if (info->combiner == TYPE_PREDEFINED)
		return info->pair_value; /* the value of a pair */
	for (i = 0; i < info->nblocks && elems; i++) {
		MPI_Datatype c = info->types[info->ntypes > 1 ? i : 0];
		uint64_t belems = (uint64_t)info->blocklen[i] * type_info(c)->nelem;

		if (elems >= belems) {
			elems -= belems;
			acc += (uint64_t)info->blocklen[i] * c->size;
			continue;
		}
		return acc + bytes_copies(c, elems);
	}
	return acc;
}

MPI_Count mpi_shim_datatype_elements_bytes(MPI_Datatype t, MPI_Count elements)
{
	if (elements < 0)
		return MPI_UNDEFINED;
	return (MPI_Count)bytes_copies(t, (uint64_t)elements);
}

/* --- Pairs as C structs (reductions) --- */

void mpi_shim_datatype_pairs_expand(const struct mpi_shim_type *pair, const void *packed,
				    void *structs, size_t n)
{
	size_t value = ((const struct type_info *)pair->layout)->pair_value,
	       index = (size_t)pair->true_extent - sizeof(int);
	const char *p = packed;
	char *s = structs;
	size_t i;

	for (i = 0; i < n; i++, p += pair->size, s += pair->extent) {
		memcpy(s, p, value);
		memcpy(s + index, p + value, sizeof(int));
	}
}

void mpi_shim_datatype_pairs_compress(const struct mpi_shim_type *pair, const void *structs,
				      void *packed, size_t n)
{
	size_t value = ((const struct type_info *)pair->layout)->pair_value,
	       index = (size_t)pair->true_extent - sizeof(int);
	const char *s = structs;
	char *p = packed;
	size_t i;

	for (i = 0; i < n; i++, p += pair->size, s += pair->extent) {
		memcpy(p, s, value);
		memcpy(p + value, s + index, sizeof(int));
	}
}

/* --- the argument checks of a datatype and its buffer (shim.h) --- */

int mpi_shim_check_type(MPI_Comm comm, MPI_Datatype t, const char *call)
{
	if (t == MPI_DATATYPE_NULL)
		return mpi_shim_err(comm, MPI_ERR_TYPE, call, "the datatype is MPI_DATATYPE_NULL");
	if (!mpi_shim_datatype_ok(t))
		return mpi_shim_err(comm, MPI_ERR_TYPE, call, "the datatype was freed");
	if (!t->committed)
		return mpi_shim_err(comm, MPI_ERR_TYPE, call,
				    "the datatype is not committed (MPI_Type_commit)");
	return MPI_SUCCESS;
}

int mpi_shim_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype t,
		       const char *call)
{
	size_t extent = (size_t)(t->extent < 0 ? -t->extent : t->extent), bytes;

	/* count times the size, or times the extent, beyond what memory can
	 * address: no buffer can be that, and no byte count can say it. */
	if (count > 0 && (__builtin_mul_overflow((size_t)count, t->size, &bytes) ||
			  __builtin_mul_overflow((size_t)count, extent, &bytes)))
		return mpi_shim_err(comm, MPI_ERR_COUNT, call, "count %d times the datatype's "
				    "size (%zu bytes) or extent (%zu bytes) overflows the byte "
				    "count", count, t->size, extent);
	if (buf || !count || !t->predefined || !t->size)
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_BUFFER, call, "the buffer is NULL and count is %d",
			    count);
}

/*
 * Only a block whose first element would be at address 0 is refused:
 * MPI_BOTTOM plus an absolute displacement is a valid address, and the
 * address is computed as an integer because buf may be NULL (MPI_BOTTOM).
 */
int mpi_shim_check_block(MPI_Comm comm, const void *buf, MPI_Aint disp, int count,
			 MPI_Datatype t, const char *call)
{
	return mpi_shim_check_buf(comm, (const void *)((uintptr_t)buf + (uintptr_t)disp), count,
				  t, call);
}
