/* SPDX-License-Identifier: MIT */
/*
 * mpi_fortran.h - the helpers of the Fortran binding (fortran.c), used by
 * the wrappers gen.py generates from calls.txt.
 *
 * gfortran calls mpi_name_ (lower case, one trailing underscore) with every
 * argument by reference, the INTEGER ierror last, then one size_t length
 * per CHARACTER argument.  mpi_name_ is a weak alias of pmpi_name_, which
 * calls the C PMPI_Name: a profiling tool takes over the Fortran calls by
 * defining mpi_name_ and calling pmpi_name_.
 *
 * Helpers that can fail return MPI_SUCCESS or an MPI error class, after
 * calling MPI_COMM_WORLD's error handler with it.
 */
#ifndef MPI_FORTRAN_H
#define MPI_FORTRAN_H

#include <stddef.h>

#include "fortran_handles.h"
#include "mpi.h"

#define MPI_FORTRAN_ALIAS(name) \
	extern __typeof__(p##name) name __attribute__((weak, alias("p" #name)))

/* A Fortran procedure passed as an argument (cast to its real type). */
typedef void mpi_fortran_fn(void);

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's. */
void *mpi_fortran_buf(void *buf);

/* MPI_ERR_NO_MEM for call, reported. */
int mpi_fortran_no_mem(const char *call);

/* The size of a communicator given by number (0 if it is not one), for
 * the arrays of MPI_Alltoallw: the remote group's in an inter-communicator. */
int mpi_fortran_comm_size(MPI_Fint comm);
/* The in (out 0) or out (out 1) degree of a communicator's topology (0
 * without one), for the arrays of MPI_Neighbor_alltoallw. */
int mpi_fortran_degree(MPI_Fint comm, int out);

/* An INTEGER array of weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY
 * become C's. */
int *mpi_fortran_weights(MPI_Fint *f);

/* An INTEGER array of error codes (the spawn calls): MPI_ERRCODES_IGNORE
 * becomes C's. */
int *mpi_fortran_errcodes(MPI_Fint *f);

/* A LOGICAL array C wrote as ints: .true. is 1. */
void mpi_fortran_bools_out(MPI_Fint *f, int n);

/* Handle arrays: C copies of n Fortran handles (freed by the caller), and
 * back (numbers of handles C set to null released). */
int mpi_fortran_handles_in(int kind, const MPI_Fint *f, int n, void ***c, const char *call);
void mpi_fortran_handles_update(int kind, MPI_Fint *f, int n, void **c);
/* An output array of handles (f NULL to mpi_fortran_handles_in): the
 * handles C returned, held; the entries C left null are not written. */
void mpi_fortran_handles_out(int kind, MPI_Fint *f, int n, void **c);
/* A handle returned to Fortran: its number, held (fortran_handles.h). */
void mpi_fortran_handle_out(int kind, MPI_Fint *f, const void *c);
/* One inout handle: *f follows c; if C set it to null, *f's number is released. */
void mpi_fortran_handle_update(int kind, MPI_Fint *f, const void *c);

/* INTEGER displacements of the MPI-1 calls as MPI_Aint. */
int mpi_fortran_iaints_in(const MPI_Fint *f, int n, MPI_Aint **c, const char *call);

/* Statuses: NULL for MPI_STATUS_IGNORE, else s filled from f. */
MPI_Status *mpi_fortran_status_in(const MPI_Fint *f, MPI_Status *s);
void mpi_fortran_status_out(MPI_Fint *f, const MPI_Status *s);
/* Arrays of n statuses: MPI_STATUSES_IGNORE, or a C copy. */
int mpi_fortran_statuses_in(const MPI_Fint *f, int n, MPI_Status **c, const char *call);
void mpi_fortran_statuses_out(MPI_Fint *f, int n, const MPI_Status *c);
void mpi_fortran_statuses_free(const MPI_Fint *f, MPI_Status *c);

/* Indices out of MPI_Waitsome/Testsome: 1-based in Fortran. */
void mpi_fortran_indices_out(MPI_Fint *f, int n);

/* CHARACTER arguments: a C copy without the trailing blanks (freed by the
 * caller); a C string into a Fortran one, blank padded, cut to its length. */
int mpi_fortran_str_in(const char *f, size_t len, char **c, const char *call);
/* An info key or value: its leading blanks dropped too. */
int mpi_fortran_istr_in(const char *f, size_t len, char **c, const char *call);
void mpi_fortran_str_out(char *f, size_t len, const char *c);

/* The C function that calls a Fortran user function (MPI_Op_create,
 * MPI_Comm_create_errhandler, MPI_Win_create_errhandler,
 * MPI_File_create_errhandler). */
int mpi_fortran_opfn(mpi_fortran_fn *fn, MPI_User_function **c, const char *call);
int mpi_fortran_errfn(mpi_fortran_fn *fn, MPI_Comm_errhandler_function **c, const char *call);
int mpi_fortran_werrfn(mpi_fortran_fn *fn, MPI_Win_errhandler_function **c, const char *call);
int mpi_fortran_ferrfn(mpi_fortran_fn *fn, MPI_File_errhandler_function **c, const char *call);

/* MPI_SIZEOF (sizeof.f90): MPI_ERR_ARG for an element whose size a
 * default INTEGER cannot hold. */
void mpi_fortran_sizeof_error_(MPI_Fint *ierror);

#endif /* MPI_FORTRAN_H */
