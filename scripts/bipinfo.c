/* SPDX-License-Identifier: MIT */
/*
 * bipinfo - what this BIP is and what it would do here: version and build,
 * the drivers and the start-up back ends compiled in and whether each can
 * run on this machine (and which one a program started now would use), every
 * variable BIP reads with its default and current value, and the
 * configuration a program started now would use.
 *
 *   bipinfo [--parsable]
 *   bipinfo --job
 *
 * With --job, run as a node of a job (bipload -sz 4 bipinfo --job, or srun),
 * it starts BIP and prints the line of bipload --report-bindings: its node,
 * host, pid, drivers and CPUs.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "boot.h"
#include "conf.h"
#include "core.h"
#include "env.h"

#ifndef BIP_BUILD_INFO
#define BIP_BUILD_INFO "unknown"
#endif

static int parsable;

/* One fact: "key=value" for scripts, "key: value" for people. */
static void fact(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fact(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf(parsable ? "%s=" : "%-22s ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void show_drivers(void)
{
	char why[256], key[64];
	size_t i;

	if (!parsable)
		printf("\nDrivers compiled in:\n");
	for (i = 0; i < bip_ndrivers; i++) {
		const struct bip_nic_ops *ops = bip_drivers[i];
		int ok;

		why[0] = '\0';
		ok = ops->available(why, sizeof(why));
		snprintf(key, sizeof(key), "driver.%s", ops->name);
		if (ok && why[0])
			fact(key, "available (%s)", why);
		else if (ok)
			fact(key, "available");
		else
			fact(key, "unavailable: %s", why);
	}
}

static void show_boots(void)
{
	const struct bip_boot_ops *now;
	char why[256], key[64], err[512] = "";
	size_t i;

	if (!parsable)
		printf("\nStart-up back ends compiled in:\n");
	for (i = 0; i < bip_nboots; i++) {
		const struct bip_boot_ops *ops = bip_boots[i];

		why[0] = '\0';
		snprintf(key, sizeof(key), "bootstrap.%s", ops->name);
		if (ops->available(why, sizeof(why)))
			fact(key, "available%s", ops->detected() ? " (its launcher started this "
				     "process)" : "");
		else
			fact(key, "unavailable: %s", why);
	}
	now = bip_boot_choose(err, sizeof(err));
	if (now)
		fact("bootstrap", "%s", now->name);
	else
		fact("bootstrap", "none: %s", err);
}

static void show_env(void)
{
	char key[64];
	size_t i;

	if (!parsable)
		printf("\nVariables (default; value now):\n");
	for (i = 0; i < bip_nenv_vars; i++) {
		const struct bip_env_var *v = &bip_env_vars[i];
		const char *now = getenv(v->name);

		if (now && !strcmp(v->name, "BIP_SECRET"))
			now = "(set, not shown)"; /* a secret stays one */

		if (parsable) {
			snprintf(key, sizeof(key), "env.%s", v->name);
			fact(key, "%s", now ? now : "");
			snprintf(key, sizeof(key), "default.%s", v->name);
			fact(key, "%s", v->def);
		} else {
			printf("  %-17s %s; %s%s%s\n    %s\n", v->name, *v->def ? v->def : "(empty)",
			       now ? "set to \"" : "unset", now ? now : "", now ? "\"" : "", v->what);
		}
	}
}

/* The clusters of the configuration, its gateways, and the way between
 * every two clusters (bipconf(5), "Clusters"). */
static void show_clusters(const struct bip_conf *conf)
{
	char key[96], buf[2048];
	int a, b;

	if (!conf->nclusters) {
		fact("conf.clusters", "none: one network");
		return;
	}
	fact("conf.clusters", "%d", conf->nclusters);
	for (a = 0; a < conf->nclusters; a++) {
		bip_conf_cluster_hosts(conf, a, buf, sizeof(buf));
		snprintf(key, sizeof(key), "conf.cluster.%s", conf->clusters[a].name);
		fact(key, "driver %s, hosts %s", conf->clusters[a].driver,
		     buf[0] ? buf : "(none among the nodes used)");
	}
	for (a = 0; a < conf->ngateways; a++) {
		const struct bip_conf_gateway *g = &conf->gateways[a];

		snprintf(key, sizeof(key), "conf.gateway.%d", a);
		fact(key, "%s:%s - %s:%s over %s", conf->clusters[g->cluster[0]].name, g->host[0],
		     conf->clusters[g->cluster[1]].name, g->host[1], g->driver);
	}
	/* The relays: a job's file has them; bipload adds them to a user's. */
	if (conf->nrelays)
		fact("conf.relays", "%d: nodes %d to %d, on the gateway hosts", conf->nrelays,
		     conf->n - conf->nrelays, conf->n - 1);
	else if (conf->ngateways)
		fact("conf.relays", "none yet: bipload starts one on each gateway host (bipgw)");
	for (a = 0; a < conf->nclusters; a++)
		for (b = 0; b < conf->nclusters; b++) {
			if (a == b)
				continue;
			bip_conf_cluster_chain(conf, a, b, buf, sizeof(buf));
			snprintf(key, sizeof(key), "conf.route.%s.%s", conf->clusters[a].name,
				 conf->clusters[b].name);
			fact(key, "%s", buf);
		}
}

/* The configuration a program started here now would use (as bip_init). */
static int show_conf(void)
{
	char path[PATH_MAX], err[512], key[64];
	const char *opts_env = getenv(BIP_ENV_OPTS);
	const char *conf_env = getenv(BIP_ENV_CONF);
	struct bip_opts opts = { 0, 0 };
	struct bip_conf *conf = NULL;
	int i, rc, have_path;

	if (!parsable)
		printf("\nConfiguration:\n");
	if (opts_env && bip_opts_parse(opts_env, &opts, err, sizeof(err)) < 0) {
		fact("conf.error", "BIP_OPTS=%s: %s", opts_env, err);
		return 1;
	}
	have_path = bip_conf_default_path(path, sizeof(path)) == 0;
	if ((conf_env && *conf_env) || (have_path && access(path, F_OK) == 0)) {
		fact("conf.file", "%s", path);
		rc = bip_conf_parse_file(path, &conf, err, sizeof(err));
		if (rc < 0) {
			fact("conf.error", "%s", err);
			return 1;
		}
	} else {
		fact("conf.file", "none: %d node%s on this host (BIP_OPTS n<k>)",
		     opts.nodes ? opts.nodes : 1, opts.nodes > 1 ? "s" : "");
		if (bip_conf_local(opts.nodes ? opts.nodes : 1, &conf) < 0)
			return 1;
	}
	if (opts.nodes && opts.nodes <= conf->n && bip_conf_truncate(conf, opts.nodes) != 0)
		return 1;
	fact("conf.nodes", "%d", conf->n);
	/* What the library keeps of the routes (conf.h): nothing when all are
	 * direct, the file's n x n table of each rail otherwise. */
	if (!conf->routes)
		fact("conf.routes", "all direct (256) on %d rail%s, none stored", conf->nrails,
		     conf->nrails == 1 ? "" : "s");
	else
		fact("conf.routes", "through switches on %d rail%s, %d x %d routes stored",
		     conf->nrails, conf->nrails == 1 ? "" : "s", conf->n, conf->n);
	for (i = 0; i < conf->n; i++) {
		snprintf(key, sizeof(key), "conf.node.%d", i);
		fact(key, "%s unit %d%s", conf->nodes[i].host, conf->nodes[i].unit,
		     bip_host_is_local(conf->nodes[i].host) ? " (this host)" : "");
	}
	show_clusters(conf);
	bip_conf_free(conf);
	return 0;
}

/* --job: where this node of a job runs. */
static int show_job(void)
{
	const struct bip_boot_ops *ops;
	char err[512] = "", line[1024];

	ops = bip_boot_choose(err, sizeof(err));
	if (!ops || !ops->detected()) {
		fprintf(stderr, "bipinfo: --job: not started by a launcher (run it as bipload -sz N "
			"bipinfo --job, or with srun)%s%s\n", err[0] ? ": " : "", err);
		return 1;
	}
	bip_init();
	bip_where(line, sizeof(line));
	printf("%s\n", line);
	bip_wait_desc(line, sizeof(line));
	printf("node %d waits: %s\n", bip_mynode, line);
	fflush(stdout);
	return bip_finalize() < 0;
}

#define USAGE "usage: bipinfo [--parsable]\n       bipinfo --job\n"

int main(int argc, char **argv)
{
	int i, job = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--parsable")) {
			parsable = 1;
		} else if (!strcmp(argv[i], "--job")) {
			job = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf(USAGE);
			return 0;
		} else {
			fprintf(stderr, "bipinfo: unknown option %s\n" USAGE, argv[i]);
			return 2;
		}
	}
	if (job && parsable) {
		fprintf(stderr, "bipinfo: --job and --parsable exclude each other\n" USAGE);
		return 2;
	}
	if (job)
		return show_job();
	fact("version", "%d.%d", BIP_VERSION_MAJOR, BIP_VERSION_MINOR);
	fact("build", "%s", BIP_BUILD_INFO);
	fact("ntags", "%d (+%d reserved)", NTAGS, BIP_RESERVED_TAGS);
	fact("bipsmallsize", "%d words", BIPSMALLSIZE);
	show_drivers();
	show_boots();
	show_env();
	return show_conf();
}
