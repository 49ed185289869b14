/* SPDX-License-Identifier: MIT */
/*
 * bipload - run a BIP program on the nodes of a configuration (manual 4.8).
 *
 *   bipload [-sz N | -np N] [-f CONF] [-q] [--tag-output] [--timeout S]
 *           [--rsh CMD] [-x VAR[=value]]... prog [args...]
 *
 * Starts one process per node, on the node's host: on this host directly,
 * on another through a remote shell (ssh, or BIP_RSH / --rsh).  Forwards
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bipload_lanai.h"
#include "conf.h"

#define LINE_MAX_FWD 65536
#define DEFAULT_RSH "ssh -o BatchMode=yes -o ConnectTimeout=10"
/* Seconds a stopped remote process's shell gets beyond the grace period
 * before bipload kills the remote shell itself. */
#define REMOTE_SLACK 10.0

extern char **environ;

struct stream {
	int fd;                 /* -1 at EOF */
	int out;                /* where its lines go: 1 or 2 */
	size_t len;
	char buf[LINE_MAX_FWD];
};

struct proc {
	int node;
	pid_t pid;              /* 0 once reaped */
	pid_t started;          /* its pid, for the report */
	int status;
	int stopped;            /* bipload sent it a signal */
	int judged;             /* its end was taken into account */
	struct stream s[2];     /* stdout, stderr */
	/* Remote processes: pid and started are those of the remote shell. */
	int remote;
	int stdin_fd;           /* our end of the remote shell's stdin, or -1 */
	double kill_at;         /* when stopped: kill the remote shell after this */
	long remote_pid;        /* the process's pid on its host, 0 until told */
	int start_late;         /* not started within start_limit: a failure */
	int remote_status;      /* its status as its host tells, -1 until told */
	char **rargv;           /* the remote shell's command: words of */
	char *rwords, *rscript; /* these two strings */
	char *cmd;              /* the command, quoted, for messages */
};

static struct {
	int nodes;
	const char *conf_file;
	int quiet;
	int tag_output;
	double timeout;
	const char *rsh;        /* --rsh, else BIP_RSH, else DEFAULT_RSH */
	const char **xvars;     /* -x: names carried to remote hosts */
	int nxvars;
	char **argv;
} opt;

static struct bip_conf *conf;
static struct proc *procs;
static int nprocs;
static char jobid[BIP_JOBID_MAX + 1];
static int sig_pipe[2] = { -1, -1 };
static pid_t bipload_pid;
static double grace = 3.0;            /* seconds from SIGTERM to SIGKILL (BIPLOAD_GRACE) */
static double start_limit = 60.0;     /* seconds for a remote shell to start its process */
static char mark[BIP_JOBID_MAX + 16];  /* "bipload-<jobid>: " */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bipload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAILURE);
}

static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void info(const char *fmt, ...)
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

static double now_s(void)
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

static int valid_name(const char *s, size_t len)
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
	if (!opt.rsh)
		opt.rsh = getenv("BIP_RSH");
	if (!opt.rsh || !*opt.rsh)
		opt.rsh = DEFAULT_RSH;
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

/* n random bytes as 2n lowercase hex digits in out (2n + 1 bytes). */
static void random_hex(char *out, size_t n)
{
	unsigned char b[64];
	size_t i, got = 0;

	if (n > sizeof(b))
		die("random_hex: %zu bytes asked", n);
	while (got < n) {
		ssize_t r = getrandom(b + got, n - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("getrandom: %s", strerror(errno));
		got += (size_t)r;
	}
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void make_jobid(void)
{
	_Static_assert(BIP_JOBID_MAX >= 32, "a job id holds 128 bits in hex");
	random_hex(jobid, 16);
}

/* The job's secret: the user's BIP_SECRET, or 256 random bits. */
static void make_secret(void)
{
	char s[65];

	if (getenv(BIP_ENV_SECRET) && *getenv(BIP_ENV_SECRET))
		return;
	random_hex(s, 32);
	if (setenv(BIP_ENV_SECRET, s, 1) < 0)
		die("setenv: %s", strerror(errno));
}

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the main loop is already busy with signals */
	}
	errno = saved;
}

