/* SPDX-License-Identifier: MIT */
/*
 * floor.c - the floor under the ping-pong benchmarks: what two processors
 * of this machine take to hand each other one cache line, and how fast
 * memcpy copies at each message size.  No library is involved; the
 * comparison scripts print every BIP, MPI or libfabric figure as a ratio
 * to these.
 *
 *   floor [-s MIN] [-S MAX] [-i ITERS] [-b RUNS] [-m ARENA] [-L MS] [--parsable]
 *
 * Round trip.  Two threads, pinned to the first two processors that the
 * process may run on, share one counter alone in its cache line.  The
 * first thread turns an even value into the next odd one and waits for
 * the counter to be even again; the second turns every odd value into the
 * next even one.  A run is ITERS round trips after a warm-up, timed in
 * slices of 100; its half round trip is the median slice's time divided
 * by 200, so that the few slices in which a thread was descheduled (other
 * work on a busy machine) do not count.  The median of RUNS runs is
 * printed.  A run that takes longer than MS milliseconds (the other thread
 * was not running: the machine is busy) is abandoned.  With fewer than two
 * processors, or when fewer than half the runs finish, it says that the
 * round trip cannot be measured and prints no figure for it.
 *
 * Copy.  One thread memcpy's SIZE bytes from one buffer into another, over
 * and over at the same place, as a ping-pong reuses its buffers: the data
 * stays in a cache when it fits there, as it does for the libraries the
 * scripts measure (the limit for shm bandwidth is this hot copy).
 * With -m ARENA the copies walk instead through two buffers of ARENA bytes
 * (at least MAX), each at the offset where the previous one ended,
 * wrapping at the end: with ARENA above the last-level cache the data
 * comes from memory, the floor of a copy that no cache helps.  A batch is
 * about 32 MiB (at least one copy); its value is bytes over time in GB/s
 * (10^9 bytes/s), the median of RUNS batches after an untimed one.
 *
 * The floor latency of a size is the half round trip plus the time memcpy
 * takes for that size: a message from one processor to another needs at
 * least one hand-over of a cache line and one copy.
 *
 * Sizes are the powers of two from MIN (rounded up to one) to MAX, as in
 * bip_pingpong.  The output is a table by default; with --parsable, lines
 * for the scripts:
 *
 *   cpus A B                          (or "cpus - REASON")
 *   half_rtt_us US                    (or "half_rtt_us - REASON")
 *   size BYTES LATENCY_US BANDWIDTH_GBPS   (LATENCY_US "-" without round trip)
 *
 * Exit status: 0, 1 if memory cannot be had, 2 on a bad option.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PROG "floor"
#define LINE 64
#define MIB (1ul << 20)
#define BATCH_BYTES (32 * MIB)
#define WARMUP_TRIPS 1000
#define SLICE 100 /* round trips timed together */
#define MAX_RUNS 101

struct opts {
	size_t min, max;
	long iters;       /* round trips per run */
	int runs;         /* runs of the round trip, batches of each copy size */
	size_t arena;     /* -m: bytes of each buffer to walk through; 0: copy in place */
	long limit_ms;    /* longest round-trip run */
	int parsable;
};

/* The shared counter and the stop flag, each alone in its cache line. */
struct bounce {
	_Alignas(LINE) atomic_ulong counter;
	_Alignas(LINE) atomic_int stop;
	_Alignas(LINE) int cpu;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [-s MIN] [-S MAX] [-i ITERS] [-b RUNS] [-m ARENA] [-L MS] [--parsable]\n"
		"  -s MIN       smallest copy in bytes (default 4)\n"
		"  -S MAX       largest copy in bytes (default 67108864)\n"
		"  -i ITERS     round trips per run (default 20000)\n"
		"  -b RUNS      runs of the round trip and batches per copy size; the median\n"
		"               is printed (default 7, at most %d)\n"
		"  -m ARENA     walk through two buffers of ARENA bytes (at least MAX, at\n"
		"               most 4 GiB) instead of copying in place (the default)\n"
		"  -L MS        a round-trip run longer than this is abandoned (default 500)\n"
		"  --parsable   'cpus', 'half_rtt_us' and 'size BYTES LATENCY_US BANDWIDTH_GBPS' lines\n"
		"Sizes are the powers of two from MIN to MAX.\n", MAX_RUNS);
}

