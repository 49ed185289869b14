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
static const char *node_stderr; /* a file for the nodes' stderr, or NULL */

static pid_t run_node(const struct bip_conf *conf, int node, int n, double timeout,
		      const char *expect_err)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (node_stderr && freopen(node_stderr, "a", stderr))
			setvbuf(stderr, NULL, _IONBF, 0); /* the node leaves by _exit */
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

#define SECRET "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void new_job(void)
{
	static int k;

	snprintf(jobid, sizeof(jobid), "oob%xk%d", (unsigned)getpid(), k++);
	setenv("BIP_SECRET", SECRET, 1);
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

/* A port for the tests below, set in BIP_OOB_PORT; returns it. */
static int fixed_port(void)
{
	int fd, p;
	char v[16];

	fd = hold_port(&p);
	close(fd);
	if (p > 65535 - BIP_OOB_PORTS)
		p -= BIP_OOB_PORTS;
	snprintf(v, sizeof(v), "%d", p);
	setenv("BIP_OOB_PORT", v, 1);
	return p;
}

/* Connect to node 0's port on this host, retrying while it is not there. */
static int connect_node0(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int i, fd;

	for (i = 0; i < 500; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_ge(fd, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		usleep(10000);
	}
	ck_abort_msg("node 0 never listened on port %d", port);
	return -1;
}

/* The nodes forked from now on write their stderr into a new file at
 * path (a mkstemp template), read by log_has; log_end removes it. */
static void log_to(char *path)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	node_stderr = path;
}

static void log_end(const char *path)
{
	node_stderr = NULL;
	unlink(path);
	unsetenv("BIP_OOB_PORT");
}

static int log_has(const char *path, const char *what)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * Silent clients connected before the real nodes do not hold them up: node
 * 0 serves every connection at once.  Eight of them, each allowed its 5 s,
 * would take 40 s one after the other, far past the exchange's 12 s.
 */
START_TEST(test_silent_clients_do_not_stall)
{
	char log[] = "/tmp/bip-oob-logXXXXXX";
	struct bip_conf *conf;
	int port, fd[8], i;
	char junk[200];
	pid_t p0, p1, p2;

	new_job();
	log_to(log);
	port = fixed_port();
	conf = make_conf(3, "localhost");
	p0 = run_node(conf, 0, 3, 12, NULL);
	for (i = 0; i < 8; i++)
		fd[i] = connect_node0(port);
	/* Garbage, and a join cut short, on two of them. */
	memset(junk, 'G', sizeof(junk));
	ck_assert_int_eq(write(fd[0], junk, sizeof(junk)), (ssize_t)sizeof(junk));
	ck_assert_int_eq(write(fd[1], "BIPOOB2", 8), 8);
	p1 = run_node(conf, 1, 3, 12, NULL);
	p2 = run_node(conf, 2, 3, 12, NULL);
	ck_assert_int_eq(wait_status(p0), 0);
	ck_assert_int_eq(wait_status(p1), 0);
	ck_assert_int_eq(wait_status(p2), 0);
	for (i = 0; i < 8; i++)
		close(fd[i]);
	ck_assert_msg(log_has(log, "dropped a connection from 127.0.0.1"), "no drop logged");
	ck_assert_msg(log_has(log, "not a BIP start-up frame"), "garbage not named");
	log_end(log);
	bip_conf_free(conf);
}
END_TEST

/* A node with another secret is not let in, and learns that node 0's
 * listener gave no proof; node 0 names the node it waited for. */
START_TEST(test_wrong_secret_is_refused)
{
	char log[] = "/tmp/bip-oob-logXXXXXX";
	struct bip_conf *conf;
	pid_t p0, p1;

	new_job();
	log_to(log);
	fixed_port();
	conf = make_conf(2, "localhost");
	p0 = run_node(conf, 0, 2, 3.0, "waiting for node 1");
	setenv("BIP_SECRET", "ffeeddccbbaa99887766554433221100", 1);
	p1 = run_node(conf, 1, 2, 3.0, "no proof of the job's secret");
	ck_assert_int_eq(wait_status(p0), 3);
	ck_assert_int_eq(wait_status(p1), 3);
	ck_assert_msg(log_has(log, "its proof of the job's secret is wrong"), "no drop logged");
	log_end(log);
	bip_conf_free(conf);
}
END_TEST

/* No secret, or a malformed one: a clear error saying how to set it. */
START_TEST(test_secret_missing_or_malformed)
{
	struct bip_conf *conf;

	new_job();
	conf = make_conf(2, "localhost");
	unsetenv("BIP_SECRET");
	ck_assert_int_eq(wait_status(run_node(conf, 1, 2, 1.0, "no job secret")), 3);
	setenv("BIP_SECRET", "0123", 1);
	ck_assert_int_eq(wait_status(run_node(conf, 1, 2, 1.0, "32 to 128 hex digits")), 3);
	setenv("BIP_SECRET", "zz112233445566778899aabbccddeeff", 1);
	ck_assert_int_eq(wait_status(run_node(conf, 1, 2, 1.0, "not all hex digits")), 3);
	bip_conf_free(conf);
}
END_TEST

/* The join frame as node 0 reads it from the network. */
START_TEST(test_join_check)
{
	unsigned char f[92] = { 0 };
	uint32_t v;
	char why[256];
	size_t blob;
	int node;

	memcpy(f, "BIPOOB2", 8);
	strcpy((char *)f + 8, "jobA");
	v = htonl(4), memcpy(f + 48, &v, 4);   /* numnodes */
	v = htonl(48), memcpy(f + 52, &v, 4);  /* len */
	v = htonl(3), memcpy(f + 56, &v, 4);   /* node */
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, &node, &blob, why,
					    sizeof(why)), 0);
	ck_assert_int_eq(node, 3);
	ck_assert_uint_eq(blob, 48);
	ck_assert_int_eq(bip_oob_join_check(f, 50, "jobA", 4, 48, &node, &blob, why,
					    sizeof(why)), -EPROTO);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobB", 4, 48, &node, &blob, why,
					    sizeof(why)), -ESRCH);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 3, 48, &node, &blob, why,
					    sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "node 3 of 4"), "%s", why);
	v = htonl(0), memcpy(f + 56, &v, 4);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, &node, &blob, why,
					    sizeof(why)), -EINVAL);
	v = htonl(1u << 20), memcpy(f + 52, &v, 4);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, &node, &blob, why,
					    sizeof(why)), -EPROTO);
	memset(f + 8, 'x', 40); /* no terminating zero */
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, &node, &blob, why,
					    sizeof(why)), -ESRCH);
	f[0] = 'X';
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, &node, &blob, why,
					    sizeof(why)), -EPROTO);
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
	tcase_add_test(tc, test_silent_clients_do_not_stall);
	tcase_add_test(tc, test_wrong_secret_is_refused);
	tcase_add_test(tc, test_secret_missing_or_malformed);
	tcase_add_test(tc, test_join_check);
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