static void set_cloexec_nonblock(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void child_env(int node, const char *conf_path)
{
	char v[64];

	snprintf(v, sizeof(v), "%d", node);
	setenv(BIP_ENV_NODE, v, 1);
	setenv(BIP_ENV_JOBID, jobid, 1);
	setenv(BIP_ENV_HOST, conf->nodes[node].host, 1);
	snprintf(v, sizeof(v), "n%d%s", conf->n, opt.quiet ? "q" : "");
	setenv(BIP_ENV_OPTS, v, 1);
	if (conf_path[0])
		setenv(BIP_ENV_CONF, conf_path, 1);
	else
		unsetenv(BIP_ENV_CONF);
}

/* A growing string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("out of memory");
		if ((size_t)n < b->cap - b->len)
			break;
		b->cap = 2 * b->cap + (size_t)n + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			die("out of memory");
	}
	b->len += (size_t)n;
}

/* s as one word for sh: 'it'\''s' */
static void sb_quote(struct sbuf *b, const char *s)
{
	sb_add(b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			sb_add(b, "'\\''");
		else
			sb_add(b, "%c", *s);
	}
	sb_add(b, "'");
}

/* Words without characters special to sh are shown as they are. */
static void sb_word(struct sbuf *b, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_@%+=:,./-") == strlen(s))
		sb_add(b, "%s", s);
	else
		sb_quote(b, s);
}

static int carried(const char *name, size_t len)
{
	static const char *const always[] = { "BIPCONF", "PATH", "LD_LIBRARY_PATH" };
	size_t i;

	if (len == strlen(BIP_ENV_SECRET) && !strncmp(name, BIP_ENV_SECRET, len))
		return 0; /* it travels on stdin, never on a command line */
	if (len > 4 && !strncmp(name, "BIP_", 4))
		return 1;
	for (i = 0; i < sizeof(always) / sizeof(always[0]); i++)
		if (strlen(always[i]) == len && !strncmp(name, always[i], len))
			return 1;
	for (i = 0; i < (size_t)opt.nxvars; i++)
		if (strlen(opt.xvars[i]) == len && !strncmp(name, opt.xvars[i], len))
			return 1;
	return 0;
}

/* " NAME='value'": one more word of the script's export command. */
static void sb_export(struct sbuf *b, const char *name, size_t len, const char *value)
{
	sb_add(b, " %.*s=", (int)len, name);
	sb_quote(b, value);
}

/*
 * The sh script that runs node's process on its host: go to our directory,
 * set the environment that matters, start the program in a session of its
 * own, say its pid, stop it (SIGTERM, then SIGKILL after the grace period)
 * when stdin reaches end of file, and say its status.  One line, for the
 * login shells that ssh hands it to.
 */
static char *remote_script(int node, const char *conf_path, const char *cwd)
{
	static const char *const own[] = { BIP_ENV_NODE, BIP_ENV_JOBID, BIP_ENV_HOST,
					   BIP_ENV_OPTS, BIP_ENV_CONF };
	const char *host = conf->nodes[node].host;
	struct sbuf b = { 0 };
	char v[64];
	char **e;
	size_t k;
	int i;

	sb_add(&b, "IFS= read -r %s || exit 126; export %s; cd ", BIP_ENV_SECRET, BIP_ENV_SECRET);
	sb_quote(&b, cwd);
	sb_add(&b, " || exit 126; export");
	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : 0;
		int mine = 0;

		if (!eq || !valid_name(*e, len) || !carried(*e, len))
			continue;
		for (k = 0; k < sizeof(own) / sizeof(own[0]); k++)
			mine |= strlen(own[k]) == len && !strncmp(*e, own[k], len);
		if (!mine)
			sb_export(&b, *e, len, eq + 1);
	}
	snprintf(v, sizeof(v), "%d", node);
	sb_export(&b, BIP_ENV_NODE, strlen(BIP_ENV_NODE), v);
	sb_export(&b, BIP_ENV_JOBID, strlen(BIP_ENV_JOBID), jobid);
	sb_export(&b, BIP_ENV_HOST, strlen(BIP_ENV_HOST), host);
	snprintf(v, sizeof(v), "n%d%s", conf->n, opt.quiet ? "q" : "");
	sb_export(&b, BIP_ENV_OPTS, strlen(BIP_ENV_OPTS), v);
	sb_export(&b, BIP_ENV_CONF, strlen(BIP_ENV_CONF), conf_path);
	sb_add(&b, "; for c in setsid ");
	sb_quote(&b, opt.argv[0]);
	sb_add(&b, "; do command -v \"$c\" >/dev/null || { echo \"bipload: host ");
	/* inside double quotes: the host name is letters, digits, dots and dashes */
	for (k = 0; host[k]; k++)
		if (!strchr("\"\\$`", host[k]))
			sb_add(&b, "%c", host[k]);
	sb_add(&b, ": $c: program not found (PATH=$PATH)\" >&2; exit 127; }; done;"
		   " exec 3<&0; setsid");
	for (i = 0; opt.argv[i]; i++) {
		sb_add(&b, " ");
		sb_quote(&b, opt.argv[i]);
	}
	sb_add(&b, " </dev/null 3<&- & p=$!; echo \"%sstarted $p\" >&2;"
		   " setsid sh -c 'while read -r _; do :; done; kill -s TERM -- -$0 $0; n=0;"
		   " while kill -0 $0 && [ $n -lt $1 ]; do sleep 0.1; n=$((n+1)); done;"
		   " kill -s KILL -- -$0 $0' $p %d"
		   " <&3 >/dev/null 2>&1 & w=$!; exec 3<&-;"
		   " wait $p 2>/dev/null; s=$?; { kill -s KILL -- -$w $w; wait $w; } 2>/dev/null;"
		   " [ $s -eq 0 ] || rm -f /dev/shm/bip-$(id -u)-%s-%d;"
		   " echo \"%sstatus $s\" >&2; exit $s",
	       mark, (int)(grace * 10 + 0.5), jobid, node, mark);
	return b.p;
}

