/* SPDX-License-Identifier: MIT */
/*
 * mpi_rma.c - one-sided communication (MPI_Put, MPI_Get, MPI_Accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap) between two processes, in plain
 * MPI, to compare the MPI shim with MPI libraries on the same machine
 * (compare_rma.sh).
 *
 *   mpiexec -n 2 ./mpi_rma [-s MIN] [-S MAX] [-i ITERS] [-W WINDOW] [-b BATCHES]
 *                          [-w create|allocate|dynamic] [-y lock|lock-each|fence|pscw] [--csv]
 *
 * Rank 0 is the origin, rank 1 the target; ranks beyond 1 wait in a
 * barrier.  The window lives on a communicator of ranks 0 and 1 alone.
 * For each size (the powers of two from MIN to MAX), rank 0 times:
 *
 *   put_lat   one MPI_Put of the size, then its completion
 *   get_lat   one MPI_Get, then its completion
 *   acc_lat   one MPI_Accumulate of the size in doubles (MPI_SUM), then its
 *             completion (from 8 bytes up)
 *   put_bw    WINDOW puts, then one completion (MB/s, 10^6 bytes/s)
 *   get_bw    WINDOW gets, then one completion
 *
 * and once, on 8 bytes (MPI_INT64_T):
 *
 *   fop_lat   MPI_Fetch_and_op (MPI_SUM), then its completion
 *   cas_lat   MPI_Compare_and_swap, then its completion
 *
 * The completion is the synchronisation of -y: with lock (the default), a
 * shared lock on the target held across all the batches of a measure
 * (passive target: the target waits in a barrier meanwhile) and
 * MPI_Win_flush after the operation(s); with lock-each, MPI_Win_lock
 * (shared) and MPI_Win_unlock around the operation(s) of every epoch (the
 * target waits in a barrier too); with fence, MPI_Win_fence (both
 * ranks) closing an epoch and opening the next; with pscw,
 * MPI_Win_start, the operation(s), MPI_Win_complete at the origin and
 * MPI_Win_post, MPI_Win_wait at the target.  A latency is the time of one
 * epoch of one operation (lock: operation and flush), in microseconds; a
 * bandwidth epoch holds WINDOW operations.
 *
 * The window (-w) is the target's MPI_Win_allocate (the default),
 * MPI_Win_create over its own buffer, or MPI_Win_create_dynamic with the
 * buffer attached (the origin learns its address); it holds MAX bytes
 * (at least 8) on both ranks.  All operations of a measure hit the start
 * of the window.
 *
 * As in mpi_pingpong.c (pingpong.h): every measure runs one untimed
 * warm-up batch and BATCHES timed ones, and the median of the batches is
 * printed; a batch is ITERS epochs up to 64 KiB and ITERS x 65536 / size
 * above (at least 4), a bandwidth batch about as many operations in
 * epochs of WINDOW (at least 2 epochs).  Untimed checks: after each
 * measure the target reads its window (the data put, the sums accumulated,
 * the counter of the atomics) and the origin the data got; a wrong value
 * prints the place, the value found and the value expected, and the run
 * ends with MPI_Abort and status 1.  Nothing is asserted about time.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SHRINK_FROM 65536 /* above, iteration counts shrink with the size */
#define MAX_WINDOW 4096

enum flavour { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };
enum sync { SYNC_LOCK, SYNC_LOCK_EACH, SYNC_FENCE, SYNC_PSCW };
enum op { OP_PUT, OP_GET, OP_ACC, OP_FOP, OP_CAS };

static const char *const flavour_names[] = { "create", "allocate", "dynamic" };
static const char *const sync_names[] = { "lock", "lock-each", "fence", "pscw" };

struct opts {
	size_t min, max;
	long iters;
	int window;
	int batches;
	enum flavour flavour;
	enum sync sync;
	int csv;
};

static int rank;
static MPI_Comm pair;         /* ranks 0 and 1 */
static MPI_Win win;
static MPI_Group peer_group;  /* the other rank of the pair, for pscw */
static MPI_Aint base;         /* displacement of the window's start */
static unsigned char *tbuf;   /* the window's memory, on both ranks */
static size_t tbytes;         /* its size */
static unsigned char *obuf;   /* origin: the data put and accumulated */
static unsigned char *rbuf;   /* origin: the data got */
static int64_t counter_total; /* atomics: operations done on the counter */

