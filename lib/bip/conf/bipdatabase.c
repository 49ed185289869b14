/* SPDX-License-Identifier: MIT */
/*
 * bipdatabase.c - the routing database (see bipdatabase.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bipdatabase.h"

/*
 * Names are kept once each, and found through a hash table; routes by the
 * numbers of their two hosts, through another.  bipconf asks for the route
 * of every pair of its hosts, and biproute adds every host: with lookups
 * that went through every entry, a network of 10,000 hosts cost 10^8
 * string comparisons for its hosts alone, and its routes far more.
 */
struct db_route {
	int from, to;                              /* names */
	struct bip_route route[BIP_CONF_MAXRAILS]; /* of each rail */
};

struct db_index {
	int *slot;                    /* an entry + 1, 0 for an empty slot */
	size_t mask;                  /* slots - 1, a power of two */
};

struct bip_database {
	char *topology;               /* from "# topology: FILE", or NULL */
	char **names;                 /* every host name met, each once */
	unsigned char *declared;      /* of each name: a "host" line names it */
	int nnames;
	struct db_index name_index;
	int *hosts;                   /* the names of the "host" lines, in order */
	int nhosts;
	struct db_route *routes;
	int nroutes;
	struct db_index route_index;  /* the first route of each pair */
	int nrails; /* routes per route line: the first line's (0: no line yet) */
	int switched; /* some route crosses a switch */
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		h = (h ^ *c++) * 1099511628211ull;
	return h;
}

static uint64_t name_hash(const char *name)
{
	return hash_bytes(1469598103934665603ull, name, strlen(name));
}

static uint64_t pair_hash(int from, int to)
{
	int pair[2] = { from, to };

	return hash_bytes(1469598103934665603ull, pair, sizeof(pair));
}

/* The slot of name, or the empty slot where it would go. */
static size_t name_slot(const struct bip_database *db, const char *name)
{
	size_t k = (size_t)name_hash(name) & db->name_index.mask;

	while (db->name_index.slot[k] && strcmp(db->names[db->name_index.slot[k] - 1], name))
		k = (k + 1) & db->name_index.mask;
	return k;
}

/* The slot of the pair's first route, or the empty slot where it would go. */
static size_t route_slot(const struct bip_database *db, int from, int to)
{
	size_t k = (size_t)pair_hash(from, to) & db->route_index.mask;

	while (db->route_index.slot[k]) {
		const struct db_route *r = &db->routes[db->route_index.slot[k] - 1];

		if (r->from == from && r->to == to)
			break;
		k = (k + 1) & db->route_index.mask;
	}
	return k;
}

/* Room for count entries in an index at most half full, rehashed with
 * slot_of; 0 or -ENOMEM. */
static int index_grow(struct bip_database *db, struct db_index *ix, int count,
		      size_t (*slot_of)(const struct bip_database *db, int entry))
{
	struct db_index old = *ix;
	size_t slots = ix->slot ? ix->mask + 1 : 0, i;

	if (2 * (size_t)count <= slots)
		return 0;
	slots = slots ? 2 * slots : 64;
	while (slots < 2 * (size_t)count)
		slots *= 2;
	ix->slot = calloc(slots, sizeof(*ix->slot));
	if (!ix->slot) {
		*ix = old;
		return -ENOMEM;
	}
	ix->mask = slots - 1;
	for (i = 0; old.slot && i <= old.mask; i++)
		if (old.slot[i])
			ix->slot[slot_of(db, old.slot[i] - 1)] = old.slot[i];
	free(old.slot);
	return 0;
}

static size_t name_slot_of(const struct bip_database *db, int entry)
{
	return name_slot(db, db->names[entry]);
}

static size_t route_slot_of(const struct bip_database *db, int entry)
{
	return route_slot(db, db->routes[entry].from, db->routes[entry].to);
}

/* The number of name, or -1. */
static int find_name(const struct bip_database *db, const char *name)
{
	size_t k;

	if (!db->name_index.slot)
		return -1;
	k = name_slot(db, name);
	return db->name_index.slot[k] - 1;
}

