/* SPDX-License-Identifier: MIT */
/*
 * conf.h - the BIP configuration file (manual section 5), BIP_OPTS, and the
 * start-up environment.  One parser, shared by libbip and the commands
 * (bipconf, biproute, bipload).
 *
 * File format: the first line holds the node count n; then, for each node,
 * a line "hostname unit" followed by n route lines of 1 to 4 numbers (a
 * single 256 means no switch, also used for the route to itself).  Blank
 * lines and lines whose first non-blank character is '#' are ignored.
 *
 * Rails: a host whose nodes have several boards, each on a network of its
 * own, gives on each route line the route of every rail, rail 0 first,
 * separated by '/' ("7 0 / 3 0").  Every route line holds the same number
 * of routes, 1 to BIP_CONF_MAXRAILS; a file without '/' has one rail.
 *
 * Direct routes (bipconf(5) "Every route direct"): a file whose routes are
 * all 256 may say so on the line after the count, "routes direct" (and
 * "/ direct" for each further rail), and then gives its nodes without route
 * lines: n + 2 lines instead of n * (n + 1) + 1.  No file of the manual's
 * format has that line (its unit would not be a number).
 *
 * Memory: a configuration whose routes are all direct stores none
 * (conf->routes is NULL) and bip_conf_route answers 256 from that rule, so
 * that what a process keeps of its configuration grows with n, not n * n.
 * Only a file that gives some route through a switch, the user's own
 * description of a switched network, keeps the n * n table.
 */
#ifndef BIP_CONF_H
#define BIP_CONF_H

#include <stddef.h>
#include <stdio.h>

#define BIP_CONF_HOSTLEN 256
#define BIP_CONF_MAXHOPS 4
#define BIP_ROUTE_DIRECT 256
#define BIP_CONF_MAXRAILS 4

/* Environment of the start-up interface. */
#define BIP_ENV_CONF "BIPCONF"       /* configuration file */
#define BIP_ENV_OPTS "BIP_OPTS"      /* "n<k>" = use the first k nodes, "q" = quiet */
#define BIP_ENV_NODE "BIP_NODE"      /* this process's node number (set by bipload) */
#define BIP_ENV_JOBID "BIP_JOBID"    /* job id, [A-Za-z0-9] (set by bipload) */
#define BIP_ENV_HOST "BIP_HOST"      /* the configuration's name of this host (set by bipload) */
#define BIP_ENV_SECRET "BIP_SECRET"  /* the job's secret, hex (set by bipload) */
#define BIP_JOBID_MAX 32
/* Nodes of a configuration at most (bipconf(5)). */
#define BIP_CONF_MAXNODES 65535

struct bip_route {
	int nhops;                    /* 1 .. BIP_CONF_MAXHOPS */
	int hop[BIP_CONF_MAXHOPS];    /* switch ports; hop[0] == 256 for "no switch" */
};

struct bip_conf_node {
	char host[BIP_CONF_HOSTLEN];
	int unit;
	int line;                     /* line of the "hostname unit" line, for messages */
};

/*
 * Clusters of clusters (clusters.c, bipconf(5) "Clusters"): after the
 * nodes, a file may name clusters, each a set of hosts with the driver used
 * inside it, and gateways, each a host of one cluster joined to a host of
 * another by a network:
 *
 *   cluster NAME DRIVER HOST...
 *   gateway CLUSTER:HOST CLUSTER:HOST DRIVER
 *   relays K          (written by bipload: the last K nodes are relays)
 *
 * A file without them is one network, as in the manual.
 */
#define BIP_CONF_NAMELEN 32

struct bip_conf_cluster {
	char name[BIP_CONF_NAMELEN];
	char driver[BIP_CONF_NAMELEN];     /* the driver inside it (BIP_NIC) */
	int line;
};

struct bip_conf_gateway {
	int cluster[2];                    /* the clusters it joins, by index */
	char host[2][BIP_CONF_HOSTLEN];    /* its host in each */
	char driver[BIP_CONF_NAMELEN];     /* the network between the two hosts */
	int line;
};

struct bip_conf {
	int n;                        /* number of nodes */
	int nrails;                   /* routes per pair: 1 .. BIP_CONF_MAXRAILS */
	struct bip_conf_node *nodes;  /* n nodes */
	/* NULL when every route is direct (256); otherwise nrails * n * n
	 * routes, rail after rail: routes[(rail * n + from) * n + to].  Read
	 * them with bip_conf_route, change them with bip_conf_set_route. */
	struct bip_route *routes;
	int nclusters;                /* 0: the file names none */
	struct bip_conf_cluster *clusters;
	int *cluster_of;              /* with clusters, each node's (n entries) */
	int ngateways;
	struct bip_conf_gateway *gateways;
	/* The last nrelays nodes of the file are the relays of gateway hosts
	 * (a statement "relays K", which bipload writes): processes that
	 * forward between clusters and run no program of the user.  0 in a
	 * user's file. */
	int nrelays;
	/* Nodes bip_conf_grow added after the file's (after its relays): the
	 * room of a job that grows (bip_grow(3)).  0 otherwise. */
	int grown;
};

