/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the out-of-band address exchange (lib/bip/boot/oob.c): forked
 * processes play the nodes of a job on this host.  Host names of the
 * loopback network (127.0.0.1, 127.0.0.2, ...) play several hosts: their
 * first nodes talk over TCP; nodes with the same host name over UNIX
 * sockets.
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

/* A configuration of n nodes, node i on hosts[i % nhosts]. */
static struct bip_conf *make_conf_on(int n, const char *const *hosts, int nhosts)
{
	size_t size = 64 + (size_t)n * (64 + 4 * (size_t)n);
	char *text = malloc(size), err[256];
	struct bip_conf *conf = NULL;
	size_t used;
	int i, j;

	ck_assert_ptr_nonnull(text);
	used = (size_t)snprintf(text, size, "%d\n", n);
	for (i = 0; i < n; i++) {
		used += (size_t)snprintf(text + used, size - used, "%s 0\n", hosts[i % nhosts]);
		for (j = 0; j < n; j++)
			used += (size_t)snprintf(text + used, size - used, "256\n");
	}
	ck_assert_msg(bip_conf_parse_string(text, "test", &conf, err, sizeof(err)) == 0, "%s",
		      err);
	free(text);
	return conf;
}

/* n nodes: node 0 on host0, the others on localhost. */
static struct bip_conf *make_conf(int n, const char *host0)
{
	const char *hosts[64];
	int i;

	ck_assert_int_le(n, 64);
	hosts[0] = host0;
	for (i = 1; i < n; i++)
		hosts[i] = "localhost";
	return make_conf_on(n, hosts, n);
}

static void blob_of(int node, char *blob)
{
	memset(blob, 0, BLOB);
	snprintf(blob, BLOB, "address of node %d", node);
}

/* Run node as a child: exchange and check every blob.  Exit status: 0 ok,
 * 1 the exchange failed (message on stdout), 2 wrong data, 3 it failed with
 * a message holding expect_err, 4 it failed with one holding expect_err
 * and expect_too. */
static const char *node_stderr; /* a file for the nodes' stderr, or NULL */
static const char *expect_too;

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
		char blob[BLOB], want[BLOB], *all = malloc((size_t)n * BLOB), err[1024] = "";
		int i, rc;

		blob_of(node, blob);
		rc = bip_oob_allgather(&job, blob, BLOB, all, err, sizeof(err));
		if (rc < 0) {
			printf("node %d: %s\n", node, err);
			fflush(stdout);
			if (expect_err && strstr(err, expect_err))
				_exit(expect_too && strstr(err, expect_too) ? 4 : 3);
			_exit(1);
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

/* Start every node of conf (in the order given, or backwards), wait, and
 * check that each exchanged every blob. */
static void run_all(const struct bip_conf *conf, int n, int backwards, double timeout)
{
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	int i, k;

	ck_assert_ptr_nonnull(pids);
	for (k = 0; k < n; k++) {
		i = backwards ? n - 1 - k : k;
		pids[i] = run_node(conf, i, n, timeout, NULL);
		if (k == n / 2)
			usleep(200000);
	}
	for (i = 0; i < n; i++)
		ck_assert_msg(wait_status(pids[i]) == 0, "node %d of %d", i, n);
	free(pids);
}

START_TEST(test_allgather_any_order)
{
	struct bip_conf *conf;

	new_job();
	conf = make_conf(5, "localhost");
	/* The others first: they retry until their parents listen. */
	run_all(conf, 5, 1, 30);
	bip_conf_free(conf);
}
END_TEST

/* 40 nodes on 4 hosts, round robin: the hosts' first nodes over TCP,
 * the others over UNIX sockets; two exchanges in a row, as the ofi driver
 * does (the second must not meet the first's listeners). */
START_TEST(test_allgather_hosts)
{
	static const char *const hosts[] = { "127.0.0.1", "127.0.0.2", "127.0.0.3",
					     "127.0.0.4" };
	struct bip_conf *conf;
	pid_t pids[40];
	int i;

	new_job();
	conf = make_conf_on(40, hosts, 4);
	for (i = 39; i >= 0; i--) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct bip_oob_job job = {
				.mynode = i, .numnodes = 40, .conf = conf, .jobid = jobid,
				.what = "test", .timeout = 30,
			};
			char blob[BLOB], want[BLOB], all[40 * BLOB], err[1024];
			int round, k;

			for (round = 0; round < 2; round++) {
				blob_of(i + round * 100, blob);
				if (bip_oob_allgather(&job, blob, BLOB, all, err, sizeof(err)) < 0) {
					printf("node %d: %s\n", i, err);
					_exit(1);
				}
				for (k = 0; k < 40; k++) {
					blob_of(k + round * 100, want);
					if (memcmp(all + (size_t)k * BLOB, want, BLOB))
						_exit(2);
				}
			}
			_exit(0);
		}
		pids[i] = pid;
	}
	for (i = 0; i < 40; i++)
		ck_assert_msg(wait_status(pids[i]) == 0, "node %d", i);
	bip_conf_free(conf);
}
END_TEST

