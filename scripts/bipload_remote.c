/* SPDX-License-Identifier: MIT */
/*
 * bipload_remote.c - the processes of other hosts (bipload.h), through one
 * proxy per host (bipload-proxy; bipload_proxy.h has the protocol).
 *
 * The nodes are grouped by the host name of the configuration (sorted once:
 * O(N log N)); a host that is this one runs its nodes here
 * (bipload_boot.c), every other host gets a proxy:
 *
 *   rsh   one remote shell per host, RSH HOST bipload-proxy, the channel on
 *         its stdin and stdout; its stderr is forwarded as it comes.
 *   srun  inside a Slurm allocation (unless the user gave a remote shell),
 *         every host's proxy, this host's too, from one srun step of one
 *         task per host; bipload listens for their connections on an
 *         ephemeral port of every interface, tells the proxies the
 *         addresses of this host that reach theirs, and takes one
 *         connection per host once both sides have proved the secret.
 *         srun's own output is forwarded as it comes.
 *
 * A job that grows may also start the proxy of a spare host of the host
 * list while it runs (bipload_remote_late, below).
 *
 * bipload's work per remote process is O(1): it polls a channel per host,
 * not pipes per process, and a frame names its node.  Each proxy gets the
 * job description with its own nodes only.
 *
 * Failures, and how they are told (one line per host):
 *   - the remote shell (or srun) ends before the proxy said hello: the
 *     command and its status;
 *   - the proxy has not said hello after BIPLOAD_START_TIMEOUT seconds: a
 *     host that accepts the connection and then hangs;
 *   - the channel closes before the proxy's DONE (the proxy or its host
 *     died, the connection was lost): the nodes not yet ended are lost;
 *   - a frame that is not what the protocol allows: the channel is closed,
 *     and the proxy stops its processes.
 * A stopped proxy that has not ended 2 x BIPLOAD_GRACE + 10 s after its
 * first stop has its remote shell killed (or its connection dropped).
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bipload.h"
#include "bipload_monitor.h"
#include "bipload_proxy.h"
#include "conf.h"

extern char **environ;

/* Connections waiting for their proof at once (srun). */
#define PENDING_MAX 64
/* Seconds a connection has to prove itself (srun). */
#define PROOF_TIME 10.0

/* Lines of a remote shell's or srun's own output, forwarded whole. */
struct textfwd {
	int fd;                 /* -1 at its end */
	int out;                /* 1 or 2 */
	size_t len;
	char buf[4096];
};

struct proxy {
	const char *host;
	int *nodes;             /* ascending */
	int nnodes;
	struct bipload_chan chan;
	int attached;           /* the channel exists (srun: proved) */
	int ready;              /* rsh: the marker came; srun: as attached */
	int hello;
	int finished;           /* its channel is closed: done or lost */
	int done;
	int broken;             /* it sent a broken frame */
	int start_late;
	int late;               /* started while the job runs, for new nodes */
	double late_since;      /* then */
	int reported;
	int stopped;
	double kill_at;         /* give up on it then (0: not stopping) */
	long pid_there;
	/* rsh */
	pid_t rsh_pid;          /* 0 before it starts and once reaped */
	int rsh_reaped;
	int rsh_status;
	struct textfwd err;
	char **argv;
	char *words;
	char *quoted;           /* the proxy's path as one word for sh */
	char *cmd;
	char *job;              /* the job description */
	size_t job_len;
	/* node 0's input, when node 0 is here */
	size_t stdin_unacked;
	int stdin_closed;
};

enum slot_kind { SLOT_CHAN_IN, SLOT_CHAN_OUT, SLOT_ERR, SLOT_LISTEN, SLOT_PENDING, SLOT_SRUN };

struct slot {
	enum slot_kind kind;
	int index;
};

struct pending {
	int fd;
	double deadline;
	unsigned char hello[BIPLOAD_AUTH_HELLO];
	unsigned char in[BIPLOAD_AUTH_JOIN];
	size_t have;
	char peer[64];
};

static struct proxy *proxies;
static int nproxies;
/* Room for the proxies of the spare hosts too, made once: a proxy is
 * added while frames of others are handled, so the array never moves. */
static int proxy_cap;
static struct slot *slots;
static char proxy_path[PATH_MAX];

/* srun */
static int step;
static pid_t srun_pid;
static int srun_reaped, srun_status;
static struct textfwd srun_out[2] = { { .fd = -1 }, { .fd = -1 } };
static char **srun_argv;
static char *srun_cmd;
static int listen_fd = -1;
static struct pending pend[PENDING_MAX];
static int npend;
static unsigned char key[64];
static int keylen;
static double srun_kill_at;
static int listen_port;         /* the listener's, for late proxies' steps */

/* --- helpers --- */

