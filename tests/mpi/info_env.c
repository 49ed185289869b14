/* SPDX-License-Identifier: MIT */
/*
 * info_env.c - MPI_Info_create_env (MPI-4.0), run through bipload with the
 * arguments "alpha beta":
 *   bipload -sz N info_env alpha beta
 * The object has MPI_INFO_ENV's keys but maxprocs (command and argv from
 * argc/argv, else from the kernel; host, arch, wdir), is the same before
 * MPI_Init, in between and after MPI_Finalize, and is the program's to
 * change and free.  Bad arguments are MPI_ERR_ARG under MPI_ERRORS_RETURN,
 * the output left alone.
 */
#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <mpi.h>

#include "mpicheck.h"

#define FAILS(cls, call)                                                                     \
	do {                                                                                 \
		int fails_rc_ = (call);                                                      \
		CHECK(fails_rc_ == (cls), "returned %d, not %s (%d)", fails_rc_, #cls, cls); \
	} while (0)

/* The value of key in info (want NULL: absent). */
static void get(MPI_Info info, const char *key, const char *want)
{
	char v[MPI_MAX_INFO_VAL + 1] = "";
	int flag = -1;

	OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
	CHECK(flag == (want != NULL), "key %s: flag %d", key, flag);
	if (want)
		CHECK(!strcmp(v, want), "key %s: '%s', not '%s'", key, v, want);
}

static int nkeys(MPI_Info info)
{
	int n = -1;

	OK(MPI_Info_get_nkeys(info, &n));
	return n;
}

/* a and b have the same keys and values. */
static void same(MPI_Info a, MPI_Info b)
{
	char key[MPI_MAX_INFO_KEY + 1], va[MPI_MAX_INFO_VAL + 1], vb[MPI_MAX_INFO_VAL + 1];
	int i, n = nkeys(a), fa, fb;

	CHECK(n == nkeys(b), "%d keys and %d", n, nkeys(b));
	for (i = 0; i < n; i++) {
		OK(MPI_Info_get_nthkey(a, i, key));
		OK(MPI_Info_get(a, key, MPI_MAX_INFO_VAL, va, &fa));
		OK(MPI_Info_get(b, key, MPI_MAX_INFO_VAL, vb, &fb));
		CHECK(fa && fb && !strcmp(va, vb), "key %s: '%s' and '%s'", key, va, vb);
	}
}

/* What the object made from the arguments "alpha beta" holds. */
static void expected(MPI_Info info, const char *command)
{
	char cwd[PATH_MAX];
	struct utsname u;

	CHECK(nkeys(info) == 5, "%d keys", nkeys(info));
	get(info, "command", command);
	get(info, "argv", "alpha beta");
	CHECK(uname(&u) == 0, "uname");
	get(info, "host", u.nodename);
	get(info, "arch", u.machine);
	CHECK(getcwd(cwd, sizeof(cwd)), "getcwd");
	get(info, "wdir", cwd);
	get(info, "maxprocs", NULL);
	get(info, "soft", NULL);
	get(info, "file", NULL);
	get(info, "thread_level", NULL);
}

/* Arguments that are not those of main: fewer, none, too long. */
static void arguments(char *prog)
{
	static char big[MPI_MAX_INFO_VAL + 10];
	char *one[] = { prog, NULL }, *nullcmd[] = { NULL, NULL }, *longarg[] = { prog, big, NULL };
	MPI_Info info;

	OK(MPI_Info_create_env(1, one, &info));
	get(info, "command", prog);
	get(info, "argv", NULL);
	OK(MPI_Info_free(&info));
	/* Without a command: the kernel's command line, this program's. */
	OK(MPI_Info_create_env(1, nullcmd, &info));
	expected(info, prog);
	OK(MPI_Info_free(&info));
	/* Arguments longer than MPI_MAX_INFO_VAL: no argv key. */
	memset(big, 'x', sizeof(big) - 1);
	OK(MPI_Info_create_env(2, longarg, &info));
	get(info, "command", prog);
	get(info, "argv", NULL);
	CHECK(nkeys(info) == 4, "%d keys with an argument too long", nkeys(info));
	OK(MPI_Info_free(&info));
}

static void errors(char **argv)
{
	MPI_Info info = MPI_INFO_NULL, keep;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	FAILS(MPI_ERR_ARG, MPI_Info_create_env(3, argv, NULL));
	keep = info;
	FAILS(MPI_ERR_ARG, MPI_Info_create_env(-1, argv, &info));
	CHECK(info == keep, "the output changed by a refused call");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
	MPI_Info before, proc, during, after;
	int n;

	CHECK(argc == 3 && !strcmp(argv[1], "alpha") && !strcmp(argv[2], "beta"),
	      "usage: info_env alpha beta");
	/* Before MPI_Init: from the arguments, and from the kernel. */
	OK(MPI_Info_create_env(argc, argv, &before));
	expected(before, argv[0]);
	OK(MPI_Info_create_env(0, NULL, &proc));
	same(before, proc);
	CHECK(before != proc, "two calls gave one object");

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &check_rank));
	OK(MPI_Info_create_env(argc, argv, &during));
	same(before, during);
	/* MPI_INFO_ENV: the same keys, and maxprocs. */
	n = nkeys(MPI_INFO_ENV);
	CHECK(n == nkeys(during) + 1, "MPI_INFO_ENV has %d keys", n);
	OK(MPI_Info_delete(during, "command"));
	get(during, "command", NULL);
	arguments(argv[0]);
	errors(argv);
	CHECK(nkeys(MPI_INFO_ENV) == n, "MPI_INFO_ENV changed");
	OK(MPI_Info_free(&during));
	CHECK(during == MPI_INFO_NULL, "Info_free leaves the handle");
	OK(MPI_Finalize());

	OK(MPI_Info_create_env(argc, argv, &after));
	same(before, after);
	OK(MPI_Info_free(&after));
	OK(MPI_Info_free(&proc));
	OK(MPI_Info_free(&before));
	return 0;
}