/* The tree: one root, each node once, parents and children agree, nobody
 * serves more than log2(its host's nodes) + log2(hosts) children, and no
 * node is further from node 0. */
START_TEST(test_tree_shape)
{
	static const char *const hosts[] = { "a", "b", "c", "d", "e", "f", "g" };
	static const int sizes[][2] = { { 2, 1 }, { 2, 2 }, { 7, 1 }, { 7, 7 }, { 33, 3 },
					{ 64, 4 }, { 100, 7 }, { 129, 2 } };
	size_t s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s][0], nh = sizes[s][1], i, k, bits = 0, v, per = (n + nh - 1) / nh;
		struct bip_conf *conf = make_conf_on(n, hosts, nh);
		struct bip_oob_tree *t;
		int *seen = calloc((size_t)n, sizeof(int)), ch[64];

		for (v = per - 1; v; v >>= 1)
			bits++;
		for (v = nh - 1; v; v >>= 1)
			bits++;
		ck_assert_int_eq(bip_oob_tree_new(conf, n, &t), 0);
		for (i = 0; i < n; i++) {
			int local, p = bip_oob_tree_parent(t, i, &local);
			int nc = bip_oob_tree_children(t, i, ch, 64);

			ck_assert_msg(nc <= bits, "n %d: node %d has %d children (> %d)", n, i, nc,
				      bits);
			ck_assert_msg(bip_oob_tree_depth(t, i) <= bits, "n %d: node %d too deep", n,
				      i);
			for (k = 0; k < nc; k++) {
				int l, q = bip_oob_tree_parent(t, ch[k], &l);

				ck_assert_msg(q == i, "n %d: node %d's child %d has parent %d", n, i,
					      ch[k], q);
				ck_assert_int_eq(l, !strcmp(conf->nodes[i].host,
							    conf->nodes[ch[k]].host));
				ck_assert_int_eq(bip_oob_tree_depth(t, ch[k]),
						 bip_oob_tree_depth(t, i) + 1);
				seen[ch[k]]++;
			}
			if (i == 0) {
				ck_assert_int_eq(p, -1);
			} else {
				ck_assert_msg(p >= 0 && p < n, "n %d: node %d has parent %d", n, i, p);
				ck_assert_int_eq(local, !strcmp(conf->nodes[i].host,
								conf->nodes[p].host));
				/* A node of another host reports from its host's first node. */
				if (!local)
					for (k = 0; k < i; k++)
						ck_assert_msg(strcmp(conf->nodes[k].host,
								     conf->nodes[i].host),
							      "n %d: node %d is not its host's first", n, i);
			}
		}
		ck_assert_int_eq(seen[0], 0);
		for (i = 1; i < n; i++)
			ck_assert_msg(seen[i] == 1, "n %d: node %d is a child %d times", n, i,
				      seen[i]);
		bip_oob_tree_free(t);
		free(seen);
		bip_conf_free(conf);
	}
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

/*
 * Eight nodes of one host: 0 serves 1, 2, 4; 2 serves 3; 4 serves 5, 6;
 * 6 serves 7.  Node 4 never comes: node 0 names it (and the three below
 * it), and the nodes below it name it as the node they report to.
 */
START_TEST(test_missing_inner_node_is_named)
{
	struct bip_conf *conf;
	pid_t pids[8];
	int i;

	new_job();
	conf = make_conf(8, "localhost");
	expect_too = "3 more nodes join through it";
	for (i = 7; i >= 0; i--)
		if (i != 4)
			pids[i] = run_node(conf, i, 8, 3.0, i == 0 || i == 1 || i == 2 || i == 3 ?
					   "waiting for node 4 (localhost)" :
					   "node 4 (host localhost, this node's host), to which this "
					   "node reports in the start-up address exchange, never "
					   "listened for it");
	expect_too = NULL;
	for (i = 0; i < 8; i++)
		if (i != 4)
			ck_assert_msg(wait_status(pids[i]) == (i < 4 ? 4 : 3), "node %d", i);
	bip_conf_free(conf);
}
END_TEST

/* Node 6 never comes: node 4 gives up on it before node 0's time is up (half
 * a second earlier, node 0 starting last), so that node 0 names node 6, not
 * node 4. */
