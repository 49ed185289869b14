/* SPDX-License-Identifier: MIT */
/*
 * bipload - run a BIP program on the nodes of a configuration (manual 4.8).
 *
 *   bipload [-sz N | -np N] [-f CONF] [-q] [--tag-output] [--timeout S]
 *           [--rsh CMD] [-x VAR[=value]]... [--trace DIR] prog [args...]
 *
 * Starts one process per node, on the node's host: on this host directly,
 * on every other through one proxy per host (bipload-proxy), started by a
 * remote shell (ssh, or BIP_RSH / --rsh).  Inside a Slurm allocation
 * without a configuration, the nodes are the allocation's and one srun
 * step starts a proxy on each of its hosts (bipload_slurm.c).  Forwards
 * their output line by line, and when one fails stops the others and says
 * which node failed and how.
 *
 * A proxy starts its host's processes as bipload starts its own, forwards
 * their output and their ends in frames on its channel, and stops them
 * when bipload says so or when its channel closes: a remote shell that
 * dies, or a bipload that dies, closes it (bipload_proxy.h).
 *
 * The job id is 128 random bits (getrandom), so that nobody can guess the
 * names of a job's shared memory before it starts.  The job's secret
 * (BIP_SECRET, 256 random bits, or the user's own) authenticates the
 * network start-up exchange: local processes get it in their environment,
 * proxies in the job description on the remote shell's stdin, or in srun's
 * environment inside an allocation; it is never on a command line.
 * Local processes (and the remote shells, and srun) die with bipload
 * whatever kills it (PR_SET_PDEATHSIG), and a proxy stops its processes
 * when its channel closes.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bipload.h"
#include "bipload_monitor.h"
#include "bind.h"
#include "bipload_lanai.h"
#include "conf.h"

struct bipload_opts opt;
struct bip_conf *conf;
int nrelays;
char bipload_conf_path[PATH_MAX];
struct proc *procs;
int nprocs;
char jobid[BIP_JOBID_MAX + 1];
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
		"               [--rsh COMMAND] [-x VAR[=value]]... [-env VAR=value]...\n"
		"               [--host HOST[:N][,...]]... [--hostfile FILE] [--ppn N] [--oversubscribe]\n"
		"               [--output-filename DIR[:nocopy]] [--bind-to core|none]\n"
		"               [--report-bindings] [--universe N] [--trace DIR]\n"
		"               [--monitor[=ADDR:PORT]] prog [args...]\n"
		"               [: [-sz N] [-env VAR=value]... prog [args...]]...\n"
		"       bipload --attach JOB|bip:PORT|name:SERVICE [-sz N] [-q] [--timeout SECONDS]\n"
		"               [-x VAR[=value]]... [-env VAR=value]... prog [args...] [: ...]\n");
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

static void *grow(void *p, int n, size_t size)
{
	if (bip_array_grow(&p, n, size) < 0)
		die("out of memory");
	return p;
}

/* -x VAR=value sets VAR here too; -x VAR carries VAR's value here. */
static void add_xvar(const char *a)
{
	const char *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	char *name;

	if (!valid_name(a, len))
		die("-x %s: expected VAR or VAR=value, VAR made of letters, digits and _", a);
	name = strndup(a, len);
	if (!name)
		die("out of memory");
	if (eq)
		setenv(name, eq + 1, 1);
	else if (!getenv(name))
		die("-x %s: %s is not set here (give -x %s=value)", a, name, name);
	opt.xvars = grow(opt.xvars, opt.nxvars + 1, sizeof(*opt.xvars));
	opt.xvars[opt.nxvars++] = name;
}

/* -env VAR=value: for the command it comes with only. */
static void add_env(struct bipload_app *app, const char *a)
{
	const char *eq = strchr(a, '=');

	if (!eq || !valid_name(a, (size_t)(eq - a)))
		die("-env %s: expected VAR=value, VAR made of letters, digits and _", a);
	bipload_app_env(app, a);
}

void bipload_app_env(struct bipload_app *app, const char *a)
{
	app->env = grow(app->env, app->nenv + 1, sizeof(*app->env));
	app->env[app->nenv++] = a;
}

static const char *arg_of(int argc, char **argv, int *i)
{
	if (++*i == argc) {
		fprintf(stderr, "bipload: %s needs a value\n", argv[*i - 1]);
		usage(2);
	}
	return argv[*i];
}

