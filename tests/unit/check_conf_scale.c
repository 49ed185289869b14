/* SPDX-License-Identifier: MIT */
/*
 * A configuration of 10,000 nodes loads in under a second, within 50 MB
 * of memory per process (the issue "Scale: memory and connections that
 * grow with the processes"), through the parser and through the commands
 * that read one.
 *
 * The file is the one bipload writes for a job of 10,000 processes, 64 on
 * each of 157 hosts: "routes direct" and a line per node (bipconf(5)).
 * The manual's form of the same job is 10^8 route lines (400 MB): it is
 * not loaded here; a 1,000-node one, all 256, is, to check that it keeps
 * no table of routes.
 *
 * Each load runs in a process of its own, forked for it, so that its peak
 * resident size (getrusage's ru_maxrss) starts from what that process
 * holds at the fork, and the growth is the load's.  The bounds are the
 * issue's, the figures printed; a load measured here takes about 15 ms
 * and 3 MB, so the bounds leave a margin of 60 and more under a loaded
 * machine or a sanitizer.
 *
 * The hosts are addresses of the documentation network 192.0.2.0/24:
 * whether each is this host is then known without asking a name server,
 * which the commands do once per host (bip_host_is_local).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"

#define NODES 10000
#define PER_HOST 64
#define BOUND_SECONDS 1.0
#define BOUND_KB (50 * 1024L)

static char dir[64], path[128];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long peak_kb(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

/* Node i's host and unit, as bipload places 64 processes per host. */
static void node_of(int i, char *host, size_t len, int *unit)
{
	snprintf(host, len, "192.0.2.%d", 1 + i / PER_HOST);
	*unit = i % PER_HOST;
}

