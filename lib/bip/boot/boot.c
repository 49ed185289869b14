/* SPDX-License-Identifier: MIT */
/*
 * boot.c - the choice of a start-up back end and what they share (boot.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "oob.h"

extern const struct bip_boot_ops bip_boot_bipload;
#ifdef BIP_HAVE_PMIX
extern const struct bip_boot_ops bip_boot_pmix;
#endif
#ifdef BIP_HAVE_PMI2
extern const struct bip_boot_ops bip_boot_pmi2;
#endif

const struct bip_boot_ops *const bip_boots[] = {
	&bip_boot_bipload,
#ifdef BIP_HAVE_PMIX
	&bip_boot_pmix,
#endif
#ifdef BIP_HAVE_PMI2
	&bip_boot_pmi2,
#endif
};
const size_t bip_nboots = sizeof(bip_boots) / sizeof(bip_boots[0]);

/* Every back end BIP knows, compiled in or not, and what names it. */
static const struct {
	const char *name;
	const char *env[2];
} known[] = {
	{ "bipload", { "BIP_NODE", NULL } },
	{ "pmix", { "PMIX_RANK", NULL } },
	{ "pmi2", { "PMI_FD", "PMI_RANK" } },
};

static const struct bip_boot_ops *started;

static const struct bip_boot_ops *find(const char *name)
{
	size_t i;

	for (i = 0; i < bip_nboots; i++)
		if (!strcmp(bip_boots[i]->name, name))
			return bip_boots[i];
	return NULL;
}

static const struct bip_boot_ops *usable(const char *name, const char *because, char *err,
					 size_t errlen)
{
	const struct bip_boot_ops *ops = find(name);
	char why[256] = "";

	if (!ops) {
		snprintf(err, errlen, "%s: this BIP was built without the %s start-up back end "
			 "(bipinfo lists those compiled in)", because, name);
		return NULL;
	}
	if (!ops->available(why, sizeof(why))) {
		snprintf(err, errlen, "%s: the %s start-up back end cannot run here: %s", because,
			 name, why);
		return NULL;
	}
	return ops;
}

/* srun started this process as one of several tasks, and gave it no PMI. */
static int srun_without_pmi(long *ntasks)
{
	const char *step = getenv("SLURM_STEP_ID");
	const char *n = getenv("SLURM_STEP_NUM_TASKS");

	if (!step || !*step || !n || !*n)
		return 0;
	*ntasks = strtol(n, NULL, 10);
	return *ntasks > 1;
}

const struct bip_boot_ops *bip_boot_choose(char *err, size_t errlen)
{
	const char *want = getenv("BIP_BOOTSTRAP");
	const struct bip_boot_ops *ops;
	char because[128];
	size_t i, k;
	long ntasks;

	if (want && *want) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(known[i].name, want))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			snprintf(err, errlen, "BIP_BOOTSTRAP=%s: expected bipload, pmix or pmi2",
				 want);
			return NULL;
		}
		snprintf(because, sizeof(because), "BIP_BOOTSTRAP=%s", want);
		ops = usable(want, because, err, errlen);
		/* A PMI library without its server may start a singleton: every
		 * process would be a job of its own. */
		if (ops && strcmp(want, "bipload") && !ops->detected()) {
			snprintf(err, errlen, "BIP_BOOTSTRAP=%s: this process was not started by a "
				 "%s launcher (%s%s%s is not set)", want, want, known[i].env[0],
				 known[i].env[1] ? " or " : "", known[i].env[1] ? known[i].env[1] : "");
			return NULL;
		}
		return ops;
	}
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		for (k = 0; k < 2 && known[i].env[k]; k++) {
			const char *v = getenv(known[i].env[k]);

			if (v && *v) {
				snprintf(because, sizeof(because), "%s is set", known[i].env[k]);
				return usable(known[i].name, because, err, errlen);
			}
		}
	}
	if (srun_without_pmi(&ntasks)) {
		snprintf(err, errlen, "srun started this process as one of %ld tasks without a "
			 "PMI (srun --mpi=none): run it with srun --mpi=pmix or --mpi=pmi2, or "
			 "set MpiDefault=pmix in slurm.conf (bip_slurm(7))", ntasks);
		return NULL;
	}
	return find("bipload"); /* by hand */
}

int bip_boot_start(struct bip_boot *b, char *err, size_t errlen)
{
	const struct bip_boot_ops *ops = bip_boot_choose(err, errlen);
	int rc;

	memset(b, 0, sizeof(*b));
	if (!ops)
		return -EINVAL;
	rc = ops->start(b, err, errlen);
	if (rc < 0) {
		bip_host_set_self(NULL);
		return rc;
	}
	started = ops;
	b->can_abort = ops->abort != NULL;
	if (!b->known) {
		/* A back end whose jobs do not grow. */
		b->known = b->group_size = b->started = b->numnodes;
		b->group_first = 0;
	}
	return 0;
}

const char *bip_boot_name(void)
{
	return started ? started->name : "";
}

int bip_boot_allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		       char *err, size_t errlen)
{
	if (!started) {
		snprintf(err, errlen, "no start-up back end was started");
		return -EINVAL;
	}
	return started->allgather(job, blob, len, all, err, errlen);
}

void bip_boot_abort(int code, const char *msg)
{
	fflush(stdout);
	if (started && started->abort)
		started->abort(code, msg);
	_exit(code);
}

