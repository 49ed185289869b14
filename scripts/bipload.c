/* SPDX-License-Identifier: MIT */
/*
 * bipload - run a BIP program on the nodes of a configuration (manual 4.8).
 *
 *   bipload [-sz N | -np N] [-f CONF] [-q] [--tag-output] [--timeout S]
 *           [--rsh CMD] [-x VAR[=value]]... prog [args...]
 *
 * Starts one process per node, on the node's host: on this host directly,
 * on another through a remote shell (ssh, or BIP_RSH / --rsh).  Inside a
 * Slurm allocation without a configuration, the nodes are the allocation's
 * and srun starts every process (bipload_slurm.c).  Forwards
 * their output line by line, and when one fails stops the others and says
 * which node failed and how.
 *
 * A remote process runs under a small sh wrapper (remote_script) that tells
 * its pid and its status on stderr, in lines marked with the job id which
 * bipload removes, and that stops the process when its stdin reaches end of
 * file: bipload stops a remote process by closing the remote shell's stdin,
 * and a remote shell that dies, or a bipload that dies, closes it too.
 *
 * The job id is 128 random bits (getrandom), so that nobody can guess the
 * names of a job's shared memory before it starts.  The job's secret
 * (BIP_SECRET, 256 random bits, or the user's own) authenticates the
 * network start-up exchange: local processes get it in their environment,
 * remote ones as the first line of the remote shell's stdin, which the
 * wrapper reads before anything else; it is never on a command line.
 * Local processes (and the remote shells) die with bipload whatever kills
 * it (PR_SET_PDEATHSIG), and a remote process ends when its remote shell
 * does.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bipload.h"
#include "bipload_lanai.h"
#include "conf.h"

struct bipload_opts opt;
struct bip_conf *conf;
struct proc *procs;
int nprocs;
char jobid[BIP_JOBID_MAX + 1];
char mark[BIP_JOBID_MAX + 16];
char secret[129];
int sig_pipe[2] = { -1, -1 };
pid_t bipload_pid;
double grace = 3.0;            /* BIPLOAD_GRACE */
double start_limit = 60.0;     /* BIPLOAD_START_TIMEOUT */

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bipload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAILURE);
}

void info(const char *fmt, ...)
{
	va_list ap;

	if (opt.quiet)
		return;
	fputs("bipload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: bipload [-sz N | -np N] [-f CONF] [-q] [--tag-output] [--timeout SECONDS]\n"
		"               [--rsh COMMAND] [-x VAR[=value]]... prog [args...]\n");
	exit(status);
}

static int parse_count(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < 1 || v > 65535)
		die("%s %s: expected a number of nodes (1 .. 65535)", what, s);
	return (int)v;
}

int valid_name(const char *s, size_t len)
{
	size_t i;

	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

/* -x VAR=value sets VAR here too; -x VAR carries VAR's value here. */
static void add_xvar(const char *a)
{
	const char *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const char **v;
	char *name;

	if (!valid_name(a, len))
		die("-x %s: expected VAR or VAR=value, VAR made of letters, digits and _", a);
	name = strndup(a, len);
	v = realloc(opt.xvars, (size_t)(opt.nxvars + 1) * sizeof(*v));
	if (!name || !v)
		die("out of memory");
	if (eq)
		setenv(name, eq + 1, 1);
	else if (!getenv(name))
		die("-x %s: %s is not set here (give -x %s=value)", a, name, name);
	opt.xvars = v;
	opt.xvars[opt.nxvars++] = name;
}

static void parse_args(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-sz") || !strcmp(a, "-np")) {
			if (++i == argc)
				usage(2);
			opt.nodes = parse_count(argv[i], a);
		} else if (!strcmp(a, "-f")) {
			if (++i == argc)
				usage(2);
			opt.conf_file = argv[i];
		} else if (!strcmp(a, "-q")) {
			opt.quiet = 1;
		} else if (!strcmp(a, "--tag-output")) {
			opt.tag_output = 1;
		} else if (!strcmp(a, "--timeout")) {
			char *end;

			if (++i == argc)
				usage(2);
			opt.timeout = strtod(argv[i], &end);
			if (*end || opt.timeout <= 0)
				die("--timeout %s: expected a positive number of seconds", argv[i]);
		} else if (!strcmp(a, "--rsh")) {
			if (++i == argc)
				usage(2);
			opt.rsh = argv[i];
		} else if (!strcmp(a, "-x")) {
			if (++i == argc)
				usage(2);
			add_xvar(argv[i]);
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(0);
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (a[0] == '-') {
			fprintf(stderr, "bipload: unknown option %s\n", a);
			usage(2);
		} else {
			break;
		}
	}
	if (i == argc) {
		fprintf(stderr, "bipload: no program to run\n");
		usage(2);
	}
	opt.argv = argv + i;
	if (!opt.rsh || !*opt.rsh)
		opt.rsh = getenv("BIP_RSH");
	if (opt.rsh && !*opt.rsh)
		opt.rsh = NULL; /* the default comes with the configuration */
}

