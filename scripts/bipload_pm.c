/* SPDX-License-Identifier: MIT */
/*
 * bipload_pm.c - bipload's process manager (bipload.h).
 *
 * The job's identity: a job id of 128 random bits (getrandom), so that
 * nobody can guess the names of its shared memory before it starts, and a
 * secret (BIP_SECRET, 256 random bits, or the user's own) that
 * authenticates the network start-up exchange.
 *
 * The process table once started: bipload_pm_run forwards every process's
 * output line by line (tagged with --tag-output; into DIR/node.N.out and
 * DIR/node.N.err with --output-filename DIR, and there only with
 * DIR:nocopy), passes bipload's stdin to
 * node 0 when it runs here, reaps the processes, and when one fails, the
 * time limit passes or bipload gets a signal, stops the others (SIGTERM,
 * then SIGKILL after the grace period; a remote process through its remote
 * shell's stdin).  At the end it removes what the job left in /dev/shm and
 * says which node failed and how.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bipload.h"
#include "bipload_lanai.h"
#include "conf.h"

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

void make_jobid(void)
{
	_Static_assert(BIP_JOBID_MAX >= 32, "a job id holds 128 bits in hex");
	random_hex(jobid, 16);
}

/* The job's secret: the user's BIP_SECRET, or 256 random bits. */
void make_secret(void)
{
	const char *mine = getenv(BIP_ENV_SECRET);

	if (mine && *mine) {
		if (strlen(mine) >= sizeof(secret))
			die("%s is too long (%zu characters; the library takes 32 to 128 hex "
			    "digits)", BIP_ENV_SECRET, strlen(mine));
		strcpy(secret, mine);
		return;
	}
	/* Kept here and set only in each local child (child_env): bipload's
	 * own environment stays as it was. */
	random_hex(secret, 32);
}

void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the main loop is already busy with signals */
	}
	errno = saved;
}

void write_all(int fd, const char *buf, size_t len)
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

/* mkdir -p */
static void make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t i;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		die("--output-filename %s: too long", dir);
	for (i = 1; ; i++) {
		if (path[i] != '/' && path[i])
			continue;
		path[i] = '\0';
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			die("--output-filename: cannot make %s: %s", path, strerror(errno));
		if (!dir[i])
			break;
		path[i] = '/';
	}
}

void bipload_output_files(void)
{
	static const char *const ext[2] = { "out", "err" };
	char path[PATH_MAX];
	struct stat st;
	int i, k;

	for (i = 0; i < nprocs; i++)
		procs[i].file[0] = procs[i].file[1] = -1;
	if (!opt.outdir)
		return;
	make_dirs(opt.outdir);
	if (stat(opt.outdir, &st) < 0 || !S_ISDIR(st.st_mode))
		die("--output-filename %s: not a directory", opt.outdir);
	for (i = 0; i < nprocs; i++) {
		for (k = 0; k < 2; k++) {
			int n = snprintf(path, sizeof(path), "%s/node.%d.%s", opt.outdir, i, ext[k]);

			if (n < 0 || (size_t)n >= sizeof(path))
				die("--output-filename %s: too long", opt.outdir);
			procs[i].file[k] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
							      O_NOFOLLOW, 0666);
			if (procs[i].file[k] < 0)
				die("--output-filename: cannot write %s: %s", path, strerror(errno));
		}
	}
}

/* Forward one line (or a piece of an over-long one) in a single write, to
 * the node's file and (unless nocopy) to bipload's own stream. */
static void emit(struct proc *p, int out, const char *line, size_t len, int newline)
{
	char buf[LINE_MAX_FWD + 32];
	size_t n = 0, tag = 0;

	if (opt.tag_output)
		tag = n = (size_t)snprintf(buf, sizeof(buf), "[%d] ", p->node);
	memcpy(buf + n, line, len);
	n += len;
	if (newline)
		buf[n++] = '\n';
	if (p->file[out - 1] >= 0)
		write_all(p->file[out - 1], buf + tag, n - tag);
	if (p->file[out - 1] < 0 || opt.outcopy)
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
		emit(p, s->out, line, len, newline);
		return;
	}
	if (m > line)
		emit(p, s->out, line, (size_t)(m - line), 1);
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

/* The program's processes still running (the relays left out). */
static int app_running(void)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++)
		n += procs[i].pid != 0 && !procs[i].relay;
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
	if (p->stopped || p->relay)
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

static void how(char *buf, size_t len, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
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
		if (p->relay && !p->stopped && !p->start_late) {
			char how_[64];

			how(how_, sizeof(how_), p->status);
			fprintf(stderr, "bipload: node %d, the relay of gateway host %s, ended (%s) "
				"while the job runs: what crosses its gateways goes through the others, "
				"if there are any\n", i, conf->nodes[i].host,
				p->remote && p->remote_status >= 0 ? "on its host" : how_);
		}
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
			struct stat st;

			/* Only a file of ours: another user's process may have
			 * the pid of a child that ended, or have made the name. */
			snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
			if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
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
		if (procs[i].stopped && !procs[i].start_late && !procs[i].relay)
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

/*
 * The job runs: forward output and node 0's stdin, watch for ends, failures,
 * the time limit and signals, stop the others when needed; then clean up
 * and report.  stdin_fd: our end of node 0's stdin (closed here).
 */
int bipload_pm_run(int stdin_fd)
{
	int first_failed = -1, timed_out = 0, got_signal = 0, stdin_open, i, rc = 0;
	double start_time, stop_deadline = 0;
	struct pollfd *pfd = calloc((size_t)nprocs * 2 + 2, sizeof(*pfd));

	if (!pfd)
		die("out of memory");
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
				write_all(stdin_fd, buf, (size_t)r);
			} else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN) ||
				   !procs[0].pid) {
				stdin_open = 0;
				close(stdin_fd);
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
		/* The program has ended: its relays stop (SIGTERM, as a job that
		 * is stopped; SIGKILL after the grace period). */
		if (nrelays && !stop_deadline && !app_running() && running()) {
			signal_all(SIGTERM);
			stop_deadline = now_s() + grace;
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
	judge(&first_failed);
	remove_shm();
	report(first_failed, timed_out, got_signal);
	if (first_failed >= 0)
		rc = exit_code(&procs[first_failed]);
	else if (timed_out)
		rc = 124;
	else if (got_signal)
		rc = 128 + got_signal;
	free(pfd);
	return rc;
}
