/* SPDX-License-Identifier: MIT */
/*
 * bipdatabase.c - the routing database (see bipdatabase.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bipdatabase.h"

struct db_route {
	char from[BIP_CONF_HOSTLEN];
	char to[BIP_CONF_HOSTLEN];
	struct bip_route route[BIP_CONF_MAXRAILS]; /* of each rail */
};

struct bip_database {
	char *topology;               /* from "# topology: FILE", or NULL */
	char (*hosts)[BIP_CONF_HOSTLEN];
	int nhosts;
	struct db_route *routes;
	int nroutes;
	int nrails; /* routes per route line: the first line's (0: no line yet) */
};

#define TOPOLOGY_COMMENT "# topology: "

static int set_topology(struct bip_database *db, const char *path)
{
	char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	free(db->topology);
	db->topology = copy;
	return 0;
}

static int parse_line(struct bip_database *db, char *line, const char *path, int lineno,
		      char *err, size_t errlen)
{
	char *save = NULL, *kw, *tok;

	if (!strncmp(line, TOPOLOGY_COMMENT, strlen(TOPOLOGY_COMMENT))) {
		tok = line + strlen(TOPOLOGY_COMMENT);
		tok[strcspn(tok, "\r\n")] = '\0';
		return *tok ? set_topology(db, tok) : 0;
	}
	kw = strtok_r(line, " \t\r\n", &save);
	if (!kw || kw[0] == '#')
		return 0;
	if (!strcmp(kw, "host")) {
		char *name = strtok_r(NULL, " \t\r\n", &save);

		if (!name || strlen(name) >= BIP_CONF_HOSTLEN || strtok_r(NULL, " \t\r\n", &save))
			goto bad;
		return bip_database_add_host(db, name);
	}
	if (!strcmp(kw, "route")) {
		struct bip_route routes[BIP_CONF_MAXRAILS] = { { 0 } };
		char *from = strtok_r(NULL, " \t\r\n", &save);
		char *to = strtok_r(NULL, " \t\r\n", &save);
		int k = 0, rc;

		if (!from || !to || strlen(from) >= BIP_CONF_HOSTLEN ||
		    strlen(to) >= BIP_CONF_HOSTLEN)
			goto bad;
		/* Hops, and '/' before each further rail's route. */
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			while (*tok) {
				struct bip_route *r = &routes[k];
				char *end;
				long v;

				if (*tok == '/') {
					if (!r->nhops || ++k == BIP_CONF_MAXRAILS)
						goto bad;
					tok++;
					continue;
				}
				v = strtol(tok, &end, 10);
				if (end == tok || (*end && *end != '/') || v < 0 ||
				    v > BIP_ROUTE_DIRECT || r->nhops == BIP_CONF_MAXHOPS)
					goto bad;
				r->hop[r->nhops++] = (int)v;
				tok = end;
			}
		}
		for (rc = 0; rc <= k; rc++)
			if (!routes[rc].nhops ||
			    (routes[rc].nhops > 1 && routes[rc].hop[0] == BIP_ROUTE_DIRECT))
				goto bad;
		if (db->nrails && k + 1 != db->nrails) {
			snprintf(err, errlen, "%s:%d: %d route%s (rails) on this line, %d on the "
				 "first route line", path, lineno, k + 1, k ? "s" : "", db->nrails);
			return -EINVAL;
		}
		return bip_database_add_route_rails(db, from, to, routes, k + 1);
	}
	snprintf(err, errlen, "%s:%d: unknown keyword \"%s\" (expected host or route)", path,
		 lineno, kw);
	return -EINVAL;
bad:
	snprintf(err, errlen, "%s:%d: malformed %s line (expected \"host NAME\" or \"route FROM "
		 "TO HOP...\" with 1 to 4 hops, 256 alone for direct, and \"/ HOP...\" for "
		 "each further rail)", path, lineno, kw);
	return -EINVAL;
}

int bip_database_read(FILE *f, const char *name, struct bip_database **db_p, char *err,
		      size_t errlen)
{
	struct bip_database *db;
	char line[PATH_MAX + 64];
	int lineno = 0, rc = 0;

	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		rc = parse_line(db, line, name, lineno, err, errlen);
		if (rc == -ENOMEM)
			snprintf(err, errlen, "%s:%d: out of memory", name, lineno);
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		bip_database_free(db);
		return rc;
	}
	*db_p = db;
	return 0;
}

