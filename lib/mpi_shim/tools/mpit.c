/* SPDX-License-Identifier: MIT */
/*
 * mpit.c - the start and the end of the tools information interface
 * (MPI-3.1 14.3.4: MPI_T_init_thread, MPI_T_finalize), the rule of the
 * strings it returns (14.3.3), and its enumerations (14.3.5:
 * MPI_T_enum_get_info, MPI_T_enum_get_item).
 *
 * Start and end.  MPI_T_init_thread may be called any number of times,
 * before MPI_Init, between it and MPI_Finalize, and after; each call is
 * matched by one MPI_T_finalize, and the interface works while calls are
 * unmatched (mpi_shim_t_refs).  The first builds the table of control
 * variables (cvar.c, from bip_settings(3): it needs no running BIP); the
 * last frees it, and every session, handle and control-variable handle
 * left, which become invalid as the standard says.  The thread level
 * given is the one asked for, raised to MPI_THREAD_SINGLE and lowered to
 * MPI_THREAD_MULTIPLE: every call runs under BIP's lock, so any level is
 * safe.  It is the interface's own, independent of MPI_Init_thread's.
 *
 * Enumerations.  An MPI_T_enum is the address of a constant object of this
 * file; a handle is checked against the list of them before it is used,
 * so that a wrong one is refused (MPI_T_ERR_INVALID_HANDLE) rather than
 * read.  One enumeration exists: the states of MPI in the process
 * (uninitialized, initialized, finalized), the values of the performance
 * variable mpi_shim_state.  The control variables are strings (cvar.c
 * says why) and need none.
 */
#include <string.h>

#include "mpit.h"

int mpi_shim_t_refs;

void mpi_shim_t_string(const char *s, char *buf, int *len)
{
	size_t need = strlen(s) + 1, n;

	if (!len)
		return;
	if (!buf || *len <= 0) {
		*len = (int)need;
		return;
	}
	n = need < (size_t)*len ? need : (size_t)*len;
	memcpy(buf, s, n - 1);
	buf[n - 1] = '\0';
	*len = (int)n;
}

/* --- start and end --- */

int PMPI_T_init_thread(int required, int *provided)
{
	MPI_SHIM_ENTER();
	int rc;

	if (mpi_shim_t_refs == 0) {
		rc = mpi_shim_t_cvar_setup();
		if (rc != MPI_SUCCESS)
			return rc;
	}
	mpi_shim_t_refs++;
	if (required < MPI_THREAD_SINGLE)
		required = MPI_THREAD_SINGLE;
	if (required > MPI_THREAD_MULTIPLE)
		required = MPI_THREAD_MULTIPLE;
	if (provided)
		*provided = required;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_init_thread);

int PMPI_T_finalize(void)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (--mpi_shim_t_refs == 0) {
		mpi_shim_t_pvar_teardown();
		mpi_shim_t_cvar_teardown();
	}
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_finalize);

/* --- enumerations --- */

struct mpi_shim_t_enum_item {
	int value;
	const char *name;
};

struct mpi_shim_t_enum {
	const char *name;
	int n;
	const struct mpi_shim_t_enum_item *items;
};

static const struct mpi_shim_t_enum_item state_items[] = {
	{ MPI_SHIM_T_STATE_UNINITIALIZED, "uninitialized" },
	{ MPI_SHIM_T_STATE_INITIALIZED, "initialized" },
	{ MPI_SHIM_T_STATE_FINALIZED, "finalized" },
};

struct mpi_shim_t_enum mpi_shim_t_enum_state = {
	"mpi_state", (int)(sizeof(state_items) / sizeof(state_items[0])), state_items
};

static const struct mpi_shim_t_enum *const enums[] = { &mpi_shim_t_enum_state };

static int enum_valid(MPI_T_enum e)
{
	size_t i;

	for (i = 0; i < sizeof(enums) / sizeof(enums[0]); i++)
		if (e == enums[i])
			return 1;
	return 0;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (!enum_valid(enumtype))
		return MPI_T_ERR_INVALID_HANDLE;
	if (num)
		*num = enumtype->n;
	mpi_shim_t_string(enumtype->name, name, name_len);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (!enum_valid(enumtype))
		return MPI_T_ERR_INVALID_HANDLE;
	if (index < 0 || index >= enumtype->n)
		return MPI_T_ERR_INVALID_ITEM;
	if (value)
		*value = enumtype->items[index].value;
	mpi_shim_t_string(enumtype->items[index].name, name, name_len);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_enum_get_item);
