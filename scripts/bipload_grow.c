/* SPDX-License-Identifier: MIT */
/*
 * bipload_grow.c - jobs that grow (bip_grow(3)): bipload's end of the
 * processes' channels (lib/bip/boot/pm.h has the protocol) and the nodes
 * it starts while the job runs.
 *
 * Room.  A job with a configuration without routes (and whose clusters, if
 * any, are over shm: the relays join them, and a command's host must be a
 * host of one, whose name its nodes keep and whose cluster they are in),
 * whose nodes all run on bipload's host, or use the ofi driver alone
 * (BIP_NIC=ofi) or the drivers of their choice (BIP_NIC unset), may grow
 * to --universe N nodes (default: the slots of --host or --hostfile, or
 * the tasks of the Slurm allocation, else its own nodes and 256 more); MPI
 * reports it as MPI_UNIVERSE_SIZE.  Every process then gets BIP_UNIVERSE,
 * BIP_GROW_HOST (where new nodes go by default: bipload's host, or the
 * first node's if bipload runs none) and BIP_PM_FD, one end of a socket
 * pair whose other end bipload polls with the job's output; a process of
 * another host has its socket pair from its proxy, which passes records
 * both ways (bipload_proxy.h).  Other jobs get none of them and cannot
 * grow.
 *
 * A grow request (from any process of the job) is checked whole before
 * anything starts: room for every process, each command's host one where
 * the job runs nodes (bipload's, or one with a proxy) or a spare host of
 * the host list (whose proxy starts then: bipload_remote_late), argument
 * counts that match the record.  A job with spare hosts tells its
 * processes BIP_GROW_SPANS=1: nodes may join on other hosts, so each
 * opens a network driver at start.  A process for another host goes to that host's
 * proxy in a GROW frame, and its GREW frame says whether it runs.  The new
 * nodes are numbered after every node the job has had; each is forked (by
 * bipload, or by its host's proxy) with its command's program, arguments,
 * environment (the job's, then the command's VAR=value), working directory
 * and PATH, and BIP_GROUP naming its siblings.  Whether exec worked comes
 * back on a close-on-exec pipe, so that a program that does not exist or
 * cannot run is an error code of that process and not a failure of the
 * job.  The answer goes once every new process has said "up" (its drivers
 * are open), or as soon as one fails (exec, or an end before "up", or no
 * "up" within BIP_GROW_TIMEOUT seconds, 60 by default): then the others
 * are killed, and none of them counts in the job's end.  A process that
 * joined and then fails ends the job like any node.
 *
 * "where NODE" answers with the pid of NODE's process (for a process of
 * another host, the pid it said in its "up") and the descriptor of its
 * shm segment there, as the process said in its "up", while it
 * runs and its channel is open (it closes it at bip_finalize); "addr NODE"
 * with the address a network driver of NODE published ("blob": lowercase
 * hex, at most 2048 digits), so that the ofi driver finds its peers in a
 * job that grows without the start-up exchange; "host NODE" with the name
 * of the host NODE runs on, which the configuration of the job's processes
 * does not give for a node that joined on another host.
 *
 * Every record is read as untrusted input: at most BIP_PM_MSG_MAX bytes,
 * fields counted against the record, numbers range-checked.
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
#include <sys/wait.h>
#include <unistd.h>

#include "bipload.h"
#include "conf.h"

#define PM_MSG_MAX 65536
#define GROW_DEFAULT_ROOM 256

int bipload_universe;           /* the room of a job that grows, else 0 */
static int grow_spans;          /* its nodes run, or may run, on several hosts */
static int grow_host_node = -1; /* a node of this host, whose host name new nodes take */

/* The request waiting for its new processes to come up. */
static struct {
	int active;
	int asker;              /* the node that asked */
	int first, total, room;
	int *codes;
	const char **progs;     /* each process's program (in the request's record) */
	char *record;           /* that record, kept while the request waits */
	char msg[512];
	double deadline;        /* the new processes must be up by then */
} pending;

/* The job's processes get BIP_NIC=nic. */
static int nic_is(const char *nic)
{
	const char *s = getenv("BIP_NIC");

	return !strcmp(s ? s : "", nic);
}

/* Seconds new processes have to start BIP: BIP_GROW_TIMEOUT, else 60. */
static double grow_timeout(void)
{
	const char *s = getenv("BIP_GROW_TIMEOUT");
	double v = s && *s ? atof(s) : 0;

	return v > 0 ? v : 60.0;
}

