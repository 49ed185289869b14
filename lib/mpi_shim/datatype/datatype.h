/* SPDX-License-Identifier: MIT */
/*
 * datatype.h - MPI datatypes inside the shim.
 *
 * A datatype describes count elements laid out from a buffer: size bytes
 * of data per element, spaced by extent.  Point-to-point moves the packed
 * form (the data bytes in order, size * count in all); a contiguous type
 * is its own packed form at buf + true_lb, so it travels with no copy.
 * datatype.c defines the predefined types and these calls; the layout of
 * derived types is private to it (the layout pointer).
 */
#ifndef MPI_SHIM_DATATYPE_H
#define MPI_SHIM_DATATYPE_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

/*
 * IEEE quadruple precision, for MPI_REAL16 and MPI_COMPLEX32 (gfortran's
 * REAL(16)) and for MPI_LONG_DOUBLE in external32: __float128 where the
 * compiler has it (x86-64), else a long double that is that format
 * (aarch64, where __float128 does not exist).
 */
#if defined(__SIZEOF_FLOAT128__)
typedef __float128 mpi_shim_quad;
typedef _Complex float __attribute__((mode(TC))) mpi_shim_complex_quad;
#elif defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
typedef long double mpi_shim_quad;
typedef long double _Complex mpi_shim_complex_quad;
#else
#error "MPI_REAL16 needs IEEE quadruple precision: __float128 or a 128-bit long double"
#endif

/*
 * gfortran's INTEGER(16), for MPI_INTEGER16: __int128 where the compiler
 * has it (64-bit targets, where gfortran has INTEGER(16)), else 16 bytes
 * that are moved but not reduced.
 */
#if defined(__SIZEOF_INT128__)
typedef __int128 mpi_shim_int128;
#else
typedef struct {
	unsigned char bytes[16];
} __attribute__((aligned(16))) mpi_shim_int128;
#endif

/* The basic C types, for reductions (op.c) and Get_elements. */
enum mpi_shim_basic {
	MPI_SHIM_BASIC_NONE, /* a mix of basic types, or a derived type */
	MPI_SHIM_BASIC_CHAR,
	MPI_SHIM_BASIC_SIGNED_CHAR,
	MPI_SHIM_BASIC_UNSIGNED_CHAR,
	MPI_SHIM_BASIC_BYTE,
	MPI_SHIM_BASIC_PACKED,
	MPI_SHIM_BASIC_WCHAR,
	MPI_SHIM_BASIC_SHORT,
	MPI_SHIM_BASIC_UNSIGNED_SHORT,
	MPI_SHIM_BASIC_INT,
	MPI_SHIM_BASIC_UNSIGNED,
	MPI_SHIM_BASIC_LONG,
	MPI_SHIM_BASIC_UNSIGNED_LONG,
	MPI_SHIM_BASIC_LONG_LONG,
	MPI_SHIM_BASIC_UNSIGNED_LONG_LONG,
	MPI_SHIM_BASIC_FLOAT,
	MPI_SHIM_BASIC_DOUBLE,
	MPI_SHIM_BASIC_LONG_DOUBLE,
	MPI_SHIM_BASIC_C_BOOL,
	MPI_SHIM_BASIC_INT8_T,
	MPI_SHIM_BASIC_INT16_T,
	MPI_SHIM_BASIC_INT32_T,
	MPI_SHIM_BASIC_INT64_T,
	MPI_SHIM_BASIC_UINT8_T,
	MPI_SHIM_BASIC_UINT16_T,
	MPI_SHIM_BASIC_UINT32_T,
	MPI_SHIM_BASIC_UINT64_T,
	MPI_SHIM_BASIC_AINT,
	MPI_SHIM_BASIC_OFFSET,
	MPI_SHIM_BASIC_COUNT,
	MPI_SHIM_BASIC_C_FLOAT_COMPLEX,
	MPI_SHIM_BASIC_C_DOUBLE_COMPLEX,
	MPI_SHIM_BASIC_C_LONG_DOUBLE_COMPLEX,
	/* the pairs of MINLOC and MAXLOC: { value; int index; } */
	MPI_SHIM_BASIC_FLOAT_INT,
	MPI_SHIM_BASIC_DOUBLE_INT,
	MPI_SHIM_BASIC_LONG_INT,
	MPI_SHIM_BASIC_2INT,
	MPI_SHIM_BASIC_SHORT_INT,
	MPI_SHIM_BASIC_LONG_DOUBLE_INT,
	/* Fortran (gfortran's sizes) and C++ types */
	MPI_SHIM_BASIC_INTEGER,
	MPI_SHIM_BASIC_REAL,
	MPI_SHIM_BASIC_DOUBLE_PRECISION,
	MPI_SHIM_BASIC_COMPLEX,
	MPI_SHIM_BASIC_DOUBLE_COMPLEX,
	MPI_SHIM_BASIC_LOGICAL,
	MPI_SHIM_BASIC_CHARACTER,
	MPI_SHIM_BASIC_INTEGER1,
	MPI_SHIM_BASIC_INTEGER2,
	MPI_SHIM_BASIC_INTEGER4,
	MPI_SHIM_BASIC_INTEGER8,
	MPI_SHIM_BASIC_REAL4,
	MPI_SHIM_BASIC_REAL8,
	MPI_SHIM_BASIC_REAL16,
	MPI_SHIM_BASIC_COMPLEX8,
	MPI_SHIM_BASIC_COMPLEX16,
	MPI_SHIM_BASIC_COMPLEX32,
	MPI_SHIM_BASIC_CXX_BOOL,
	MPI_SHIM_BASIC_CXX_FLOAT_COMPLEX,
	MPI_SHIM_BASIC_CXX_DOUBLE_COMPLEX,
	MPI_SHIM_BASIC_CXX_LONG_DOUBLE_COMPLEX,
	/* Fortran pairs of MINLOC and MAXLOC: { value; value-typed index; } */
	MPI_SHIM_BASIC_2REAL,
	MPI_SHIM_BASIC_2DOUBLE_PRECISION,
	MPI_SHIM_BASIC_2INTEGER,
	/* The optional Fortran types gfortran has: LOGICAL(1, 2, 4, 8), INTEGER(16) */
	MPI_SHIM_BASIC_LOGICAL1,
	MPI_SHIM_BASIC_LOGICAL2,
	MPI_SHIM_BASIC_LOGICAL4,
	MPI_SHIM_BASIC_LOGICAL8,
	MPI_SHIM_BASIC_INTEGER16,
	MPI_SHIM_BASIC_COUNT_OF_KINDS
};

