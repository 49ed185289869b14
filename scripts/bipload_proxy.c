/* SPDX-License-Identifier: MIT */
/*
 * bipload-proxy - bipload's proxy on a host of a job (bipload_proxy.h has
 * the protocol).
 *
 *   bipload-proxy                        through a remote shell: the channel
 *                                        is stdin and stdout
 *   bipload-proxy --connect ADDR:PORT,.. in an srun step: connect to bipload
 *
 * Not a command for users: bipload starts it, one per host.  It takes the
 * job description, starts the host's processes (each in a session of its
 * own, with the proxy as its parent-death signal's parent, bound to its
 * core when asked), forwards their output and how they end, passes node 0's
 * input on, and stops them when bipload says so, when it gets SIGTERM,
 * SIGINT or SIGHUP, or when its channel closes: SIGTERM to each process's
 * group, SIGKILL after the grace period.  It exits once its processes have
 * ended: 0 after DONE, 1 when its channel was lost, 2 for a broken frame,
 * 126 when it cannot start (a job description it cannot use, no working
 * directory).
 *
 * With bipload --monitor (an M record), each process gets a page of its
 * own, a sealed memory file (lib/bip/boot/monitor.h), as descriptor 5;
 * the proxy reads the pages as bipload does its own host's, and sends each
 * page that changed in a MONITOR frame (bipload_monitor.c).
 *
 * A job that grows may start a proxy on a host where none of its nodes
 * runs yet, for the nodes that join there (a job description with no
 * node): such a late proxy does not end when its processes have, since
 * more may come; it ends when bipload closes its channel, once nothing of
 * the job runs (0, if nothing ran then), or stops the job.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bind.h"
#include "bipload_monitor.h"
#include "bipload_proxy.h"
#include "monitor.h"
#include "conf.h"

/* Output the proxy holds for bipload before it stops reading the pipes. */
#define PROXY_OUT_HIGH (1u << 20)
/* Seconds to hand the last frames to bipload before giving up. */
#define PROXY_LAST_WORDS 30.0

struct papp {
	char **argv;
	int argc;
	char **env;
	int nenv;
};

struct pnode {
	int node;
	int app;
	int index;              /* its index among this host's nodes */
	pid_t pid;              /* 0 before it starts and once reaped */
	pid_t started;          /* its pid, once started */
	int ended;
	int fd[2];              /* our ends of its stdout and stderr, -1 once closed */
	int pm;                 /* our end of its process channel, or -1 */
	/* A process that joined the running job (GROW): its own command. */
	int grown;
	char **argv;            /* NULL-ended */
	int argc;
	char **env;
	int nenv;
	char *wdir, *path;
	char group[48];
	/* bipload --monitor: its page, mapped read-only, a copy, and the
	 * copy last sent (its updates count) */
	struct bip_monitor_page *mon, *mon_copy;
	size_t mon_len;
	uint64_t mon_sent;
};

static struct {
	struct bipload_chan chan;
	int have_job;
	int lost;               /* the channel is gone */
	int stopping;
	double kill_at;         /* SIGKILL those still running then (0: not planned) */
	char secret[130];
	char host[BIP_CONF_HOSTLEN];
	char jobid[BIP_JOBID_MAX + 1];
	char *cwd;
	double grace;
	int bind;
	int grows;              /* the job may grow: every process gets a channel */
	int monitor_peers;      /* bipload --monitor: each process's page's room */
	double monitor_next;    /* when the pages are read next */
	int late;               /* started with no node, for the nodes that join */
	int lost_running;       /* processes ran when the channel was lost */
	char **env;
	int nenv;
	struct papp *apps;
	int napps;
	struct pnode *nodes;
	int nnodes;
	/* node 0's input, when it is here */
	struct pnode *zero;
	int stdin_fd;
	int stdin_eof;
	int stdin_closed;
	unsigned char *stdin_buf;
	size_t stdin_len;
	int sig_pipe[2];
	pid_t self;
} px = { .stdin_fd = -1, .sig_pipe = { -1, -1 } };

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bipload-proxy: host %s: ", px.host[0] ? px.host : "?");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (write(px.sig_pipe[1], &c, 1) < 0) {
		/* full: the loop has signals to read already */
	}
	errno = saved;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void put(uint32_t type, uint32_t node, const void *a, size_t alen, const void *b,
		size_t blen)
{
	if (px.lost)
		return;
	if (bipload_chan_put(&px.chan, type, node, a, alen, b, blen) < 0) {
		say("out of memory for bipload's frames");
		px.lost = 1;
	}
}

static void put32(uint32_t type, uint32_t node, uint32_t v)
{
	unsigned char b[4];

	bipload_put32(b, v);
	put(type, node, b, 4, NULL, 0);
}

/* --- the job description --- */