/* The first of the job's first nodes on host, or -1. */
static int cluster_host(const char *host)
{
	int i;

	for (i = 0; i < conf->n; i++)
		if (!procs[i].relay && !strcmp(conf->nodes[i].host, host))
			return i;
	return -1;
}

void bipload_grow_prepare(int want)
{
	int i;

	bipload_universe = 0;
	if (conf->routes)
		return;
	/* Clusters joined by relays: shm inside each cluster, which reaches
	 * the nodes that join on its hosts (the forwarding driver the
	 * others). */
	for (i = 0; i < conf->nclusters; i++)
		if (strcmp(conf->clusters[i].driver, "shm"))
			return;
	/* Over several hosts: the ofi driver alone (BIP_NIC=ofi), or shm and
	 * the network driver each process picks (BIP_NIC unset), which
	 * choose a new node's driver by its host ("host NODE" below).  A
	 * driver forced for every node that cannot cross hosts, or whose
	 * peers cannot join later, keeps the job at its size. */
	for (i = 0; i < nprocs; i++) {
		const char *h0 = conf->nodes[0].host, *h = conf->nodes[i].host;

		if (procs[i].proxy >= 0 && !nic_is("ofi") && !nic_is(""))
			return;
		grow_spans |= strcmp(h, h0) && !(bip_host_is_local(h) && bip_host_is_local(h0));
	}
	/* Hosts of the list without nodes yet (bipload_remote_late). */
	grow_spans |= bipload_nspare > 0 && (nic_is("ofi") || nic_is(""));
	grow_host_node = 0;
	for (i = 0; i < nprocs; i++)
		if (procs[i].proxy < 0) {
			grow_host_node = i;
			break;
		}
	/* --universe; else the slots of the host list, as MPI's launchers
	 * count the universe (--oversubscribe: no such limit); else room for
	 * GROW_DEFAULT_ROOM more.  Processes of the program: the relays take
	 * node numbers besides. */
	if (want > 0)
		bipload_universe = want + nrelays;
	else if (bipload_host_slots && !opt.oversubscribe)
		bipload_universe = bipload_host_slots + nrelays;
	else
		bipload_universe = nprocs + GROW_DEFAULT_ROOM;
	if (bipload_universe < nprocs)
		bipload_universe = nprocs;
	if (bipload_universe > BIP_CONF_MAXNODES)
		bipload_universe = BIP_CONF_MAXNODES;
	/* The processes of other hosts have their channels through their
	 * proxies (bipload_proxy.h). */
	for (i = 0; i < nprocs; i++)
		procs[i].pm_remote = procs[i].proxy >= 0;
}

int bipload_grow_spans(void)
{
	return grow_spans;
}

const char *bipload_grow_host(void)
{
	return conf->nodes[grow_host_node].host;
}

int bipload_room(void)
{
	return bipload_universe > nprocs ? bipload_universe : nprocs;
}

void bipload_grow_env(void)
{
	char v[32];

	if (bipload_universe <= 0)
		return;
	snprintf(v, sizeof(v), "%d", bipload_universe);
	setenv("BIP_UNIVERSE", v, 1);
	setenv("BIP_GROW_HOST", conf->nodes[grow_host_node].host, 1);
	if (grow_spans)
		setenv("BIP_GROW_SPANS", "1", 1);
}