/* ssh and rsh hand their words, joined, to the remote user's shell; other
 * remote shells (ip netns exec, env, srun) run their arguments. */
static int rsh_joins_words(const char *word0)
{
	const char *base = strrchr(word0, '/');
	size_t n;

	base = base ? base + 1 : word0;
	n = strlen(base);
	return (n >= 3 && !strcmp(base + n - 3, "ssh")) || (n >= 3 && !strcmp(base + n - 3, "rsh")) ||
	       !strcmp(base, "remsh");
}

/* The remote shell's command for node: RSH HOST sh -c SCRIPT. */
static void prepare_remote(struct proc *p, int node, const char *conf_path, const char *cwd)
{
	char *script = remote_script(node, conf_path, cwd);
	char *words = strdup(opt.rsh), *save = NULL, *w;
	struct sbuf cmd = { 0 };
	int n = 0, i;

	p->rargv = calloc(strlen(opt.rsh) + 5, sizeof(char *));
	if (!words || !p->rargv)
		die("out of memory");
	for (w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		p->rargv[n++] = w;
	if (!n)
		die("the remote shell (--rsh or BIP_RSH) is empty");
	p->rargv[n++] = conf->nodes[node].host;
	if (rsh_joins_words(p->rargv[0])) {
		struct sbuf line = { 0 };

		sb_add(&line, "sh -c ");
		sb_quote(&line, script);
		free(script);
		script = line.p;
		p->rargv[n++] = script;
	} else {
		p->rargv[n++] = "sh";
		p->rargv[n++] = "-c";
		p->rargv[n++] = script;
	}
	for (i = 0; i < n; i++) {
		if (i)
			sb_add(&cmd, " ");
		sb_word(&cmd, p->rargv[i]);
	}
	p->remote = 1;
	p->cmd = cmd.p;
	p->rwords = words;
	p->rscript = script;
}

static void write_all(int fd, const char *buf, size_t len);

static void start(int node, const char *conf_path, int stdin_fd)
{
	struct proc *p = &procs[node];
	int out[2], err[2], in[2] = { -1, -1 }, i;
	pid_t pid;

	if (pipe(out) < 0 || pipe(err) < 0 || (p->remote && pipe(in) < 0))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd0 = p->remote ? in[0] : stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
		struct sigaction sa = { .sa_handler = SIG_DFL };

		/* Die with bipload, whatever kills it; it may be gone already. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != bipload_pid)
			_exit(127);
		setpgid(0, 0);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGCHLD, &sa, NULL);
		sigaction(SIGPIPE, &sa, NULL);
		dup2(fd0, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (i = 3; i < 1024; i++)
			close(i);
		if (p->remote) {
			execvp(p->rargv[0], p->rargv);
			fprintf(stderr, "bipload: node %d: cannot run the remote shell %s: %s\n",
				node, p->rargv[0], strerror(errno));
			_exit(127);
		}
		child_env(node, conf_path);
		execvp(opt.argv[0], opt.argv);
		fprintf(stderr, "bipload: node %d: cannot run %s: %s\n", node, opt.argv[0],
			strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	p->stdin_fd = -1;
	if (p->remote) {
		close(in[0]);
		p->stdin_fd = in[1];
		fcntl(in[1], F_SETFD, FD_CLOEXEC);
	}
	if (p->remote) {
		/* The secret, as the first line of the remote shell's stdin. */
		const char *secret = getenv(BIP_ENV_SECRET);
		char line[160];
		int n = snprintf(line, sizeof(line), "%s\n", secret);

		if (n < 0 || (size_t)n >= sizeof(line))
			die("%s is too long (%zu characters)", BIP_ENV_SECRET, strlen(secret));
		write_all(p->stdin_fd, line, (size_t)n);
	}
	p->node = node;
	p->pid = pid;
	p->started = pid;
	p->s[0] = (struct stream){ .fd = out[0], .out = 1 };
	p->s[1] = (struct stream){ .fd = err[0], .out = 2 };
	set_cloexec_nonblock(out[0]);
	set_cloexec_nonblock(err[0]);
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };

				poll(&pfd, 1, 100);
				continue;
			}
			return; /* our own output is gone: nothing more to do */
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* Forward one line (or a piece of an over-long one) in a single write. */
static void emit(int node, int out, const char *line, size_t len, int newline)
{
	char buf[LINE_MAX_FWD + 32];
	size_t n = 0;

	if (opt.tag_output)
		n = (size_t)snprintf(buf, sizeof(buf), "[%d] ", node);
	memcpy(buf + n, line, len);
	n += len;
	if (newline)
		buf[n++] = '\n';
	write_all(out, buf, n);
}

