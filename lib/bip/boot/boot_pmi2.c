/* SPDX-License-Identifier: MIT */
/*
 * boot_pmi2.c - start-up through a PMI-2 server (boot.h): Slurm's
 * srun --mpi=pmi2, MPICH's Hydra.
 *
 * The client is Slurm's libpmi2 (from MPICH's PMI-2 code, ANL licence):
 * it speaks the wire protocol every PMI-2 server speaks, depends on
 * nothing but libc, and Debian ships it (libpmi2-0).  Writing the wire
 * protocol again would buy only a time-out on the fence, which the guard
 * of boot.c gives as well.  It is loaded at run time, so that a binary
 * built where it is runs where it is not.
 *
 * The node is the PMI-2 rank, the node count its size, the job id a hash
 * of PMI2_Job_GetId (Slurm: "job.step").  Values are strings of at most
 * PMI2_MAX_VALLEN bytes, in one key space for the whole job (a key names
 * the rank that put it): each process puts its host name as
 * "bip.<rank>.host"; a blob goes as hex in pieces "bip.<rank>.<k>.<piece>"
 * of PIECE bytes, k counting the all-gathers.  One fence follows each round of puts.  What
 * comes back is checked for its length and digits, as anything another
 * process wrote.  MPI_Abort goes to PMI2_Abort, which ends the job.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/pmi2.h>

#include "boot.h"
#include "oob.h"

#define LIBPMI2 "libpmi2.so.0"
/* Blob bytes per value: their hex and the NUL fit in PMI2_MAX_VALLEN. */
#define PIECE ((PMI2_MAX_VALLEN - 1) / 2)

static struct {
	int loaded;
	int (*init)(int *spawned, int *size, int *rank, int *appnum);
	int (*finalize)(void);
	int (*abort)(int flag, const char msg[]);
	int (*job_getid)(char jobid[], int jobid_size);
	int (*put)(const char key[], const char value[]);
	int (*fence)(void);
	int (*get)(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
		   int *vallen);
} p2;

static char pmi_jobid[256];
static int nputs;
static double fence_timeout;

static int load(char *why, size_t len)
{
	void *h;

	if (p2.loaded)
		return 0;
	h = dlopen(LIBPMI2, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, len, "cannot load %s: %s", LIBPMI2, dlerror());
		return -1;
	}
	p2.init = (__typeof__(p2.init))dlsym(h, "PMI2_Init");
	p2.finalize = (__typeof__(p2.finalize))dlsym(h, "PMI2_Finalize");
	p2.abort = (__typeof__(p2.abort))dlsym(h, "PMI2_Abort");
	p2.job_getid = (__typeof__(p2.job_getid))dlsym(h, "PMI2_Job_GetId");
	p2.put = (__typeof__(p2.put))dlsym(h, "PMI2_KVS_Put");
	p2.fence = (__typeof__(p2.fence))dlsym(h, "PMI2_KVS_Fence");
	p2.get = (__typeof__(p2.get))dlsym(h, "PMI2_KVS_Get");
	if (!p2.init || !p2.finalize || !p2.abort || !p2.job_getid || !p2.put || !p2.fence ||
	    !p2.get) {
		snprintf(why, len, "%s lacks a PMI-2 function (PMI2_Init, _Finalize, _Abort, "
			 "_Job_GetId, _KVS_Put, _KVS_Fence or _KVS_Get)", LIBPMI2);
		dlclose(h);
		return -1;
	}
	p2.loaded = 1;
	return 0;
}

static int available(char *why, size_t len)
{
	return load(why, len) == 0;
}

static int detected(void)
{
	const char *fd = getenv("PMI_FD"), *rank = getenv("PMI_RANK");

	return (fd && *fd) || (rank && *rank);
}

static int put(const char *key, const char *value, char *err, size_t errlen)
{
	int rc = p2.put(key, value);

	if (rc != PMI2_SUCCESS) {
		snprintf(err, errlen, "pmi2: putting %s failed (error %d)", key, rc);
		return -EIO;
	}
	return 0;
}

static int fence(const char *what, char *err, size_t errlen)
{
	char guard[400];
	int rc;

	snprintf(guard, sizeof(guard), "the PMI-2 fence of %s (job %s)", what, pmi_jobid);
	bip_boot_guard_start(fence_timeout, guard);
	rc = p2.fence();
	bip_boot_guard_stop();
	if (rc != PMI2_SUCCESS) {
		snprintf(err, errlen, "pmi2: the fence of %s failed (error %d)", what, rc);
		return -EIO;
	}
	return 0;
}

/* Rank r's value of key, a string of fewer than len bytes. */
static int get(int r, const char *key, char *value, int len, char *err, size_t errlen)
{
	int vallen = 0, rc;

	value[0] = '\0';
	rc = p2.get(pmi_jobid, r, key, value, len, &vallen);
	if (rc != PMI2_SUCCESS) {
		snprintf(err, errlen, "pmi2: rank %d put no %s (error %d)", r, key, rc);
		return -EPROTO;
	}
	value[len - 1] = '\0';
	return 0;
}

