/* SPDX-License-Identifier: MIT */
/*
 * clusters.c - clusters of clusters in the configuration (conf.h,
 * bipconf(5) "Clusters"), after MetaMPICH's meta configuration: the
 * statements that may follow the nodes, their checks, and the chain of
 * gateways between two clusters.
 *
 *   cluster NAME DRIVER HOST...
 *       the hosts of a cluster and the driver its nodes use between them;
 *       every host of the nodes is in exactly one cluster once one is named
 *   gateway CLUSTER:HOST CLUSTER:HOST DRIVER
 *       HOST of the first cluster is joined to HOST of the second by the
 *       network DRIVER; both clusters are named above, each host is in its
 *       cluster, and a pair of hosts is named once
 *   relays K
 *       the last K nodes are the relays of gateway hosts, one per host at
 *       most, that forward messages between clusters (fwd.c); bipload adds
 *       them and writes this statement into the job's configuration
 *
 * Once all are read, every two clusters must be joined by some chain of
 * gateways.  The chain from one cluster to another is a breadth-first
 * search over the clusters, the gateways tried in the file's order: the
 * fewest gateways, and the lowest-numbered at each step.
 *
 * conf.c hands these statements here, and this file builds on conf.c's
 * helpers: one parser in two files, a circle inside conf/ that stays.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* The drivers a cluster or a gateway may name (bip(7), BIP_NIC); shm
 * joins the processes of one host only, so no gateway uses it. */
static const char *const cluster_drivers[] = { "shm", "lanai", "ofi", "psm2" };

#define CLUSTERS_MAX 256
#define GATEWAYS_MAX 4096

static int fail(char *err, size_t errlen, const char *name, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t errlen, const char *name, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err, errlen, "%s:%d: %s", name, line, msg);
	else
		snprintf(err, errlen, "%s: %s", name, msg);
	return -EINVAL;
}

static int valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= BIP_CONF_NAMELEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

static int valid_driver(const char *s, int gateway)
{
	size_t i;

	for (i = 0; i < sizeof(cluster_drivers) / sizeof(cluster_drivers[0]); i++)
		if (!strcmp(s, cluster_drivers[i]))
			return !(gateway && i == 0);
	return 0;
}

static int find_cluster(const struct bip_conf *conf, const char *name)
{
	int i;

	for (i = 0; i < conf->nclusters; i++)
		if (!strcmp(conf->clusters[i].name, name))
			return i;
	return -1;
}

/* The cluster of host, or -1 (only the nodes' hosts are in clusters). */
static int cluster_of_host(const struct bip_conf *conf, const struct bip_conf_hosts *hosts,
			   const char *host)
{
	int h = bip_conf_hosts_find(conf, hosts, host);

	return h < 0 ? -1 : conf->cluster_of[hosts->first[h]];
}

static int host_is_node(const struct bip_conf *conf, const struct bip_conf_hosts *hosts,
			const char *host)
{
	return bip_conf_hosts_find(conf, hosts, host) >= 0;
}

/* The next word of *p (blank-separated, up to a '#'), or NULL. */
static char *word(char **p)
{
	char *s = *p, *w;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	if (!*s || *s == '#')
		return NULL;
	w = s;
	while (*s && *s != ' ' && *s != '\t' && *s != '\r')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return w;
}

