/* SPDX-License-Identifier: MIT */
/* Unit tests of the configuration parser (lib/bip/conf/conf.c, manual section 5). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "conf.h"

static char err[512];

static int parse(const char *text, struct bip_conf **conf)
{
	err[0] = '\0';
	return bip_conf_parse_string(text, "test.conf", conf, err, sizeof(err));
}

static void expect_error(const char *text, const char *where, const char *what)
{
	struct bip_conf *conf = NULL;

	ck_assert_int_eq(parse(text, &conf), -EINVAL);
	ck_assert_ptr_null(conf);
	ck_assert_msg(strncmp(err, where, strlen(where)) == 0, "error \"%s\" should start \"%s\"",
		      err, where);
	ck_assert_msg(strstr(err, what) != NULL, "error \"%s\" should say \"%s\"", err, what);
}

START_TEST(test_manual_format)
{
	const char *text = "# two nodes through one switch\n"
			   "2\n"
			   "lhpca 0\n"
			   "256\n"
			   "3\n"
			   "\n"
			   "lhpcb 1\n"
			   "  # comment inside\n"
			   "\v\f# after any blanks, a comment too\n"
			   "5 7\n"
			   "256\n";
	struct bip_conf *conf;

	ck_assert_int_eq(parse(text, &conf), 0);
	ck_assert_int_eq(conf->n, 2);
	ck_assert_str_eq(conf->nodes[0].host, "lhpca");
	ck_assert_int_eq(conf->nodes[1].unit, 1);
	ck_assert_int_eq(conf->nodes[1].line, 7);
	ck_assert_int_eq(conf->routes[0].hop[0], 256);
	ck_assert_int_eq(conf->routes[1].nhops, 1);
	ck_assert_int_eq(conf->routes[1].hop[0], 3);
	ck_assert_int_eq(conf->routes[2].nhops, 2);
	ck_assert_int_eq(conf->routes[2].hop[1], 7);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_errors_name_file_and_line)
{
	expect_error("", "test.conf:", "empty");
	expect_error("x\n", "test.conf:1:", "number of nodes");
	expect_error("0\n", "test.conf:1:", "number of nodes");
	expect_error("1\nhost\n256\n", "test.conf:2:", "hostname unit");
	expect_error("1\nhost -1\n256\n", "test.conf:2:", "unit");
	expect_error("1\nhost 0 extra\n256\n", "test.conf:2:", "hostname unit");
	expect_error("1\nhost 0\n1 2 3 4 5\n", "test.conf:3:", "1 to 4");
	expect_error("1\nhost 0\n256 1\n", "test.conf:3:", "alone");
	expect_error("1\nhost 0\n257\n", "test.conf:3:", "out of range");
	expect_error("1\nhost 0\nabc\n", "test.conf:3:", "numbers");
	expect_error("2\na 0\n256\n256\n", "test.conf:4:", "ends before node 1");
	expect_error("2\na 0\n256\n", "test.conf:3:", "routes of node 0");
	expect_error("1\na 0\n256\nb 0\n", "test.conf:4:", "unexpected line");
	/* A count the file does not hold is found before n * n routes are
	 * allocated: a parse error, not "out of memory". */
	expect_error("65535\n", "test.conf:1:", "ends before node 0 (of 65535)");
	expect_error("65535\na 0\n256\n", "test.conf:3:", "routes of node 0: 1 of 65535");
	expect_error("65536\n", "test.conf:1:", "number of nodes (1 .. 65535)");
}
END_TEST

START_TEST(test_write_round_trip)
{
	const char *text = "3\na 0\n256\n1\n2 3\nb 0\n4\n256\n5\na 2\n6\n7 8 9 10\n256\n";
	struct bip_conf *conf, *again;
	char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ck_assert_int_eq(parse(text, &conf), 0);
	ck_assert_int_eq(bip_conf_write(f, conf), 0);
	fclose(f);
	ck_assert_str_eq(buf, text);
	ck_assert_int_eq(parse(buf, &again), 0);
	ck_assert_int_eq(again->routes[7].hop[3], 10);
	/* Keep the first two nodes: routes are repacked. */
	ck_assert_int_eq(bip_conf_truncate(conf, 2), 0);
	ck_assert_int_eq(conf->n, 2);
	ck_assert_int_eq(conf->routes[2].hop[0], 4);
	ck_assert_int_eq(conf->routes[3].hop[0], 256);
	ck_assert_int_eq(bip_conf_truncate(conf, 3), -EINVAL);
	bip_conf_free(conf);
	bip_conf_free(again);
}
END_TEST

