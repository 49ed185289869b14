/* SPDX-License-Identifier: MIT */
/*
 * bipdatabase.h - the routing database $HOME/.bip/bipdatabase, written by
 * biproute and read by bipconf (format in bipconf(5)):
 *
 *   # comment
 *   host NAME                    a host of the network
 *   route FROM TO HOP [HOP...]   1 to 4 switch ports, or 256 alone (direct)
 */
#ifndef BIP_DATABASE_H
#define BIP_DATABASE_H

#include <stddef.h>

#include "conf.h"

struct bip_database;

/* 0, -ENOENT if the file does not exist, or another negative errno with
 * "file:line: ..." in err. */
int bip_database_load(const char *path, struct bip_database **db_p, char *err, size_t errlen);
int bip_database_has(const struct bip_database *db, const char *host);
/* The route from one host to another: 0, or -ENOENT if the database has none. */
int bip_database_route(const struct bip_database *db, const char *from, const char *to,
		       struct bip_route *route);
void bip_database_free(struct bip_database *db);

#endif /* BIP_DATABASE_H */