/*
 * A line of a process: forward it, except the lines of a remote wrapper
 * (marked with the job id), which tell the process's pid and status.  A
 * mark may follow an unfinished last line of the process.
 */
static void deliver(struct proc *p, struct stream *s, const char *line, size_t len, int newline)
{
	size_t mlen = strlen(mark);
	const char *m = p->remote && s->out == 2 ? memmem(line, len, mark, mlen) : NULL;
	char word[16], rest[32];
	long v;

	if (!m) {
		emit(p->node, s->out, line, len, newline);
		return;
	}
	if (m > line)
		emit(p->node, s->out, line, (size_t)(m - line), 1);
	len -= (size_t)(m - line) + mlen;
	snprintf(rest, sizeof(rest), "%.*s", (int)(len < sizeof(rest) ? len : sizeof(rest) - 1),
		 m + mlen);
	if (sscanf(rest, "%15s %ld", word, &v) != 2)
		return;
	if (!strcmp(word, "started"))
		p->remote_pid = v;
	else if (!strcmp(word, "status"))
		p->remote_status = (int)(v & 255);
}

/* Read what a stream has; forward its complete lines.  Returns 0 at EOF. */
static int pump(struct proc *p, struct stream *s)
{
	ssize_t n;
	char *nl;

	n = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0) {
		if (s->len)
			deliver(p, s, s->buf, s->len, 1);
		s->len = 0;
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	s->len += (size_t)n;
	while ((nl = memchr(s->buf, '\n', s->len))) {
		size_t l = (size_t)(nl - s->buf);

		deliver(p, s, s->buf, l, 1);
		memmove(s->buf, nl + 1, s->len - l - 1);
		s->len -= l + 1;
	}
	if (s->len == sizeof(s->buf)) {
		deliver(p, s, s->buf, s->len, 1);
		s->len = 0;
	}
	return 1;
}

