/* SPDX-License-Identifier: MIT */
/*
 * biproute - write the routing database $HOME/.bip/bipdatabase (manual 4.5).
 *
 *   biproute [-t TOPOLOGY] host...
 *   biproute -c CONFIGURATION
 *
 * With a topology (-t, else $BIP_TOPOLOGY, else $HOME/.bip/biptopology when
 * it exists) the routes between every pair of the hosts are computed from
 * the cabling of the Myrinet network, as print_routes did for the original.
 * Without one the hosts are on an IP network, whose fabric routes by itself:
 * every route is 256, and every host name must resolve.  The database then
 * holds the hosts and no route line (bipdatabase.h): it grows with the
 * hosts, not with their pairs.
 *
 * With -c, it writes nothing: it prints the way between every two nodes of
 * a configuration that names clusters (bipconf(5), "Clusters"), inside one
 * cluster or through the chain of gateways between two.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bipdatabase.h"
#include "topology.h"

/* Past this many, the messages about unroutable pairs are only counted. */
#define MAX_PAIR_MESSAGES 10

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: biproute [-t TOPOLOGY] host...\n"
		"       biproute -c CONFIGURATION\n"
		"  -t TOPOLOGY  the cabling of the network (default $%s, else\n"
		"               $HOME/.bip/biptopology if it exists; format in bipconf(5));\n"
		"               without a topology the hosts are on an IP network\n"
		"  -c CONFIGURATION  print the way between every two of its nodes, through\n"
		"               the gateways of its clusters (bipconf(5)); writes nothing\n",
		BIP_ENV_TOPOLOGY);
	exit(status);
}

static int write_database(FILE *f, const void *db)
{
	return bip_database_write(f, db);
}

/*
 * Load the topology named by -t, or the default one.  *topo_p stays NULL when
 * there is none: no -t, no $BIP_TOPOLOGY, and no $HOME/.bip/biptopology.
 */
static int load_topology(const char *given, struct bip_topology **topo_p, char *path,
			 size_t pathlen)
{
	char err[1024];
	int rc;

	if (given) {
		snprintf(path, pathlen, "%s", given);
	} else {
		rc = bip_topology_default_path(path, pathlen);
		if (rc == -ENOENT)
			return 0;
		if (rc < 0) {
			fprintf(stderr, "biproute: the topology file name is too long\n");
			return rc;
		}
		/* Only the implicit file may be absent: a file asked for must be there. */
		if (!(getenv(BIP_ENV_TOPOLOGY) && *getenv(BIP_ENV_TOPOLOGY)) &&
		    access(path, F_OK) < 0 && errno == ENOENT)
			return 0;
	}
	rc = bip_topology_load(path, topo_p, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "biproute: topology %s\n", err);
		return rc;
	}
	return 0;
}

static void list_hosts(const struct bip_topology *topo)
{
	int i, n = bip_topology_host_count(topo);

	fprintf(stderr, "biproute: the hosts of the topology are:");
	for (i = 0; i < n && i < 20; i++)
		fprintf(stderr, " %s", bip_topology_host_name(topo, i));
	if (n > 20)
		fprintf(stderr, " and %d more", n - 20);
	fprintf(stderr, n ? "\n" : " none\n");
}

/* Routes of every ordered pair of distinct hosts, from the topology. */
static int routes_from_topology(struct bip_database *db, const struct bip_topology *topo,
				const char *path, char **hosts, int n)
{
	int i, j, missing = 0, unroutable = 0, rc, nrails = bip_topology_units(topo);

	for (i = 0; i < n; i++) {
		if (!bip_topology_has_host(topo, hosts[i])) {
			fprintf(stderr, "biproute: host %s is not in the topology %s\n", hosts[i],
				path);
			missing++;
		}
	}
	if (missing) {
		list_hosts(topo);
		return -ENOENT;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			struct bip_route route[BIP_CONF_MAXRAILS];
			int k;

			if (i == j)
				continue;
			/* A route per rail: the networks of boards 0, 1, ... */
			for (k = 0, rc = 0; k < nrails && rc == 0; k++)
				rc = bip_topology_route_unit(topo, hosts[i], hosts[j], k, &route[k]);
			if (rc == -ENOENT) {
				fprintf(stderr,
					"biproute: the topology %s has %d rails, and host %s or %s "
					"has no board %d: every host needs a board on every rail\n",
					path, nrails, hosts[i], hosts[j], k - 1);
				return rc;
			}
			if (rc == -EHOSTUNREACH) {
				char rail[24] = "";

				if (nrails > 1)
					snprintf(rail, sizeof(rail), " on rail %d", k - 1);
				if (++unroutable <= MAX_PAIR_MESSAGES)
					fprintf(stderr,
						"biproute: no route from %s to %s crossing at most "
						"%d switches in the topology %s%s\n",
						hosts[i], hosts[j], BIP_CONF_MAXHOPS, path, rail);
				continue;
			}
			if (rc == 0)
				rc = bip_database_add_route_rails(db, hosts[i], hosts[j], route,
								  nrails);
			if (rc < 0) {
				fprintf(stderr, "biproute: route from %s to %s: %s\n", hosts[i],
					hosts[j], strerror(-rc));
				return rc;
			}
		}
	}
	if (unroutable > MAX_PAIR_MESSAGES)
		fprintf(stderr, "biproute: %d more pairs of hosts without a route\n",
			unroutable - MAX_PAIR_MESSAGES);
	return unroutable ? -EHOSTUNREACH : 0;
}