static int statement_cluster(struct bip_conf *conf, const struct bip_conf_hosts *hosts,
			     char *rest, const char *name, int line, char *err, size_t errlen)
{
	const char *cname = word(&rest), *driver = word(&rest), *host;
	struct bip_conf_cluster *c;
	int i, k, named = 0;

	if (!cname || !driver)
		return fail(err, errlen, name, line,
			    "expected \"cluster NAME DRIVER HOST...\"");
	if (!valid_name(cname))
		return fail(err, errlen, name, line,
			    "cluster name \"%s\": 1 to %d letters, digits, '_', '-' or '.'",
			    cname, BIP_CONF_NAMELEN - 1);
	if ((k = find_cluster(conf, cname)) >= 0)
		return fail(err, errlen, name, line, "cluster %s is named twice (line %d)",
			    cname, conf->clusters[k].line);
	if (!valid_driver(driver, 0))
		return fail(err, errlen, name, line,
			    "cluster %s: driver \"%s\" is not shm, lanai, ofi or psm2", cname,
			    driver);
	if (conf->nclusters == CLUSTERS_MAX)
		return fail(err, errlen, name, line, "more than %d clusters", CLUSTERS_MAX);
	if (!conf->cluster_of) {
		conf->cluster_of = malloc((size_t)conf->n * sizeof(*conf->cluster_of));
		if (!conf->cluster_of)
			return fail(err, errlen, name, line, "out of memory");
		for (i = 0; i < conf->n; i++)
			conf->cluster_of[i] = -1;
	}
	if (bip_array_grow((void **)&conf->clusters, conf->nclusters, sizeof(*conf->clusters)))
		return fail(err, errlen, name, line, "out of memory");
	k = conf->nclusters;
	while ((host = word(&rest))) {
		int h = bip_conf_hosts_find(conf, hosts, host), was;

		if (h < 0)
			return fail(err, errlen, name, line,
				    "cluster %s: host %s runs none of the %d nodes", cname, host,
				    conf->n);
		/* The nodes of a host are in one cluster: its first node's. */
		was = conf->cluster_of[hosts->first[h]];
		if (was >= 0 && was != k)
			return fail(err, errlen, name, line,
				    "host %s is in cluster %s already (line %d)", host,
				    conf->clusters[was].name, conf->clusters[was].line);
		for (i = hosts->first[h]; i >= 0; i = hosts->next[i])
			conf->cluster_of[i] = k;
		named++;
	}
	if (!named)
		return fail(err, errlen, name, line, "cluster %s names no host", cname);
	c = &conf->clusters[k];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", cname);
	snprintf(c->driver, sizeof(c->driver), "%s", driver);
	c->line = line;
	conf->nclusters++;
	return 0;
}

/* "CLUSTER:HOST" of a gateway statement, into its cluster and host. */
static int gateway_end(const struct bip_conf *conf, const struct bip_conf_hosts *hosts,
		       char *end, int *cluster, char *host, const char *name, int line, char *err,
		       size_t errlen)
{
	char *colon = end ? strchr(end, ':') : NULL;

	if (!colon || colon == end || !colon[1])
		return fail(err, errlen, name, line,
			    "expected \"gateway CLUSTER:HOST CLUSTER:HOST DRIVER\"");
	*colon = '\0';
	*cluster = find_cluster(conf, end);
	if (*cluster < 0)
		return fail(err, errlen, name, line,
			    "gateway: no cluster named %s above this line", end);
	if (strlen(colon + 1) >= BIP_CONF_HOSTLEN)
		return fail(err, errlen, name, line, "gateway: host name too long");
	if (cluster_of_host(conf, hosts, colon + 1) != *cluster)
		return fail(err, errlen, name, line, "gateway: host %s is not in cluster %s%s",
			    colon + 1, end,
			    host_is_node(conf, hosts, colon + 1) ? "" : " (it runs no node)");
	snprintf(host, BIP_CONF_HOSTLEN, "%s", colon + 1);
	return 0;
}

static int statement_gateway(struct bip_conf *conf, const struct bip_conf_hosts *hosts,
			     char *rest, const char *name, int line, char *err, size_t errlen)
{
	char *a = word(&rest), *b = word(&rest), *driver = word(&rest);
	struct bip_conf_gateway g;
	int i, rc;

	if (!a || !b || !driver || word(&rest))
		return fail(err, errlen, name, line,
			    "expected \"gateway CLUSTER:HOST CLUSTER:HOST DRIVER\"");
	memset(&g, 0, sizeof(g));
	if ((rc = gateway_end(conf, hosts, a, &g.cluster[0], g.host[0], name, line, err,
			      errlen)) ||
	    (rc = gateway_end(conf, hosts, b, &g.cluster[1], g.host[1], name, line, err,
			      errlen)))
		return rc;
	if (g.cluster[0] == g.cluster[1])
		return fail(err, errlen, name, line,
			    "gateway: both hosts are in cluster %s; a gateway joins two",
			    conf->clusters[g.cluster[0]].name);
	if (!valid_driver(driver, 1))
		return fail(err, errlen, name, line,
			    "gateway: driver \"%s\" is not lanai, ofi or psm2 (shm joins the "
			    "processes of one host only)", driver);
	for (i = 0; i < conf->ngateways; i++) {
		const struct bip_conf_gateway *o = &conf->gateways[i];

		if ((!strcmp(o->host[0], g.host[0]) && !strcmp(o->host[1], g.host[1])) ||
		    (!strcmp(o->host[0], g.host[1]) && !strcmp(o->host[1], g.host[0])))
			return fail(err, errlen, name, line,
				    "gateway %s - %s is named twice (line %d)", g.host[0],
				    g.host[1], o->line);
	}
	if (conf->ngateways == GATEWAYS_MAX)
		return fail(err, errlen, name, line, "more than %d gateways", GATEWAYS_MAX);
	if (bip_array_grow((void **)&conf->gateways, conf->ngateways, sizeof(*conf->gateways)))
		return fail(err, errlen, name, line, "out of memory");
	snprintf(g.driver, sizeof(g.driver), "%s", driver);
	g.line = line;
	conf->gateways[conf->ngateways++] = g;
	return 0;
}

