/* SPDX-License-Identifier: MIT */
/*
 * pingpong.h - what bip_pingpong.c and mpi_pingpong.c share: options,
 * iteration counts, the data pattern, the clock, medians and the output
 * format.  Both programs print the same table so that their results can be
 * compared line by line.
 */
#ifndef BENCH_PINGPONG_H
#define BENCH_PINGPONG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PP_MAX_WINDOW 64

struct pp_opts {
	size_t min;     /* smallest message, bytes */
	size_t max;     /* largest message, bytes */
	long iters;     /* round trips per batch for messages up to 64 KiB */
	int window;     /* messages in flight in the bandwidth test */
	int batches;    /* timed batches per size (the median is printed) */
	int csv;
};

static void pp_usage(const char *prog, FILE *f)
{
	fprintf(f,
		"usage: %s [-s MIN] [-S MAX] [-i ITERS] [-w WINDOW] [-b BATCHES] [--csv]\n"
		"  -s MIN      smallest message in bytes (default 4)\n"
		"  -S MAX      largest message in bytes (default 4194304)\n"
		"  -i ITERS    round trips per batch up to 64 KiB, fewer above (default 1000)\n"
		"  -w WINDOW   messages in flight in the bandwidth test (default 16, max %d)\n"
		"  -b BATCHES  timed batches per size; the median is printed (default 7)\n"
		"  --csv       print comma-separated values\n"
		"Sizes are the powers of two from MIN to MAX, multiples of 4 bytes.\n",
		prog, PP_MAX_WINDOW);
}

static long pp_number(const char *prog, const char *opt, const char *s)
{
	char *end;
	long v = strtol(s ? s : "", &end, 0);

	if (!s || !*s || *end || v <= 0) {
		fprintf(stderr, "%s: %s needs a positive number\n", prog, opt);
		exit(2);
	}
	return v;
}

/* Returns 0, or 1 if the program should just exit (help printed). */
static int pp_parse(int argc, char **argv, struct pp_opts *o)
{
	const char *prog = argv[0];
	int i;

	o->min = 4;
	o->max = 4u << 20;
	o->iters = 1000;
	o->window = 16;
	o->batches = 7;
	o->csv = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-s"))
			o->min = pp_number(prog, a, i < argc - 1 ? argv[++i] : NULL);
		else if (!strcmp(a, "-S"))
			o->max = pp_number(prog, a, i < argc - 1 ? argv[++i] : NULL);
		else if (!strcmp(a, "-i"))
			o->iters = pp_number(prog, a, i < argc - 1 ? argv[++i] : NULL);
		else if (!strcmp(a, "-w"))
			o->window = pp_number(prog, a, i < argc - 1 ? argv[++i] : NULL);
		else if (!strcmp(a, "-b"))
			o->batches = pp_number(prog, a, i < argc - 1 ? argv[++i] : NULL);
		else if (!strcmp(a, "--csv"))
			o->csv = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			pp_usage(prog, stdout);
			return 1;
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n", prog, a);
			pp_usage(prog, stderr);
			exit(2);
		}
	}
	if (o->min < 4)
		o->min = 4;
	if (o->min % 4 || o->max % 4 || o->min > o->max) {
		fprintf(stderr, "%s: need 4 <= MIN <= MAX, both multiples of 4 bytes\n", prog);
		exit(2);
	}
	if (o->max > (1ul << 30)) {
		fprintf(stderr, "%s: MAX is at most 1 GiB\n", prog);
		exit(2);
	}
	if (o->window > PP_MAX_WINDOW) {
		fprintf(stderr, "%s: WINDOW is at most %d\n", prog, PP_MAX_WINDOW);
		exit(2);
	}
	return 0;
}

/* Next size: powers of two, starting from MIN (rounded up to one). */
static size_t pp_first(const struct pp_opts *o)
{
	size_t s = 4;

	while (s < o->min)
		s <<= 1;
	return s;
}

/* Above this size, the iteration counts shrink in proportion to the size. */
#define PP_SHRINK_FROM 65536

/* Round trips per latency batch: ITERS up to 64 KiB, then shrinking with size. */
static long pp_lat_iters(const struct pp_opts *o, size_t bytes)
{
	long n = bytes <= PP_SHRINK_FROM ? o->iters :
		 (long)((double)o->iters * PP_SHRINK_FROM / bytes);

	return n < 4 ? 4 : n;
}