void bip_boot_finish(void)
{
	if (started && started->finish)
		started->finish();
	started = NULL;
	bip_host_set_self(NULL);
}

void bip_boot_jobid(char *out, size_t len, char prefix, const char *launcher_id)
{
	const char *cluster = getenv("SLURM_CLUSTER_NAME");
	uint64_t h = 1469598103934665603ull;
	const char *c;

	for (c = launcher_id; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	/* Slurm numbers jobs per cluster: two clusters on one machine (a test,
	 * or a cluster restarted with a fresh state) may both run job 1. */
	for (c = cluster ? cluster : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	snprintf(out, len, "%c%016llx", prefix, (unsigned long long)h);
}

int bip_boot_conf(struct bip_boot *b, const char *hosts, size_t stride, char *err,
		  size_t errlen)
{
	struct bip_conf *conf;
	int i, rc;

	rc = bip_conf_local(b->numnodes, &conf);
	if (rc < 0) {
		snprintf(err, errlen, "cannot describe %d nodes: %s", b->numnodes, strerror(-rc));
		return rc;
	}
	for (i = 0; i < b->numnodes; i++) {
		const char *h = hosts + (size_t)i * stride;

		if (!*h || strlen(h) >= BIP_CONF_HOSTLEN) {
			snprintf(err, errlen, "node %d gave %s host name", i,
				 *h ? "too long a" : "an empty");
			bip_conf_free(conf);
			return -EPROTO;
		}
		snprintf(conf->nodes[i].host, sizeof(conf->nodes[i].host), "%s", h);
	}
	b->conf = conf;
	bip_host_set_self(conf->nodes[b->mynode].host);
	return 0;
}

void bip_boot_hostname(char *out, size_t len)
{
	const char *s = getenv("SLURMD_NODENAME");
	struct utsname u;

	if (!s || !*s)
		s = getenv(BIP_ENV_HOST);
	if (s && *s) {
		snprintf(out, len, "%s", s);
		return;
	}
	if (uname(&u) == 0)
		snprintf(out, len, "%s", u.nodename);
	else
		snprintf(out, len, "localhost");
}

int bip_boot_opts(struct bip_boot *b, char *err, size_t errlen)
{
	const char *s = getenv(BIP_ENV_OPTS);
	struct bip_opts opts;
	char perr[256];

	if (!s || !*s)
		return 0;
	if (bip_opts_parse(s, &opts, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "BIP_OPTS=%s: %s", s, perr);
		return -EINVAL;
	}
	if (opts.nodes > 0 && opts.nodes != b->numnodes) {
		snprintf(err, errlen, "BIP_OPTS asks for %d nodes but the launcher started %d "
			 "processes", opts.nodes, b->numnodes);
		return -EINVAL;
	}
	b->quiet = opts.quiet;
	return 0;
}

int bip_boot_timeout(int numnodes, double *out, char *err, size_t errlen)
{
	const char *s = getenv("BIP_INIT_TIMEOUT");
	char *end;
	double v;

	*out = 10.0 + 2.0 * numnodes;
	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (*end || !(v > 0)) {
		snprintf(err, errlen, "BIP_INIT_TIMEOUT=%s: expected a positive number of seconds",
			 s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/*
 * The guard: a thread that sleeps until the call it guards returns or the
 * time is up.  A launcher's library offers no time-out of its own for a
 * fence (PMI-2 has none; PMIx leaves it to the server, and Slurm's ignores
 * it), and a process of the job that died before its fence leaves the
 * others in theirs for ever.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int on;
	double secs;
	char what[400];
} guard = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *guard_main(void *arg)
{
	struct timespec deadline;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)guard.secs;
	deadline.tv_nsec += (long)((guard.secs - (double)(time_t)guard.secs) * 1e9);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&guard.lock);
	while (guard.on) {
		if (pthread_cond_timedwait(&guard.cond, &guard.lock, &deadline) == ETIMEDOUT &&
		    guard.on) {
			fprintf(stderr, "bip: bip_init: %s did not complete in %.0f s "
				"(BIP_INIT_TIMEOUT): a process of the job has not reached "
				"bip_init (it died, or was never started)\n", guard.what,
				guard.secs);
			fflush(stderr);
			_exit(EXIT_FAILURE);
		}
	}
	pthread_mutex_unlock(&guard.lock);
	return NULL;
}

void bip_boot_guard_start(double secs, const char *what)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&guard.cond, &attr);
	pthread_condattr_destroy(&attr);
	guard.on = 1;
	guard.secs = secs;
	snprintf(guard.what, sizeof(guard.what), "%s", what);
	if (pthread_create(&guard.thread, NULL, guard_main, NULL) != 0)
		guard.on = 0; /* unguarded: the call may wait for ever, as without us */
}

void bip_boot_guard_stop(void)
{
	int joined;

	pthread_mutex_lock(&guard.lock);
	joined = guard.on;
	guard.on = 0;
	pthread_cond_signal(&guard.cond);
	pthread_mutex_unlock(&guard.lock);
	if (joined) {
		pthread_join(guard.thread, NULL);
		pthread_cond_destroy(&guard.cond);
	}
}

void bip_boot_hex(char *out, const void *blob, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = blob;
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int bip_boot_unhex(void *blob, const char *hex, size_t len)
{
	unsigned char *p = blob;
	size_t i;

	if (strlen(hex) != 2 * len)
		return -EPROTO;
	for (i = 0; i < len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EPROTO;
		p[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
