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
 *   bipinfo --mpit [--parsable]
 *
 * With --job, run as a node of a job (bipload -sz 4 bipinfo --job, or srun),
 * it starts BIP and prints the line of bipload --report-bindings: its node,
 * host, pid, drivers and CPUs.
 *
 * With --mpit it lists what the MPI shim's tools information interface
 * (MPI_T, mpi_shim(7)) offers: the control variables with their type,
 * scope, verbosity, category, value now and description, the performance
 * variables with their class, type, verbosity, category, flags and
 * description, and the categories.  It asks the shim itself, as a tool
 * would: MPI_T_init_thread, which needs no MPI_Init and no job.  bipinfo
 * carries BIP's core inside it (linked statically, to ask the drivers
 * themselves), and the shim needs libbip.so: linked with both, the process
 * would hold two BIPs, the shim's calls bound to either copy.  So the shim
 * is loaded only for --mpit, at run time (dlopen, RTLD_LOCAL), from the
 * library directory of this build or installation (the run path): it and
 * its libbip.so then form a world of their own, which the core inside
 * bipinfo does not see (an executable exports none of its symbols to a
 * library loaded so), and the other options do not depend on the shim.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "mpi.h"
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


/* --- bipinfo --mpit: the shim's MPI_T, loaded at run time (above) --- */

#define MPIT_LIB "libmpi_shim.so.0"

static struct {
	void *lib;
	__typeof__(PMPI_T_init_thread) *init_thread;
	__typeof__(PMPI_T_finalize) *finalize;
	__typeof__(PMPI_T_cvar_get_num) *cvar_get_num;
	__typeof__(PMPI_T_cvar_get_info) *cvar_get_info;
	__typeof__(PMPI_T_cvar_handle_alloc) *cvar_handle_alloc;
	__typeof__(PMPI_T_cvar_handle_free) *cvar_handle_free;
	__typeof__(PMPI_T_cvar_read) *cvar_read;
	__typeof__(PMPI_T_pvar_get_num) *pvar_get_num;
	__typeof__(PMPI_T_pvar_get_info) *pvar_get_info;
	__typeof__(PMPI_T_category_get_num) *category_get_num;
	__typeof__(PMPI_T_category_get_info) *category_get_info;
	__typeof__(PMPI_T_category_get_cvars) *category_get_cvars;
	__typeof__(PMPI_T_category_get_pvars) *category_get_pvars;
	__typeof__(PMPI_T_category_get_categories) *category_get_categories;
	int ncat;
	int *cat_of_cvar, *cat_of_pvar; /* each variable's category */
	char (*cat_name)[64];
} mt;

static int mpit_sym(void **fn, const char *name)
{
	*fn = dlsym(mt.lib, name);
	if (!*fn)
		fprintf(stderr, "bipinfo: %s has no %s\n", MPIT_LIB, name);
	return *fn ? 0 : -1;
}

