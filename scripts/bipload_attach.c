/* SPDX-License-Identifier: MIT */
/*
 * bipload_attach.c - jobs started apart that run as one: "bipload --attach
 * JOB prog", whose processes join the running job JOB (bip_grow(3)) as a
 * group of their own, so that MPI's ports and names connect them with it.
 *
 * Why a job joins another rather than two jobs talking: every process of a
 * job reaches every other by node number, over drivers opened with the
 * job's identity (its shared memory's names, its secret).  Processes of two
 * jobs share none of that.  A job that may grow has room for more nodes,
 * and the processes it starts then form groups of their own (an
 * MPI_COMM_WORLD each, as spawned processes do); an attached command is one
 * more such group, started by the job's own bipload, with the job's secret
 * given the way bipload gives it to any process it starts.
 *
 * The rendezvous.  The bipload of every job that may grow listens on a
 * socket (AF_UNIX, SOCK_SEQPACKET) named bip-job.JOBID in the attach
 * directory: BIP_ATTACH_DIR if set, else /run/user/UID when it is a
 * directory, else /tmp/bip-UID (made with mode 0700).  Both sides refuse a
 * directory that is a symbolic link, that another user owns or that its
 * group or others may use (mode bits 077), and the listener takes a
 * connection only from a process of its own user (SO_PEERCRED): other
 * users can neither reach the socket nor put one in its place.  The socket
 * goes when bipload ends.
 *
 * The protocol (records of NUL-ended fields, as pm.h's, one per message):
 *   attacher -> job    the grow request of pm.h ("grow N ..."), with the
 *                      attacher's descriptors 0, 1 and 2 (SCM_RIGHTS): the
 *                      new processes write to its terminal, and the first
 *                      reads its stdin; then "stop" when it is told to end
 *                      (a signal, --timeout)
 *   job -> attacher    pm.h's answer "grew FIRST TOTAL ROOM E... MESSAGE",
 *                      then "ended NODE STATUS" once for each process (its
 *                      wait status); the job closes the connection once
 *                      every one has ended.
 * A connection that closes before its processes have ended stops them
 * (SIGTERM, then SIGKILL after BIPLOAD_GRACE seconds).
 *
 * Supervision.  An attached group is a job of its own for failures: one of
 * its processes that fails stops the others of the group, and its status
 * is the attacher's exit status, but it does not end the job it joined
 * (whose processes talking to it then see it end, bip(7)).  The job ends
 * once every process has ended, attached ones included; a job that is
 * stopped (a failure of its own, a signal, its time limit) stops them too.
 *
 * Everything read here is untrusted: the attacher's record goes through
 * the checks of any grow request, and the attacher reads the job's
 * records field by field with numbers range-checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bipload.h"

#define ATTACH_MAX 16          /* attached commands at once */
#define ATTACH_REC_MAX 65536   /* the longest record (pm.h's BIP_PM_MSG_MAX) */

extern char **environ;

/* --- the attach directory, both sides --- */