/* Rails: a route per rail on each line, '/' between them. */
START_TEST(test_rails)
{
	const char *two = "2\na 0\n256 / 256\n1 2 / 3\nb 0\n4/5 6\n256 / 256\n";
	char buf[1024], err[256];
	struct bip_conf *conf, *again;
	FILE *f;

	ck_assert_int_eq(parse(two, &conf), 0);
	ck_assert_int_eq(conf->nrails, 2);
	ck_assert_int_eq(bip_conf_route(conf, 0, 0, 1)->nhops, 2);
	ck_assert_int_eq(bip_conf_route(conf, 0, 0, 1)->hop[1], 2);
	ck_assert_int_eq(bip_conf_route(conf, 1, 0, 1)->hop[0], 3);
	ck_assert_int_eq(bip_conf_route(conf, 1, 1, 0)->nhops, 2);
	ck_assert_int_eq(bip_conf_route(conf, 1, 1, 0)->hop[1], 6);
	/* Rail 0 lies where a one-rail file's routes lie. */
	ck_assert_int_eq(conf->routes[2].hop[0], 4);
	f = fmemopen(buf, sizeof(buf), "w");
	ck_assert_int_eq(bip_conf_write(f, conf), 0);
	fclose(f);
	ck_assert_str_eq(buf, "2\na 0\n256 / 256\n1 2 / 3\nb 0\n4 / 5 6\n256 / 256\n");
	ck_assert_int_eq(parse(buf, &again), 0);
	ck_assert_int_eq(again->nrails, 2);
	ck_assert_int_eq(bip_conf_route(again, 1, 1, 0)->hop[1], 6);
	bip_conf_free(again);
	/* Truncating keeps every rail. */
	ck_assert_int_eq(bip_conf_truncate(conf, 1), 0);
	ck_assert_int_eq(bip_conf_route(conf, 1, 0, 0)->hop[0], 256);
	bip_conf_free(conf);
	ck_assert_int_eq(parse("1\na 0\n256/256/256/256\n", &conf), 0);
	ck_assert_int_eq(conf->nrails, 4);
	bip_conf_free(conf);
	/* Misuse: a different count, too many, an empty route. */
	ck_assert_int_eq(bip_conf_parse_string("2\na 0\n256 / 256\n1\nb 0\n1 / 2\n256 / 256\n",
					       "t.conf", &conf, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:4: 1 route (rails) on this line, 2 on the first route line: "
			      "every line gives one route per rail");
	ck_assert_int_eq(bip_conf_parse_string("1\na 0\n256/256/256/256/256\n", "t.conf", &conf,
					       err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:3: more than 4 routes (rails) on a line");
	ck_assert_int_eq(bip_conf_parse_string("1\na 0\n256 / \n", "t.conf", &conf, err,
					       sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:3: an empty route after '/'");
	ck_assert_int_eq(bip_conf_parse_string("1\na 0\n / 256\n", "t.conf", &conf, err,
					       sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:3: an empty route before '/'");
	/* On this host. */
	ck_assert_int_eq(bip_conf_local_rails(3, 2, &conf), 0);
	ck_assert_int_eq(conf->nrails, 2);
	ck_assert_int_eq(bip_conf_route(conf, 1, 2, 1)->hop[0], 256);
	bip_conf_free(conf);
	ck_assert_int_eq(bip_conf_local_rails(3, 5, &conf), -EINVAL);
	ck_assert_int_eq(bip_conf_local_rails(3, 0, &conf), -EINVAL);
}
END_TEST

START_TEST(test_local_default)
{
	struct bip_conf *conf;
	struct utsname u;

	uname(&u);
	ck_assert_int_eq(bip_conf_local(4, &conf), 0);
	ck_assert_int_eq(conf->n, 4);
	ck_assert_str_eq(conf->nodes[3].host, u.nodename);
	/* Every route direct: none stored, each answered by the rule. */
	ck_assert_ptr_null(conf->routes);
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 0, 3, 3)));
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 0, 1, 2)));
	ck_assert(bip_host_is_local(conf->nodes[0].host));
	ck_assert(bip_host_is_local("localhost"));
	ck_assert(!bip_host_is_local("no-such-host.invalid"));
	bip_conf_free(conf);
	ck_assert_int_eq(bip_conf_local(0, &conf), -EINVAL);
}
END_TEST

/* A configuration of one node per host, every route 256, then tail. */
static char *with_hosts(const char *hosts, const char *tail)
{
	static char text[8192];
	char copy[512], *save = NULL, *h;
	size_t used;
	int n = 0, i;

	snprintf(copy, sizeof(copy), "%s", hosts);
	for (h = strtok_r(copy, " ", &save); h; h = strtok_r(NULL, " ", &save))
		n++;
	used = (size_t)snprintf(text, sizeof(text), "%d\n", n);
	snprintf(copy, sizeof(copy), "%s", hosts);
	for (h = strtok_r(copy, " ", &save); h; h = strtok_r(NULL, " ", &save)) {
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s 0\n", h);
		for (i = 0; i < n; i++)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "256\n");
	}
	snprintf(text + used, sizeof(text) - used, "%s", tail);
	return text;
}

/* conf as bip_conf_write writes it, into buf. */
static void write_text(const struct bip_conf *conf, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");
	long len;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bip_conf_write(f, conf), 0);
	len = ftell(f);
	fclose(f);
	ck_assert_int_lt(len, (long)size);
	buf[len] = '\0';
}

/* Clusters and gateways after the nodes (clusters.c): what they mean, the
 * chain between two clusters, the round trip through bip_conf_write. */
