/* SPDX-License-Identifier: MIT */
/*
 * info.c - info objects (MPI_Info_*), MPI_INFO_ENV, and the hints of a
 * communicator (MPI_Comm_set_info, MPI_Comm_get_info; MPI_Comm_dup_with_info,
 * which makes a communicator, is comm/comm.c's).
 *
 * An info object is a list of (key, value) strings in the order the keys
 * were first set: MPI_Info_get_nthkey numbers them in that order.  Setting
 * a key that is there replaces its value in place.  The info calls may be
 * made at any time, before MPI_Init and after MPI_Finalize too (MPI-4.0);
 * their errors go to MPI_COMM_WORLD's handler, as every error not tied to
 * a communicator does in this library.
 *
 * Between MPI_Init and MPI_Finalize, a freed info object is kept, marked
 * invalid, on a list of spare ones that MPI_Info_create takes first, so
 * that a handle used after MPI_Info_free is refused with MPI_ERR_INFO
 * instead of touching freed memory (until the object is handed out again).
 * MPI_Finalize frees the spares; outside those bounds a freed object goes
 * at once.
 *
 * MPI_INFO_ENV is filled by MPI_Init with what this process knows for
 * certain of how it was started, and emptied by MPI_Finalize;
 * MPI_Info_create_env makes a new object of the same keys, maxprocs
 * excepted, at any time.
 *
 * Communicator hints: none of them changes what this library does, but
 * each communicator keeps the hints the program set (MPI_Comm_set_info,
 * MPI_Comm_dup_with_info, or copied by MPI_Comm_dup from the parent) and
 * MPI_Comm_get_info returns them: the MPI-4 behaviour (under MPI-3.1's
 * "hints in use" it would always return an empty object).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "shim.h"

#define INFO_MAGIC 0x1f0c0de5u

struct info_entry {
	char *key;
	char *value;
};

struct mpi_shim_info {
	unsigned magic;      /* INFO_MAGIC while valid, 0 once freed */
	int predefined;      /* MPI_INFO_ENV: not modified or freed by the user */
	int n, cap;
	struct info_entry *e;
	struct mpi_shim_info *next_spare;
};

struct mpi_shim_info mpi_shim_info_env = {
	.magic = INFO_MAGIC,
	.predefined = 1,
};

static struct mpi_shim_info *spares;

static int info_ok(MPI_Info info)
{
	return info != MPI_INFO_NULL && info->magic == INFO_MAGIC;
}

static int check_info(MPI_Info info, const char *call)
{
	if (info_ok(info))
		return MPI_SUCCESS;
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO, call, "%s",
			    info == MPI_INFO_NULL ? "the info object is MPI_INFO_NULL" :
						    "the info object was freed");
}

static int check_key(const char *key, const char *call)
{
	size_t n;

	if (!key)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO_KEY, call, "the key is NULL");
	n = strnlen(key, MPI_MAX_INFO_KEY + 1);
	if (n == 0 || n > MPI_MAX_INFO_KEY)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO_KEY, call,
				    "the key is %s (1 to MPI_MAX_INFO_KEY = %d characters)",
				    n ? "too long" : "empty", MPI_MAX_INFO_KEY);
	return MPI_SUCCESS;
}

static int check_writable(MPI_Info info, const char *call)
{
	if (!info->predefined)
		return MPI_SUCCESS;
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO, call,
			    "MPI_INFO_ENV is predefined: it cannot be changed or freed "
			    "(MPI_Info_dup it for a copy that can)");
}

static struct info_entry *find(MPI_Info info, const char *key)
{
	int i;

	for (i = 0; i < info->n; i++)
		if (!strcmp(info->e[i].key, key))
			return &info->e[i];
	return NULL;
}

static void info_clear(MPI_Info info)
{
	int i;

	for (i = 0; i < info->n; i++) {
		free(info->e[i].key);
		free(info->e[i].value);
	}
	free(info->e);
	info->e = NULL;
	info->n = info->cap = 0;
}