/*
 * The chain of gateways from cluster a to cluster b: the fewest, and among
 * those the lowest-numbered at each step.  Writes the gateways' indices,
 * from a's side, into gw (at most max) and returns how many (0 when
 * a == b), or -1 when no chain joins them or max is too small.  With max 0
 * it only counts them, writing nothing.
 */
int bip_conf_cluster_path(const struct bip_conf *conf, int a, int b, int *gw, int max);

/*
 * Add a relay node for every gateway host that has none (bipload, before
 * the job starts): on that host, unit 0, direct routes.  Returns how many
 * it added, or -ENOMEM.
 */
int bip_conf_add_relays(struct bip_conf *conf);

/* The relay node of host, or -1. */
int bip_conf_relay_of(const struct bip_conf *conf, const char *host);

/* The file's nodes that run the user's program: the nodes before its
 * relays (the first relay's number).  In a job that grows, the nodes that
 * join come after the relays (bip_conf_grow). */
static inline int bip_conf_app_nodes(const struct bip_conf *conf)
{
	return conf->n - conf->grown - conf->nrelays;
}

/* 1 if node is a relay. */
static inline int bip_conf_is_relay(const struct bip_conf *conf, int node)
{
	return node >= bip_conf_app_nodes(conf) && node < conf->n - conf->grown;
}

/* 1 if nodes a and b talk directly: without clusters, in one cluster, or
 * two relays at the ends of a gateway; 0 if through the relays (fwd.c).
 * A node in no cluster (one that joined on a host of none) talks to
 * nobody directly. */
int bip_conf_direct(const struct bip_conf *conf, int a, int b);

/* A node's host becomes host (a node that joined elsewhere than the room's
 * default host), and with clusters its cluster that host's: -1 when no
 * node of the file runs there. */
void bip_conf_set_host(struct bip_conf *conf, int node, const char *host);

/* Cluster k's hosts, once each in node order, blank-separated. */
void bip_conf_cluster_hosts(const struct bip_conf *conf, int k, char *buf, size_t len);

/* The way from cluster a to cluster b, as bipinfo and biproute show it:
 * "inside cluster A (ofi)", or each gateway crossed, "A:a1 -> B:b1 (ofi),
 * ...".  Returns the gateways crossed, or -1 ("none: ..."). */
int bip_conf_cluster_chain(const struct bip_conf *conf, int a, int b, char *buf, size_t len);

/* The clusters' statements of conf, as a file holds them (none without). */
int bip_conf_clusters_write(FILE *f, const struct bip_conf *conf);

/*
 * The distinct hosts of a configuration's nodes, numbered in the order the
 * nodes first name them, found by name through a hash table: what
 * "the nodes of host h" and "is this a host of the nodes" cost, O(1) each,
 * instead of a pass over every node.  Built from conf->nodes as they are
 * then; it does not follow later changes.
 */
struct bip_conf_hosts {
	int nhosts;
	int *host_of;                 /* n: each node's host */
	int *first;                   /* nhosts: its first node */
	int *next;                    /* n: the next node of the same host, or -1 */
	int *slot;                    /* hash table: host + 1, 0 for an empty slot */
	size_t mask;                  /* slots - 1 (a power of two) */
};
int bip_conf_hosts_build(const struct bip_conf *conf, struct bip_conf_hosts *h);
/* The host named host, or -1 if no node runs on it. */
int bip_conf_hosts_find(const struct bip_conf *conf, const struct bip_conf_hosts *h,
			const char *host);
void bip_conf_hosts_free(struct bip_conf_hosts *h);

/* For conf.c: one statement after the nodes (name:line for messages; hosts
 * indexes conf's nodes), and the checks once all are read.  0, or
 * -EINVAL/-ENOMEM with err set. */
int bip_conf_clusters_statement(struct bip_conf *conf, const struct bip_conf_hosts *hosts,
				const char *text, const char *name, int line, char *err,
				size_t errlen);
int bip_conf_clusters_finish(struct bip_conf *conf, const char *name, char *err, size_t errlen);
void bip_conf_clusters_free(struct bip_conf *conf);
/* After conf->n shrank: drop the clusters left without a node and the
 * gateways on a host without one, numbering the clusters that stay in
 * their order, as the file written back would.  0, -ENOMEM, or
 * -EHOSTUNREACH when no chain of gateways joins two clusters left (the
 * nodes that joined them are cut). */
int bip_conf_clusters_shrink(struct bip_conf *conf);

/* The route "256" alone: no switch. */
extern const struct bip_route bip_route_direct;

static inline int bip_route_is_direct(const struct bip_route *r)
{
	return r->nhops == 1 && r->hop[0] == BIP_ROUTE_DIRECT;
}

/* Rail's route from node from to node to. */
static inline const struct bip_route *bip_conf_route(const struct bip_conf *conf, int rail,
						     int from, int to)
{
	if (!conf->routes)
		return &bip_route_direct;
	return &conf->routes[((size_t)rail * conf->n + from) * conf->n + to];
}