static void *grow(void *p, int n, size_t size)
{
	if (bip_array_grow(&p, n, size) < 0)
		die("out of memory");
	return p;
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = 2 * b->cap + n + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			die("out of memory");
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* A record of the job description: kind, then text, NUL-terminated. */
static void rec(struct sbuf *b, char kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void rec(struct sbuf *b, char kind, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	sb_add(b, &kind, 1);
	sb_add(b, text, (size_t)n + 1);
	free(text);
}

/* s as one word for sh: 'it'\''s' */
static void sb_quote(struct sbuf *b, const char *s)
{
	sb_str(b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			sb_str(b, "'\\''");
		else
			sb_add(b, s, 1);
	}
	sb_str(b, "'");
}

/* Words without characters special to sh are shown as they are. */
static void sb_word(struct sbuf *b, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_@%+=:,./-") == strlen(s))
		sb_str(b, s);
	else
		sb_quote(b, s);
}

static char *command_text(char *const *argv)
{
	struct sbuf b = { 0 };
	int i;

	for (i = 0; argv[i]; i++) {
		if (i)
			sb_str(&b, " ");
		sb_word(&b, argv[i]);
	}
	return b.p;
}

static void how(char *buf, size_t len, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
}

static void text_feed(struct textfwd *t, const char *data, size_t n)
{
	while (n--) {
		char c = *data++;

		t->buf[t->len++] = c;
		if (c == '\n' || t->len == sizeof(t->buf) - 1) {
			if (c != '\n')
				t->buf[t->len++] = '\n';
			write_all(t->out, t->buf, t->len);
			t->len = 0;
		}
	}
}

static void text_end(struct textfwd *t)
{
	if (t->len) {
		t->buf[t->len++] = '\n';
		write_all(t->out, t->buf, t->len);
	}
	t->len = 0;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* What is there now, then the end: a descendant of a remote shell that has
 * ended (an ssh control master) may hold its pipe open for ever. */
static void text_drain(struct textfwd *t)
{
	char buf[4096];
	ssize_t n;

	while (t->fd >= 0 && (n = read(t->fd, buf, sizeof(buf))) > 0)
		text_feed(t, buf, (size_t)n);
	text_end(t);
}

static void text_read(struct textfwd *t)
{
	char buf[4096];
	ssize_t n = read(t->fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		text_end(t);
		return;
	}
	text_feed(t, buf, (size_t)n);
}

/* --- grouping --- */

static int by_host(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	int c = strcmp(conf->nodes[x].host, conf->nodes[y].host);

	return c ? c : x - y;
}

static int by_first_node(const void *a, const void *b)
{
	return ((const struct proxy *)a)->nodes[0] - ((const struct proxy *)b)->nodes[0];
}

/* The job description of proxy x. */
static void job_description(struct proxy *x, const char *conf_path, const char *cwd)
{
	static const char *const own[] = { BIP_ENV_NODE, BIP_ENV_JOBID, BIP_ENV_HOST,
					   BIP_ENV_OPTS, BIP_ENV_CONF, "BIP_APPNUM",
					   "BIP_UNIVERSE", "BIP_GROW_HOST", "BIP_GROW_SPANS", "BIP_PM_FD",
					   "BIP_GROUP" };
	struct sbuf b = { 0 };
	char **e;
	size_t k;
	int i, a;

	if (!step)
		rec(&b, 'S', "%s", secret);
	rec(&b, 'C', "%s", cwd);
	rec(&b, 'G', "%g", grace);
	rec(&b, 'B', "%d", opt.bind_core);
	rec(&b, 'H', "%s", x->host);
	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : 0;
		int mine = 0;

		if (!eq || !valid_name(*e, len) || !bipload_carried(*e, len))
			continue;
		for (k = 0; k < sizeof(own) / sizeof(own[0]); k++)
			mine |= strlen(own[k]) == len && !strncmp(*e, own[k], len);
		if (!mine)
			rec(&b, 'E', "%s", *e);
	}
	rec(&b, 'E', "%s=%s", BIP_ENV_JOBID, jobid);
	rec(&b, 'E', "%s=%s", BIP_ENV_HOST, x->host);
	rec(&b, 'E', "%s=n%d%s", BIP_ENV_OPTS, conf->n, opt.quiet ? "q" : "");
	rec(&b, 'E', "%s=%s", BIP_ENV_CONF, conf_path);
	if (bipload_monitor_on())
		rec(&b, 'M', "%d", bipload_room());
	if (bipload_universe > 0) {
		/* Room to grow: a channel for every process (bipload_grow.c). */
		rec(&b, 'J', "1");
		rec(&b, 'E', "BIP_UNIVERSE=%d", bipload_universe);
		rec(&b, 'E', "BIP_GROW_HOST=%s", bipload_grow_host());
		if (bipload_grow_spans())
			rec(&b, 'E', "BIP_GROW_SPANS=1");
	}
	for (a = 0; a < opt.napps; a++) {
		const struct bipload_app *app = &opt.apps[a];

		rec(&b, 'A', "%d", a);
		for (i = 0; app->argv[i]; i++)
			rec(&b, 'a', "%s", app->argv[i]);
		for (i = 0; i < app->nenv; i++)
			rec(&b, 'e', "%s", app->env[i]);
	}
	for (i = 0; i < x->nnodes; i++)
		rec(&b, 'N', "%d %d %d", x->nodes[i], procs[x->nodes[i]].app,
		    procs[x->nodes[i]].local_index);
	x->job = b.p;
	x->job_len = b.len;
}

/* ssh and rsh hand their words, joined, to the remote user's shell; other
 * remote shells (ip netns exec, env, sudo) run their arguments. */
static int rsh_joins_words(const char *word0)
{
	const char *base = strrchr(word0, '/');
	size_t n;

	base = base ? base + 1 : word0;
	n = strlen(base);
	return (n >= 3 && !strcmp(base + n - 3, "ssh")) || (n >= 3 && !strcmp(base + n - 3, "rsh")) ||
	       !strcmp(base, "remsh");
}

/* The remote shell's command for proxy x: RSH HOST bipload-proxy. */
static void rsh_command(struct proxy *x)
{
	char *words = strdup(opt.rsh), *save = NULL, *w;
	int n = 0;

	x->argv = calloc(strlen(opt.rsh) + 4, sizeof(char *));
	if (!words || !x->argv)
		die("out of memory");
	for (w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		x->argv[n++] = w;
	if (!n)
		die("the remote shell (--rsh or BIP_RSH) is empty");
	x->argv[n++] = (char *)x->host;
	if (rsh_joins_words(x->argv[0])) {
		struct sbuf q = { 0 };

		sb_quote(&q, proxy_path);
		x->quoted = q.p;
		x->argv[n++] = q.p;
	} else {
		x->argv[n++] = proxy_path;
	}
	x->words = words;
	x->cmd = command_text(x->argv);
}

/* Kept for the job descriptions, made at the start (after bipload_grow.c
 * has decided whether the job may grow). */
static const char *job_conf_path, *job_cwd;

void bipload_remote_prepare(const char *conf_path, const char *cwd)
{
	int *sorted = malloc(((size_t)nprocs + 1) * sizeof(int));
	int i, k, nlocal = 0;

	if (!sorted)
		die("out of memory");
	step = bipload_slurm_step();
	for (i = 0; i < nprocs; i++)
		sorted[i] = i;
	qsort(sorted, (size_t)nprocs, sizeof(int), by_host);
	for (i = 0; i < nprocs; i = k) {
		const char *host = conf->nodes[sorted[i]].host;
		int local = !step && !bipload_slurm_all_remote() && bip_host_is_local(host);
		struct proxy *x;

		for (k = i; k < nprocs && !strcmp(conf->nodes[sorted[k]].host, host); k++)
			procs[sorted[k]].proxy = local ? -1 : nproxies;
		if (local)
			continue;
		proxies = grow(proxies, nproxies + 1, sizeof(*proxies));
		x = &proxies[nproxies++];
		memset(x, 0, sizeof(*x));
		x->host = host;
		x->nnodes = k - i;
		x->nodes = malloc((size_t)x->nnodes * sizeof(int));
		if (!x->nodes)
			die("out of memory");
		memcpy(x->nodes, sorted + i, (size_t)x->nnodes * sizeof(int));
		bipload_chan_init(&x->chan, -1, -1);
		x->err.fd = -1;
		x->err.out = 2;
	}
	free(sorted);
	if (nproxies)
		qsort(proxies, (size_t)nproxies, sizeof(*proxies), by_first_node);
	/* A proxy for each spare host may come later (bipload_remote_late). */
	proxy_cap = nproxies + bipload_nspare;
	if (proxy_cap > nproxies) {
		proxies = realloc(proxies, (size_t)proxy_cap * sizeof(*proxies));
		if (!proxies)
			die("out of memory");
		memset(proxies + nproxies, 0, (size_t)(proxy_cap - nproxies) * sizeof(*proxies));
	}
	for (i = 0; i < nproxies; i++) {
		for (k = 0; k < proxies[i].nnodes; k++) {
			procs[proxies[i].nodes[k]].proxy = i;
			procs[proxies[i].nodes[k]].local_index = k;
		}
	}
	/* This host's nodes, in node order, for --bind-to core. */
	for (i = 0; i < nprocs; i++)
		if (procs[i].proxy < 0)
			procs[i].local_index = nlocal++;
	if (!proxy_cap)
		return;
	bipload_find_helper("BIPLOAD_PROXY", "bipload-proxy", NULL, proxy_path,
			    sizeof(proxy_path));
	job_conf_path = conf_path;
	job_cwd = cwd;
	for (i = 0; i < nproxies; i++)
		if (!step)
			rsh_command(&proxies[i]);
	slots = calloc((size_t)bipload_remote_maxfds() + 1, sizeof(*slots));
	if (!slots)
		die("out of memory");
}

/* --- starting --- */

static void rsh_start(struct proxy *x)
{
	int in[2], out[2], err[2], i;
	pid_t pid;

	if (pipe(in) < 0 || pipe(out) < 0 || pipe(err) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		bipload_child_setup(bipload_pid);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (i = 3; i < 1024; i++)
			close(i);
		execvp(x->argv[0], x->argv);
		fprintf(stderr, "bipload: host %s: cannot run the remote shell %s: %s\n", x->host,
			x->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	set_cloexec_nonblock(in[1]);
	set_cloexec_nonblock(out[0]);
	set_cloexec_nonblock(err[0]);
	x->rsh_pid = pid;
	x->err.fd = err[0];
	bipload_chan_init(&x->chan, out[0], in[1]);
	x->attached = 1;
	if (bipload_chan_put(&x->chan, BPF_JOB, 0, x->job, x->job_len, NULL, 0) < 0)
		die("out of memory");
}

/* The addresses of this host that reach the proxies' hosts, as ADDR:PORT
 * words joined by commas, routed addresses first. */
static char *reach_list(int port)
{
	struct sbuf b = { 0 };
	char seen[64][INET_ADDRSTRLEN];
	int nseen = 0, i, k, pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < nproxies && nseen < 64; i++) {
			struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM };
			struct addrinfo *ai = NULL;
			struct sockaddr_in me;
			socklen_t sl = sizeof(me);
			char addr[INET_ADDRSTRLEN], word[INET_ADDRSTRLEN + 8];
			int fd, loop;

			if (getaddrinfo(proxies[i].host, "9", &hints, &ai) != 0)
				continue;
			fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			/* A datagram socket's connect only routes: the source
			 * address the kernel picks is the one that reaches it. */
			if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
			    getsockname(fd, (struct sockaddr *)&me, &sl) < 0) {
				if (fd >= 0)
					close(fd);
				freeaddrinfo(ai);
				continue;
			}
			close(fd);
			freeaddrinfo(ai);
			inet_ntop(AF_INET, &me.sin_addr, addr, sizeof(addr));
			loop = (ntohl(me.sin_addr.s_addr) >> 24) == 127;
			if (loop != pass)
				continue;
			for (k = 0; k < nseen && strcmp(seen[k], addr); k++)
				;
			if (k < nseen)
				continue;
			snprintf(seen[nseen++], INET_ADDRSTRLEN, "%s", addr);
			snprintf(word, sizeof(word), "%s%s:%d", b.len ? "," : "", addr, port);
			sb_str(&b, word);
		}
	}
	if (!b.len)
		die("inside the Slurm allocation: no address of this host reaches the allocation's "
		    "nodes (%s ...): cannot start the proxies", proxies[0].host);
	return b.p;
}

/* Run an srun step of argv, its output and errors to out and err (closed
 * here): its pid.  The proxies take the secret from srun's environment,
 * which Slurm gives the step's tasks (--export=ALL). */
static pid_t srun_fork(char *const *argv, int out, int err)
{
	pid_t pid = fork();
	int i;

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		bipload_child_setup(bipload_pid);
		dup2(open("/dev/null", O_RDONLY), 0);
		dup2(out, 1);
		dup2(err, 2);
		for (i = 3; i < 1024; i++)
			close(i);
		setenv(BIP_ENV_SECRET, secret, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "bipload: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(out);
	if (err != out)
		close(err);
	return pid;
}

static void srun_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);
	char **hosts = malloc((size_t)nproxies * sizeof(char *));
	char *proxy_argv[4], *list;
	int out[2], err[2], one = 1, i;
	pid_t pid;

	if (!hosts)
		die("out of memory");
	keylen = bipload_auth_key(secret, key, sizeof(key));
	if (keylen < 0)
		die("%s must be 32 to 128 hex digits, an even number of them, for the proxies "
		    "inside the allocation", BIP_ENV_SECRET);
	if (sodium_init() < 0)
		die("libsodium cannot start");
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (listen_fd < 0 || setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 128) < 0 || getsockname(listen_fd, (struct sockaddr *)&sa, &sl) < 0)
		die("cannot listen for the proxies: %s", strerror(errno));
	listen_port = ntohs(sa.sin_port);
	list = reach_list(listen_port);
	for (i = 0; i < nproxies; i++)
		hosts[i] = (char *)proxies[i].host;
	proxy_argv[0] = proxy_path;
	proxy_argv[1] = "--connect";
	proxy_argv[2] = list;
	proxy_argv[3] = NULL;
	srun_argv = calloc(40, sizeof(char *));
	if (!srun_argv)
		die("out of memory");
	bipload_slurm_command(srun_argv, hosts, nproxies, proxy_argv);
	srun_cmd = command_text(srun_argv);
	if (pipe(out) < 0 || pipe(err) < 0)
		die("pipe: %s", strerror(errno));
	pid = srun_fork(srun_argv, out[1], err[1]);
	set_cloexec_nonblock(out[0]);
	set_cloexec_nonblock(err[0]);
	srun_pid = pid;
	srun_out[0] = (struct textfwd){ .fd = out[0], .out = 1 };
	srun_out[1] = (struct textfwd){ .fd = err[0], .out = 2 };
	free(hosts);
}