START_TEST(test_clusters)
{
	struct bip_conf *conf, *again;
	char buf[4096];
	int gw[8];

	ck_assert_int_eq(parse(with_hosts("a1 a2 b1 b2 c1",
					  "# three clusters in a chain\n"
					  "cluster A ofi a1 a2\n"
					  "cluster B lanai b1 b2\n"
					  "cluster C shm c1\n"
					  "gateway A:a2 B:b1 ofi\n"
					  "gateway A:a1 B:b2 psm2  # a second one\n"
					  "gateway B:b2 C:c1 ofi\n"),
			       &conf),
			 0);
	ck_assert_int_eq(conf->nclusters, 3);
	ck_assert_int_eq(conf->ngateways, 3);
	ck_assert_str_eq(conf->clusters[1].name, "B");
	ck_assert_str_eq(conf->clusters[1].driver, "lanai");
	ck_assert_int_eq(conf->cluster_of[0], 0);
	ck_assert_int_eq(conf->cluster_of[3], 1);
	ck_assert_int_eq(conf->cluster_of[4], 2);
	ck_assert_str_eq(conf->gateways[1].host[0], "a1");
	ck_assert_str_eq(conf->gateways[1].driver, "psm2");
	/* Inside, one step (the first gateway named), two steps. */
	ck_assert_int_eq(bip_conf_cluster_path(conf, 1, 1, gw, 8), 0);
	ck_assert_int_eq(bip_conf_cluster_path(conf, 0, 1, gw, 8), 1);
	ck_assert_int_eq(gw[0], 0);
	ck_assert_int_eq(bip_conf_cluster_path(conf, 0, 2, gw, 8), 2);
	ck_assert_int_eq(gw[0], 0);
	ck_assert_int_eq(gw[1], 2);
	ck_assert_int_eq(bip_conf_cluster_path(conf, 2, 0, gw, 8), 2);
	ck_assert_int_eq(gw[0], 2);
	ck_assert_int_eq(gw[1], 0);
	ck_assert_int_eq(bip_conf_cluster_path(conf, 0, 2, gw, 1), -1);
	ck_assert_int_eq(bip_conf_cluster_path(conf, 0, 2, gw, 0), 2);
	ck_assert_int_eq(bip_conf_cluster_path(conf, 0, 3, gw, 8), -1);
	ck_assert_int_eq(bip_conf_cluster_chain(conf, 2, 0, buf, sizeof(buf)), 2);
	ck_assert_str_eq(buf, "C:c1 -> B:b2 (ofi), B:b1 -> A:a2 (ofi)");
	ck_assert_int_eq(bip_conf_cluster_chain(conf, 0, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "inside cluster A (ofi)");
	bip_conf_cluster_hosts(conf, 1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "b1 b2");

	/* Written and read again: the same description. */
	write_text(conf, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "cluster B lanai b1 b2\ngateway A:a2 B:b1 ofi\n") == NULL,
		      "cluster C comes before the gateways");
	ck_assert_ptr_nonnull(strstr(buf, "cluster C shm c1\ngateway A:a2 B:b1 ofi\n"
					  "gateway A:a1 B:b2 psm2\ngateway B:b2 C:c1 ofi\n"));
	ck_assert_int_eq(parse(buf, &again), 0);
	ck_assert_int_eq(again->nclusters, 3);
	ck_assert_int_eq(again->ngateways, 3);
	bip_conf_free(again);

	/* The first 2 nodes only: B and C and the gateways to them are left
	 * out of what is written, and what is left still reads. */
	ck_assert_int_eq(bip_conf_truncate(conf, 2), 0);
	write_text(conf, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "cluster A ofi a1 a2\n"));
	ck_assert_ptr_null(strstr(buf, "gateway"));
	ck_assert_ptr_null(strstr(buf, "cluster B"));
	ck_assert_int_eq(parse(buf, &again), 0);
	ck_assert_int_eq(again->nclusters, 1);
	bip_conf_free(again);
	ck_assert_int_eq(conf->nclusters, 1);
	ck_assert_int_eq(conf->ngateways, 0);
	bip_conf_free(conf);

	/* A cluster named first whose node is cut: the clusters that stay
	 * are renumbered as the file written back numbers them. */
	ck_assert_int_eq(parse(with_hosts("c b c a", "cluster A ofi a\ncluster B ofi b\n"
					  "cluster C ofi c\ngateway A:a B:b ofi\n"
					  "gateway B:b C:c ofi\n"),
			       &conf),
			 0);
	ck_assert_int_eq(bip_conf_truncate(conf, 3), 0);
	ck_assert_int_eq(conf->nclusters, 2);
	ck_assert_str_eq(conf->clusters[0].name, "B");
	ck_assert_int_eq(conf->cluster_of[0], 1);
	ck_assert_int_eq(conf->cluster_of[1], 0);
	ck_assert_int_eq(conf->ngateways, 1);
	ck_assert_int_eq(conf->gateways[0].cluster[0], 0);
	ck_assert_int_eq(conf->gateways[0].cluster[1], 1);
	write_text(conf, buf, sizeof(buf));
	ck_assert_int_eq(parse(buf, &again), 0);
	ck_assert_int_eq(again->nclusters, 2);
	ck_assert_int_eq(again->cluster_of[0], 1);
	bip_conf_free(again);
	bip_conf_free(conf);

	/* Cutting the cluster between two others leaves them unjoined: an
	 * error, not a configuration that would not read again. */
	ck_assert_int_eq(parse(with_hosts("a c b", "cluster A ofi a\ncluster B ofi b\n"
					  "cluster C ofi c\ngateway A:a B:b ofi\n"
					  "gateway B:b C:c ofi\n"),
			       &conf),
			 0);
	ck_assert_int_eq(bip_conf_truncate(conf, 2), -EHOSTUNREACH);
	bip_conf_free(conf);

	/* Several nodes on one host: the host is named once. */
	ck_assert_int_eq(parse(with_hosts("a a b", "cluster X ofi a\ncluster Y ofi b\n"
					  "gateway X:a Y:b ofi\n"),
			       &conf),
			 0);
	ck_assert_int_eq(conf->cluster_of[1], 0);
	bip_conf_cluster_hosts(conf, 0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "a");
	bip_conf_free(conf);
	/* Without statements: no cluster, as in the manual. */
	ck_assert_int_eq(parse(with_hosts("a b", ""), &conf), 0);
	ck_assert_int_eq(conf->nclusters, 0);
	ck_assert_ptr_null(conf->cluster_of);
	bip_conf_free(conf);
}
END_TEST