int bip_database_load(const char *path, struct bip_database **db_p, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = bip_database_read(f, path, db_p, err, errlen);
	fclose(f);
	return rc;
}

int bip_database_has(const struct bip_database *db, const char *host)
{
	int i;

	for (i = 0; i < db->nhosts; i++)
		if (!strcmp(db->hosts[i], host))
			return 1;
	return 0;
}

int bip_database_route(const struct bip_database *db, const char *from, const char *to,
		       struct bip_route *route)
{
	return bip_database_route_rail(db, from, to, 0, route);
}

int bip_database_route_rail(const struct bip_database *db, const char *from, const char *to,
			    int rail, struct bip_route *route)
{
	int i;

	if (rail < 0 || rail >= bip_database_rails(db))
		return -ENOENT;
	for (i = 0; i < db->nroutes; i++) {
		if (!strcmp(db->routes[i].from, from) && !strcmp(db->routes[i].to, to)) {
			*route = db->routes[i].route[rail];
			return 0;
		}
	}
	return -ENOENT;
}

int bip_database_rails(const struct bip_database *db)
{
	return db->nrails ? db->nrails : 1;
}

const char *bip_database_topology(const struct bip_database *db)
{
	return db->topology;
}

int bip_database_create(const char *topology, struct bip_database **db_p)
{
	struct bip_database *db = calloc(1, sizeof(*db));

	if (!db)
		return -ENOMEM;
	if (topology && set_topology(db, topology) < 0) {
		free(db);
		return -ENOMEM;
	}
	*db_p = db;
	return 0;
}

int bip_database_add_host(struct bip_database *db, const char *host)
{
	if (strlen(host) >= BIP_CONF_HOSTLEN || !*host || strpbrk(host, " \t\r\n#"))
		return -EINVAL;
	if (bip_database_has(db, host))
		return 0;
	if (bip_array_grow((void **)&db->hosts, db->nhosts, sizeof(*db->hosts)) < 0)
		return -ENOMEM;
	snprintf(db->hosts[db->nhosts++], BIP_CONF_HOSTLEN, "%s", host);
	return 0;
}

int bip_database_add_route(struct bip_database *db, const char *from, const char *to,
			   const struct bip_route *route)
{
	return bip_database_add_route_rails(db, from, to, route, 1);
}

int bip_database_add_route_rails(struct bip_database *db, const char *from, const char *to,
				 const struct bip_route *routes, int nrails)
{
	struct db_route *r;
	int k;

	if (strlen(from) >= BIP_CONF_HOSTLEN || strlen(to) >= BIP_CONF_HOSTLEN || nrails < 1 ||
	    nrails > BIP_CONF_MAXRAILS || (db->nrails && nrails != db->nrails))
		return -EINVAL;
	for (k = 0; k < nrails; k++)
		if (routes[k].nhops < 1 || routes[k].nhops > BIP_CONF_MAXHOPS)
			return -EINVAL;
	if (bip_array_grow((void **)&db->routes, db->nroutes, sizeof(*db->routes)) < 0)
		return -ENOMEM;
	r = &db->routes[db->nroutes++];
	memset(r, 0, sizeof(*r));
	snprintf(r->from, sizeof(r->from), "%s", from);
	snprintf(r->to, sizeof(r->to), "%s", to);
	for (k = 0; k < nrails; k++)
		r->route[k] = routes[k];
	db->nrails = nrails;
	return 0;
}

int bip_database_write(FILE *f, const struct bip_database *db)
{
	int i, h, k;

	fprintf(f, "# BIP routing database, written by biproute (format: bipconf(5))\n");
	if (db->topology)
		fprintf(f, TOPOLOGY_COMMENT "%s\n", db->topology);
	else
		fprintf(f, "# no topology: the hosts are on an IP network, every route is 256\n");
	for (i = 0; i < db->nhosts; i++)
		fprintf(f, "host %s\n", db->hosts[i]);
	for (i = 0; i < db->nroutes; i++) {
		const struct db_route *r = &db->routes[i];

		fprintf(f, "route %s %s", r->from, r->to);
		for (k = 0; k < db->nrails; k++) {
			if (k)
				fputs(" /", f);
			for (h = 0; h < r->route[k].nhops; h++)
				fprintf(f, " %d", r->route[k].hop[h]);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

void bip_database_free(struct bip_database *db)
{
	if (!db)
		return;
	free(db->topology);
	free(db->hosts);
	free(db->routes);
	free(db);
}