void bipload_remote_start(void)
{
	int i;

	if (!nproxies)
		return;
	for (i = 0; i < nproxies; i++)
		job_description(&proxies[i], job_conf_path, job_cwd);
	if (step) {
		srun_start();
		return;
	}
	for (i = 0; i < nproxies; i++)
		rsh_start(&proxies[i]);
}

/* --- the channels --- */

/* The channel is closed: what has not ended is lost. */
static void finish(struct proxy *x)
{
	int i, k;

	if (x->finished)
		return;
	x->finished = 1;
	bipload_chan_close(&x->chan);
	for (i = 0; i < x->nnodes; i++) {
		struct proc *p = &procs[x->nodes[i]];

		/* A new process the proxy never said it started (its remote
		 * shell failed, say): the host cannot be reached. */
		if (p->grown && !p->remote_pid && !p->ended) {
			p->remote_pid = -1;
			bipload_grow_started(p, EHOSTUNREACH);
		}

		for (k = 0; k < 2; k++)
			if (p->s[k].open)
				bipload_stream_end(p, &p->s[k]);
		p->ended = 1;
	}
	if (x->rsh_pid && !x->kill_at)
		x->kill_at = now_s() + 2 * grace + REMOTE_SLACK;
}

static int proxy_has(const struct proxy *x, uint32_t node)
{
	return node < (uint32_t)nprocs && procs[node].proxy == x - proxies;
}