static int mpit_load(void)
{
	struct {
		void **fn;
		const char *name;
	} syms[] = {
		{ (void **)&mt.init_thread, "PMPI_T_init_thread" },
		{ (void **)&mt.finalize, "PMPI_T_finalize" },
		{ (void **)&mt.cvar_get_num, "PMPI_T_cvar_get_num" },
		{ (void **)&mt.cvar_get_info, "PMPI_T_cvar_get_info" },
		{ (void **)&mt.cvar_handle_alloc, "PMPI_T_cvar_handle_alloc" },
		{ (void **)&mt.cvar_handle_free, "PMPI_T_cvar_handle_free" },
		{ (void **)&mt.cvar_read, "PMPI_T_cvar_read" },
		{ (void **)&mt.pvar_get_num, "PMPI_T_pvar_get_num" },
		{ (void **)&mt.pvar_get_info, "PMPI_T_pvar_get_info" },
		{ (void **)&mt.category_get_num, "PMPI_T_category_get_num" },
		{ (void **)&mt.category_get_info, "PMPI_T_category_get_info" },
		{ (void **)&mt.category_get_cvars, "PMPI_T_category_get_cvars" },
		{ (void **)&mt.category_get_pvars, "PMPI_T_category_get_pvars" },
		{ (void **)&mt.category_get_categories, "PMPI_T_category_get_categories" },
	};
	size_t i;

	mt.lib = dlopen(MPIT_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!mt.lib) {
		fprintf(stderr, "bipinfo: --mpit needs the MPI shim: %s\n", dlerror());
		return -1;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (mpit_sym(syms[i].fn, syms[i].name) < 0)
			return -1;
	return 0;
}

/* The name of a datatype the variables use: the shim's predefined objects. */
static const char *mpit_type(MPI_Datatype t)
{
	static const char *const names[][2] = {
		{ "mpi_shim_type_char", "MPI_CHAR" },
		{ "mpi_shim_type_int", "MPI_INT" },
		{ "mpi_shim_type_unsigned", "MPI_UNSIGNED" },
		{ "mpi_shim_type_unsigned_long", "MPI_UNSIGNED_LONG" },
		{ "mpi_shim_type_unsigned_long_long", "MPI_UNSIGNED_LONG_LONG" },
		{ "mpi_shim_type_double", "MPI_DOUBLE" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((void *)t == dlsym(mt.lib, names[i][0]))
			return names[i][1];
	return "(other)";
}

static const char *mpit_scope(int scope)
{
	static const char *const names[] = { "constant", "readonly", "local", "group",
					     "group_eq", "all", "all_eq" };

	return scope >= 0 && scope < (int)(sizeof(names) / sizeof(names[0])) ? names[scope] : "?";
}

static const char *mpit_class(int cls)
{
	static const char *const names[] = { "state", "level", "size", "percentage",
					     "highwatermark", "lowwatermark", "counter",
					     "aggregate", "timer", "generic" };

	return cls >= 0 && cls < (int)(sizeof(names) / sizeof(names[0])) ? names[cls] : "?";
}

static void mpit_verbosity(int v, char *buf, size_t len)
{
	static const char *const who[] = { "user", "tuner", "mpidev" };
	static const char *const how[] = { "basic", "detail", "all" };

	if (v < MPI_T_VERBOSITY_USER_BASIC || v > MPI_T_VERBOSITY_MPIDEV_ALL)
		snprintf(buf, len, "%d", v);
	else
		snprintf(buf, len, "%s_%s", who[(v - 1) / 3], how[(v - 1) % 3]);
}

/* Every variable's category, from the categories' lists. */
static int mpit_categories(int ncvar, int npvar)
{
	int c, i, *list;

	if (mt.category_get_num(&mt.ncat) != MPI_SUCCESS)
		return -1;
	mt.cat_of_cvar = calloc((size_t)ncvar + 1, sizeof(int));
	mt.cat_of_pvar = calloc((size_t)npvar + 1, sizeof(int));
	mt.cat_name = calloc((size_t)mt.ncat + 1, sizeof(*mt.cat_name));
	list = malloc(sizeof(int) * ((size_t)(ncvar > npvar ? ncvar : npvar) + 1));
	if (!mt.cat_of_cvar || !mt.cat_of_pvar || !mt.cat_name || !list) {
		free(list);
		return -1;
	}
	for (i = 0; i < ncvar; i++)
		mt.cat_of_cvar[i] = -1;
	for (i = 0; i < npvar; i++)
		mt.cat_of_pvar[i] = -1;
	for (c = 0; c < mt.ncat; c++) {
		int len = sizeof(mt.cat_name[c]), nc, np;

		if (mt.category_get_info(c, mt.cat_name[c], &len, NULL, NULL, &nc, &np, NULL) !=
			    MPI_SUCCESS ||
		    mt.category_get_cvars(c, ncvar, list) != MPI_SUCCESS)
			goto fail;
		for (i = 0; i < nc && i < ncvar; i++)
			if (list[i] >= 0 && list[i] < ncvar)
				mt.cat_of_cvar[list[i]] = c;
		if (mt.category_get_pvars(c, npvar, list) != MPI_SUCCESS)
			goto fail;
		for (i = 0; i < np && i < npvar; i++)
			if (list[i] >= 0 && list[i] < npvar)
				mt.cat_of_pvar[list[i]] = c;
	}
	free(list);
	return 0;
fail:
	free(list);
	return -1;
}

static const char *mpit_cat(int c)
{
	return c >= 0 && c < mt.ncat ? mt.cat_name[c] : "(none)";
}

static int show_mpit_cvars(int n)
{
	char name[256], desc[1024], value[4096], key[320], verb[32];
	int i, len, dlen, verbosity, scope, count;
	MPI_Datatype type;
	MPI_T_cvar_handle h;

	if (!parsable)
		printf("Control variables (MPI_T): %d\n", n);
	else
		fact("mpit.cvars", "%d", n);
	for (i = 0; i < n; i++) {
		len = sizeof(name);
		dlen = sizeof(desc);
		if (mt.cvar_get_info(i, name, &len, &verbosity, &type, NULL, desc, &dlen, NULL,
				     &scope) != MPI_SUCCESS)
			return -1;
		value[0] = '\0';
		/* Strings no longer than value, so the read fits. */
		if (mt.cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS) {
			if (count <= (int)sizeof(value) && mt.cvar_read(h, value) != MPI_SUCCESS)
				value[0] = '\0';
			mt.cvar_handle_free(&h);
		}
		mpit_verbosity(verbosity, verb, sizeof(verb));
		if (parsable) {
			snprintf(key, sizeof(key), "cvar.%s", name);
			fact(key, "type %s; scope %s; verbosity %s; category %s; value %s; %s",
			     mpit_type(type), mpit_scope(scope), verb,
			     mpit_cat(mt.cat_of_cvar[i]), value, desc);
		} else {
			printf("  %-22s %s, scope %s, %s, category %s; %s%s%s\n    %s\n", name,
			       mpit_type(type), mpit_scope(scope), verb, mpit_cat(mt.cat_of_cvar[i]),
			       *value ? "value \"" : "no value (the default, or not shown)", value,
			       *value ? "\"" : "", desc);
		}
	}
	return 0;
}

static int show_mpit_pvars(int n)
{
	char name[256], desc[1024], key[320], verb[32], flags[64];
	int i, len, dlen, verbosity, cls, ro, cont, atomic;
	MPI_Datatype type;

	if (!parsable)
		printf("\nPerformance variables (MPI_T): %d\n", n);
	else
		fact("mpit.pvars", "%d", n);
	for (i = 0; i < n; i++) {
		len = sizeof(name);
		dlen = sizeof(desc);
		if (mt.pvar_get_info(i, name, &len, &verbosity, &cls, &type, NULL, desc, &dlen, NULL,
				     &ro, &cont, &atomic) != MPI_SUCCESS)
			return -1;
		mpit_verbosity(verbosity, verb, sizeof(verb));
		snprintf(flags, sizeof(flags), "%s%s%s", ro ? " readonly" : "",
			 cont ? " continuous" : "", atomic ? " atomic" : "");
		if (parsable) {
			snprintf(key, sizeof(key), "pvar.%s", name);
			fact(key, "class %s; type %s; verbosity %s; category %s; flags%s; %s",
			     mpit_class(cls), mpit_type(type), verb, mpit_cat(mt.cat_of_pvar[i]),
			     *flags ? flags : " none", desc);
		} else {
			printf("  %-26s %s, %s, %s, category %s%s%s%s\n    %s\n", name,
			       mpit_class(cls), mpit_type(type), verb, mpit_cat(mt.cat_of_pvar[i]),
			       *flags ? " (" : "", *flags ? flags + 1 : "", *flags ? ")" : "", desc);
		}
	}
	return 0;
}

static int show_mpit_categories(void)
{
	char desc[1024], key[96];
	int c, dlen, nc, np, nk;

	if (!parsable)
		printf("\nCategories (MPI_T): %d\n", mt.ncat);
	else
		fact("mpit.categories", "%d", mt.ncat);
	for (c = 0; c < mt.ncat; c++) {
		dlen = sizeof(desc);
		if (mt.category_get_info(c, NULL, NULL, desc, &dlen, &nc, &np, &nk) != MPI_SUCCESS)
			return -1;
		if (parsable) {
			snprintf(key, sizeof(key), "category.%s", mt.cat_name[c]);
			fact(key, "%d cvars; %d pvars; %d categories; %s", nc, np, nk, desc);
		} else {
			printf("  %-14s %d control, %d performance variables, %d categories\n    %s\n",
			       mt.cat_name[c], nc, np, nk, desc);
		}
	}
	return 0;
}

static int show_mpit(void)
{
	int provided, ncvar, npvar, rc = -1;

	if (mpit_load() < 0)
		return 1;
	if (mt.init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "bipinfo: MPI_T_init_thread failed\n");
		return 1;
	}
	if (mt.cvar_get_num(&ncvar) == MPI_SUCCESS && mt.pvar_get_num(&npvar) == MPI_SUCCESS &&
	    mpit_categories(ncvar, npvar) == 0 && show_mpit_cvars(ncvar) == 0 &&
	    show_mpit_pvars(npvar) == 0 && show_mpit_categories() == 0)
		rc = 0;
	if (rc < 0)
		fprintf(stderr, "bipinfo: an MPI_T call failed\n");
	mt.finalize();
	free(mt.cat_of_cvar);
	free(mt.cat_of_pvar);
	free(mt.cat_name);
	return rc < 0;
}

#define USAGE \
	"usage: bipinfo [--parsable]\n       bipinfo --job\n       bipinfo --mpit [--parsable]\n"

int main(int argc, char **argv)
{
	int i, job = 0, mpit = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--parsable")) {
			parsable = 1;
		} else if (!strcmp(argv[i], "--job")) {
			job = 1;
		} else if (!strcmp(argv[i], "--mpit")) {
			mpit = 1;
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
	if (job && mpit) {
		fprintf(stderr, "bipinfo: --job and --mpit exclude each other\n" USAGE);
		return 2;
	}
	if (job)
		return show_job();
	if (mpit)
		return show_mpit();
	fact("version", "%d.%d", BIP_VERSION_MAJOR, BIP_VERSION_MINOR);
	fact("build", "%s", BIP_BUILD_INFO);
	fact("ntags", "%d (+%d reserved)", NTAGS, BIP_RESERVED_TAGS);
	fact("bipsmallsize", "%d words", BIPSMALLSIZE);
	show_drivers();
	show_boots();
	show_env();
	return show_conf();
}
