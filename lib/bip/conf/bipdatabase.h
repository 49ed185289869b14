/* SPDX-License-Identifier: MIT */
/*
 * bipdatabase.h - the routing database $HOME/.bip/bipdatabase, written by
 * biproute and read by bipconf (format in bipconf(5)):
 *
 *   # comment
 *   host NAME                    a host of the network
 *   route FROM TO HOP [HOP...]   1 to 4 switch ports, or 256 alone (direct)
 *         [/ HOP [HOP...]] ...   and the route of each further rail
 *
 * Every route line holds the same number of routes, one per rail (the
 * networks of the hosts' boards 0, 1, ...: topology.h), as the lines of a
 * configuration do.
 * A comment "# topology: FILE" records the topology the routes were computed
 * from (none: the hosts are on an IP network and every route is 256).  It is
 * a comment so that any reader of the format accepts the file.
 *
 * For an IP network biproute writes the hosts and no route line: the
 * database grows with the hosts, not with their pairs.  In a database
 * without a topology, a pair without a route line is direct (256); with
 * one, it has no route.
 */
#ifndef BIP_DATABASE_H
#define BIP_DATABASE_H

#include <stddef.h>
#include <stdio.h>

#include "conf.h"

struct bip_database;

/* 0, -ENOENT if the file does not exist, or another negative errno with
 * "file:line: ..." in err. */
int bip_database_load(const char *path, struct bip_database **db_p, char *err, size_t errlen);
/* The same from an open file, named name in messages. */
int bip_database_read(FILE *f, const char *name, struct bip_database **db_p, char *err,
		      size_t errlen);
int bip_database_has(const struct bip_database *db, const char *host);
/* The route from one host to another: 0, or -ENOENT if the database has none. */
int bip_database_route(const struct bip_database *db, const char *from, const char *to,
		       struct bip_route *route);
/* The same on one rail; bip_database_rails: routes per line (1 if none). */
int bip_database_route_rail(const struct bip_database *db, const char *from, const char *to,
			    int rail, struct bip_route *route);
int bip_database_rails(const struct bip_database *db);
/* 1 if no route line of db crosses a switch (every route given is 256). */
int bip_database_all_direct(const struct bip_database *db);
/* The topology file recorded in the database, or NULL. */
const char *bip_database_topology(const struct bip_database *db);

/* An empty database; topology may be NULL. */
int bip_database_create(const char *topology, struct bip_database **db_p);
/* Add a host (once: a host already there is not added again), a route. */
int bip_database_add_host(struct bip_database *db, const char *host);
int bip_database_add_route(struct bip_database *db, const char *from, const char *to,
			   const struct bip_route *route);
/* The routes of nrails rails (every route of the database has as many). */
int bip_database_add_route_rails(struct bip_database *db, const char *from, const char *to,
				 const struct bip_route *routes, int nrails);
/* Write db in the format above; 0 or a negative errno. */
int bip_database_write(FILE *f, const struct bip_database *db);

void bip_database_free(struct bip_database *db);

#endif /* BIP_DATABASE_H */