static void broken(struct proxy *x, const struct bipload_frame *f, const char *why)
{
	fprintf(stderr, "bipload: host %s: the proxy sent a broken frame (type %u, node %u, %u "
		"bytes: %s): its processes are lost\n", x->host, f->type, f->node, f->len, why);
	x->broken = 1;
	/* Nothing more from it is believed: its remote shell goes at once (a
	 * proxy stops its processes when its channel closes). */
	if (x->rsh_pid) {
		kill(-x->rsh_pid, SIGKILL);
		kill(x->rsh_pid, SIGKILL);
	}
	finish(x);
}

static void frame(struct proxy *x, const struct bipload_frame *f)
{
	struct proc *p = proxy_has(x, f->node) ? &procs[f->node] : NULL;
	uint32_t v;
	int k;

	if (!x->hello && f->type != BPF_HELLO) {
		broken(x, f, "not its hello");
		return;
	}
	switch (f->type) {
	case BPF_HELLO:
		if (x->hello || f->len < 4 || f->len > 4 + BIP_CONF_HOSTLEN) {
			broken(x, f, "a second or malformed hello");
			return;
		}
		x->hello = 1;
		x->pid_there = bipload_get32(f->data);
		return;
	case BPF_STARTED:
		if (!p || f->len != 4 || p->remote_pid || p->ended) {
			broken(x, f, "a start out of place");
			return;
		}
		v = bipload_get32(f->data);
		p->remote_pid = v ? (long)v : -1;
		return;
	case BPF_OUT:
		if (!p || f->len < 1 || (f->data[0] != 1 && f->data[0] != 2) ||
		    !p->s[f->data[0] - 1].open) {
			broken(x, f, "output of no open stream");
			return;
		}
		k = f->data[0] - 1;
		if (f->len == 1)
			bipload_stream_end(p, &p->s[k]);
		else
			bipload_stream_feed(p, &p->s[k], (const char *)f->data + 1, f->len - 1);
		return;
	case BPF_EXIT:
		if (!p || f->len != 4 || p->ended) {
			broken(x, f, "an end out of place");
			return;
		}
		p->status = (int)bipload_get32(f->data);
		p->exited = 1;
		p->ended = 1;
		return;
	case BPF_STDIN_ACK:
		v = f->len == 8 ? bipload_get32(f->data) : 0;
		if (f->len != 8 || procs[0].proxy != x - proxies || v > x->stdin_unacked) {
			broken(x, f, "an acknowledgement of input not sent");
			return;
		}
		x->stdin_unacked -= v;
		if (bipload_get32(f->data + 4))
			x->stdin_closed = 1;
		return;
	case BPF_DONE:
		if (f->len) {
			broken(x, f, "a long goodbye");
			return;
		}
		x->done = 1;
		finish(x);
		return;
	case BPF_PMREC:
		if (!p || !p->pm_remote || f->len > BIPLOAD_PM_MAX) {
			broken(x, f, "a record of no open channel");
			return;
		}
		bipload_grow_record(p, f->len ? (const char *)f->data : NULL, f->len);
		return;
	case BPF_MONITOR:
		if (!p || bipload_monitor_remote((int)f->node, f->data, f->len) < 0)
			broken(x, f, "a monitor page of no node of its, or malformed");
		return;
	case BPF_GREW:
		if (!p || !p->grown || f->len != 8 || p->remote_pid) {
			broken(x, f, "a new process out of place");
			return;
		}
		v = bipload_get32(f->data);
		p->remote_pid = v ? (long)v : -1;
		bipload_grow_started(p, (int)bipload_get32(f->data + 4));
		return;
	default:
		broken(x, f, "an unknown type");
	}
}

