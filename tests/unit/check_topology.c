/* SPDX-License-Identifier: MIT */
/* Unit tests of the network topology (lib/bip/conf/topology.c, bipconf(5) "The topology"). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology.h"

static char err[1024];

static struct bip_topology *parse_ok(const char *text)
{
	struct bip_topology *topo = NULL;
	int rc;

	err[0] = '\0';
	rc = bip_topology_parse_string(text, "test.topo", &topo, err, sizeof(err));
	ck_assert_msg(rc == 0, "parse failed (%d): %s", rc, err);
	ck_assert_ptr_nonnull(topo);
	return topo;
}

static void expect_error(const char *text, const char *where, const char *what)
{
	struct bip_topology *topo = NULL;
	int rc;

	err[0] = '\0';
	rc = bip_topology_parse_string(text, "test.topo", &topo, err, sizeof(err));
	ck_assert_msg(rc == -EINVAL, "\"%s\" gave %d, not -EINVAL (%s)", text, rc, err);
	ck_assert_ptr_null(topo);
	ck_assert_msg(strncmp(err, where, strlen(where)) == 0, "error \"%s\" should start \"%s\"",
		      err, where);
	ck_assert_msg(strstr(err, what) != NULL, "error \"%s\" should say \"%s\"", err, what);
}

static struct bip_route mkroute(int n, int a, int b, int c, int d)
{
	struct bip_route r = {.nhops = n, .hop = {a, b, c, d}};

	return r;
}

static void expect_route(const struct bip_topology *topo, const char *from, const char *to,
			 const char *want)
{
	struct bip_route r = {0};
	char text[64];
	int rc = bip_topology_route(topo, from, to, &r);

	ck_assert_msg(rc == 0, "no route %s -> %s (%d)", from, to, rc);
	ck_assert_int_eq(bip_route_format(&r, text, sizeof(text)), 0);
	ck_assert_msg(!strcmp(text, want), "route %s -> %s is \"%s\", expected \"%s\"", from, to,
		      text, want);
}

static void expect_reaches(const struct bip_topology *topo, const char *from, struct bip_route r,
			   const char *want)
{
	const char *to = NULL;
	char why[512] = "";
	int rc = bip_topology_follow(topo, from, &r, &to, why, sizeof(why));

	ck_assert_msg(rc == 0, "route from %s should reach %s: %d %s", from, want, rc, why);
	ck_assert_str_eq(to, want);
}

static void expect_wrong(const struct bip_topology *topo, const char *from, struct bip_route r,
			 const char *reason)
{
	const char *to = "untouched";
	char why[512] = "";
	int rc = bip_topology_follow(topo, from, &r, &to, why, sizeof(why));

	ck_assert_msg(rc == -EHOSTUNREACH, "wrong route from %s gave %d (%s)", from, rc, why);
	ck_assert_str_eq(to, "untouched");
	ck_assert_msg(strstr(why, reason) != NULL, "reason \"%s\" should say \"%s\"", why, reason);
}

/* Every route computed between two hosts is followed to its destination. */
static void check_all_routes_arrive(const struct bip_topology *topo)
{
	int n = bip_topology_host_count(topo), i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			const char *a = bip_topology_host_name(topo, i);
			const char *b = bip_topology_host_name(topo, j);
			struct bip_route r;
			const char *to = NULL;
			char why[512] = "";
			int rc = bip_topology_route(topo, a, b, &r);

			if (i == j || rc == -EHOSTUNREACH)
				continue;
			ck_assert_msg(rc == 0, "route %s -> %s: %d", a, b, rc);
			rc = bip_topology_follow(topo, a, &r, &to, why, sizeof(why));
			ck_assert_msg(rc == 0, "route %s -> %s does not arrive: %s", a, b, why);
			ck_assert_str_eq(to, b);
		}
}

/* Five switches in a line, ports 0 and 1 towards the neighbours, a host on port 2. */
static const char line_topo[] = "# a line of five switches\n"
				"switch s0 8\n"
				"switch s1 8\n"
				"switch s2 8\n"
				"switch s3 8\n"
				"switch s4 16\n"
				"link s0 1 s1 0\n"
				"link s1 1 s2 0\n"
				"link s2 1 s3 0\n"
				"link s3 1 s4 0   # the last cable\n"
				"link h0 s0 2\n"
				"link h1 s1 2\n"
				"link h2 s2 2\n"
				"link h3 s3 2\n"
				"link h4 s4 2\n"
				"link h0b s0 7\n";

