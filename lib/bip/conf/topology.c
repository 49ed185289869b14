/* SPDX-License-Identifier: MIT */
/*
 * topology.c - the cabling of a Myrinet network (see topology.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

enum topo_kind {
	TOPO_NONE = 0, /* no cable */
	TOPO_HOST,
	TOPO_SWITCH,
};

/* The far end of a cable. */
struct topo_end {
	enum topo_kind kind;
	int index; /* into hosts[] or switches[] */
	int port;  /* port of the switch, or board (unit) of the host */
	int line;  /* line of the file that laid the cable, for messages */
};

struct topo_host {
	char name[BIP_CONF_HOSTLEN];
	struct topo_end cable[BIP_CONF_MAXRAILS]; /* of each board (unit) */
};

struct topo_switch {
	char name[BIP_CONF_HOSTLEN];
	int nports;
	int line;
	struct topo_end port[BIP_TOPOLOGY_MAXPORTS];
};

struct bip_topology {
	struct topo_host *hosts;
	int nhosts;
	struct topo_switch *switches;
	int nswitches;
	int units; /* 1 + the highest unit of a board */
};

/* The longest statement: link SWITCH PORT SWITCH PORT. */
#define TOPO_MAXFIELDS 5

/* Lines of the text, with the fields of the current one. */
struct topo_reader {
	const char *name;
	const char *p;
	int line;
	char buf[1024];
	char *field[TOPO_MAXFIELDS];
	int nfields; /* TOPO_MAXFIELDS + 1 means "more than that" */
};

static int next_statement(struct topo_reader *r)
{
	while (*r->p) {
		const char *end = strchr(r->p, '\n');
		size_t len = end ? (size_t)(end - r->p) : strlen(r->p);
		char *save = NULL, *tok;

		if (len >= sizeof(r->buf))
			len = sizeof(r->buf) - 1;
		memcpy(r->buf, r->p, len);
		r->buf[len] = '\0';
		r->p = end ? end + 1 : r->p + len;
		r->line++;
		r->nfields = 0;
		for (tok = strtok_r(r->buf, " \t\r", &save); tok;
		     tok = strtok_r(NULL, " \t\r", &save)) {
			if (tok[0] == '#')
				break;
			if (r->nfields == TOPO_MAXFIELDS) {
				r->nfields++;
				break;
			}
			r->field[r->nfields++] = tok;
		}
		if (r->nfields)
			return 1;
	}
	return 0;
}