/* rsh: what comes before the proxy's marker is the remote shell's. */
static void find_marker(struct proxy *x, int at_end)
{
	struct bipload_chan *c = &x->chan;
	const char *m = BIPLOAD_PROXY_READY, *base = (const char *)c->in + c->in_off;
	size_t have = c->in_len - c->in_off, mlen = strlen(m);
	const char *hit = memmem(base, have, m, mlen);
	const char *nl;
	size_t upto;

	if (hit) {
		text_feed(&x->err, base, (size_t)(hit - base));
		c->in_off += (size_t)(hit - base) + mlen;
		x->ready = 1;
		return;
	}
	/* Whole lines go now; a piece that may begin the marker waits. */
	nl = have ? memrchr(base, '\n', have) : NULL;
	upto = at_end || have > 65536 ? have : nl ? (size_t)(nl - base) + 1 : 0;
	text_feed(&x->err, base, upto);
	c->in_off += upto;
}

static void chan_in(struct proxy *x)
{
	struct bipload_frame f;
	ssize_t r = bipload_chan_read(&x->chan);
	int rc;

	if (r > 0 && !x->ready)
		find_marker(x, 0);
	while (r > 0 && x->ready && !x->finished && (rc = bipload_chan_next(&x->chan, &f)) != 0) {
		if (rc < 0) {
			broken(x, &(struct bipload_frame){ .len = BIPLOAD_FRAME_MAX }, "too long");
			return;
		}
		frame(x, &f);
	}
	if (r <= 0 && !x->finished) {
		if (!x->ready)
			find_marker(x, 1);
		finish(x);
	}
}

/* --- srun: the proxies connect back --- */

static void pending_drop(int i, const char *why)
{
	if (why)
		fprintf(stderr, "bipload: dropped a connection from %s: %s\n", pend[i].peer, why);
	close(pend[i].fd);
	pend[i] = pend[--npend];
}

static void pending_accept(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char addr[INET_ADDRSTRLEN];
	struct pending *c;
	int fd = accept4(listen_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof(addr));
	if (npend == PENDING_MAX) {
		fprintf(stderr, "bipload: dropped a connection from %s:%d: %d others wait for "
			"their proof already\n", addr, ntohs(sa.sin_port), npend);
		close(fd);
		return;
	}
	c = &pend[npend++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->deadline = now_s() + PROOF_TIME;
	snprintf(c->peer, sizeof(c->peer), "%s:%d", addr, ntohs(sa.sin_port));
	memcpy(c->hello, BIPLOAD_AUTH_MAGIC, sizeof(BIPLOAD_AUTH_MAGIC));
	randombytes_buf(c->hello + 8, BIPLOAD_AUTH_NONCE);
	/* A fresh socket's buffer takes the 40 bytes at once. */
	if (send(fd, c->hello, sizeof(c->hello), MSG_NOSIGNAL) != (ssize_t)sizeof(c->hello))
		pending_drop(npend - 1, "it cannot take the hello");
}

static void pending_read(int i)
{
	struct pending *c = &pend[i];
	unsigned char mac[BIPLOAD_AUTH_MAC];
	char host[BIPLOAD_AUTH_HOST + 1];
	ssize_t n = recv(c->fd, c->in + c->have, sizeof(c->in) - c->have, 0);
	struct proxy *x = NULL;
	int k;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		pending_drop(i, "it closed before its proof");
		return;
	}
	if (n < 0)
		return;
	c->have += (size_t)n;
	if (c->have < sizeof(c->in))
		return;
	bipload_auth_mac(mac, key, (size_t)keylen, "proxy", c->hello, sizeof(c->hello), c->in,
			 104);
	if (memcmp(c->in, BIPLOAD_AUTH_MAGIC, sizeof(BIPLOAD_AUTH_MAGIC)) ||
	    crypto_verify_32(mac, c->in + 104)) {
		pending_drop(i, "not a proxy of this job (no proof of the job's secret)");
		return;
	}
	memcpy(host, c->in + 8, BIPLOAD_AUTH_HOST);
	host[BIPLOAD_AUTH_HOST] = '\0';
	for (k = 0; k < nproxies; k++)
		if (!strcmp(proxies[k].host, host))
			x = &proxies[k];
	if (!x || x->attached || x->finished) {
		char why[160];

		snprintf(why, sizeof(why), "a proxy on host %.64s, %s", host,
			 !x ? "which is not a host of the job" : "which has one already");
		pending_drop(i, why);
		return;
	}
	bipload_auth_mac(mac, key, (size_t)keylen, "bipload", c->hello, sizeof(c->hello), c->in,
			 sizeof(c->in));
	if (send(c->fd, mac, sizeof(mac), MSG_NOSIGNAL) != (ssize_t)sizeof(mac)) {
		pending_drop(i, "it went away before its answer");
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	/* A late proxy's channel holds its job and the GROW frames queued
	 * while its step started (srun_late_start): they go now, in order. */
	if (x->late) {
		x->chan.rfd = x->chan.wfd = c->fd;
	} else {
		bipload_chan_init(&x->chan, c->fd, c->fd);
	}
	x->attached = 1;
	x->ready = 1;
	pend[i] = pend[--npend];
	if (x->stopped) {
		/* stopped before it came: it has nothing to start */
		finish(x);
		return;
	}
	if (!x->late && bipload_chan_put(&x->chan, BPF_JOB, 0, x->job, x->job_len, NULL, 0) < 0)
		die("out of memory");
}

/* --- the main loop's side --- */

int bipload_remote_maxfds(void)
{
	return 3 * proxy_cap + (step ? 1 + PENDING_MAX + 2 : 0);
}

int bipload_remote_pollfds(struct pollfd *pfd)
{
	int i, n = 0;

	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];

		if (x->finished)
			continue;
		if (x->attached && bipload_chan_flush(&x->chan) < 0) {
			finish(x);
			continue;
		}
		if (x->attached) {
			slots[n] = (struct slot){ SLOT_CHAN_IN, i };
			pfd[n++] = (struct pollfd){ .fd = x->chan.rfd, .events = POLLIN };
			if (bipload_chan_pending(&x->chan)) {
				slots[n] = (struct slot){ SLOT_CHAN_OUT, i };
				pfd[n++] = (struct pollfd){ .fd = x->chan.wfd, .events = POLLOUT };
			}
		}
	}
	for (i = 0; i < nproxies; i++) {
		if (proxies[i].err.fd >= 0) {
			slots[n] = (struct slot){ SLOT_ERR, i };
			pfd[n++] = (struct pollfd){ .fd = proxies[i].err.fd, .events = POLLIN };
		}
	}
	if (!step)
		return n;
	if (listen_fd >= 0) {
		slots[n] = (struct slot){ SLOT_LISTEN, 0 };
		pfd[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
	}
	for (i = 0; i < npend; i++) {
		slots[n] = (struct slot){ SLOT_PENDING, i };
		pfd[n++] = (struct pollfd){ .fd = pend[i].fd, .events = POLLIN };
	}
	for (i = 0; i < 2; i++) {
		if (srun_out[i].fd >= 0) {
			slots[n] = (struct slot){ SLOT_SRUN, i };
			pfd[n++] = (struct pollfd){ .fd = srun_out[i].fd, .events = POLLIN };
		}
	}
	return n;
}