/* Find the configuration; sets conf and the absolute path in path (or ""). */
static void load_conf(char *path)
{
	char def[PATH_MAX], err[512];
	const char *file = opt.conf_file;
	int rc;

	path[0] = '\0';
	if (!file && bip_conf_default_path(def, sizeof(def)) == 0 &&
	    (getenv(BIP_ENV_CONF) || access(def, F_OK) == 0))
		file = def;
	if (!file) {
		/* Inside a Slurm allocation: its nodes. */
		if (bipload_slurm_conf(opt.nodes, path, PATH_MAX))
			return;
		if (!opt.nodes)
			die("no configuration (no -f, no $BIPCONF, no ~/.bip/bipconf): give -sz N "
			    "to run N processes on this host, or write one with bipconf");
		rc = bip_conf_local(opt.nodes, &conf);
		if (rc < 0)
			die("cannot describe this host: %s", strerror(-rc));
		return;
	}
	rc = bip_conf_parse_file(file, &conf, err, sizeof(err));
	if (rc < 0)
		die("%s", err);
	if (!realpath(file, path))
		die("%s: %s", file, strerror(errno));
	if (opt.nodes) {
		if (opt.nodes > conf->n)
			die("-sz %d: the configuration %s has only %d nodes", opt.nodes, file,
			    conf->n);
		bip_conf_truncate(conf, opt.nodes);
	}
}

/* A program to run: a path, or a name looked up in PATH. */
static void check_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(prog, '/')) {
		if (stat(prog, &st) < 0)
			die("%s: %s", prog, strerror(errno));
		if (!S_ISREG(st.st_mode) || access(prog, X_OK) < 0)
			die("%s: not an executable file", prog);
		return;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return;
		path += n + (path[n] == ':');
	}
	die("%s: program not found in PATH (give its path, e.g. ./%s)", prog, prog);
}

int main(int argc, char **argv)
{
	char conf_path[PATH_MAX], cwd[PATH_MAX];
	int stdin_pipe[2] = { -1, -1 };
	int nlocal = 0, i, rc;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *g = getenv("BIPLOAD_GRACE");

	parse_args(argc, argv);
	if (g && *g) {
		char *end;

		grace = strtod(g, &end);
		if (*end || grace < 0)
			die("BIPLOAD_GRACE=%s: expected a number of seconds", g);
	}
	g = getenv("BIPLOAD_START_TIMEOUT");
	if (g && *g) {
		char *end;

		start_limit = strtod(g, &end);
		if (*end || start_limit <= 0)
			die("BIPLOAD_START_TIMEOUT=%s: expected a positive number of seconds", g);
	}
	bipload_pid = getpid();
	make_jobid();
	load_conf(conf_path);
	if (!opt.rsh)
		opt.rsh = DEFAULT_RSH;
	make_secret();
	snprintf(mark, sizeof(mark), "bipload-%s: ", jobid);
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));

	nprocs = conf->n;
	procs = calloc((size_t)nprocs, sizeof(*procs));
	if (!procs)
		die("out of memory");
	for (i = 0; i < nprocs; i++) {
		procs[i].remote_status = -1;
		procs[i].stdin_fd = -1;
		bipload_boot_prepare(&procs[i], i, conf_path, cwd);
		nlocal += !procs[i].remote;
	}
	/* Remote hosts look for the program themselves. */
	if (nlocal)
		check_program(opt.argv[0]);

	if (pipe(sig_pipe) < 0 || pipe(stdin_pipe) < 0)
		die("pipe: %s", strerror(errno));
	set_cloexec_nonblock(sig_pipe[0]);
	set_cloexec_nonblock(sig_pipe[1]);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	info("%d node%s, job %s", nprocs, nprocs > 1 ? "s" : "", jobid);
	{
		char lerr[512];

		/* The simulated board's firmware, if the job uses it; stopped at exit. */
		if (bipload_lanai_start(conf, conf_path, jobid, opt.quiet, lerr, sizeof(lerr)) < 0)
			die("%s", lerr);
	}
	for (i = 0; i < nprocs; i++)
		start(i, conf_path, i == 0 ? stdin_pipe[0] : -1);
	close(stdin_pipe[0]);
	set_cloexec_nonblock(stdin_pipe[1]);
	rc = bipload_pm_run(stdin_pipe[1]);
	bipload_lanai_stop();
	for (i = 0; i < nprocs; i++) {
		free(procs[i].rwords);
		free(procs[i].rscript);
		free(procs[i].rargv);
		free(procs[i].cmd);
	}
	bip_conf_free(conf);
	free(procs);
	return rc;
}