START_TEST(test_missing_deep_node_is_named)
{
	struct bip_conf *conf;
	pid_t pids[8];
	int i;

	new_job();
	conf = make_conf(8, "localhost");
	expect_too = "1 more node joins through it";
	for (i = 7; i >= 0; i--)
		if (i != 6)
			pids[i] = run_node(conf, i, 8, 8.0, i == 7 ?
					   "node 6 (host localhost, this node's host)" :
					   "waiting for node 6 (localhost) in");
	expect_too = NULL;
	for (i = 0; i < 8; i++)
		if (i != 6)
			ck_assert_msg(wait_status(pids[i]) == (i == 7 ? 3 : 4), "node %d", i);
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

START_TEST(test_no_parent_times_out)
{
	static const char *const hosts[] = { "127.0.0.1", "127.0.0.2" };
	struct bip_conf *conf;
	char port[16];

	new_job();
	/* A port range where nothing listens: the node says node 0 never did. */
	snprintf(port, sizeof(port), "%d", 61000 + (int)(getpid() % 2000));
	setenv("BIP_OOB_PORT", port, 1);
	conf = make_conf_on(2, hosts, 2);
	ck_assert_int_eq(wait_status(run_node(conf, 1, 2, 1.0, "node 0 (host 127.0.0.1), to which "
					      "this node reports in the start-up address exchange, "
					      "never listened for it on ports")), 3);
	unsetenv("BIP_OOB_PORT");
	bip_conf_free(conf);
}
END_TEST

/* Bind a free port without listening: a node cannot take it, and a node
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
	static const char *const hosts[] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	struct bip_conf *conf;
	char port[16];
	int fd, p;

	new_job();
	fd = hold_port(&p);
	if (p > 65535 - BIP_OOB_PORTS) {
		close(fd);
		return; /* too close to the end of the range to test the next ports */
	}
	snprintf(port, sizeof(port), "%d", p);
	setenv("BIP_OOB_PORT", port, 1);
	conf = make_conf_on(3, hosts, 3);
	run_all(conf, 3, 0, 30);
	unsetenv("BIP_OOB_PORT");
	close(fd);
	bip_conf_free(conf);
}
END_TEST

/*
 * Two hosts' first nodes on one address: host 0 (127.0.0.1) and host 2
 * ("localhost", the same address) both serve other hosts; the second takes
 * the next port, and host 3's first node, told "localhost", passes node 0's
 * listener over for its parent's.
 */
START_TEST(test_two_listeners_on_one_address)
{
	static const char *const hosts[] = { "127.0.0.1", "127.0.0.2", "localhost",
					     "127.0.0.3" };
	struct bip_conf *conf;
	struct bip_oob_tree *t;
	int local;

	new_job();
	conf = make_conf_on(8, hosts, 4);
	ck_assert_int_eq(bip_oob_tree_new(conf, 8, &t), 0);
	ck_assert_int_eq(bip_oob_tree_parent(t, 3, &local), 2);
	ck_assert_int_eq(local, 0);
	bip_oob_tree_free(t);
	run_all(conf, 8, 0, 30);
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
	static const char *const hosts[] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	char log[] = "/tmp/bip-oob-logXXXXXX";
	struct bip_conf *conf;
	int port, fd[8], i;
	char junk[200];
	pid_t p0, p1, p2;

	new_job();
	log_to(log);
	port = fixed_port();
	conf = make_conf_on(3, hosts, 3);
	p0 = run_node(conf, 0, 3, 12, NULL);
	for (i = 0; i < 8; i++)
		fd[i] = connect_node0(port);
	/* Garbage, and a join cut short, on two of them. */
	memset(junk, 'G', sizeof(junk));
	ck_assert_int_eq(write(fd[0], junk, sizeof(junk)), (ssize_t)sizeof(junk));
	ck_assert_int_eq(write(fd[1], "BIPOOB3", 8), 8);
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

/* A node with another secret is not let in, and learns that its parent's
 * listener gave no proof; node 0 names the node it waited for. */
START_TEST(test_wrong_secret_is_refused)
{
	static const char *const hosts[] = { "127.0.0.1", "127.0.0.2" };
	char log[] = "/tmp/bip-oob-logXXXXXX";
	struct bip_conf *conf;
	pid_t p0, p1;

	new_job();
	log_to(log);
	fixed_port();
	conf = make_conf_on(2, hosts, 2);
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

/* On one host too: with another secret a node cannot even find its
 * parent's socket, whose name comes from the secret. */
START_TEST(test_wrong_secret_local)
{
	struct bip_conf *conf;
	pid_t p0, p1;

	new_job();
	conf = make_conf(2, "localhost");
	p0 = run_node(conf, 0, 2, 2.0, "waiting for node 1");
	setenv("BIP_SECRET", "ffeeddccbbaa99887766554433221100", 1);
	p1 = run_node(conf, 1, 2, 2.0, "node 0 (host localhost, this node's host), to which "
		      "this node reports in the start-up address exchange, never listened "
		      "for it");
	ck_assert_int_eq(wait_status(p0), 3);
	ck_assert_int_eq(wait_status(p1), 3);
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

static void put32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* The join frame as a listener reads it from the network. */
START_TEST(test_join_check)
{
	unsigned char f[132] = { 0 };
	char why[320];
	int node;

	memcpy(f, "BIPOOB3", 8);
	strcpy((char *)f + 8, "jobA");
	put32(f + 48, 4);       /* numnodes */
	put32(f + 52, 48);      /* len */
	put32(f + 56, 1);       /* round */
	put32(f + 60, 3);       /* node */
	put32(f + 64, 2);       /* parent */
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, 1, &node, why,
					    sizeof(why)), 0);
	ck_assert_int_eq(node, 3);
	ck_assert_int_eq(bip_oob_join_check(f, 100, "jobA", 4, 48, 1, &node, why, sizeof(why)),
			 -EPROTO);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobB", 4, 48, 1, &node, why,
					    sizeof(why)), -ESRCH);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 3, 48, 1, &node, why,
					    sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "node 3 of 4"), "%s", why);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, 0, &node, why,
					    sizeof(why)), -EINVAL);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 40, 1, &node, why,
					    sizeof(why)), -EINVAL);
	put32(f + 60, 4);
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, 1, &node, why,
					    sizeof(why)), -EINVAL);
	memset(f + 8, 'x', 40); /* no terminating zero */
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, 1, &node, why,
					    sizeof(why)), -ESRCH);
	f[0] = 'X';
	ck_assert_int_eq(bip_oob_join_check(f, sizeof(f), "jobA", 4, 48, 1, &node, why,
					    sizeof(why)), -EPROTO);
}
END_TEST

