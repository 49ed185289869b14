/* SPDX-License-Identifier: MIT */
/* Unit tests of the routing database (lib/bip/conf/bipdatabase.c, bipconf(5)). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bipdatabase.h"

static char path[64];
static char err[1024];

static void setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/check_bipdatabase_XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
}

static void write_text(const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static struct bip_database *load_ok(void)
{
	struct bip_database *db = NULL;
	int rc = bip_database_load(path, &db, err, sizeof(err));

	ck_assert_msg(rc == 0, "load failed (%d): %s", rc, err);
	return db;
}

static void expect_error(const char *text, int line, const char *what)
{
	struct bip_database *db = (void *)1;
	char where[128];

	write_text(text);
	ck_assert_int_eq(bip_database_load(path, &db, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_eq(db, (void *)1);
	snprintf(where, sizeof(where), "%s:%d: ", path, line);
	ck_assert_msg(!strncmp(err, where, strlen(where)), "\"%s\" should start \"%s\"", err,
		      where);
	ck_assert_msg(strstr(err, what) != NULL, "\"%s\" should say \"%s\"", err, what);
}

/* A database written before topologies existed still reads the same. */
START_TEST(test_old_format)
{
	struct bip_database *db;
	struct bip_route r = {0};

	write_text("# BIP routing database\nhost a\nhost b\n\nroute a b 256\nroute b a 3 5\n");
	db = load_ok();
	ck_assert_int_eq(bip_database_has(db, "a"), 1);
	ck_assert_int_eq(bip_database_has(db, "c"), 0);
	ck_assert_ptr_null(bip_database_topology(db));
	ck_assert_int_eq(bip_database_route(db, "b", "a", &r), 0);
	ck_assert_int_eq(r.nhops, 2);
	ck_assert_int_eq(r.hop[1], 5);
	ck_assert_int_eq(bip_database_route(db, "a", "c", &r), -ENOENT);
	ck_assert_int_eq(r.hop[1], 5);
	bip_database_free(db);
}
END_TEST

