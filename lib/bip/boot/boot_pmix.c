/* SPDX-License-Identifier: MIT */
/*
 * boot_pmix.c - start-up through a PMIx server (boot.h): Slurm's
 * srun --mpi=pmix, PRRTE's prterun.
 *
 * The node is the PMIx rank, the node count PMIX_JOB_SIZE of the
 * namespace, the job id a hash of the namespace (unique per job step).
 * Hosts: each process puts its host name (Slurm's node name, else
 * PMIX_HOSTNAME) as "bip.host" and a fence that collects the data
 * gathers them; every all-gather of a driver is one more key ("bip.<k>",
 * k counting the all-gathers, which every process makes in the same order)
 * and one more fence.  Keys hold byte objects; what comes back is checked
 * for its type and size, as anything another process wrote.
 *
 * MPI_Abort goes to PMIx_Abort, which asks the server to end the whole
 * job (Slurm kills the step).  libpmix is loaded at run time: it brings
 * libevent, hwloc and munge, and a progress thread, which a program
 * started by bipload has no use for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "boot.h"
#include "oob.h"

static struct {
	int loaded;
	pmix_status_t (*init)(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
	pmix_status_t (*finalize)(const pmix_info_t info[], size_t ninfo);
	pmix_status_t (*get)(const pmix_proc_t *proc, const pmix_key_t key,
			     const pmix_info_t info[], size_t ninfo, pmix_value_t **val);
	pmix_status_t (*put)(pmix_scope_t scope, const pmix_key_t key, pmix_value_t *val);
	pmix_status_t (*commit)(void);
	pmix_status_t (*fence)(const pmix_proc_t procs[], size_t nprocs,
			       const pmix_info_t info[], size_t ninfo);
	pmix_status_t (*abort)(int status, const char msg[], pmix_proc_t procs[], size_t nprocs);
	const char *(*error_string)(pmix_status_t status);
	void (*value_destruct)(pmix_value_t *val);
} px;

static pmix_proc_t me;
static int nputs;       /* keys put so far: the next all-gather's number */
static double fence_timeout;

#define LIBPMIX "libpmix.so.2"

static int load(char *why, size_t len)
{
	void *h;

	if (px.loaded)
		return 0;
	h = dlopen(LIBPMIX, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, len, "cannot load %s: %s", LIBPMIX, dlerror());
		return -1;
	}
	px.init = (__typeof__(px.init))dlsym(h, "PMIx_Init");
	px.finalize = (__typeof__(px.finalize))dlsym(h, "PMIx_Finalize");
	px.get = (__typeof__(px.get))dlsym(h, "PMIx_Get");
	px.put = (__typeof__(px.put))dlsym(h, "PMIx_Put");
	px.commit = (__typeof__(px.commit))dlsym(h, "PMIx_Commit");
	px.fence = (__typeof__(px.fence))dlsym(h, "PMIx_Fence");
	px.abort = (__typeof__(px.abort))dlsym(h, "PMIx_Abort");
	px.error_string = (__typeof__(px.error_string))dlsym(h, "PMIx_Error_string");
	px.value_destruct = (__typeof__(px.value_destruct))dlsym(h, "PMIx_Value_destruct");
	if (!px.init || !px.finalize || !px.get || !px.put || !px.commit || !px.fence ||
	    !px.abort || !px.error_string || !px.value_destruct) {
		snprintf(why, len, "%s lacks a PMIx 4 function (PMIx_Init, _Get, _Put, _Commit, "
			 "_Fence, _Abort, _Error_string or _Value_destruct)", LIBPMIX);
		dlclose(h);
		return -1;
	}
	px.loaded = 1; /* stays loaded: its progress thread lives until exit */
	return 0;
}

static int available(char *why, size_t len)
{
	return load(why, len) == 0;
}

static int detected(void)
{
	const char *s = getenv("PMIX_RANK");

	return s && *s;
}

