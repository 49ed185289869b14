/* SPDX-License-Identifier: MIT */
/*
 * bipload_trace.c - bipload --trace DIR: the job's timelines (bip_trace(7)).
 *
 * Before the job: DIR's parent must exist (else bipload stops before
 * starting anything); DIR and DIR/ranks are made, and the pieces of an
 * earlier trace there removed.  Every command of the job gets, with its
 * -env variables (so on every host, through the proxies' job
 * description too):
 *     LD_PRELOAD=LIB[:the LD_PRELOAD of bipload's environment]
 *     BIP_TRACE=DIR (absolute)
 * LIB is $BIP_TRACE_LIB, else libbip_trace.so of the build tree beside
 * bipload (../lib/trace), else the installed one (BIP_TRACE_LIBDIR).
 * The processes of other hosts share the working directory, hence DIR,
 * in bipload's model (bipload(1)).
 *
 * After the job, however it ended (a rank writes its piece at
 * MPI_Finalize, or on the SIGTERM of a failed job or of --timeout):
 * biptrace DIR merges the pieces into DIR/traces.otf2 and DIR.json.  If
 * it fails, the pieces stay in DIR/ranks for biptrace by hand.  bipload's
 * exit status stays the job's: a trace that could not be merged is said
 * on stderr only.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bipload.h"

static char trace_dir[PATH_MAX];
/* The two variables every command gets (kept: the commands point at them). */
static char *env_preload, *env_trace;

/* The tracer's library: see the header. */
static void find_library(char *buf, size_t len)
{
	const char *env = getenv("BIP_TRACE_LIB");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		if (access(buf, R_OK) < 0)
			die("BIP_TRACE_LIB=%s: %s", env, strerror(errno));
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/../lib/trace/libbip_trace.so", self) < len &&
			    access(buf, R_OK) == 0 && realpath(buf, self))
				goto found;
		}
	}
	if ((size_t)snprintf(buf, len, "%s/libbip_trace.so", BIP_TRACE_LIBDIR) < len &&
	    access(buf, R_OK) == 0)
		return;
	die("--trace: the tracer's library (libbip_trace.so) is neither in %s nor in the build "
	    "tree beside bipload; set BIP_TRACE_LIB", BIP_TRACE_LIBDIR);
found:
	snprintf(buf, len, "%s", self);
}

static void make_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) == 0)
		return;
	if (errno != EEXIST)
		die("--trace: cannot make %s: %s", path, strerror(errno));
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		die("--trace: %s exists and is not a directory", path);
	if (access(path, W_OK | X_OK) < 0)
		die("--trace: %s: %s", path, strerror(errno));
}

/* The pieces of an earlier job in DIR/ranks. */
static void remove_old_pieces(const char *ranks)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(ranks);

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (d->d_name[0] >= '0' && d->d_name[0] <= '9' &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", ranks, d->d_name) < sizeof(path))
			unlink(path);
	closedir(dir);
}

void bipload_trace_prepare(const char *dir)
{
	char parent[PATH_MAX], lib[PATH_MAX], ranks[PATH_MAX + 8], *slash;
	const char *preload = getenv("LD_PRELOAD");
	struct stat st;
	size_t n;
	int k;

	if (!*dir)
		die("--trace: expected a path");
	if (dir[0] == '/') {
		n = (size_t)snprintf(trace_dir, sizeof(trace_dir), "%s", dir);
	} else {
		if (!getcwd(parent, sizeof(parent)))
			die("getcwd: %s", strerror(errno));
		n = (size_t)snprintf(trace_dir, sizeof(trace_dir), "%s/%s", parent, dir);
	}
	while (n > 1 && trace_dir[n - 1] == '/')
		trace_dir[--n] = '\0';
	if (n >= sizeof(trace_dir) - 16)
		die("--trace %s: the path is too long", dir);
	snprintf(parent, sizeof(parent), "%s", trace_dir);
	slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(parent, &st) < 0)
		die("--trace %s: the directory %s: %s", dir, parent, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("--trace %s: %s is not a directory", dir, parent);
	find_library(lib, sizeof(lib));
	make_dir(trace_dir);
	snprintf(ranks, sizeof(ranks), "%s/ranks", trace_dir);
	make_dir(ranks);
	remove_old_pieces(ranks);

	if (asprintf(&env_preload, "LD_PRELOAD=%s%s%s", lib, preload && *preload ? ":" : "",
		     preload ? preload : "") < 0 ||
	    asprintf(&env_trace, "BIP_TRACE=%s", trace_dir) < 0)
		die("out of memory");
	for (k = 0; k < opt.napps; k++) {
		struct bipload_app *app = &opt.apps[k];

		/* One at a time: bip_array_grow's room is for one more. */
		bipload_app_env(app, env_preload);
		bipload_app_env(app, env_trace);
	}
}

const char *bipload_trace_dir(void)
{
	return trace_dir[0] ? trace_dir : NULL;
}

int bipload_trace_merge(void)
{
	char merger[PATH_MAX];
	int status;
	pid_t pid;

	if (!trace_dir[0])
		return 0;
	bipload_find_helper("BIP_TRACE_MERGE", "biptrace", "../lib/trace", merger, sizeof(merger));
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bipload: fork: %s; the trace's pieces stay in %s/ranks\n",
			strerror(errno), trace_dir);
		return -1;
	}
	if (pid == 0) {
		if (opt.quiet)
			execl(merger, merger, "-q", trace_dir, (char *)NULL);
		else
			execl(merger, merger, trace_dir, (char *)NULL);
		fprintf(stderr, "bipload: %s: %s\n", merger, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = -1;
			break;
		}
	if (status != 0) {
		fprintf(stderr, "bipload: the trace was not merged; its pieces stay in %s/ranks "
				"(biptrace %s merges them)\n", trace_dir, trace_dir);
		return -1;
	}
	return 0;
}
