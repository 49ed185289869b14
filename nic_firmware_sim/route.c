/* SPDX-License-Identifier: MIT */
/*
 * route.c - where a packet following the configuration's route lands.
 *
 * Nodes on the same host talk through their host's board link without
 * crossing a switch: their route must be 256.  Between hosts, the route is
 * walked through the topology (switch after switch, output port after
 * output port); without a topology file only direct routes (256) exist.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "firmware.h"
#include "topology.h"

static void route_text(const struct bip_route *r, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < r->nhops && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? " " : "", r->hop[i]);
}

int lanai_route_check(const struct bip_conf *conf, const struct bip_topology *topo, int rail,
		      int src, int dst, char *why, size_t whylen)
{
	const struct bip_route *r = bip_conf_route(conf, rail, src, dst);
	const char *from = conf->nodes[src].host, *to = conf->nodes[dst].host, *landed = NULL;
	int direct = r->nhops == 1 && r->hop[0] == BIP_ROUTE_DIRECT;
	char rt[64], w[256];
	int rc, unit = -1;

	route_text(r, rt, sizeof(rt));
	if (!strcmp(from, to)) {
		if (direct)
			return 0;
		snprintf(why, whylen,
			 "route %s from node %d to node %d, both on host %s: nodes "
			 "of one host need no switch (route 256)",
			 rt, src, dst, from);
		return -EHOSTUNREACH;
	}
	if (!topo) {
		if (direct)
			return 0;
		snprintf(why, whylen,
			 "route %s from host %s to host %s: there is no topology "
			 "(BIP_TOPOLOGY, ~/.bip/biptopology), so only direct routes (256) exist",
			 rt, from, to);
		return -EHOSTUNREACH;
	}
	rc = bip_topology_follow_unit(topo, from, rail, r, &landed, &unit, w, sizeof(w));
	if (rc == -ENOENT) {
		snprintf(why, whylen, "route %s from host %s: %s", rt, from, w);
		return -EHOSTUNREACH;
	}
	if (rc < 0) {
		snprintf(why, whylen, "%s, so it cannot reach host %s", w, to);
		return -EHOSTUNREACH;
	}
	if (strcmp(landed, to)) {
		snprintf(why, whylen, "route %s from host %s lands on host %s, not on host %s", rt,
			 from, landed, to);
		return -EHOSTUNREACH;
	}
	if (unit != rail) {
		snprintf(why, whylen,
			 "route %s of rail %d from host %s lands on board %d of host %s, not on "
			 "its board %d",
			 rt, rail, from, unit, to, rail);
		return -EHOSTUNREACH;
	}
	return 0;
}
