/* SPDX-License-Identifier: MIT */
/*
 * category.c - categories (MPI-3.1 14.3.8): MPI_T_category_get_num,
 * _get_info, _get_index, _get_cvars, _get_pvars, _get_categories,
 * _changed.
 *
 * A fixed tree, every variable in exactly one category:
 *
 *   bip            BIP's settings that no category below takes (the
 *                  configuration file, BIP_OPTS, the topology)
 *     bip_wait     how a process waits: settings, sleeps and wake-ups
 *     bip_drivers  the choice of driver and each driver's settings
 *     bip_launch   bipload, the commands, the job's identity and start-up
 *     p2p          messages and bytes sent and received, failed calls
 *     reliability  the reliability layer: settings and counters
 *       paths      the counters of each path (rail)
 *     flow         flow control: sends held for room at the receiver
 *   mpi_shim       the MPI shim: its settings, its unexpected queue, the
 *                  time its waits take, the state of MPI
 *
 * A variable's category is said by the file that makes it (cvar.c,
 * pvar.c); this file lists the members by looking at every variable, in
 * index order.  The tree does not change while the process runs, so
 * MPI_T_category_changed always gives the same stamp.  BIP counts no
 * relay forwarding publicly (pvar.c), hence no category of relays.
 */
#include <string.h>

#include "mpit.h"

struct category {
	const char *name;
	const char *desc;
	int parent; /* the category that holds it, or -1 */
};

static const struct category cats[MPI_SHIM_T_NCATS] = {
	[MPI_SHIM_T_CAT_BIP] = { "bip", "BIP: settings of the library that no sub-category "
					"takes (configuration, options, topology)", -1 },
	[MPI_SHIM_T_CAT_WAIT] = { "bip_wait", "how a waiting process waits: spinning, yielding, "
					      "sleeping; the progress thread",
				  MPI_SHIM_T_CAT_BIP },
	[MPI_SHIM_T_CAT_DRIVERS] = { "bip_drivers", "the choice of driver and each driver's "
						    "settings (shm, ofi, lanai, udp)",
				     MPI_SHIM_T_CAT_BIP },
	[MPI_SHIM_T_CAT_LAUNCH] = { "bip_launch", "bipload, the commands, the job's identity and "
						  "its start-up",
				    MPI_SHIM_T_CAT_BIP },
	[MPI_SHIM_T_CAT_P2P] = { "p2p", "messages and bytes BIP sent and received, every driver "
					"together",
				 MPI_SHIM_T_CAT_BIP },
	[MPI_SHIM_T_CAT_RELIABILITY] = { "reliability", "the reliability layer: retransmission, "
							"acknowledgements, checks, paths",
					 MPI_SHIM_T_CAT_BIP },
	[MPI_SHIM_T_CAT_PATHS] = { "paths", "the reliability layer's counters of each path "
					    "(rail)",
				   MPI_SHIM_T_CAT_RELIABILITY },
	[MPI_SHIM_T_CAT_FLOW] = { "flow", "flow control: sends held for room at the receiver",
				  MPI_SHIM_T_CAT_BIP },
	[MPI_SHIM_T_CAT_SHIM] = { "mpi_shim", "the MPI shim: its settings, its unexpected "
					      "queue, the time its waits take, the state of MPI",
				  -1 },
};

/* The members of category c in index order, up to len in out (NULL: only
 * counted): how many there are. */
static int cvars_of(int c, int len, int *out)
{
	int i, n = 0, nv = mpi_shim_t_cvar_count();

	for (i = 0; i < nv; i++)
		if ((int)mpi_shim_t_cvar_category(i) == c) {
			if (out && n < len)
				out[n] = i;
			n++;
		}
	return n;
}

static int pvars_of(int c, int len, int *out)
{
	int i, n = 0, nv = mpi_shim_t_pvar_count();

	for (i = 0; i < nv; i++)
		if ((int)mpi_shim_t_pvar_category(i) == c) {
			if (out && n < len)
				out[n] = i;
			n++;
		}
	return n;
}

static int subcats_of(int c, int len, int *out)
{
	int i, n = 0;

	for (i = 0; i < MPI_SHIM_T_NCATS; i++)
		if (cats[i].parent == c) {
			if (out && n < len)
				out[n] = i;
			n++;
		}
	return n;
}

int PMPI_T_category_get_num(int *num_cat)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (!num_cat)
		return MPI_T_ERR_INVALID;
	*num_cat = MPI_SHIM_T_NCATS;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_category_get_num);

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
			     int *desc_len, int *num_cvars, int *num_pvars, int *num_categories)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (cat_index < 0 || cat_index >= MPI_SHIM_T_NCATS)
		return MPI_T_ERR_INVALID_INDEX;
	mpi_shim_t_string(cats[cat_index].name, name, name_len);
	mpi_shim_t_string(cats[cat_index].desc, desc, desc_len);
	if (num_cvars)
		*num_cvars = cvars_of(cat_index, 0, NULL);
	if (num_pvars)
		*num_pvars = pvars_of(cat_index, 0, NULL);
	if (num_categories)
		*num_categories = subcats_of(cat_index, 0, NULL);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_category_get_info);

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
	MPI_SHIM_ENTER();
	int i;

	MPI_SHIM_T_CHECK();
	if (!name || !cat_index)
		return MPI_T_ERR_INVALID;
	for (i = 0; i < MPI_SHIM_T_NCATS; i++)
		if (!strcmp(cats[i].name, name)) {
			*cat_index = i;
			return MPI_SUCCESS;
		}
	return MPI_T_ERR_INVALID_NAME;
}
MPI_SHIM_ALIAS(MPI_T_category_get_index);

/* The three lists: the index checked, len >= 0, indices needed if len > 0. */
static int category_list(int cat_index, int len, int indices[],
			 int (*members)(int c, int len, int *out))
{
	if (cat_index < 0 || cat_index >= MPI_SHIM_T_NCATS)
		return MPI_T_ERR_INVALID_INDEX;
	if (len < 0 || (len > 0 && !indices))
		return MPI_T_ERR_INVALID;
	members(cat_index, len, indices);
	return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	return category_list(cat_index, len, indices, cvars_of);
}
MPI_SHIM_ALIAS(MPI_T_category_get_cvars);

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	return category_list(cat_index, len, indices, pvars_of);
}
MPI_SHIM_ALIAS(MPI_T_category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	return category_list(cat_index, len, indices, subcats_of);
}
MPI_SHIM_ALIAS(MPI_T_category_get_categories);

int PMPI_T_category_changed(int *stamp)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (!stamp)
		return MPI_T_ERR_INVALID;
	*stamp = 0;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_category_changed);
