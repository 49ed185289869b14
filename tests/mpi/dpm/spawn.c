/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - MPI_Comm_spawn and friends, as MPICH's test/mpi/spawn programs
 * check them (written here): a spawn of K workers with arguments, the
 * parent inter-communicator, point-to-point and collectives across it,
 * MPI_Intercomm_merge, MPI_APPNUM, spawn_multiple, the info keys wdir and
 * soft, a master/worker pool of 1,000 tasks, disconnect, and the errors.
 *
 *   spawn basic      every parent rank, K = 3 workers: argv, sums, merge
 *   spawn multiple   two commands (2 + 1 processes), APPNUM, wdir
 *   spawn pool       one master, 4 workers, 1,000 tasks, shut down
 *   spawn errors     a missing program, no room, bad arguments
 *   spawn slots [N]  bipload --host HERE:3 (or --universe N): the universe
 *                    is the N slots (3), the relays of a job's clusters not
 *                    counted
 *   spawn crash      a child crashes: the job ends (spawn_crash.sh)
 *   spawn refused    a job that cannot grow (srun, another driver): a clear
 *                    MPI_ERR_SPAWN
 *   spawn hosts H=N.. one worker on each host H (the info key "host"), as
 *                    one spawn_multiple: each runs where it was asked (in
 *                    network namespace N, as /proc/self/ns/net names it:
 *                    the test's hosts share one kernel and its host
 *                    name), and sums and a merge go across the hosts;
 *                    with one parent on each host too, MPI_COMM_TYPE_SHARED
 *                    splits the merged communicator into pairs that share
 *                    a window
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"

static int failures;
static char *self;

#define CHECK(c, ...)                                                              \
	do {                                                                       \
		if (!(c)) {                                                        \
			int r_;                                                    \
			MPI_Comm_rank(MPI_COMM_WORLD, &r_);                        \
			fprintf(stderr, "rank %d: FAIL %s:%d: ", r_, __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			failures++;                                                \
		}                                                                  \
	} while (0)

#define TASKS 1000

/* --- the children --- */

static int worker_basic(int argc, char **argv)
{
	MPI_Comm parent, merged;
	int rank, size, rsize, x, sum, flag, *appnum, mrank, msize;

	MPI_Comm_get_parent(&parent);
	CHECK(parent != MPI_COMM_NULL, "no parent");
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_remote_size(parent, &rsize);
	CHECK(size == 3, "world size %d", size);
	CHECK(argc == 4 && !strcmp(argv[2], "one") && !strcmp(argv[3], "two words"),
	      "argv: %d %s %s", argc, argc > 2 ? argv[2] : "", argc > 3 ? argv[3] : "");
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
	CHECK(flag && *appnum == 0, "appnum");
	/* Point-to-point: each parent rank sends its rank to worker rank % 3. */
	if (rank == 0) {
		int i;

		for (i = 0; i < rsize; i++) {
			MPI_Status st;

			MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, parent, &st);
			CHECK(x == st.MPI_SOURCE * 10, "from %d: %d", st.MPI_SOURCE, x);
		}
	}
	/* Collectives across: the parents' sum comes to us. */
	x = 0;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, parent);
	CHECK(sum == rsize * (rsize - 1) / 2, "allreduce across: %d", sum);
	MPI_Bcast(&x, 1, MPI_INT, 0, parent);
	CHECK(x == 4242, "bcast from the parents' root: %d", x);
	MPI_Intercomm_merge(parent, 1, &merged);
	MPI_Comm_rank(merged, &mrank);
	MPI_Comm_size(merged, &msize);
	CHECK(msize == rsize + 3 && mrank == rsize + rank, "merged %d of %d", mrank, msize);
	MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
	CHECK(sum == msize * (msize - 1) / 2, "merged sum %d", sum);
	MPI_Comm_free(&merged);
	MPI_Comm_disconnect(&parent);
	CHECK(parent == MPI_COMM_NULL, "disconnect leaves the handle");
	MPI_Comm_get_parent(&parent);
	CHECK(parent == MPI_COMM_NULL, "a parent after disconnect");
	return 0;
}

