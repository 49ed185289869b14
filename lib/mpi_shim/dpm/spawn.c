/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent
 * (MPI-3.1 10.3), on a BIP job that grows (bip_grow(3)).
 *
 * The protocol.  The root reads the commands, their arguments and their
 * info keys, and asks BIP for the processes: bipload starts them as new
 * nodes, numbered after every node the job has had, the processes of one
 * call consecutive, and bip_grow returns once each has started BIP or one
 * has failed (then none of them runs).  Each child gets in its environment
 * BIP_PARENT=NODE:KEY, the root's node and a fresh random key, and
 * BIP_APPNUM, its command's index.  The root broadcasts the outcome to
 * comm: an MPI error class, the first node, the count, then every
 * process's error code.  When every process started, the parents build the
 * inter-communicator with the bridge (dpm.h), the root trading with the
 * children's leader (the first new node) under the key; the children do
 * the same from MPI_Init, over their MPI_COMM_WORLD (the nodes started with
 * them, bip_group(3)), and the inter-communicator is what
 * MPI_Comm_get_parent returns until it is disconnected or freed.
 *
 * Info keys (per command): host (bipload's host, or over BIP_NIC=ofi any
 * host where the job runs processes; any other fails with
 * MPI_ERR_SPAWN), wdir, path (PATH for finding the program),
 * file (a file of further "key value" lines, read by the root), soft (the
 * counts that would do, as "a:b:s,c,...": the largest that fits in the
 * job's room is started), arch (accepted and ignored).  An unknown key is
 * ignored, as the standard allows.
 *
 * Failures: a program that does not exist or cannot run, or that ends
 * before MPI_Init, gives MPI_ERR_SPAWN in its process's error code and the
 * call returns MPI_ERR_SPAWN with nothing left running; so does a job that
 * cannot grow (not started by bipload, a driver other than shm or ofi
 * alone) or has no room.  A child that crashes after it started ends the
 * job, as any process of it does (bipload).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bip.h"
#include "dpm.h"
#include "shim.h"

/* The inter-communicator to the parents, or MPI_COMM_NULL. */
static MPI_Comm parent = MPI_COMM_NULL;

/* What the root tells comm. */
struct outcome {
	int32_t err;    /* an MPI error class */
	int32_t first;  /* the first new node */
	int32_t total;  /* processes asked (codes follow) */
	int32_t pad;
	uint64_t key;
};

/* One command as read at the root. */
struct cmd {
	int count;
	char **argv;            /* the program then its arguments (ours, NULL-ended) */
	char *env[2];           /* BIP_PARENT, NULL */
	char host[MPI_MAX_INFO_VAL + 1], wdir[MPI_MAX_INFO_VAL + 1], path[MPI_MAX_INFO_VAL + 1];
	char soft[MPI_MAX_INFO_VAL + 1];
};

/* The largest count of soft ("a", "a:b", "a:b:s", lists of them) that
 * is at most room; -1 if none is, or soft is malformed. */
static int soft_pick(const char *soft, int room)
{
	char buf[MPI_MAX_INFO_VAL + 1], *save = NULL, *tok;
	int best = -1;

	snprintf(buf, sizeof(buf), "%s", soft);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long a, b, st = 1, v;
		char *end;

		a = strtol(tok, &end, 10);
		b = a;
		if (*end == ':') {
			b = strtol(end + 1, &end, 10);
			if (*end == ':')
				st = strtol(end + 1, &end, 10);
		}
		if (*end || a < 0 || b < a || st < 1)
			return -1;
		for (v = a; v <= b; v += st)
			if (v <= room && v > best)
				best = (int)v;
	}
	return best;
}

/* The keys of a "key value" file (the info key file) that spawn reads. */
static void read_key_file(struct cmd *c, const char *name)
{
	char line[MPI_MAX_INFO_VAL + 64];
	FILE *f = fopen(name, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *k = line, *v;

		line[strcspn(line, "\n")] = '\0';
		v = strpbrk(k, " \t=");
		if (!v)
			continue;
		*v++ = '\0';
		v += strspn(v, " \t=");
		if (!strcmp(k, "host"))
			snprintf(c->host, sizeof(c->host), "%s", v);
		else if (!strcmp(k, "wdir"))
			snprintf(c->wdir, sizeof(c->wdir), "%s", v);
		else if (!strcmp(k, "path"))
			snprintf(c->path, sizeof(c->path), "%s", v);
		else if (!strcmp(k, "soft"))
			snprintf(c->soft, sizeof(c->soft), "%s", v);
	}
	fclose(f);
}

