/* SPDX-License-Identifier: MIT */
/*
 * bipdatabase.c - the routing database (see bipdatabase.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bipdatabase.h"

struct db_route {
	char from[BIP_CONF_HOSTLEN];
	char to[BIP_CONF_HOSTLEN];
	struct bip_route route;
};

struct bip_database {
	char (*hosts)[BIP_CONF_HOSTLEN];
	int nhosts;
	struct db_route *routes;
	int nroutes;
};

static int grow(void **p, int n, size_t size)
{
	void *q;

	if (n & (n - 1) && n)
		return 0;
	q = realloc(*p, (size_t)(n ? 2 * n : 8) * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

static int parse_line(struct bip_database *db, char *line, const char *path, int lineno,
		      char *err, size_t errlen)
{
	char *save = NULL, *kw = strtok_r(line, " \t\r\n", &save), *tok;

	if (!kw || kw[0] == '#')
		return 0;
	if (!strcmp(kw, "host")) {
		char *name = strtok_r(NULL, " \t\r\n", &save);

		if (!name || strlen(name) >= BIP_CONF_HOSTLEN || strtok_r(NULL, " \t\r\n", &save))
			goto bad;
		if (grow((void **)&db->hosts, db->nhosts, sizeof(*db->hosts)) < 0)
			return -ENOMEM;
		snprintf(db->hosts[db->nhosts++], BIP_CONF_HOSTLEN, "%s", name);
		return 0;
	}
	if (!strcmp(kw, "route")) {
		struct db_route r = { .route.nhops = 0 };
		char *from = strtok_r(NULL, " \t\r\n", &save);
		char *to = strtok_r(NULL, " \t\r\n", &save);

		if (!from || !to || strlen(from) >= BIP_CONF_HOSTLEN ||
		    strlen(to) >= BIP_CONF_HOSTLEN)
			goto bad;
		snprintf(r.from, sizeof(r.from), "%s", from);
		snprintf(r.to, sizeof(r.to), "%s", to);
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			char *end;
			long v = strtol(tok, &end, 10);

			if (*end || v < 0 || v > BIP_ROUTE_DIRECT || r.route.nhops == BIP_CONF_MAXHOPS)
				goto bad;
			r.route.hop[r.route.nhops++] = (int)v;
		}
		if (!r.route.nhops || (r.route.nhops > 1 && r.route.hop[0] == BIP_ROUTE_DIRECT))
			goto bad;
		if (grow((void **)&db->routes, db->nroutes, sizeof(*db->routes)) < 0)
			return -ENOMEM;
		db->routes[db->nroutes++] = r;
		return 0;
	}
	snprintf(err, errlen, "%s:%d: unknown keyword \"%s\" (expected host or route)", path,
		 lineno, kw);
	return -EINVAL;
bad:
	snprintf(err, errlen, "%s:%d: malformed %s line (expected \"host NAME\" or \"route FROM "
		 "TO HOP...\" with 1 to 4 hops, 256 alone for direct)", path, lineno, kw);
	return -EINVAL;
}

int bip_database_load(const char *path, struct bip_database **db_p, char *err, size_t errlen)
{
	struct bip_database *db;
	char line[1024];
	int lineno = 0, rc = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	db = calloc(1, sizeof(*db));
	if (!db) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		rc = parse_line(db, line, path, lineno, err, errlen);
		if (rc < 0)
			break;
	}
	fclose(f);
	if (rc < 0) {
		bip_database_free(db);
		return rc;
	}
	*db_p = db;
	return 0;
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
	int i;

	for (i = 0; i < db->nroutes; i++) {
		if (!strcmp(db->routes[i].from, from) && !strcmp(db->routes[i].to, to)) {
			*route = db->routes[i].route;
			return 0;
		}
	}
	return -ENOENT;
}

void bip_database_free(struct bip_database *db)
{
	if (!db)
		return;
	free(db->hosts);
	free(db->routes);
	free(db);
}