/* Every misuse of the statements names the file, the line and the fault. */
START_TEST(test_cluster_errors)
{
	/* Lines: the count and 3 hosts of 4 lines make lines 1-13; the statements
	 * start at line 14. */
	const char *h = "a1 a2 b1";

	expect_error(with_hosts(h, "clusters A ofi a1\n"), "test.conf:14:",
		     "only cluster, gateway and relays statements");
	expect_error(with_hosts(h, "cluster A\n"), "test.conf:14:",
		     "expected \"cluster NAME DRIVER HOST...\"");
	expect_error(with_hosts(h, "cluster A/x ofi a1\n"), "test.conf:14:",
		     "cluster name \"A/x\"");
	expect_error(with_hosts(h, "cluster A ofi a1\ncluster A ofi b1\n"), "test.conf:15:",
		     "cluster A is named twice (line 14)");
	expect_error(with_hosts(h, "cluster A tcp a1\n"), "test.conf:14:",
		     "driver \"tcp\" is not shm, lanai, ofi or psm2");
	expect_error(with_hosts(h, "cluster A ofi a1 zz\n"), "test.conf:14:",
		     "host zz runs none of the 3 nodes");
	expect_error(with_hosts(h, "cluster A ofi a1 a2\ncluster B ofi b1 a2\n"),
		     "test.conf:15:", "host a2 is in cluster A already (line 14)");
	expect_error(with_hosts(h, "cluster A ofi\n"), "test.conf:14:", "cluster A names no host");
	expect_error(with_hosts(h, "cluster A ofi a1 a2\n"), "test.conf:10:",
		     "host b1 (node 2) is in no cluster");
	expect_error(with_hosts(h, "cluster A ofi a1 a2\ncluster B ofi b1\n"), "test.conf:15:",
		     "no chain of gateways joins cluster B to cluster A");
	/* Gateways, after two clusters on lines 14 and 15. */
#define AB "cluster A ofi a1 a2\ncluster B ofi b1\n"
	static const struct {
		const char *tail, *where, *what;
	} gw[] = {
		{ AB "gateway A:a1 B:b1\n", "test.conf:16:",
		  "expected \"gateway CLUSTER:HOST CLUSTER:HOST DRIVER\"" },
		{ AB "gateway A:a1 B:b1 ofi extra\n", "test.conf:16:", "expected \"gateway" },
		{ AB "gateway a1 B:b1 ofi\n", "test.conf:16:", "expected \"gateway" },
		{ AB "gateway C:a1 B:b1 ofi\n", "test.conf:16:", "no cluster named C above this line" },
		{ AB "gateway A:b1 B:b1 ofi\n", "test.conf:16:", "host b1 is not in cluster A" },
		{ AB "gateway A:zz B:b1 ofi\n", "test.conf:16:",
		  "host zz is not in cluster A (it runs no node)" },
		{ AB "gateway A:a1 A:a2 ofi\n", "test.conf:16:", "both hosts are in cluster A" },
		{ AB "gateway A:a1 B:b1 shm\n", "test.conf:16:",
		  "driver \"shm\" is not lanai, ofi or psm2" },
		{ AB "gateway A:a1 B:b1 ofi\ngateway B:b1 A:a1 psm2\n", "test.conf:17:",
		  "gateway b1 - a1 is named twice (line 16)" },
		{ "gateway A:a1 B:b1 ofi\n" AB, "test.conf:14:", "no cluster named A above this line" },
	};
#undef AB
	size_t i;

	for (i = 0; i < sizeof(gw) / sizeof(gw[0]); i++)
		expect_error(with_hosts(h, gw[i].tail), gw[i].where, gw[i].what);
}
END_TEST

/* The relays bipload adds, and a job's file that names them. */
START_TEST(test_relays)
{
	struct bip_conf *conf = NULL, *back = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(parse(with_hosts("a1 a2 b1 b2", "cluster A ofi a1 a2\n"
					  "cluster B ofi b1 b2\n"
					  "gateway A:a2 B:b1 ofi\ngateway A:a1 B:b2 ofi\n"), &conf), 0);
	ck_assert_int_eq(conf->nrelays, 0);
	ck_assert_int_eq(bip_conf_app_nodes(conf), 4);
	/* One per gateway host, in the order the gateways name them. */
	ck_assert_int_eq(bip_conf_add_relays(conf), 4);
	ck_assert_int_eq(conf->n, 8);
	ck_assert_int_eq(conf->nrelays, 4);
	ck_assert_int_eq(bip_conf_app_nodes(conf), 4);
	ck_assert_str_eq(conf->nodes[4].host, "a2");
	ck_assert_str_eq(conf->nodes[5].host, "b1");
	ck_assert_str_eq(conf->nodes[6].host, "a1");
	ck_assert_str_eq(conf->nodes[7].host, "b2");
	ck_assert_int_eq(conf->cluster_of[4], 0);
	ck_assert_int_eq(conf->cluster_of[5], 1);
	ck_assert_int_eq(bip_conf_relay_of(conf, "b2"), 7);
	ck_assert_int_eq(bip_conf_relay_of(conf, "zz"), -1);
	ck_assert_int_eq(bip_conf_route(conf, 0, 1, 6)->hop[0], BIP_ROUTE_DIRECT);
	/* Again: every gateway host has one already. */
	ck_assert_int_eq(bip_conf_add_relays(conf), 0);
	/* Written and read back: the same relays. */
	f = open_memstream(&text, &len);
	ck_assert_int_eq(bip_conf_write(f, conf), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "relays 4\n"));
	ck_assert_int_eq(parse(text, &back), 0);
	ck_assert_int_eq(back->n, 8);
	ck_assert_int_eq(back->nrelays, 4);
	bip_conf_free(back);
	/* A shorter job has no relays. */
	ck_assert_int_eq(bip_conf_truncate(conf, 3), 0);
	ck_assert_int_eq(conf->nrelays, 0);
	bip_conf_free(conf);
	free(text);
}
END_TEST

/* Room for nodes that join a job with relays: after the relays, each in
 * its host's cluster; the relays keep their numbers. */