static int worker_multiple(int argc, char **argv)
{
	MPI_Comm parent;
	int rank, size, flag, *appnum, report[3];
	char cwd[PATH_MAX];

	(void)argc;
	MPI_Comm_get_parent(&parent);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
	CHECK(size == 3, "world size %d", size);
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	report[0] = rank;
	report[1] = flag ? *appnum : -1;
	report[2] = !strcmp(cwd, "/tmp") ? 1 : !strcmp(argv[1], "multi_a") ? 2 : 0;
	MPI_Send(report, 3, MPI_INT, 0, 9, parent);
	MPI_Comm_disconnect(&parent);
	return 0;
}

/* One parent and one worker on each host: MPI_COMM_TYPE_SHARED pairs
 * them, and both agree that they share a host (a worker's host is learnt
 * from bipload): a shared window between them works. */
static void shared_pairs(MPI_Comm merged)
{
	MPI_Comm shared;
	MPI_Win win;
	MPI_Aint qsize;
	int size, rank, one = 1, sum, disp, *mine, *other;

	MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
	MPI_Comm_size(shared, &size);
	MPI_Comm_rank(shared, &rank);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shared);
	CHECK(size == 2 && sum == 2, "the processes of my host: %d (sum %d), expected 2", size,
	      sum);
	if (size == 2) {
		MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, shared, &mine,
					&win);
		MPI_Win_lock_all(0, win);
		*mine = 100 + rank;
		MPI_Win_sync(win);
		MPI_Barrier(shared);
		MPI_Win_sync(win);
		MPI_Win_shared_query(win, 1 - rank, &qsize, &disp, &other);
		CHECK(*other == 101 - rank, "my partner's word: %d", *other);
		MPI_Win_unlock_all(win);
		MPI_Win_free(&win);
	}
	MPI_Comm_free(&shared);
}

static int worker_hosts(int argc, char **argv)
{
	MPI_Comm parent, merged;
	char name[MPI_MAX_PROCESSOR_NAME];
	int len, rank, sum, msize, mrank, wsize;
	ssize_t n;

	MPI_Comm_get_parent(&parent);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	n = readlink("/proc/self/ns/net", name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = '\0';
	len = (int)strlen(name);
	CHECK(argc == 3 && !strcmp(name, argv[2]), "in %s, asked for %s", name,
	      argc == 3 ? argv[2] : "?");
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Send(name, len + 1, MPI_CHAR, 0, 11, parent);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, parent);
	MPI_Intercomm_merge(parent, 1, &merged);
	MPI_Comm_rank(merged, &mrank);
	MPI_Comm_size(merged, &msize);
	MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
	CHECK(sum == msize * (msize - 1) / 2, "merged sum %d", sum);
	/* As many parents as workers: one of each on each host. */
	if (msize == 2 * wsize)
		shared_pairs(merged);
	MPI_Comm_free(&merged);
	MPI_Comm_disconnect(&parent);
	return 0;
}

static int worker_pool(void)
{
	MPI_Comm parent;
	MPI_Status st;
	int task, result;

	MPI_Comm_get_parent(&parent);
	for (;;) {
		MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, parent, &st);
		if (st.MPI_TAG == 2)
			break;
		result = task * task;
		MPI_Send(&result, 1, MPI_INT, 0, 1, parent);
	}
	MPI_Comm_disconnect(&parent);
	return 0;
}

/* --- the parents --- */

