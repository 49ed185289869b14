/* SPDX-License-Identifier: MIT */
/*
 * cvar.c - control variables (MPI-3.1 14.3.6): MPI_T_cvar_get_num,
 * _get_info, _get_index, _handle_alloc, _handle_free, _read, _write.
 *
 * What they are.  One variable per environment variable of BIP's table
 * (bip_settings(3), the list bipinfo(1) prints), in its order, then the
 * shim's own settings (mpi_shim(7), ENVIRONMENT): BIP_CONNECT_TIMEOUT,
 * BIP_MPI_COLL_CLUSTERS, BIP_MPI_RMA, BIP_NAMES_DIR.  The entries of BIP's
 * table that name a family (BIP_LANAI_RAIL<r>_<KNOB>) are left out: no
 * environment variable has that name.  BIP_PARENT, which a spawning
 * process sets for its children, is no setting and is left out too.  A
 * variable's name is the environment variable's; its description is the
 * table's line and the default.
 *
 * Values.  Every variable is an MPI_CHAR string of up to CVAR_CHARS
 * characters (the count a handle gives), the NUL counted: the value of the
 * environment variable, "" when it is not set (the default applies, which
 * the description gives).  BIP reads its settings as strings and several
 * defaults are no number ("2000 (5 with more local processes than
 * processors)"), so an MPI_INT variable could not say "not set".  A value
 * longer than CVAR_CHARS - 1 reads truncated.  BIP_SECRET always reads "":
 * the job's secret is never shown.
 *
 * Scope and writing.  BIP reads its settings at bip_init, which MPI_Init
 * runs; the shim reads its own when it needs them.  Writing a variable
 * sets the environment variable (setenv; "" unsets it), so it can take
 * effect only if it is written before BIP reads it: from
 * MPI_T_init_thread until MPI_Init.  Only the settings that concern this
 * process alone may be written, MPI_T_SCOPE_LOCAL:
 *   BIP_WAIT, BIP_SPIN, BIP_SLEEP_AFTER, BIP_SLEEP_MAX  how this process
 *        waits; a sleeper announces itself in memory its peers read before
 *        they publish (core/nic.h), so they wake it whatever they chose;
 *   BIP_PROGRESS_THREAD  a thread of this process;
 *   BIP_CONNECT_TIMEOUT  how long this process's connect and join wait.
 * A written value is checked as its reader checks it (BIP_WAIT one of
 * auto, spin, yield, block ...): a bad one is refused with
 * MPI_T_ERR_INVALID, instead of failing MPI_Init later.  Once MPI_Init has
 * run (or BIP was started by the program itself), the value in use cannot
 * change until the process ends, and a write fails with
 * MPI_T_ERR_CVAR_SET_NEVER; setenv after MPI_Init would also race with the
 * shim's own getenv calls in other threads.  The others are read-only:
 * BIP_NODE, BIP_JOBID, BIP_SECRET, BIP_HOST and BIP_APPNUM, which bipload
 * sets for the process, are MPI_T_SCOPE_CONSTANT; the rest
 * MPI_T_SCOPE_READONLY: a driver, the reliability layer's parameters, the
 * configuration, the collectives' and windows' modes must be the same in
 * every process of the job, and bipload and the commands read theirs in
 * other processes, so setting them in one process would be wrong or
 * useless.  Writing them fails with MPI_T_ERR_CVAR_SET_NEVER.
 * MPI_T_ERR_CVAR_SET_NOT_NOW is never returned: no variable becomes
 * writable later.
 *
 * Handles.  A handle is malloc'ed and kept on a list, which is searched to
 * check a handle before it is used (MPI_T_ERR_INVALID_HANDLE for one
 * freed or never given); no variable is bound to an object
 * (MPI_T_BIND_NO_OBJECT), so obj_handle is ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpit.h"

/* The count of every variable: characters, the NUL counted. */
#define CVAR_CHARS MPI_MAX_INFO_VAL

/* The settings that may be written before MPI_Init, with their check. */
struct cvar_writable {
	const char *name;
	int (*valid)(const char *v);
};

/* A number that its whole string spells, within [lo, hi]. */
static int is_number(const char *v, double lo, double hi)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	return end != v && !*end && !errno && d >= lo && d <= hi;
}