START_TEST(test_grow_relays)
{
	struct bip_conf *conf = NULL;
	int i;

	ck_assert_int_eq(parse(with_hosts("a1 a2 b1 b2", "cluster A shm a1 a2\n"
					  "cluster B shm b1 b2\n"
					  "gateway A:a2 B:b1 ofi\n"), &conf), 0);
	ck_assert_int_eq(bip_conf_add_relays(conf), 2);
	ck_assert_int_eq(bip_conf_grow(conf, 10, "a1"), 0);
	ck_assert_int_eq(conf->n, 10);
	ck_assert_int_eq(conf->grown, 4);
	ck_assert_int_eq(conf->nrelays, 2);
	ck_assert_int_eq(bip_conf_app_nodes(conf), 4);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(bip_conf_is_relay(conf, i), i == 4 || i == 5);
	ck_assert_int_eq(bip_conf_relay_of(conf, "b1"), 5);
	ck_assert_int_eq(bip_conf_relay_of(conf, "a1"), -1);
	/* The room's nodes are on its host, in its cluster, until they say. */
	ck_assert_str_eq(conf->nodes[6].host, "a1");
	ck_assert_int_eq(conf->cluster_of[6], 0);
	ck_assert_int_eq(bip_conf_direct(conf, 0, 6), 1);
	ck_assert_int_eq(bip_conf_direct(conf, 2, 6), 0);
	bip_conf_set_host(conf, 7, "b2");
	ck_assert_int_eq(conf->cluster_of[7], 1);
	ck_assert_int_eq(bip_conf_direct(conf, 2, 7), 1);
	ck_assert_int_eq(bip_conf_direct(conf, 6, 7), 0);
	/* A host of no cluster: no node talks to it directly. */
	bip_conf_set_host(conf, 8, "zz");
	ck_assert_int_eq(conf->cluster_of[8], -1);
	ck_assert_int_eq(bip_conf_direct(conf, 0, 8), 0);
	ck_assert_int_eq(bip_conf_direct(conf, 9, 8), 0);
	/* The two relays of the gateway talk directly, a node and the other
	 * cluster's relay do not. */
	ck_assert_int_eq(bip_conf_direct(conf, 4, 5), 1);
	ck_assert_int_eq(bip_conf_direct(conf, 0, 5), 0);
	/* Cut into the room: the relays stay; into the relays: gone. */
	ck_assert_int_eq(bip_conf_truncate(conf, 8), 0);
	ck_assert_int_eq(conf->grown, 2);
	ck_assert_int_eq(conf->nrelays, 2);
	ck_assert_int_eq(bip_conf_truncate(conf, 5), 0);
	ck_assert_int_eq(conf->nrelays, 0);
	ck_assert_int_eq(conf->grown, 0);
	bip_conf_free(conf);
	/* Routes: no room. */
	ck_assert_int_eq(parse("2\na 0\n256\n3\nb 0\n5 7\n256\n", &conf), 0);
	ck_assert_int_eq(bip_conf_grow(conf, 4, "a"), -ENOTSUP);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_relay_errors)
{
#define AB "cluster A ofi a1 a2\ncluster B ofi b1\ngateway A:a2 B:b1 ofi\n"
	/* Statements from line 18 (4 hosts of 5 lines). */
	expect_error(with_hosts("a1 a2 b1 a2", AB "relays\n"), "test.conf:", "expected \"relays K\"");
	expect_error(with_hosts("a1 a2 b1 a2", AB "relays 1 2\n"), "test.conf:",
		     "expected \"relays K\"");
	expect_error(with_hosts("a1 a2 b1 a2", AB "relays x\n"), "test.conf:",
		     "expected a number from 1 to 3");
	expect_error(with_hosts("a1 a2 b1 a2", AB "relays 4\n"), "test.conf:",
		     "expected a number from 1 to 3");
	expect_error(with_hosts("a1 a2 b1 a2", AB "relays 1\nrelays 1\n"), "test.conf:",
		     "relays: given twice");
	/* The last node, on a1, is no gateway's host. */
	expect_error(with_hosts("a1 a2 b1 a1", AB "relays 1\n"), "test.conf:",
		     "node 3 is a relay (relays 1), but its host a1 is no gateway's");
	expect_error(with_hosts("a1 b1 a2 a2", AB "relays 2\n"), "test.conf:",
		     "nodes 2 and 3 are both relays of host a2");
	expect_error(with_hosts("a1 a2", "relays 1\n"), "test.conf:",
		     "relays 1: the file names no cluster");
	expect_error(with_hosts("a1 a2 b1", "cluster A ofi a1 a2 b1\nrelays 1\n"), "test.conf:",
		     "relays 1: the file names no gateway");
#undef AB
}
END_TEST

/* conf written by bip_conf_write, as a malloc'ed string. */
static char *written(const struct bip_conf *conf)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bip_conf_write(f, conf), 0);
	fclose(f);
	return text;
}

/* "routes direct": every route 256, the nodes without route lines. */
START_TEST(test_direct_form)
{
	const char *text = "# three nodes, no switch\n"
			   "3\n"
			   "  routes direct   # every route is 256\n"
			   "a 0\n"
			   "\n"
			   "b 1\n"
			   "a 2\n";
	struct bip_conf *conf, *again;
	char *out;

	ck_assert_msg(parse(text, &conf) == 0, "%s", err);
	ck_assert_int_eq(conf->n, 3);
	ck_assert_int_eq(conf->nrails, 1);
	ck_assert_ptr_null(conf->routes);
	ck_assert_str_eq(conf->nodes[1].host, "b");
	ck_assert_int_eq(conf->nodes[1].unit, 1);
	ck_assert_int_eq(conf->nodes[1].line, 6);
	ck_assert_int_eq(conf->nodes[2].unit, 2);
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 0, 0, 1)));
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 0, 2, 2)));
	ck_assert(bip_conf_all_direct(conf));
	/* Written back in the same form: n + 2 lines. */
	out = written(conf);
	ck_assert_str_eq(out, "3\nroutes direct\na 0\nb 1\na 2\n");
	ck_assert_int_eq(parse(out, &again), 0);
	ck_assert_int_eq(again->n, 3);
	ck_assert_str_eq(again->nodes[2].host, "a");
	bip_conf_free(again);
	free(out);
	/* The first two nodes. */
	ck_assert_int_eq(bip_conf_truncate(conf, 2), 0);
	out = written(conf);
	ck_assert_str_eq(out, "2\nroutes direct\na 0\nb 1\n");
	free(out);
	bip_conf_free(conf);

	/* Rails: "/ direct" for each further one, with or without blanks. */
	ck_assert_msg(parse("2\nroutes direct / direct\na 0\nb 0\n", &conf) == 0, "%s", err);
	ck_assert_int_eq(conf->nrails, 2);
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 1, 0, 1)));
	out = written(conf);
	ck_assert_str_eq(out, "2\nroutes direct / direct\na 0\nb 0\n");
	free(out);
	bip_conf_free(conf);
	ck_assert_msg(parse("1\nroutes direct/direct/direct/direct\na 0\n", &conf) == 0, "%s",
		      err);
	ck_assert_int_eq(conf->nrails, 4);
	bip_conf_free(conf);

	/* Clusters after the nodes, as in the manual's format. */
	ck_assert_msg(parse("3\nroutes direct\na1 0\na2 0\nb1 0\ncluster A ofi a1 a2\n"
			    "cluster B ofi b1\ngateway A:a2 B:b1 ofi\n", &conf) == 0, "%s", err);
	ck_assert_int_eq(conf->nclusters, 2);
	ck_assert_int_eq(conf->cluster_of[2], 1);
	ck_assert_int_eq(bip_conf_add_relays(conf), 2);
	ck_assert_ptr_null(conf->routes);
	out = written(conf);
	ck_assert_str_eq(out, "5\nroutes direct\na1 0\na2 0\nb1 0\na2 0\nb1 0\n"
			      "cluster A ofi a1 a2\ncluster B ofi b1\ngateway A:a2 B:b1 ofi\n"
			      "relays 2\n");
	ck_assert_int_eq(parse(out, &again), 0);
	ck_assert_int_eq(again->nrelays, 2);
	bip_conf_free(again);
	free(out);
	bip_conf_free(conf);
}
END_TEST