static int valid_var(const char *s)
{
	const char *eq = strchr(s, '=');
	const char *p;

	if (!eq || eq == s || (*s >= '0' && *s <= '9'))
		return 0;
	for (p = s; p < eq; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

static int push(void *array_p, int *n, size_t size)
{
	return bip_array_grow(array_p, *n + 1, size);
}

/* Take the job description; 0, or -1 with the reason said. */
static int job_parse(const unsigned char *data, size_t len)
{
	const char *p = (const char *)data, *end = p + len;
	struct papp *app = NULL;
	int i;

	if (!len || data[len - 1] != '\0') {
		say("a job description that does not end its last record");
		return -1;
	}
	px.grace = 3.0;
	for (; p < end; p += strlen(p) + 1) {
		const char *v = p + 1;
		char *copy;

		switch (*p) {
		case 'S':
			if (strlen(v) >= sizeof(px.secret) ||
			    bipload_auth_key(v, (unsigned char[64]){ 0 }, 64) < 0) {
				say("a job secret that is not 32 to 128 hex digits");
				return -1;
			}
			strcpy(px.secret, v);
			break;
		case 'C':
			if (*v != '/') {
				say("a working directory that is not absolute: %.200s", v);
				return -1;
			}
			free(px.cwd);
			px.cwd = strdup(v);
			if (!px.cwd)
				return -1;
			break;
		case 'G': {
			char *e;

			px.grace = strtod(v, &e);
			if (*e || !(px.grace >= 0) || px.grace > 86400) {
				say("a grace period of %.40s", v);
				return -1;
			}
			break;
		}
		case 'B':
			px.bind = !strcmp(v, "1");
			break;
		case 'J':
			px.grows = !strcmp(v, "1");
			break;
		case 'M': {
			char *end;
			long peers = strtol(v, &end, 10);

			if (*end || peers < 1 || peers > BIP_MONITOR_PEERS_MAX) {
				say("a monitor page for %.20s peers", v);
				return -1;
			}
			px.monitor_peers = (int)peers;
			break;
		}
		case 'H':
			if (!*v || strlen(v) >= sizeof(px.host)) {
				say("a host name of %zu characters", strlen(v));
				return -1;
			}
			strcpy(px.host, v);
			break;
		case 'E':
		case 'e':
			if (!valid_var(v) || (*p == 'e' && !app)) {
				say("an environment record %.80s", v);
				return -1;
			}
			copy = strdup(v);
			if (!copy)
				return -1;
			if (*p == 'E') {
				if (push(&px.env, &px.nenv, sizeof(*px.env)) < 0)
					return -1;
				px.env[px.nenv++] = copy;
				if (!strncmp(v, "BIP_JOBID=", 10) && bip_jobid_valid(v + 10))
					snprintf(px.jobid, sizeof(px.jobid), "%s", v + 10);
			} else {
				if (push(&app->env, &app->nenv, sizeof(*app->env)) < 0)
					return -1;
				app->env[app->nenv++] = copy;
			}
			break;
		case 'A':
			if (atoi(v) != px.napps || push(&px.apps, &px.napps, sizeof(*px.apps)) < 0) {
				say("commands out of order (%.20s)", v);
				return -1;
			}
			app = &px.apps[px.napps++];
			memset(app, 0, sizeof(*app));
			break;
		case 'a':
			/* argv ends with NULL: room for one more */
			if (!app || bip_array_grow((void **)&app->argv, app->argc + 2, sizeof(char *)) < 0 ||
			    !(app->argv[app->argc] = strdup(v))) {
				say("an argument before its command");
				return -1;
			}
			app->argv[++app->argc] = NULL;
			break;
		case 'N': {
			struct pnode *n;
			int node, a, index;
			char tail;

			if (sscanf(v, "%d %d %d%c", &node, &a, &index, &tail) != 3 || node < 0 ||
			    node >= BIP_CONF_MAXNODES || a < 0 || a >= px.napps || index < 0 ||
			    index >= BIP_CONF_MAXNODES) {
				say("a node record %.40s", v);
				return -1;
			}
			for (i = 0; i < px.nnodes; i++)
				if (px.nodes[i].node == node) {
					say("node %d twice", node);
					return -1;
				}
			if (push(&px.nodes, &px.nnodes, sizeof(*px.nodes)) < 0)
				return -1;
			n = &px.nodes[px.nnodes++];
			memset(n, 0, sizeof(*n));
			n->node = node;
			n->app = a;
			n->index = index;
			n->fd[0] = n->fd[1] = n->pm = -1;
			break;
		}
		default:
			say("an unknown record '%c' in the job description", *p);
			return -1;
		}
	}
	/* A job that grows may start a proxy for nodes that join later. */
	px.late = !px.nnodes && px.grows;
	if ((!px.nnodes && !px.late) || !px.cwd || !px.secret[0] || !px.jobid[0]) {
		say("a job description without %s", !px.nnodes ? "nodes" : !px.cwd ?
		    "a working directory" : !px.secret[0] ? "the job's secret" : "BIP_JOBID");
		return -1;
	}
	for (i = 0; i < px.napps; i++)
		if (!px.apps[i].argc) {
			say("command %d has no program", i);
			return -1;
		}
	for (i = 0; i < px.nnodes; i++)
		if (px.nodes[i].node == 0)
			px.zero = &px.nodes[i];
	return 0;
}

/* --- the processes --- */

/* Tell a grown node's exec pipe why it cannot run, and end. */
static __attribute__((noreturn)) void child_fail(int ep, int code)
{
	int e = errno;

	if (ep >= 0 && write(ep, &e, sizeof(e)) < 0)
		_exit(code);
	_exit(code);
}

static __attribute__((noreturn)) void child(struct pnode *n, int in, int out, int err, int pm,
					    int ep, int page)
{
	const struct papp *app = n->grown ? NULL : &px.apps[n->app];
	struct sigaction sa = { .sa_handler = SIG_DFL };
	char **argv = n->grown ? n->argv : app->argv;
	char v[32], why[256];
	sigset_t none;
	int i;

	/* Dies with the proxy, whatever kills it; it may be gone already. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != px.self)
		_exit(127);
	setsid();
	for (i = 1; i < 65; i++)
		sigaction(i, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	/* The channel as descriptor 3, the exec pipe as 4 (close-on-exec):
	 * out of the way first, as either may be 3 or 4 now. */
	if (pm >= 0)
		pm = fcntl(pm, F_DUPFD, 512);
	if (ep >= 0)
		ep = fcntl(ep, F_DUPFD_CLOEXEC, 512);
	if (page >= 0)
		page = fcntl(page, F_DUPFD, 512);
	if (pm >= 0) {
		dup2(pm, 3);
		fcntl(3, F_SETFD, 0);
	}
	if (ep >= 0) {
		/* dup2 clears close-on-exec: set again, or the proxy would
		 * wait on the pipe until the program ends. */
		dup2(ep, 4);
		fcntl(4, F_SETFD, FD_CLOEXEC);
		ep = 4;
	}
	if (page >= 0) {
		/* Its --monitor page as descriptor 5 (bipload_monitor.c). */
		dup2(page, 5);
		fcntl(5, F_SETFD, 0);
	}
	for (i = 3; i < 1024; i++)
		if ((i != 3 || pm < 0) && (i != 4 || ep < 0) && (i != 5 || page < 0))
			close(i);
	if (page >= 0)
		setenv(BIP_MONITOR_ENV, "5", 1);
	else
		unsetenv(BIP_MONITOR_ENV);
	for (i = 0; i < px.nenv; i++)
		putenv(px.env[i]);
	for (i = 0; i < (app ? app->nenv : n->nenv); i++)
		putenv(app ? app->env[i] : n->env[i]);
	snprintf(v, sizeof(v), "%d", n->node);
	setenv(BIP_ENV_NODE, v, 1);
	snprintf(v, sizeof(v), "%d", n->app);
	setenv("BIP_APPNUM", v, 1);
	setenv(BIP_ENV_SECRET, px.secret, 1);
	if (pm >= 0)
		setenv("BIP_PM_FD", "3", 1);
	if (n->grown) {
		setenv("BIP_GROUP", n->group, 1);
		if (n->path && *n->path)
			setenv("PATH", n->path, 1);
		/* A program named by a relative path is the job's working
		 * directory's, wherever the process runs. */
		if (strchr(argv[0], '/') && argv[0][0] != '/') {
			char *abs = realpath(argv[0], NULL);

			if (abs)
				argv[0] = abs;
		}
		if (n->wdir && *n->wdir && chdir(n->wdir) < 0)
			child_fail(ep, 126);
	}
	/* Bound before the program runs, BIP or not. */
	if (px.bind && bip_bind_core(n->index, why, sizeof(why)) < 0) {
		fprintf(stderr, "bipload: node %d: --bind-to core: %s\n", n->node, why);
		_exit(127);
	}
	execvp(argv[0], argv);
	if (n->grown)
		child_fail(ep, 127);
	if (errno == ENOENT)
		fprintf(stderr, "bipload: host %s: %s: program not found (PATH=%s)\n", px.host,
			app->argv[0], getenv("PATH") ? getenv("PATH") : "");
	else
		fprintf(stderr, "bipload: host %s: node %d: cannot run %s: %s\n", px.host, n->node,
			app->argv[0], strerror(errno));
	_exit(127);
}

/* bipload --monitor: a sealed page for n, which its process inherits
 * (lib/bip/boot/monitor.h); its descriptor, or -1 (n is not monitored). */
static int monitor_page(struct pnode *n)
{
	size_t len = bip_monitor_size((size_t)px.monitor_peers);
	int fd;

	if (!px.monitor_peers)
		return -1;
	fd = memfd_create("bip-monitor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto close_fd;
	n->mon = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (n->mon == MAP_FAILED) {
		n->mon = NULL;
		goto close_fd;
	}
	n->mon_copy = calloc(1, len);
	if (!n->mon_copy) {
		munmap(n->mon, len);
		n->mon = NULL;
		goto close_fd;
	}
	n->mon_len = len;
	return fd;
close_fd:
	say("node %d: no monitor page: %s", n->node, strerror(errno));
	close(fd);
	return -1;
}

/* Every MONITOR_PERIOD: each page that changed, to bipload. */
static void monitor_read(void)
{
	int i;

	for (i = 0; i < px.nnodes; i++) {
		struct pnode *n = &px.nodes[i];
		int peers;

		if (!n->mon)
			continue;
		peers = bip_monitor_copy(n->mon, n->mon_len, n->mon_copy,
					 (size_t)px.monitor_peers);
		if (peers < 0 || n->mon_copy->updates == n->mon_sent)
			continue;
		n->mon_sent = n->mon_copy->updates;
		put(BPF_MONITOR, (uint32_t)n->node, n->mon_copy, bip_monitor_size((size_t)peers),
		    NULL, 0);
	}
	px.monitor_next = bipload_now() + BIPLOAD_MONITOR_PERIOD_MS / 1000.0;
}

/* Start n's process; 0, or -1 with the reason said.  A grown node's
 * answer is a GREW frame: its pid, or why it could not run. */
static int start(struct pnode *n)
{
	int out[2], err[2], in[2] = { -1, -1 }, pm[2] = { -1, -1 }, ep[2] = { -1, -1 }, e = 0;
	int page = monitor_page(n);
	ssize_t got;
	pid_t pid;

	if (pipe(out) < 0 || pipe(err) < 0 || (n == px.zero && pipe(in) < 0) ||
	    (px.grows && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pm) < 0) ||
	    (n->grown && pipe2(ep, O_CLOEXEC) < 0)) {
		say("node %d: pipe: %s", n->node, strerror(errno));
		return -1;
	}
	if (in[0] < 0 && (in[0] = open("/dev/null", O_RDONLY)) < 0) {
		say("node %d: /dev/null: %s", n->node, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		say("node %d: fork: %s", n->node, strerror(errno));
		return -1;
	}
	if (pid == 0)
		child(n, in[0], out[1], err[1], pm[1], ep[1], page);
	if (page >= 0)
		close(page);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (pm[0] >= 0) {
		close(pm[1]);
		n->pm = pm[0];
		set_nonblock(pm[0]);
	}
	if (n->grown) {
		unsigned char b[8];

		close(ep[1]);
		do
			got = read(ep[0], &e, sizeof(e));
		while (got < 0 && errno == EINTR);
		close(ep[0]);
		if (got != (ssize_t)sizeof(e))
			e = 0;
		bipload_put32(b, e ? 0 : (uint32_t)pid);
		bipload_put32(b + 4, (uint32_t)e);
		put(BPF_GREW, (uint32_t)n->node, b, 8, NULL, 0);
	}
	if (in[1] >= 0) {
		px.stdin_fd = in[1];
		set_nonblock(in[1]);
	}
	n->pid = pid;
	n->started = pid;
	n->fd[0] = out[0];
	n->fd[1] = err[0];
	set_nonblock(out[0]);
	set_nonblock(err[0]);
	if (!n->grown)
		put32(BPF_STARTED, (uint32_t)n->node, (uint32_t)pid);
	return 0;
}

/* What n's process sent on its channel, passed on; its end said once. */
static void pm_pump(struct pnode *n)
{
	static unsigned char buf[BIPLOAD_PM_MAX];
	ssize_t r = recv(n->pm, buf, sizeof(buf), MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		close(n->pm);
		n->pm = -1;
		put(BPF_PMREC, (uint32_t)n->node, NULL, 0, NULL, 0);
		return;
	}
	put(BPF_PMREC, (uint32_t)n->node, buf, (size_t)r, NULL, 0);
}

static struct pnode *node_of(uint32_t node)
{
	int i;

	for (i = 0; i < px.nnodes; i++)
		if ((uint32_t)px.nodes[i].node == node)
			return &px.nodes[i];
	return NULL;
}

/* A GROW frame: the node's command, checked, and its process started. */
static int grow_node(const struct bipload_frame *f)
{
	const char *p = (const char *)f->data, *end = p + f->len;
	struct pnode *n;
	int i, zero = px.zero ? px.zero->node : -1;

	if (!px.grows || f->node >= BIP_CONF_MAXNODES || !f->len || f->data[f->len - 1]) {
		say("a grow frame out of place");
		return -1;
	}
	for (i = 0; i < px.nnodes; i++)
		if ((uint32_t)px.nodes[i].node >= f->node) {
			say("a grow frame for node %u, not a new node", f->node);
			return -1;
		}
	if (push(&px.nodes, &px.nnodes, sizeof(*px.nodes)) < 0)
		return -1;
	/* px.nodes moved: node 0's entry with it. */
	px.zero = zero >= 0 ? node_of((uint32_t)zero) : NULL;
	n = &px.nodes[px.nnodes++];
	memset(n, 0, sizeof(*n));
	n->node = (int)f->node;
	n->index = px.nnodes - 1;
	n->fd[0] = n->fd[1] = n->pm = -1;
	n->grown = 1;
	for (; p < end; p += strlen(p) + 1) {
		const char *v = p + 1;
		char *copy = strdup(v);

		if (!copy)
			return -1;
		switch (*p) {
		case 'a':
			if (bip_array_grow((void **)&n->argv, n->argc + 2, sizeof(char *)) < 0) {
				free(copy);
				return -1;
			}
			n->argv[n->argc++] = copy;
			n->argv[n->argc] = NULL;
			continue;
		case 'e':
			if (!valid_var(v) || push(&n->env, &n->nenv, sizeof(*n->env)) < 0) {
				free(copy);
				say("node %u: an environment record %.80s", f->node, v);
				return -1;
			}
			n->env[n->nenv++] = copy;
			continue;
		case 'W':
			free(n->wdir);
			n->wdir = copy;
			continue;
		case 'P':
			free(n->path);
			n->path = copy;
			continue;
		case 'g':
			snprintf(n->group, sizeof(n->group), "%s", v);
			free(copy);
			continue;
		case 'n':
			n->app = atoi(v);
			free(copy);
			if (n->app < 0 || n->app > 4096) {
				say("node %u: an app number %.20s", f->node, v);
				return -1;
			}
			continue;
		default:
			free(copy);
			say("node %u: an unknown record '%c' in a grow frame", f->node, *p);
			return -1;
		}
	}
	if (!n->argv || !n->argv[0][0] || !n->group[0]) {
		say("node %u: a grow frame without %s", f->node, !n->argv ? "a program" : "its group");
		return -1;
	}
	if (start(n) < 0) {
		unsigned char b[8];

		bipload_put32(b, 0);
		bipload_put32(b + 4, EAGAIN);
		put(BPF_GREW, f->node, b, 8, NULL, 0);
	}
	return 0;
}

static int running(void)
{
	int i, k = 0;

	for (i = 0; i < px.nnodes; i++)
		k += px.nodes[i].pid != 0;
	return k;
}

static void signal_all(int sig)
{
	int i;

	for (i = 0; i < px.nnodes; i++) {
		if (!px.nodes[i].pid)
			continue;
		kill(-px.nodes[i].pid, sig); /* its session's group: the program and its children */
		kill(px.nodes[i].pid, sig);
	}
}

/* Stop the processes: sig now, SIGKILL after the grace period. */
static void stop(int sig)
{
	px.stopping = 1;
	signal_all(sig);
	if (sig != SIGKILL && !px.kill_at)
		px.kill_at = bipload_now() + px.grace;
}

static void node0_input_closed(void)
{
	if (px.stdin_fd >= 0)
		close(px.stdin_fd);
	px.stdin_fd = -1;
	if (!px.stdin_closed) {
		unsigned char b[8];

		/* What is still held will never be taken: acknowledge it. */
		bipload_put32(b, (uint32_t)px.stdin_len);
		bipload_put32(b + 4, 1);
		put(BPF_STDIN_ACK, 0, b, 8, NULL, 0);
	}
	px.stdin_closed = 1;
	px.stdin_len = 0;
}

/* Read a stream of n (k: 0 stdout, 1 stderr) and forward it. */
static void pump(struct pnode *n, int k)
{
	unsigned char buf[BIPLOAD_OUT_CHUNK];
	unsigned char s = (unsigned char)(k + 1);
	ssize_t r = read(n->fd[k], buf, sizeof(buf));

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		close(n->fd[k]);
		n->fd[k] = -1;
		put(BPF_OUT, (uint32_t)n->node, &s, 1, NULL, 0);
		return;
	}
	put(BPF_OUT, (uint32_t)n->node, &s, 1, buf, (size_t)r);
}

static void reap(void)
{
	int status, i, k;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < px.nnodes; i++) {
			struct pnode *n = &px.nodes[i];

			if (n->pid != pid)
				continue;
			/* What it wrote before it ended comes before its end. */
			for (k = 0; k < 2; k++) {
				struct pollfd p = { .fd = n->fd[k], .events = POLLIN };

				while (n->fd[k] >= 0 && poll(&p, 1, 0) > 0)
					pump(n, k);
			}
			/* Its last records, then the channel's end: another
			 * process may hold its end open. */
			while (n->pm >= 0 &&
			       poll(&(struct pollfd){ .fd = n->pm, .events = POLLIN }, 1, 0) > 0)
				pm_pump(n);
			if (n->pm >= 0) {
				close(n->pm);
				n->pm = -1;
				put(BPF_PMREC, (uint32_t)n->node, NULL, 0, NULL, 0);
			}
			n->pid = 0;
			n->ended = 1;
			put32(BPF_EXIT, (uint32_t)n->node, (uint32_t)status);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				bipload_remove_node_shm(px.jobid, n->node);
			if (n == px.zero)
				node0_input_closed();
		}
	}
}