static void usage(const char *prog, FILE *f)
{
	fprintf(f,
		"usage: %s [-s MIN] [-S MAX] [-i ITERS] [-W WINDOW] [-b BATCHES]\n"
		"          [-w create|allocate|dynamic] [-y lock|lock-each|fence|pscw] [--csv]\n"
		"  -s MIN      smallest message in bytes (default 8)\n"
		"  -S MAX      largest message in bytes (default 4194304)\n"
		"  -i ITERS    epochs per batch up to 64 KiB, fewer above (default 1000)\n"
		"  -W WINDOW   operations per epoch in the bandwidth tests (default 16, max %d)\n"
		"  -b BATCHES  timed batches per measure; the median is printed (default 7)\n"
		"  -w FLAVOUR  the window: MPI_Win_create, _allocate (default) or _create_dynamic\n"
		"  -y SYNC     lock (MPI_Win_lock shared held, MPI_Win_flush per epoch; default),\n"
		"              lock-each (MPI_Win_lock, MPI_Win_unlock per epoch), fence or pscw\n"
		"  --csv       print comma-separated values: measure,bytes,value\n"
		"Sizes are the powers of two from MIN to MAX; accumulates from 8 bytes up.\n",
		prog, MAX_WINDOW);
}

static void bad_usage(const char *prog, const char *fmt, const char *what)
{
	if (rank == 0) {
		fprintf(stderr, "%s: ", prog);
		fprintf(stderr, fmt, what);
		fprintf(stderr, "\n");
		usage(prog, stderr);
	}
	MPI_Finalize();
	exit(2);
}

static long number(const char *prog, const char *opt, const char *s)
{
	char *end;
	long v = strtol(s ? s : "", &end, 0);

	if (!s || !*s || *end || v <= 0)
		bad_usage(prog, "%s needs a positive number", opt);
	return v;
}

static int word(const char *prog, const char *opt, const char *s,
		const char *const *names, int n)
{
	int k;

	for (k = 0; s && k < n; k++)
		if (!strcmp(s, names[k]))
			return k;
	bad_usage(prog, "%s: see the values below", opt);
	return 0;
}

static void parse(int argc, char **argv, struct opts *o)
{
	const char *prog = argv[0];
	int i;

	o->min = 8;
	o->max = 4u << 20;
	o->iters = 1000;
	o->window = 16;
	o->batches = 7;
	o->flavour = WIN_ALLOCATE;
	o->sync = SYNC_LOCK;
	o->csv = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i < argc - 1 ? argv[i + 1] : NULL;

		if (!strcmp(a, "-s"))
			o->min = number(prog, a, next), i++;
		else if (!strcmp(a, "-S"))
			o->max = number(prog, a, next), i++;
		else if (!strcmp(a, "-i"))
			o->iters = number(prog, a, next), i++;
		else if (!strcmp(a, "-W"))
			o->window = (int)number(prog, a, next), i++;
		else if (!strcmp(a, "-b"))
			o->batches = (int)number(prog, a, next), i++;
		else if (!strcmp(a, "-w"))
			o->flavour = word(prog, a, next, flavour_names, 3), i++;
		else if (!strcmp(a, "-y"))
			o->sync = word(prog, a, next, sync_names, 4), i++;
		else if (!strcmp(a, "--csv"))
			o->csv = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			if (rank == 0)
				usage(prog, stdout);
			MPI_Finalize();
			exit(0);
		} else
			bad_usage(prog, "unknown option '%s'", a);
	}
	if (o->min > o->max)
		bad_usage(prog, "%s", "need MIN <= MAX");
	if (o->max > (size_t)(1u << 30))
		bad_usage(prog, "%s", "MAX is at most 1 GiB");
	if (o->window > MAX_WINDOW)
		bad_usage(prog, "%s", "WINDOW is too large");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Epochs per latency batch: ITERS up to 64 KiB, then shrinking with size. */
static long lat_iters(const struct opts *o, size_t bytes)
{
	long n = bytes <= SHRINK_FROM ? o->iters : (long)((double)o->iters * SHRINK_FROM / bytes);

	return n < 4 ? 4 : n;
}

/* Epochs of WINDOW operations per bandwidth batch. */
static long bw_iters(const struct opts *o, size_t bytes)
{
	double ops = bytes <= SHRINK_FROM ? o->iters : (double)o->iters * SHRINK_FROM / bytes;
	long n = (long)(ops / o->window);

	return n < 2 ? 2 : n;
}