/*
 * Set rail's route from node from to node to.  The first route that is not
 * direct makes the n * n table of every rail (the others direct).  Returns
 * 0, -EINVAL (a node, rail or route out of range) or -ENOMEM.
 */
int bip_conf_set_route(struct bip_conf *conf, int rail, int from, int to,
		       const struct bip_route *route);

/* 1 if every route of conf, on every rail, is direct (256), else 0. */
int bip_conf_all_direct(const struct bip_conf *conf);

/*
 * Parse a configuration.  On success return 0 and set *conf_p (free it with
 * bip_conf_free).  On failure return a negative errno and write a message
 * "NAME:LINE: what is wrong" into err (errlen bytes); *conf_p is untouched.
 */
int bip_conf_parse_file(const char *path, struct bip_conf **conf_p, char *err, size_t errlen);
int bip_conf_parse_string(const char *text, const char *name, struct bip_conf **conf_p,
			  char *err, size_t errlen);

/* A configuration of n nodes on this host (hostname from uname -n), all routes direct. */
int bip_conf_local(int n, struct bip_conf **conf_p);
/* The same with nrails rails (-EINVAL outside 1 .. BIP_CONF_MAXRAILS). */
int bip_conf_local_rails(int n, int nrails, struct bip_conf **conf_p);

/* Keep only the first n nodes (n <= conf->n), and the clusters and
 * gateways that still have nodes; returns 0, -EINVAL, -ENOMEM, or
 * -EHOSTUNREACH (clusters left that no chain of gateways joins). */
int bip_conf_truncate(struct bip_conf *conf, int n);

/* Room for nodes that join the running job (bip_grow(3)): nodes conf->n
 * to n - 1 on host, after the relays, each in host's cluster.  -ENOTSUP
 * when the configuration has routes, -EINVAL when n is smaller or host
 * empty, -ENOMEM. */
int bip_conf_grow(struct bip_conf *conf, int n, const char *host);

/* Write conf: when every route is direct, with "routes direct" and no
 * route lines; otherwise in the manual's format, a route line per pair.
 * Returns 0 or a negative errno. */
int bip_conf_write(FILE *f, const struct bip_conf *conf);

void bip_conf_free(struct bip_conf *conf);

/*
 * Read the whole file at path as text: 0 and a malloc'ed, NUL-terminated
 * *text_p, or a negative errno with "path: why" in err (a file holding a
 * NUL byte is not text: -EINVAL).
 */
int bip_file_read_text(const char *path, char **text_p, char *err, size_t errlen);

/* Room for element n of an array grown by doubling at powers of two (from
 * 8): 0, or -ENOMEM with *p untouched. */
int bip_array_grow(void **p, int n, size_t size);

/*
 * Replace the file at path with what writer() writes (through "path.new" and
 * rename, so that a reader never sees half a file).  Returns 0, or a negative
 * errno with a message in err.
 */
int bip_file_replace(const char *path, int (*writer)(FILE *f, const void *arg), const void *arg,
		     char *err, size_t errlen);

/* $BIPCONF if set, else $HOME/.bip/bipconf.  Returns 0 or -ENAMETOOLONG/-ENOENT (no HOME). */
int bip_conf_default_path(char *buf, size_t len);

/* 1 if host names the host this process runs on, else 0: the name in
 * BIP_HOST; unless BIP_HOST names another host than the kernel's, also
 * uname -n, its short form, "localhost", or a name resolving to a loopback
 * address. */
int bip_host_is_local(const char *host);
/* A launcher's name of this host (boot.h): from then on, a host is local
 * if and only if it has this name.  NULL or "" goes back to the rules above. */
void bip_host_set_self(const char *name);
/* Forget the answers about host names kept so far (the resolver's, which
 * bip_host_is_local keeps for the life of the process): at the end of a
 * library's or a tool's use, so that nothing is left behind. */
void bip_host_forget(void);

/* 1 while process pid of this machine runs, 0 once it has ended (or is a
 * zombie not yet reaped). */
int bip_process_runs(int pid);

/* BIP_OPTS: "n<k>" and "q" in any order, e.g. "n5q". */
struct bip_opts {
	int nodes;                    /* 0 when not given */
	int quiet;
};
int bip_opts_parse(const char *s, struct bip_opts *opts, char *err, size_t errlen);

/* 1 if id is a valid job id ([A-Za-z0-9], 1 .. BIP_JOBID_MAX chars), else 0. */
int bip_jobid_valid(const char *id);

/*
 * Shared-memory objects of a job on a host are named
 * "/bip-<uid>-<jobid>-<node>"; bip_shm_prefix writes "bip-<uid>-<jobid>-"
 * (without the leading slash, as the names appear in /dev/shm).
 */
int bip_shm_prefix(char *buf, size_t len, unsigned uid, const char *jobid);

#endif /* BIP_CONF_H */