static long number(const char *opt, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s ? s : "", &end, 0);
	if (!s || !*s || *end || errno || v <= 0) {
		fprintf(stderr, PROG ": %s needs a positive number, not '%s'\n", opt, s ? s : "");
		usage(stderr);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ .min = 4, .max = 64 * MIB, .iters = 20000, .runs = 7,
			    .limit_ms = 500 };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i < argc - 1 ? argv[i + 1] : NULL;

		if (!strcmp(a, "--parsable")) {
			o->parsable = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(a, "-s"))
			o->min = number(a, v);
		else if (!strcmp(a, "-S"))
			o->max = number(a, v);
		else if (!strcmp(a, "-i"))
			o->iters = number(a, v);
		else if (!strcmp(a, "-b"))
			o->runs = number(a, v) > MAX_RUNS ? MAX_RUNS + 1 : (int)number(a, v);
		else if (!strcmp(a, "-m"))
			o->arena = number(a, v);
		else if (!strcmp(a, "-L"))
			o->limit_ms = number(a, v);
		else {
			fprintf(stderr, PROG ": unknown option '%s'\n", a);
			usage(stderr);
			exit(2);
		}
		i++;
	}
	if (o->min > o->max || o->max > (1ul << 30)) {
		fprintf(stderr, PROG ": need MIN <= MAX <= 1 GiB\n");
		exit(2);
	}
	if (o->runs > MAX_RUNS) {
		fprintf(stderr, PROG ": RUNS is at most %d\n", MAX_RUNS);
		exit(2);
	}
	if (o->arena > (4ul << 30)) {
		fprintf(stderr, PROG ": ARENA is at most 4 GiB\n");
		exit(2);
	}
	if (o->arena && o->arena < o->max) {
		fprintf(stderr, PROG ": ARENA (%zu) is smaller than MAX (%zu)\n", o->arena, o->max);
		exit(2);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int pin(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(t, sizeof(set), &set);
}

/* The second thread: every odd value becomes the next even one. */
static void *responder(void *arg)
{
	struct bounce *b = arg;
	unsigned long v;

	if (pin(pthread_self(), b->cpu))
		atomic_store(&b->stop, 2);
	for (;;) {
		v = atomic_load_explicit(&b->counter, memory_order_acquire);
		if (v & 1) {
			atomic_store_explicit(&b->counter, v + 1, memory_order_release);
			continue;
		}
		if (atomic_load_explicit(&b->stop, memory_order_relaxed))
			return NULL;
		relax();
	}
}

/*
 * N round trips from this thread, in slices of LEN, the time of each slice
 * in slice[] (if not NULL); 0, or -1 if the deadline passed first or the
 * other thread stopped (it could not be pinned).
 */
static int trips(struct bounce *b, long n, long len, double deadline, double *slice)
{
	unsigned long v = atomic_load_explicit(&b->counter, memory_order_relaxed);
	double t, t0 = now();
	long i;

	for (i = 1; i <= n; i++) {
		atomic_store_explicit(&b->counter, v + 1, memory_order_release);
		v += 2;
		while (atomic_load_explicit(&b->counter, memory_order_acquire) != v) {
			if (atomic_load_explicit(&b->stop, memory_order_relaxed))
				return -1;
			relax();
		}
		if (i % len)
			continue;
		t = now();
		if (slice)
			slice[i / len - 1] = t - t0;
		if (t > deadline)
			return -1;
		t0 = t;
	}
	return 0;
}

/*
 * One run on CPUs a and b: the half round trip in us of the median slice,
 * or -1 if the run was abandoned.
 */
static double rtt_run(const struct opts *o, int a, int b)
{
	static struct bounce bo;
	long len = o->iters < SLICE ? o->iters : SLICE, n = o->iters / len;
	double *slice, r = -1;
	pthread_t t;
	int rc;

	slice = malloc(n * sizeof(*slice));
	if (!slice) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	atomic_store(&bo.counter, 0);
	atomic_store(&bo.stop, 0);
	bo.cpu = b;
	if (pin(pthread_self(), a)) {
		free(slice);
		return -1;
	}
	rc = pthread_create(&t, NULL, responder, &bo);
	if (rc) {
		fprintf(stderr, PROG ": pthread_create: %s\n", strerror(rc));
		exit(1);
	}
	{
		double deadline = now() + o->limit_ms * 1e-3;

		rc = trips(&bo, WARMUP_TRIPS, WARMUP_TRIPS, deadline, NULL);
		if (!rc)
			rc = trips(&bo, n * len, len, deadline, slice);
	}
	if (!atomic_load(&bo.stop))
		atomic_store(&bo.stop, 1);
	pthread_join(t, NULL);
	if (!rc)
		r = median(slice, n) * 1e6 / (2.0 * len);
	free(slice);
	return r;
}

/*
 * The half round trip in us, or -1 with *why saying why not; *cpu_a and
 * *cpu_b the processors used (-1 if there are not two).
 */
static double half_rtt(const struct opts *o, int *cpu_a, int *cpu_b, int *done,
		       const char **why)
{
	static char reason[160];
	double v[MAX_RUNS];
	cpu_set_t mine;
	int i, n = 0;

	*cpu_a = *cpu_b = -1;
	*done = 0;
	if (sched_getaffinity(0, sizeof(mine), &mine)) {
		snprintf(reason, sizeof(reason), "sched_getaffinity: %s", strerror(errno));
		*why = reason;
		return -1;
	}
	for (i = 0; i < CPU_SETSIZE && *cpu_b < 0; i++)
		if (CPU_ISSET(i, &mine)) {
			if (*cpu_a < 0)
				*cpu_a = i;
			else
				*cpu_b = i;
		}
	if (*cpu_b < 0) {
		*why = "this process may run on one processor only, it needs two";
		*cpu_a = -1;
		return -1;
	}
	for (i = 0; i < o->runs; i++) {
		double r = rtt_run(o, *cpu_a, *cpu_b);

		if (r > 0)
			v[n++] = r;
	}
	sched_setaffinity(0, sizeof(mine), &mine);
	*done = n;
	if (2 * n < o->runs) {
		snprintf(reason, sizeof(reason),
			 "only %d of %d runs finished within %ld ms (a busy machine, or a processor that cannot be used)",
			 n, o->runs, o->limit_ms);
		*why = reason;
		return -1;
	}
	return median(v, n);
}

static char *buffer(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, PROG ": mmap of %zu bytes: %s\n", bytes, strerror(errno));
		exit(1);
	}
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	memset(p, 0x5a, bytes);
	return p;
}