/* A report as a parent reads it: 8 nodes of one host, the report of node 4
 * (whose subtree is 4 .. 7), blobs of 2 bytes. */
START_TEST(test_report_check)
{
	struct bip_conf *conf = make_conf(8, "localhost");
	struct bip_oob_tree *t;
	unsigned char r[64];
	char why[256];

	ck_assert_int_eq(bip_oob_tree_new(conf, 8, &t), 0);
	/* nodes 4, 5, 7 and node 6 missing */
	put32(r, 3);
	put32(r + 4, 1);
	put32(r + 8, 4);
	put32(r + 12, 5);
	put32(r + 16, 7);
	put32(r + 20, 6);
	memset(r + 24, 'a', 6);
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 30, 2, why, sizeof(why)), 0);
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 31, 2, why, sizeof(why)), -EPROTO);
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 6, 2, why, sizeof(why)), -EPROTO);
	put32(r + 20, 5); /* twice */
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 30, 2, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "twice"), "%s", why);
	put32(r + 20, 3); /* not below node 4 */
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 30, 2, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "not below"), "%s", why);
	put32(r + 20, 9); /* not a node */
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 30, 2, why, sizeof(why)), -EPROTO);
	put32(r + 20, 6);
	put32(r + 8, 6);  /* node 4's own address missing */
	put32(r + 20, 4);
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 30, 2, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "without the address of node 4"), "%s", why);
	put32(r, 5);      /* more than the subtree */
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 8 + 4 * 6 + 10, 2, why, sizeof(why)),
			 -EPROTO);
	put32(r, 0xffffffff);
	put32(r + 4, 0xffffffff);
	ck_assert_int_eq(bip_oob_report_check(t, 4, r, 30, 2, why, sizeof(why)), -EPROTO);
	bip_oob_tree_free(t);
	bip_conf_free(conf);
}
END_TEST

static Suite *oob_suite(void)
{
	Suite *s = suite_create("oob");
	TCase *tc = tcase_create("allgather");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_allgather_any_order);
	tcase_add_test(tc, test_allgather_hosts);
	tcase_add_test(tc, test_tree_shape);
	tcase_add_test(tc, test_missing_node_is_named);
	tcase_add_test(tc, test_missing_inner_node_is_named);
	tcase_add_test(tc, test_missing_deep_node_is_named);
	tcase_add_test(tc, test_unknown_host_is_named);
	tcase_add_test(tc, test_no_parent_times_out);
	tcase_add_test(tc, test_busy_port_takes_the_next);
	tcase_add_test(tc, test_two_listeners_on_one_address);
	tcase_add_test(tc, test_bad_port_variable);
	tcase_add_test(tc, test_silent_clients_do_not_stall);
	tcase_add_test(tc, test_wrong_secret_is_refused);
	tcase_add_test(tc, test_wrong_secret_local);
	tcase_add_test(tc, test_secret_missing_or_malformed);
	tcase_add_test(tc, test_join_check);
	tcase_add_test(tc, test_report_check);
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