static int topo_fail(char *err, size_t errlen, const struct topo_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int topo_fail(char *err, size_t errlen, const struct topo_reader *r, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%d: %s", r->name, r->line, msg);
	return -EINVAL;
}

static int find_host(const struct bip_topology *topo, const char *name)
{
	int i;

	for (i = 0; i < topo->nhosts; i++)
		if (!strcmp(topo->hosts[i].name, name))
			return i;
	return -1;
}

static int find_switch(const struct bip_topology *topo, const char *name)
{
	int i;

	for (i = 0; i < topo->nswitches; i++)
		if (!strcmp(topo->switches[i].name, name))
			return i;
	return -1;
}

static int check_name(struct topo_reader *r, const char *what, const char *name, char *err,
		      size_t errlen)
{
	if (strlen(name) >= BIP_CONF_HOSTLEN)
		return topo_fail(err, errlen, r,
				 "%s name \"%.40s...\" is longer than %d characters", what, name,
				 BIP_CONF_HOSTLEN - 1);
	return 0;
}

/* A non-negative number of at most 3 digits, or -1. */
static int parse_small(const char *s)
{
	int v = 0;

	if (!*s || strlen(s) > 3)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* The host of that name, added if new; -EINVAL if the name is a switch's. */
static int host_index(struct bip_topology *topo, struct topo_reader *r, const char *name, char *err,
		      size_t errlen)
{
	int i = find_host(topo, name), rc;

	if (i >= 0)
		return i;
	if (find_switch(topo, name) >= 0)
		return topo_fail(err, errlen, r, "\"%s\" is a switch, not a host", name);
	rc = check_name(r, "host", name, err, errlen);
	if (rc < 0)
		return rc;
	if (bip_array_grow((void **)&topo->hosts, topo->nhosts, sizeof(*topo->hosts)) < 0)
		return -ENOMEM;
	memset(&topo->hosts[topo->nhosts], 0, sizeof(topo->hosts[0]));
	snprintf(topo->hosts[topo->nhosts].name, BIP_CONF_HOSTLEN, "%s", name);
	return topo->nhosts++;
}

/* A free port of a declared switch, as "SWITCH PORT" fields. */
static int switch_port(struct bip_topology *topo, struct topo_reader *r, const char *name,
		       const char *port_s, int *sw_p, int *port_p, char *err, size_t errlen)
{
	int sw = find_switch(topo, name), port;
	const struct topo_switch *s;

	if (sw < 0) {
		if (find_host(topo, name) >= 0)
			return topo_fail(err, errlen, r, "\"%s\" is a host, not a switch", name);
		return topo_fail(err, errlen, r,
				 "unknown switch \"%s\" (declare it first: \"switch %s PORTS\")",
				 name, name);
	}
	s = &topo->switches[sw];
	port = parse_small(port_s);
	if (port < 0 || port >= s->nports)
		return topo_fail(
		    err, errlen, r,
		    "port \"%s\" of switch %s: the ports are 0 to %d (declared line %d)", port_s,
		    name, s->nports - 1, s->line);
	if (s->port[port].kind != TOPO_NONE)
		return topo_fail(err, errlen, r,
				 "port %d of switch %s already has a cable (line %d)", port, name,
				 s->port[port].line);
	*sw_p = sw;
	*port_p = port;
	return 0;
}

static int host_free(struct bip_topology *topo, struct topo_reader *r, int h, int unit,
		     char *err, size_t errlen)
{
	const struct topo_host *host = &topo->hosts[h];

	if (host->cable[unit].kind != TOPO_NONE && !unit)
		return topo_fail(err, errlen, r,
				 "host %s already has its cable (line %d): a board has one (a "
				 "second board of the host is %s/1)",
				 host->name, host->cable[0].line, host->name);
	if (host->cable[unit].kind != TOPO_NONE)
		return topo_fail(err, errlen, r,
				 "board %d of host %s already has its cable (line %d)", unit,
				 host->name, host->cable[unit].line);
	if (unit >= topo->units)
		topo->units = unit + 1;
	return 0;
}

/* "HOST" or "HOST/UNIT": the host's index (added if new) and its board. */
static int board_of(struct bip_topology *topo, struct topo_reader *r, const char *field,
		    int *unit_p, char *err, size_t errlen)
{
	char name[BIP_CONF_HOSTLEN];
	const char *slash = strchr(field, '/');
	size_t len = slash ? (size_t)(slash - field) : strlen(field);
	int unit = 0;

	if (slash) {
		unit = parse_small(slash + 1);
		if (unit < 0 || unit >= BIP_CONF_MAXRAILS || !len)
			return topo_fail(err, errlen, r,
					 "\"%s\": expected HOST or HOST/UNIT, a board 0 to %d", field,
					 BIP_CONF_MAXRAILS - 1);
	}
	if (len >= sizeof(name))
		return check_name(r, "host", field, err, errlen);
	memcpy(name, field, len);
	name[len] = '\0';
	*unit_p = unit;
	return host_index(topo, r, name, err, errlen);
}

static int parse_switch(struct bip_topology *topo, struct topo_reader *r, char *err, size_t errlen)
{
	const char *name;
	struct topo_switch *s;
	int nports, i, rc;

	if (r->nfields != 3)
		return topo_fail(err, errlen, r, "expected \"switch NAME PORTS\"");
	name = r->field[1];
	i = find_switch(topo, name);
	if (i >= 0)
		return topo_fail(err, errlen, r, "switch %s is already declared (line %d)", name,
				 topo->switches[i].line);
	if (find_host(topo, name) >= 0)
		return topo_fail(err, errlen, r, "\"%s\" is already a host, not a switch", name);
	rc = check_name(r, "switch", name, err, errlen);
	if (rc < 0)
		return rc;
	nports = parse_small(r->field[2]);
	if (nports < 1 || nports > BIP_TOPOLOGY_MAXPORTS)
		return topo_fail(err, errlen, r, "switch %s: \"%s\" ports (1 to %d)", name,
				 r->field[2], BIP_TOPOLOGY_MAXPORTS);
	if (bip_array_grow((void **)&topo->switches, topo->nswitches, sizeof(*topo->switches)) < 0)
		return -ENOMEM;
	s = &topo->switches[topo->nswitches++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->nports = nports;
	s->line = r->line;
	return 0;
}

static int parse_link(struct bip_topology *topo, struct topo_reader *r, char *err, size_t errlen)
{
	int sw, port, h, sw2, port2, rc, unit;

	if (r->nfields == 4) {
		/* link HOST SWITCH PORT: check the switch first, so that a
		 * misspelt switch is not taken for a new host. */
		rc = switch_port(topo, r, r->field[2], r->field[3], &sw, &port, err, errlen);
		if (rc < 0)
			return rc;
		h = board_of(topo, r, r->field[1], &unit, err, errlen);
		if (h < 0)
			return h;
		rc = host_free(topo, r, h, unit, err, errlen);
		if (rc < 0)
			return rc;
		topo->hosts[h].cable[unit] = (struct topo_end){TOPO_SWITCH, sw, port, r->line};
		topo->switches[sw].port[port] = (struct topo_end){TOPO_HOST, h, unit, r->line};
		return 0;
	}
	if (r->nfields == 5) {
		rc = switch_port(topo, r, r->field[1], r->field[2], &sw, &port, err, errlen);
		if (rc < 0)
			return rc;
		rc = switch_port(topo, r, r->field[3], r->field[4], &sw2, &port2, err, errlen);
		if (rc < 0)
			return rc;
		if (sw == sw2 && port == port2)
			return topo_fail(err, errlen, r, "port %d of switch %s cabled to itself",
					 port, topo->switches[sw].name);
		topo->switches[sw].port[port] = (struct topo_end){TOPO_SWITCH, sw2, port2, r->line};
		topo->switches[sw2].port[port2] = (struct topo_end){TOPO_SWITCH, sw, port, r->line};
		return 0;
	}
	return topo_fail(err, errlen, r,
			 "expected \"link HOST SWITCH PORT\" or \"link SWITCH PORT SWITCH PORT\"");
}

static int parse_direct(struct bip_topology *topo, struct topo_reader *r, char *err, size_t errlen)
{
	int a, b, ua, ub, rc;

	if (r->nfields != 3)
		return topo_fail(err, errlen, r, "expected \"direct HOST HOST\"");
	a = board_of(topo, r, r->field[1], &ua, err, errlen);
	if (a < 0)
		return a;
	b = board_of(topo, r, r->field[2], &ub, err, errlen);
	if (b < 0)
		return b;
	if (a == b)
		return topo_fail(err, errlen, r, "host %s cabled to itself", topo->hosts[a].name);
	rc = host_free(topo, r, a, ua, err, errlen);
	if (rc < 0)
		return rc;
	rc = host_free(topo, r, b, ub, err, errlen);
	if (rc < 0)
		return rc;
	topo->hosts[a].cable[ua] = (struct topo_end){TOPO_HOST, b, ub, r->line};
	topo->hosts[b].cable[ub] = (struct topo_end){TOPO_HOST, a, ua, r->line};
	return 0;
}

int bip_topology_parse_string(const char *text, const char *name, struct bip_topology **topo_p,
			      char *err, size_t errlen)
{
	struct topo_reader r = {.name = name, .p = text};
	struct bip_topology *topo = calloc(1, sizeof(*topo));
	int rc = 0;

	if (!topo)
		return -ENOMEM;
	topo->units = 1;
	while (next_statement(&r)) {
		const char *kw = r.field[0];

		if (r.nfields > TOPO_MAXFIELDS)
			rc = topo_fail(err, errlen, &r, "too many fields in a %s line", kw);
		else if (!strcmp(kw, "switch"))
			rc = parse_switch(topo, &r, err, errlen);
		else if (!strcmp(kw, "link"))
			rc = parse_link(topo, &r, err, errlen);
		else if (!strcmp(kw, "direct"))
			rc = parse_direct(topo, &r, err, errlen);
		else
			rc = topo_fail(err, errlen, &r,
				       "unknown keyword \"%s\" (expected switch, link or direct)",
				       kw);
		if (rc == -ENOMEM)
			snprintf(err, errlen, "%s:%d: out of memory", name, r.line);
		if (rc < 0)
			goto free_topo;
	}
	*topo_p = topo;
	return 0;
free_topo:
	bip_topology_free(topo);
	return rc;
}

int bip_topology_load(const char *path, struct bip_topology **topo_p, char *err, size_t errlen)
{
	char *text;
	int rc = bip_file_read_text(path, &text, err, errlen);

	if (rc < 0)
		return rc;
	rc = bip_topology_parse_string(text, path, topo_p, err, errlen);
	free(text);
	return rc;
}

void bip_topology_free(struct bip_topology *topo)
{
	if (!topo)
		return;
	free(topo->hosts);
	free(topo->switches);
	free(topo);
}

int bip_topology_has_host(const struct bip_topology *topo, const char *host)
{
	return find_host(topo, host) >= 0;
}

int bip_topology_host_count(const struct bip_topology *topo)
{
	return topo->nhosts;
}

const char *bip_topology_host_name(const struct bip_topology *topo, int i)
{
	if (i < 0 || i >= topo->nhosts)
		return NULL;
	return topo->hosts[i].name;
}

int bip_route_format(const struct bip_route *route, char *buf, size_t len)
{
	size_t used = 0;
	int i, n;

	if (route->nhops < 1 || route->nhops > BIP_CONF_MAXHOPS)
		return -EINVAL;
	for (i = 0; i < route->nhops; i++) {
		n = snprintf(buf + used, len - used, "%s%d", i ? " " : "", route->hop[i]);
		if (n < 0 || (size_t)n >= len - used)
			return -ENAMETOOLONG;
		used += (size_t)n;
	}
	return 0;
}

/* Why a route from a host reaches no host: "route \"7 3\" from a: ...". */
static int unreachable(char *why, size_t whylen, const struct bip_route *route, const char *from,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int unreachable(char *why, size_t whylen, const struct bip_route *route, const char *from,
		       const char *fmt, ...)
{
	char text[64], msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (bip_route_format(route, text, sizeof(text)) < 0)
		snprintf(why, whylen, "route from %s: %s", from, msg);
	else
		snprintf(why, whylen, "route \"%s\" from %s: %s", text, from, msg);
	return -EHOSTUNREACH;
}

int bip_topology_follow(const struct bip_topology *topo, const char *from_host,
			const struct bip_route *route, const char **to_host_p, char *why,
			size_t whylen)
{
	int unit;

	return bip_topology_follow_unit(topo, from_host, 0, route, to_host_p, &unit, why, whylen);
}

int bip_topology_follow_unit(const struct bip_topology *topo, const char *from_host, int from_unit,
			     const struct bip_route *route, const char **to_host_p, int *to_unit_p,
			     char *why, size_t whylen)
{
	struct topo_end at;
	int h = find_host(topo, from_host), i;

	if (h < 0) {
		snprintf(why, whylen, "host %s is not in the topology", from_host);
		return -ENOENT;
	}
	if (from_unit < 0 || from_unit >= BIP_CONF_MAXRAILS ||
	    (from_unit > 0 && topo->hosts[h].cable[from_unit].kind == TOPO_NONE)) {
		snprintf(why, whylen, "host %s has no board %d in the topology", from_host,
			 from_unit);
		return -ENOENT;
	}
	if (route->nhops < 1 || route->nhops > BIP_CONF_MAXHOPS)
		return unreachable(why, whylen, route, from_host, "%d hops, not 1 to %d",
				   route->nhops, BIP_CONF_MAXHOPS);
	at = topo->hosts[h].cable[from_unit];
	if (at.kind == TOPO_NONE)
		return unreachable(why, whylen, route, from_host, "%s has no cable", from_host);
	if (route->hop[0] == BIP_ROUTE_DIRECT) {
		if (route->nhops > 1)
			return unreachable(why, whylen, route, from_host, "256 must be alone");
		if (at.kind == TOPO_SWITCH)
			return unreachable(why, whylen, route, from_host,
					   "no switch on the way, but %s is cabled to port %d of "
					   "switch %s",
					   from_host, at.port, topo->switches[at.index].name);
		*to_host_p = topo->hosts[at.index].name;
		*to_unit_p = at.port;
		return 0;
	}
	if (at.kind == TOPO_HOST)
		return unreachable(why, whylen, route, from_host,
				   "%s is cabled back to back with %s, not to a switch (its route "
				   "is 256)",
				   from_host, topo->hosts[at.index].name);
	for (i = 0; i < route->nhops; i++) {
		const struct topo_switch *s = &topo->switches[at.index];
		int out = route->hop[i];

		if (out < 0 || out >= s->nports)
			return unreachable(why, whylen, route, from_host,
					   "hop %d: switch %s has no port %d (ports 0 to %d)",
					   i + 1, s->name, out, s->nports - 1);
		if (out == at.port)
			return unreachable(why, whylen, route, from_host,
					   "hop %d: leaves switch %s through port %d, the one it "
					   "came in",
					   i + 1, s->name, out);
		if (s->port[out].kind == TOPO_NONE)
			return unreachable(why, whylen, route, from_host,
					   "hop %d: no cable on port %d of switch %s", i + 1, out,
					   s->name);
		at = s->port[out];
		if (at.kind == TOPO_HOST) {
			if (i + 1 < route->nhops)
				return unreachable(why, whylen, route, from_host,
						   "too long: hop %d reaches host %s, %d hop(s) "
						   "remain",
						   i + 1, topo->hosts[at.index].name,
						   route->nhops - i - 1);
			*to_host_p = topo->hosts[at.index].name;
			*to_unit_p = at.port;
			return 0;
		}
	}
	return unreachable(why, whylen, route, from_host,
			   "too short: ends inside switch %s (came in through port %d)",
			   topo->switches[at.index].name, at.port);
}

/*
 * Breadth-first over the switches, ports in increasing order: the first time
 * a switch is reached is by a shortest path, and the smallest such in the
 * order of its ports, since the queue stays in that order level by level.
 */
int bip_topology_route(const struct bip_topology *topo, const char *from, const char *to,
		       struct bip_route *route_p)
{
	return bip_topology_route_unit(topo, from, to, 0, route_p);
}

int bip_topology_route_unit(const struct bip_topology *topo, const char *from, const char *to,
			    int unit, struct bip_route *route_p)
{
	int f = find_host(topo, from), t = find_host(topo, to);
	int *prev, *prev_port, *depth, *queue;
	int head = 0, tail = 0, src, dst, sw, p, n, rc = -EHOSTUNREACH;
	struct bip_route route = {.nhops = 1, .hop = {BIP_ROUTE_DIRECT}};

	const struct topo_end *fc, *tc;

	if (f < 0 || t < 0 || unit < 0 || unit >= BIP_CONF_MAXRAILS)
		return -ENOENT;
	if (f == t) {
		*route_p = route;
		return 0;
	}
	fc = &topo->hosts[f].cable[unit];
	tc = &topo->hosts[t].cable[unit];
	if (fc->kind == TOPO_NONE || tc->kind == TOPO_NONE)
		return unit ? -ENOENT : -EHOSTUNREACH;
	if (fc->kind == TOPO_HOST && fc->index == t && fc->port == unit) {
		*route_p = route;
		return 0;
	}
	if (fc->kind != TOPO_SWITCH || tc->kind != TOPO_SWITCH)
		return -EHOSTUNREACH;
	src = fc->index;
	dst = tc->index;

	n = topo->nswitches;
	prev = malloc(4 * (size_t)n * sizeof(int));
	if (!prev)
		return -ENOMEM;
	prev_port = prev + n;
	depth = prev + 2 * n;
	queue = prev + 3 * n;
	for (sw = 0; sw < n; sw++)
		depth[sw] = -1;
	depth[src] = 1; /* switches crossed when leaving this one */
	prev[src] = -1;
	queue[tail++] = src;
	while (head < tail && depth[dst] < 0) {
		const struct topo_switch *s;

		sw = queue[head++];
		s = &topo->switches[sw];
		if (depth[sw] == BIP_CONF_MAXHOPS)
			continue;
		for (p = 0; p < s->nports; p++) {
			const struct topo_end *e = &s->port[p];

			if (e->kind != TOPO_SWITCH || depth[e->index] >= 0)
				continue;
			depth[e->index] = depth[sw] + 1;
			prev[e->index] = sw;
			prev_port[e->index] = p;
			queue[tail++] = e->index;
		}
	}
	if (depth[dst] > 0) {
		route.nhops = depth[dst];
		route.hop[route.nhops - 1] = tc->port;
		for (sw = dst, n = route.nhops - 2; prev[sw] >= 0; sw = prev[sw], n--)
			route.hop[n] = prev_port[sw];
		*route_p = route;
		rc = 0;
	}
	free(prev);
	return rc;
}

int bip_topology_default_path(char *buf, size_t len)
{
	const char *env = getenv(BIP_ENV_TOPOLOGY), *home = getenv("HOME");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.bip/biptopology", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int bip_topology_units(const struct bip_topology *topo)
{
	return topo->units;
}