static int is_integer(const char *v, long lo, long hi)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(v, &end, 10);
	return end != v && !*end && !errno && l >= lo && l <= hi;
}

static int valid_wait(const char *v)
{
	return !strcmp(v, "auto") || !strcmp(v, "spin") || !strcmp(v, "yield") ||
	       !strcmp(v, "block");
}

static int valid_spin(const char *v)
{
	return is_integer(v, 0, 0xffffffffl);
}

static int valid_sleep_after(const char *v)
{
	return is_integer(v, 0, 60000000l);
}

static int valid_sleep_max(const char *v)
{
	return is_number(v, 0.0001, 60);
}

static int valid_bool(const char *v)
{
	return !strcmp(v, "0") || !strcmp(v, "1");
}

static int valid_timeout(const char *v)
{
	return is_number(v, 1e-9, 1e9);
}

static const struct cvar_writable writable[] = {
	{ "BIP_WAIT", valid_wait },
	{ "BIP_SPIN", valid_spin },
	{ "BIP_SLEEP_AFTER", valid_sleep_after },
	{ "BIP_SLEEP_MAX", valid_sleep_max },
	{ "BIP_PROGRESS_THREAD", valid_bool },
	{ "BIP_CONNECT_TIMEOUT", valid_timeout },
};

/* Set by bipload for the process. */
static const char *const constant[] = { "BIP_NODE", "BIP_JOBID", "BIP_SECRET", "BIP_HOST",
					"BIP_APPNUM" };

/* The shim's own settings (mpi_shim(7), ENVIRONMENT). */
struct cvar_shim {
	const char *name, *def, *what;
};

static const struct cvar_shim shim_settings[] = {
	{ "BIP_CONNECT_TIMEOUT", "10",
	  "MPI: seconds MPI_Comm_connect waits for the port's answer (the info key timeout "
	  "wins) and MPI_Comm_join for the other side; read at each call" },
	{ "BIP_MPI_COLL_CLUSTERS", "1",
	  "MPI: 0 runs the collectives of a communicator across clusters as any other's; read "
	  "when each communicator is made" },
	{ "BIP_MPI_RMA", "auto",
	  "MPI: windows direct on one host and served by the NICs (auto), by the NICs (nic) or "
	  "by messages (messages); every rank must agree; read at the first window" },
	{ "BIP_NAMES_DIR", "$HOME/.bip/names",
	  "MPI: the directory of the name service (MPI_Publish_name); read at each call" },
};

struct cvar {
	const char *name;
	char *desc;                 /* "what (default: def)", malloc'ed */
	int scope;
	int verbosity;
	enum mpi_shim_t_cat cat;
	int secret;                 /* reads "" */
	int (*valid)(const char *v); /* writable before MPI_Init, NULL if never */
};

struct mpi_shim_t_cvar_handle {
	int index;
	struct mpi_shim_t_cvar_handle *next;
};

static struct {
	struct cvar *vars;
	int n;
	struct mpi_shim_t_cvar_handle *handles;
} cv;