/* Some process of the job has not ended. */
static int any_running(void)
{
	int i;

	for (i = 0; i < nprocs; i++)
		if (bipload_proc_running(&procs[i]))
			return 1;
	return 0;
}

void bipload_remote_events(const struct pollfd *pfd, int n)
{
	double now = now_s();
	int i, accept_now = 0, all_finished = 1, all_attached = 1;

	/* Pending connections newest first: dropping one moves the last. */
	for (i = n; i-- > 0;) {
		struct proxy *x = slots[i].kind <= SLOT_ERR ? &proxies[slots[i].index] : NULL;

		if (!pfd[i].revents)
			continue;
		switch (slots[i].kind) {
		case SLOT_CHAN_IN:
			if (!x->finished)
				chan_in(x);
			break;
		case SLOT_CHAN_OUT:
			if (!x->finished && bipload_chan_flush(&x->chan) < 0)
				finish(x);
			break;
		case SLOT_ERR:
			text_read(&x->err);
			break;
		case SLOT_LISTEN:
			accept_now = 1;
			break;
		case SLOT_PENDING:
			pending_read(slots[i].index);
			break;
		case SLOT_SRUN:
			text_read(&srun_out[slots[i].index]);
			break;
		}
	}
	if (accept_now)
		pending_accept();
	for (i = npend; i-- > 0;)
		if (now >= pend[i].deadline)
			pending_drop(i, "no proof of the job's secret within the time limit");
	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];

		all_finished &= x->finished;
		all_attached &= x->attached || x->finished;
		/* A remote shell that outlives its channel long after a stop. */
		if (x->finished && x->rsh_pid && x->kill_at && now >= x->kill_at) {
			kill(-x->rsh_pid, SIGKILL);
			kill(x->rsh_pid, SIGKILL);
			x->kill_at = 0;
		}
	}
	if (step && srun_pid && all_finished) {
		if (!srun_kill_at)
			srun_kill_at = now + 2 * grace + REMOTE_SLACK;
		else if (now >= srun_kill_at)
			kill(srun_pid, SIGKILL);
	}
	/* Every host's proxy is in (or gone): nobody else may come, unless
	 * a spare host of the allocation may still get one (a job that
	 * grows, while any process runs). */
	if (step && all_attached && listen_fd >= 0 &&
	    (nproxies == proxy_cap || bipload_universe <= 0 || !any_running())) {
		close(listen_fd);
		listen_fd = -1;
		while (npend)
			pending_drop(npend - 1, NULL);
	}
}

void bipload_remote_reaped(pid_t pid, int status)
{
	int i;

	if (step && pid == srun_pid) {
		srun_pid = 0;
		srun_reaped = 1;
		srun_status = status;
		text_drain(&srun_out[0]);
		text_drain(&srun_out[1]);
		/* Proxies that never came will not come now. */
		for (i = 0; i < nproxies; i++)
			if (!proxies[i].attached)
				finish(&proxies[i]);
		return;
	}
	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];

		if (x->rsh_pid != pid)
			continue;
		x->rsh_pid = 0;
		x->rsh_reaped = 1;
		x->rsh_status = status;
		text_drain(&x->err);
		/* A late proxy's own step that ended before it connected. */
		if (step && !x->attached)
			finish(x);
		return;
	}
}