int bipload_grow_channel(int node)
{
	int sv[2];

	procs[node].pm_fd = -1;
	procs[node].segfd = -1;
	if (bipload_universe <= 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair: %s", strerror(errno));
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	procs[node].pm_fd = sv[0];
	procs[node].segfd = -1;
	return sv[1];
}

/* A record of fields (each NUL-ended), sent on node's channel. */
struct rec {
	char buf[PM_MSG_MAX];
	size_t len;
};

static void put(struct rec *r, const char *field)
{
	size_t n = strlen(field) + 1;

	if (r->len + n > sizeof(r->buf))
		n = 0; /* cannot happen: answers are short */
	memcpy(r->buf + r->len, field, n);
	r->len += n;
}

/* A field of a GROW frame, its kind then the text, at buf + *at (the
 * caller sized buf for every field). */
static void put_tagged(char *buf, size_t *at, char kind, const char *text)
{
	size_t n = strlen(text) + 1;

	buf[*at] = kind;
	memcpy(buf + *at + 1, text, n);
	*at += n + 1;
}

static void putf(struct rec *r, const char *fmt, long v)
{
	char s[32];

	snprintf(s, sizeof(s), fmt, v);
	put(r, s);
}

/* Its channel is open: on this host, or through its proxy. */
static int pm_open(const struct proc *p)
{
	return p->proxy < 0 ? p->pm_fd >= 0 : p->pm_remote;
}

/* asker: a node, or an attached command (below 0, bipload_attach.c). */
static void answer(int node, const struct rec *r)
{
	struct proc *p;

	if (node < 0) {
		bipload_attach_answer(node, r->buf, r->len);
		return;
	}
	p = &procs[node];
	if (p->proxy >= 0) {
		if (p->pm_remote)
			bipload_remote_pm(node, r->buf, r->len);
		return;
	}
	if (p->pm_fd < 0)
		return;
	/* A process that does not read its answers loses them, not bipload. */
	if (send(p->pm_fd, r->buf, r->len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
		fprintf(stderr, "bipload: node %d: its channel: %s\n", node, strerror(errno));
}

static void pm_gone(struct proc *p)
{
	if (p->pm_fd >= 0)
		close(p->pm_fd);
	p->pm_fd = -1;
	p->pm_remote = 0;
	p->up = 0;
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return *s && !*end && !errno && *v >= lo && *v <= hi ? 0 : -1;
}

/*
 * The answer to "where NODE" (how to map its segment), "addr NODE" (the
 * address it published) or "host NODE" (its host's name in the
 * configuration, where bipload or a proxy started it): the verb and NODE,
 * then what was asked, or -E and why it cannot be given.
 */
static void about_node(int asker, char **f, int nf)
{
	const char what = f[0][0]; /* 'w'here, 'a'ddr or 'h'ost */
	const struct proc *p;
	struct rec r = { .len = 0 };
	const char *why = NULL;
	long node;
	int code = 0;

	if (nf != 2 || parse_long(f[1], 0, INT_MAX, &node) < 0) {
		fprintf(stderr, "bipload: node %d: a malformed %s: ignored\n", asker, f[0]);
		return;
	}
	put(&r, f[0]);
	put(&r, f[1]);
	p = node < nprocs ? &procs[node] : NULL;
	if (!p || p->abandoned)
		code = ESRCH, why = "no such node in the job";
	else if (what == 'h')
		code = 0; /* known from the start of its request: its siblings
			     ask before their drivers open */
	else if (!bipload_proc_running(p) || (p->up && !pm_open(p)))
		code = ESRCH, why = "its process has ended or left BIP";
	else if (what == 'a' && !p->blob)
		code = EAGAIN, why = "it has not published its address yet";
	else if (what == 'w' && !p->up)
		code = EAGAIN, why = "it has not started BIP yet";
	else if (what == 'w' && p->segfd < 0)
		code = ENOTSUP, why = "it holds no shared-memory segment";
	if (code) {
		char msg[128];

		putf(&r, "%ld", -code);
		snprintf(msg, sizeof(msg), "node %ld: %s", node, why);
		put(&r, msg);
	} else if (what == 'h') {
		put(&r, p->grown ? p->host : conf->nodes[node].host);
	} else if (what == 'a') {
		put(&r, p->blob);
	} else {
		/* A process of another host: its pid there, as it said (its
		 * peers there check it against its segment's header). */
		putf(&r, "%ld", p->pm_remote && p->up_pid ? p->up_pid : (long)p->pid);
		putf(&r, "%ld", p->segfd);
	}
	answer(asker, &r);
}

/* The answer to the pending request, and the end of the request. */
static void grow_answer(void)
{
	struct rec r = { .len = 0 };
	int i, failed = 0;

	for (i = 0; i < pending.total; i++)
		failed |= pending.codes[i] != 0;
	if (failed) {
		/* None of them runs: stopped, and not counted in the job's end. */
		for (i = pending.first; i < pending.first + pending.total && i < nprocs; i++) {
			procs[i].abandoned = 1;
			if (procs[i].proxy >= 0 && !procs[i].ended)
				bipload_remote_kill(i);
			else if (procs[i].proxy < 0 && procs[i].pid > 0)
				kill(procs[i].pid, SIGKILL);
		}
	}
	put(&r, "grew");
	putf(&r, "%ld", pending.first);
	putf(&r, "%ld", pending.total);
	putf(&r, "%ld", pending.room);
	for (i = 0; i < pending.total; i++)
		putf(&r, "%ld", pending.codes[i]);
	put(&r, failed ? pending.msg : "");
	answer(pending.asker, &r);
	if (pending.asker < 0)
		bipload_attach_grew(pending.asker, pending.first, pending.total, failed);
	if (!failed && !opt.quiet)
		info("nodes %d to %d joined the job (%s%s)", pending.first,
		     pending.first + pending.total - 1,
		     pending.asker < 0 ? "bipload --attach: " : "", pending.progs[0]);
	free(pending.codes);
	free(pending.progs);
	free(pending.record);
	pending.codes = NULL;
	pending.progs = NULL;
	pending.record = NULL;
	pending.active = 0;
}

/* Set process i's error (the first message is kept). */
static void grow_fail(int i, int code, const char *fmt, const char *a, const char *b)
{
	if (pending.codes[i])
		return;
	pending.codes[i] = code;
	if (!pending.msg[0])
		snprintf(pending.msg, sizeof(pending.msg), fmt, a, b);
}

/* Start the process of node k on this host, as host (a name of it that
 * lives as long as bipload): 0, or an errno (the message in pending). */
static int start_grown(int k, const char *host, char *const *argv, int argc, char *const *env,
		       int nenv, const char *wdir, const char *path, int app, int first,
		       int total)
{
	struct proc *p = &procs[k];
	int out[2], err[2], ep[2], child_pm, e = 0, i, io_in, io_out, io_err;
	char v[64];
	ssize_t n;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->node = k;
	p->app = 0;
	p->grown = 1;
	p->attached = pending.asker < 0;
	p->host = host;
	p->proxy = -1;
	p->local_index = k;
	p->file[0] = p->file[1] = -1;
	p->s[0] = (struct stream){ .fd = -1, .open = 1, .out = 1 };
	p->s[1] = (struct stream){ .fd = -1, .open = 1, .out = 2 };
	/* An attached command's processes write where it does, and the
	 * first reads its stdin (bipload_attach.c). */
	io_in = k == first ? bipload_attach_io(pending.asker, 0) : -1;
	io_out = bipload_attach_io(pending.asker, 1);
	io_err = bipload_attach_io(pending.asker, 2);
	if (pipe(out) < 0 || pipe(err) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	child_pm = bipload_grow_channel(k);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd0 = io_in >= 0 ? io_in : open("/dev/null", O_RDONLY), pm_hi, ep_hi;

		bipload_child_setup(bipload_pid);
		dup2(fd0, 0);
		dup2(io_out >= 0 ? io_out : out[1], 1);
		dup2(io_err >= 0 ? io_err : err[1], 2);
		/* Out of the way first: either may be 3 or 4 now. */
		pm_hi = fcntl(child_pm, F_DUPFD, 512);
		ep_hi = fcntl(ep[1], F_DUPFD, 512);
		dup2(pm_hi, 3);
		dup2(ep_hi, 4);
		fcntl(3, F_SETFD, 0);
		fcntl(4, F_SETFD, FD_CLOEXEC);
		for (i = 5; i < 1024; i++)
			close(i);
		for (i = 0; i < nenv; i++) {
			const char *eq = strchr(env[i], '=');
			char *name = eq ? strndup(env[i], (size_t)(eq - env[i])) : NULL;

			if (name)
				setenv(name, eq + 1, 1);
			free(name);
		}
		snprintf(v, sizeof(v), "%d", app);
		setenv("BIP_APPNUM", v, 1);
		snprintf(v, sizeof(v), "%d", k);
		setenv(BIP_ENV_NODE, v, 1);
		snprintf(v, sizeof(v), "%d:%d", first, total);
		setenv("BIP_GROUP", v, 1);
		setenv(BIP_ENV_JOBID, jobid, 1);
		setenv(BIP_ENV_SECRET, secret, 1);
		setenv(BIP_ENV_HOST, host, 1);
		snprintf(v, sizeof(v), "n%d%s", conf->n, opt.quiet ? "q" : "");
		setenv(BIP_ENV_OPTS, v, 1);
		/* With clusters, the job's file: its clusters and relays
		 * decide how the node reaches every other. */
		if (conf->nclusters && bipload_conf_path[0])
			setenv(BIP_ENV_CONF, bipload_conf_path, 1);
		setenv("BIP_PM_FD", "3", 1);
		bipload_grow_env();
		if (path && *path)
			setenv("PATH", path, 1);
		/* The record's fields go on: argv ends here. */
		{
			char **args = calloc((size_t)argc + 1, sizeof(char *));

			if (!args)
				_exit(127);
			memcpy(args, argv, (size_t)argc * sizeof(char *));
			/* A program named by a relative path is bipload's, wherever
			 * the process runs (wdir). */
			if (strchr(args[0], '/') && args[0][0] != '/') {
				char *abs = realpath(args[0], NULL);

				if (abs)
					args[0] = abs;
			}
			argv = args;
		}
		if (wdir && *wdir && chdir(wdir) < 0) {
			e = errno;
			if (write(4, &e, sizeof(e)) < 0)
				_exit(126);
			_exit(126);
		}
		execvp(argv[0], argv);
		e = errno;
		if (write(4, &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	close(ep[1]);
	close(child_pm);
	do
		n = read(ep[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	p->pid = pid;
	p->started = pid;
	p->s[0] = (struct stream){ .fd = out[0], .open = 1, .out = 1 };
	p->s[1] = (struct stream){ .fd = err[0], .open = 1, .out = 2 };
	set_cloexec_nonblock(out[0]);
	set_cloexec_nonblock(err[0]);
	for (i = 0; i < 2; i++) {
		if ((i ? io_err : io_out) < 0)
			continue;
		/* Nothing comes on that pipe: the process writes elsewhere. */
		close(p->s[i].fd);
		p->s[i] = (struct stream){ .fd = -1, .open = 0, .out = i + 1 };
	}
	if (n == (ssize_t)sizeof(e) && e) {
		p->abandoned = 1;
		return e;
	}
	return 0;
}

/* Start node k on the host of proxy x: its command goes in a GROW frame,
 * and the proxy's GREW says how it went (bipload_grow_started). */
static void start_remote(int k, int x, char *const *argv, int argc, char *const *env,
			 int nenv, const char *wdir, const char *path, int app, int first,
			 int total)
{
	struct proc *p = &procs[k];
	char v[64], *buf;
	size_t len = 2 * sizeof(v) + 4, at = 0;
	int i;

	memset(p, 0, sizeof(*p));
	p->node = k;
	p->grown = 1;
	p->attached = pending.asker < 0;
	p->host = bipload_remote_host(x);
	p->pm_fd = p->segfd = -1;
	p->pm_remote = 1;
	p->file[0] = p->file[1] = -1;
	p->s[0] = (struct stream){ .fd = -1, .open = 1, .out = 1 };
	p->s[1] = (struct stream){ .fd = -1, .open = 1, .out = 2 };
	/* Each field with its kind first (bipload_proxy.h's GROW). */
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 2;
	for (i = 0; i < nenv; i++)
		len += strlen(env[i]) + 2;
	len += (wdir ? strlen(wdir) : 0) + (path ? strlen(path) : 0) + 4;
	buf = malloc(len);
	if (!buf)
		die("out of memory");
	for (i = 0; i < argc; i++)
		put_tagged(buf, &at, 'a', argv[i]);
	for (i = 0; i < nenv; i++)
		put_tagged(buf, &at, 'e', env[i]);
	put_tagged(buf, &at, 'W', wdir ? wdir : "");
	put_tagged(buf, &at, 'P', path ? path : "");
	snprintf(v, sizeof(v), "%d", app);
	put_tagged(buf, &at, 'n', v);
	snprintf(v, sizeof(v), "%d:%d", first, total);
	put_tagged(buf, &at, 'g', v);
	bipload_remote_grow(x, k, buf, at);
	free(buf);
}

void bipload_grow_started(struct proc *p, int err)
{
	int i = p->node - pending.first;

	if (!pending.active || i < 0 || i >= pending.total)
		return;
	if (err) {
		char why[400];

		if (err < 1 || err >= 4096)
			err = EIO;
		snprintf(why, sizeof(why), "%s on host %s", strerror(err), p->host ? p->host : "?");
		p->abandoned = 1;
		grow_fail(i, err, "cannot run %s: %s", pending.progs[i], why);
	}
	bipload_grow_check();
}

/* Requests that came while another waited, in order. */
struct queued {
	struct queued *next;
	int asker;
	size_t len;
	char buf[];
};
static struct queued *q_head, **q_tail = &q_head;

static void queue(int asker, char **f, int nf)
{
	size_t len = (size_t)(f[nf - 1] + strlen(f[nf - 1]) + 1 - f[0]);
	struct queued *q = malloc(sizeof(*q) + len);

	if (!q)
		die("out of memory");
	q->next = NULL;
	q->asker = asker;
	q->len = len;
	memcpy(q->buf, f[0], len);
	*q_tail = q;
	q_tail = &q->next;
}

static int split(char *buf, size_t len, char **f, int max);

static void grow(int asker, char **f, int nf);

/* The next queued request, once none waits. */
static void dequeue(void)
{
	static char *f[PM_MSG_MAX / 2];

	while (!pending.active && q_head) {
		struct queued *q = q_head;
		int nf;

		q_head = q->next;
		if (!q_head)
			q_tail = &q_head;
		nf = split(q->buf, q->len, f, (int)(sizeof(f) / sizeof(f[0])));
		if (nf > 0 && (q->asker < 0 ? bipload_attach_open(q->asker) :
					      procs[q->asker].pm_fd >= 0))
			grow(q->asker, f, nf);
		else if (q->asker < 0)
			/* Its command went away while it waited: its slot is free. */
			bipload_attach_grew(q->asker, 0, 0, 1);
		free(q);
	}
}

static void grow(int asker, char **f, int nf)
{
	long ncmds;
	int at = 2, c, i, total = 0, first = nprocs, room = bipload_universe - nprocs, k;
	struct {
		long count, argc, nenv;
		int argv_at, env_at;
		const char *host, *wdir, *path;
		int proxy;      /* the proxy of its host, -1: this host, < -1: none */
		const char *local;  /* on this host: the name its nodes take */
	} *cmd = NULL;

	if (pending.active) {
		queue(asker, f, nf);
		return;
	}
	if (nf < 2 || strcmp(f[0], "grow") || parse_long(f[1], 1, 4096, &ncmds) < 0)
		goto malformed;
	cmd = calloc((size_t)ncmds, sizeof(*cmd));
	if (!cmd)
		die("out of memory");
	for (c = 0; c < ncmds; c++) {
		if (at + 5 > nf || parse_long(f[at], 1, 4096, &cmd[c].count) < 0)
			goto malformed;
		cmd[c].host = f[at + 1];
		cmd[c].wdir = f[at + 2];
		cmd[c].path = f[at + 3];
		if (parse_long(f[at + 4], 1, 4096, &cmd[c].argc) < 0)
			goto malformed;
		at += 5;
		cmd[c].argv_at = at;
		at += (int)cmd[c].argc;
		if (at >= nf || parse_long(f[at], 0, 4096, &cmd[c].nenv) < 0)
			goto malformed;
		at++;
		cmd[c].env_at = at;
		at += (int)cmd[c].nenv;
		if (at > nf)
			goto malformed;
		for (i = 0; i < cmd[c].nenv; i++) {
			const char *e = f[cmd[c].env_at + i], *eq = strchr(e, '=');

			if (!eq || !valid_name(e, (size_t)(eq - e)))
				goto malformed;
		}
		total += (int)cmd[c].count;
	}
	if (at != nf || total > 4096)
		goto malformed;
	pending.active = 1;
	pending.asker = asker;
	pending.first = first;
	pending.total = total;
	pending.room = room > 0 ? room : 0;
	pending.msg[0] = '\0';
	pending.deadline = now_s() + grow_timeout();
	pending.codes = calloc((size_t)total, sizeof(int));
	pending.progs = calloc((size_t)total, sizeof(char *));
	/* The fields point into the record, which goes with the request. */
	pending.record = malloc((size_t)(f[nf - 1] + strlen(f[nf - 1]) + 1 - f[0]));
	if (!pending.codes || !pending.progs || !pending.record)
		die("out of memory");
	memcpy(pending.record, f[0], (size_t)(f[nf - 1] + strlen(f[nf - 1]) + 1 - f[0]));
	for (c = 0, k = 0; c < ncmds; c++)
		for (i = 0; i < cmd[c].count; i++)
			pending.progs[k++] = pending.record + (f[cmd[c].argv_at] - f[0]);
	if (total > room) {
		for (i = 0; i < total; i++)
			pending.codes[i] = ENOSPC;
		snprintf(pending.msg, sizeof(pending.msg), "%d processes asked, the job has room "
			 "for %d more node%s (bipload --universe)", total, room > 0 ? room : 0,
			 room == 1 ? "" : "s");
		goto answer_now;
	}
	/* Each command's host: bipload's (none named, or a name of it), or
	 * a host of the job's, through its proxy. */
	for (c = 0, k = 0; c < ncmds; c++) {
		const char *host = cmd[c].host[0] ? cmd[c].host : bipload_grow_host();

		cmd[c].proxy = bipload_remote_proxy_of(host);
		cmd[c].local = conf->nodes[grow_host_node].host;
		if (conf->nclusters) {
			/* Clusters: the host decides the cluster, so it must be
			 * one of the job's, and the nodes keep its name. */
			int j = cluster_host(host);

			if (j < 0)
				cmd[c].proxy = -4;
			else
				cmd[c].local = conf->nodes[j].host;
		}
		if (cmd[c].proxy == -1 && (procs[grow_host_node].proxy >= 0 ||
					   strcmp(host, bipload_grow_host())) &&
		    !bip_host_is_local(host)) {
			/* A host of the list where no node runs yet: its
			 * proxy starts now (over a driver that crosses hosts). */
			cmd[c].proxy = nic_is("ofi") || nic_is("") ? bipload_remote_late(host) : -1;
			if (cmd[c].proxy < 0)
				cmd[c].proxy = -3;
		}
		for (i = 0; i < cmd[c].count && cmd[c].proxy < -1; i++)
			grow_fail(k + i, EHOSTUNREACH, cmd[c].proxy == -2 ?
				  "host %s: its proxy has ended%s" : cmd[c].proxy == -4 ?
				  "host %s: in no cluster of the job (nodes join on the hosts of "
				  "its clusters)%s" :
				  "host %s: not a host of the job (its nodes', or --host's and "
				  "--hostfile's)%s", host, "");
		k += (int)cmd[c].count;
	}
	for (i = 0; i < total; i++)
		if (pending.codes[i])
			goto answer_now;
	/* Every node of the request gets its number now, started or not. */
	for (c = 0, k = 0; c < ncmds; c++) {
		for (i = 0; i < cmd[c].count; i++, k++) {
			int e = 0;

			if (cmd[c].proxy >= 0)
				start_remote(first + k, cmd[c].proxy, &f[cmd[c].argv_at],
					     (int)cmd[c].argc, (char *const *)&f[cmd[c].env_at],
					     (int)cmd[c].nenv, cmd[c].wdir, cmd[c].path, c, first,
					     total);
			else
				e = start_grown(first + k, cmd[c].local, &f[cmd[c].argv_at],
						(int)cmd[c].argc, (char *const *)&f[cmd[c].env_at],
						(int)cmd[c].nenv, cmd[c].wdir, cmd[c].path, c, first,
						total);
			nprocs = first + k + 1;
			if (e)
				grow_fail(k, e, "cannot run %s: %s", f[cmd[c].argv_at],
					  strerror(e));
		}
	}
	for (i = 0; i < total; i++)
		if (pending.codes[i])
			goto answer_now;
	free(cmd);
	return;

malformed:
	if (asker < 0) {
		/* An attached command waits for its answer: it gets one. */
		struct rec r = { .len = 0 };

		put(&r, "grew");
		put(&r, "0");
		put(&r, "0");
		put(&r, "0");
		put(&r, "a malformed request");
		answer(asker, &r);
		bipload_attach_grew(asker, 0, 0, 1);
	} else {
		fprintf(stderr, "bipload: node %d: a malformed grow request: ignored\n", asker);
	}
	free(cmd);
	return;

answer_now:
	free(cmd);
	grow_answer();
}

/* The argv of a grow request's record ends where its fields do: the
 * record's fields are rewritten to NUL-ended strings in place. */
static int split(char *buf, size_t len, char **f, int max)
{
	size_t at = 0;
	int n = 0;

	if (!len || buf[len - 1] != '\0')
		return -1;
	while (at < len) {
		if (n == max)
			return -1;
		f[n++] = buf + at;
		at += strlen(buf + at) + 1;
	}
	return n;
}

int bipload_grow_pollfds(struct pollfd *pfd, int *nodes)
{
	int i, n = 0;

	for (i = 0; i < nprocs; i++) {
		if (procs[i].pm_fd < 0)
			continue;
		pfd[n] = (struct pollfd){ .fd = procs[i].pm_fd, .events = POLLIN };
		nodes[n++] = i;
	}
	return n;
}

/* One record of p's channel (buf: len bytes, split in place). */
static void record(struct proc *p, char *buf, size_t len)
{
	static char *f[PM_MSG_MAX / 2];
	int nf = split(buf, len, f, (int)(sizeof(f) / sizeof(f[0])));
	long v;


	if (nf < 1) {
		fprintf(stderr, "bipload: node %d: a malformed record on its channel: ignored\n",
			p->node);
	} else if (!strcmp(f[0], "up") && (nf == 2 || nf == 3) &&
		   parse_long(f[1], -1, 1 << 20, &v) == 0 &&
		   (nf == 2 || parse_long(f[2], 1, INT_MAX, &p->up_pid) == 0)) {
		p->up = 1;
		p->segfd = (int)v;
	} else if (!strcmp(f[0], "blob") && nf == 2 && strlen(f[1]) <= 2048 &&
		   strlen(f[1]) % 2 == 0 && strspn(f[1], "0123456789abcdef") == strlen(f[1])) {
		free(p->blob);
		p->blob = strdup(f[1]);
		if (!p->blob)
			die("out of memory");
	} else if (!strcmp(f[0], "addr") || !strcmp(f[0], "where") || !strcmp(f[0], "host")) {
		about_node(p->node, f, nf);
	} else if (!strcmp(f[0], "grow")) {
		grow(p->node, f, nf);
	} else {
		fprintf(stderr, "bipload: node %d: an unknown request on its channel: ignored\n",
			p->node);
	}
}

void bipload_grow_events(const struct pollfd *pfd, const int *nodes, int n)
{
	static char buf[PM_MSG_MAX + 1];
	int i;

	for (i = 0; i < n; i++) {
		struct proc *p = &procs[nodes[i]];
		ssize_t len;

		if (!pfd[i].revents || p->pm_fd < 0)
			continue;
		len = recv(p->pm_fd, buf, PM_MSG_MAX, MSG_DONTWAIT);
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (len <= 0)
			pm_gone(p);
		else
			record(p, buf, (size_t)len);
	}
	bipload_grow_check();
}

void bipload_grow_attach(int asker, char *rec, size_t len)
{
	static char *f[PM_MSG_MAX / 2];
	int nf = split(rec, len, f, (int)(sizeof(f) / sizeof(f[0])));

	if (nf < 1)
		f[0] = (char *)"", nf = 1;
	grow(asker, f, nf);
	bipload_grow_check();
}

void bipload_grow_record(struct proc *p, const char *rec, size_t len)
{
	static char buf[PM_MSG_MAX + 1];

	if (!rec) {
		pm_gone(p);
	} else if (len <= PM_MSG_MAX) {
		memcpy(buf, rec, len);
		record(p, buf, len);
	}
	bipload_grow_check();
}

void bipload_grow_check(void)
{
	int i, waiting = 0;

	if (!pending.active) {
		dequeue();
		return;
	}
	for (i = 0; i < pending.total; i++) {
		struct proc *p = &procs[pending.first + i];

		if (pending.codes[i] || p->up)
			continue;
		if (!bipload_proc_running(p)) {
			char how_[64];

			if (WIFSIGNALED(p->status))
				snprintf(how_, sizeof(how_), "killed by signal %d", WTERMSIG(p->status));
			else
				snprintf(how_, sizeof(how_), "exit status %d", WEXITSTATUS(p->status));
			p->abandoned = 1;
			grow_fail(i, ECHILD, "a new process ended before it started BIP (%s%s)",
				  how_, "");
			continue;
		}
		if (now_s() > pending.deadline) {
			char secs[32];

			snprintf(secs, sizeof(secs), "%.0f", grow_timeout());
			grow_fail(i, ETIMEDOUT, "a new process did not start BIP within %s s "
				  "(BIP_GROW_TIMEOUT)%s", secs, "");
			continue;
		}
		waiting = 1;
	}
	for (i = 0; i < pending.total; i++)
		if (pending.codes[i])
			waiting = 0;
	if (!waiting)
		grow_answer();
	dequeue();
}

void bipload_grow_stop(void)
{
	int i;

	/* A request that waits when the job stops is answered: its asker is
	 * being stopped too, but not left blocked if it is not. */
	if (pending.active) {
		for (i = 0; i < pending.total; i++)
			grow_fail(i, ECANCELED, "the job is stopping%s%s", "", "");
		grow_answer();
	}
	for (i = 0; i < nprocs; i++) {
		pm_gone(&procs[i]);
		free(procs[i].blob);
		procs[i].blob = NULL;
	}
	while (q_head) {
		struct queued *q = q_head;

		q_head = q->next;
		free(q);
	}
	q_tail = &q_head;
}