START_TEST(test_parse_hosts)
{
	struct bip_topology *topo = parse_ok(line_topo);

	ck_assert_int_eq(bip_topology_host_count(topo), 6);
	ck_assert_str_eq(bip_topology_host_name(topo, 0), "h0");
	ck_assert_str_eq(bip_topology_host_name(topo, 5), "h0b");
	ck_assert_ptr_null(bip_topology_host_name(topo, 6));
	ck_assert_int_eq(bip_topology_has_host(topo, "h3"), 1);
	ck_assert_int_eq(bip_topology_has_host(topo, "s3"), 0);
	ck_assert_int_eq(bip_topology_has_host(topo, "nobody"), 0);
	bip_topology_free(topo);

	/* An empty file is a network without hosts. */
	topo = parse_ok("\n# nothing\n   \n");
	ck_assert_int_eq(bip_topology_host_count(topo), 0);
	bip_topology_free(topo);
}
END_TEST

START_TEST(test_malformed)
{
	expect_error("switch s 8\nbogus a b\n", "test.topo:2:", "unknown keyword \"bogus\"");
	expect_error("# c\n\nswitch s\n", "test.topo:3:", "expected \"switch NAME PORTS\"");
	expect_error("switch s 8 9\n", "test.topo:1:", "expected \"switch NAME PORTS\"");
	expect_error("switch s 0\n", "test.topo:1:", "1 to 64");
	expect_error("switch s 65\n", "test.topo:1:", "1 to 64");
	expect_error("switch s eight\n", "test.topo:1:", "\"eight\" ports");
	expect_error("switch s -1\n", "test.topo:1:", "1 to 64");
	expect_error("switch s 8\n\nswitch s 16\n", "test.topo:3:", "already declared (line 1)");
	expect_error("switch s 8\nlink h s 0\nswitch h 8\n", "test.topo:3:", "already a host");
	expect_error("link h s 0\n", "test.topo:1:", "unknown switch \"s\"");
	expect_error("switch s 8\nlink h s 8\n", "test.topo:2:", "the ports are 0 to 7");
	expect_error("switch s 8\nlink h s x\n", "test.topo:2:", "port \"x\"");
	expect_error("switch s 8\nlink h s -1\n", "test.topo:2:", "port \"-1\"");
	expect_error("switch s 8\nlink a s 3\nlink b s 3\n",
		     "test.topo:3:", "port 3 of switch s already has a cable (line 2)");
	expect_error("switch s 8\nlink a s 3\n# x\nlink a s 4\n",
		     "test.topo:4:", "host a already has its cable (line 2)");
	expect_error("switch s 8\nswitch t 8\nlink s s 0\n", "test.topo:3:", "\"s\" is a switch");
	expect_error("switch s 8\nlink h s 0\nlink h 1 s 2\n", "test.topo:3:", "\"h\" is a host");
	expect_error("switch s 8\nlink s 1 s 1\n", "test.topo:2:", "cabled to itself");
	expect_error("switch s 8\nswitch t 8\nlink s 1 t 1\nlink t 1 s 2\n",
		     "test.topo:4:", "port 1 of switch t already has a cable (line 3)");
	expect_error("switch s 8\nswitch t 8\nlink s 1 t 9\n",
		     "test.topo:3:", "the ports are 0 to 7");
	expect_error("switch s 8\nlink h s\n",
		     "test.topo:2:", "expected \"link HOST SWITCH PORT\"");
	expect_error("link a\n", "test.topo:1:", "expected \"link HOST");
	expect_error("switch s 8\nlink a 1 s 2 3\n", "test.topo:2:", "too many fields");
	expect_error("direct a a\n", "test.topo:1:", "cabled to itself");
	expect_error("direct a\n", "test.topo:1:", "expected \"direct HOST HOST\"");
	expect_error("direct a b\ndirect b c\n", "test.topo:2:", "host b already has its cable");
	expect_error("switch s 4\nlink a s 0\ndirect a b\n",
		     "test.topo:3:", "host a already has its cable (line 2)");
	expect_error("switch s 4\ndirect a s\n", "test.topo:2:", "\"s\" is a switch");

	{
		char text[600];

		memset(text, 'x', sizeof(text));
		memcpy(text, "switch s 8\nlink ", 16);
		strcpy(text + 300, " s 0\n");
		expect_error(text, "test.topo:2:", "longer than 255");
	}
}
END_TEST

