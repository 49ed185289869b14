/* SPDX-License-Identifier: MIT */
/*
 * mpi_coll.c - latency of small collectives, in plain MPI, to compare the
 * MPI shim with MPI libraries on the same machine (compare_mpi.sh).
 *
 *   mpiexec -n P ./mpi_coll [-i ITERS] [-b BATCHES] [-B BYTES] [-c NAME] [--csv]
 *   bipload -sz P ./mpi_coll ...
 *
 * For each collective: one checked call, one untimed warm-up batch, then
 * BATCHES timed batches of ITERS calls each, every batch starting from a
 * barrier.  A batch's value is the slowest rank's time divided by ITERS,
 * in microseconds; the median of the batches is printed.  A batch is cut
 * to about SECONDS (-t) when ITERS calls would take longer, as they do
 * with more processes than cores, so that every run ends in bounded time.
 *
 *   barrier     MPI_Barrier
 *   allreduce   MPI_Allreduce of BYTES (8: one double), MPI_SUM
 *   bcast       MPI_Bcast of BYTES from rank 0
 *   reduce      MPI_Reduce of BYTES to rank 0, MPI_SUM
 *   allgather   MPI_Allgather of BYTES per rank
 *   alltoall    MPI_Alltoall of BYTES per pair
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	long iters;
	double batch_time; /* seconds a batch should take at most, about */
	int batches;
	int bytes; /* a multiple of 8: doubles */
	int only;  /* -c: this collective alone, or -1 for all */
	int csv;
};

static int rank, size;

enum coll { BARRIER, ALLREDUCE, BCAST, REDUCE, ALLGATHER, ALLTOALL, NCOLL };

static const char *const names[NCOLL] = { "barrier", "allreduce", "bcast",
					   "reduce", "allgather", "alltoall" };

static void usage(const char *prog, FILE *f)
{
	fprintf(f,
		"usage: %s [-i ITERS] [-t SECONDS] [-b BATCHES] [-B BYTES] [-c NAME] [--csv]\n"
		"  -i ITERS    calls per batch (default 2000)\n"
		"  -t SECONDS  fewer calls per batch if ITERS would take longer (default 0.2)\n"
		"  -b BATCHES  timed batches; the median is printed (default 7)\n"
		"  -B BYTES    data per collective, a multiple of 8 (default 8)\n"
		"  -c NAME     only this collective (barrier, allreduce, bcast, reduce,\n"
		"              allgather or alltoall), as for a profiler\n"
		"  --csv       print comma-separated values\n",
		prog);
}

static long number(const char *prog, const char *opt, const char *s)
{
	char *end;
	long v = strtol(s ? s : "", &end, 0);

	if (!s || !*s || *end || v <= 0) {
		if (rank == 0)
			fprintf(stderr, "%s: %s needs a positive number\n", prog, opt);
		MPI_Finalize();
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	int i;

	o->iters = 2000;
	o->batch_time = 0.2;
	o->batches = 7;
	o->bytes = 8;
	o->only = -1;
	o->csv = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i < argc - 1 ? argv[i + 1] : NULL;

		if (!strcmp(a, "-i")) {
			o->iters = number(argv[0], a, next);
			i++;
		} else if (!strcmp(a, "-t")) {
			char *end;

			o->batch_time = strtod(next ? next : "", &end);
			if (!next || *end || o->batch_time <= 0) {
				if (rank == 0)
					fprintf(stderr, "%s: -t needs a positive number\n", argv[0]);
				MPI_Finalize();
				exit(2);
			}
			i++;
		} else if (!strcmp(a, "-b")) {
			o->batches = (int)number(argv[0], a, next);
			i++;
		} else if (!strcmp(a, "-B")) {
			o->bytes = (int)number(argv[0], a, next);
			i++;
		} else if (!strcmp(a, "-c")) {
			for (o->only = 0; o->only < NCOLL; o->only++)
				if (next && !strcmp(next, names[o->only]))
					break;
			if (o->only == NCOLL) {
				if (rank == 0)
					fprintf(stderr, "%s: -c needs one of barrier, allreduce, "
						"bcast, reduce, allgather, alltoall\n", argv[0]);
				MPI_Finalize();
				exit(2);
			}
			i++;
		} else if (!strcmp(a, "--csv")) {
			o->csv = 1;
		} else {
			if (rank == 0) {
				if (strcmp(a, "-h") && strcmp(a, "--help"))
					fprintf(stderr, "%s: unknown option '%s'\n", argv[0], a);
				usage(argv[0], strcmp(a, "-h") && strcmp(a, "--help") ? stderr : stdout);
			}
			MPI_Finalize();
			exit(strcmp(a, "-h") && strcmp(a, "--help") ? 2 : 0);
		}
	}
	if (o->bytes % 8) {
		if (rank == 0)
			fprintf(stderr, "%s: BYTES must be a multiple of 8\n", argv[0]);
		MPI_Finalize();
		exit(2);
	}
}