int bipload_remote_busy(void)
{
	int i, k;

	for (i = 0; i < nproxies; i++)
		if (!proxies[i].finished || proxies[i].rsh_pid || proxies[i].err.fd >= 0)
			return 1;
	if (srun_pid)
		return 1;
	for (k = 0; k < 2; k++)
		if (srun_out[k].fd >= 0)
			return 1;
	return 0;
}

void bipload_remote_signal(int sig)
{
	double now = now_s();
	int i, k;

	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];
		unsigned char b[4];

		if (x->finished)
			continue;
		for (k = 0; k < x->nnodes; k++)
			if (!procs[x->nodes[k]].ended)
				procs[x->nodes[k]].stopped = 1;
		if (!x->stopped)
			x->kill_at = now + 2 * grace + REMOTE_SLACK;
		x->stopped = 1;
		if (x->attached) {
			bipload_put32(b, (uint32_t)sig);
			if (bipload_chan_put(&x->chan, BPF_SIGNAL, 0, b, 4, NULL, 0) < 0)
				die("out of memory");
		}
		if (sig != SIGKILL || now < x->kill_at)
			continue;
		/* It has not ended long after its stop: give up on it. */
		if (x->rsh_pid) {
			kill(-x->rsh_pid, SIGKILL);
			kill(x->rsh_pid, SIGKILL);
		}
		finish(x);
		x->kill_at = 0;
	}
}

void bipload_remote_check_started(double since)
{
	double now = now_s();
	int i, k;

	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];

		if (x->hello || x->finished || x->stopped ||
		    now - (x->late ? x->late_since : since) < start_limit)
			continue;
		x->start_late = 1;
		for (k = 0; k < x->nnodes; k++)
			procs[x->nodes[k]].start_late = 1;
		if (x->rsh_pid) {
			kill(-x->rsh_pid, SIGKILL);
			kill(x->rsh_pid, SIGKILL);
		}
		finish(x);
	}
}

int bipload_remote_stdin_ready(void)
{
	struct proxy *x = &proxies[procs[0].proxy];

	if (x->finished || x->stdin_closed || procs[0].ended)
		return -1;
	if (!x->attached || !x->hello)
		return 0;
	return x->stdin_unacked < BIPLOAD_STDIN_WINDOW;
}

void bipload_remote_stdin(const char *buf, size_t len)
{
	struct proxy *x = &proxies[procs[0].proxy];

	if (x->finished || !x->attached)
		return;
	if (bipload_chan_put(&x->chan, BPF_STDIN, 0, buf, len, NULL, 0) < 0)
		die("out of memory");
	x->stdin_unacked += len;
}

/* "1 4 7" of x's nodes that failed without a status, and their pids. */
static void lost_nodes(const struct proxy *x, char *nodes, size_t nlen, char *pids, size_t plen,
		       int *count, int *npids)
{
	size_t nu = 0, pu = 0;
	int k;

	*count = *npids = 0;
	nodes[0] = pids[0] = '\0';
	for (k = 0; k < x->nnodes; k++) {
		const struct proc *p = &procs[x->nodes[k]];

		if (p->exited || ((p->stopped || p->relay) && !p->start_late))
			continue;
		if (nu < nlen)
			nu += (size_t)snprintf(nodes + nu, nlen - nu, "%s%d", nu ? " " : "",
					       x->nodes[k]);
		(*count)++;
		if (p->remote_pid > 0 && pu < plen) {
			pu += (size_t)snprintf(pids + pu, plen - pu, "%s%ld", pu ? " " : "",
					       p->remote_pid);
			(*npids)++;
		}
	}
}

/*
 * A proxy for a spare host (bipload_spare_hosts), started when a job that
 * grows first asks for nodes there: through the remote shell, as the
 * first ones, with a job description of no nodes.  Such a late proxy
 * stays while the job runs, for the requests that follow, and its channel
 * is closed once no process of the job runs any more
 * (bipload_remote_release).  Inside a Slurm step the proxies come from
 * one srun at the start, so there is none.  Returns its index, or -1.
 */
/* Inside a Slurm step: the proxy of a spare host of the allocation comes
 * from a step of its own on that host (srun --overlap, one task), and
 * connects back to the listener as the first step's proxies did. */
static void srun_late_start(struct proxy *x)
{
	char *hosts[1] = { (char *)x->host }, *proxy_argv[4], *argv[48];
	int out[2];

	proxy_argv[0] = proxy_path;
	proxy_argv[1] = "--connect";
	proxy_argv[2] = reach_list(listen_port);
	proxy_argv[3] = NULL;
	bipload_slurm_command(argv, hosts, 1, proxy_argv);
	x->cmd = command_text(argv);
	if (pipe(out) < 0)
		die("pipe: %s", strerror(errno));
	x->rsh_pid = srun_fork(argv, out[1], out[1]);
	set_cloexec_nonblock(out[0]);
	free(proxy_argv[2]);
	x->err.fd = out[0];
	/* Its job first; what is queued for it follows (pending_read). */
	if (bipload_chan_put(&x->chan, BPF_JOB, 0, x->job, x->job_len, NULL, 0) < 0)
		die("out of memory");
}

int bipload_remote_late(const char *host)
{
	struct proxy *x;
	int i;

	if (nproxies >= proxy_cap || (step && listen_fd < 0))
		return -1;
	for (i = 0; i < bipload_nspare; i++)
		if (!strcmp(bipload_spare_hosts[i], host))
			break;
	if (i == bipload_nspare)
		return -1;
	x = &proxies[nproxies];
	memset(x, 0, sizeof(*x));
	x->host = bipload_spare_hosts[i];
	x->late = 1;
	x->late_since = now_s();
	bipload_chan_init(&x->chan, -1, -1);
	x->err.fd = -1;
	x->err.out = 2;
	nproxies++;
	job_description(x, job_conf_path, job_cwd);
	if (step) {
		srun_late_start(x);
	} else {
		rsh_command(x);
		rsh_start(x);
	}
	return nproxies - 1;
}