static int statement_relays(struct bip_conf *conf, char *rest, const char *name, int line,
			    char *err, size_t errlen)
{
	const char *k = word(&rest);
	char *end;
	long v;

	if (!k || word(&rest))
		return fail(err, errlen, name, line, "expected \"relays K\"");
	if (conf->nrelays)
		return fail(err, errlen, name, line, "relays: given twice");
	v = strtol(k, &end, 10);
	if (*end || end == k || v < 1 || v >= conf->n)
		return fail(err, errlen, name, line,
			    "relays %s: expected a number from 1 to %d (the last nodes, after "
			    "one of the program's at least)", k, conf->n - 1);
	conf->nrelays = (int)v;
	return 0;
}

/* 1 if host is an end of some gateway. */
static int gateway_host(const struct bip_conf *conf, const char *host)
{
	int i;

	for (i = 0; i < conf->ngateways; i++)
		if (!strcmp(conf->gateways[i].host[0], host) ||
		    !strcmp(conf->gateways[i].host[1], host))
			return 1;
	return 0;
}

int bip_conf_relay_of(const struct bip_conf *conf, const char *host)
{
	int i;

	for (i = bip_conf_app_nodes(conf); i < conf->n - conf->grown; i++)
		if (!strcmp(conf->nodes[i].host, host))
			return i;
	return -1;
}

int bip_conf_direct(const struct bip_conf *conf, int a, int b)
{
	int i, ca, cb;

	if (!conf->nclusters)
		return 1;
	ca = conf->cluster_of[a];
	cb = conf->cluster_of[b];
	if (ca == cb && ca >= 0)
		return 1;
	if (!bip_conf_is_relay(conf, a) || !bip_conf_is_relay(conf, b))
		return 0;
	for (i = 0; i < conf->ngateways; i++) {
		const struct bip_conf_gateway *g = &conf->gateways[i];
		const char *ha = conf->nodes[a].host, *hb = conf->nodes[b].host;

		if ((!strcmp(g->host[0], ha) && !strcmp(g->host[1], hb)) ||
		    (!strcmp(g->host[0], hb) && !strcmp(g->host[1], ha)))
			return 1;
	}
	return 0;
}

void bip_conf_set_host(struct bip_conf *conf, int node, const char *host)
{
	int i;

	snprintf(conf->nodes[node].host, sizeof(conf->nodes[node].host), "%s", host);
	if (!conf->cluster_of)
		return;
	conf->cluster_of[node] = -1;
	for (i = 0; i < conf->n - conf->grown; i++)
		if (!strcmp(conf->nodes[i].host, host)) {
			conf->cluster_of[node] = conf->cluster_of[i];
			break;
		}
}

