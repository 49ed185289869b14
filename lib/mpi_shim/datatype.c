/* SPDX-License-Identifier: MIT */
/*
 * datatype.c - the predefined datatypes and the packing of contiguous ones.
 *
 * The minimal form: every predefined type is contiguous, so packing is one
 * copy.  Derived types (MPI_Type_*) replace this file.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "shim.h"
#include "datatype.h"

/* The pairs of MINLOC and MAXLOC. */
struct mpi_shim_pair_float_int {
	float value;
	int index;
};
struct mpi_shim_pair_double_int {
	double value;
	int index;
};
struct mpi_shim_pair_long_int {
	long value;
	int index;
};
struct mpi_shim_pair_2int {
	int value;
	int index;
};
struct mpi_shim_pair_short_int {
	short value;
	int index;
};
struct mpi_shim_pair_long_double_int {
	long double value;
	int index;
};

/* A predefined type of one basic element of C type c. */
#define MPI_SHIM_PREDEFINED(obj, c, k, mpiname)                                          \
	struct mpi_shim_type obj = {                                                     \
		.size = sizeof(c),                                                       \
		.lb = 0,                                                                 \
		.extent = sizeof(c),                                                     \
		.true_lb = 0,                                                            \
		.true_extent = sizeof(c),                                                \
		.contiguous = 1,                                                         \
		.committed = 1,                                                          \
		.predefined = 1,                                                         \
		.basic = &obj,                                                           \
		.nbasic = 1,                                                             \
		.kind = k,                                                               \
		.refcount = 1,                                                           \
		.name = mpiname,                                                         \
	}