static int parent_basic(void)
{
	char *args[] = { "one", "two words", NULL };
	MPI_Comm inter, merged, parent;
	int rank, size, codes[3] = { -1, -1, -1 }, rsize, x, sum, mrank, msize, rc;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_get_parent(&parent);
	CHECK(parent == MPI_COMM_NULL, "a parent in the first job");
	/* The program and its first argument: "worker_basic" selects the part. */
	{
		char *wargs[] = { "worker_basic", "one", "two words", NULL };

		(void)args;
		rc = MPI_Comm_spawn(self, wargs, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
				    codes);
	}
	CHECK(rc == MPI_SUCCESS, "spawn: %d", rc);
	CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS && codes[2] == MPI_SUCCESS,
	      "codes %d %d %d", codes[0], codes[1], codes[2]);
	MPI_Comm_remote_size(inter, &rsize);
	CHECK(rsize == 3, "remote size %d", rsize);
	x = rank * 10;
	MPI_Send(&x, 1, MPI_INT, 0, 7, inter);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter);
	CHECK(sum == 3, "the workers' sum %d", sum);
	x = 4242;
	MPI_Bcast(&x, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
	MPI_Intercomm_merge(inter, 0, &merged);
	MPI_Comm_rank(merged, &mrank);
	MPI_Comm_size(merged, &msize);
	CHECK(msize == size + 3 && mrank == rank, "merged %d of %d", mrank, msize);
	MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
	CHECK(sum == msize * (msize - 1) / 2, "merged sum %d", sum);
	MPI_Comm_free(&merged);
	MPI_Comm_disconnect(&inter);
	if (rank == 0)
		printf("spawned 3 workers from %d parents: p2p, allreduce, bcast, merge\n", size);
	return 0;
}

static int parent_multiple(void)
{
	char *cmds[2] = { self, self };
	char *a0[] = { "multi_a", NULL }, *a1[] = { "multi_b", NULL };
	char **argvs[2] = { a0, a1 };
	int np[2] = { 2, 1 }, codes[3], rank, i, seen[3] = { 0 };
	MPI_Info infos[2];
	MPI_Comm inter;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Info_create(&infos[0]);
	MPI_Info_create(&infos[1]);
	MPI_Info_set(infos[1], "wdir", "/tmp");
	MPI_Info_set(infos[1], "arch", "anything");
	CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter,
				      codes) == MPI_SUCCESS, "spawn_multiple");
	if (rank == 0) {
		for (i = 0; i < 3; i++) {
			int r[3];
			MPI_Status st;

			MPI_Recv(r, 3, MPI_INT, MPI_ANY_SOURCE, 9, inter, &st);
			CHECK(r[0] == st.MPI_SOURCE, "rank %d says %d", st.MPI_SOURCE, r[0]);
			/* Ranks 0 and 1: command 0 in our directory; rank 2: command 1 in /tmp. */
			CHECK(r[1] == (st.MPI_SOURCE < 2 ? 0 : 1), "rank %d: appnum %d",
			      st.MPI_SOURCE, r[1]);
			CHECK(r[2] == (st.MPI_SOURCE < 2 ? 2 : 1), "rank %d: where %d",
			      st.MPI_SOURCE, r[2]);
			seen[st.MPI_SOURCE]++;
		}
		CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "reports");
		printf("spawn_multiple: 2 commands, appnum and wdir as asked\n");
	}
	MPI_Info_free(&infos[0]);
	MPI_Info_free(&infos[1]);
	MPI_Comm_disconnect(&inter);
	return 0;
}

static int parent_pool(void)
{
	char *wargs[] = { "worker_pool", NULL };
	MPI_Comm inter;
	MPI_Status st;
	int next = 0, done = 0, w, result, stop = 0, nw = 4;
	long long sum = 0, want = 0;

	CHECK(MPI_Comm_spawn(self, wargs, nw, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
			     MPI_ERRCODES_IGNORE) == MPI_SUCCESS, "spawn the pool");
	for (w = 0; w < nw; w++, next++)
		MPI_Send(&next, 1, MPI_INT, w, 1, inter);
	while (done < TASKS) {
		MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, &st);
		sum += result;
		done++;
		if (next < TASKS) {
			MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, 1, inter);
			next++;
		}
	}
	for (w = 0; w < nw; w++)
		MPI_Send(&stop, 1, MPI_INT, w, 2, inter);
	for (w = 0; w < TASKS; w++)
		want += (long long)w * w;
	CHECK(sum == want, "pool sum %lld, expected %lld", sum, want);
	MPI_Comm_disconnect(&inter);
	printf("pool: %d workers, %d tasks, sum of squares %lld\n", nw, TASKS, sum);
	return 0;
}