/* The options that are not one command's; 0 if a is none of them. */
static int global_option(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	char *end;

	if (!strcmp(a, "-f")) {
		opt.conf_file = arg_of(argc, argv, i);
	} else if (!strcmp(a, "-q")) {
		opt.quiet = 1;
	} else if (!strcmp(a, "--tag-output")) {
		opt.tag_output = 1;
	} else if (!strcmp(a, "--timeout")) {
		v = arg_of(argc, argv, i);
		opt.timeout = strtod(v, &end);
		if (*end || !(opt.timeout > 0))
			die("--timeout %s: expected a positive number of seconds", v);
	} else if (!strcmp(a, "--rsh")) {
		opt.rsh = arg_of(argc, argv, i);
	} else if (!strcmp(a, "-x")) {
		add_xvar(arg_of(argc, argv, i));
	} else if (!strcmp(a, "--host")) {
		opt.hosts = grow(opt.hosts, opt.nhosts + 1, sizeof(*opt.hosts));
		opt.hosts[opt.nhosts++] = arg_of(argc, argv, i);
	} else if (!strcmp(a, "--hostfile")) {
		if (opt.hostfile)
			die("--hostfile given twice");
		opt.hostfile = arg_of(argc, argv, i);
	} else if (!strcmp(a, "--ppn")) {
		opt.ppn = parse_count(arg_of(argc, argv, i), a);
	} else if (!strcmp(a, "--universe")) {
		opt.universe = parse_count(arg_of(argc, argv, i), "--universe");
	} else if (!strcmp(a, "--oversubscribe")) {
		opt.oversubscribe = 1;
	} else if (!strcmp(a, "--output-filename")) {
		char *dir = strdup(arg_of(argc, argv, i));
		size_t n;

		if (!dir)
			die("out of memory");
		n = strlen(dir);
		opt.outcopy = 1;
		if (n >= 7 && !strcasecmp(dir + n - 7, ":nocopy")) {
			dir[n - 7] = '\0';
			opt.outcopy = 0;
		}
		if (!*dir)
			die("--output-filename %s: expected a directory", argv[*i]);
		opt.outdir = dir;
	} else if (!strcmp(a, "--bind-to")) {
		v = arg_of(argc, argv, i);
		if (strcmp(v, "core") && strcmp(v, "none"))
			die("--bind-to %s: expected core or none", v);
		opt.bind_to = v;
	} else if (!strcmp(a, "--trace")) {
		opt.trace = arg_of(argc, argv, i);
	} else if (!strcmp(a, "--report-bindings")) {
		opt.report_bindings = 1;
	} else if (!strcmp(a, "--monitor")) {
		/* Its address is optional: taken if the next word is one. */
		opt.monitor = 1;
		if (*i + 1 < argc && bipload_monitor_addr_like(argv[*i + 1]))
			opt.monitor_addr = argv[++*i];
	} else if (!strncmp(a, "--monitor=", 10)) {
		opt.monitor = 1;
		opt.monitor_addr = a + 10;
	} else if (!strcmp(a, "--attach")) {
		opt.attach = arg_of(argc, argv, i);
	} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		usage(0);
	} else {
		return 0;
	}
	return 1;
}

/*
 * Options, then a program and its arguments; a lone ":" starts another
 * command (MPMD), with its own -sz and -env.  The other options apply to
 * the whole job wherever they are.
 */
static void parse_args(int argc, char **argv)
{
	struct bipload_app *app = NULL;
	int i, k, total = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!app) {
			opt.apps = grow(opt.apps, opt.napps + 1, sizeof(*opt.apps));
			app = &opt.apps[opt.napps];
			memset(app, 0, sizeof(*app));
		}
		if (!strcmp(a, "-sz") || !strcmp(a, "-np")) {
			app->nodes = parse_count(arg_of(argc, argv, &i), a);
		} else if (!strcmp(a, "-env")) {
			add_env(app, arg_of(argc, argv, &i));
		} else if (global_option(argc, argv, &i)) {
			continue;
		} else if (a[0] == '-' && strcmp(a, "--")) {
			fprintf(stderr, "bipload: unknown option %s\n", a);
			usage(2);
		} else {
			if (!strcmp(a, "--") && ++i == argc)
				break;
			if (!strcmp(argv[i], ":"))
				die("no program before ':'");
			app->argv = argv + i;
			while (i < argc && strcmp(argv[i], ":"))
				i++;
			opt.napps++;
			app = NULL;
			if (i == argc)
				break;
			argv[i] = NULL; /* the end of this command's arguments */
			opt.apps = grow(opt.apps, opt.napps + 1, sizeof(*opt.apps));
			app = &opt.apps[opt.napps];
			memset(app, 0, sizeof(*app));
		}
	}
	if (app || !opt.napps) {
		fprintf(stderr, "bipload: no program to run%s\n", opt.napps ? " after ':'" : "");
		usage(2);
	}
	for (k = 0; k < opt.napps; k++) {
		if (opt.napps > 1 && !opt.apps[k].nodes)
			die("command %d (%s): give -sz N for each command of an MPMD job", k + 1,
			    opt.apps[k].argv[0]);
		total += opt.apps[k].nodes;
	}
	if (total > BIP_CONF_MAXNODES)
		die("%d nodes in all: at most %d", total, BIP_CONF_MAXNODES);
	opt.nodes = total;
	if (!opt.rsh || !*opt.rsh)
		opt.rsh = getenv("BIP_RSH");
	if (opt.rsh && !*opt.rsh)
		opt.rsh = NULL; /* the default comes with the configuration */
}