/* Files of the manual's format keep their meaning; one whose routes are
 * all 256 keeps no table, and is written in the short form. */
START_TEST(test_manual_format_direct)
{
	struct bip_conf *conf;
	char *out;

	ck_assert_int_eq(parse("2\na 0\n256\n256\nb 0\n256\n256\n", &conf), 0);
	ck_assert_ptr_null(conf->routes);
	ck_assert_int_eq(conf->nodes[1].line, 5);
	out = written(conf);
	ck_assert_str_eq(out, "2\nroutes direct\na 0\nb 0\n");
	free(out);
	bip_conf_free(conf);
	/* Two rails, all direct. */
	ck_assert_int_eq(parse("2\na 0\n256/256\n256 / 256\nb 0\n256 / 256\n256 / 256\n", &conf),
			 0);
	ck_assert_ptr_null(conf->routes);
	ck_assert_int_eq(conf->nrails, 2);
	out = written(conf);
	ck_assert_str_eq(out, "2\nroutes direct / direct\na 0\nb 0\n");
	free(out);
	bip_conf_free(conf);
	/* A host named "routes" is a host: its unit is a number. */
	ck_assert_msg(parse("2\nroutes 3\n256\n5\nb 0\n1\n256\n", &conf) == 0, "%s", err);
	ck_assert_str_eq(conf->nodes[0].host, "routes");
	ck_assert_int_eq(conf->nodes[0].unit, 3);
	ck_assert_int_eq(bip_conf_route(conf, 0, 0, 1)->hop[0], 5);
	bip_conf_free(conf);
	ck_assert_msg(parse("1\nroutes direct\nroutes 0\n", &conf) == 0, "%s", err);
	ck_assert_str_eq(conf->nodes[0].host, "routes");
	bip_conf_free(conf);
	/* So is a host named by a number, with its unit: not a route line. */
	ck_assert_msg(parse("2\nroutes direct\n7 3\n256 0\n", &conf) == 0, "%s", err);
	ck_assert_str_eq(conf->nodes[0].host, "7");
	ck_assert_int_eq(conf->nodes[0].unit, 3);
	ck_assert_str_eq(conf->nodes[1].host, "256");
	out = written(conf);
	ck_assert_str_eq(out, "2\nroutes direct\n7 3\n256 0\n");
	free(out);
	bip_conf_free(conf);
	/* One switched route makes the table; the rest stay 256. */
	ck_assert_int_eq(parse("2\na 0\n256\n256\nb 0\n7 2\n256\n", &conf), 0);
	ck_assert_ptr_nonnull(conf->routes);
	ck_assert(!bip_conf_all_direct(conf));
	ck_assert_int_eq(bip_conf_route(conf, 0, 1, 0)->nhops, 2);
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 0, 0, 1)));
	out = written(conf);
	ck_assert_str_eq(out, "2\na 0\n256\n256\nb 0\n7 2\n256\n");
	free(out);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_set_route)
{
	struct bip_route r = { .nhops = 2, .hop = { 4, 1 } };
	struct bip_route bad = { .nhops = 2, .hop = { 256, 1 } };
	struct bip_conf *conf;
	char *out;

	ck_assert_int_eq(bip_conf_local_rails(3, 2, &conf), 0);
	/* A direct route keeps the configuration without a table. */
	ck_assert_int_eq(bip_conf_set_route(conf, 1, 0, 1, &bip_route_direct), 0);
	ck_assert_ptr_null(conf->routes);
	ck_assert_int_eq(bip_conf_set_route(conf, 1, 0, 2, &r), 0);
	ck_assert_ptr_nonnull(conf->routes);
	ck_assert(!bip_conf_all_direct(conf));
	ck_assert_int_eq(bip_conf_route(conf, 1, 0, 2)->hop[1], 1);
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 0, 0, 2)));
	ck_assert(bip_route_is_direct(bip_conf_route(conf, 1, 2, 0)));
	out = written(conf);
	ck_assert_ptr_nonnull(strstr(out, "\n256 / 256\n256 / 4 1\n"));
	ck_assert_ptr_null(strstr(out, "routes direct"));
	free(out);
	/* Back to direct: written short again. */
	ck_assert_int_eq(bip_conf_set_route(conf, 1, 0, 2, &bip_route_direct), 0);
	ck_assert(bip_conf_all_direct(conf));
	out = written(conf);
	ck_assert_ptr_nonnull(strstr(out, "3\nroutes direct / direct\n"));
	free(out);
	/* Out of range. */
	ck_assert_int_eq(bip_conf_set_route(conf, 2, 0, 1, &r), -EINVAL);
	ck_assert_int_eq(bip_conf_set_route(conf, 0, 3, 1, &r), -EINVAL);
	ck_assert_int_eq(bip_conf_set_route(conf, 0, 0, -1, &r), -EINVAL);
	ck_assert_int_eq(bip_conf_set_route(conf, 0, 0, 1, &bad), -EINVAL);
	bip_conf_free(conf);
}
END_TEST