static int running(void)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++)
		n += procs[i].pid != 0;
	return n;
}

static void close_stdin(struct proc *p)
{
	if (p->stdin_fd >= 0)
		close(p->stdin_fd);
	p->stdin_fd = -1;
}

/*
 * Stop every process still running.  A remote process is stopped by its
 * wrapper when its stdin closes (SIGTERM, SIGKILL after the grace period);
 * its remote shell is killed only if it has not ended well after that.
 */
static void signal_all(int sig)
{
	double now = now_s();
	int i;

	for (i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];

		if (!p->pid)
			continue;
		if (p->remote) {
			if (!p->stopped)
				p->kill_at = now + 2 * grace + REMOTE_SLACK;
			p->stopped = 1;
			close_stdin(p);
			if (sig != SIGKILL || now < p->kill_at)
				continue;
		}
		p->stopped = 1;
		kill(-p->pid, sig); /* its process group: the program and its children */
		kill(p->pid, sig);
	}
}

static int failed(const struct proc *p)
{
	if (p->start_late)
		return 1;
	if (p->stopped)
		return 0;
	if (p->remote)
		return p->remote_status != 0;
	return !WIFEXITED(p->status) || WEXITSTATUS(p->status) != 0;
}

static void reap(void)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < nprocs; i++) {
			if (procs[i].pid != pid)
				continue;
			procs[i].pid = 0;
			procs[i].status = status;
			/* its wrapper, if it still runs somewhere, stops the process */
			close_stdin(&procs[i]);
		}
	}
}

/* A remote shell still starting its process after start_limit: a failure
 * (a host that accepts the connection and then hangs), not a hang. */
static void check_started(double since, int *first_failed)
{
	int i;

	if (now_s() - since < start_limit)
		return;
	for (i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];

		if (p->remote && p->pid && !p->remote_pid && !p->stopped && !p->start_late) {
			p->start_late = 1;
			if (*first_failed < 0)
				*first_failed = i;
		}
	}
}

/* The end of a process counts once it is reaped and, for a remote one, once
 * its wrapper's last words (on stderr) are read. */
static void judge(int *first_failed)
{
	int i;

	for (i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];

		if (p->judged || p->pid || (p->remote && p->s[1].fd >= 0))
			continue;
		p->judged = 1;
		if (*first_failed < 0 && failed(p))
			*first_failed = i;
	}
}

/*
 * libfabric's shm provider names its regions "PID:..." and removes them when
 * its process ends normally, but not when the process is killed or leaves
 * with _exit (a library's fatal error): those of this job's local processes
 * that have ended go with the job's own (the pid names a process that is
 * gone, so nothing uses them).
 */
static int ended_child_region(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);
	int i;

	if (end == name || *end != ':')
		return 0;
	for (i = 0; i < nprocs; i++) {
		const struct proc *p = &procs[i];

		if (!p->remote && p->started == pid && p->pid == 0)
			return 1;
	}
	return 0;
}

static void remove_shm(void)
{
	char prefix[96];
	struct dirent *d;
	DIR *dir;
	size_t len;

	if (bip_shm_prefix(prefix, sizeof(prefix), (unsigned)getuid(), jobid) < 0)
		return;
	len = strlen(prefix);
	dir = opendir("/dev/shm");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (!strncmp(d->d_name, prefix, len) || ended_child_region(d->d_name)) {
			char path[512];

			snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
			unlink(path);
		}
	}
	closedir(dir);
}