static void read_info(struct cmd *c, MPI_Info info)
{
	char v[MPI_MAX_INFO_VAL + 1];
	int flag;

	if (info == MPI_INFO_NULL)
		return;
#define GET(key) (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
	if (GET("file"))
		read_key_file(c, v);
	if (GET("host"))
		snprintf(c->host, sizeof(c->host), "%s", v);
	if (GET("wdir"))
		snprintf(c->wdir, sizeof(c->wdir), "%s", v);
	if (GET("path"))
		snprintf(c->path, sizeof(c->path), "%s", v);
	if (GET("soft"))
		snprintf(c->soft, sizeof(c->soft), "%s", v);
#undef GET
}

static void free_cmds(struct cmd *c, int n)
{
	int i;

	for (i = 0; c && i < n; i++) {
		free(c[i].argv);
		free(c[i].env[0]);
	}
	free(c);
}

/*
 * The root's part: start the processes; fills o (and codes, o->total of
 * them, malloc'ed) and a message in msg when it fails.
 */
static void root_spawn(int count, char *commands[], char **argvs[], const int maxprocs[],
		       const MPI_Info infos[], struct outcome *o, int **codes_p, char *msg,
		       size_t msglen)
{
	struct bip_grow_cmd *gc = NULL;
	struct cmd *c = calloc((size_t)count, sizeof(*c));
	int i, j, n, room, total = 0, *codes = NULL;
	char env[96];

	o->err = MPI_SUCCESS;
	o->total = 0;
	*codes_p = NULL;
	if (getrandom(&o->key, sizeof(o->key), 0) != sizeof(o->key))
		o->key = (uint64_t)rand() << 32 ^ (uint64_t)rand();
	snprintf(env, sizeof(env), "BIP_PARENT=%d:%016llx", bip_mynode,
		 (unsigned long long)o->key);
	room = bip_universe() - bip_jobnodes();
	if (!c)
		goto no_mem;
	for (i = 0; i < count; i++) {
		if (!commands[i] || !commands[i][0]) {
			o->err = MPI_ERR_ARG;
			snprintf(msg, msglen, "command %d is empty", i);
			goto out;
		}
		if (maxprocs[i] < 0) {
			o->err = MPI_ERR_ARG;
			snprintf(msg, msglen, "maxprocs %d of command %d is negative", maxprocs[i],
				 i);
			goto out;
		}
		if (infos[i] != MPI_INFO_NULL &&
		    mpi_shim_info_check(MPI_COMM_SELF, infos[i], "MPI_Comm_spawn") != MPI_SUCCESS) {
			o->err = MPI_ERR_INFO;
			snprintf(msg, msglen, "the info of command %d is not an info object", i);
			goto out;
		}
		read_info(&c[i], infos[i]);
		c[i].count = maxprocs[i];
		if (c[i].soft[0]) {
			int pick = soft_pick(c[i].soft, room - total);

			if (pick < 0) {
				o->err = MPI_ERR_SPAWN;
				snprintf(msg, msglen, "soft=%s of command %d: no count fits the job's "
					 "room (%d more processes)", c[i].soft, i, room - total);
				goto out;
			}
			if (pick < c[i].count)
				c[i].count = pick;
		}
		for (n = 0; argvs && argvs[i] && argvs[i][n]; n++)
			;
		c[i].argv = calloc((size_t)n + 2, sizeof(char *));
		c[i].env[0] = strdup(env);
		if (!c[i].argv || !c[i].env[0])
			goto no_mem;
		c[i].argv[0] = commands[i];
		for (j = 0; j < n; j++)
			c[i].argv[j + 1] = argvs[i][j];
		total += c[i].count;
	}
	o->total = total;
	codes = calloc((size_t)(total ? total : 1), sizeof(*codes));
	gc = calloc((size_t)count, sizeof(*gc));
	if (!codes || !gc)
		goto no_mem;
	if (total == 0)
		goto out; /* soft said none: nothing to start */
	for (i = 0, n = 0; i < count; i++) {
		if (!c[i].count)
			continue; /* bip_grow takes commands of one process or more */
		gc[n++] = (struct bip_grow_cmd){ .count = c[i].count, .argv = c[i].argv,
						 .env = (const char *const *)c[i].env,
						 .host = c[i].host[0] ? c[i].host : NULL,
						 .wdir = c[i].wdir[0] ? c[i].wdir : NULL,
						 .path = c[i].path[0] ? c[i].path : NULL };
	}
	if (bip_grow(gc, n, &o->first, codes) < 0) {
		o->err = MPI_ERR_SPAWN;
		snprintf(msg, msglen, "%s", bip_error_string());
		for (i = 0; i < total; i++)
			codes[i] = codes[i] ? MPI_ERR_SPAWN : MPI_SUCCESS;
	}
	goto out;

no_mem:
	o->err = MPI_ERR_NO_MEM;
	snprintf(msg, msglen, "out of memory");
out:
	free(gc);
	free_cmds(c, count);
	*codes_p = codes;
}