/* The byte at offset i of the data of a size. */
static inline unsigned char pattern(size_t bytes, size_t i)
{
	return (unsigned char)((i * 131u + bytes * 7u + 0x5au) ^ (i >> 8));
}

/* The double at index j the origin accumulates. */
static inline double acc_value(size_t j)
{
	return (double)(j % 7 + 1);
}

static void *alloc(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, bytes ? bytes : 8)) {
		fprintf(stderr, "mpi_rma: rank %d: cannot allocate %zu bytes\n", rank, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(p, 0, bytes); /* fault the pages in before timing */
	return p;
}

static void fail(const char *what, size_t bytes, size_t at, double got, double want)
{
	fprintf(stderr, "mpi_rma: rank %d: %s of %zu bytes: at byte %zu found %.17g, expected %.17g\n",
		rank, what, bytes, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_bytes(const unsigned char *b, size_t bytes, const char *what)
{
	size_t i;

	for (i = 0; i < bytes; i++)
		if (b[i] != pattern(bytes, i))
			fail(what, bytes, i, b[i], pattern(bytes, i));
}

/*
 * The target's own window memory, between measures (no epoch of the origin
 * open): an exclusive lock on itself, so that its loads and stores are
 * ordered with the operations of the other rank in any memory model.
 */
static void target_local_begin(void)
{
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
}

static void target_local_end(void)
{
	MPI_Win_unlock(1, win);
}

/* Issues one operation of the origin; k numbers them within a measure. */
static void issue(enum op op, size_t bytes, long k)
{
	static const int64_t one = 1;
	int64_t cmp, swap;

	switch (op) {
	case OP_PUT:
		MPI_Put(obuf, (int)bytes, MPI_BYTE, 1, base, (int)bytes, MPI_BYTE, win);
		break;
	case OP_GET:
		MPI_Get(rbuf, (int)bytes, MPI_BYTE, 1, base, (int)bytes, MPI_BYTE, win);
		break;
	case OP_ACC:
		MPI_Accumulate(obuf, (int)(bytes / 8), MPI_DOUBLE, 1, base, (int)(bytes / 8),
			       MPI_DOUBLE, MPI_SUM, win);
		break;
	case OP_FOP:
		MPI_Fetch_and_op(&one, rbuf, MPI_INT64_T, 1, base, MPI_SUM, win);
		break;
	case OP_CAS:
		/* Every swap succeeds: the counter is k before the k-th. */
		cmp = k;
		swap = k + 1;
		MPI_Compare_and_swap(&swap, &cmp, rbuf, MPI_INT64_T, 1, base, win);
		break;
	}
}

/*
 * One measure: a warm-up batch and BATCHES timed ones of n epochs of nops
 * operations each.  Returns the median batch time per epoch in seconds
 * (rank 0; 0 on rank 1).
 */
static double measure(const struct opts *o, enum op op, size_t bytes, long n, int nops)
{
	double *samples = calloc(o->batches, sizeof(*samples)), t;
	long k = 0, i;
	int b, j;

	if (!samples)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(pair);
	if (o->sync == SYNC_LOCK && rank == 0)
		MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
	if (o->sync == SYNC_FENCE)
		MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
	for (b = -1; b < o->batches; b++) {
		double t0 = now();

		if (rank == 0) {
			for (i = 0; i < n; i++) {
				if (o->sync == SYNC_PSCW)
					MPI_Win_start(peer_group, 0, win);
				else if (o->sync == SYNC_LOCK_EACH)
					MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
				for (j = 0; j < nops; j++)
					issue(op, bytes, k++);
				if (o->sync == SYNC_LOCK)
					MPI_Win_flush(1, win);
				else if (o->sync == SYNC_LOCK_EACH)
					MPI_Win_unlock(1, win);
				else if (o->sync == SYNC_FENCE)
					MPI_Win_fence(0, win);
				else
					MPI_Win_complete(win);
			}
		} else if (o->sync == SYNC_FENCE || o->sync == SYNC_PSCW) {
			for (i = 0; i < n; i++) {
				if (o->sync == SYNC_FENCE) {
					MPI_Win_fence(0, win);
				} else {
					MPI_Win_post(peer_group, 0, win);
					MPI_Win_wait(win);
				}
			}
		}
		if (b >= 0)
			samples[b] = (now() - t0) / n;
	}
	if (o->sync == SYNC_FENCE)
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	if (o->sync == SYNC_LOCK && rank == 0)
		MPI_Win_unlock(1, win);
	/* The target waits here for the origin's passive epoch. */
	MPI_Barrier(pair);
	counter_total = k;
	MPI_Bcast(&counter_total, 1, MPI_INT64_T, 0, pair);
	t = rank == 0 ? median(samples, o->batches) : 0;
	free(samples);
	return t;
}

/* The target's window before a measure: zeros, or the data of a size. */
static void target_fill(size_t bytes, int with_data)
{
	size_t i;

	if (rank == 1) {
		target_local_begin();
		if (with_data)
			for (i = 0; i < bytes; i++)
				tbuf[i] = pattern(bytes, i);
		else
			memset(tbuf, 0, bytes < 8 ? 8 : bytes);
		target_local_end();
	}
	MPI_Barrier(pair);
}

/* After a put: the target holds the data of the size. */
static void target_check_put(size_t bytes)
{
	if (rank == 1) {
		target_local_begin();
		check_bytes(tbuf, bytes, "put: target window");
		target_local_end();
	}
}

/* After the accumulates: each double is its value times the count. */
static void target_check_acc(size_t bytes)
{
	size_t j;

	if (rank == 1) {
		const double *d = (const double *)tbuf;

		target_local_begin();
		for (j = 0; j < bytes / 8; j++)
			if (d[j] != acc_value(j) * (double)counter_total)
				fail("accumulate: target window", bytes, j * 8, d[j],
				     acc_value(j) * (double)counter_total);
		target_local_end();
	}
}

/* After the atomics: the counter is the count of operations. */
static void target_check_counter(const char *what)
{
	if (rank == 1) {
		int64_t v;

		target_local_begin();
		memcpy(&v, tbuf, 8);
		target_local_end();
		if (v != counter_total)
			fail(what, 8, 0, (double)v, (double)counter_total);
	}
}

static void header(const struct opts *o)
{
	if (o->csv) {
		printf("measure,bytes,value\n");
	} else {
		printf("# MPI one-sided, 2 processes, window %s, synchronisation %s, "
		       "%d operations per bandwidth epoch, median of %d batches\n",
		       flavour_names[o->flavour], sync_names[o->sync], o->window, o->batches);
		printf("# %10s %12s %12s %12s %14s %14s\n", "bytes", "put_lat_us", "get_lat_us",
		       "acc_lat_us", "put_bw_MBps", "get_bw_MBps");
	}
	fflush(stdout);
}

static void row(const struct opts *o, size_t bytes, const double *v)
{
	static const char *const names[] = { "put_lat", "get_lat", "acc_lat", "put_bw", "get_bw" };
	int k;

	if (o->csv) {
		for (k = 0; k < 5; k++)
			if (v[k] >= 0)
				printf("%s,%zu,%.*f\n", names[k], bytes, k < 3 ? 3 : 1, v[k]);
	} else {
		printf("  %10zu", bytes);
		for (k = 0; k < 5; k++) {
			if (v[k] < 0)
				printf(" %*s", k < 3 ? 12 : 14, "-");
			else
				printf(" %*.*f", k < 3 ? 12 : 14, k < 3 ? 3 : 1, v[k]);
		}
		printf("\n");
	}
	fflush(stdout);
}

static void atomic_row(const struct opts *o, const char *name, const char *what, double us)
{
	if (o->csv)
		printf("%s,8,%.3f\n", name, us);
	else
		printf("# 8-byte %-28s %10.3f us\n", what, us);
	fflush(stdout);
}

static void run_size(const struct opts *o, size_t bytes)
{
	double v[5] = { -1, -1, -1, -1, -1 };
	long n = lat_iters(o, bytes), nbw = bw_iters(o, bytes);
	double bw_bytes = (double)bytes * o->window;
	size_t i;

	if (rank == 0)
		for (i = 0; i < bytes; i++)
			obuf[i] = pattern(bytes, i);

	/* put: into a zeroed window, checked by the target */
	target_fill(bytes, 0);
	v[0] = measure(o, OP_PUT, bytes, n, 1) * 1e6;
	target_check_put(bytes);
	target_fill(bytes, 0);
	v[3] = measure(o, OP_PUT, bytes, nbw, o->window);
	v[3] = v[3] > 0 ? bw_bytes / v[3] / 1e6 : 0;
	target_check_put(bytes);

	/* get: from the data of the size, checked by the origin */
	target_fill(bytes, 1);
	if (rank == 0)
		memset(rbuf, 0, bytes);
	v[1] = measure(o, OP_GET, bytes, n, 1) * 1e6;
	if (rank == 0)
		check_bytes(rbuf, bytes, "get: origin buffer");
	if (rank == 0)
		memset(rbuf, 0, bytes);
	v[4] = measure(o, OP_GET, bytes, nbw, o->window);
	v[4] = v[4] > 0 ? bw_bytes / v[4] / 1e6 : 0;
	if (rank == 0)
		check_bytes(rbuf, bytes, "get: origin buffer");

	/* accumulate: doubles summed into a zeroed window */
	if (bytes >= 8) {
		if (rank == 0)
			for (i = 0; i < bytes / 8; i++)
				((double *)obuf)[i] = acc_value(i);
		target_fill(bytes, 0);
		v[2] = measure(o, OP_ACC, bytes, n, 1) * 1e6;
		target_check_acc(bytes);
	}
	if (rank == 0)
		row(o, bytes, v);
}

static void run_atomics(const struct opts *o)
{
	double us;
	int64_t last;

	target_fill(8, 0);
	us = measure(o, OP_FOP, 8, o->iters, 1) * 1e6;
	target_check_counter("fetch_and_op: target counter");
	if (rank == 0) {
		memcpy(&last, rbuf, 8);
		if (last != counter_total - 1)
			fail("fetch_and_op: value fetched", 8, 0, (double)last,
			     (double)(counter_total - 1));
		atomic_row(o, "fop_lat", "MPI_Fetch_and_op (SUM)", us);
	}

	target_fill(8, 0);
	us = measure(o, OP_CAS, 8, o->iters, 1) * 1e6;
	target_check_counter("compare_and_swap: target counter");
	if (rank == 0) {
		memcpy(&last, rbuf, 8);
		if (last != counter_total - 1)
			fail("compare_and_swap: value fetched", 8, 0, (double)last,
			     (double)(counter_total - 1));
		atomic_row(o, "cas_lat", "MPI_Compare_and_swap", us);
	}
}

static void make_window(const struct opts *o)
{
	MPI_Group g;
	int other = 1 - rank;

	tbytes = o->max < 8 ? 8 : o->max;
	base = 0;
	switch (o->flavour) {
	case WIN_ALLOCATE:
		MPI_Win_allocate((MPI_Aint)tbytes, 1, MPI_INFO_NULL, pair, &tbuf, &win);
		break;
	case WIN_CREATE:
		tbuf = alloc(tbytes);
		MPI_Win_create(tbuf, (MPI_Aint)tbytes, 1, MPI_INFO_NULL, pair, &win);
		break;
	case WIN_DYNAMIC:
		tbuf = alloc(tbytes);
		MPI_Win_create_dynamic(MPI_INFO_NULL, pair, &win);
		MPI_Win_attach(win, tbuf, (MPI_Aint)tbytes);
		MPI_Get_address(tbuf, &base);
		MPI_Bcast(&base, 1, MPI_AINT, 1, pair);
		break;
	}
	MPI_Comm_group(pair, &g);
	MPI_Group_incl(g, 1, &other, &peer_group);
	MPI_Group_free(&g);
}

static void free_window(const struct opts *o)
{
	MPI_Group_free(&peer_group);
	if (o->flavour == WIN_DYNAMIC)
		MPI_Win_detach(win, tbuf);
	MPI_Win_free(&win);
	if (o->flavour != WIN_ALLOCATE)
		free(tbuf);
}

int main(int argc, char **argv)
{
	struct opts o;
	size_t bytes;
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	parse(argc, argv, &o);
	if (size < 2) {
		fprintf(stderr, "mpi_rma: needs 2 processes\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (o.max > (size_t)(1u << 31) - 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_rma: MAX must fit an int\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
	if (rank < 2) {
		make_window(&o);
		if (rank == 0) {
			obuf = alloc(o.max < 8 ? 8 : o.max);
			rbuf = alloc(o.max < 8 ? 8 : o.max);
			header(&o);
		}
		for (bytes = 1; bytes < o.min; bytes <<= 1)
			;
		for (; bytes <= o.max; bytes <<= 1)
			run_size(&o, bytes);
		run_atomics(&o);
		free_window(&o);
		free(obuf);
		free(rbuf);
		MPI_Comm_free(&pair);
	}
	/* Ranks beyond 1 take no part. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