static int exit_code(const struct proc *p)
{
	if (p->start_late)
		return 255;
	if (p->remote && p->remote_status >= 0)
		return p->remote_status;
	if (WIFSIGNALED(p->status))
		return 128 + WTERMSIG(p->status);
	return WEXITSTATUS(p->status);
}

static void how(char *buf, size_t len, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
}

/* What a remote process's wrapper told, or what is known without it. */
static void report_remote(const struct proc *p, const char *host)
{
	int s = p->remote_status;
	char rsh[64];

	how(rsh, sizeof(rsh), p->status);
	if (p->start_late)
		fprintf(stderr, "bipload: node %d: the remote shell has not started the process on "
			"host %s after %g s; the command was: %s\n", p->node, host, start_limit,
			p->cmd);
	else if (s > 128 && s < 128 + 65 && sigabbrev_np(s - 128))
		fprintf(stderr, "bipload: node %d (host %s, pid %ld there) killed by signal SIG%s\n",
			p->node, host, p->remote_pid, sigabbrev_np(s - 128));
	else if (s >= 0)
		fprintf(stderr, "bipload: node %d (host %s, pid %ld there) exited with status %d\n",
			p->node, host, p->remote_pid, s);
	else if (p->remote_pid)
		fprintf(stderr, "bipload: node %d (host %s, pid %ld there): the remote shell ended "
			"(%s) before the process did: connection lost?\n", p->node, host,
			p->remote_pid, rsh);
	else
		fprintf(stderr, "bipload: node %d: the remote shell could not start the process on "
			"host %s (%s); the command was: %s\n", p->node, host, rsh, p->cmd);
}

static void report(int first_failed, int timed_out, int got_signal)
{
	char stopped[1024];
	size_t used = 0;
	int i;

	for (i = 0; i < nprocs; i++) {
		const struct proc *p = &procs[i];
		const char *host = conf->nodes[i].host;

		if (!failed(p))
			continue;
		if (p->remote) {
			report_remote(p, host);
			continue;
		}
		if (WIFSIGNALED(p->status)) {
			const char *name = sigabbrev_np(WTERMSIG(p->status));

			fprintf(stderr, "bipload: node %d (host %s, pid %d) killed by signal "
				"SIG%s\n", i, host, (int)p->started, name ? name : "?");
		} else {
			fprintf(stderr, "bipload: node %d (host %s, pid %d) exited with status "
				"%d\n", i, host, (int)p->started, WEXITSTATUS(p->status));
		}
	}
	stopped[0] = '\0';
	for (i = 0; i < nprocs && used < sizeof(stopped) - 8; i++)
		if (procs[i].stopped && !procs[i].start_late)
			used += (size_t)snprintf(stopped + used, sizeof(stopped) - used, " %d", i);
	if (used) {
		if (timed_out)
			fprintf(stderr, "bipload: timed out after %g s; stopped nodes%s\n",
				opt.timeout, stopped);
		else if (got_signal)
			fprintf(stderr, "bipload: got signal SIG%s; stopped nodes%s\n",
				sigabbrev_np(got_signal), stopped);
		else if (first_failed >= 0)
			fprintf(stderr, "bipload: stopped nodes%s\n", stopped);
	}
}