START_TEST(test_load_file)
{
	char path[] = "/tmp/check_topology_XXXXXX";
	struct bip_topology *topo = (void *)1;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("switch s 8\nlink a s 0\nlink b s 1\nlink c s 1\n", f);
	fclose(f);
	ck_assert_int_eq(bip_topology_load(path, &topo, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_eq(topo, (void *)1);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err, ":4: port 1"),
		      "error \"%s\" should name %s:4", err, path);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("switch s 8\nlink a s 0\nlink b s 1\n", f);
	fclose(f);
	ck_assert_int_eq(bip_topology_load(path, &topo, err, sizeof(err)), 0);
	expect_route(topo, "a", "b", "1");
	bip_topology_free(topo);
	unlink(path);
	topo = (void *)1;
	ck_assert_int_eq(bip_topology_load(path, &topo, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_eq(topo, (void *)1);
	ck_assert_msg(strstr(err, path) != NULL, "error \"%s\" should name the file", err);
}
END_TEST

START_TEST(test_route_line)
{
	struct bip_topology *topo = parse_ok(line_topo);
	struct bip_route r = mkroute(1, 99, 0, 0, 0), before = r;

	expect_route(topo, "h0", "h0b", "7");
	expect_route(topo, "h0", "h1", "1 2");
	expect_route(topo, "h0", "h3", "1 1 1 2");
	expect_route(topo, "h3", "h0", "0 0 0 2");
	expect_route(topo, "h1", "h4", "1 1 1 2");
	expect_route(topo, "h4", "h1", "0 0 0 2");
	expect_route(topo, "h0", "h0", "256");
	/* Five switches apart: no route within four. */
	ck_assert_int_eq(bip_topology_route(topo, "h0", "h4", &r), -EHOSTUNREACH);
	ck_assert_int_eq(bip_topology_route(topo, "h4", "h0b", &r), -EHOSTUNREACH);
	ck_assert_int_eq(bip_topology_route(topo, "h0", "nobody", &r), -ENOENT);
	ck_assert_int_eq(bip_topology_route(topo, "s1", "h0", &r), -ENOENT);
	ck_assert_mem_eq(&r, &before, sizeof(r));
	check_all_routes_arrive(topo);
	bip_topology_free(topo);
}
END_TEST

START_TEST(test_route_ring)
{
	/* Six switches in a ring: port 1 to the next, port 0 to the previous, host on 3. */
	struct bip_topology *topo = parse_ok("switch r0 8\nswitch r1 8\nswitch r2 8\n"
					     "switch r3 8\nswitch r4 8\nswitch r5 8\n"
					     "link r0 1 r1 0\nlink r1 1 r2 0\nlink r2 1 r3 0\n"
					     "link r3 1 r4 0\nlink r4 1 r5 0\nlink r5 1 r0 0\n"
					     "link a0 r0 3\nlink a1 r1 3\nlink a2 r2 3\n"
					     "link a3 r3 3\nlink a4 r4 3\nlink a5 r5 3\n");

	expect_route(topo, "a0", "a2", "1 1 3");
	expect_route(topo, "a0", "a4", "0 0 3");
	expect_route(topo, "a0", "a5", "0 3");
	expect_route(topo, "a5", "a0", "1 3");
	expect_route(topo, "a4", "a0", "1 1 3");
	expect_route(topo, "a4", "a1", "0 0 0 3");
	/* Opposite side: both ways cross four switches; the lower ports win. */
	expect_route(topo, "a0", "a3", "0 0 0 3");
	expect_route(topo, "a3", "a0", "0 0 0 3");
	expect_reaches(topo, "a0", mkroute(4, 1, 1, 1, 3), "a3");
	check_all_routes_arrive(topo);
	bip_topology_free(topo);
}
END_TEST

START_TEST(test_route_parallel)
{
	/* Two switches with two cables between them, x on A and y on B. */
	struct bip_topology *topo = parse_ok("switch A 8\nswitch B 8\n"
					     "link A 4 B 5\nlink A 2 B 7\n"
					     "link x A 0\nlink y B 1\nlink z B 3\n");

	expect_route(topo, "x", "y", "2 1");
	expect_route(topo, "y", "x", "5 0");
	expect_route(topo, "y", "z", "3");
	expect_reaches(topo, "x", mkroute(2, 4, 1, 0, 0), "y");
	expect_reaches(topo, "y", mkroute(2, 7, 0, 0, 0), "x");
	check_all_routes_arrive(topo);
	bip_topology_free(topo);
}
END_TEST

START_TEST(test_direct)
{
	struct bip_topology *topo = parse_ok("direct p q\nswitch s 8\nlink r s 0\nlink t s 1\n");
	struct bip_route r;

	expect_route(topo, "p", "q", "256");
	expect_route(topo, "q", "p", "256");
	expect_reaches(topo, "p", mkroute(1, 256, 0, 0, 0), "q");
	ck_assert_int_eq(bip_topology_route(topo, "p", "r", &r), -EHOSTUNREACH);
	ck_assert_int_eq(bip_topology_route(topo, "r", "q", &r), -EHOSTUNREACH);
	expect_wrong(topo, "p", mkroute(1, 0, 0, 0, 0), "cabled back to back with q");
	expect_wrong(topo, "r", mkroute(1, 256, 0, 0, 0), "cabled to port 0 of switch s");
	check_all_routes_arrive(topo);
	bip_topology_free(topo);
}
END_TEST

START_TEST(test_follow_wrong_routes)
{
	struct bip_topology *topo = parse_ok(line_topo);
	const char *to = "untouched";
	char why[512];
	struct bip_route r = mkroute(1, 1, 0, 0, 0);

	expect_reaches(topo, "h0", mkroute(1, 7, 0, 0, 0), "h0b");
	expect_reaches(topo, "h1", mkroute(3, 1, 1, 2, 0), "h3");
	expect_wrong(topo, "h0", mkroute(1, 9, 0, 0, 0), "switch s0 has no port 9 (ports 0 to 7)");
	expect_wrong(topo, "h0", mkroute(2, 1, 8, 0, 0), "hop 2: switch s1 has no port 8");
	expect_wrong(topo, "h0", mkroute(2, 1, -1, 0, 0), "no port -1");
	expect_wrong(topo, "h0", mkroute(1, 5, 0, 0, 0), "no cable on port 5 of switch s0");
	expect_wrong(topo, "h0", mkroute(2, 1, 6, 0, 0), "hop 2: no cable on port 6 of switch s1");
	expect_wrong(topo, "h0", mkroute(1, 2, 0, 0, 0),
		     "leaves switch s0 through port 2, the one it came in");
	expect_wrong(topo, "h0", mkroute(3, 1, 1, 0, 0),
		     "hop 3: leaves switch s2 through port 0, the one it came in");
	expect_wrong(topo, "h0", mkroute(3, 1, 2, 0, 0), "too long: hop 2 reaches host h1");
	expect_wrong(topo, "h0", mkroute(2, 7, 1, 0, 0), "too long: hop 1 reaches host h0b");
	expect_wrong(topo, "h0", mkroute(2, 1, 1, 0, 0), "too short: ends inside switch s2");
	expect_wrong(topo, "h0", mkroute(1, 256, 0, 0, 0), "cabled to port 2 of switch s0");
	expect_wrong(topo, "h0", mkroute(2, 1, 256, 0, 0), "switch s1 has no port 256");
	expect_wrong(topo, "h0", mkroute(2, 256, 1, 0, 0), "256 must be alone");
	expect_wrong(topo, "h0", mkroute(0, 0, 0, 0, 0), "0 hops");
	expect_wrong(topo, "h0", mkroute(5, 1, 1, 1, 1), "5 hops");
	/* The route from h0 to h4 would need a fifth hop. */
	expect_wrong(topo, "h0", mkroute(4, 1, 1, 1, 1), "too short: ends inside switch s4");
	ck_assert_int_eq(bip_topology_follow(topo, "ghost", &r, &to, why, sizeof(why)), -ENOENT);
	ck_assert_str_eq(to, "untouched");
	ck_assert_msg(strstr(why, "ghost") != NULL, "\"%s\" should name the host", why);
	bip_topology_free(topo);
}
END_TEST

/* Two parallel networks: every host's board 0 on switch A, board 1 on
 * switch B (cabled to other ports), and a direct pair on unit 2. */
START_TEST(test_units)
{
	struct bip_topology *topo = parse_ok("switch A 8\nswitch B 8\n"
					     "link h1 A 0\nlink h2/0 A 1\nlink h3 A 2\n"
					     "link h1/1 B 5\nlink h2/1 B 6\nlink h3/1 B 7\n"
					     "direct h1/2 h2/2\n");
	struct bip_route r = {0};
	const char *to = NULL;
	char why[512] = "", text[64];
	int unit = -1;

	ck_assert_int_eq(bip_topology_units(topo), 3);
	ck_assert_int_eq(bip_topology_host_count(topo), 3);
	expect_route(topo, "h1", "h3", "2");
	ck_assert_int_eq(bip_topology_route_unit(topo, "h1", "h3", 1, &r), 0);
	ck_assert_int_eq(bip_route_format(&r, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "7");
	ck_assert_int_eq(bip_topology_route_unit(topo, "h1", "h2", 2, &r), 0);
	ck_assert_int_eq(r.hop[0], BIP_ROUTE_DIRECT);
	ck_assert_int_eq(bip_topology_route_unit(topo, "h1", "h3", 2, &r), -ENOENT);
	/* Following: unit 1 lands on unit 1 of h2. */
	r = mkroute(1, 6, 0, 0, 0);
	ck_assert_int_eq(bip_topology_follow_unit(topo, "h1", 1, &r, &to, &unit, why, sizeof(why)),
			 0);
	ck_assert_str_eq(to, "h2");
	ck_assert_int_eq(unit, 1);
	r = mkroute(1, 256, 0, 0, 0);
	ck_assert_int_eq(bip_topology_follow_unit(topo, "h2", 2, &r, &to, &unit, why, sizeof(why)),
			 0);
	ck_assert_str_eq(to, "h1");
	ck_assert_int_eq(unit, 2);
	ck_assert_int_eq(bip_topology_follow_unit(topo, "h3", 3, &r, &to, &unit, why, sizeof(why)),
			 -ENOENT);
	ck_assert_str_eq(why, "host h3 has no board 3 in the topology");
	bip_topology_free(topo);

	/* Networks joined: rail 1's route may land on a board 0. */
	topo = parse_ok("switch A 4\nlink a A 0\nlink a/1 A 1\nlink b A 2\n");
	r = mkroute(1, 2, 0, 0, 0);
	ck_assert_int_eq(bip_topology_follow_unit(topo, "a", 1, &r, &to, &unit, why, sizeof(why)),
			 0);
	ck_assert_str_eq(to, "b");
	ck_assert_int_eq(unit, 0);
	bip_topology_free(topo);

	expect_error("switch A 4\nlink a/1 A 0\nlink a/1 A 1\n", "test.topo:3:",
		     "board 1 of host a already has its cable (line 2)");
	expect_error("switch A 4\nlink a/9 A 0\n", "test.topo:2:",
		     "\"a/9\": expected HOST or HOST/UNIT, a board 0 to 3");
	expect_error("switch A 4\nlink /1 A 0\n", "test.topo:2:", "expected HOST or HOST/UNIT");
	expect_error("direct a/1 a/2\n", "test.topo:1:", "host a cabled to itself");
}
END_TEST

START_TEST(test_default_path)
{
	char buf[256];
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	setenv("HOME", "/home/someone", 1);
	unsetenv("BIP_TOPOLOGY");
	ck_assert_int_eq(bip_topology_default_path(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/home/someone/.bip/biptopology");
	setenv("BIP_TOPOLOGY", "", 1);
	ck_assert_int_eq(bip_topology_default_path(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/home/someone/.bip/biptopology");
	setenv("BIP_TOPOLOGY", "net.topo", 1);
	ck_assert_int_eq(bip_topology_default_path(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "net.topo");
	ck_assert_int_eq(bip_topology_default_path(buf, 5), -ENAMETOOLONG);
	unsetenv("BIP_TOPOLOGY");
	unsetenv("HOME");
	ck_assert_int_eq(bip_topology_default_path(buf, sizeof(buf)), -ENOENT);
	if (home)
		setenv("HOME", home, 1);
	free(home);
}
END_TEST

START_TEST(test_route_format)
{
	char buf[32];
	struct bip_route r = mkroute(4, 1, 12, 3, 63);

	ck_assert_int_eq(bip_route_format(&r, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "1 12 3 63");
	ck_assert_int_eq(bip_route_format(&r, buf, 4), -ENAMETOOLONG);
	r.nhops = 0;
	ck_assert_int_eq(bip_route_format(&r, buf, sizeof(buf)), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("topology");
	TCase *parse = tcase_create("bip_topology_load");
	TCase *route = tcase_create("bip_topology_route");
	TCase *follow = tcase_create("bip_topology_follow");
	TCase *misc = tcase_create("paths and formats");
	SRunner *sr;
	int failed;

	tcase_add_test(parse, test_parse_hosts);
	tcase_add_test(parse, test_malformed);
	tcase_add_test(parse, test_load_file);
	tcase_add_test(route, test_route_line);
	tcase_add_test(route, test_route_ring);
	tcase_add_test(route, test_route_parallel);
	tcase_add_test(route, test_direct);
	tcase_add_test(follow, test_follow_wrong_routes);
	tcase_add_test(route, test_units);
	tcase_add_test(misc, test_default_path);
	tcase_add_test(misc, test_route_format);
	suite_add_tcase(s, parse);
	suite_add_tcase(s, route);
	suite_add_tcase(s, follow);
	suite_add_tcase(s, misc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