static void value_free(pmix_value_t *v)
{
	px.value_destruct(v);
	free(v);
}

static void proc_of(pmix_proc_t *p, pmix_rank_t rank)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->nspace, me.nspace, sizeof(p->nspace));
	p->rank = rank;
}

/* Put bytes under key and commit. */
static int put_bytes(const char *key, const void *data, size_t len, char *err, size_t errlen)
{
	pmix_value_t v;
	pmix_status_t rc;

	memset(&v, 0, sizeof(v));
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)data;
	v.data.bo.size = len;
	rc = px.put(PMIX_GLOBAL, key, &v);
	if (rc == PMIX_SUCCESS)
		rc = px.commit();
	if (rc != PMIX_SUCCESS) {
		snprintf(err, errlen, "pmix: putting %s: %s", key, px.error_string(rc));
		return -EIO;
	}
	return 0;
}

/* A fence of the whole namespace that collects what was put. */
static int fence(const char *what, char *err, size_t errlen)
{
	pmix_proc_t all;
	pmix_info_t info;
	pmix_status_t rc;
	char guard[400];

	proc_of(&all, PMIX_RANK_WILDCARD);
	memset(&info, 0, sizeof(info));
	snprintf(info.key, sizeof(info.key), "%s", PMIX_COLLECT_DATA);
	info.value.type = PMIX_BOOL;
	info.value.data.flag = true;
	snprintf(guard, sizeof(guard), "the PMIx fence of %s (rank %u of %s)", what,
		 (unsigned)me.rank, me.nspace);
	bip_boot_guard_start(fence_timeout, guard);
	rc = px.fence(&all, 1, &info, 1);
	bip_boot_guard_stop();
	if (rc != PMIX_SUCCESS) {
		snprintf(err, errlen, "pmix: the fence of %s failed: %s", what,
			 px.error_string(rc));
		return -EIO;
	}
	return 0;
}

/* Rank r's bytes under key: exactly len bytes, or an error. */
static int get_bytes(pmix_rank_t r, const char *key, void *out, size_t len, size_t *got,
		     char *err, size_t errlen)
{
	pmix_proc_t p;
	pmix_value_t *v = NULL;
	pmix_status_t rc;
	int ret = 0;

	proc_of(&p, r);
	rc = px.get(&p, key, NULL, 0, &v);
	if (rc != PMIX_SUCCESS || !v) {
		snprintf(err, errlen, "pmix: rank %u put no %s: %s", (unsigned)r, key,
			 px.error_string(rc));
		return -EPROTO;
	}
	if (v->type != PMIX_BYTE_OBJECT || (got ? v->data.bo.size > len : v->data.bo.size != len)) {
		snprintf(err, errlen, "pmix: rank %u's %s is not %s%zu bytes", (unsigned)r, key,
			 got ? "at most " : "", len);
		ret = -EPROTO;
	} else {
		memcpy(out, v->data.bo.bytes, v->data.bo.size);
		if (got)
			*got = v->data.bo.size;
	}
	value_free(v);
	return ret;
}

static int job_size(uint32_t *size, char *err, size_t errlen)
{
	pmix_proc_t all;
	pmix_value_t *v = NULL;
	pmix_status_t rc;

	proc_of(&all, PMIX_RANK_WILDCARD);
	rc = px.get(&all, PMIX_JOB_SIZE, NULL, 0, &v);
	if (rc != PMIX_SUCCESS || !v) {
		snprintf(err, errlen, "pmix: the size of job %s: %s", me.nspace,
			 px.error_string(rc));
		return -EPROTO;
	}
	if (v->type == PMIX_UINT32 && v->data.uint32 >= 1 && v->data.uint32 <= BIP_CONF_MAXNODES &&
	    me.rank < v->data.uint32) {
		*size = v->data.uint32;
		value_free(v);
		return 0;
	}
	snprintf(err, errlen, "pmix: job %s has no usable size for rank %u (BIP takes 1 .. %d "
		 "processes)", me.nspace, (unsigned)me.rank, BIP_CONF_MAXNODES);
	value_free(v);
	return -EPROTO;
}