/* The relays' checks: each on a gateway host, one per host. */
static int relays_finish(const struct bip_conf *conf, const char *name, char *err,
			 size_t errlen)
{
	int i, j, first = conf->n - conf->nrelays;

	if (!conf->nrelays)
		return 0;
	if (!conf->ngateways)
		return fail(err, errlen, name, 0, "relays %d: the file names no gateway",
			    conf->nrelays);
	for (i = first; i < conf->n; i++) {
		if (!gateway_host(conf, conf->nodes[i].host))
			return fail(err, errlen, name, conf->nodes[i].line,
				    "node %d is a relay (relays %d), but its host %s is no "
				    "gateway's", i, conf->nrelays, conf->nodes[i].host);
		for (j = first; j < i; j++)
			if (!strcmp(conf->nodes[j].host, conf->nodes[i].host))
				return fail(err, errlen, name, conf->nodes[i].line,
					    "nodes %d and %d are both relays of host %s", j, i,
					    conf->nodes[i].host);
	}
	return 0;
}

int bip_conf_add_relays(struct bip_conf *conf)
{
	int add = 0, i, e, n = conf->n, j, r;
	const char **hosts = malloc(2 * (size_t)conf->ngateways * sizeof(*hosts) + 1);
	struct bip_conf_node *nodes;
	struct bip_route *routes = NULL;
	struct bip_conf_hosts index;
	int *cluster_of;

	if (!hosts)
		return -ENOMEM;
	if (bip_conf_hosts_build(conf, &index) < 0) {
		free(hosts);
		return -ENOMEM;
	}
	/* Both hosts of every gateway run a node (the parser and
	 * bip_conf_truncate see to it). */
	for (i = 0; i < conf->ngateways; i++) {
		for (e = 0; e < 2; e++) {
			const char *h = conf->gateways[i].host[e];
			int dup = bip_conf_relay_of(conf, h) >= 0;

			for (j = 0; j < add && !dup; j++)
				dup = !strcmp(hosts[j], h);
			if (!dup)
				hosts[add++] = h;
		}
	}
	if (!add) {
		bip_conf_hosts_free(&index);
		free(hosts);
		return 0;
	}
	nodes = calloc((size_t)(n + add), sizeof(*nodes));
	/* A table only if the configuration has one: a relay's routes are
	 * direct, like every route of a configuration without it. */
	if (conf->routes)
		routes = malloc((size_t)conf->nrails * (size_t)(n + add) * (size_t)(n + add) *
				sizeof(*routes));
	cluster_of = malloc((size_t)(n + add) * sizeof(*cluster_of));
	if (!nodes || (conf->routes && !routes) || !cluster_of) {
		free(nodes);
		free(routes);
		free(cluster_of);
		bip_conf_hosts_free(&index);
		free(hosts);
		return -ENOMEM;
	}
	memcpy(nodes, conf->nodes, (size_t)n * sizeof(*nodes));
	memcpy(cluster_of, conf->cluster_of, (size_t)n * sizeof(*cluster_of));
	for (i = 0; i < add; i++) {
		snprintf(nodes[n + i].host, sizeof(nodes[n + i].host), "%s", hosts[i]);
		cluster_of[n + i] = cluster_of_host(conf, &index, hosts[i]);
	}
	for (r = 0; routes && r < conf->nrails; r++)
		for (i = 0; i < n + add; i++)
			for (j = 0; j < n + add; j++)
				routes[((size_t)r * (n + add) + i) * (n + add) + j] =
				    i < n && j < n ? *bip_conf_route(conf, r, i, j) : bip_route_direct;
	free(conf->nodes);
	free(conf->routes);
	free(conf->cluster_of);
	conf->nodes = nodes;
	conf->routes = routes;
	conf->cluster_of = cluster_of;
	bip_conf_hosts_free(&index);
	free(hosts);
	conf->n = n + add;
	conf->nrelays += add;
	return add;
}

int bip_conf_clusters_statement(struct bip_conf *conf, const struct bip_conf_hosts *hosts,
				const char *text, const char *name, int line, char *err,
				size_t errlen)
{
	char *buf = strdup(text), *rest = buf;
	const char *kw;
	int rc;

	if (!buf)
		return fail(err, errlen, name, line, "out of memory");
	kw = word(&rest);
	if (kw && !strcmp(kw, "cluster"))
		rc = statement_cluster(conf, hosts, rest, name, line, err, errlen);
	else if (kw && !strcmp(kw, "gateway"))
		rc = statement_gateway(conf, hosts, rest, name, line, err, errlen);
	else if (kw && !strcmp(kw, "relays"))
		rc = statement_relays(conf, rest, name, line, err, errlen);
	else
		rc = fail(err, errlen, name, line,
			  "unexpected line after the %d nodes: \"%.200s\" (only cluster, gateway "
			  "and relays statements may follow them)", conf->n, text);
	free(buf);
	return rc;
}

