/* SPDX-License-Identifier: MIT */
/*
 * errcode.c - error classes, codes and strings: MPI_Error_class and
 * MPI_Error_string, and those added by the program (MPI_Add_error_class,
 * MPI_Add_error_code, MPI_Add_error_string).
 *
 * The predefined classes are 0 to MPI_ERR_LASTCODE, each its own code.
 * Added classes and codes take the following values in the order they are
 * made, one table for both: entry v - MPI_ERR_LASTCODE - 1 holds the class
 * of value v (itself for a class) and its string ("" until one is added).
 * The highest value in use is the MPI_LASTUSEDCODE attribute of
 * MPI_COMM_WORLD (attr.c).  MPI_Error_class and MPI_Error_string look
 * values past MPI_ERR_LASTCODE up here, the predefined ones in errors.c's
 * table, which is below this file: errors.c reports errors and needs
 * nothing of the added codes.  MPI_Finalize forgets them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

struct added {
	int errclass;  /* the class of this value (itself for a class) */
	int is_class;
	char *string;  /* NULL until MPI_Add_error_string */
};

static struct {
	struct added *v;
	int n, cap;
} added;

static struct added *lookup(int code)
{
	int i = code - MPI_ERR_LASTCODE - 1;

	return i >= 0 && i < added.n ? &added.v[i] : NULL;
}

int mpi_shim_errcode_last(void)
{
	return MPI_ERR_LASTCODE + added.n;
}

int mpi_shim_errcode_class(int code, int *errclass)
{
	struct added *a = lookup(code);

	if (!a)
		return MPI_ERR_ARG;
	*errclass = a->errclass;
	return MPI_SUCCESS;
}

const char *mpi_shim_errcode_string(int code)
{
	struct added *a = lookup(code);

	return !a ? NULL : a->string ? a->string : "";
}

/* A new value of class errclass (-1: a new class); reported errors. */
static int add(int errclass, int *value, const char *call)
{
	struct added *a;

	if (added.n == added.cap) {
		int cap = added.cap ? 2 * added.cap : 16;

		a = realloc(added.v, (size_t)cap * sizeof(*a));
		if (!a)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
		added.v = a;
		added.cap = cap;
	}
	a = &added.v[added.n];
	*value = MPI_ERR_LASTCODE + 1 + added.n;
	a->is_class = errclass < 0;
	a->errclass = errclass < 0 ? *value : errclass;
	a->string = NULL;
	added.n++;
	return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Add_error_class")))
		return rc;
	if (!errorclass)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_class",
				    "errorclass is NULL");
	return add(-1, errorclass, "MPI_Add_error_class");
}
MPI_SHIM_ALIAS(MPI_Add_error_class);

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
	MPI_SHIM_ENTER();
	struct added *a = lookup(errorclass);
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Add_error_code")))
		return rc;
	if (!errorcode)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code",
				    "errorcode is NULL");
	/* A predefined class other than MPI_SUCCESS, or an added class. */
	if (errorclass <= MPI_SUCCESS || (errorclass > MPI_ERR_LASTCODE && !(a && a->is_class)))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code",
				    "%d is not an error class (MPI_SUCCESS is none either)",
				    errorclass);
	return add(errorclass, errorcode, "MPI_Add_error_code");
}
MPI_SHIM_ALIAS(MPI_Add_error_code);

int PMPI_Add_error_string(int errorcode, const char *string)
{
	MPI_SHIM_ENTER();
	struct added *a = lookup(errorcode);
	char *s;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Add_error_string")))
		return rc;
	if (errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
				    "%d is a predefined error code: its string cannot change",
				    errorcode);
	if (!a)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
				    "%d is not an error code or class", errorcode);
	if (!string || strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
				    "the string is NULL or longer than MPI_MAX_ERROR_STRING - 1 "
				    "(%d) characters", MPI_MAX_ERROR_STRING - 1);
	s = strdup(string);
	if (!s)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string",
				    "no memory");
	/* A later string replaces the earlier one. */
	free(a->string);
	a->string = s;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Add_error_string);

void mpi_shim_errcode_fini(void)
{
	int i;

	for (i = 0; i < added.n; i++)
		free(added.v[i].string);
	free(added.v);
	added.v = NULL;
	added.n = added.cap = 0;
}

/* --- the calls on every error code --- */

int PMPI_Error_class(int errorcode, int *errorclass)
{
	MPI_SHIM_ENTER();
	if (!errorclass)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class",
				    "errorclass is NULL");
	if (errorcode > MPI_ERR_LASTCODE && !mpi_shim_errcode_class(errorcode, errorclass))
		return MPI_SUCCESS; /* added by the program */
	if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class",
				    "%d is not an error code (0 to %d)", errorcode,
				    mpi_shim_errcode_last());
	*errorclass = errorcode;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
	MPI_SHIM_ENTER();
	const char *added;
	int n;

	if (!string || !resultlen)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string",
				    "string or resultlen is NULL");
	if (errorcode > MPI_ERR_LASTCODE && (added = mpi_shim_errcode_string(errorcode))) {
		/* Added by the program: its string, "" if none was given. */
		n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", added);
		*resultlen = n;
		return MPI_SUCCESS;
	}
	if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string",
				    "%d is not an error code (0 to %d)", errorcode,
				    mpi_shim_errcode_last());
	n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", mpi_shim_err_name(errorcode),
		     mpi_shim_err_text(errorcode));
	*resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Error_string);
