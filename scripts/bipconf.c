/* SPDX-License-Identifier: MIT */
/*
 * bipconf - write a BIP configuration (manual 4.6 and section 5).
 *
 *   bipconf [-f FILE] host...
 *
 * The order of the hosts gives the node numbers; a host may be named several
 * times.  Routes come from $HOME/.bip/bipdatabase (written by biproute) when
 * it exists, which must then hold every host; otherwise every route is
 * direct (256), as between processes of one host.
 *
 * When every route is direct (no database, or one of an IP network) the
 * file says "routes direct" and holds no route line: n + 2 lines, not
 * n * (n + 1) + 1 (bipconf(5)).  Routes through switches are looked up
 * once per pair of distinct hosts, then per pair of nodes only to write
 * them, which the manual's format asks for anyway.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bipdatabase.h"
#include "conf.h"

static int write_conf(FILE *f, const void *conf)
{
	return bip_conf_write(f, conf);
}

static int newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* The manual asks to run biproute again when the network changes: say so
 * when its topology was modified after the database was written. */
static void warn_if_stale(const struct bip_database *db, const char *dbpath)
{
	const char *topo = bip_database_topology(db);
	struct stat t, d;

	if (!topo || stat(dbpath, &d) < 0)
		return;
	if (stat(topo, &t) < 0)
		fprintf(stderr, "bipconf: warning: %s, the topology of %s: %s\n", topo, dbpath,
			strerror(errno));
	else if (newer(&t.st_mtim, &d.st_mtim))
		fprintf(stderr, "bipconf: warning: the topology %s changed after %s was written: "
			"run biproute again\n", topo, dbpath);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: bipconf [-f FILE] host...\n");
	exit(status);
}

/*
 * Routes of conf's nodes from db.  Every pair of distinct hosts needs a
 * route when db was made from a topology; in a database of an IP network
 * a pair it does not give is direct.  Pairs are looked up per host, so
 * that only a network with switches costs n * n.  0, or 1 after a message.
 */
static int routes_from_database(struct bip_conf *conf, const struct bip_database *db,
				const char *dbpath)
{
	const int topo = bip_database_topology(db) != NULL;
	struct bip_conf_hosts hosts;
	int a, b, i, j, k, switched = 0, status = 1;
	struct bip_route r;

	/* An IP network's database, or one whose routes are all 256: nothing
	 * to look up, every route is direct. */
	if (!topo && bip_database_all_direct(db))
		return 0;
	if (bip_conf_hosts_build(conf, &hosts) < 0) {
		fprintf(stderr, "bipconf: out of memory\n");
		return 1;
	}
	for (a = 0; a < hosts.nhosts; a++)
		for (b = 0; b < hosts.nhosts; b++) {
			const char *from = conf->nodes[hosts.first[a]].host;
			const char *to = conf->nodes[hosts.first[b]].host;

			/* Nodes on one host talk without the network: no switch. */
			for (k = 0; a != b && k < conf->nrails; k++) {
				if (bip_database_route_rail(db, from, to, k, &r) < 0) {
					if (!topo)
						continue;
					fprintf(stderr, "bipconf: %s has no route from %s to %s: "
						"run biproute with every host first\n", dbpath, from,
						to);
					goto out;
				}
				switched |= !bip_route_is_direct(&r);
			}
		}
	for (i = 0; switched && i < conf->n; i++)
		for (j = 0; j < conf->n; j++)
			for (k = 0; hosts.host_of[i] != hosts.host_of[j] && k < conf->nrails; k++) {
				if (bip_database_route_rail(db, conf->nodes[i].host,
							    conf->nodes[j].host, k, &r) < 0)
					continue; /* direct, in a database without topology */
				if (bip_conf_set_route(conf, k, i, j, &r) < 0) {
					fprintf(stderr, "bipconf: out of memory for the routes of %d "
						"nodes\n", conf->n);
					goto out;
				}
			}
	status = 0;
out:
	bip_conf_hosts_free(&hosts);
	return status;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], dbpath[PATH_MAX], err[512];
	const char *file = NULL, *home = getenv("HOME");
	struct bip_database *db = NULL;
	struct bip_conf conf = { 0 };
	int i, first = 1, rc, status = 1;

	while (first < argc && argv[first][0] == '-') {
		if (!strcmp(argv[first], "-f") && first + 1 < argc) {
			file = argv[first + 1];
			first += 2;
		} else if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
			usage(0);
		} else {
			usage(2);
		}
	}
	if (first == argc)
		usage(2);
	if (argc - first > BIP_CONF_MAXNODES) {
		fprintf(stderr, "bipconf: %d hosts: a configuration has at most %d nodes\n",
			argc - first, BIP_CONF_MAXNODES);
		return 1;
	}
	if (!home || !*home) {
		if (!file) {
			fprintf(stderr, "bipconf: HOME is not set: give -f FILE\n");
			return 1;
		}
		home = NULL;
	}

	if (home) {
		snprintf(dbpath, sizeof(dbpath), "%s/.bip/bipdatabase", home);
		rc = bip_database_load(dbpath, &db, err, sizeof(err));
		if (rc < 0 && rc != -ENOENT) {
			fprintf(stderr, "bipconf: %s\n", err);
			return 1;
		}
		if (db)
			warn_if_stale(db, dbpath);
	}

	conf.n = argc - first;
	/* One route per rail of the database (its hosts' boards, bipconf(5)). */
	conf.nrails = db ? bip_database_rails(db) : 1;
	conf.nodes = calloc((size_t)conf.n, sizeof(*conf.nodes));
	if (!conf.nodes) {
		fprintf(stderr, "bipconf: out of memory\n");
		goto out;
	}
	for (i = 0; i < conf.n; i++) {
		const char *host = argv[first + i];

		if (!*host || strlen(host) >= BIP_CONF_HOSTLEN || strpbrk(host, " \t\r\n#")) {
			fprintf(stderr, "bipconf: \"%s\" is not a host name\n", host);
			goto out;
		}
		if (db && !bip_database_has(db, host)) {
			const char *topo = bip_database_topology(db);

			fprintf(stderr, "bipconf: host %s is not in %s: run biproute with every host "
				"first%s%s%s\n", host, dbpath, topo ? " (the database was made from "
				"the topology " : "", topo ? topo : "", topo ? ")" : "");
			goto out;
		}
		snprintf(conf.nodes[i].host, sizeof(conf.nodes[i].host), "%s", host);
	}
	if (db && routes_from_database(&conf, db, dbpath))
		goto out;

	if (file) {
		snprintf(path, sizeof(path), "%s", file);
	} else {
		snprintf(path, sizeof(path), "%s/.bip", home);
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "bipconf: %s: %s\n", path, strerror(errno));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/.bip/bipconf", home);
	}
	/* Replaced whole, so that a job starting now never reads half of it. */
	if (bip_file_replace(path, write_conf, &conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "bipconf: %s\n", err);
		goto out;
	}
	status = 0;
out:
	bip_database_free(db);
	free(conf.nodes);
	free(conf.routes);
	return status;
}