/* This host's name: Slurm's name of its node, else the server's name of
 * the host (Slurm's is the kernel's, which namespaces share), else the
 * usual sources. */
static void my_host(char *out, size_t len)
{
	const char *slurm = getenv("SLURMD_NODENAME");
	pmix_value_t *v = NULL;

	if (slurm && *slurm && strlen(slurm) < len) {
		snprintf(out, len, "%s", slurm);
		return;
	}
	if (px.get(&me, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v &&
	    v->type == PMIX_STRING && v->data.string && *v->data.string &&
	    strlen(v->data.string) < len) {
		snprintf(out, len, "%s", v->data.string);
	} else {
		bip_boot_hostname(out, len);
	}
	if (v)
		value_free(v);
}

static int start(struct bip_boot *b, char *err, size_t errlen)
{
	char host[BIP_CONF_HOSTLEN], *hosts;
	pmix_status_t prc;
	uint32_t size, r;
	size_t got;
	int rc;

	if (load(err, errlen) < 0)
		return -ENODEV;
	prc = px.init(&me, NULL, 0);
	if (prc != PMIX_SUCCESS) {
		snprintf(err, errlen, "pmix: PMIx_Init: %s (PMIX_RANK=%s; is the PMIx server of "
			 "the launcher running?)", px.error_string(prc),
			 getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "unset");
		return -EIO;
	}
	rc = job_size(&size, err, errlen);
	if (rc < 0)
		goto fail;
	b->numnodes = (int)size;
	b->mynode = (int)me.rank;
	b->launched = 1;
	rc = bip_boot_opts(b, err, errlen);
	if (rc < 0)
		goto fail;
	rc = bip_boot_timeout(b->numnodes, &fence_timeout, err, errlen);
	if (rc < 0)
		goto fail;
	bip_boot_jobid(b->jobid, sizeof(b->jobid), 'x', me.nspace);
	my_host(host, sizeof(host));
	rc = put_bytes("bip.host", host, strlen(host) + 1, err, errlen);
	if (rc < 0)
		goto fail;
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
		char *h = hosts + (size_t)r * BIP_CONF_HOSTLEN;

		rc = get_bytes(r, "bip.host", h, BIP_CONF_HOSTLEN, &got, err, errlen);
		if (rc == 0 && (got == 0 || h[got - 1] != '\0')) {
			snprintf(err, errlen, "pmix: rank %u's host name is not a string",
				 (unsigned)r);
			rc = -EPROTO;
		}
	}
	if (rc == 0)
		rc = bip_boot_conf(b, hosts, BIP_CONF_HOSTLEN, err, errlen);
	free(hosts);
	if (rc < 0)
		goto fail;
	return 0;

fail:
	px.finalize(NULL, 0);
	return rc;
}

static int allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		     char *err, size_t errlen)
{
	char key[32], what[64];
	int i, rc;

	snprintf(key, sizeof(key), "bip.%d", nputs++);
	snprintf(what, sizeof(what), "the %s addresses", job->what);
	rc = put_bytes(key, blob, len, err, errlen);
	if (rc == 0)
		rc = fence(what, err, errlen);
	for (i = 0; i < job->numnodes && rc == 0; i++)
		rc = get_bytes((pmix_rank_t)i, key, (char *)all + (size_t)i * len, len, NULL, err,
			       errlen);
	return rc;
}

static void pmix_abort(int code, const char *msg)
{
	/* NULL procs: every process of this namespace. */
	px.abort(code, msg, NULL, 0);
}

static void finish(void)
{
	px.finalize(NULL, 0);
	nputs = 0;
}

const struct bip_boot_ops bip_boot_pmix = {
	.name = "pmix",
	.available = available,
	.detected = detected,
	.start = start,
	.allgather = allgather,
	.abort = pmix_abort,
	.finish = finish,
};