static int parent_hosts(int nh, char **hosts)
{
	char *cmds[8], **argvs[8], *args[8][3], name[MPI_MAX_PROCESSOR_NAME];
	int np[8], codes[8], i, rank, size, rsize, sum, msize, mrank, rc;
	MPI_Info infos[8];
	MPI_Comm inter, merged;

	if (nh < 1 || nh > 8)
		return 2;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (i = 0; i < nh; i++) {
		char *eq = strchr(hosts[i], '=');

		if (!eq)
			return 2;
		*eq = '\0';
		cmds[i] = self;
		args[i][0] = "worker_hosts";
		args[i][1] = eq + 1;
		args[i][2] = NULL;
		argvs[i] = args[i];
		np[i] = 1;
		MPI_Info_create(&infos[i]);
		MPI_Info_set(infos[i], "host", hosts[i]);
	}
	rc = MPI_Comm_spawn_multiple(nh, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter,
				     codes);
	CHECK(rc == MPI_SUCCESS, "spawn_multiple on %d hosts: %d", nh, rc);
	MPI_Comm_remote_size(inter, &rsize);
	CHECK(rsize == nh, "remote size %d", rsize);
	if (rank == 0)
		for (i = 0; i < nh; i++) {
			MPI_Recv(name, sizeof(name), MPI_CHAR, i, 11, inter, MPI_STATUS_IGNORE);
			CHECK(!strcmp(name, args[i][1]), "worker %d runs in %s, not %s (%s)", i,
			      name, args[i][1], hosts[i]);
		}
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter);
	CHECK(sum == nh * (nh - 1) / 2, "the workers' sum %d", sum);
	MPI_Intercomm_merge(inter, 0, &merged);
	MPI_Comm_rank(merged, &mrank);
	MPI_Comm_size(merged, &msize);
	MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
	CHECK(msize == size + nh && sum == msize * (msize - 1) / 2, "merged %d, sum %d", msize,
	      sum);
	if (size == nh)
		shared_pairs(merged);
	MPI_Comm_free(&merged);
	MPI_Comm_disconnect(&inter);
	for (i = 0; i < nh; i++)
		MPI_Info_free(&infos[i]);
	if (rank == 0)
		printf("spawned a worker on each of %d hosts, each where asked\n", nh);
	return 0;
}

static int parent_errors(void)
{
	char *wargs[] = { "worker_pool", NULL };
	MPI_Comm inter = MPI_COMM_WORLD;
	MPI_Info info;
	int codes[3] = { -1, -1, -1 }, rc, cls, universe, *u, flag;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	rc = MPI_Comm_spawn("/nonexistent/no-such-worker", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
			    MPI_COMM_WORLD, &inter, codes);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_SPAWN, "a missing program: class %d", cls);
	CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN &&
	      codes[2] == MPI_ERR_SPAWN, "its codes %d %d %d", codes[0], codes[1], codes[2]);
	CHECK(inter == MPI_COMM_WORLD, "intercomm written on failure");
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
	CHECK(flag && *u >= 1, "universe size");
	universe = flag ? *u : 1;
	rc = MPI_Comm_spawn(self, wargs, universe + 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
			    MPI_ERRCODES_IGNORE);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_SPAWN, "more than the universe: class %d", cls);
	/* soft: the largest count that fits is started (here 0 of 1000:0). */
	MPI_Info_create(&info);
	MPI_Info_set(info, "soft", "1000:0");
	rc = MPI_Comm_spawn(self, wargs, 1000, info, 0, MPI_COMM_WORLD, &inter,
			    MPI_ERRCODES_IGNORE);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_SPAWN, "soft with nothing that fits: class %d", cls);
	MPI_Info_set(info, "host", "no-such-host.invalid");
	rc = MPI_Comm_spawn(self, wargs, 1, info, 0, MPI_COMM_WORLD, &inter, codes);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_SPAWN && codes[0] == MPI_ERR_SPAWN, "another host: class %d", cls);
	MPI_Info_free(&info);
	rc = MPI_Comm_spawn(self, wargs, 1, MPI_INFO_NULL, 5, MPI_COMM_WORLD, &inter, codes);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_ROOT, "a bad root: class %d", cls);
	rc = MPI_Comm_spawn(self, wargs, -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_ARG, "maxprocs -1: class %d", cls);
	printf("errors: missing program, no room, soft, host, root, maxprocs\n");
	return 0;
}