START_TEST(test_errors)
{
	struct bip_database *db = (void *)1;

	expect_error("host a\nbogus\n", 2, "unknown keyword \"bogus\"");
	expect_error("# c\nhost\n", 2, "malformed host line");
	expect_error("host a b\n", 1, "malformed host line");
	expect_error("route a b\n", 1, "malformed route line");
	expect_error("route a b 1 2 3 4 5\n", 1, "malformed route line");
	expect_error("route a b 256 1\n", 1, "malformed route line");
	expect_error("route a b 257\n", 1, "malformed route line");
	expect_error("route a b x\n", 1, "malformed route line");
	unlink(path);
	ck_assert_int_eq(bip_database_load(path, &db, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_eq(db, (void *)1);
}
END_TEST

START_TEST(test_write_round_trip)
{
	struct bip_database *db = NULL, *back;
	struct bip_route r2 = {.nhops = 2, .hop = {7, 3}};
	struct bip_route r4 = {.nhops = 4, .hop = {0, 1, 2, 63}};
	struct bip_route bad = {.nhops = 5}, r = {0};
	FILE *f;

	ck_assert_int_eq(bip_database_create("/net/topo file", &db), 0);
	ck_assert_int_eq(bip_database_add_host(db, "localhost"), 0);
	ck_assert_int_eq(bip_database_add_host(db, "127.0.0.2"), 0);
	ck_assert_int_eq(bip_database_add_host(db, "localhost"), 0);
	ck_assert_int_eq(bip_database_add_host(db, "a b"), -EINVAL);
	ck_assert_int_eq(bip_database_add_host(db, ""), -EINVAL);
	ck_assert_int_eq(bip_database_add_route(db, "localhost", "127.0.0.2", &r2), 0);
	ck_assert_int_eq(bip_database_add_route(db, "127.0.0.2", "localhost", &r4), 0);
	ck_assert_int_eq(bip_database_add_route(db, "127.0.0.2", "localhost", &bad), -EINVAL);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bip_database_write(f, db), 0);
	fclose(f);
	bip_database_free(db);

	back = load_ok();
	ck_assert_str_eq(bip_database_topology(back), "/net/topo file");
	ck_assert_int_eq(bip_database_has(back, "127.0.0.2"), 1);
	ck_assert_int_eq(bip_database_route(back, "127.0.0.2", "localhost", &r), 0);
	ck_assert_mem_eq(&r, &r4, sizeof(r));
	ck_assert_int_eq(bip_database_route(back, "localhost", "127.0.0.2", &r), 0);
	ck_assert_mem_eq(&r, &r2, sizeof(r));
	bip_database_free(back);

	/* Without a topology: hosts of an IP network. */
	ck_assert_int_eq(bip_database_create(NULL, &db), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bip_database_write(f, db), 0);
	fclose(f);
	bip_database_free(db);
	back = load_ok();
	ck_assert_ptr_null(bip_database_topology(back));
	bip_database_free(back);
}
END_TEST

/* Many hosts, each found by name; routes found by their pair, the first
 * line of a pair given twice; all direct until a route crosses a switch. */
START_TEST(test_many_hosts)
{
	struct bip_route direct = {.nhops = 1, .hop = {256}}, r3 = {.nhops = 1, .hop = {3}};
	struct bip_route r = {0};
	struct bip_database *db = NULL;
	char a[32], b[32];
	int i;

	ck_assert_int_eq(bip_database_create(NULL, &db), 0);
	for (i = 0; i < 5000; i++) {
		snprintf(a, sizeof(a), "node%04d", i);
		ck_assert_int_eq(bip_database_add_host(db, a), 0);
	}
	ck_assert_int_eq(bip_database_add_host(db, "node0042"), 0);
	for (i = 0; i < 5000; i += 7) {
		snprintf(a, sizeof(a), "node%04d", i);
		ck_assert_int_eq(bip_database_has(db, a), 1);
		snprintf(a, sizeof(a), "node%04dx", i);
		ck_assert_int_eq(bip_database_has(db, a), 0);
	}
	ck_assert_int_eq(bip_database_all_direct(db), 1);
	/* An IP network's database gives no route: direct, by bipconf's rule. */
	ck_assert_int_eq(bip_database_route(db, "node0001", "node0002", &r), -ENOENT);
	for (i = 0; i < 4999; i++) {
		snprintf(a, sizeof(a), "node%04d", i);
		snprintf(b, sizeof(b), "node%04d", i + 1);
		ck_assert_int_eq(bip_database_add_route(db, a, b, &direct), 0);
	}
	ck_assert_int_eq(bip_database_all_direct(db), 1);
	ck_assert_int_eq(bip_database_add_route(db, "node0007", "node0008", &r3), 0);
	ck_assert_int_eq(bip_database_all_direct(db), 0);
	ck_assert_int_eq(bip_database_route(db, "node0007", "node0008", &r), 0);
	ck_assert_int_eq(r.hop[0], 256);
	ck_assert_int_eq(bip_database_route(db, "node4998", "node4999", &r), 0);
	ck_assert_int_eq(bip_database_route(db, "node4999", "node4998", &r), -ENOENT);
	/* A route may name a host no "host" line names: it is not a host. */
	ck_assert_int_eq(bip_database_add_route(db, "other", "node0001", &r3), 0);
	ck_assert_int_eq(bip_database_has(db, "other"), 0);
	ck_assert_int_eq(bip_database_route(db, "other", "node0001", &r), 0);
	ck_assert_int_eq(r.hop[0], 3);
	bip_database_free(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bipdatabase");
	TCase *load = tcase_create("bip_database_load");
	TCase *write = tcase_create("bip_database_write");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(load, setup, teardown);
	tcase_add_checked_fixture(write, setup, teardown);
	tcase_add_test(load, test_old_format);
	tcase_add_test(load, test_errors);
	tcase_add_test(load, test_many_hosts);
	tcase_add_test(write, test_write_round_trip);
	suite_add_tcase(s, load);
	suite_add_tcase(s, write);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
