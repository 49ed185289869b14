/* SPDX-License-Identifier: MIT */
/*
 * f_c2f_c.c - the C half of f_c2f.f90: receives Fortran handles and turns
 * them into C ones (MPI_Comm_f2c...), and gives C handles to Fortran
 * (MPI_Comm_c2f...).  Each function returns 0, or the number of the first
 * check that failed.  c2f_op_slots calls the Fortran MPI_OP_CREATE with
 * more distinct functions than it has room for.
 */
#include <mpi.h>

/* The Fortran calls, as gfortran calls them. */
void mpi_op_create_(void (*fn)(void), MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror);
void mpi_op_free_(MPI_Fint *op, MPI_Fint *ierror);

/* Fortran's predefined handles, as the mpi module numbers them. */
int c2f_predefined(const MPI_Fint *world, const MPI_Fint *self, const MPI_Fint *sum,
		   const MPI_Fint *integer, const MPI_Fint *dp, const MPI_Fint *ret,
		   const MPI_Fint *empty, const MPI_Fint *comm_null, const MPI_Fint *req_null)
{
	int size;

	if (MPI_Comm_f2c(*world) != MPI_COMM_WORLD || MPI_Comm_c2f(MPI_COMM_WORLD) != *world)
		return 1;
	if (MPI_Comm_f2c(*self) != MPI_COMM_SELF || MPI_Comm_c2f(MPI_COMM_SELF) != *self)
		return 2;
	if (MPI_Op_f2c(*sum) != MPI_SUM || MPI_Op_c2f(MPI_SUM) != *sum)
		return 3;
	/* MPI_INTEGER is a 4-byte integer type; MPI_DOUBLE_PRECISION 8 bytes. */
	if (MPI_Type_size(MPI_Type_f2c(*integer), &size) || size != 4 ||
	    MPI_Type_c2f(MPI_Type_f2c(*integer)) != *integer)
		return 4;
	if (MPI_Type_size(MPI_Type_f2c(*dp), &size) || size != 8)
		return 5;
	if (MPI_Errhandler_f2c(*ret) != MPI_ERRORS_RETURN ||
	    MPI_Errhandler_c2f(MPI_ERRORS_RETURN) != *ret)
		return 6;
	if (MPI_Group_f2c(*empty) != MPI_GROUP_EMPTY)
		return 7;
	if (MPI_Comm_f2c(*comm_null) != MPI_COMM_NULL || MPI_Comm_c2f(MPI_COMM_NULL) != *comm_null)
		return 8;
	if (MPI_Request_f2c(*req_null) != MPI_REQUEST_NULL ||
	    MPI_Request_c2f(MPI_REQUEST_NULL) != *req_null)
		return 9;
	return 0;
}

/* A communicator made in Fortran, used from C: the same processes. */
int c2f_comm_from_fortran(const MPI_Fint *fcomm, const MPI_Fint *fsize)
{
	MPI_Comm c = MPI_Comm_f2c(*fcomm);
	int size, result;

	if (c == MPI_COMM_NULL || MPI_Comm_size(c, &size) || size != *fsize)
		return 1;
	if (MPI_Comm_compare(c, MPI_COMM_WORLD, &result) || result != MPI_CONGRUENT)
		return 2;
	if (MPI_Comm_c2f(c) != *fcomm)
		return 3;
	return 0;
}

/* A communicator made in C (the reverse of MPI_COMM_WORLD), for Fortran. */
MPI_Fint c2f_comm_to_fortran(void)
{
	MPI_Comm c;
	int rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &c))
		return -1;
	return MPI_Comm_c2f(c);
}

/* A receive posted in C, completed from Fortran. */
MPI_Fint c2f_irecv(int *buf, const MPI_Fint *source)
{
	MPI_Request req;

	if (MPI_Irecv(buf, 1, MPI_INT, *source, 5, MPI_COMM_WORLD, &req))
		return -1;
	return MPI_Request_c2f(req);
}

/* A Fortran status read from C, and written back into another. */
int c2f_status(const MPI_Fint *fstatus, const MPI_Fint *source, const MPI_Fint *tag,
	       MPI_Fint *copy)
{
	MPI_Status s;
	int count;

	if (MPI_Status_f2c(fstatus, &s) || s.MPI_SOURCE != *source || s.MPI_TAG != *tag)
		return 1;
	if (MPI_Get_count(&s, MPI_INT, &count) || count != 1)
		return 2;
	s.MPI_TAG = *tag + 1;
	if (MPI_Status_c2f(&s, copy))
		return 3;
	return 0;
}

/* 40 distinct functions (distinct bodies: none is folded into another). */
static volatile int last_fn;
#define FN(i) static void fn##i(void) { last_fn = i; }
#define EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
	X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26)  \
	X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39)
EACH(FN)
#define ENTRY(i) fn##i,
static void (*const fns[])(void) = { EACH(ENTRY) };

/* Operations from distinct Fortran functions until the room is full: 32
 * (mpi_shim(7)), then MPI_ERR_OTHER (the error handler must be
 * MPI_ERRORS_RETURN); a function already seen takes no more room. */
int c2f_op_slots(void)
{
	MPI_Fint ops[40], commute = 1, err, again;
	int n = 0, rc = 0;

	while (n < 40) {
		mpi_op_create_(fns[n], &commute, &ops[n], &err);
		if (err != MPI_SUCCESS)
			break;
		n++;
	}
	if (n != 32)
		rc = 1;
	else if (err != MPI_ERR_OTHER)
		rc = 2;
	mpi_op_create_(fns[0], &commute, &again, &err);
	if (!rc && (err != MPI_SUCCESS || again == ops[0]))
		rc = 3;
	if (err == MPI_SUCCESS)
		mpi_op_free_(&again, &err);
	for (int i = 0; i < n; i++) {
		mpi_op_free_(&ops[i], &err);
		if (!rc && (err != MPI_SUCCESS || ops[i] != 0))
			rc = 4;
	}
	return rc;
}