MPI_SHIM_PREDEFINED(mpi_shim_type_char, char, MPI_SHIM_BASIC_CHAR, "MPI_CHAR");
MPI_SHIM_PREDEFINED(mpi_shim_type_signed_char, signed char, MPI_SHIM_BASIC_SIGNED_CHAR, "MPI_SIGNED_CHAR");
MPI_SHIM_PREDEFINED(mpi_shim_type_unsigned_char, unsigned char, MPI_SHIM_BASIC_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
MPI_SHIM_PREDEFINED(mpi_shim_type_byte, unsigned char, MPI_SHIM_BASIC_BYTE, "MPI_BYTE");
MPI_SHIM_PREDEFINED(mpi_shim_type_packed, unsigned char, MPI_SHIM_BASIC_PACKED, "MPI_PACKED");
MPI_SHIM_PREDEFINED(mpi_shim_type_wchar, wchar_t, MPI_SHIM_BASIC_WCHAR, "MPI_WCHAR");
MPI_SHIM_PREDEFINED(mpi_shim_type_short, short, MPI_SHIM_BASIC_SHORT, "MPI_SHORT");
MPI_SHIM_PREDEFINED(mpi_shim_type_unsigned_short, unsigned short, MPI_SHIM_BASIC_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
MPI_SHIM_PREDEFINED(mpi_shim_type_int, int, MPI_SHIM_BASIC_INT, "MPI_INT");
MPI_SHIM_PREDEFINED(mpi_shim_type_unsigned, unsigned, MPI_SHIM_BASIC_UNSIGNED, "MPI_UNSIGNED");
MPI_SHIM_PREDEFINED(mpi_shim_type_long, long, MPI_SHIM_BASIC_LONG, "MPI_LONG");
MPI_SHIM_PREDEFINED(mpi_shim_type_unsigned_long, unsigned long, MPI_SHIM_BASIC_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
MPI_SHIM_PREDEFINED(mpi_shim_type_long_long, long long, MPI_SHIM_BASIC_LONG_LONG, "MPI_LONG_LONG");
MPI_SHIM_PREDEFINED(mpi_shim_type_unsigned_long_long, unsigned long long, MPI_SHIM_BASIC_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
MPI_SHIM_PREDEFINED(mpi_shim_type_float, float, MPI_SHIM_BASIC_FLOAT, "MPI_FLOAT");
MPI_SHIM_PREDEFINED(mpi_shim_type_double, double, MPI_SHIM_BASIC_DOUBLE, "MPI_DOUBLE");
MPI_SHIM_PREDEFINED(mpi_shim_type_long_double, long double, MPI_SHIM_BASIC_LONG_DOUBLE, "MPI_LONG_DOUBLE");
MPI_SHIM_PREDEFINED(mpi_shim_type_c_bool, _Bool, MPI_SHIM_BASIC_C_BOOL, "MPI_C_BOOL");
MPI_SHIM_PREDEFINED(mpi_shim_type_int8_t, int8_t, MPI_SHIM_BASIC_INT8_T, "MPI_INT8_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_int16_t, int16_t, MPI_SHIM_BASIC_INT16_T, "MPI_INT16_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_int32_t, int32_t, MPI_SHIM_BASIC_INT32_T, "MPI_INT32_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_int64_t, int64_t, MPI_SHIM_BASIC_INT64_T, "MPI_INT64_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_uint8_t, uint8_t, MPI_SHIM_BASIC_UINT8_T, "MPI_UINT8_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_uint16_t, uint16_t, MPI_SHIM_BASIC_UINT16_T, "MPI_UINT16_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_uint32_t, uint32_t, MPI_SHIM_BASIC_UINT32_T, "MPI_UINT32_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_uint64_t, uint64_t, MPI_SHIM_BASIC_UINT64_T, "MPI_UINT64_T");
MPI_SHIM_PREDEFINED(mpi_shim_type_aint, MPI_Aint, MPI_SHIM_BASIC_AINT, "MPI_AINT");
MPI_SHIM_PREDEFINED(mpi_shim_type_offset, MPI_Offset, MPI_SHIM_BASIC_OFFSET, "MPI_OFFSET");
MPI_SHIM_PREDEFINED(mpi_shim_type_count, MPI_Count, MPI_SHIM_BASIC_COUNT, "MPI_COUNT");
MPI_SHIM_PREDEFINED(mpi_shim_type_c_float_complex, float _Complex, MPI_SHIM_BASIC_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX");
MPI_SHIM_PREDEFINED(mpi_shim_type_c_double_complex, double _Complex, MPI_SHIM_BASIC_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
MPI_SHIM_PREDEFINED(mpi_shim_type_c_long_double_complex, long double _Complex, MPI_SHIM_BASIC_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
MPI_SHIM_PREDEFINED(mpi_shim_type_float_int, struct mpi_shim_pair_float_int, MPI_SHIM_BASIC_FLOAT_INT, "MPI_FLOAT_INT");
MPI_SHIM_PREDEFINED(mpi_shim_type_double_int, struct mpi_shim_pair_double_int, MPI_SHIM_BASIC_DOUBLE_INT, "MPI_DOUBLE_INT");
MPI_SHIM_PREDEFINED(mpi_shim_type_long_int, struct mpi_shim_pair_long_int, MPI_SHIM_BASIC_LONG_INT, "MPI_LONG_INT");
MPI_SHIM_PREDEFINED(mpi_shim_type_2int, struct mpi_shim_pair_2int, MPI_SHIM_BASIC_2INT, "MPI_2INT");
MPI_SHIM_PREDEFINED(mpi_shim_type_short_int, struct mpi_shim_pair_short_int, MPI_SHIM_BASIC_SHORT_INT, "MPI_SHORT_INT");
MPI_SHIM_PREDEFINED(mpi_shim_type_long_double_int, struct mpi_shim_pair_long_double_int, MPI_SHIM_BASIC_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");

int mpi_shim_datatype_ok(MPI_Datatype t)
{
	return t != MPI_DATATYPE_NULL && t->refcount > 0;
}

/* Predefined types live as long as the library. */
void mpi_shim_datatype_retain(MPI_Datatype t)
{
}

void mpi_shim_datatype_release(MPI_Datatype t)
{
}

void mpi_shim_datatype_pack(const void *buf, int count, MPI_Datatype t, size_t offset,
			    void *out, size_t len)
{
	(void)count;
	memcpy(out, mpi_shim_datatype_start(buf, t) + offset, len);
}

void mpi_shim_datatype_unpack(const void *in, size_t len, void *buf, int count, MPI_Datatype t,
			      size_t offset)
{
	(void)count;
	memcpy(mpi_shim_datatype_start(buf, t) + offset, in, len);
}

MPI_Count mpi_shim_datatype_elements(MPI_Datatype t, MPI_Count bytes)
{
	size_t esize;

	if (!t->basic)
		return MPI_UNDEFINED;
	esize = t->basic->size;
	if (esize == 0)
		return 0;
	if ((size_t)bytes % esize)
		return MPI_UNDEFINED;
	return (MPI_Count)((size_t)bytes / esize);
}

MPI_Count mpi_shim_datatype_elements_bytes(MPI_Datatype t, MPI_Count elements)
{
	return t->basic ? elements * (MPI_Count)t->basic->size : 0;
}