/* The file of n nodes, written as bipconf(5) describes it. */
static void write_direct(const char *file, int n)
{
	FILE *f = fopen(file, "w");
	char host[64];
	int i, unit;

	ck_assert_ptr_nonnull(f);
	fprintf(f, "# %d processes, %d per host\n%d\nroutes direct\n", n, PER_HOST, n);
	for (i = 0; i < n; i++) {
		node_of(i, host, sizeof(host), &unit);
		fprintf(f, "%s %d\n", host, unit);
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* The same nodes in the manual's form, every route 256. */
static void write_manual(const char *file, int n)
{
	FILE *f = fopen(file, "w");
	char host[64];
	int i, j, unit;

	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d\n", n);
	for (i = 0; i < n; i++) {
		node_of(i, host, sizeof(host), &unit);
		fprintf(f, "%s %d\n", host, unit);
		for (j = 0; j < n; j++)
			fputs("256\n", f);
	}
	ck_assert_int_eq(fclose(f), 0);
}

struct load {
	int rc;          /* 0, or what went wrong (a negative errno, or 1: wrong content) */
	double seconds;
	long kb;         /* growth of the peak resident size */
	char err[400];
};

/* What each load checks of the configuration it got. */
static int check_nodes(const struct bip_conf *conf, int n, char *err, size_t len)
{
	char host[64];
	int i, unit;

	if (conf->n != n || conf->nrails != 1 || conf->routes) {
		snprintf(err, len, "%d nodes, %d rails, routes %s", conf->n, conf->nrails,
			 conf->routes ? "stored" : "not stored");
		return 1;
	}
	for (i = 0; i < n; i += 97) {
		node_of(i, host, sizeof(host), &unit);
		if (strcmp(conf->nodes[i].host, host) || conf->nodes[i].unit != unit ||
		    !bip_route_is_direct(bip_conf_route(conf, 0, i, n - 1 - i))) {
			snprintf(err, len, "node %d: %s %d", i, conf->nodes[i].host,
				 conf->nodes[i].unit);
			return 1;
		}
	}
	return 0;
}

enum how { PARSE, LOCAL };

/* One load in a forked process: its time, its memory, and whether it got
 * the nodes it should. */
static struct load measure(enum how how, const char *file, int n)
{
	struct load m = { 0 };
	int fd[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bip_conf *conf = NULL;
		long kb0 = peak_kb();
		double t0 = now();
		int i;

		close(fd[0]);
		if (how == PARSE) {
			m.rc = bip_conf_parse_file(file, &conf, m.err, sizeof(m.err));
		} else {
			m.rc = bip_conf_local(n, &conf);
			/* As the launchers do: the job's hosts into it. */
			for (i = 0; m.rc == 0 && i < n; i++)
				node_of(i, conf->nodes[i].host, sizeof(conf->nodes[i].host),
					&conf->nodes[i].unit);
		}
		m.seconds = now() - t0;
		m.kb = peak_kb() - kb0;
		if (m.rc == 0)
			m.rc = check_nodes(conf, n, m.err, sizeof(m.err));
		bip_conf_free(conf);
		if (write(fd[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
			_exit(2);
		_exit(0);
	}
	close(fd[1]);
	ck_assert_int_eq(read(fd[0], &m, sizeof(m)), (ssize_t)sizeof(m));
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the load's process failed");
	return m;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_conf_scale_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bipconf", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

START_TEST(test_parse_10000)
{
	struct load m;

	write_direct(path, NODES);
	m = measure(PARSE, path, NODES);
	ck_assert_msg(m.rc == 0, "%s", m.err);
	printf("bip_conf_parse_file, %d nodes, \"routes direct\": %.3f s, peak RSS +%.1f MB "
	       "(bounds %.0f s, %ld MB)\n", NODES, m.seconds, m.kb / 1024.0, BOUND_SECONDS,
	       BOUND_KB / 1024);
	ck_assert_msg(m.seconds < BOUND_SECONDS, "%d nodes parsed in %.3f s", NODES, m.seconds);
	ck_assert_msg(m.kb < BOUND_KB, "%d nodes: peak RSS grew by %ld KB", NODES, m.kb);
}
END_TEST

START_TEST(test_local_10000)
{
	struct load m = measure(LOCAL, NULL, NODES);

	ck_assert_msg(m.rc == 0, "%s", m.err);
	printf("bip_conf_local, %d nodes: %.3f s, peak RSS +%.1f MB\n", NODES, m.seconds,
	       m.kb / 1024.0);
	ck_assert_msg(m.seconds < BOUND_SECONDS, "%d nodes made in %.3f s", NODES, m.seconds);
	ck_assert_msg(m.kb < BOUND_KB, "%d nodes: peak RSS grew by %ld KB", NODES, m.kb);
}
END_TEST

/* What bipload writes for them: the same file, a line per node. */
START_TEST(test_write_10000)
{
	struct bip_conf *conf;
	char *text = NULL, *want;
	size_t len = 0, lines = 0, i;
	long size;
	FILE *f;
	int n;

	write_direct(path, NODES);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	want = malloc((size_t)size + 1);
	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(fread(want, 1, (size_t)size, f), size);
	want[size] = '\0';
	fclose(f);
	ck_assert_int_eq(bip_conf_local(NODES, &conf), 0);
	for (n = 0; n < NODES; n++)
		node_of(n, conf->nodes[n].host, sizeof(conf->nodes[n].host), &conf->nodes[n].unit);
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bip_conf_write(f, conf), 0);
	fclose(f);
	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	printf("bip_conf_write, %d nodes: %zu lines, %zu bytes\n", NODES, lines, len);
	ck_assert_uint_eq(lines, NODES + 2);
	/* The file above without its comment line. */
	ck_assert_str_eq(text, strchr(want, '\n') + 1);
	free(text);
	free(want);
	bip_conf_free(conf);
}
END_TEST

/* A file of the manual's form whose routes are all 256 keeps none. */
START_TEST(test_parse_manual_1000)
{
	struct load m;

	write_manual(path, 1000);
	m = measure(PARSE, path, 1000);
	ck_assert_msg(m.rc == 0, "%s", m.err);
	printf("bip_conf_parse_file, 1000 nodes, the manual's form (10^6 route lines): %.3f s, "
	       "peak RSS +%.1f MB\n", m.seconds, m.kb / 1024.0);
	ck_assert_msg(m.kb < BOUND_KB, "1000 nodes: peak RSS grew by %ld KB", m.kb);
}
END_TEST

struct run {
	int status;
	double seconds;
	long kb;      /* the command's peak resident size */
};

/* Run argv with BIPCONF=conf, its output into out. */
static struct run run(char *const argv[], const char *conf, const char *out)
{
	struct run r = { 0 };
	struct rusage u;
	double t0 = now();
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		setenv("BIPCONF", conf, 1);
		setenv("HOME", dir, 1);
		unsetenv("BIP_OPTS");
		unsetenv("BIP_HOST");
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_eq(wait4(pid, &r.status, 0, &u), pid);
	r.seconds = now() - t0;
	r.kb = u.ru_maxrss;
	return r;
}

/* The whole text of file; NULL-terminated. */
static char *slurp(const char *file)
{
	char *text, err[256];

	ck_assert_msg(bip_file_read_text(file, &text, err, sizeof(err)) == 0, "%s", err);
	return text;
}

/* The commands a user runs on such a file: biproute -c reads it and says
 * what it found, bipinfo shows it. */
START_TEST(test_commands_10000)
{
	const char *biproute = getenv("BIPROUTE"), *bipinfo = getenv("BIPINFO");
	char out[160], one[160], want[128], *text;
	struct run r, base;

	ck_assert_msg(biproute && bipinfo, "BIPROUTE and BIPINFO name the commands");
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(one, sizeof(one), "%s/one", dir);
	write_direct(path, NODES);

	r = run((char *const[]){ (char *)biproute, "-c", path, NULL }, path, out);
	text = slurp(out);
	ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "biproute -c: %s",
		      text);
	snprintf(want, sizeof(want), "names no cluster: its %d nodes are on one network\n", NODES);
	ck_assert_msg(strstr(text, want), "biproute -c said: %s", text);
	free(text);
	printf("biproute -c, %d nodes: %.3f s, peak RSS %.1f MB (the whole command)\n", NODES,
	       r.seconds, r.kb / 1024.0);
	ck_assert_msg(r.seconds < BOUND_SECONDS, "biproute -c took %.3f s", r.seconds);
	ck_assert_msg(r.kb < BOUND_KB, "biproute -c: peak RSS %ld KB", r.kb);

	/* bipinfo does much else (drivers, back ends): its growth from a
	 * file of one node is the configuration's. */
	write_direct(one, 1);
	base = run((char *const[]){ (char *)bipinfo, "--parsable", NULL }, one, out);
	ck_assert_msg(WIFEXITED(base.status) && WEXITSTATUS(base.status) == 0, "bipinfo failed");
	r = run((char *const[]){ (char *)bipinfo, "--parsable", NULL }, path, out);
	text = slurp(out);
	ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "bipinfo: %s", text);
	snprintf(want, sizeof(want), "\nconf.nodes=%d\n", NODES);
	ck_assert_msg(strstr(text, want), "bipinfo: no \"%s\"", want + 1);
	ck_assert_ptr_nonnull(strstr(text, "\nconf.routes=all direct (256) on 1 rail, none stored\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nconf.node.9999=192.0.2.157 unit 15\n"));
	free(text);
	printf("bipinfo, %d nodes: %.3f s, peak RSS %.1f MB; with 1 node: %.3f s, %.1f MB\n",
	       NODES, r.seconds, r.kb / 1024.0, base.seconds, base.kb / 1024.0);
	ck_assert_msg(r.kb - base.kb < BOUND_KB, "bipinfo: peak RSS %ld KB, %ld KB with 1 node",
		      r.kb, base.kb);
	unlink(one);
	unlink(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conf_scale");
	TCase *tc = tcase_create("10000 nodes");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_parse_10000);
	tcase_add_test(tc, test_local_10000);
	tcase_add_test(tc, test_write_10000);
	tcase_add_test(tc, test_parse_manual_1000);
	tcase_add_test(tc, test_commands_10000);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