struct mpi_shim_attr;

struct mpi_shim_type {
	size_t size;          /* bytes of data in one element */
	MPI_Aint lb, extent;  /* lower bound and extent (spacing of elements) */
	MPI_Aint true_lb, true_extent; /* of the bytes actually touched */
	uint8_t contiguous;   /* count elements are size * count bytes at buf + true_lb */
	uint8_t committed;    /* usable for communication */
	uint8_t predefined;   /* never freed */
	/*
	 * Every element is nbasic elements of basic (a predefined type,
	 * itself for a predefined type), or basic is NULL when the type mixes
	 * basic types.  Reductions apply to count * nbasic elements of basic.
	 */
	const struct mpi_shim_type *basic;
	size_t nbasic;
	enum mpi_shim_basic kind; /* for a predefined type; NONE otherwise */
	int refcount;         /* the user's handle, plus types built on it */
	void *layout;         /* private to datatype.c */
	struct mpi_shim_attr *attrs; /* MPI_Type_set_attr (attr.c) */
	char name[MPI_MAX_OBJECT_NAME];
};

/* 1 if t is a datatype that may be used (not NULL, not freed). */
int mpi_shim_datatype_ok(MPI_Datatype t);

/*
 * Keep t alive while a request uses it: MPI_Type_free on a type that a
 * pending request still uses only drops the user's handle (no-ops on
 * predefined types).  Every retain is matched by one release.
 */
void mpi_shim_datatype_retain(MPI_Datatype t);
void mpi_shim_datatype_release(MPI_Datatype t);

/*
 * Copy bytes [offset, offset + len) of the packed form of count elements
 * of t at buf to out; offset + len <= count * t->size.
 */
void mpi_shim_datatype_pack(const void *buf, size_t count, MPI_Datatype t, size_t offset,
			    void *out, size_t len);

/* The reverse: len bytes from in become bytes [offset, offset + len) of
 * the packed form of count elements of t at buf. */
void mpi_shim_datatype_unpack(const void *in, size_t len, void *buf, size_t count, MPI_Datatype t,
			      size_t offset);

/* The number of basic elements in the first bytes bytes of the packed form
 * of elements of t, or MPI_UNDEFINED if bytes ends inside a basic element. */
MPI_Count mpi_shim_datatype_elements(MPI_Datatype t, MPI_Count bytes);