/* --- frames from bipload --- */

static int frame(const struct bipload_frame *f)
{
	int i;

	if (!px.have_job && f->type != BPF_JOB) {
		say("bipload's first frame is not the job (type %u)", f->type);
		return -1;
	}
	switch (f->type) {
	case BPF_JOB:
		if (px.have_job) {
			say("a second job description");
			return -1;
		}
		px.have_job = 1;
		if (job_parse(f->data, f->len) < 0)
			exit(126);
		if (chdir(px.cwd) < 0) {
			fprintf(stderr, "bipload: host %s: cannot go to %s: %s\n", px.host, px.cwd,
				strerror(errno));
			exit(126);
		}
		for (i = 0; i < px.nnodes && !px.stopping; i++)
			if (start(&px.nodes[i]) < 0)
				stop(SIGTERM);
		return 0;
	case BPF_STDIN:
		if (!px.zero || f->node != 0 || px.stdin_eof || f->len > BIPLOAD_STDIN_WINDOW ||
		    px.stdin_len + f->len > BIPLOAD_STDIN_WINDOW) {
			say("node 0's input out of place (%u bytes)", f->len);
			return -1;
		}
		if (!f->len) {
			px.stdin_eof = 1;
		} else if (px.stdin_closed) {
			unsigned char b[8];

			bipload_put32(b, f->len);
			bipload_put32(b + 4, 1);
			put(BPF_STDIN_ACK, 0, b, 8, NULL, 0);
		} else {
			unsigned char *p = realloc(px.stdin_buf, px.stdin_len + f->len);

			if (!p)
				return -1;
			px.stdin_buf = p;
			memcpy(p + px.stdin_len, f->data, f->len);
			px.stdin_len += f->len;
		}
		return 0;
	case BPF_SIGNAL:
		if (f->len != 4 || bipload_get32(f->data) < 1 || bipload_get32(f->data) > 64) {
			say("a signal frame of %u bytes", f->len);
			return -1;
		}
		stop((int)bipload_get32(f->data));
		return 0;
	case BPF_PM: {
		struct pnode *n = node_of(f->node);

		if (!n || !px.grows || !f->len || f->len > BIPLOAD_PM_MAX) {
			say("a record of %u bytes for node %u out of place", f->len, f->node);
			return -1;
		}
		/* A process that has closed its channel, or does not read its
		 * answers, loses them: not the proxy. */
		if (n->pm >= 0)
			(void)send(n->pm, f->data, f->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		return 0;
	}
	case BPF_GROW:
		return px.stopping ? 0 : grow_node(f);
	case BPF_KILL: {
		struct pnode *n = node_of(f->node);

		if (!n || f->len) {
			say("a kill of node %u out of place", f->node);
			return -1;
		}
		if (n->pid) {
			kill(-n->pid, SIGKILL);
			kill(n->pid, SIGKILL);
		}
		return 0;
	}
	default:
		say("a frame of type %u from bipload", f->type);
		return -1;
	}
}

/* Node 0's input, as its pipe takes it. */
static void feed_node0(void)
{
	ssize_t w;

	if (px.stdin_fd < 0)
		return;
	if (px.stdin_len) {
		w = write(px.stdin_fd, px.stdin_buf, px.stdin_len);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			node0_input_closed();
			return;
		}
		if (w > 0) {
			unsigned char b[8];

			memmove(px.stdin_buf, px.stdin_buf + w, px.stdin_len - (size_t)w);
			px.stdin_len -= (size_t)w;
			bipload_put32(b, (uint32_t)w);
			bipload_put32(b + 4, 0);
			put(BPF_STDIN_ACK, 0, b, 8, NULL, 0);
		}
	}
	if (!px.stdin_len && px.stdin_eof) {
		close(px.stdin_fd);
		px.stdin_fd = -1;
	}
}