/* Set key to value (both already checked); MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int info_put(MPI_Info info, const char *key, const char *value)
{
	struct info_entry *e = find(info, key);
	char *v = strdup(value), *k = NULL;

	if (!v)
		return MPI_ERR_NO_MEM;
	if (e) {
		free(e->value);
		e->value = v;
		return MPI_SUCCESS;
	}
	if (info->n == info->cap) {
		int cap = info->cap ? 2 * info->cap : 8;

		e = realloc(info->e, (size_t)cap * sizeof(*e));
		if (!e)
			goto no_memory;
		info->e = e;
		info->cap = cap;
	}
	k = strdup(key);
	if (!k)
		goto no_memory;
	info->e[info->n].key = k;
	info->e[info->n].value = v;
	info->n++;
	return MPI_SUCCESS;

no_memory:
	free(v);
	return MPI_ERR_NO_MEM;
}

static MPI_Info info_new(void)
{
	MPI_Info info = spares;

	if (info)
		spares = info->next_spare;
	else if (!(info = malloc(sizeof(*info))))
		return NULL;
	memset(info, 0, sizeof(*info));
	info->magic = INFO_MAGIC;
	return info;
}

static void info_delete(MPI_Info info)
{
	info_clear(info);
	info->magic = 0;
	if (!mpi_shim.initialized || mpi_shim.finalized) {
		/* Outside MPI_Init..MPI_Finalize nothing would free a spare. */
		free(info);
		return;
	}
	info->next_spare = spares;
	spares = info;
}

/* A copy of from (NULL: empty); NULL when out of memory. */
static MPI_Info info_copy(MPI_Info from)
{
	MPI_Info info = info_new();
	int i;

	if (!info)
		return NULL;
	for (i = 0; from && i < from->n; i++) {
		if (info_put(info, from->e[i].key, from->e[i].value)) {
			info_delete(info);
			return NULL;
		}
	}
	return info;
}

/* --- the calls --- */

int PMPI_Info_create(MPI_Info *info)
{
	MPI_SHIM_ENTER();
	if (!info)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
	*info = info_new();
	if (!*info)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_create);

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Info_set";
	int rc;

	if ((rc = check_info(info, call)) || (rc = check_writable(info, call)) ||
	    (rc = check_key(key, call)))
		return rc;
	if (!value)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, call, "the value is NULL");
	if (strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, call,
				    "the value of \"%s\" is longer than MPI_MAX_INFO_VAL (%d)", key,
				    MPI_MAX_INFO_VAL);
	if ((rc = info_put(info, key, value)))
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_set);

int PMPI_Info_delete(MPI_Info info, const char *key)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Info_delete";
	struct info_entry *e;
	int rc;

	if ((rc = check_info(info, call)) || (rc = check_writable(info, call)) ||
	    (rc = check_key(key, call)))
		return rc;
	e = find(info, key);
	if (!e)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, call,
				    "the key \"%s\" is not in the info object", key);
	free(e->key);
	free(e->value);
	/* The others keep their order. */
	memmove(e, e + 1, (size_t)(info->e + info->n - (e + 1)) * sizeof(*e));
	info->n--;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_delete);

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Info_get";
	struct info_entry *e;
	size_t n;
	int rc;

	if ((rc = check_info(info, call)) || (rc = check_key(key, call)))
		return rc;
	if (!flag || valuelen < 0 || (!value && valuelen > 0))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "flag or value is NULL, or valuelen %d is negative", valuelen);
	e = find(info, key);
	*flag = e != NULL;
	if (!e || !value)
		return MPI_SUCCESS;
	/* valuelen characters at most, then the terminating null. */
	n = strlen(e->value);
	if (n > (size_t)valuelen)
		n = (size_t)valuelen;
	memcpy(value, e->value, n);
	value[n] = '\0';
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_get);

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Info_get_valuelen";
	struct info_entry *e;
	int rc;

	if ((rc = check_info(info, call)) || (rc = check_key(key, call)))
		return rc;
	if (!valuelen || !flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "valuelen or flag is NULL");
	e = find(info, key);
	*flag = e != NULL;
	if (e)
		*valuelen = (int)strlen(e->value);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_get_valuelen);