/* The reverse, for MPI_Status_set_elements: the bytes of the first
 * `elements` basic elements of the packed form (a pair type is two basic
 * elements, as Get_elements counts them). */
MPI_Count mpi_shim_datatype_elements_bytes(MPI_Datatype t, MPI_Count elements);

/*
 * The pair types (MPI_DOUBLE_INT...) have holes: their packed form is the
 * value then the int (pair->size bytes), their memory the C struct
 * { value; int index; } (pair->extent bytes).  A reduction that works on
 * the packed form of a non-contiguous type of pairs turns n packed pairs
 * into n structs for the MINLOC/MAXLOC loops, and back.  pair is a
 * predefined pair type (t->basic of a type of pairs).
 */
void mpi_shim_datatype_pairs_expand(const struct mpi_shim_type *pair, const void *packed,
				    void *structs, size_t n);
void mpi_shim_datatype_pairs_compress(const struct mpi_shim_type *pair, const void *structs,
				      void *packed, size_t n);

/*
 * How a derived type was made, for MPI_Type_get_envelope/contents: the
 * combiner (MPI_COMBINER_x) and its arguments as the standard lists them;
 * counts holds the large counts of a type made by an MPI-4.0 _c call.  Set
 * by the constructors (datatype.c, type_array.c) on the type they return,
 * replacing what the constructors they used internally recorded; the
 * datatypes are retained.  MPI_SUCCESS or MPI_ERR_NO_MEM.
 */
int mpi_shim_datatype_set_envelope(MPI_Datatype t, int combiner, int ni, const int *ints, int na,
				   const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd,
				   const MPI_Datatype *types);

/*
 * Call fn(arg, basic, n) for each run of n consecutive basic elements of the
 * same predefined type, in the order of the packed form of count elements
 * of t; stops at, and returns, the first non-zero return of fn.
 */
int mpi_shim_datatype_for_each_basic(MPI_Datatype t, uint64_t count,
				     int (*fn)(void *arg, MPI_Datatype basic, uint64_t n),
				     void *arg);

/*
 * external32 (type_external.c) on the native packed form of count elements
 * of t (count * t->size bytes, as mpi_shim_datatype_pack writes them):
 * MPI_Pack_external's conversions, and the I/O chapter's "external32"
 * representation.  Nothing is reported.
 *
 * _size: the bytes of count elements in external32; MPI_ERR_TYPE if a
 * basic type of t has no external32 form, MPI_ERR_COUNT if the total
 * overflows.  _encode: native packed -> external32 (the _size bytes);
 * MPI_ERR_CONVERSION when a value does not fit its external size (a long
 * beyond 32 bits, a wchar_t beyond 16), MPI_ERR_TYPE as _size; out may
 * then hold part of the data.  _decode: the reverse (every external32
 * value fits its native type); MPI_ERR_TYPE as _size.
 */
int mpi_shim_external32_size(MPI_Datatype t, uint64_t count, uint64_t *bytes);
int mpi_shim_external32_encode(MPI_Datatype t, uint64_t count, const void *native,
			       void *external);
int mpi_shim_external32_decode(MPI_Datatype t, uint64_t count, const void *external,
			       void *native);

/* The predefined type whose kind (enum mpi_shim_basic) is kind, or
 * MPI_DATATYPE_NULL: how one-sided messages name a predefined type. */
MPI_Datatype mpi_shim_datatype_of_kind(unsigned kind);

/* Call fn(arg, disp, len) for each contiguous block of one element of t,
 * in packing order, disp counted from the element's origin; stops at, and
 * returns, the first non-zero return of fn. */
int mpi_shim_datatype_for_each_block(MPI_Datatype t, int (*fn)(void *arg, int64_t disp, uint64_t len),
				     void *arg);

/* Free a new type after a failure (no callbacks: nothing was attached). */
void mpi_shim_datatype_discard(MPI_Datatype t);

/* Mark a type made by MPI_Type_create_f90_x: predefined (never freed). */
void mpi_shim_datatype_make_predefined(MPI_Datatype t);

/* Where count elements of a contiguous type start.  Computed as an
 * integer: buf may be MPI_BOTTOM (NULL), or a temporary's origin outside
 * any object (coll_tmp), when true_lb is an absolute address. */
static inline char *mpi_shim_datatype_start(const void *buf, MPI_Datatype t)
{
	return (char *)((uintptr_t)buf + (uintptr_t)t->true_lb);
}

#endif /* MPI_SHIM_DATATYPE_H */