int main(int argc, char **argv)
{
	char conf_path[PATH_MAX], cwd[PATH_MAX];
	int stdin_pipe[2] = { -1, -1 }, stdin_open;
	int first_failed = -1, timed_out = 0, got_signal = 0, nlocal = 0, i, rc = 0;
	double start_time, stop_deadline = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *g = getenv("BIPLOAD_GRACE");
	struct pollfd *pfd;

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
	load_conf(conf_path);
	bipload_pid = getpid();
	make_jobid();
	make_secret();
	snprintf(mark, sizeof(mark), "bipload-%s: ", jobid);
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));

	nprocs = conf->n;
	procs = calloc((size_t)nprocs, sizeof(*procs));
	pfd = calloc((size_t)nprocs * 2 + 2, sizeof(*pfd));
	if (!procs || !pfd)
		die("out of memory");
	for (i = 0; i < nprocs; i++) {
		procs[i].remote_status = -1;
		procs[i].stdin_fd = -1;
		if (bip_host_is_local(conf->nodes[i].host))
			nlocal++;
		else
			prepare_remote(&procs[i], i, conf_path, cwd);
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
	/* Our stdin goes to node 0 when it runs here; a remote shell's stdin is
	 * what stops its process. */
	stdin_open = !procs[0].remote;
	start_time = now_s();

	for (;;) {
		int n = 0, streams = 0, timeout_ms = 200;

		pfd[n++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = stdin_open ? 0 : -1, .events = POLLIN };
		for (i = 0; i < nprocs; i++) {
			pfd[n++] = (struct pollfd){ .fd = procs[i].s[0].fd, .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = procs[i].s[1].fd, .events = POLLIN };
			streams += (procs[i].s[0].fd >= 0) + (procs[i].s[1].fd >= 0);
		}
		if (!running() && !streams)
			break;
		if (poll(pfd, (nfds_t)n, timeout_ms) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));

		if (pfd[0].revents) {
			unsigned char c;

			while (read(sig_pipe[0], &c, 1) == 1) {
				if (c != SIGCHLD && !got_signal) {
					got_signal = c;
					signal_all(c);
					stop_deadline = now_s() + grace;
				}
			}
		}
		reap();
		if (stdin_open && pfd[1].revents) {
			char buf[4096];
			ssize_t r = read(0, buf, sizeof(buf));

			if (r > 0 && procs[0].pid) {
				write_all(stdin_pipe[1], buf, (size_t)r);
			} else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN) ||
				   !procs[0].pid) {
				stdin_open = 0;
				close(stdin_pipe[1]);
			}
		}
		for (i = 0; i < nprocs; i++) {
			int k;

			for (k = 0; k < 2; k++)
				if (pfd[2 + 2 * i + k].revents && procs[i].s[k].fd >= 0)
					pump(&procs[i], &procs[i].s[k]);
		}
		judge(&first_failed);
		check_started(start_time, &first_failed);
		if (first_failed >= 0 && !stop_deadline && running()) {
			signal_all(SIGTERM);
			stop_deadline = now_s() + grace;
		}
		if (opt.timeout && !timed_out && !stop_deadline && running() &&
		    now_s() - start_time > opt.timeout) {
			timed_out = 1;
			signal_all(SIGTERM);
			stop_deadline = now_s() + grace;
		}
		if (stop_deadline && now_s() > stop_deadline && running()) {
			signal_all(SIGKILL);
			/* again later: a remote shell may be killed only later */
			stop_deadline = now_s() + 1;
		}
		if (!running() && stop_deadline) {
			/* Descendants may hold the pipes open: do not wait on them. */
			for (i = 0; i < nprocs; i++) {
				int k;

				for (k = 0; k < 2; k++) {
					while (procs[i].s[k].fd >= 0 && pump(&procs[i], &procs[i].s[k]))
						if (procs[i].s[k].fd >= 0 &&
						    poll(&(struct pollfd){ .fd = procs[i].s[k].fd,
									   .events = POLLIN }, 1, 0) <= 0)
							break;
					if (procs[i].s[k].fd >= 0) {
						close(procs[i].s[k].fd);
						procs[i].s[k].fd = -1;
					}
				}
			}
		}
	}
	judge(&first_failed);
	bipload_lanai_stop();
	remove_shm();
	report(first_failed, timed_out, got_signal);
	if (first_failed >= 0)
		rc = exit_code(&procs[first_failed]);
	else if (timed_out)
		rc = 124;
	else if (got_signal)
		rc = 128 + got_signal;
	for (i = 0; i < nprocs; i++) {
		free(procs[i].rwords);
		free(procs[i].rscript);
		free(procs[i].rargv);
		free(procs[i].cmd);
	}
	bip_conf_free(conf);
	free(procs);
	free(pfd);
	return rc;
}
