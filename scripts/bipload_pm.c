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
 * DIR:nocopy), whether it comes from a local process's pipes or from its
 * host's proxy (bipload_remote.c), passes bipload's stdin to node 0
 * wherever it runs, reaps the processes, and when one fails, the time limit
 * passes or bipload gets a signal, stops the others (SIGTERM, then SIGKILL
 * after the grace period; a remote process through its proxy).  At the end
 * it removes what the job left in /dev/shm and says which node failed and
 * how.  With --monitor, the same loop polls the monitor's sockets and reads
 * the processes' pages (bipload_monitor.c), never waiting on them.
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
#include "bipload_monitor.h"
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

void bipload_stream_feed(struct proc *p, struct stream *s, const char *data, size_t len)
{
	const char *nl;

	while (len) {
		/* Whole lines straight from the data; a piece waits in buf. */
		if (!s->len && (nl = memchr(data, '\n', len)) && (size_t)(nl - data) < LINE_MAX_FWD) {
			size_t l = (size_t)(nl - data);

			emit(p, s->out, data, l, 1);
			data += l + 1;
			len -= l + 1;
			continue;
		}
		if (!s->buf && !(s->buf = malloc(LINE_MAX_FWD)))
			die("out of memory");
		while (len && s->len < LINE_MAX_FWD) {
			char c = *data++;

			len--;
			if (c == '\n') {
				emit(p, s->out, s->buf, s->len, 1);
				s->len = 0;
				break;
			}
			s->buf[s->len++] = c;
		}
		if (s->len == LINE_MAX_FWD) {
			emit(p, s->out, s->buf, s->len, 1);
			s->len = 0;
		}
	}
}

void bipload_stream_end(struct proc *p, struct stream *s)
{
	if (s->len)
		emit(p, s->out, s->buf, s->len, 1);
	s->len = 0;
	free(s->buf);
	s->buf = NULL;
	s->open = 0;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Read what a local process's stream has and forward it.  0 at its end. */
static int pump(struct proc *p, struct stream *s)
{
	char buf[LINE_MAX_FWD];
	ssize_t n = read(s->fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0) {
		bipload_stream_end(p, s);
		return 0;
	}
	bipload_stream_feed(p, s, buf, (size_t)n);
	return 1;
}

int bipload_proc_running(const struct proc *p)
{
	return p->proxy < 0 ? p->pid != 0 : !p->ended;
}

static int running(void)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++)
		n += bipload_proc_running(&procs[i]);
	return n;
}

/* The program's processes still running (the relays left out). */
static int app_running(void)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++)
		n += bipload_proc_running(&procs[i]) && !procs[i].relay;
	return n;
}

/* Stop every process still running: those of this host by a signal to
 * their process group, the others through their proxy. */
static void signal_all(int sig)
{
	int i;

	for (i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];

		if (p->proxy >= 0 || !p->pid)
			continue;
		p->stopped = 1;
		kill(-p->pid, sig); /* its process group: the program and its children */
		kill(p->pid, sig);
	}
	bipload_remote_signal(sig);
}

static int failed(const struct proc *p)
{
	if (p->abandoned)
		return 0; /* it never joined: its asker was told (bipload_grow.c) */
	if (p->attached)
		return 0; /* its command's failure (bipload_attach.c) */
	if (p->start_late)
		return 1;
	if (p->stopped || p->relay)
		return 0;
	if (p->proxy >= 0 && !p->exited)
		return p->ended;
	return !WIFEXITED(p->status) || WEXITSTATUS(p->status) != 0;
}

static void reap(void)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < nprocs; i++) {
			if (procs[i].proxy >= 0 || procs[i].pid != pid)
				continue;
			procs[i].pid = 0;
			procs[i].status = status;
			break;
		}
		if (i == nprocs)
			bipload_remote_reaped(pid, status);
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

/* The end of a process counts once it is known: reaped here, or told by
 * its proxy (or its proxy lost). */
