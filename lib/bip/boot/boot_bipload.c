/* SPDX-License-Identifier: MIT */
/*
 * boot_bipload.c - start-up under bipload, or by hand (boot.h).
 *
 * The configuration is $BIPCONF, else $HOME/.bip/bipconf, else BIP_OPTS's
 * n<k> nodes on this host; BIP_OPTS's n<k> keeps its first k nodes.  This
 * process's node is BIP_NODE (set by bipload), else the only node of the
 * configuration on this host.  The job id is BIP_JOBID (set by bipload),
 * else one derived from the configuration, so that processes started by
 * hand on each host agree on it.  The network drivers exchange their
 * addresses through the job's own all-gather (oob.h: up and down a tree, the
 * nodes of a host under its first node, the hosts' first nodes under node 0),
 * which needs the job's secret (BIP_SECRET).
 *
 * A job that may grow (bip_grow(3)): bipload sets BIP_UNIVERSE, the nodes
 * the job may reach, and BIP_GROW_HOST, its own host, where the nodes that
 * join run unless asked elsewhere; the configuration then gets nodes up to
 * BIP_UNIVERSE - 1 on that host.  A process that joined has
 * BIP_GROUP=FIRST:COUNT, the nodes started with it, and its own entry
 * names its host (BIP_HOST).  The others' entries for nodes that joined
 * keep the default host until they ask bipload (nic.c's
 * bip_nic_learn_host): the core does before it reaches such a node, and
 * a node that joined does for its siblings before it opens its drivers.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "oob.h"

/* Read BIP_OPTS and the configuration. */
static int load_conf(struct bip_boot *b, struct bip_opts *opts, char *err, size_t errlen)
{
	const char *opts_env = getenv(BIP_ENV_OPTS);
	const char *conf_env = getenv(BIP_ENV_CONF);
	char path[4096], perr[400];
	struct bip_conf *conf = NULL;
	int rc;

	memset(opts, 0, sizeof(*opts));
	if (opts_env && bip_opts_parse(opts_env, opts, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "BIP_OPTS=%s: %s", opts_env, perr);
		return -EINVAL;
	}
	rc = bip_conf_default_path(path, sizeof(path));
	if (conf_env && *conf_env) {
		rc = bip_conf_parse_file(conf_env, &conf, perr, sizeof(perr));
	} else if (rc == 0 && access(path, F_OK) == 0) {
		rc = bip_conf_parse_file(path, &conf, perr, sizeof(perr));
	} else {
		/* No configuration: the embedded default, every node on this host. */
		rc = bip_conf_local(opts->nodes > 0 ? opts->nodes : 1, &conf);
		if (rc < 0)
			snprintf(perr, sizeof(perr), "cannot describe this host: %s", strerror(-rc));
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", perr);
		return rc;
	}
	if (opts->nodes > 0) {
		if (opts->nodes > conf->n) {
			snprintf(err, errlen, "BIP_OPTS asks for %d nodes but the configuration "
				 "has %d", opts->nodes, conf->n);
			bip_conf_free(conf);
			return -EINVAL;
		}
		rc = bip_conf_truncate(conf, opts->nodes);
		if (rc < 0) {
			snprintf(err, errlen, "the configuration's first %d nodes: %s", opts->nodes,
				 rc == -EHOSTUNREACH ? "clusters that no chain of gateways joins" :
						       strerror(-rc));
			bip_conf_free(conf);
			return rc;
		}
	}
	b->conf = conf;
	return 0;
}

/* This process's node: BIP_NODE, or the only node on this host. */
static int find_mynode(const struct bip_conf *conf, char *err, size_t errlen)
{
	const char *s = getenv(BIP_ENV_NODE);
	int i, found = -1, count = 0;

	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (*end || v < 0 || v >= conf->n) {
			snprintf(err, errlen, "BIP_NODE=%s: expected a node number in 0 .. %d", s,
				 conf->n - 1);
			return -EINVAL;
		}
		return (int)v;
	}
	for (i = 0; i < conf->n; i++) {
		if (bip_host_is_local(conf->nodes[i].host)) {
			if (found < 0)
				found = i;
			count++;
		}
	}
	if (count == 1)
		return found;
	if (count == 0)
		snprintf(err, errlen, "this host is not in the configuration (%d nodes)", conf->n);
	else
		snprintf(err, errlen, "this host holds %d nodes of the configuration: start "
			 "the program with bipload, or set BIP_NODE", count);
	return -EINVAL;
}

/* The job id: BIP_JOBID, or one derived from the user and the configuration
 * (processes started by hand share it). */