static int has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static enum mpi_shim_t_cat category_of(const char *name)
{
	static const char *const wait[] = { "BIP_WAIT", "BIP_SPIN", "BIP_SLEEP_AFTER",
					    "BIP_SLEEP_MAX", "BIP_PROGRESS_THREAD" };
	static const char *const launch[] = { "BIPLOAD_", "BIP_RSH", "BIPCC_", "BIP_NODE",
					      "BIP_JOBID", "BIP_SECRET", "BIP_HOST",
					      "BIP_BOOTSTRAP", "BIP_APPNUM", "BIP_OOB_PORT",
					      "BIP_BIND", "BIP_REPORT_BINDINGS",
					      "BIP_INIT_TIMEOUT" };
	static const char *const drivers[] = { "BIP_NIC", "BIP_SHM_", "BIP_OFI_", "BIP_LANAI_",
					       "BIP_UDP_" };
	size_t i;

	for (i = 0; i < sizeof(wait) / sizeof(wait[0]); i++)
		if (!strcmp(name, wait[i]))
			return MPI_SHIM_T_CAT_WAIT;
	for (i = 0; i < sizeof(launch) / sizeof(launch[0]); i++)
		if (has_prefix(name, launch[i]))
			return MPI_SHIM_T_CAT_LAUNCH;
	for (i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (has_prefix(name, drivers[i]))
			return MPI_SHIM_T_CAT_DRIVERS;
	if (has_prefix(name, "BIP_REL_") || !strcmp(name, "BIP_RETRY_TIMEOUT"))
		return MPI_SHIM_T_CAT_RELIABILITY;
	return MPI_SHIM_T_CAT_BIP;
}

/* Fill v for the setting name; 0 or -ENOMEM. */
static int cvar_make(struct cvar *v, const char *name, const char *def, const char *what,
		     enum mpi_shim_t_cat cat)
{
	size_t i, len = strlen(what) + strlen(def) + sizeof(" (default: empty)");

	v->desc = malloc(len);
	if (!v->desc)
		return -ENOMEM;
	snprintf(v->desc, len, "%s (default: %s)", what, *def ? def : "empty");
	v->name = name;
	v->cat = cat;
	v->secret = !strcmp(name, "BIP_SECRET");
	v->valid = NULL;
	v->scope = MPI_T_SCOPE_READONLY;
	for (i = 0; i < sizeof(constant) / sizeof(constant[0]); i++)
		if (!strcmp(name, constant[i]))
			v->scope = MPI_T_SCOPE_CONSTANT;
	for (i = 0; i < sizeof(writable) / sizeof(writable[0]); i++)
		if (!strcmp(name, writable[i].name)) {
			v->valid = writable[i].valid;
			v->scope = MPI_T_SCOPE_LOCAL;
		}
	if (v->valid)
		v->verbosity = MPI_T_VERBOSITY_USER_BASIC;
	else if (cat == MPI_SHIM_T_CAT_DRIVERS || cat == MPI_SHIM_T_CAT_RELIABILITY)
		v->verbosity = MPI_T_VERBOSITY_TUNER_DETAIL;
	else
		v->verbosity = MPI_T_VERBOSITY_USER_DETAIL;
	return 0;
}

int mpi_shim_t_cvar_setup(void)
{
	int nbip = bip_settings(), i, n = 0;
	size_t j;
	const char *name, *def, *what;

	cv.vars = calloc((size_t)nbip + sizeof(shim_settings) / sizeof(shim_settings[0]),
			 sizeof(*cv.vars));
	if (!cv.vars)
		return MPI_T_ERR_MEMORY;
	for (i = 0; i < nbip; i++) {
		if (bip_setting(i, &name, &def, &what) < 0 || strchr(name, '<'))
			continue;
		if (cvar_make(&cv.vars[n], name, def, what, category_of(name)) < 0)
			goto no_memory;
		n++;
	}
	for (j = 0; j < sizeof(shim_settings) / sizeof(shim_settings[0]); j++) {
		const struct cvar_shim *s = &shim_settings[j];

		if (cvar_make(&cv.vars[n], s->name, s->def, s->what, MPI_SHIM_T_CAT_SHIM) < 0)
			goto no_memory;
		n++;
	}
	cv.n = n;
	return MPI_SUCCESS;

no_memory:
	cv.n = n;
	mpi_shim_t_cvar_teardown();
	return MPI_T_ERR_MEMORY;
}

void mpi_shim_t_cvar_teardown(void)
{
	int i;

	while (cv.handles) {
		struct mpi_shim_t_cvar_handle *h = cv.handles;

		cv.handles = h->next;
		free(h);
	}
	for (i = 0; i < cv.n; i++)
		free(cv.vars[i].desc);
	free(cv.vars);
	cv.vars = NULL;
	cv.n = 0;
}

int mpi_shim_t_cvar_count(void)
{
	return cv.n;
}

enum mpi_shim_t_cat mpi_shim_t_cvar_category(int i)
{
	return cv.vars[i].cat;
}

static int handle_valid(MPI_T_cvar_handle handle)
{
	struct mpi_shim_t_cvar_handle *h;

	for (h = cv.handles; h; h = h->next)
		if (h == handle)
			return 1;
	return 0;
}

/* Whether BIP may still read what is written now. */
static int before_init(void)
{
	return !mpi_shim.initialized && !mpi_shim.finalized && bip_numnodes == 0;
}

int PMPI_T_cvar_get_num(int *num_cvar)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (!num_cvar)
		return MPI_T_ERR_INVALID;
	*num_cvar = cv.n;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_cvar_get_num);

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
			 MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
			 int *bind, int *scope)
{
	MPI_SHIM_ENTER();
	const struct cvar *v;

	MPI_SHIM_T_CHECK();
	if (cvar_index < 0 || cvar_index >= cv.n)
		return MPI_T_ERR_INVALID_INDEX;
	v = &cv.vars[cvar_index];
	mpi_shim_t_string(v->name, name, name_len);
	if (verbosity)
		*verbosity = v->verbosity;
	if (datatype)
		*datatype = MPI_CHAR;
	if (enumtype)
		*enumtype = MPI_T_ENUM_NULL;
	mpi_shim_t_string(v->desc, desc, desc_len);
	if (bind)
		*bind = MPI_T_BIND_NO_OBJECT;
	if (scope)
		*scope = v->scope;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_cvar_get_info);

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
	MPI_SHIM_ENTER();
	int i;

	MPI_SHIM_T_CHECK();
	if (!name || !cvar_index)
		return MPI_T_ERR_INVALID;
	for (i = 0; i < cv.n; i++)
		if (!strcmp(cv.vars[i].name, name)) {
			*cvar_index = i;
			return MPI_SUCCESS;
		}
	return MPI_T_ERR_INVALID_NAME;
}
MPI_SHIM_ALIAS(MPI_T_cvar_get_index);

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
			     int *count)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_cvar_handle *h;

	(void)obj_handle;
	MPI_SHIM_T_CHECK();
	if (cvar_index < 0 || cvar_index >= cv.n)
		return MPI_T_ERR_INVALID_INDEX;
	if (!handle || !count)
		return MPI_T_ERR_INVALID;
	h = malloc(sizeof(*h));
	if (!h)
		return MPI_T_ERR_MEMORY;
	h->index = cvar_index;
	h->next = cv.handles;
	cv.handles = h;
	*handle = h;
	*count = CVAR_CHARS;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_cvar_handle_alloc);

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_cvar_handle **p;

	MPI_SHIM_T_CHECK();
	if (!handle)
		return MPI_T_ERR_INVALID;
	for (p = &cv.handles; *p; p = &(*p)->next)
		if (*p == *handle) {
			*p = (*handle)->next;
			free(*handle);
			*handle = MPI_T_CVAR_HANDLE_NULL;
			return MPI_SUCCESS;
		}
	return MPI_T_ERR_INVALID_HANDLE;
}
MPI_SHIM_ALIAS(MPI_T_cvar_handle_free);

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
	MPI_SHIM_ENTER();
	const struct cvar *v;
	const char *value;
	int len = CVAR_CHARS;

	MPI_SHIM_T_CHECK();
	if (!handle_valid(handle))
		return MPI_T_ERR_INVALID_HANDLE;
	if (!buf)
		return MPI_T_ERR_INVALID;
	v = &cv.vars[handle->index];
	value = v->secret ? NULL : getenv(v->name);
	mpi_shim_t_string(value ? value : "", buf, &len);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
	MPI_SHIM_ENTER();
	const struct cvar *v;
	char value[CVAR_CHARS];
	size_t len;

	MPI_SHIM_T_CHECK();
	if (!handle_valid(handle))
		return MPI_T_ERR_INVALID_HANDLE;
	if (!buf)
		return MPI_T_ERR_INVALID;
	v = &cv.vars[handle->index];
	if (!v->valid || !before_init())
		return MPI_T_ERR_CVAR_SET_NEVER;
	/* count characters at most, as the handle said. */
	len = strnlen(buf, CVAR_CHARS);
	if (len == CVAR_CHARS)
		return MPI_T_ERR_INVALID;
	memcpy(value, buf, len + 1);
	if (!*value)
		return unsetenv(v->name) ? MPI_T_ERR_MEMORY : MPI_SUCCESS;
	if (!v->valid(value))
		return MPI_T_ERR_INVALID;
	return setenv(v->name, value, 1) ? MPI_T_ERR_MEMORY : MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_cvar_write);