/* Hosts of an IP network: each must resolve; the fabric routes, so every
 * route is 256, and the database says so by giving none. */
static int routes_on_ip(char **hosts, int n)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	int i, bad = 0, rc;

	for (i = 0; i < n; i++) {
		struct addrinfo *res;

		rc = getaddrinfo(hosts[i], NULL, &hints, &res);
		if (rc != 0) {
			fprintf(stderr, "biproute: host %s does not resolve (%s)\n", hosts[i],
				rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
			bad++;
			continue;
		}
		freeaddrinfo(res);
	}
	if (bad) {
		fprintf(stderr,
			"biproute: without a topology the hosts are on an IP network and their "
			"names must resolve; for a Myrinet network give its topology with -t "
			"(bipconf(5))\n");
		return -ENOENT;
	}
	return 0;
}

/* -c: the way between every two nodes of a configuration.  The output is
 * n * (n - 1) lines by nature; the ways are computed once per cluster from
 * the row's node, not once per pair. */
static int show_ways(const char *file)
{
	struct bip_conf *conf;
	char err[1024], (*way)[2048];
	int i, j, rc, from = -1;

	rc = bip_conf_parse_file(file, &conf, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "biproute: %s\n", err);
		return 1;
	}
	if (!conf->nclusters) {
		printf("# %s names no cluster: its %d node%s are on one network\n", file, conf->n,
		       conf->n == 1 ? "" : "s");
		bip_conf_free(conf);
		return 0;
	}
	way = malloc((size_t)conf->nclusters * sizeof(*way));
	if (!way) {
		fprintf(stderr, "biproute: out of memory\n");
		bip_conf_free(conf);
		return 1;
	}
	for (i = 0; i < conf->n; i++) {
		if (conf->cluster_of[i] != from) {
			from = conf->cluster_of[i];
			for (j = 0; j < conf->nclusters; j++)
				bip_conf_cluster_chain(conf, from, j, way[j], sizeof(way[j]));
		}
		for (j = 0; j < conf->n; j++)
			if (i != j)
				printf("%d %s -> %d %s: %s\n", i, conf->nodes[i].host, j,
				       conf->nodes[j].host, way[conf->cluster_of[j]]);
	}
	free(way);
	bip_conf_free(conf);
	return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *home = getenv("HOME"), *given = NULL;
	char path[PATH_MAX], topo_path[PATH_MAX], abs_path[PATH_MAX], err[1024];
	struct bip_topology *topo = NULL;
	struct bip_database *db = NULL;
	char **hosts;
	int opt, i, n = 0, rc, status = 1;

	const char *ways = NULL;

	while ((opt = getopt(argc, argv, "+t:c:h")) != -1) {
		if (opt == 't')
			given = optarg;
		else if (opt == 'c')
			ways = optarg;
		else
			usage(opt == 'h' ? 0 : 2);
	}
	if (ways) {
		if (given || optind != argc) {
			fprintf(stderr, "biproute: -c takes no topology and no host\n");
			usage(2);
		}
		return show_ways(ways);
	}
	if (optind == argc)
		usage(2);
	if (!home || !*home) {
		fprintf(stderr, "biproute: HOME is not set\n");
		return 1;
	}
	hosts = calloc((size_t)(argc - optind), sizeof(*hosts));
	if (!hosts) {
		fprintf(stderr, "biproute: out of memory\n");
		return 1;
	}
	for (i = optind; i < argc; i++) {
		if (!*argv[i] || strlen(argv[i]) >= BIP_CONF_HOSTLEN ||
		    strpbrk(argv[i], " \t\r\n#")) {
			fprintf(stderr, "biproute: \"%s\" is not a host name\n", argv[i]);
			goto free_hosts;
		}
	}

	if (load_topology(given, &topo, topo_path, sizeof(topo_path)) < 0)
		goto free_hosts;
	/* Recorded whole, so that it still names the file from another directory. */
	if (topo && !realpath(topo_path, abs_path))
		snprintf(abs_path, sizeof(abs_path), "%s", topo_path);
	if (topo && strpbrk(abs_path, "\r\n")) {
		fprintf(stderr, "biproute: the topology file name holds a line break\n");
		goto free_topo;
	}
	/* The hosts, each once, in the order given. */
	rc = bip_database_create(topo ? abs_path : NULL, &db);
	for (i = optind; rc == 0 && i < argc; i++) {
		if (bip_database_has(db, argv[i]))
			continue;
		rc = bip_database_add_host(db, argv[i]);
		hosts[n++] = argv[i];
	}
	if (rc < 0) {
		fprintf(stderr, "biproute: %s\n", strerror(-rc));
		goto free_db;
	}
	rc = topo ? routes_from_topology(db, topo, topo_path, hosts, n) : routes_on_ip(hosts, n);
	if (rc < 0)
		goto free_db;

	snprintf(path, sizeof(path), "%s/.bip", home);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "biproute: %s: %s\n", path, strerror(errno));
		goto free_db;
	}
	snprintf(path, sizeof(path), "%s/.bip/bipdatabase", home);
	if (bip_file_replace(path, write_database, db, err, sizeof(err)) < 0) {
		fprintf(stderr, "biproute: %s\n", err);
		goto free_db;
	}
	status = 0;
free_db:
	bip_database_free(db);
free_topo:
	bip_topology_free(topo);
free_hosts:
	free(hosts);
	return status;
}
