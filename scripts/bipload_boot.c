/* SPDX-License-Identifier: MIT */
/*
 * bipload_boot.c - the processes of bipload's own host (bipload.h): fork,
 * then exec the program with the node's environment (BIP_NODE, BIP_JOBID,
 * BIP_HOST, BIP_OPTS, BIPCONF, BIP_APPNUM and its command's -env;
 * BIP_SECRET is set in the child only), bound to its CPU first with
 * --bind-to core.  The processes of other hosts start through their host's
 * proxy (bipload_remote.c), which sets the same environment there.
 *
 * Each starts with a parent-death signal (SIGKILL): whatever kills
 * bipload, its local processes go with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bind.h"
#include "bipload.h"
#include "bipload_monitor.h"
#include "monitor.h"
#include "conf.h"

void set_cloexec_nonblock(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int bipload_carried(const char *name, size_t len)
{
	static const char *const always[] = { "BIPCONF", "PATH", "LD_LIBRARY_PATH" };
	size_t i;

	if (len == strlen(BIP_ENV_SECRET) && !strncmp(name, BIP_ENV_SECRET, len))
		return 0; /* it travels apart, never on a command line */
	if (len == strlen(BIP_MONITOR_ENV) && !strncmp(name, BIP_MONITOR_ENV, len))
		return 0; /* a descriptor of this host */
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
	if (procs[node].pm_fd >= 0) {
		setenv("BIP_PM_FD", "3", 1);
		bipload_grow_env();
	}
}

/* The page of --monitor as descriptor 4, or none: a value of the user's
 * does not reach the process. */
static void child_monitor_env(int page)
{
	if (page >= 0)
		setenv(BIP_MONITOR_ENV, "4", 1);
	else
		unsetenv(BIP_MONITOR_ENV);
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

static __attribute__((noreturn)) void local_exec(int node, const char *conf_path)
{
	char *const *argv = app_of(node)->argv;
	char err[256];

	child_env(node, conf_path);
	/* Bound before the program runs, BIP or not (the library binds its
	 * process again at start-up, to the same CPU). */
	if (opt.bind_core && bip_bind_core(procs[node].local_index, err, sizeof(err)) < 0) {
		fprintf(stderr, "bipload: node %d: --bind-to core: %s\n", node, err);
		_exit(127);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "bipload: node %d: cannot run %s: %s\n", node, argv[0], strerror(errno));
	_exit(127);
}

void bipload_start_local(int node, const char *conf_path, int stdin_fd)
{
	struct proc *p = &procs[node];
	int out[2], err[2], i, child_pm, page;
	pid_t pid;

	if (pipe(out) < 0 || pipe(err) < 0)
		die("pipe: %s", strerror(errno));
	child_pm = bipload_grow_channel(node);
	page = bipload_monitor_page_fd(node);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd0 = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);

		bipload_child_setup(bipload_pid);
		dup2(fd0, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (child_pm >= 0) {
			/* The channel to bipload as descriptor 3 (bipload_grow.c). */
			dup2(child_pm, 3);
			fcntl(3, F_SETFD, 0);
		}
		if (page >= 0) {
			/* Its --monitor page as descriptor 4 (bipload_monitor.c). */
			dup2(page, 4);
			fcntl(4, F_SETFD, 0);
		}
		for (i = 3; i < 1024; i++)
			if ((i != 3 || child_pm < 0) && (i != 4 || page < 0))
				close(i);
		child_monitor_env(page);
		local_exec(node, conf_path);
	}
	if (child_pm >= 0)
		close(child_pm);
	if (page >= 0)
		close(page);
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	p->pid = pid;
	p->started = pid;
	p->s[0] = (struct stream){ .fd = out[0], .open = 1, .out = 1 };
	p->s[1] = (struct stream){ .fd = err[0], .open = 1, .out = 2 };
	set_cloexec_nonblock(out[0]);
	set_cloexec_nonblock(err[0]);
}