/* The directory's path in dir: 0, or -1 with why. */
static int attach_dir(char *dir, size_t len, int make, char *why, size_t wlen)
{
	const char *mine = getenv("BIP_ATTACH_DIR");
	unsigned uid = (unsigned)geteuid();
	struct stat st;

	if (mine && *mine)
		snprintf(dir, len, "%s", mine);
	else if (snprintf(dir, len, "/run/user/%u", uid) > 0 && lstat(dir, &st) == 0 &&
		 S_ISDIR(st.st_mode) && st.st_uid == uid)
		; /* the user's runtime directory */
	else
		snprintf(dir, len, "/tmp/bip-%u", uid);
	if (make && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(why, wlen, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0) {
		snprintf(why, wlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
		snprintf(why, wlen, "%s is %s, not a directory", dir,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
	else if (st.st_uid != uid)
		snprintf(why, wlen, "%s belongs to user %u, not to this user (%u)", dir,
			 (unsigned)st.st_uid, uid);
	else if (st.st_mode & 077)
		snprintf(why, wlen, "%s has mode %04o: its group or others may use it "
			 "(chmod 700 it)", dir, (unsigned)(st.st_mode & 07777));
	else
		return 0;
	return -1;
}

/* The socket of job id in addr: 0, or -1 with why. */
static int attach_addr(const char *id, struct sockaddr_un *addr, int make, char *why,
		       size_t wlen)
{
	char dir[PATH_MAX];

	if (attach_dir(dir, sizeof(dir), make, why, wlen) < 0)
		return -1;
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (snprintf(addr->sun_path, sizeof(addr->sun_path), "%s/bip-job.%s", dir, id) >=
	    (int)sizeof(addr->sun_path)) {
		snprintf(why, wlen, "%s: too long a path for a socket (BIP_ATTACH_DIR)", dir);
		return -1;
	}
	return 0;
}

/* --- the job's side --- */

static int listen_fd = -1;
static char listen_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

static struct client {
	int inuse;              /* until its request is answered and its
				 * processes have ended */
	int fd;                 /* its connection, -1 once closed */
	int io[3];              /* its stdin, stdout, stderr, or -1 */
	int asked;              /* its request came */
	int answered;           /* ... and was answered */
	int first, total;       /* its nodes, once started (total 0: none) */
	unsigned char *told;    /* "ended" sent, per node */
	int left;               /* nodes not yet told */
	int stopping;           /* its processes were sent SIGTERM */
	int stop_asked;         /* "stop" came before they started */
	double kill_at;         /* then SIGKILL, if they run on */
} clients[ATTACH_MAX];

static void unlink_socket(void)
{
	if (listen_path[0] && getpid() == bipload_pid)
		unlink(listen_path);
}

void bipload_attach_listen(void)
{
	struct sockaddr_un addr;
	char why[PATH_MAX + 128];
	int i;

	for (i = 0; i < ATTACH_MAX; i++)
		clients[i] = (struct client){ .fd = -1, .io = { -1, -1, -1 } };
	/* A job that cannot grow takes nobody; nor does one whose directory
	 * is refused (the attacher says why, from the same checks). */
	if (bipload_universe <= 0 || attach_addr(jobid, &addr, 1, why, sizeof(why)) < 0)
		return;
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (listen_fd < 0)
		return;
	unlink(addr.sun_path); /* the job id is new: nothing of ours is there */
	if (bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(listen_fd, ATTACH_MAX) < 0) {
		close(listen_fd);
		listen_fd = -1;
		return;
	}
	snprintf(listen_path, sizeof(listen_path), "%s", addr.sun_path);
	atexit(unlink_socket);
}

int bipload_attach_maxfds(void)
{
	return 1 + ATTACH_MAX;
}

int bipload_attach_pollfds(struct pollfd *pfd)
{
	int i, n = 0;

	if (listen_fd < 0)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
	for (i = 0; i < ATTACH_MAX; i++)
		pfd[n++] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
	return n;
}

static void send_rec(struct client *c, const char *buf, size_t len)
{
	if (c->fd >= 0 && send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	    errno != EAGAIN)
		fprintf(stderr, "bipload: an attached command's connection: %s\n", strerror(errno));
}

static void close_io(struct client *c)
{
	int k;

	for (k = 0; k < 3; k++) {
		if (c->io[k] >= 0)
			close(c->io[k]);
		c->io[k] = -1;
	}
}

/* The client is done with: its slot is free again once its processes
 * have ended. */
static void drop(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	close_io(c);
}

static void stop_group(struct client *c, int sig)
{
	int i;

	for (i = c->first; i < c->first + c->total; i++) {
		struct proc *p = &procs[i];

		if (!bipload_proc_running(p))
			continue;
		p->stopped = 1;
		if (p->proxy >= 0) {
			bipload_remote_kill(i);
		} else {
			kill(-p->pid, sig);
			kill(p->pid, sig);
		}
	}
	if (sig == SIGTERM && !c->stopping) {
		c->stopping = 1;
		c->kill_at = now_s() + grace;
	}
}

static void take(void)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd, i;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	/* Only this user's processes (the directory keeps others out too). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != geteuid()) {
		close(fd);
		return;
	}
	for (i = 0; i < ATTACH_MAX; i++)
		if (!clients[i].inuse)
			break;
	if (i == ATTACH_MAX) {
		static const char busy[] = "grew\0" "0\0" "0\0" "0\0"
					   "too many commands attached at once\0";

		send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	free(clients[i].told);
	clients[i] = (struct client){ .inuse = 1, .fd = fd, .io = { -1, -1, -1 } };
}

/* A record from client c, with the descriptors it passed. */
static void from_client(int ci)
{
	static char buf[ATTACH_REC_MAX + 1];
	struct client *c = &clients[ci];
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = ATTACH_REC_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int fds[3] = { -1, -1, -1 }, nfds = 0, k;
	ssize_t len;

	len = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (len < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (cm = len > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int)); k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (nfds < 3)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	if (len > 0)
		buf[len] = '\0';
	if (len > 0 && !strcmp(buf, "stop")) {
		for (k = 0; k < nfds; k++)
			close(fds[k]);
		c->stop_asked = 1;
		if (c->total && c->left)
			stop_group(c, SIGTERM);
		return;
	}
	if (len <= 0 || c->asked || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != 3) {
		/* Gone, or not to be believed: what it started stops (once
		 * started, if its request waits: bipload_attach_grew). */
		for (k = 0; k < nfds; k++)
			close(fds[k]);
		if (len > 0)
			fprintf(stderr, "bipload: an attached command sent a malformed record: "
				"dropped\n");
		if (c->total && c->left)
			stop_group(c, SIGTERM);
		drop(c);
		if (!c->left && (!c->asked || c->answered))
			c->inuse = 0;
		return;
	}
	c->asked = 1;
	memcpy(c->io, fds, sizeof(fds));
	bipload_grow_attach(-1 - ci, buf, (size_t)len);
}

void bipload_attach_events(const struct pollfd *pfd, int n)
{
	int i;

	if (!n)
		return;
	if (pfd[0].revents)
		take();
	for (i = 0; i < ATTACH_MAX && 1 + i < n; i++)
		if (pfd[1 + i].revents && clients[i].fd >= 0 && pfd[1 + i].fd == clients[i].fd)
			from_client(i);
}

int bipload_attach_open(int asker)
{
	int ci = -1 - asker;

	return ci >= 0 && ci < ATTACH_MAX && clients[ci].fd >= 0;
}

void bipload_attach_answer(int asker, const char *rec, size_t len)
{
	int ci = -1 - asker;

	if (ci >= 0 && ci < ATTACH_MAX)
		send_rec(&clients[ci], rec, len);
}

int bipload_attach_io(int asker, int k)
{
	int ci = -1 - asker;

	return ci >= 0 && ci < ATTACH_MAX && k >= 0 && k < 3 ? clients[ci].io[k] : -1;
}

void bipload_attach_grew(int asker, int first, int total, int failed)
{
	int ci = -1 - asker;
	struct client *c;

	if (ci < 0 || ci >= ATTACH_MAX)
		return;
	c = &clients[ci];
	c->answered = 1;
	/* The processes have their descriptors now. */
	close_io(c);
	if (failed || !total) {
		drop(c);
		c->inuse = 0;
		return;
	}
	c->told = calloc((size_t)total, 1);
	if (!c->told)
		die("out of memory");
	c->first = first;
	c->total = c->left = total;
	/* Its attacher went, or asked them to stop, while they started. */
	if (c->fd < 0 || c->stop_asked)
		stop_group(c, SIGTERM);
}

/* A process of client c failed: its own fault, not a stop. */
static int failed_alone(const struct proc *p)
{
	if (p->stopped)
		return 0;
	if (p->proxy >= 0 && !p->exited)
		return p->ended;
	return !WIFEXITED(p->status) || WEXITSTATUS(p->status) != 0;
}

void bipload_attach_check(void)
{
	int ci, i;

	for (ci = 0; ci < ATTACH_MAX; ci++) {
		struct client *c = &clients[ci];

		for (i = 0; i < c->total && c->left; i++) {
			struct proc *p = &procs[c->first + i];
			char rec[96];
			int len, status;

			if (c->told[i] || bipload_proc_running(p))
				continue;
			c->told[i] = 1;
			c->left--;
			/* A remote process lost with its proxy: as if killed. */
			status = p->proxy >= 0 && !p->exited ? SIGKILL : p->status;
			len = snprintf(rec, sizeof(rec), "ended%c%d%c%d", 0, c->first + i, 0, status);
			send_rec(c, rec, (size_t)len + 1);
			if (failed_alone(p) && !c->stopping)
				stop_group(c, SIGTERM);
		}
		if (c->total && !c->left) {
			drop(c);
			free(c->told);
			c->told = NULL;
			c->total = 0;
			c->inuse = 0;
		} else if (c->stopping && c->left && now_s() > c->kill_at) {
			stop_group(c, SIGKILL);
			c->kill_at = now_s() + 1;
		}
	}
}

void bipload_attach_stop(void)
{
	int i;

	bipload_attach_check();
	for (i = 0; i < ATTACH_MAX; i++) {
		drop(&clients[i]);
		free(clients[i].told);
		clients[i].told = NULL;
	}
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	unlink_socket();
	listen_path[0] = '\0';
}

/* --- the attacher's side --- */

/* Variables the job sets for each of its processes, or that must be the
 * job's (its drivers): not taken from the attacher's environment. */
static int job_own(const char *e)
{
	static const char *const own[] = {
		"BIP_NIC=", "BIP_SECRET=", "BIP_JOBID=", "BIP_NODE=", "BIP_PM_FD=",
		"BIP_UNIVERSE=", "BIP_GROW_", "BIP_GROUP=", "BIP_PARENT=", "BIP_APPNUM=",
		"BIP_OPTS=", "BIP_HOST=", "BIPCONF=", "BIP_SPAWN_", NULL,
	};
	int i;

	for (i = 0; own[i]; i++)
		if (!strncmp(e, own[i], strlen(own[i])))
			return 1;
	return 0;
}

struct out {
	char *buf;
	size_t len;
};

static void put(struct out *o, const char *field)
{
	size_t n = strlen(field) + 1;

	if (o->len + n > ATTACH_REC_MAX)
		die("--attach: the command, its arguments and its environment take more than "
		    "%d bytes", ATTACH_REC_MAX);
	memcpy(o->buf + o->len, field, n);
	o->len += n;
}

static void putn(struct out *o, long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld", v);
	put(o, s);
}

/* A service name published by MPI_Publish_name (mpi_shim(7)): its port
 * name in port, read with the checks the library makes. */
static void lookup_name(const char *service, char *port, size_t len)
{
	const char *d = getenv("BIP_NAMES_DIR"), *home = getenv("HOME");
	char dir[PATH_MAX], path[PATH_MAX + 256], hex[256];
	struct stat st;
	size_t i, n = strlen(service);
	ssize_t got;
	int fd;

	if (!n || n > 120)
		die("--attach name:%s: a service name has 1 to 120 bytes", service);
	if (d && *d)
		snprintf(dir, sizeof(dir), "%s", d);
	else
		snprintf(dir, sizeof(dir), "%s/.bip/names", home ? home : "");
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		die("--attach name:%s: the names directory %s is missing, not a directory of "
		    "this user, or open to others", service, dir);
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)service[i]);
	snprintf(path, sizeof(path), "%s/%s", dir, hex);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		die("--attach name:%s: no such name is published (%s)", service, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		die("--attach name:%s: its entry is not a file of this user", service);
	got = read(fd, port, len - 1);
	close(fd);
	if (got <= 0)
		die("--attach name:%s: its entry is empty", service);
	port[got] = '\0';
}

/* JOB: a job id, a port name (bip:JOBID:...) or name:SERVICE. */
static void job_of(const char *target, char *id, size_t len)
{
	char port[512];
	const char *s = target;
	size_t n;

	if (!strncmp(target, "name:", 5)) {
		lookup_name(target + 5, port, sizeof(port));
		s = port;
	}
	if (!strncmp(s, "bip:", 4))
		s += 4;
	n = strcspn(s, ":\n");
	if (!n || n >= len || strspn(s, "0123456789abcdefABCDEF") < n)
		die("--attach %s: expected a job id (hex digits, as bipload says \"job ID\"), a "
		    "port name (bip:JOBID:...) or name:SERVICE", target);
	memcpy(id, s, n);
	id[n] = '\0';
}

/* The grow request of pm.h for the commands of the options. */
static void request(struct out *o)
{
	char cwd[PATH_MAX];
	const char *path = getenv("PATH");
	int a, i, nenv = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));
	for (i = 0; environ[i]; i++)
		nenv += !job_own(environ[i]) && strchr(environ[i], '=') &&
			valid_name(environ[i], (size_t)(strchr(environ[i], '=') - environ[i]));
	put(o, "grow");
	putn(o, opt.napps);
	for (a = 0; a < opt.napps; a++) {
		const struct bipload_app *app = &opt.apps[a];
		int argc = 0;

		while (app->argv[argc])
			argc++;
		putn(o, app->nodes ? app->nodes : 1);
		put(o, "");
		put(o, cwd);
		put(o, path ? path : "");
		putn(o, argc);
		for (i = 0; i < argc; i++)
			put(o, app->argv[i]);
		putn(o, nenv + app->nenv);
		for (i = 0; environ[i]; i++)
			if (!job_own(environ[i]) && strchr(environ[i], '=') &&
			    valid_name(environ[i],
				       (size_t)(strchr(environ[i], '=') - environ[i])))
				put(o, environ[i]);
		for (i = 0; i < app->nenv; i++)
			put(o, app->env[i]);
	}
}

/* The fields of a record from the job (NUL-ended, split in place). */
static int fields(char *buf, size_t len, char **f, int max)
{
	size_t at = 0;
	int n = 0;

	if (!len || buf[len - 1])
		return -1;
	while (at < len && n < max) {
		f[n++] = buf + at;
		at += strlen(buf + at) + 1;
	}
	return at == len ? n : -1;
}

static int number(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return *s && !*end && !errno && *v >= lo && *v <= hi ? 0 : -1;
}

static void say_end(long node, int status)
{
	if (WIFSIGNALED(status)) {
		const char *name = sigabbrev_np(WTERMSIG(status));

		fprintf(stderr, "bipload: node %ld killed by signal SIG%s\n", node,
			name ? name : "?");
	} else if (WEXITSTATUS(status)) {
		fprintf(stderr, "bipload: node %ld exited with status %d\n", node,
			WEXITSTATUS(status));
	}
}

int bipload_attach_run(const char *target)
{
	static char buf[ATTACH_REC_MAX + 1];
	static char *f[ATTACH_REC_MAX / 2];
	char id[BIP_JOBID_MAX + 1], why[PATH_MAX + 128];
	struct sockaddr_un addr;
	struct out o = { .buf = buf, .len = 0 };
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr mh;
	struct sigaction sa = { .sa_handler = on_signal };
	int fd, nf, i, rc = 0, got_signal = 0, first_failed = -1, stops = 0;
	long first, total, room, v, left;
	double start = now_s();
	ssize_t len;

	if (opt.conf_file || opt.nhosts || opt.hostfile || opt.universe || opt.trace ||
	    opt.monitor || opt.outdir || opt.bind_to || opt.ppn || opt.tag_output ||
	    opt.report_bindings)
		die("--attach: the processes join a running job as it is: -f, --host, "
		    "--hostfile, --ppn, --universe, --bind-to, --report-bindings, --trace, "
		    "--monitor, --output-filename and --tag-output do not apply");
	job_of(target, id, sizeof(id));
	if (attach_addr(id, &addr, 0, why, sizeof(why)) < 0)
		die("--attach %s: %s", target, why);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die("--attach %s: job %s is not running on this host, or cannot grow (%s: %s)",
		    target, id, addr.sun_path, strerror(errno));
	request(&o);
	iov = (struct iovec){ .iov_base = buf, .iov_len = o.len };
	mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			      .msg_controllen = sizeof(ctl) };
	memset(&ctl, 0, sizeof(ctl));
	ctl.h.cmsg_level = SOL_SOCKET;
	ctl.h.cmsg_type = SCM_RIGHTS;
	ctl.h.cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(&ctl.h), (int[3]){ 0, 1, 2 }, 3 * sizeof(int));
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		die("--attach %s: cannot send the command: %s", target, strerror(errno));

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("pipe: %s", strerror(errno));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* The answer to the request. */
	do
		len = recv(fd, buf, ATTACH_REC_MAX, 0);
	while (len < 0 && errno == EINTR);
	if (len <= 0)
		die("--attach %s: job %s closed the connection without an answer", target, id);
	nf = fields(buf, (size_t)len, f, (int)(sizeof(f) / sizeof(f[0])));
	if (nf < 5 || strcmp(f[0], "grew") || number(f[1], 0, INT_MAX, &first) < 0 ||
	    number(f[2], 0, 4096, &total) < 0 || number(f[3], 0, INT_MAX, &room) < 0 ||
	    nf != 5 + total)
		die("--attach %s: a malformed answer from job %s", target, id);
	for (i = 0; i < total; i++) {
		if (number(f[4 + i], 0, 4095, &v) < 0)
			die("--attach %s: a malformed answer from job %s", target, id);
		if (v && !rc)
			rc = v == ENOENT || v == EACCES || v == ENOEXEC ? 127 : 1;
	}
	if (rc || !total) {
		fprintf(stderr, "bipload: --attach %s: %s\n", target,
			f[nf - 1][0] ? f[nf - 1] : "the job refused the command");
		return rc ? rc : 1;
	}
	info("nodes %ld to %ld joined job %s", first, first + total - 1, id);

	/* Their ends; a signal or the time limit stops them. */
	for (left = total; left > 0;) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
					 { .fd = sig_pipe[0], .events = POLLIN } };
		long node;

		if (poll(pfd, 2, 200) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pfd[1].revents) {
			unsigned char c;

			while (read(sig_pipe[0], &c, 1) == 1) {
				if (!got_signal)
					got_signal = c;
				/* A second signal: the connection closes, and
				 * the job stops them without waiting for us. */
				if (++stops > 1)
					return 128 + got_signal;
				send(fd, "stop", 5, MSG_NOSIGNAL);
			}
		}
		if (opt.timeout && !stops && now_s() - start > opt.timeout) {
			fprintf(stderr, "bipload: timed out after %g s; stopping nodes %ld to %ld\n",
				opt.timeout, first, first + total - 1);
			rc = 124;
			stops = 1;
			send(fd, "stop", 5, MSG_NOSIGNAL);
		}
		if (!pfd[0].revents)
			continue;
		len = recv(fd, buf, ATTACH_REC_MAX, MSG_DONTWAIT);
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (len <= 0) {
			fprintf(stderr, "bipload: job %s ended before %ld of the attached nodes had "
				"(they end with it)\n", id, left);
			return rc ? rc : 1;
		}
		nf = fields(buf, (size_t)len, f, 4);
		if (nf != 3 || strcmp(f[0], "ended") || number(f[1], first, first + total - 1,
							       &node) < 0 ||
		    number(f[2], 0, 0xffff, &v) < 0) {
			fprintf(stderr, "bipload: job %s sent a malformed record: ignored\n", id);
			continue;
		}
		left--;
		if (!stops || WIFEXITED((int)v))
			say_end(node, (int)v);
		if (first_failed < 0 && (!WIFEXITED((int)v) || WEXITSTATUS((int)v)) && !stops) {
			first_failed = (int)node;
			rc = WIFSIGNALED((int)v) ? 128 + WTERMSIG((int)v) : WEXITSTATUS((int)v);
		}
	}
	close(fd);
	if (got_signal && !rc)
		rc = 128 + got_signal;
	return rc;
}