/* --- the srun channel --- */

/* Connect to bipload at one of the addresses of list, prove the secret
 * both ways; the socket, or -1 with the reason said. */
static int connect_back(const char *list)
{
	unsigned char key[64], hello[BIPLOAD_AUTH_HELLO], join[BIPLOAD_AUTH_JOIN];
	unsigned char mac[BIPLOAD_AUTH_MAC], got[BIPLOAD_AUTH_MAC];
	char *copy = strdup(list), *save = NULL, *a;
	const char *name = getenv("SLURMD_NODENAME");
	int keylen, fd = -1;

	if (!copy)
		return -1;
	keylen = bipload_auth_key(px.secret, key, sizeof(key));
	if (keylen < 0) {
		say("no job secret in the environment (BIP_SECRET): srun did not pass it on");
		free(copy);
		return -1;
	}
	if (!name || !*name || strlen(name) >= BIPLOAD_AUTH_HOST) {
		say("SLURMD_NODENAME does not name this host");
		free(copy);
		return -1;
	}
	snprintf(px.host, sizeof(px.host), "%s", name);
	for (a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
		struct addrinfo *ai = NULL;
		char *colon = strrchr(a, ':');
		struct timeval tv = { 10, 0 };
		int one = 1;

		if (!colon)
			continue;
		*colon = '\0';
		if (getaddrinfo(a, colon + 1, &hints, &ai) != 0)
			continue;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		}
		if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    recv(fd, hello, sizeof(hello), MSG_WAITALL) != (ssize_t)sizeof(hello) ||
		    memcmp(hello, BIPLOAD_AUTH_MAGIC, sizeof(BIPLOAD_AUTH_MAGIC))) {
			freeaddrinfo(ai);
			if (fd >= 0)
				close(fd);
			fd = -1;
			continue;
		}
		freeaddrinfo(ai);
		memset(join, 0, sizeof(join));
		memcpy(join, BIPLOAD_AUTH_MAGIC, sizeof(BIPLOAD_AUTH_MAGIC));
		snprintf((char *)join + 8, BIPLOAD_AUTH_HOST, "%s", name);
		randombytes_buf(join + 8 + BIPLOAD_AUTH_HOST, BIPLOAD_AUTH_NONCE);
		bipload_auth_mac(join + 104, key, (size_t)keylen, "proxy", hello, sizeof(hello),
				 join, 104);
		if (send(fd, join, sizeof(join), MSG_NOSIGNAL) != (ssize_t)sizeof(join) ||
		    recv(fd, got, sizeof(got), MSG_WAITALL) != (ssize_t)sizeof(got)) {
			close(fd);
			fd = -1;
			continue;
		}
		bipload_auth_mac(mac, key, (size_t)keylen, "bipload", hello, sizeof(hello), join,
				 sizeof(join));
		if (crypto_verify_32(mac, got)) {
			say("the listener at %s:%s does not know the job's secret", a, colon + 1);
			close(fd);
			fd = -1;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		break;
	}
	sodium_memzero(key, sizeof(key));
	if (fd < 0)
		say("cannot reach bipload at %s", list);
	free(copy);
	return fd;
}