/* Every misuse of "routes direct" names the file, the line and the fault. */
START_TEST(test_direct_form_errors)
{
	static const struct {
		const char *text, *where, *what;
	} bad[] = {
		{ "2\nroutes\na 0\nb 0\n", "test.conf:2:", "expected \"routes direct\"" },
		{ "2\nroutes indirect\na 0\nb 0\n", "test.conf:2:",
		  "expected \"routes direct\", and \"/ direct\" for each further rail" },
		{ "2\nroutes direct 2\na 0\nb 0\n", "test.conf:2:", "expected \"routes direct\"" },
		{ "2\nroutes direct /\na 0\nb 0\n", "test.conf:2:", "expected \"routes direct\"" },
		{ "2\nroutes / direct\na 0\nb 0\n", "test.conf:2:", "expected \"routes direct\"" },
		{ "2\nroutes direct direct\na 0\nb 0\n", "test.conf:2:",
		  "expected \"routes direct\"" },
		{ "1\nroutes direct / direct / direct / direct / direct\na 0\n", "test.conf:2:",
		  "\"routes direct\" for more than 4 rails (a configuration has 1 to 4)" },
		/* Route lines in a file that says it has none. */
		{ "2\nroutes direct\na 0\n256\nb 0\n", "test.conf:4:",
		  "a route line, but \"routes direct\" (line 2) says that the nodes have none" },
		{ "2\nroutes direct\na 0\nb 0\n256\n", "test.conf:5:",
		  "a route line, but \"routes direct\" (line 2)" },
		{ "2\nroutes direct\na 0\n1 2 3\nb 0\n", "test.conf:4:",
		  "a route line, but \"routes direct\" (line 2)" },
		{ "# c\n\n2\nroutes direct\na 0\n7 3 / 1\nb 0\n", "test.conf:6:",
		  "a route line, but \"routes direct\" (line 4)" },
		/* Anywhere but right after the count. */
		{ "2\nroutes direct\nroutes direct\na 0\nb 0\n", "test.conf:3:",
		  "\"routes direct\" is given once, on the line after the node count" },
		{ "1\na 0\nroutes direct\n", "test.conf:3:", "is given once, on the line after" },
		{ "1\na 0\n256\nroutes direct\n", "test.conf:4:", "is given once, on the line after" },
		{ "2\na 0\n256\n256\nroutes direct\n256\n256\n", "test.conf:5:",
		  "is given once, on the line after" },
		{ "2\nroutes direct\na 0\nb 0\nroutes direct\n", "test.conf:5:",
		  "is given once, on the line after" },
		/* Short, long, or malformed nodes. */
		{ "2\nroutes direct\na 0\n", "test.conf:3:", "file ends before node 1 (of 2)" },
		{ "65535\nroutes direct\n", "test.conf:2:", "file ends before node 0 (of 65535)" },
		{ "3\nroutes direct\na 0\nb\nc 0\n", "test.conf:4:", "expected \"hostname unit\"" },
		{ "2\nroutes direct\na 0\nb x\n", "test.conf:4:", "unit \"x\"" },
		{ "2\nroutes direct\na 0\nb 0\nc 0\n", "test.conf:5:",
		  "unexpected line after the 2 nodes" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(bad[i].text, bad[i].where, bad[i].what);
}
END_TEST

/* Lines longer than the old 1024-byte buffer are read whole: a cluster of
 * many hosts is one line.  Past 1 MiB, a clear error. */
START_TEST(test_long_lines)
{
	size_t cap = 2u << 20, used;
	char *text = malloc(cap);
	struct bip_conf *conf;
	int i, n = 400;

	ck_assert_ptr_nonnull(text);
	used = (size_t)snprintf(text, cap, "%d\nroutes direct\n", n);
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(text + used, cap - used, "host-with-a-long-name-%03d 0\n",
					 i);
	used += (size_t)snprintf(text + used, cap - used, "cluster A ofi");
	for (i = 0; i < n / 2; i++)
		used += (size_t)snprintf(text + used, cap - used, " host-with-a-long-name-%03d", i);
	used += (size_t)snprintf(text + used, cap - used, "\ncluster B ofi");
	for (i = n / 2; i < n; i++)
		used += (size_t)snprintf(text + used, cap - used, " host-with-a-long-name-%03d", i);
	snprintf(text + used, cap - used, "\ngateway A:host-with-a-long-name-000 "
		 "B:host-with-a-long-name-399 ofi\n");
	ck_assert_int_gt(strstr(text, "\ncluster B") - strstr(text, "cluster A"), 5000);
	ck_assert_msg(parse(text, &conf) == 0, "%s", err);
	ck_assert_int_eq(conf->cluster_of[n / 2 - 1], 0);
	ck_assert_int_eq(conf->cluster_of[n / 2], 1);
	ck_assert_int_eq(conf->cluster_of[n - 1], 1);
	bip_conf_free(conf);
	/* A line of 1 MiB. */
	used = (size_t)snprintf(text, cap, "1\nroutes direct\na 0\ncluster A ofi a");
	memset(text + used, ' ', (1u << 20) + 10);
	strcpy(text + used + (1u << 20) + 10, "a\n");
	expect_error(text, "test.conf:4:", "line longer than 1048575 characters");
	free(text);
}
END_TEST

/* The hosts of the nodes, numbered in order, found by name. */
START_TEST(test_hosts_index)
{
	struct bip_conf_hosts h;
	struct bip_conf *conf;

	ck_assert_int_eq(parse("5\nroutes direct\nb 0\na 0\nb 1\nc 0\na 1\n", &conf), 0);
	ck_assert_int_eq(bip_conf_hosts_build(conf, &h), 0);
	ck_assert_int_eq(h.nhosts, 3);
	ck_assert_int_eq(bip_conf_hosts_find(conf, &h, "b"), 0);
	ck_assert_int_eq(bip_conf_hosts_find(conf, &h, "a"), 1);
	ck_assert_int_eq(bip_conf_hosts_find(conf, &h, "c"), 2);
	ck_assert_int_eq(bip_conf_hosts_find(conf, &h, "d"), -1);
	ck_assert_int_eq(bip_conf_hosts_find(conf, &h, "bb"), -1);
	ck_assert_int_eq(h.host_of[4], 1);
	/* The nodes of a: 1, then 4. */
	ck_assert_int_eq(h.first[1], 1);
	ck_assert_int_eq(h.next[1], 4);
	ck_assert_int_eq(h.next[4], -1);
	ck_assert_int_eq(h.first[0], 0);
	ck_assert_int_eq(h.next[0], 2);
	bip_conf_hosts_free(&h);
	bip_conf_free(conf);
}
END_TEST

/*
 * The resolver, replaced for this program: bip_host_is_local asks it about
 * names that are not obviously this machine's.  It counts the questions,
 * and answers that "loop-*" names are loopback addresses and that no
 * other name exists.
 */
static int resolver_questions;

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	struct {
		struct addrinfo ai;
		struct sockaddr_in in;
	} *r;

	(void)service;
	(void)hints;
	__atomic_add_fetch(&resolver_questions, 1, __ATOMIC_RELAXED);
	if (strncmp(node, "loop-", 5))
		return EAI_NONAME;
	r = calloc(1, sizeof(*r));
	if (!r)
		return EAI_MEMORY;
	r->in.sin_family = AF_INET;
	r->in.sin_addr.s_addr = htonl(0x7f000001);
	r->ai.ai_family = AF_INET;
	r->ai.ai_addr = (struct sockaddr *)&r->in;
	r->ai.ai_addrlen = sizeof(r->in);
	*res = &r->ai;
	return 0;
}

void freeaddrinfo(struct addrinfo *res)
{
	free(res);
}

/* Start-up asks about every node, several times: the resolver is asked
 * once per distinct name, and the answers do not change. */
START_TEST(test_host_answers)
{
	char name[64];
	int round, i, local = 0;

	unsetenv(BIP_ENV_HOST);
	bip_host_set_self(NULL);
	resolver_questions = 0;
	for (round = 0; round < 4; round++)
		for (i = 0; i < 10000; i++) {
			snprintf(name, sizeof(name), "%s-%d", i % 2 ? "far" : "loop", i % 100);
			local += bip_host_is_local(name);
		}
	ck_assert_int_eq(local, 4 * 5000);
	ck_assert_int_eq(resolver_questions, 100);
	/* BIP_HOST still decides over the answers kept. */
	setenv(BIP_ENV_HOST, "far-1", 1);
	ck_assert(bip_host_is_local("far-1"));
	ck_assert(!bip_host_is_local("loop-0"));
	setenv(BIP_ENV_HOST, "loop-2", 1);
	ck_assert(bip_host_is_local("loop-0"));
	ck_assert(!bip_host_is_local("far-3"));
	bip_host_set_self("far-3");
	ck_assert(bip_host_is_local("far-3"));
	ck_assert(!bip_host_is_local("loop-0"));
	bip_host_set_self(NULL);
	unsetenv(BIP_ENV_HOST);
	ck_assert_int_eq(resolver_questions, 100);
}
END_TEST

START_TEST(test_opts)
{
	struct bip_opts o = { 9, 9 };

	ck_assert_int_eq(bip_opts_parse("n5q", &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.nodes, 5);
	ck_assert_int_eq(o.quiet, 1);
	ck_assert_int_eq(bip_opts_parse("qn12", &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.nodes, 12);
	ck_assert_int_eq(bip_opts_parse("", &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.nodes, 0);
	ck_assert_int_eq(o.quiet, 0);
	ck_assert_int_eq(bip_opts_parse("n", &o, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(bip_opts_parse("n0", &o, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(bip_opts_parse("x", &o, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'x'"));
}
END_TEST

START_TEST(test_job_names)
{
	char buf[64];

	ck_assert(bip_jobid_valid("abc123XYZ"));
	ck_assert(!bip_jobid_valid(""));
	ck_assert(!bip_jobid_valid("a-b"));
	ck_assert(!bip_jobid_valid("a/b"));
	ck_assert(!bip_jobid_valid("123456789012345678901234567890123"));
	ck_assert_int_eq(bip_shm_prefix(buf, sizeof(buf), 1000, "j42"), 0);
	ck_assert_str_eq(buf, "bip-1000-j42-");
	ck_assert_int_eq(bip_shm_prefix(buf, 8, 1000, "j42"), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_default_path)
{
	char buf[256];

	setenv("HOME", "/home/u", 1);
	unsetenv("BIPCONF");
	ck_assert_int_eq(bip_conf_default_path(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/home/u/.bip/bipconf");
	setenv("BIPCONF", "/etc/my.conf", 1);
	ck_assert_int_eq(bip_conf_default_path(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/etc/my.conf");
	ck_assert_int_eq(bip_conf_default_path(buf, 4), -ENAMETOOLONG);
	unsetenv("BIPCONF");
	unsetenv("HOME");
	ck_assert_int_eq(bip_conf_default_path(buf, sizeof(buf)), -ENOENT);
}
END_TEST

START_TEST(test_parse_file)
{
	char path[] = "/tmp/check_conf_XXXXXX";
	struct bip_conf *conf = NULL;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("1\nme 0\n256\nextra\n", f);
	fclose(f);
	ck_assert_int_eq(bip_conf_parse_file(path, &conf, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err, ":4:"), "%s", err);
	unlink(path);
	ck_assert_int_eq(bip_conf_parse_file(path, &conf, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(conf);
}
END_TEST

static Suite *conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("conf");

	tcase_add_test(tc, test_manual_format);
	tcase_add_test(tc, test_errors_name_file_and_line);
	tcase_add_test(tc, test_write_round_trip);
	tcase_add_test(tc, test_local_default);
	tcase_add_test(tc, test_rails);
	tcase_add_test(tc, test_clusters);
	tcase_add_test(tc, test_cluster_errors);
	tcase_add_test(tc, test_relays);
	tcase_add_test(tc, test_grow_relays);
	tcase_add_test(tc, test_relay_errors);
	tcase_add_test(tc, test_direct_form);
	tcase_add_test(tc, test_manual_format_direct);
	tcase_add_test(tc, test_set_route);
	tcase_add_test(tc, test_direct_form_errors);
	tcase_add_test(tc, test_long_lines);
	tcase_add_test(tc, test_hosts_index);
	tcase_add_test(tc, test_host_answers);
	tcase_add_test(tc, test_opts);
	tcase_add_test(tc, test_job_names);
	tcase_add_test(tc, test_default_path);
	tcase_add_test(tc, test_parse_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(conf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