/* bipload --host HERE:3 -sz 1 (or --universe N, slots N): the universe is
 * the N slots (3); the children that fill it beside the parents start, one
 * more does not. */
static int parent_slots(int n)
{
	char *wargs[] = { "worker_pool", NULL };
	MPI_Comm inter;
	int *u, flag, rc, cls, stop = 0, w, size, k;

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	k = n - size;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
	CHECK(flag && *u == n, "MPI_UNIVERSE_SIZE %d, expected the %d slots", flag ? *u : -1, n);
	if (k < 1) {
		CHECK(0, "%d slots for %d processes: no room to test", n, size);
		return 0;
	}
	CHECK(MPI_Comm_spawn(self, wargs, k, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
			     MPI_ERRCODES_IGNORE) == MPI_SUCCESS, "%d children in %d slots", k, n);
	for (w = 0; w < k; w++)
		MPI_Send(&stop, 1, MPI_INT, w, 2, inter);
	MPI_Comm_disconnect(&inter);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Comm_spawn(self, wargs, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
			    MPI_ERRCODES_IGNORE);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_SPAWN, "one process more than %d slots: class %d", n, cls);
	printf("slots: a universe of %d, %d children, one more refused\n", n, k);
	return 0;
}

/* A child that crashes after MPI_Init ends the job (bipload, as for any
 * process); the parent waits for a message that never comes. */
static int parent_crash(void)
{
	char *wargs[] = { "worker_crash", NULL };
	MPI_Comm inter;
	int x;

	MPI_Comm_spawn(self, wargs, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
		       MPI_ERRCODES_IGNORE);
	MPI_Recv(&x, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
	return 3;
}

/* A job that cannot grow (under srun, or whose driver is not shm): the
 * spawn fails with MPI_ERR_SPAWN, says why, and nothing hangs. */
static int parent_refused(void)
{
	char *wargs[] = { "worker_pool", NULL };
	char msg[MPI_MAX_ERROR_STRING];
	MPI_Comm inter = MPI_COMM_NULL;
	int codes[2] = { -1, -1 }, rc, cls, len, rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Comm_spawn(self, wargs, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, msg, &len);
	CHECK(cls == MPI_ERR_SPAWN, "class %d", cls);
	CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN, "codes %d %d", codes[0],
	      codes[1]);
	CHECK(inter == MPI_COMM_NULL, "intercomm written");
	/* Why is on stderr, in BIP's words ("this job cannot grow: ..."). */
	if (rank == 0)
		printf("spawn refused: %s\n", msg);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int rc = 0, all;

	self = argv[0];
	MPI_Init(&argc, &argv);
	if (!strcmp(what, "worker_basic"))
		rc = worker_basic(argc, argv);
	else if (!strcmp(what, "multi_a") || !strcmp(what, "multi_b"))
		rc = worker_multiple(argc, argv);
	else if (!strcmp(what, "worker_pool"))
		rc = worker_pool();
	else if (!strcmp(what, "worker_hosts"))
		rc = worker_hosts(argc, argv);
	else if (!strcmp(what, "hosts"))
		rc = parent_hosts(argc - 2, argv + 2);
	else if (!strcmp(what, "basic"))
		rc = parent_basic();
	else if (!strcmp(what, "multiple"))
		rc = parent_multiple();
	else if (!strcmp(what, "pool"))
		rc = parent_pool();
	else if (!strcmp(what, "errors"))
		rc = parent_errors();
	else if (!strcmp(what, "refused"))
		rc = parent_refused();
	else if (!strcmp(what, "crash"))
		rc = parent_crash();
	else if (!strcmp(what, "slots"))
		rc = parent_slots(argc > 2 ? atoi(argv[2]) : 3);
	else if (!strcmp(what, "worker_crash"))
		abort();
	else
		fprintf(stderr, "usage: spawn basic | multiple | pool | errors\n"), rc = 2;
	MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return rc ? rc : all ? 1 : 0;
}
