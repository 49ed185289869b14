/* SPDX-License-Identifier: MIT */
/*
 * bipload_boot.c - bipload's bootstrap back ends (bipload.h): how one
 * node's process starts.
 *
 *   local  on this host: fork, then exec the program with the node's
 *          environment (BIP_NODE, BIP_JOBID, BIP_HOST, BIP_OPTS, BIPCONF,
 *          BIP_APPNUM and its command's -env; BIP_SECRET is in bipload's
 *          own), bound to its CPU first with --bind-to core.
 *   rsh    on another host: the remote shell (ssh, or --rsh / BIP_RSH) runs a
 *          small sh script (remote_script) that goes to our directory, sets
 *          the environment that matters, reads the job's secret as the first
 *          line of its stdin, starts the program in a session of its own,
 *          says its pid and status on stderr in lines marked with the job id,
 *          and stops it when its stdin reaches end of file.
 *
 * Both start with a parent-death signal (SIGKILL): whatever kills bipload,
 * its local processes and remote shells go with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bind.h"
#include "bipload.h"
#include "bipload_lanai.h"
#include "conf.h"

extern char **environ;

/* A growing string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

void set_cloexec_nonblock(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void child_env(int node, const char *conf_path)
{
	const struct bipload_app *app = app_of(node);
	char v[64];
	int i;

	for (i = 0; i < app->nenv; i++) {
		const char *eq = strchr(app->env[i], '=');
		char *name = strndup(app->env[i], (size_t)(eq - app->env[i]));

		if (!name || setenv(name, eq + 1, 1) < 0)
			_exit(127);
		free(name);
	}
	snprintf(v, sizeof(v), "%d", procs[node].app);
	setenv("BIP_APPNUM", v, 1);
	snprintf(v, sizeof(v), "%d", node);
	setenv(BIP_ENV_NODE, v, 1);
	setenv(BIP_ENV_JOBID, jobid, 1);
	setenv(BIP_ENV_SECRET, secret, 1);
	setenv(BIP_ENV_HOST, conf->nodes[node].host, 1);
	snprintf(v, sizeof(v), "n%d%s", conf->n, opt.quiet ? "q" : "");
	setenv(BIP_ENV_OPTS, v, 1);
	if (conf_path[0])
		setenv(BIP_ENV_CONF, conf_path, 1);
	else
		unsetenv(BIP_ENV_CONF);
}

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
					   BIP_ENV_OPTS, BIP_ENV_CONF, "BIP_APPNUM" };
	const char *host = conf->nodes[node].host;
	const struct bipload_app *app = app_of(node);
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
	for (i = 0; i < app->nenv; i++) {
		const char *eq = strchr(app->env[i], '=');

		sb_export(&b, app->env[i], (size_t)(eq - app->env[i]), eq + 1);
	}
	snprintf(v, sizeof(v), "%d", procs[node].app);
	sb_export(&b, "BIP_APPNUM", strlen("BIP_APPNUM"), v);
	snprintf(v, sizeof(v), "%d", node);
	sb_export(&b, BIP_ENV_NODE, strlen(BIP_ENV_NODE), v);
	sb_export(&b, BIP_ENV_JOBID, strlen(BIP_ENV_JOBID), jobid);
	sb_export(&b, BIP_ENV_HOST, strlen(BIP_ENV_HOST), host);
	snprintf(v, sizeof(v), "n%d%s", conf->n, opt.quiet ? "q" : "");
	sb_export(&b, BIP_ENV_OPTS, strlen(BIP_ENV_OPTS), v);
	sb_export(&b, BIP_ENV_CONF, strlen(BIP_ENV_CONF), conf_path);
	sb_add(&b, "; for c in setsid ");
	sb_quote(&b, app->argv[0]);
	sb_add(&b, "; do command -v \"$c\" >/dev/null || { echo \"bipload: host ");
	/* inside double quotes: the host name is letters, digits, dots and dashes */
	for (k = 0; host[k]; k++)
		if (!strchr("\"\\$`", host[k]))
			sb_add(&b, "%c", host[k]);
	sb_add(&b, ": $c: program not found (PATH=$PATH)\" >&2; exit 127; }; done;"
		   " exec 3<&0; setsid");
	for (i = 0; app->argv[i]; i++) {
		sb_add(&b, " ");
		sb_quote(&b, app->argv[i]);
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
static void rsh_prepare(struct proc *p, int node, const char *conf_path, const char *cwd)
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

void bipload_child_setup(pid_t parent)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	/* Die with bipload, whatever kills it; it may be gone already. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	setpgid(0, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
}

void start(int node, const char *conf_path, int stdin_fd)
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

		bipload_child_setup(bipload_pid);
		dup2(fd0, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (i = 3; i < 1024; i++)
			close(i);
		p->boot->exec(p, node, conf_path);
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
		char line[sizeof(secret) + 1];
		int n = snprintf(line, sizeof(line), "%s\n", secret);

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

static __attribute__((noreturn)) void rsh_exec(struct proc *p, int node, const char *conf_path)
{
	execvp(p->rargv[0], p->rargv);
	fprintf(stderr, "bipload: node %d: cannot run the remote shell %s: %s\n", node,
		p->rargv[0], strerror(errno));
	_exit(127);
}

static void local_prepare(struct proc *p, int node, const char *conf_path, const char *cwd)
{
	p->remote = 0;
}

static __attribute__((noreturn)) void local_exec(struct proc *p, int node, const char *conf_path)
{
	char *const *argv = app_of(node)->argv;
	char err[256];

	child_env(node, conf_path);
	/* Bound before the program runs, BIP or not (the library binds its
	 * process again at start-up, to the same CPU). */
	if (opt.bind_core && bip_bind_core(bip_bind_local_index(conf, node), err, sizeof(err)) < 0) {
		fprintf(stderr, "bipload: node %d: --bind-to core: %s\n", node, err);
		_exit(127);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "bipload: node %d: cannot run %s: %s\n", node, argv[0], strerror(errno));
	_exit(127);
}

const struct bipload_boot bipload_boot_local = {
	.name = "local",
	.prepare = local_prepare,
	.exec = local_exec,
};

const struct bipload_boot bipload_boot_rsh = {
	.name = "rsh",
	.prepare = rsh_prepare,
	.exec = rsh_exec,
};

void bipload_boot_prepare(struct proc *p, int node, const char *conf_path, const char *cwd)
{
	p->boot = bip_host_is_local(conf->nodes[node].host) && !bipload_slurm_all_remote() ?
			  &bipload_boot_local : &bipload_boot_rsh;
	p->boot->prepare(p, node, conf_path, cwd);
}