/* The number of name, added if new; -ENOMEM. */
static int add_name(struct bip_database *db, const char *name)
{
	int found = find_name(db, name);
	char *copy;

	if (found >= 0)
		return found;
	if (index_grow(db, &db->name_index, db->nnames + 1, name_slot_of) < 0 ||
	    bip_array_grow((void **)&db->names, db->nnames, sizeof(*db->names)) < 0 ||
	    bip_array_grow((void **)&db->declared, db->nnames, sizeof(*db->declared)) < 0)
		return -ENOMEM;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	db->names[db->nnames] = copy;
	db->declared[db->nnames] = 0;
	db->name_index.slot[name_slot(db, name)] = db->nnames + 1;
	return db->nnames++;
}

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
	int k = find_name(db, host);

	return k >= 0 && db->declared[k];
}

int bip_database_route(const struct bip_database *db, const char *from, const char *to,
		       struct bip_route *route)
{
	return bip_database_route_rail(db, from, to, 0, route);
}

int bip_database_route_rail(const struct bip_database *db, const char *from, const char *to,
			    int rail, struct bip_route *route)
{
	int a = find_name(db, from), b = find_name(db, to);
	size_t k;

	if (rail < 0 || rail >= bip_database_rails(db) || a < 0 || b < 0 ||
	    !db->route_index.slot)
		return -ENOENT;
	k = route_slot(db, a, b);
	if (!db->route_index.slot[k])
		return -ENOENT;
	*route = db->routes[db->route_index.slot[k] - 1].route[rail];
	return 0;
}

int bip_database_all_direct(const struct bip_database *db)
{
	return !db->switched;
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
	int k;

	if (strlen(host) >= BIP_CONF_HOSTLEN || !*host || strpbrk(host, " \t\r\n#"))
		return -EINVAL;
	k = add_name(db, host);
	if (k < 0)
		return k;
	if (db->declared[k])
		return 0;
	if (bip_array_grow((void **)&db->hosts, db->nhosts, sizeof(*db->hosts)) < 0)
		return -ENOMEM;
	db->declared[k] = 1;
	db->hosts[db->nhosts++] = k;
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
	int k, a, b;
	size_t slot;

	if (strlen(from) >= BIP_CONF_HOSTLEN || strlen(to) >= BIP_CONF_HOSTLEN || nrails < 1 ||
	    nrails > BIP_CONF_MAXRAILS || (db->nrails && nrails != db->nrails))
		return -EINVAL;
	for (k = 0; k < nrails; k++)
		if (routes[k].nhops < 1 || routes[k].nhops > BIP_CONF_MAXHOPS)
			return -EINVAL;
	a = add_name(db, from);
	b = a < 0 ? a : add_name(db, to);
	if (b < 0)
		return b;
	if (index_grow(db, &db->route_index, db->nroutes + 1, route_slot_of) < 0 ||
	    bip_array_grow((void **)&db->routes, db->nroutes, sizeof(*db->routes)) < 0)
		return -ENOMEM;
	r = &db->routes[db->nroutes];
	memset(r, 0, sizeof(*r));
	r->from = a;
	r->to = b;
	for (k = 0; k < nrails; k++) {
		r->route[k] = routes[k];
		db->switched |= !bip_route_is_direct(&routes[k]);
	}
	/* A pair given twice is found by its first line, and written twice. */
	slot = route_slot(db, a, b);
	if (!db->route_index.slot[slot])
		db->route_index.slot[slot] = db->nroutes + 1;
	db->nroutes++;
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
		fprintf(f, "host %s\n", db->names[db->hosts[i]]);
	for (i = 0; i < db->nroutes; i++) {
		const struct db_route *r = &db->routes[i];

		fprintf(f, "route %s %s", db->names[r->from], db->names[r->to]);
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
	while (db->nnames > 0)
		free(db->names[--db->nnames]);
	free(db->names);
	free(db->declared);
	free(db->name_index.slot);
	free(db->topology);
	free(db->hosts);
	free(db->routes);
	free(db->route_index.slot);
	free(db);
}
