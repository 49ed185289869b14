/* SPDX-License-Identifier: MIT */
/*
 * fortran_handles.h - Fortran handle numbers, shared by fortran_handles.c
 * (in libmpi_shim, behind MPI_Comm_c2f...) and the Fortran binding
 * (lib/mpi_fortran, a library of its own that uses these through the
 * names the symbol map exports).
 *
 * A Fortran handle is an INTEGER: each kind of handle has its own numbers.
 * 0 is the null handle; the predefined handles have the fixed numbers of
 * lib/mpi_fortran/handles.txt; other handles get a number the first time
 * they are converted, and the Fortran calls that free an object (and the
 * completion of a request) give the number back (fortran_handles.c).
 */
#ifndef MPI_SHIM_FORTRAN_HANDLES_H
#define MPI_SHIM_FORTRAN_HANDLES_H

#include "mpi.h"

enum mpi_shim_fkind {
	MPI_SHIM_F_COMM,
	MPI_SHIM_F_GROUP,
	MPI_SHIM_F_TYPE,
	MPI_SHIM_F_OP,
	MPI_SHIM_F_REQUEST,
	MPI_SHIM_F_ERRHANDLER,
	MPI_SHIM_F_INFO,
	MPI_SHIM_F_MESSAGE,
	MPI_SHIM_F_WIN,
	MPI_SHIM_F_FILE,
	MPI_SHIM_F_NKINDS
};

/* The number of a C handle (0 for the null handle; 0 too if no memory is
 * left for a new number). */
MPI_Fint mpi_shim_c2f(int kind, const void *handle);
/* The C handle of a number; the null handle for 0 or a number not in use. */
void *mpi_shim_f2c(int kind, MPI_Fint f);
/* A Fortran call returned handle f: one more hold on it. */
void mpi_shim_f_hold(int kind, MPI_Fint f);
/* A Fortran call freed handle f: one hold less; with none left (or none
 * ever taken), f may be given to another object.  Null and predefined
 * numbers are kept. */
void mpi_shim_f_release(int kind, MPI_Fint f);

/* The common blocks behind MPI_BOTTOM and MPI_IN_PLACE in Fortran (the
 * status ones are in mpi.h: MPI_F_STATUS_IGNORE). */
extern MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_;

/* Their addresses as the program sees them: compare with these. */
struct mpi_shim_fconst {
	const void *bottom, *in_place, *status_ignore, *statuses_ignore;
};
const struct mpi_shim_fconst *mpi_shim_fconst(void);

#endif /* MPI_SHIM_FORTRAN_HANDLES_H */