static int start(struct bip_boot *b, char *err, size_t errlen)
{
	char host[BIP_CONF_HOSTLEN], key[PMI2_MAX_KEYLEN], *hosts;
	int spawned = 0, size = 0, rank = -1, appnum = 0, r, rc;

	if (load(err, errlen) < 0)
		return -ENODEV;
	if (!getenv("PMI_FD") || !*getenv("PMI_FD")) {
		/* libpmi2 would start a singleton: every process a job alone. */
		snprintf(err, errlen, "pmi2: PMI_RANK is set but PMI_FD is not: no PMI-2 server "
			 "to talk to");
		return -EINVAL;
	}
	rc = p2.init(&spawned, &size, &rank, &appnum);
	if (rc != PMI2_SUCCESS) {
		snprintf(err, errlen, "pmi2: PMI2_Init failed (error %d; PMI_FD=%s)", rc,
			 getenv("PMI_FD") ? getenv("PMI_FD") : "unset");
		return -EIO;
	}
	if (size < 1 || size > BIP_CONF_MAXNODES || rank < 0 || rank >= size) {
		snprintf(err, errlen, "pmi2: rank %d of %d processes (BIP takes 1 .. %d)", rank,
			 size, BIP_CONF_MAXNODES);
		rc = -EPROTO;
		goto fail;
	}
	if (p2.job_getid(pmi_jobid, sizeof(pmi_jobid)) != PMI2_SUCCESS || !pmi_jobid[0]) {
		snprintf(err, errlen, "pmi2: the server gave no job id");
		rc = -EPROTO;
		goto fail;
	}
	b->numnodes = size;
	b->mynode = rank;
	b->launched = 1;
	rc = bip_boot_opts(b, err, errlen);
	if (rc == 0)
		rc = bip_boot_timeout(size, &fence_timeout, err, errlen);
	if (rc < 0)
		goto fail;
	bip_boot_jobid(b->jobid, sizeof(b->jobid), 'y', pmi_jobid);
	bip_boot_hostname(host, sizeof(host));
	snprintf(key, sizeof(key), "bip.%d.host", rank);
	rc = put(key, host, err, errlen);
	if (rc == 0)
		rc = fence("the host names", err, errlen);
	if (rc < 0)
		goto fail;
	hosts = malloc((size_t)size * BIP_CONF_HOSTLEN);
	if (!hosts) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	for (r = 0; r < size && rc == 0; r++) {
		snprintf(key, sizeof(key), "bip.%d.host", r);
		rc = get(r, key, hosts + (size_t)r * BIP_CONF_HOSTLEN, BIP_CONF_HOSTLEN, err,
			 errlen);
	}
	if (rc == 0)
		rc = bip_boot_conf(b, hosts, BIP_CONF_HOSTLEN, err, errlen);
	free(hosts);
	if (rc < 0)
		goto fail;
	return 0;

fail:
	p2.finalize();
	return rc;
}

static int allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		     char *err, size_t errlen)
{
	char key[PMI2_MAX_KEYLEN], what[64], hex[PMI2_MAX_VALLEN];
	size_t off, n;
	int k = nputs++, i, piece, rc = 0;

	for (off = 0, piece = 0; off < len && rc == 0; off += n, piece++) {
		n = len - off < PIECE ? len - off : PIECE;
		snprintf(key, sizeof(key), "bip.%d.%d.%d", job->mynode, k, piece);
		bip_boot_hex(hex, (const char *)blob + off, n);
		rc = put(key, hex, err, errlen);
	}
	snprintf(what, sizeof(what), "the %s addresses", job->what);
	if (rc == 0)
		rc = fence(what, err, errlen);
	for (i = 0; i < job->numnodes && rc == 0; i++) {
		for (off = 0, piece = 0; off < len && rc == 0; off += n, piece++) {
			n = len - off < PIECE ? len - off : PIECE;
			snprintf(key, sizeof(key), "bip.%d.%d.%d", i, k, piece);
			rc = get(i, key, hex, sizeof(hex), err, errlen);
			if (rc == 0 && bip_boot_unhex((char *)all + (size_t)i * len + off, hex, n)) {
				snprintf(err, errlen, "pmi2: rank %d's %s is not %zu bytes of hex",
					 i, key, n);
				rc = -EPROTO;
			}
		}
	}
	return rc;
}

static void pmi2_abort(int code, const char *msg)
{
	(void)code;
	/* flag 1: the whole job, not only this process. */
	p2.abort(1, msg);
}

static void finish(void)
{
	p2.finalize();
	nputs = 0;
}

const struct bip_boot_ops bip_boot_pmi2 = {
	.name = "pmi2",
	.available = available,
	.detected = detected,
	.start = start,
	.allgather = allgather,
	.abort = pmi2_abort,
	.finish = finish,
};
