/* SPDX-License-Identifier: MIT */
/*
 * topology.h - the cabling of a Myrinet network: which board is cabled to
 * which port of which switch.  biproute computes the routes of the database
 * from it; a simulated wire walks a route through it to find where a packet
 * arrives, or why it cannot.
 *
 * File format (bipconf(5), "The topology"), one statement per line, blank
 * lines and '#' comments ignored:
 *
 *   switch NAME PORTS              a switch with ports 0 .. PORTS-1 (1 .. 64)
 *   link BOARD SWITCH PORT         BOARD is cabled to PORT of SWITCH
 *   link SWITCH PORT SWITCH PORT   two switches cabled together
 *   direct BOARD BOARD             two boards cabled back to back (route 256)
 *
 * where BOARD is HOST/UNIT, board UNIT (0 .. BIP_CONF_MAXRAILS - 1) of
 * HOST, or HOST alone for HOST/0 ('/' is in no host name).  A host's
 * boards of one unit make a network, a rail: rail r is the network of the
 * boards r, and a host with several boards is on several networks.
 *
 * A switch is declared before a link names it.  A port holds at most one
 * cable, a board at most one, and a name is either a host or a switch.
 * Hosts are the names that links and directs give them.
 *
 * A route is what the configuration file holds: the output port taken at
 * each switch crossed, in order (1 to 4 of them), or 256 alone when no switch
 * is crossed (boards cabled back to back, or the route of a host to itself).
 */
#ifndef BIP_TOPOLOGY_H
#define BIP_TOPOLOGY_H

#include <stddef.h>

#include "conf.h"

#define BIP_ENV_TOPOLOGY "BIP_TOPOLOGY" /* topology file, else $HOME/.bip/biptopology */
#define BIP_TOPOLOGY_MAXPORTS 64

struct bip_topology;

/*
 * Read a topology.  On success return 0 and set *topo_p (free it with
 * bip_topology_free).  On failure return a negative errno (-EINVAL for a
 * malformed file, -ENOENT if it does not exist, ...) with "NAME:LINE: what is
 * wrong" (or "NAME: reason") in err; *topo_p is untouched.
 */
int bip_topology_load(const char *path, struct bip_topology **topo_p, char *err, size_t errlen);
/* The same from a text in memory; name stands for the file in messages. */
int bip_topology_parse_string(const char *text, const char *name, struct bip_topology **topo_p,
			      char *err, size_t errlen);

/*
 * Walk route from the board of from_host: each hop is the output port at the
 * next switch.  Return 0 and set *to_host_p (a string owned by topo) to the
 * host whose board the route reaches, or -EHOSTUNREACH with the reason in why
 * (from_host has no cable, a port the switch does not have, no cable on that
 * port, the route leaves a switch through the port it came in, the route
 * reaches a host before its last hop or ends inside a switch, 256 where a
 * switch is cabled, ...), or -ENOENT if from_host is not in the topology.
 * A route of 256 alone reaches the board cabled back to back with from_host;
 * the route of a host to itself never goes on the wire and is not walked.
 * follow and route only read topo: threads may call them at once; follow
 * allocates nothing.
 */
int bip_topology_follow(const struct bip_topology *topo, const char *from_host,
			const struct bip_route *route, const char **to_host_p, char *why,
			size_t whylen);

/* The same from board from_unit of from_host; *to_unit_p: the board the
 * route reaches (-ENOENT also if from_host has no board from_unit). */
int bip_topology_follow_unit(const struct bip_topology *topo, const char *from_host, int from_unit,
			     const struct bip_route *route, const char **to_host_p, int *to_unit_p,
			     char *why, size_t whylen);

/*
 * A shortest route from one host to another, crossing at most
 * BIP_CONF_MAXHOPS switches; among routes of the same length, the one taking
 * the lowest port numbers first.  256 alone for the same host or boards cabled
 * back to back.  Returns 0 and sets *route_p, -ENOENT if a host is not in the
 * topology, -EHOSTUNREACH if no route crosses at most BIP_CONF_MAXHOPS
 * switches (or none at all).
 */
int bip_topology_route(const struct bip_topology *topo, const char *from, const char *to,
		       struct bip_route *route_p);

/* The same between the boards unit of two hosts: the route of rail unit
 * (-ENOENT also if either has no board unit). */
int bip_topology_route_unit(const struct bip_topology *topo, const char *from, const char *to,
			    int unit, struct bip_route *route_p);

/* The rails of the topology: 1 + the highest unit of a board. */
int bip_topology_units(const struct bip_topology *topo);

/* 1 if host is a host of the topology (a switch is not), else 0. */
int bip_topology_has_host(const struct bip_topology *topo, const char *host);
/* The hosts, in the order the file first names them: 0 .. count-1. */
int bip_topology_host_count(const struct bip_topology *topo);
const char *bip_topology_host_name(const struct bip_topology *topo, int i);

void bip_topology_free(struct bip_topology *topo);

/*
 * The topology file: $BIP_TOPOLOGY if set and not empty, else
 * $HOME/.bip/biptopology.  Returns 0, -ENOENT (neither is set) or
 * -ENAMETOOLONG.  The file itself may not exist.
 */
int bip_topology_default_path(char *buf, size_t len);

/* Write a route as the configuration file does ("3 7", "256"). */
int bip_route_format(const struct bip_route *route, char *buf, size_t len);

#endif /* BIP_TOPOLOGY_H */
