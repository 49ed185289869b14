/* SPDX-License-Identifier: MIT */
/*
 * mpit.h - the inside of the tools information interface (MPI-3.1 14.3,
 * MPI_T), shared by its files:
 *
 *   mpit.c      MPI_T_init_thread, MPI_T_finalize, the rule of the
 *               returned strings, the enumerations;
 *   cvar.c      control variables: BIP's settings (bip_settings(3)) and
 *               the shim's own;
 *   pvar.c      performance variables: BIP's counters, the unexpected
 *               queue, the time spent waiting; sessions and handles;
 *   category.c  the categories, which group both kinds.
 *
 * The interface lives apart from MPI_Init and MPI_Finalize: it works before
 * the one and after the other, and a tool may start and end it several
 * times (a count, mpi_shim_t_refs).  Every call runs under BIP's lock
 * (MPI_SHIM_ENTER), as the shim's other calls, so that the count, the
 * sessions and the handles, and what the performance variables read from
 * the other chapters, are seen by one thread at a time.
 *
 * Errors are returned, never given to an error handler (14.3.9: the
 * interface has no communicator to take one from).  Variables and
 * categories have fixed indices for the life of the process: the tables
 * are made in the same order at each first MPI_T_init_thread.
 */
#ifndef MPI_SHIM_MPIT_H
#define MPI_SHIM_MPIT_H

#include "shim.h"

/* MPI_T_init_thread calls not yet matched by MPI_T_finalize. */
extern int mpi_shim_t_refs;

/* The first check of every call but MPI_T_init_thread. */
#define MPI_SHIM_T_CHECK()                                                                   \
	do {                                                                                 \
		if (mpi_shim_unlikely(mpi_shim_t_refs <= 0))                                 \
			return MPI_T_ERR_NOT_INITIALIZED;                                    \
	} while (0)

/* A string returned by the interface (14.3.3): with len NULL, nothing;
 * with *len 0 or buf NULL, the length s needs, its final NUL counted, in
 * *len; else s truncated to *len - 1 characters and a NUL, and in *len
 * the characters written, the NUL counted. */
void mpi_shim_t_string(const char *s, char *buf, int *len);

/* The categories (category.c), by index. */
enum mpi_shim_t_cat {
	MPI_SHIM_T_CAT_BIP,
	MPI_SHIM_T_CAT_WAIT,
	MPI_SHIM_T_CAT_DRIVERS,
	MPI_SHIM_T_CAT_LAUNCH,
	MPI_SHIM_T_CAT_P2P,
	MPI_SHIM_T_CAT_RELIABILITY,
	MPI_SHIM_T_CAT_PATHS,
	MPI_SHIM_T_CAT_FLOW,
	MPI_SHIM_T_CAT_SHIM,
	MPI_SHIM_T_NCATS
};

/* Control variables (cvar.c): made at the first MPI_T_init_thread
 * (MPI_SUCCESS or MPI_T_ERR_MEMORY), released at the last MPI_T_finalize
 * with the handles still allocated; how many, and each one's category. */
int mpi_shim_t_cvar_setup(void);
void mpi_shim_t_cvar_teardown(void);
int mpi_shim_t_cvar_count(void);
enum mpi_shim_t_cat mpi_shim_t_cvar_category(int i);

/* Performance variables (pvar.c): the sessions left are freed at the last
 * MPI_T_finalize; how many variables, and each one's category. */
void mpi_shim_t_pvar_teardown(void);
int mpi_shim_t_pvar_count(void);
enum mpi_shim_t_cat mpi_shim_t_pvar_category(int i);

/* Enumerations (mpit.c).  The state of MPI in this process, the values of
 * the performance variable mpi_shim_state. */
enum mpi_shim_t_state {
	MPI_SHIM_T_STATE_UNINITIALIZED,
	MPI_SHIM_T_STATE_INITIALIZED,
	MPI_SHIM_T_STATE_FINALIZED,
};
extern struct mpi_shim_t_enum mpi_shim_t_enum_state;

#endif /* MPI_SHIM_MPIT_H */