static void free_options(void)
{
	int i;

	for (i = 0; i < opt.napps; i++)
		free(opt.apps[i].env);
	free(opt.apps);
	for (i = 0; i < opt.nxvars; i++)
		free(opt.xvars[i]);
	free(opt.xvars);
	free(opt.hosts);
	free(opt.outdir);
}

const struct bipload_app *app_of(int node)
{
	return &opt.apps[procs[node].app];
}

/* Find the configuration; sets conf and the absolute path in path (or ""). */
static void load_conf(char *path)
{
	char def[PATH_MAX], err[512];
	const char *file = opt.conf_file;
	int rc;

	path[0] = '\0';
	if (opt.conf_file && (opt.nhosts || opt.hostfile))
		die("-f %s and --host or --hostfile: give the nodes one way", opt.conf_file);
	if (bipload_hosts_conf(opt.nodes, path, PATH_MAX))
		return;
	if (opt.ppn || opt.oversubscribe)
		die("%s: only with --host or --hostfile", opt.ppn ? "--ppn" : "--oversubscribe");
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
		rc = bip_conf_truncate(conf, opt.nodes);
		if (rc == -EHOSTUNREACH)
			die("-sz %d: the first %d nodes of %s leave clusters that no chain of "
			    "gateways joins", opt.nodes, opt.nodes, file);
		if (rc < 0)
			die("out of memory");
	}
}

void bipload_find_helper(const char *env_name, const char *name, const char *build_dir,
			 char *buf, size_t len)
{
	const char *env = getenv(env_name);
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/%s", self, name) < len &&
			    access(buf, X_OK) == 0)
				return;
			if (build_dir &&
			    (size_t)snprintf(buf, len, "%s/%s/%s", self, build_dir, name) < len &&
			    access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, len, "%s", name);
}

/*
 * Clusters joined by gateways (bipconf(5)): a relay on each gateway host,
 * as nodes after the program's, running bipgw.  A configuration that has
 * them already (a job's file) keeps them; otherwise they are added and the
 * job's configuration is written to a file that names them.
 */
static void add_relays(char *conf_path)
{
	static char gw[PATH_MAX];
	static char *gw_argv[2];
	struct bipload_app *app;
	int rc;

	if (conf->ngateways && !conf->nrelays) {
		rc = bip_conf_add_relays(conf);
		if (rc < 0)
			die("the gateways' relays: %s", strerror(-rc));
		if (conf->n > BIP_CONF_MAXNODES)
			die("%d nodes and %d relays: at most %d in all", conf->n - rc, rc,
			    BIP_CONF_MAXNODES);
		if (rc > 0)
			bipload_conf_file(conf_path, PATH_MAX, "the gateways' relays");
	}
	nrelays = conf->nrelays;
	if (!nrelays)
		return;
	bipload_find_helper("BIP_GW", "bipgw", NULL, gw, sizeof(gw));
	gw_argv[0] = gw;
	opt.apps = grow(opt.apps, opt.napps + 1, sizeof(*opt.apps));
	app = &opt.apps[opt.napps++];
	memset(app, 0, sizeof(*app));
	app->nodes = nrelays;
	app->argv = gw_argv;
}

/* What every process gets from the options: BIP_BIND and
 * BIP_REPORT_BINDINGS (carried to remote hosts as every BIP_ variable is). */