int bip_conf_clusters_finish(struct bip_conf *conf, const char *name, char *err, size_t errlen)
{
	int i, gw;

	if (!conf->nclusters)
		return conf->nrelays ? fail(err, errlen, name, 0, "relays %d: the file names no "
					    "cluster", conf->nrelays) : 0;
	for (i = 0; i < conf->n; i++)
		if (conf->cluster_of[i] < 0)
			return fail(err, errlen, name, conf->nodes[i].line,
				    "host %s (node %d) is in no cluster: once a cluster is named, "
				    "every host is in one", conf->nodes[i].host, i);
	for (i = 1; i < conf->nclusters; i++)
		if (bip_conf_cluster_path(conf, 0, i, &gw, 0) < 0)
			return fail(err, errlen, name, conf->clusters[i].line,
				    "no chain of gateways joins cluster %s to cluster %s",
				    conf->clusters[i].name, conf->clusters[0].name);
	return relays_finish(conf, name, err, errlen);
}

int bip_conf_cluster_path(const struct bip_conf *conf, int a, int b, int *gw, int max)
{
	int *via, *queue, head = 0, tail = 0, n = 0, c, i;

	if (a < 0 || b < 0 || a >= conf->nclusters || b >= conf->nclusters)
		return -1;
	if (a == b)
		return 0;
	via = malloc(2 * (size_t)conf->nclusters * sizeof(*via));
	if (!via)
		return -1;
	queue = via + conf->nclusters;
	/* via[c]: the gateway by which the search reached c; -2 unreached. */
	for (c = 0; c < conf->nclusters; c++)
		via[c] = -2;
	via[a] = -1;
	queue[tail++] = a;
	while (head < tail && via[b] == -2) {
		c = queue[head++];
		for (i = 0; i < conf->ngateways; i++) {
			const struct bip_conf_gateway *g = &conf->gateways[i];
			int other = g->cluster[0] == c ? g->cluster[1] :
				    g->cluster[1] == c ? g->cluster[0] : -1;

			if (other < 0 || via[other] != -2)
				continue;
			via[other] = i;
			queue[tail++] = other;
		}
	}
	if (via[b] == -2) {
		free(via);
		return -1;
	}
	for (c = b; c != a; n++) {
		const struct bip_conf_gateway *g = &conf->gateways[via[c]];

		c = g->cluster[0] == c ? g->cluster[1] : g->cluster[0];
	}
	if (n <= max) {
		/* Walk back from b, filling gw from its end. */
		for (c = b, i = n; c != a;) {
			const struct bip_conf_gateway *g = &conf->gateways[via[c]];

			gw[--i] = via[c];
			c = g->cluster[0] == c ? g->cluster[1] : g->cluster[0];
		}
	}
	free(via);
	return !max || n <= max ? n : -1;
}

int bip_conf_clusters_write(FILE *f, const struct bip_conf *conf)
{
	struct bip_conf_hosts hosts;
	int i, k;

	if (!conf->nclusters && !conf->nrelays)
		return ferror(f) ? -EIO : 0;
	if (bip_conf_hosts_build(conf, &hosts) < 0)
		return -ENOMEM;
	/* bip_conf_truncate leaves no cluster without a node, nor a gateway
	 * on a host without one; a cluster is written at its first node. */
	for (k = 0; k < conf->nclusters; k++) {
		int any = 0;

		/* Each host once, in node order: at its first node. */
		for (i = 0; i < conf->n; i++) {
			if (conf->cluster_of[i] != k || hosts.first[hosts.host_of[i]] != i)
				continue;
			if (!any++)
				fprintf(f, "cluster %s %s", conf->clusters[k].name,
					conf->clusters[k].driver);
			fprintf(f, " %s", conf->nodes[i].host);
		}
		if (any)
			fputc('\n', f);
	}
	for (i = 0; i < conf->ngateways; i++) {
		const struct bip_conf_gateway *g = &conf->gateways[i];

		fprintf(f, "gateway %s:%s %s:%s %s\n", conf->clusters[g->cluster[0]].name,
			g->host[0], conf->clusters[g->cluster[1]].name, g->host[1], g->driver);
	}
	if (conf->nrelays)
		fprintf(f, "relays %d\n", conf->nrelays);
	bip_conf_hosts_free(&hosts);
	return ferror(f) ? -EIO : 0;
}