int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Info_get_string";
	struct info_entry *e;
	size_t n;
	int rc;

	if ((rc = check_info(info, call)) || (rc = check_key(key, call)))
		return rc;
	if (!buflen || !flag || *buflen < 0 || (!value && *buflen > 0))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "buflen, flag or value is NULL, or *buflen is negative");
	e = find(info, key);
	*flag = e != NULL;
	if (!e)
		return MPI_SUCCESS;
	/* At most *buflen - 1 characters and the null; *buflen becomes the
	 * room the whole value needs. */
	n = strlen(e->value);
	if (*buflen > 0) {
		size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;

		memcpy(value, e->value, m);
		value[m] = '\0';
	}
	*buflen = (int)n + 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_get_string);

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_info(info, "MPI_Info_get_nkeys")))
		return rc;
	if (!nkeys)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys",
				    "nkeys is NULL");
	*nkeys = info->n;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_get_nkeys);

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_info(info, "MPI_Info_get_nthkey")))
		return rc;
	if (!key || n < 0 || n >= info->n)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey",
				    "key is NULL or n = %d is not 0 to the number of keys - 1 (%d)",
				    n, info->n - 1);
	strcpy(key, info->e[n].key);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_get_nthkey);

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_info(info, "MPI_Info_dup")))
		return rc;
	if (!newinfo)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
	*newinfo = info_copy(info);
	if (!*newinfo)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_dup", "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_dup);

int PMPI_Info_free(MPI_Info *info)
{
	MPI_SHIM_ENTER();
	int rc;

	if (!info)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
	if ((rc = check_info(*info, "MPI_Info_free")) ||
	    (rc = check_writable(*info, "MPI_Info_free")))
		return rc;
	info_delete(*info);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_free);

/* --- MPI_INFO_ENV and MPI_Info_create_env --- */

/* The command line of this process into info: from argv, else the kernel's. */
static int env_command(MPI_Info info, int argc, char **argv)
{
	char buf[MPI_MAX_INFO_VAL + 1], *args = NULL;
	size_t len = 0, n;
	FILE *f = NULL;
	int i, rc;

	if (argc <= 0 || !argv || !argv[0]) {
		/* NUL-separated arguments. */
		f = fopen("/proc/self/cmdline", "r");
		if (!f)
			return MPI_SUCCESS;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		if (!n)
			return MPI_SUCCESS;
		buf[n] = '\0';
		if (buf[n - 1] == '\0')
			n--; /* the last argument's terminator */
		if ((rc = info_put(info, "command", buf)))
			return rc;
		for (i = (int)strlen(buf) + 1; (size_t)i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		if (strlen(buf) + 1 < n)
			return info_put(info, "argv", buf + strlen(buf) + 1);
		return MPI_SUCCESS;
	}
	if ((rc = info_put(info, "command", argv[0])))
		return rc;
	/* The arguments after the command, separated by spaces. */
	for (i = 1; i < argc && argv[i]; i++)
		len += strlen(argv[i]) + 1;
	if (!len || len > MPI_MAX_INFO_VAL + 1)
		return MPI_SUCCESS;
	if (!(args = malloc(len)))
		return MPI_ERR_NO_MEM;
	args[0] = '\0';
	for (i = 1; i < argc && argv[i]; i++) {
		if (i > 1)
			strcat(args, " ");
		strcat(args, argv[i]);
	}
	rc = info_put(info, "argv", args);
	free(args);
	return rc;
}

/*
 * The keys of the environment: command and argv, maxprocs (if > 0), host
 * and arch, wdir (the working directory now).  MPI_SUCCESS or
 * MPI_ERR_NO_MEM.
 */
static int env_fill(MPI_Info info, int argc, char **argv, int maxprocs)
{
	char buf[PATH_MAX];
	struct utsname u;
	int rc;

	if ((rc = env_command(info, argc, argv)))
		return rc;
	snprintf(buf, sizeof(buf), "%d", maxprocs);
	if (maxprocs > 0 && (rc = info_put(info, "maxprocs", buf)))
		return rc;
	if (uname(&u) == 0 && ((rc = info_put(info, "host", u.nodename)) ||
			       (rc = info_put(info, "arch", u.machine))))
		return rc;
	if (getcwd(buf, sizeof(buf)) && strlen(buf) <= MPI_MAX_INFO_VAL)
		return info_put(info, "wdir", buf);
	return MPI_SUCCESS;
}

void mpi_shim_info_env_init(int argc, char **argv)
{
	env_fill(&mpi_shim_info_env, argc, argv, mpi_shim.world_size);
}

/*
 * MPI_Info_create_env (MPI-4.0): what MPI_INFO_ENV would hold if MPI_Init
 * were given argc and argv, callable at any time.  maxprocs is left out:
 * the job is only known once MPI_Init has started BIP, and the object must
 * be the same before MPI_Init, in between, and after MPI_Finalize.
 */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Info_create_env";
	MPI_Info e;
	int rc;

	if (!info || argc < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "info is NULL or argc (%d) is negative", argc);
	if (!(e = info_new()))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	if ((rc = env_fill(e, argc, argv, 0))) {
		info_delete(e);
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "no memory");
	}
	*info = e;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Info_create_env);

