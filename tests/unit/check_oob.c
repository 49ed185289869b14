/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the out-of-band address exchange (lib/bip/oob.c): forked
 * processes play the nodes of a job on this host.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "oob.h"

#define BLOB 48

static char jobid[32];

/* A configuration of n nodes: node 0 on host0, the others on localhost. */
static struct bip_conf *make_conf(int n, const char *host0)
{
	char text[4096], err[256];
	struct bip_conf *conf = NULL;
	size_t used;
	int i, j;

	used = (size_t)snprintf(text, sizeof(text), "%d\n", n);
	for (i = 0; i < n; i++) {
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s 0\n",
					 i == 0 ? host0 : "localhost");
		for (j = 0; j < n; j++)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "256\n");
	}
	ck_assert_msg(bip_conf_parse_string(text, "test", &conf, err, sizeof(err)) == 0, "%s",
		      err);
	return conf;
}

static void blob_of(int node, char *blob)
{
	memset(blob, 0, BLOB);
	snprintf(blob, BLOB, "address of node %d", node);
}

/* Run node as a child: exchange and check every blob.  Exit status: 0 ok,
 * 1 the exchange failed (message on stdout), 2 wrong data. */
static pid_t run_node(const struct bip_conf *conf, int node, int n, double timeout,
		      const char *expect_err)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bip_oob_job job = {
			.mynode = node, .numnodes = n, .conf = conf, .jobid = jobid,
			.what = "test", .timeout = timeout,
		};
		char blob[BLOB], want[BLOB], *all = malloc((size_t)n * BLOB), err[512] = "";
		int i, rc;

		blob_of(node, blob);
		rc = bip_oob_allgather(&job, blob, BLOB, all, err, sizeof(err));
		if (rc < 0) {
			printf("node %d: %s\n", node, err);
			fflush(stdout);
			_exit(expect_err && strstr(err, expect_err) ? 3 : 1);
		}
		for (i = 0; i < n; i++) {
			blob_of(i, want);
			if (memcmp(all + (size_t)i * BLOB, want, BLOB))
				_exit(2);
		}
		_exit(0);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void new_job(void)
{
	static int k;

	snprintf(jobid, sizeof(jobid), "oob%xk%d", (unsigned)getpid(), k++);
}

START_TEST(test_allgather_any_order)
{
	struct bip_conf *conf;
	pid_t pids[5];
	int i;

	new_job();
	conf = make_conf(5, "localhost");
	/* The others first: they retry until node 0 listens. */
	for (i = 4; i >= 0; i--) {
		pids[i] = run_node(conf, i, 5, 30, NULL);
		if (i == 2)
			usleep(200000);
	}
	for (i = 0; i < 5; i++)
		ck_assert_msg(wait_status(pids[i]) == 0, "node %d", i);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_missing_node_is_named)
{
	struct bip_conf *conf;
	pid_t p0, p1;

	new_job();
	conf = make_conf(3, "localhost");
	/* Node 2 never comes: node 0 names it, and node 1 says the same. */
	p0 = run_node(conf, 0, 3, 2.0, "waiting for node 2 (localhost)");
	p1 = run_node(conf, 1, 3, 2.0, "waiting for node 2 (localhost)");
	ck_assert_int_eq(wait_status(p0), 3);
	ck_assert_int_eq(wait_status(p1), 3);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_unknown_host_is_named)
{
	struct bip_conf *conf;

	new_job();
	conf = make_conf(2, "no-such-host.invalid");
	ck_assert_int_eq(wait_status(run_node(conf, 1, 2, 1.0, "host no-such-host.invalid")), 3);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_no_node0_times_out)
{
	struct bip_conf *conf;
	char port[16];

	new_job();
	/* A port range where nothing listens: the node says node 0 never did. */
	snprintf(port, sizeof(port), "%d", 61000 + (int)(getpid() % 2000));
	setenv("BIP_OOB_PORT", port, 1);
	conf = make_conf(2, "localhost");
	ck_assert_int_eq(wait_status(run_node(conf, 1, 2, 1.0, "node 0 (host localhost) never")),
			 3);
	unsetenv("BIP_OOB_PORT");
	bip_conf_free(conf);
}
END_TEST

/* Bind a free port without listening: node 0 cannot take it, and a node
 * connecting there is refused at once. */
static int hold_port(int *port_p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*port_p = ntohs(sa.sin_port);
	return fd;
}

START_TEST(test_busy_port_takes_the_next)
{
	struct bip_conf *conf;
	char port[16];
	pid_t pids[3];
	int fd, p, i;

	new_job();
	fd = hold_port(&p);
	if (p > 65535 - BIP_OOB_PORTS) {
		close(fd);
		return; /* too close to the end of the range to test the next ports */
	}
	snprintf(port, sizeof(port), "%d", p);
	setenv("BIP_OOB_PORT", port, 1);
	conf = make_conf(3, "localhost");
	for (i = 0; i < 3; i++)
		pids[i] = run_node(conf, i, 3, 30, NULL);
	for (i = 0; i < 3; i++)
		ck_assert_msg(wait_status(pids[i]) == 0, "node %d", i);
	unsetenv("BIP_OOB_PORT");
	close(fd);
	bip_conf_free(conf);
}
END_TEST

START_TEST(test_bad_port_variable)
{
	char err[256];

	setenv("BIP_OOB_PORT", "70000", 1);
	ck_assert_int_eq(bip_oob_port("x", err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "BIP_OOB_PORT=70000") != NULL, "%s", err);
	unsetenv("BIP_OOB_PORT");
	ck_assert_int_ge(bip_oob_port("x", err, sizeof(err)), 20000);
	ck_assert_int_eq(bip_oob_port("x", err, sizeof(err)), bip_oob_port("x", err, sizeof(err)));
}
END_TEST

static Suite *oob_suite(void)
{
	Suite *s = suite_create("oob");
	TCase *tc = tcase_create("allgather");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_allgather_any_order);
	tcase_add_test(tc, test_missing_node_is_named);
	tcase_add_test(tc, test_unknown_host_is_named);
	tcase_add_test(tc, test_no_node0_times_out);
	tcase_add_test(tc, test_busy_port_takes_the_next);
	tcase_add_test(tc, test_bad_port_variable);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(oob_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