static int find_jobid(const struct bip_conf *conf, char *out, size_t len, char *err,
		      size_t errlen)
{
	const char *s = getenv(BIP_ENV_JOBID);
	uint64_t h = 1469598103934665603ull;
	int i;

	if (s && *s) {
		if (!bip_jobid_valid(s)) {
			snprintf(err, errlen, "BIP_JOBID=%s: expected 1 to %d letters and digits", s,
				 BIP_JOBID_MAX);
			return -EINVAL;
		}
		snprintf(out, len, "%s", s);
		return 0;
	}
	for (i = 0; i < conf->n; i++) {
		const char *c;

		for (c = conf->nodes[i].host; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
		h = (h ^ (unsigned)i) * 1099511628211ull;
	}
	snprintf(out, len, "m%016llx", (unsigned long long)h);
	return 0;
}


/* A positive number in s (at most max), or -1. */
static long env_count(const char *s, long max)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > max ? -1 : v;
}

/* Room to grow: BIP_UNIVERSE, BIP_GROW_HOST and BIP_GROUP (see above). */
static int load_growth(struct bip_boot *b, char *err, size_t errlen)
{
	const char *host = getenv("BIP_GROW_HOST"), *group = getenv("BIP_GROUP");
	long universe = env_count(getenv("BIP_UNIVERSE"), 1 << 20), first, count;
	int n0 = b->conf->n, rc;

	b->known = n0;
	b->started = n0;
	b->group_first = 0;
	b->group_size = n0;
	if (universe > n0 && host && *host) {
		rc = bip_conf_grow(b->conf, (int)universe, host);
		if (rc == -ENOTSUP)
			return 0; /* routes: the job keeps its size */
		if (rc < 0) {
			snprintf(err, errlen, "BIP_UNIVERSE=%ld, BIP_GROW_HOST=%s: %s", universe,
				 host, strerror(-rc));
			return rc;
		}
		b->grows = 1;
	}
	if (group && *group) {
		char *colon = strchr(group, ':'), head[32];

		if (!colon || (size_t)(colon - group) >= sizeof(head))
			goto bad_group;
		memcpy(head, group, (size_t)(colon - group));
		head[colon - group] = '\0';
		first = env_count(head, 1 << 20);
		count = env_count(colon + 1, 1 << 20);
		if (first < n0 || count < 1 || first + count > b->conf->n)
			goto bad_group;
		b->group_first = (int)first;
		b->group_size = (int)count;
		b->known = (int)(first + count);
	}
	return 0;

bad_group:
	snprintf(err, errlen, "BIP_GROUP=%s: expected FIRST:COUNT, nodes that joined the "
		 "job (%d to %d)", group, n0, b->conf->n - 1);
	return -EINVAL;
}

static int available(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 1;
}

static int detected(void)
{
	const char *s = getenv(BIP_ENV_NODE);

	return s && *s;
}

static int start(struct bip_boot *b, char *err, size_t errlen)
{
	struct bip_opts opts;
	int rc;

	rc = load_conf(b, &opts, err, errlen);
	if (rc < 0)
		return rc;
	b->quiet = opts.quiet;
	b->launched = detected();
	rc = load_growth(b, err, errlen);
	b->numnodes = b->conf->n;
	if (rc >= 0)
		rc = find_mynode(b->conf, err, errlen);
	if (rc >= 0 && rc >= b->known) {
		snprintf(err, errlen, "BIP_NODE=%d: not a node of this job (%d nodes)", rc,
			 b->known);
		rc = -EINVAL;
	}
	if (rc >= 0 && b->group_first && rc < b->group_first) {
		snprintf(err, errlen, "BIP_NODE=%d is not in its BIP_GROUP (%d to %d)", rc,
			 b->group_first, b->group_first + b->group_size - 1);
		rc = -EINVAL;
	}
	if (rc >= 0) {
		const char *host = getenv(BIP_ENV_HOST);

		b->mynode = rc;
		/* A node that joined on another host than BIP_GROW_HOST: its
		 * own entry names its host (the others' keep the default). */
		if (b->grows && rc >= b->started && host && *host &&
		    strlen(host) < sizeof(b->conf->nodes[rc].host))
			bip_conf_set_host(b->conf, rc, host);
		rc = find_jobid(b->conf, b->jobid, sizeof(b->jobid), err, errlen);
	}
	if (rc < 0) {
		bip_conf_free(b->conf);
		b->conf = NULL;
		return rc;
	}
	return 0;
}

/* No abort: bipload stops the other processes when one exits failing. */
const struct bip_boot_ops bip_boot_bipload = {
	.name = "bipload",
	.available = available,
	.detected = detected,
	.start = start,
	.allgather = bip_oob_allgather,
};