/* --- the loop --- */

static int all_closed(void)
{
	int i;

	for (i = 0; i < px.nnodes; i++)
		if (px.nodes[i].fd[0] >= 0 || px.nodes[i].fd[1] >= 0)
			return 0;
	return 1;
}

/* Descendants may hold the pipes open after a stop: take what is there
 * and close them. */
static void close_streams(void)
{
	int i, k;

	for (i = 0; i < px.nnodes; i++) {
		for (k = 0; k < 2; k++) {
			struct pollfd p = { .fd = px.nodes[i].fd[k], .events = POLLIN };

			while (px.nodes[i].fd[k] >= 0 && poll(&p, 1, 0) > 0)
				pump(&px.nodes[i], k);
			if (px.nodes[i].fd[k] >= 0) {
				close(px.nodes[i].fd[k]);
				px.nodes[i].fd[k] = -1;
				put(BPF_OUT, (uint32_t)px.nodes[i].node, &(unsigned char){ (unsigned char)(k + 1) },
				    1, NULL, 0);
			}
		}
	}
}

static int run(void)
{
	struct pollfd *pfd = NULL;
	int i, k, n, npids = 0, *pids, cap = 0;

	for (;;) {
		struct bipload_frame f;
		int timeout = 200, rc;

		reap();
		/* A late proxy waits for more nodes until bipload closes its
		 * channel or stops the job. */
		if (px.have_job && !running() &&
		    (px.late ? px.lost || px.stopping : all_closed() || px.stopping || px.lost)) {
			close_streams();
			break;
		}
		if (px.kill_at && bipload_now() >= px.kill_at) {
			signal_all(SIGKILL);
			px.kill_at = 0;
		}
		if (!px.lost && bipload_chan_flush(&px.chan) < 0) {
			px.lost = 1;
			stop(SIGTERM);
		}
		if (cap < 4 + 3 * px.nnodes) {
			free(pfd);
			cap = 4 + 3 * px.nnodes;
			pfd = calloc((size_t)cap, sizeof(*pfd));
			if (!pfd)
				return 1;
		}
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = px.sig_pipe[0], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = px.lost ? -1 : px.chan.rfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = px.lost || !bipload_chan_pending(&px.chan) ? -1 :
						  px.chan.wfd, .events = POLLOUT };
		pfd[n++] = (struct pollfd){ .fd = px.stdin_len || px.stdin_eof ? px.stdin_fd : -1,
					    .events = POLLOUT };
		for (i = 0; i < px.nnodes; i++)
			for (k = 0; k < 3; k++)
				/* Output and records wait while bipload has a lot to take. */
				pfd[n++] = (struct pollfd){
					.fd = bipload_chan_pending(&px.chan) > PROXY_OUT_HIGH && !px.lost ?
						      -1 : k < 2 ? px.nodes[i].fd[k] : px.nodes[i].pm,
					.events = POLLIN };
		if (px.kill_at) {
			double left = px.kill_at - bipload_now();

			timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
			if (timeout > 200)
				timeout = 200;
		}
		if (px.monitor_peers) {
			double left = px.monitor_next - bipload_now();
			int ms = left <= 0 ? 0 : (int)(left * 1000) + 1;

			if (ms < timeout)
				timeout = ms;
		}
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents) {
			unsigned char c;

			while (read(px.sig_pipe[0], &c, 1) == 1)
				if (c != SIGCHLD)
					stop(SIGTERM);
		}
		if (pfd[1].revents) {
			ssize_t r = bipload_chan_read(&px.chan);

			while (r > 0 && (rc = bipload_chan_next(&px.chan, &f)) != 0) {
				if (rc < 0 || frame(&f) < 0) {
					say("a broken frame from bipload: stopping this host's processes");
					px.lost = 2;
					stop(SIGTERM);
					break;
				}
			}
			if (r <= 0 && !px.lost) {
				/* bipload, the remote shell or the connection is gone. */
				px.lost = 1;
				px.lost_running = running() > 0;
				stop(SIGTERM);
			}
		}
		if (pfd[3].revents)
			feed_node0();
		/* The pipes polled are those of the nodes known before the poll. */
		for (i = 0; i < px.nnodes && 4 + 3 * i + 2 < n; i++) {
			for (k = 0; k < 2; k++)
				if (pfd[4 + 3 * i + k].revents && px.nodes[i].fd[k] >= 0)
					pump(&px.nodes[i], k);
			if (pfd[4 + 3 * i + 2].revents && px.nodes[i].pm >= 0)
				pm_pump(&px.nodes[i]);
		}
		if (px.lost && !px.have_job)
			break;
		/* Pages wait, as output does, while bipload has a lot to take. */
		if (px.monitor_peers && !px.lost && bipload_now() >= px.monitor_next &&
		    bipload_chan_pending(&px.chan) <= PROXY_OUT_HIGH)
			monitor_read();
	}
	free(pfd);
	/* The last state of every page (the processes have ended). */
	if (px.monitor_peers && !px.lost)
		monitor_read();
	/* libfabric's shm regions named after the pids of this host's processes */
	pids = malloc(((size_t)px.nnodes + 1) * sizeof(*pids));
	for (i = 0; pids && i < px.nnodes; i++)
		if (px.nodes[i].started)
			pids[npids++] = (int)px.nodes[i].started;
	if (pids)
		bipload_remove_pid_regions(pids, npids);
	free(pids);
	/* A late proxy's channel closed by bipload once nothing of the job
	 * runs is its normal end. */
	if (px.lost == 1 && px.late && !px.lost_running)
		return 0;
	if (px.lost)
		return px.lost == 2 ? 2 : 1;
	put(BPF_DONE, 0, NULL, 0, NULL, 0);
	return bipload_chan_drain(&px.chan, bipload_now() + PROXY_LAST_WORDS) < 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	const char *connect_to = NULL;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "--connect")) {
		connect_to = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: bipload-proxy [--connect ADDR:PORT,...]\n"
			"bipload starts it on each host of a job; it is not run by hand\n");
		return 2;
	}
	/* A parent-death signal inherited from bipload's remote shell would
	 * kill the proxy before it can stop its processes: the channel's end
	 * says that bipload is gone. */
	prctl(PR_SET_PDEATHSIG, 0);
	px.self = getpid();
	if (sodium_init() < 0) {
		fprintf(stderr, "bipload-proxy: libsodium cannot start\n");
		return 126;
	}
	if (pipe(px.sig_pipe) < 0)
		return 126;
	set_nonblock(px.sig_pipe[0]);
	set_nonblock(px.sig_pipe[1]);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (connect_to) {
		const char *s = getenv(BIP_ENV_SECRET);

		snprintf(px.secret, sizeof(px.secret), "%s", s ? s : "");
		unsetenv(BIP_ENV_SECRET);
		fd = connect_back(connect_to);
		if (fd < 0)
			return 126;
		set_nonblock(fd);
		bipload_chan_init(&px.chan, fd, fd);
	} else {
		/* The marker, then frames: what a login script says comes before. */
		if (write(1, BIPLOAD_PROXY_READY, strlen(BIPLOAD_PROXY_READY)) < 0)
			return 1;
		set_nonblock(0);
		set_nonblock(1);
		bipload_chan_init(&px.chan, 0, 1);
	}
	{
		char host[BIP_CONF_HOSTLEN] = "";
		unsigned char pid[4];

		gethostname(host, sizeof(host) - 1);
		bipload_put32(pid, (uint32_t)getpid());
		put(BPF_HELLO, 0, pid, 4, connect_to ? px.host : host,
		    strlen(connect_to ? px.host : host));
	}
	return run();
}