void mpi_shim_info_fini(void)
{
	MPI_Info s;

	info_clear(&mpi_shim_info_env);
	while ((s = spares)) {
		spares = s->next_spare;
		free(s);
	}
}

/* --- communicator hints --- */

void mpi_shim_comm_hints_free(MPI_Comm comm)
{
	if (comm->hints) {
		info_clear(comm->hints);
		free(comm->hints);
		comm->hints = NULL;
	}
}

/* Hints of to: a copy of from (NULL: none).  MPI_SUCCESS or MPI_ERR_NO_MEM. */
int mpi_shim_comm_hints_set(MPI_Comm to, MPI_Info from)
{
	MPI_Info h = NULL;

	if (from && from->n) {
		h = info_copy(from);
		if (!h)
			return MPI_ERR_NO_MEM;
		/* Owned by the communicator, not a spare when it goes. */
		h->magic = 0;
	}
	mpi_shim_comm_hints_free(to);
	to->hints = h;
	return MPI_SUCCESS;
}

int mpi_shim_comm_hints_copy(MPI_Comm from, MPI_Comm to)
{
	return mpi_shim_comm_hints_set(to, from->hints);
}

/* info: MPI_INFO_NULL (no hints) or a valid object; reported errors. */
int mpi_shim_info_check(MPI_Comm comm, MPI_Info info, const char *call)
{
	if (info == MPI_INFO_NULL || info_ok(info))
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_INFO, call, "the info object was freed");
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_set_info";
	MPI_Info merged;
	int rc, i;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = mpi_shim_info_check(comm, info, call)))
		return rc;
	if (info == MPI_INFO_NULL)
		return MPI_SUCCESS; /* no hints: nothing changes */
	/* The hints given replace those of the same keys; the others stay. */
	merged = info_copy(comm->hints);
	if (!merged)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	for (i = 0; i < info->n; i++)
		if (info_put(merged, info->e[i].key, info->e[i].value))
			break;
	rc = i < info->n ? MPI_ERR_NO_MEM : mpi_shim_comm_hints_set(comm, merged);
	info_delete(merged);
	if (rc)
		return mpi_shim_err(comm, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Comm_get_info";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (!info_used)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "info_used is NULL");
	*info_used = info_copy(comm->hints);
	if (!*info_used)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_get_info);