static int spawn(int count, char *commands[], char **argvs[], const int maxprocs[],
		 const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
		 int errcodes[], const char *call)
{
	struct outcome o = { 0 };
	char msg[600] = "";
	int *codes = NULL, rc, i;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (!intercomm)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "intercomm is NULL");
	if (mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call, "comm is an inter-communicator");
	if (root < 0 || root >= comm->size)
		return mpi_shim_err(comm, MPI_ERR_ROOT, call, "root %d is not a rank of comm "
				    "(size %d)", root, comm->size);
	if (comm->rank == root) {
		if (count < 1 || !commands || !maxprocs || !infos) {
			o.err = MPI_ERR_ARG;
			snprintf(msg, sizeof(msg), "%s", count < 1 ? "count is not positive" :
				 "a NULL array of commands, counts or infos");
		} else {
			root_spawn(count, commands, argvs, maxprocs, infos, &o, &codes, msg,
				   sizeof(msg));
		}
	}
	rc = PMPI_Bcast(&o, (int)sizeof(o), MPI_BYTE, root, comm);
	if (!rc && o.total > 0 && (o.total > 1 << 20 || o.total < 0))
		rc = MPI_ERR_INTERN;
	if (!rc && o.total > 0) {
		if (comm->rank != root && !(codes = calloc((size_t)o.total, sizeof(*codes))))
			rc = MPI_ERR_NO_MEM;
		if (!rc)
			rc = PMPI_Bcast(codes, o.total, MPI_INT, root, comm);
	}
	if (!rc && errcodes)
		for (i = 0; i < o.total; i++)
			errcodes[i] = codes[i];
	free(codes);
	if (rc)
		return mpi_shim_err(comm, rc, call, "telling comm the outcome failed");
	if (o.err)
		return mpi_shim_err(comm, o.err, call, "%s",
				    comm->rank == root ? msg : "the root could not start the "
								"processes (it said why)");
	if (o.total == 0)
		return mpi_shim_err(comm, MPI_ERR_SPAWN, call, "no process to start");
	return mpi_shim_dpm_bridge(comm, root, o.first, o.key, intercomm, call);
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
		    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	MPI_SHIM_ENTER();
	char *cmd = (char *)command;

	return spawn(1, &cmd, argv ? &argv : NULL, &maxprocs, &info, root, comm, intercomm,
		     array_of_errcodes, "MPI_Comm_spawn");
}
MPI_SHIM_ALIAS(MPI_Comm_spawn);

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
			     const int array_of_maxprocs[], const MPI_Info array_of_info[],
			     int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	MPI_SHIM_ENTER();
	return spawn(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info,
		     root, comm, intercomm, array_of_errcodes, "MPI_Comm_spawn_multiple");
}
MPI_SHIM_ALIAS(MPI_Comm_spawn_multiple);

int mpi_shim_dpm_parent_init(void)
{
	const char *s = getenv("BIP_PARENT");
	unsigned long long key;
	char *end;
	long node;

	if (!s || !*s)
		return MPI_SUCCESS;
	node = strtol(s, &end, 10);
	if (*end != ':' || node < 0 || node >= mpi_shim_dpm_nodes())
		goto bad;
	key = strtoull(end + 1, &end, 16);
	if (*end)
		goto bad;
	/* Not for the programs this one starts. */
	unsetenv("BIP_PARENT");
	if (mpi_shim_dpm_bridge(MPI_COMM_WORLD, 0, (int)node, (uint64_t)key, &parent,
				"MPI_Init") != MPI_SUCCESS)
		return MPI_ERR_SPAWN;
	/* A reference of our own: freed or disconnected by the program, the
	 * object stays until this one is released (get_parent, finalize). */
	parent->refcount++;
	/* Its name, as MPI-3.1 6.8 gives it. */
	snprintf(parent->name, sizeof(parent->name), "MPI_COMM_PARENT");
	return MPI_SUCCESS;
bad:
	return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init",
			    "BIP_PARENT=%s: expected NODE:KEY from the spawning job", s);
}

void mpi_shim_dpm_parent_fini(void)
{
	if (parent != MPI_COMM_NULL)
		mpi_shim_comm_release(parent);
	parent = MPI_COMM_NULL;
}

int PMPI_Comm_get_parent(MPI_Comm *p)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_get_parent")))
		return rc;
	if (!p)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_get_parent",
				    "parent is NULL");
	if (parent != MPI_COMM_NULL && !parent->valid)
		mpi_shim_dpm_parent_fini(); /* freed or disconnected: no parent now */
	*p = parent;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_get_parent);
