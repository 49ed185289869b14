/* SPDX-License-Identifier: MIT */
/*
 * type_match.c - the datatypes that match a size or a Fortran kind:
 * MPI_Type_match_size and MPI_Type_create_f90_real/complex/integer.
 *
 * MPI_Type_match_size gives the predefined Fortran type of a class and a
 * size in bytes (MPI_REAL4/8/16, MPI_INTEGER1/2/4/8/16, MPI_COMPLEX8/16/32).
 * The f90 calls give the type of the smallest kind of gfortran with at
 * least the precision p and the range r asked for (MPI_UNDEFINED: any);
 * such a type is predefined (it cannot be freed), the same handle for the
 * same arguments, and its envelope is MPI_COMBINER_F90_x with p and r.
 */
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_match_size";
	MPI_Datatype t = MPI_DATATYPE_NULL;

	if (!datatype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "datatype is NULL");
	switch (typeclass) {
	case MPI_TYPECLASS_REAL:
		t = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == 16 ? MPI_REAL16 : NULL;
		break;
	case MPI_TYPECLASS_INTEGER:
		t = size == 1	? MPI_INTEGER1
		    : size == 2 ? MPI_INTEGER2
		    : size == 4 ? MPI_INTEGER4
		    : size == 8 ? MPI_INTEGER8
		    : size == 16 ? MPI_INTEGER16
				: NULL;
		break;
	case MPI_TYPECLASS_COMPLEX:
		t = size == 8	 ? MPI_COMPLEX8
		    : size == 16 ? MPI_COMPLEX16
		    : size == 32 ? MPI_COMPLEX32
				 : NULL;
		break;
	default:
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "typeclass %d is not MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX",
				    typeclass);
	}
	if (!t)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "no type of class %d has %d bytes", typeclass, size);
	*datatype = t;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_match_size);

/* The types made so far: one per (combiner, p, r). */
struct f90_type {
	int combiner, p, r;
	MPI_Datatype t;
	struct f90_type *next;
};

static struct f90_type *f90_types;

static int f90_type(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *newtype,
		    const char *call)
{
	struct f90_type *f;
	int ints[2] = {p, r}, rc;

	for (f = f90_types; f; f = f->next) {
		if (f->combiner == combiner && f->p == p && f->r == r) {
			*newtype = f->t;
			return MPI_SUCCESS;
		}
	}
	f = malloc(sizeof(*f));
	if (!f)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	rc = PMPI_Type_dup(base, &f->t);
	if (rc) {
		free(f);
		return rc;
	}
	if (combiner == MPI_COMBINER_F90_INTEGER)
		ints[0] = r;
	if (mpi_shim_datatype_set_envelope(f->t, combiner, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2,
					   ints, 0, NULL, 0, NULL, 0, NULL)) {
		PMPI_Type_free(&f->t);
		free(f);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	}
	mpi_shim_datatype_make_predefined(f->t);
	f->combiner = combiner;
	f->p = p;
	f->r = r;
	f->next = f90_types;
	f90_types = f;
	*newtype = f->t;
	return MPI_SUCCESS;
}

/* gfortran's real kinds: precision and decimal exponent range. */
static const struct {
	int p, r;
	MPI_Datatype real, complex;
} real_kinds[] = {
	{6, 37, &mpi_shim_type_real4, &mpi_shim_type_complex8},
	{15, 307, &mpi_shim_type_real8, &mpi_shim_type_complex16},
	{33, 4931, &mpi_shim_type_real16, &mpi_shim_type_complex32},
};

static int f90_float(int p, int r, MPI_Datatype *newtype, int complex, const char *call)
{
	size_t i;

	if (!newtype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "newtype is NULL");
	if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "p and r are both MPI_UNDEFINED");
	for (i = 0; i < sizeof(real_kinds) / sizeof(real_kinds[0]); i++)
		if ((p == MPI_UNDEFINED || p <= real_kinds[i].p) &&
		    (r == MPI_UNDEFINED || r <= real_kinds[i].r))
			return f90_type(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL,
					p, r, complex ? real_kinds[i].complex : real_kinds[i].real,
					newtype, call);
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
			    "no real kind has precision %d and range %d", p, r);
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return f90_float(p, r, newtype, 0, "MPI_Type_create_f90_real");
}
MPI_SHIM_ALIAS(MPI_Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	return f90_float(p, r, newtype, 1, "MPI_Type_create_f90_complex");
}
MPI_SHIM_ALIAS(MPI_Type_create_f90_complex);

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_f90_integer";
	/* Decimal digits each integer kind holds: 10^r - 1 fits. */
	static const struct {
		int r;
		MPI_Datatype t;
	} kinds[] = {
		{2, &mpi_shim_type_integer1},
		{4, &mpi_shim_type_integer2},
		{9, &mpi_shim_type_integer4},
		{18, &mpi_shim_type_integer8},
		{38, &mpi_shim_type_integer16},
	};
	size_t i;

	if (!newtype)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "newtype is NULL");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (r <= kinds[i].r)
			return f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, kinds[i].t,
					newtype, call);
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "no integer kind has range %d", r);
}
MPI_SHIM_ALIAS(MPI_Type_create_f90_integer);

/* At unload: the types made (predefined to the user, not to the library). */
__attribute__((destructor)) static void f90_types_free(void)
{
	while (f90_types) {
		struct f90_type *f = f90_types;

		f90_types = f->next;
		f->t->predefined = 0;
		mpi_shim_datatype_discard(f->t);
		free(f);
	}
}