static void judge(int *first_failed)
{
	int i;

	for (i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];

		if (p->judged || bipload_proc_running(p))
			continue;
		p->judged = 1;
		if (p->relay && !p->stopped && !p->start_late) {
			char how_[64];

			if (p->proxy >= 0 && !p->exited)
				snprintf(how_, sizeof(how_), "its proxy was lost");
			else
				how(how_, sizeof(how_), p->status);
			fprintf(stderr, "bipload: node %d, the relay of gateway host %s, ended (%s) "
				"while the job runs: what crosses its gateways goes through the others, "
				"if there are any\n", i, conf->nodes[i].host, how_);
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

		if (p->proxy < 0 && p->started == pid && p->pid == 0)
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
	if (p->start_late || (p->proxy >= 0 && !p->exited))
		return bipload_remote_exit_code(p->node);
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
		/* A node that joined runs on bipload's host, node 0's. */
		const char *host = conf->nodes[i < conf->n ? i : 0].host;
		char pid[48];

		if (!failed(p))
			continue;
		/* Lost with its proxy, or never started: one line for its host. */
		if (p->proxy >= 0 && (!p->exited || p->start_late)) {
			bipload_remote_report(i);
			continue;
		}
		if (p->proxy < 0)
			snprintf(pid, sizeof(pid), "pid %d", (int)p->started);
		else
			snprintf(pid, sizeof(pid), "pid %ld there", p->remote_pid);
		if (WIFSIGNALED(p->status)) {
			const char *name = sigabbrev_np(WTERMSIG(p->status));

			fprintf(stderr, "bipload: node %d (host %s, %s) killed by signal SIG%s\n", i,
				host, pid, name ? name : "?");
		} else {
			fprintf(stderr, "bipload: node %d (host %s, %s) exited with status %d\n", i,
				host, pid, WEXITSTATUS(p->status));
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

/* Close the streams of local processes that have ended: descendants may
 * hold the pipes open, and the job is being stopped. */
static void close_local_streams(void)
{
	int i, k;

	for (i = 0; i < nprocs; i++) {
		for (k = 0; k < 2; k++) {
			struct stream *s = &procs[i].s[k];

			while (s->fd >= 0 && pump(&procs[i], s))
				if (s->fd >= 0 &&
				    poll(&(struct pollfd){ .fd = s->fd, .events = POLLIN }, 1, 0) <= 0)
					break;
			if (s->fd >= 0)
				bipload_stream_end(&procs[i], s);
		}
	}
}

/*
 * The job runs: forward output and node 0's stdin, watch for ends, failures,
 * the time limit and signals, stop the others when needed; then clean up
 * and report.  stdin_fd: our end of node 0's stdin when it runs here, else
 * -1 (closed here).
 */
int bipload_pm_run(int stdin_fd)
{
	int first_failed = -1, timed_out = 0, got_signal = 0, stdin_open, i, rc = 0, nlocal = 0;
	double start_time, stop_deadline = 0;
	struct pollfd *pfd;
	int *local;

	/* Room for the nodes that join the job (bipload_grow.c). */
	local = calloc((size_t)bipload_room() * 2 + 1, sizeof(*local));
	pfd = calloc((size_t)bipload_room() * 3 + 2 + (size_t)bipload_remote_maxfds() +
		     (size_t)bipload_monitor_maxfds() + (size_t)bipload_attach_maxfds(),
		     sizeof(*pfd));
	if (!local || !pfd)
		die("out of memory");
	/* Our stdin goes to node 0, here or through its proxy. */
	stdin_open = 1;
	start_time = now_s();

	for (;;) {
		int n = 0, streams = 0, nr, ng, nm, na, rdy = 1;

		for (i = 0, nlocal = 0; i < nprocs; i++)
			if (procs[i].proxy < 0)
				local[nlocal++] = i;

		if (stdin_open && procs[0].proxy >= 0) {
			rdy = bipload_remote_stdin_ready();
			if (rdy < 0)
				stdin_open = 0;
		}
		pfd[n++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = stdin_open && rdy > 0 ? 0 : -1, .events = POLLIN };
		for (i = 0; i < nlocal; i++) {
			struct proc *p = &procs[local[i]];

			pfd[n++] = (struct pollfd){ .fd = p->s[0].fd, .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = p->s[1].fd, .events = POLLIN };
			streams += (p->s[0].fd >= 0) + (p->s[1].fd >= 0);
		}
		nr = bipload_remote_pollfds(pfd + n);
		ng = bipload_grow_pollfds(pfd + n + nr, local + bipload_room());
		/* Nothing runs: nothing can grow the job any more. */
		if (!running())
			bipload_remote_release();
		if (!running() && !streams && !bipload_remote_busy())
			break;
		/* --monitor's server and its reading of the pages: after the
		 * others, never waited for (bipload_monitor.c). */
		nm = bipload_monitor_pollfds(pfd + n + nr + ng);
		/* Commands attaching (bipload_attach.c). */
		na = bipload_attach_pollfds(pfd + n + nr + ng + nm);
		if (poll(pfd, (nfds_t)(n + nr + ng + nm + na), bipload_monitor_timeout(200)) < 0 &&
		    errno != EINTR)
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

			if (procs[0].proxy >= 0) {
				if (r > 0) {
					bipload_remote_stdin(buf, (size_t)r);
				} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
					bipload_remote_stdin(NULL, 0);
					stdin_open = 0;
				}
			} else if (r > 0 && procs[0].pid) {
				write_all(stdin_fd, buf, (size_t)r);
			} else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				stdin_open = 0;
			}
		}
		if (stdin_open && procs[0].proxy < 0 && !procs[0].pid)
			stdin_open = 0;
		if (!stdin_open && stdin_fd >= 0) {
			close(stdin_fd);
			stdin_fd = -1;
		}
		for (i = 0; i < nlocal; i++) {
			struct proc *p = &procs[local[i]];
			int k;

			for (k = 0; k < 2; k++)
				if (pfd[2 + 2 * i + k].revents && p->s[k].fd >= 0)
					pump(p, &p->s[k]);
		}
		bipload_remote_events(pfd + n, nr);
		bipload_grow_events(pfd + n + nr, local + bipload_room(), ng);
		bipload_monitor_events(pfd + n + nr + ng, nm);
		bipload_attach_events(pfd + n + nr + ng + nm, na);
		bipload_remote_check_started(start_time);
		judge(&first_failed);
		bipload_attach_check();
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
		if (stop_deadline && now_s() > stop_deadline && (running() || bipload_remote_busy())) {
			signal_all(SIGKILL);
			/* again later: a proxy may be given up on only later */
			stop_deadline = now_s() + 1;
		}
		/* Descendants may hold the pipes open: do not wait on them. */
		if (!running() && stop_deadline)
			close_local_streams();
	}
	if (stdin_fd >= 0)
		close(stdin_fd);
	judge(&first_failed);
	bipload_grow_stop();
	bipload_attach_stop();
	remove_shm();
	report(first_failed, timed_out, got_signal);
	if (first_failed >= 0)
		rc = exit_code(&procs[first_failed]);
	else if (timed_out)
		rc = 124;
	else if (got_signal)
		rc = 128 + got_signal;
	free(pfd);
	free(local);
	return rc;
}