static void job_environment(void)
{
	enum bip_bind_mode mode;
	char err[256];

	if (opt.bind_to)
		setenv(BIP_ENV_BIND, opt.bind_to, 1);
	if (bip_bind_parse(getenv(BIP_ENV_BIND), &mode, err, sizeof(err)) < 0)
		die("%s", err);
	opt.bind_core = mode == BIP_BIND_CORE;
	if (opt.report_bindings)
		setenv(BIP_ENV_REPORT_BINDINGS, "1", 1);
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
	int i, k, n, rc;
	char *checked;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *g = getenv("BIPLOAD_GRACE");
	struct rlimit nofile;

	parse_args(argc, argv);
	if (opt.attach) {
		/* Its processes join a running job (bipload_attach.c). */
		bipload_pid = getpid();
		rc = bipload_attach_run(opt.attach);
		free_options();
		return rc;
	}
	if (opt.trace)
		bipload_trace_prepare(opt.trace);
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
	/* Two pipes per local process, a channel per host: as many
	 * descriptors as the system lets this process have. */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	make_jobid();
	load_conf(conf_path);
	if (!opt.rsh)
		opt.rsh = DEFAULT_RSH;
	make_secret();
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));

	add_relays(conf_path);
	snprintf(bipload_conf_path, sizeof(bipload_conf_path), "%s", conf_path);
	nprocs = conf->n;
	if (opt.napps == 1 + !!nrelays)
		opt.apps[0].nodes = nprocs - nrelays;
	procs = calloc((size_t)nprocs, sizeof(*procs));
	if (!procs)
		die("out of memory");
	for (i = 0, k = 0, n = 0; i < nprocs; i++) {
		if (n == opt.apps[k].nodes) {
			k++;
			n = 0;
		}
		n++;
		procs[i].node = i;
		procs[i].app = k;
		procs[i].relay = i >= nprocs - nrelays;
		procs[i].s[0] = (struct stream){ .fd = -1, .open = 1, .out = 1 };
		procs[i].s[1] = (struct stream){ .fd = -1, .open = 1, .out = 2 };
		procs[i].pm_fd = procs[i].segfd = -1;
	}
	job_environment();
	bipload_output_files();
	checked = calloc((size_t)opt.napps, 1);
	if (!checked)
		die("out of memory");
	/* Which nodes run here, which host's proxy runs the others. */
	bipload_remote_prepare(conf_path, cwd);
	bipload_grow_prepare(opt.universe);
	if (bipload_room() > nprocs) {
		struct proc *more = realloc(procs, (size_t)bipload_room() * sizeof(*procs));

		if (!more)
			die("out of memory");
		procs = more;
		memset(procs + nprocs, 0, (size_t)(bipload_room() - nprocs) * sizeof(*procs));
	}
	if (opt.monitor) {
		bipload_monitor_start(opt.monitor_addr);
		bipload_monitor_prepare(bipload_room());
	}
	for (i = 0; i < nprocs; i++)
		/* Proxies look for the program on their host themselves. */
		if (procs[i].proxy < 0 && !checked[procs[i].app]++)
			check_program(app_of(i)->argv[0]);

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

	info("%d node%s, job %s", nprocs - nrelays, nprocs - nrelays > 1 ? "s" : "", jobid);
	for (i = nprocs - nrelays; i < nprocs; i++)
		info("node %d: the relay of gateway host %s (%s)", i, conf->nodes[i].host,
		     app_of(i)->argv[0]);
	{
		char lerr[512];

		/* The simulated board's firmware, if the job uses it; stopped at exit. */
		if (bipload_lanai_start(conf, conf_path, jobid, opt.quiet, lerr, sizeof(lerr)) < 0)
			die("%s", lerr);
	}
	/* Before any process may name the job to a command that attaches. */
	bipload_attach_listen();
	/* The proxies first: a remote shell takes longer to start. */
	bipload_remote_start();
	for (i = 0; i < nprocs; i++)
		if (procs[i].proxy < 0)
			bipload_start_local(i, conf_path, i == 0 ? stdin_pipe[0] : -1);
	close(stdin_pipe[0]);
	set_cloexec_nonblock(stdin_pipe[1]);
	if (procs[0].proxy >= 0) {
		/* Node 0's input goes through its proxy. */
		close(stdin_pipe[1]);
		stdin_pipe[1] = -1;
	}
	rc = bipload_pm_run(stdin_pipe[1]);
	bipload_trace_merge(); /* the status stays the job's */
	bipload_monitor_stop();
	bipload_lanai_stop();
	bipload_remote_free();
	for (i = 0; i < nprocs; i++) {
		free(procs[i].s[0].buf);
		free(procs[i].s[1].buf);
	}
	bip_conf_free(conf);
	bip_host_forget();
	free(procs);
	free(checked);
	free_options();
	return rc;
}
