/* SPDX-License-Identifier: MIT */
/*
 * bipload - run a BIP program on the nodes of a configuration (manual 4.8).
 *
 *   bipload [-sz N | -np N] [-f CONF] [-q] [--tag-output] [--timeout S] prog [args...]
 *
 * Starts one process per node, forwards their output line by line, and
 * when one fails stops the others and says which node failed and how.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bipload_lanai.h"
#include "conf.h"

#define LINE_MAX_FWD 65536

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
	struct stream s[2];     /* stdout, stderr */
};

static struct {
	int nodes;
	const char *conf_file;
	int quiet;
	int tag_output;
	double timeout;
	char **argv;
} opt;

static struct bip_conf *conf;
static struct proc *procs;
static int nprocs;
static char jobid[BIP_JOBID_MAX + 1];
static int sig_pipe[2] = { -1, -1 };

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
		"usage: bipload [-sz N | -np N] [-f CONF] [-q] [--tag-output] [--timeout SECONDS] "
		"prog [args...]\n");
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

static void make_jobid(void)
{
	struct timespec ts;
	unsigned r;

	clock_gettime(CLOCK_REALTIME, &ts);
	srand((unsigned)(ts.tv_nsec ^ getpid()));
	r = (unsigned)rand();
	snprintf(jobid, sizeof(jobid), "%x%lx%x", (unsigned)getpid(),
		 (unsigned long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000) & 0xffffffffffUL, r);
	jobid[BIP_JOBID_MAX] = '\0';
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
	snprintf(v, sizeof(v), "n%d%s", conf->n, opt.quiet ? "q" : "");
	setenv(BIP_ENV_OPTS, v, 1);
	if (conf_path[0])
		setenv(BIP_ENV_CONF, conf_path, 1);
	else
		unsetenv(BIP_ENV_CONF);
}

static void start(int node, const char *conf_path, int stdin_fd)
{
	struct proc *p = &procs[node];
	int out[2], err[2], i;
	pid_t pid;

	if (pipe(out) < 0 || pipe(err) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
		struct sigaction sa = { .sa_handler = SIG_DFL };

		setpgid(0, 0);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGCHLD, &sa, NULL);
		sigaction(SIGPIPE, &sa, NULL);
		dup2(in, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (i = 3; i < 1024; i++)
			close(i);
		child_env(node, conf_path);
		execvp(opt.argv[0], opt.argv);
		fprintf(stderr, "bipload: node %d: cannot run %s: %s\n", node, opt.argv[0],
			strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
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
			emit(p->node, s->out, s->buf, s->len, 1);
		s->len = 0;
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	s->len += (size_t)n;
	while ((nl = memchr(s->buf, '\n', s->len))) {
		size_t l = (size_t)(nl - s->buf);

		emit(p->node, s->out, s->buf, l, 1);
		memmove(s->buf, nl + 1, s->len - l - 1);
		s->len -= l + 1;
	}
	if (s->len == sizeof(s->buf)) {
		emit(p->node, s->out, s->buf, s->len, 1);
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

static void signal_all(int sig)
{
	int i;

	for (i = 0; i < nprocs; i++) {
		if (!procs[i].pid)
			continue;
		procs[i].stopped = 1;
		kill(-procs[i].pid, sig); /* its process group: the program and its children */
		kill(procs[i].pid, sig);
	}
}

static int failed(const struct proc *p)
{
	return !p->stopped && (!WIFEXITED(p->status) || WEXITSTATUS(p->status) != 0);
}

static void reap(int *first_failed)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < nprocs; i++) {
			if (procs[i].pid != pid)
				continue;
			procs[i].pid = 0;
			procs[i].status = status;
			if (*first_failed < 0 && failed(&procs[i]))
				*first_failed = i;
		}
	}
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
		if (!strncmp(d->d_name, prefix, len)) {
			char path[512];

			snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
			unlink(path);
		}
	}
	closedir(dir);
}

static int exit_code(const struct proc *p)
{
	if (WIFSIGNALED(p->status))
		return 128 + WTERMSIG(p->status);
	return WEXITSTATUS(p->status);
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
		if (procs[i].stopped)
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
	char conf_path[PATH_MAX];
	int stdin_pipe[2] = { -1, -1 }, stdin_open;
	int first_failed = -1, timed_out = 0, got_signal = 0, i, rc = 0;
	double start_time, stop_deadline = 0, grace = 3.0;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *g = getenv("BIPLOAD_GRACE");
	struct pollfd *pfd;

	parse_args(argc, argv);
	if (g && *g)
		grace = atof(g);
	load_conf(conf_path);
	for (i = 0; i < conf->n; i++)
		if (!bip_host_is_local(conf->nodes[i].host))
			die("node %d is on host %s: starting processes on other hosts is not "
			    "supported yet (every node must be on this host)",
			    i, conf->nodes[i].host);
	check_program(opt.argv[0]);
	make_jobid();

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

	nprocs = conf->n;
	procs = calloc((size_t)nprocs, sizeof(*procs));
	pfd = calloc((size_t)nprocs * 2 + 2, sizeof(*pfd));
	if (!procs || !pfd)
		die("out of memory");
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
	stdin_open = 1;
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
		reap(&first_failed);
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
			stop_deadline = now_s() + 3600;
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
	bipload_lanai_stop();
	remove_shm();
	report(first_failed, timed_out, got_signal);
	if (first_failed >= 0)
		rc = exit_code(&procs[first_failed]);
	else if (timed_out)
		rc = 124;
	else if (got_signal)
		rc = 128 + got_signal;
	bip_conf_free(conf);
	free(procs);
	free(pfd);
	return rc;
}