void bipload_remote_release(void)
{
	int i, k, busy;

	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];

		if (!x->late || x->finished)
			continue;
		for (k = 0, busy = 0; k < x->nnodes; k++)
			busy |= !procs[x->nodes[k]].ended;
		if (!busy)
			finish(x);
	}
}


int bipload_remote_proxy_of(const char *host)
{
	int i;

	for (i = 0; i < nproxies; i++)
		if (!strcmp(proxies[i].host, host))
			return proxies[i].finished || proxies[i].stopped ? -2 : i;
	return -1;
}

const char *bipload_remote_host(int proxy)
{
	return proxies[proxy].host;
}

static void queue_frame(struct proxy *x, uint32_t type, uint32_t node, const void *a,
			size_t alen)
{
	if (x->finished)
		return;
	if (bipload_chan_put(&x->chan, type, node, a, alen, NULL, 0) < 0)
		die("out of memory");
}

void bipload_remote_pm(int node, const void *rec, size_t len)
{
	queue_frame(&proxies[procs[node].proxy], BPF_PM, (uint32_t)node, rec, len);
}

void bipload_remote_grow(int proxy, int node, const void *cmd, size_t len)
{
	struct proxy *x = &proxies[proxy];

	int *nodes;

	/*
	 * Nodes stay ascending: a new node is above every node of the job.
	 * The list was allocated to its exact length at start
	 * (bipload_remote_prepare), so it is not grown by powers of two.
	 */
	nodes = realloc(x->nodes, (size_t)(x->nnodes + 1) * sizeof(*x->nodes));
	if (!nodes)
		die("out of memory");
	x->nodes = nodes;
	x->nodes[x->nnodes++] = node;
	procs[node].proxy = proxy;
	procs[node].local_index = x->nnodes - 1;
	queue_frame(x, BPF_GROW, (uint32_t)node, cmd, len);
}

void bipload_remote_kill(int node)
{
	queue_frame(&proxies[procs[node].proxy], BPF_KILL, (uint32_t)node, NULL, 0);
}

int bipload_remote_report(int node)
{
	struct proxy *x = &proxies[procs[node].proxy];
	char nodes[512], pids[512], st[64];
	int count, npids;

	if (x->reported)
		return 1;
	x->reported = 1;
	lost_nodes(x, nodes, sizeof(nodes), pids, sizeof(pids), &count, &npids);
	if (x->rsh_reaped)
		how(st, sizeof(st), x->rsh_status);
	else if (step && srun_reaped && !x->attached)
		how(st, sizeof(st), srun_status);
	else
		snprintf(st, sizeof(st), "its connection closed");
	if (x->broken)
		fprintf(stderr, "bipload: host %s (node%s %s%s%s%s%s): the proxy (pid %ld there) was "
			"cut off (a broken frame) before the process%s did: stopped\n", x->host,
			count > 1 ? "s" : "", nodes, npids ? ", pid" : "",
			npids > 1 ? "s " : npids ? " " : "", npids ? pids : "", npids ? " there" : "",
			x->pid_there, count > 1 ? "es" : "");
	else if (x->start_late)
		fprintf(stderr, "bipload: host %s (node%s %s): %s has not started the proxy after "
			"%g s; the command was: %s\n", x->host, count > 1 ? "s" : "", nodes,
			step ? "srun" : "the remote shell", start_limit,
			x->late && step ? x->cmd : step ? srun_cmd : x->cmd);
	else if (!x->hello && step)
		fprintf(stderr, "bipload: host %s (node%s %s): srun ended (%s) before the proxy there "
			"connected; the command was: %s\n", x->host, count > 1 ? "s" : "", nodes,
			st, x->late ? x->cmd : srun_cmd);
	else if (!x->hello)
		fprintf(stderr, "bipload: host %s (node%s %s): the remote shell could not start the "
			"proxy (%s); the command was: %s\n", x->host, count > 1 ? "s" : "", nodes,
			st, x->cmd);
	else if (x->done)
		fprintf(stderr, "bipload: host %s (node%s %s): the proxy could not start %s (its "
			"message is above)\n", x->host, count > 1 ? "s" : "", nodes,
			count > 1 ? "them" : "it");
	else if (!npids)
		fprintf(stderr, "bipload: host %s (node%s %s): the proxy (pid %ld there) ended (%s) "
			"before it started %s\n", x->host, count > 1 ? "s" : "", nodes, x->pid_there,
			st, count > 1 ? "them" : "it");
	else
		fprintf(stderr, "bipload: host %s (node%s %s%s%s%s%s): the proxy (pid %ld there) ended "
			"(%s) before the process%s did: connection lost?\n", x->host,
			count > 1 ? "s" : "", nodes, npids ? ", pid" : "",
			npids > 1 ? "s " : npids ? " " : "", npids ? pids : "", npids ? " there" : "",
			x->pid_there, st, count > 1 ? "es" : "");
	return 1;
}

int bipload_remote_exit_code(int node)
{
	const struct proxy *x = &proxies[procs[node].proxy];
	int s = x->rsh_reaped ? x->rsh_status : step && srun_reaped && !x->attached ? srun_status : -1;

	if (x->start_late || x->broken || s < 0)
		return 255;
	if (WIFSIGNALED(s))
		return 128 + WTERMSIG(s);
	return WEXITSTATUS(s) ? WEXITSTATUS(s) : 255;
}

void bipload_remote_free(void)
{
	int i;

	for (i = 0; i < nproxies; i++) {
		struct proxy *x = &proxies[i];

		bipload_chan_close(&x->chan);
		free(x->quoted);
		free(x->argv);
		free(x->words);
		free(x->cmd);
		free(x->job);
		free(x->nodes);
	}
	free(proxies);
	free(slots);
	free(srun_argv);
	free(srun_cmd);
}