static void call(enum coll c, double *s, double *d, int n)
{
	switch (c) {
	case BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case ALLREDUCE:
		MPI_Allreduce(s, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case BCAST:
		MPI_Bcast(s, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		break;
	case REDUCE:
		MPI_Reduce(s, d, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		break;
	case ALLGATHER:
		MPI_Allgather(s, n, MPI_DOUBLE, d, n, MPI_DOUBLE, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		MPI_Alltoall(s, n, MPI_DOUBLE, d, n, MPI_DOUBLE, MPI_COMM_WORLD);
		break;
	default:
		break;
	}
}

static void die_check(enum coll c, int i, double got, double want)
{
	fprintf(stderr, "mpi_coll: rank %d: %s: element %d is %g, expected %g\n", rank, names[c],
		i, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One call with known data, its result checked. */
static void check(enum coll c, double *s, double *d, int n)
{
	int i, j;

	for (i = 0; i < n * size; i++) {
		s[i] = rank * 1000.0 + i;
		d[i] = -1;
	}
	call(c, s, d, n);
	for (i = 0; i < n; i++) {
		double sum = size * (size - 1) / 2 * 1000.0 + (double)size * i;

		switch (c) {
		case ALLREDUCE:
			if (d[i] != sum)
				die_check(c, i, d[i], sum);
			break;
		case REDUCE:
			if (rank == 0 && d[i] != sum)
				die_check(c, i, d[i], sum);
			break;
		case BCAST:
			if (s[i] != i)
				die_check(c, i, s[i], i);
			break;
		case ALLGATHER:
			for (j = 0; j < size; j++)
				if (d[j * n + i] != j * 1000.0 + i)
					die_check(c, j * n + i, d[j * n + i], j * 1000.0 + i);
			break;
		case ALLTOALL:
			for (j = 0; j < size; j++)
				if (d[j * n + i] != j * 1000.0 + rank * n + i)
					die_check(c, j * n + i, d[j * n + i],
						  j * 1000.0 + rank * n + i);
			break;
		default:
			break;
		}
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The slowest rank's time for iters calls, in seconds. */
static double batch(enum coll c, double *s, double *d, int n, long iters)
{
	double t0, dt, slowest;
	long i;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < iters; i++)
		call(c, s, d, n);
	dt = MPI_Wtime() - t0;
	MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return slowest;
}

/* Microseconds per call: the median over batches of the slowest rank. */
static double measure(const struct opts *o, enum coll c, double *s, double *d, int n)
{
	double *t = calloc(o->batches, sizeof(*t)), med, probe;
	long iters = o->iters;
	int b;

	/* Every rank gets the same probe time, so they agree on iters. */
	probe = batch(c, s, d, n, 10) / 10;
	if (probe * iters > o->batch_time)
		iters = (long)(o->batch_time / probe);
	if (iters < 10)
		iters = 10;
	for (b = -1; b < o->batches; b++) {
		double dt = batch(c, s, d, n, iters);

		if (b >= 0)
			t[b] = dt / iters * 1e6;
	}
	qsort(t, o->batches, sizeof(*t), cmp);
	med = o->batches % 2 ? t[o->batches / 2] :
			       (t[o->batches / 2 - 1] + t[o->batches / 2]) / 2;
	free(t);
	return med;
}

int main(int argc, char **argv)
{
	struct opts o;
	double *s, *d;
	int c, n;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	parse(argc, argv, &o);
	n = o.bytes / 8;
	s = calloc((size_t)n * size, sizeof(double));
	d = calloc((size_t)n * size, sizeof(double));
	if (!s || !d) {
		fprintf(stderr, "mpi_coll: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0) {
		if (o.csv)
			printf("collective,bytes,procs,latency_us\n");
		else
			printf("# MPI collectives, %d processes, up to %ld calls per batch (about "
			       "%.2f s at most), median of %d batches\n# %-10s %8s %12s\n",
			       size, o.iters, o.batch_time, o.batches, "collective", "bytes",
			       "latency_us");
		fflush(stdout);
	}
	for (c = 0; c < NCOLL; c++) {
		int bytes = c == BARRIER ? 0 : o.bytes;
		double us;

		if (o.only >= 0 && c != o.only)
			continue;
		check(c, s, d, n);
		us = measure(&o, c, s, d, n);
		if (rank == 0) {
			if (o.csv)
				printf("%s,%d,%d,%.3f\n", names[c], bytes, size, us);
			else
				printf("  %-10s %8d %12.3f\n", names[c], bytes, us);
			fflush(stdout);
		}
	}
	free(s);
	free(d);
	MPI_Finalize();
	return 0;
}