struct arena {
	char *src, *dst;
	size_t bytes, off;
	int walk;         /* -m: walk through the buffers; else copy in place */
};

/* One batch of copies of SIZE bytes; GB/s. */
static double copy_batch(struct arena *ar, size_t size)
{
	long n = size >= BATCH_BYTES ? 1 : (long)(BATCH_BYTES / size), i;
	double t0, t1;

	t0 = now();
	for (i = 0; i < n; i++) {
		if (!ar->walk || ar->off + size > ar->bytes)
			ar->off = 0;
		memcpy(ar->dst + ar->off, ar->src + ar->off, size);
		__asm__ __volatile__("" : : "r"(ar->dst) : "memory");
		ar->off += size;
	}
	t1 = now();
	return (double)n * size / (t1 - t0) / 1e9;
}

static double copy_bw(const struct opts *o, struct arena *ar, size_t size)
{
	double v[MAX_RUNS];
	int i;

	copy_batch(ar, size);
	for (i = 0; i < o->runs; i++)
		v[i] = copy_batch(ar, size);
	return median(v, o->runs);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct arena ar = { 0 };
	const char *why = NULL;
	int a, b, done;
	double h;
	size_t s;

	parse(argc, argv, &o);
	h = half_rtt(&o, &a, &b, &done, &why);
	if (h < 0)
		fprintf(stderr, PROG ": the round trip cannot be measured: %s\n", why);
	ar.walk = o.arena > 0;
	ar.bytes = ar.walk ? o.arena : o.max;
	ar.src = buffer(ar.bytes);
	ar.dst = buffer(ar.bytes);

	if (o.parsable) {
		if (a >= 0)
			printf("cpus %d %d\n", a, b);
		else
			printf("cpus - %s\n", why);
		if (h > 0)
			printf("half_rtt_us %.4f\n", h);
		else
			printf("half_rtt_us - %s\n", why);
	} else {
		if (h > 0)
			printf("# half round trip of one cache line between processors %d and %d: %.4f us\n"
			       "# (median of %d runs of %ld round trips)\n", a, b, h, done, o.iters);
		else
			printf("# half round trip of one cache line: cannot be measured: %s\n", why);
		if (ar.walk)
			printf("# memcpy walking through two buffers of %zu MiB, one thread;\n",
			       ar.bytes / MIB);
		else
			printf("# memcpy in place between two buffers of the size, one thread;\n");
		printf("# latency_us: the half round trip plus one copy; median of %d batches\n",
		       o.runs);
		printf("%12s %12s %14s\n", "bytes", "latency_us", "memcpy_GBps");
	}
	for (s = 4; s < o.min; s <<= 1)
		;
	for (; s <= o.max; s <<= 1) {
		double bw = copy_bw(&o, &ar, s);
		char lat[32] = "-";

		if (h > 0)
			snprintf(lat, sizeof(lat), "%.4f", h + s / (bw * 1e3));
		if (o.parsable)
			printf("size %zu %s %.4f\n", s, lat, bw);
		else
			printf("%12zu %12s %14.3f\n", s, lat, bw);
		fflush(stdout);
	}
	return 0;
}