int bip_conf_clusters_shrink(struct bip_conf *conf)
{
	struct bip_conf_hosts hosts;
	int *keep, i, k = 0, g = 0;

	if (!conf->nclusters)
		return 0;
	keep = calloc((size_t)conf->nclusters, sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	if (bip_conf_hosts_build(conf, &hosts) < 0) {
		free(keep);
		return -ENOMEM;
	}
	/* keep[c]: 1 + c's new index, or 0 when no node is left in it. */
	for (i = 0; i < conf->n; i++)
		keep[conf->cluster_of[i]] = 1;
	for (i = 0; i < conf->nclusters; i++)
		if (keep[i]) {
			conf->clusters[k] = conf->clusters[i];
			keep[i] = ++k;
		}
	for (i = 0; i < conf->n; i++)
		conf->cluster_of[i] = keep[conf->cluster_of[i]] - 1;
	/* A gateway stays while both its hosts run a node, and so while
	 * both its clusters stay. */
	for (i = 0; i < conf->ngateways; i++) {
		struct bip_conf_gateway *gw = &conf->gateways[i];

		if (!host_is_node(conf, &hosts, gw->host[0]) ||
		    !host_is_node(conf, &hosts, gw->host[1]))
			continue;
		gw->cluster[0] = keep[gw->cluster[0]] - 1;
		gw->cluster[1] = keep[gw->cluster[1]] - 1;
		conf->gateways[g++] = *gw;
	}
	conf->nclusters = k;
	conf->ngateways = g;
	bip_conf_hosts_free(&hosts);
	free(keep);
	/* The clusters left must still be joined, as the parser requires. */
	for (i = 1; i < k; i++)
		if (bip_conf_cluster_path(conf, 0, i, NULL, 0) < 0)
			return -EHOSTUNREACH;
	return 0;
}

void bip_conf_clusters_free(struct bip_conf *conf)
{
	free(conf->clusters);
	free(conf->cluster_of);
	free(conf->gateways);
	conf->clusters = NULL;
	conf->cluster_of = NULL;
	conf->gateways = NULL;
	conf->nclusters = conf->ngateways = conf->nrelays = 0;
}

void bip_conf_cluster_hosts(const struct bip_conf *conf, int k, char *buf, size_t len)
{
	struct bip_conf_hosts hosts;
	size_t used = 0;
	int i;

	buf[0] = '\0';
	if (bip_conf_hosts_build(conf, &hosts) < 0)
		return;
	for (i = 0; i < conf->n && used < len; i++)
		if (conf->cluster_of[i] == k && hosts.first[hosts.host_of[i]] == i)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
						 conf->nodes[i].host);
	bip_conf_hosts_free(&hosts);
}

int bip_conf_cluster_chain(const struct bip_conf *conf, int a, int b, char *buf, size_t len)
{
	int gw[CLUSTERS_MAX], n = bip_conf_cluster_path(conf, a, b, gw, CLUSTERS_MAX), i, c = a;
	size_t used = 0;

	if (n < 0) {
		snprintf(buf, len, "none: no chain of gateways");
		return -1;
	}
	if (!n) {
		snprintf(buf, len, "inside cluster %s (%s)", conf->clusters[a].name,
			 conf->clusters[a].driver);
		return 0;
	}
	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		const struct bip_conf_gateway *g = &conf->gateways[gw[i]];
		int from = g->cluster[0] == c ? 0 : 1;

		used += (size_t)snprintf(buf + used, len - used, "%s%s:%s -> %s:%s (%s)",
					 i ? ", " : "", conf->clusters[g->cluster[from]].name,
					 g->host[from], conf->clusters[g->cluster[!from]].name,
					 g->host[!from], g->driver);
		c = g->cluster[!from];
	}
	return n;
}