/* Windows per bandwidth batch: about ITERS messages up to 64 KiB, fewer above. */
static long pp_bw_reps(const struct pp_opts *o, size_t bytes)
{
	double msgs = bytes <= PP_SHRINK_FROM ? o->iters :
		      (double)o->iters * PP_SHRINK_FROM / bytes;
	long n = (long)(msgs / o->window);

	return n < 2 ? 2 : n;
}

/* The pattern of the checked message: depends on the size and the index. */
static inline uint32_t pp_word(size_t bytes, size_t i)
{
	return (uint32_t)(0x9e3779b9u * (i + 1)) ^ (uint32_t)(bytes * 2654435761u) ^ 0x5a5a0000u;
}

static void pp_fill(uint32_t *buf, size_t bytes)
{
	size_t i;

	for (i = 0; i < bytes / 4; i++)
		buf[i] = pp_word(bytes, i);
}

/* Returns the index of the first wrong word, or -1. */
static long pp_check(const uint32_t *buf, size_t bytes)
{
	size_t i;

	for (i = 0; i < bytes / 4; i++)
		if (buf[i] != pp_word(bytes, i))
			return (long)i;
	return -1;
}

static void *pp_alloc(const char *prog, size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, bytes ? bytes : 4)) {
		fprintf(stderr, "%s: cannot allocate %zu bytes\n", prog, bytes);
		exit(1);
	}
	memset(p, 0, bytes); /* fault the pages in before timing */
	return p;
}

static inline double pp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pp_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), pp_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void pp_header(const struct pp_opts *o, const char *impl)
{
	if (o->csv) {
		printf("bytes,latency_us,bandwidth_MBps\n");
	} else {
		printf("# %s ping-pong, 2 processes, window %d, median of %d batches\n",
		       impl, o->window, o->batches);
		printf("# %10s %14s %16s\n", "bytes", "latency_us", "bandwidth_MBps");
	}
	fflush(stdout);
}

static void pp_row(const struct pp_opts *o, size_t bytes, double lat_us, double mbps)
{
	if (o->csv)
		printf("%zu,%.3f,%.1f\n", bytes, lat_us, mbps);
	else
		printf("  %10zu %14.3f %16.1f\n", bytes, lat_us, mbps);
	fflush(stdout);
}

/* The measurements of one library, for pp_run. */
struct pp_bench {
	const char *name;
	double (*latency)(const struct pp_opts *o, size_t bytes, uint32_t *sbuf, uint32_t *rbuf,
			  double *samples);
	double (*bandwidth)(const struct pp_opts *o, size_t bytes, uint32_t *sbuf,
			    uint32_t **wbuf, double *samples);
};

/* Ranks 0 and 1: measure every size; rank 0 prints the table.  Rank 2:
 * a node between them that forwards (bip_pingpong --chain). */
static void pp_run(const char *prog, const struct pp_opts *o, int rank, const struct pp_bench *b)
{
	uint32_t *sbuf = NULL, *rbuf, *wbuf[PP_MAX_WINDOW];
	double *samples = calloc(o->batches, sizeof(*samples));
	size_t bytes;
	int k;

	rbuf = pp_alloc(prog, o->max);
	if (rank == 0) {
		sbuf = pp_alloc(prog, o->max);
		pp_header(o, b->name);
	} else {
		for (k = 0; k < o->window; k++)
			wbuf[k] = pp_alloc(prog, o->max);
	}
	for (bytes = pp_first(o); bytes <= o->max; bytes <<= 1) {
		double lat, bw;

		if (rank == 0)
			pp_fill(sbuf, bytes);
		lat = b->latency(o, bytes, sbuf, rbuf, samples);
		bw = b->bandwidth(o, bytes, sbuf, wbuf, samples);
		if (rank == 0)
			pp_row(o, bytes, lat, bw);
	}
	free(samples);
	free(rbuf);
	free(sbuf);
	if (rank != 0)
		for (k = 0; k < o->window; k++)
			free(wbuf[k]);
}

#endif /* BENCH_PINGPONG_H */
