/* SPDX-License-Identifier: MIT */
/*
 * mpi_threads.c - what threads cost and what they give, in plain MPI, to
 * compare the MPI shim with MPI libraries on the same machine
 * (compare_threads.sh).  Three modes:
 *
 *   mpiexec -n 2 ./mpi_threads latency [-t LEVEL] [-x IDLE] [-s BYTES] [-i ITERS] [-b B] [--csv]
 *   mpiexec -n 2 ./mpi_threads rate [-T THREADS] [-w WINDOW] [-s BYTES] [-i WINDOWS] [-b B] [--csv]
 *   mpiexec -n P ./mpi_threads overlap [-t LEVEL] [-c MS] [-a BYTES] [-p BYTES] [-b B] [--csv]
 *
 * latency: the 8-byte ping-pong of mpi_pingpong (MPI_Send/MPI_Recv on one
 *   tag, half the round trip, in microseconds) after MPI_Init_thread with
 *   the level LEVEL (single, funneled, serialized, multiple; default
 *   single), so that one run with -t single and one with -t multiple show
 *   what thread support costs one thread.  -x IDLE starts IDLE more
 *   threads that make no MPI call and sleep until the end (the process is
 *   then multi-threaded, as it is when the application has threads).
 * rate: T threads per process on ranks 0 and 1 (MPI_THREAD_MULTIPLE; with
 *   one thread, any level will do), thread i of rank 0 sending to thread i
 *   of rank 1 on a communicator of their own (MPI_Comm_dup'd by the main
 *   thread before the threads start).  A window is WINDOW messages of
 *   BYTES (default 64 of 8): rank 1 has their MPI_Irecv posted, rank 0
 *   posts the MPI_Isend and MPI_Waitall; once all are in, rank 1 posts the
 *   receives of the next window and only then sends a 4-byte
 *   acknowledgement, which rank 0 waits for before the next window.  A
 *   batch is WINDOWS windows on every thread, started together (a
 *   barrier of the processes, then of the threads); its value is all the
 *   threads' messages divided by the time until the last thread is done:
 *   messages per second, summed over the threads.
 * overlap: how much of an operation goes on while the process computes,
 *   as the OSU benchmarks define it, for MPI_Iallreduce of ABYTES
 *   (doubles, MPI_SUM, all ranks; default 1 MiB) and for MPI_Isend/MPI_Irecv
 *   of PBYTES from rank 0 to rank 1 (default 4 MiB).  The computation is a
 *   busy loop without library calls, calibrated to MS milliseconds (default
 *   10) on rank 0.  In a batch, each rank times the loop alone
 *   (t_compute), each operation alone, post then wait (t_pure), and post,
 *   loop, wait (t_total); a value is the slowest rank's.  With the median
 *   of each over the batches,
 *       overlap = max(0, 100 * (1 - (t_total - t_compute) / t_pure)) %:
 *   0 if the operation waited for the wait, 100 if it was done during the
 *   loop.  The default level is multiple, the one a progress thread of
 *   the library (BIP_PROGRESS_THREAD=1, MPICH's MPIR_CVAR_ASYNC_PROGRESS=1)
 *   may need.
 *
 * Every mode first checks its data once, untimed (the ping-pong message
 * and its echo, every message of the first window and its order, the sum
 * of the allreduce, the long message), then runs one untimed warm-up
 * batch and BATCHES timed ones (default 7); the medians are printed by
 * rank 0.  Ranks beyond the first two take no part in latency and rate.
 * A wrong option, too few processes, or a thread level below what the
 * mode needs is reported by rank 0 on stderr, and every rank exits with
 * status 2 (bad use) or 1 (level not provided), after MPI_Finalize.
 */
#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "mpi_threads"
#define MAX_THREADS 64
#define MAX_WINDOW 1024
#define TAG_PING 1
#define TAG_DATA 2
#define TAG_ACK 3

enum mode { LATENCY, RATE, OVERLAP };

struct opts {
	enum mode mode;
	int level;         /* asked of MPI_Init_thread */
	int idle;          /* latency: threads that make no MPI call */
	long bytes;        /* latency, rate: message size */
	long iters;        /* latency: round trips per batch; rate: windows per batch */
	double limit;      /* latency, rate: about the longest batch, seconds */
	int threads;       /* rate: threads per process */
	int window;        /* rate: messages in flight per thread */
	int batches;
	double compute_ms; /* overlap: the busy loop */
	long abytes;       /* overlap: MPI_Iallreduce */
	long pbytes;       /* overlap: MPI_Isend */
	int csv;
};

static int rank, size;

static const char *const level_names[] = { "single", "funneled", "serialized", "multiple" };
static const char *const level_macros[] = { "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
					    "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE" };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " latency [-t LEVEL] [-x IDLE] [-s BYTES] [-i ITERS] [-L MS] [-b BATCHES]\n"
		"            [--csv]\n"
		"       " PROG " rate [-T THREADS] [-w WINDOW] [-s BYTES] [-i WINDOWS] [-L MS] [-b BATCHES]\n"
		"            [--csv]\n"
		"       " PROG " overlap [-t LEVEL] [-c MS] [-a BYTES] [-p BYTES] [-b BATCHES] [--csv]\n"
		"  -t LEVEL    MPI_Init_thread's request: single, funneled, serialized, multiple\n"
		"              (default: single for latency, multiple for overlap; rate asks multiple)\n"
		"  -x IDLE     latency: IDLE threads that sleep, making no MPI call (default 0)\n"
		"  -s BYTES    message size (default 8; rate: at least 8)\n"
		"  -i N        latency: round trips per batch (default 10000);\n"
		"              rate: windows per batch and thread (default 200)\n"
		"  -L MS       latency, rate: fewer per batch if N would take longer (default 200)\n"
		"  -T THREADS  rate: threads per process, at most %d (default 1)\n"
		"  -w WINDOW   rate: messages in flight per thread, at most %d (default 64)\n"
		"  -c MS       overlap: milliseconds of computation (default 10)\n"
		"  -a BYTES    overlap: MPI_Iallreduce size, doubles (default 1048576)\n"
		"  -p BYTES    overlap: MPI_Isend size from rank 0 to 1 (default 4194304)\n"
		"  -b BATCHES  timed batches; the median is printed (default 7)\n"
		"  --csv       print comma-separated values\n",
		MAX_THREADS, MAX_WINDOW);
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

static void *alloc(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, bytes ? bytes : 8)) {
		fprintf(stderr, PROG ": rank %d: cannot allocate %zu bytes\n", rank, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(p, 0, bytes); /* fault the pages in before timing */
	return p;
}

/* A wrong datum or a failed resource: the whole job ends. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": rank %d: %s\n", rank, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- options ---- */

/* A number in [lo, hi] into *v; 0, or -1 with the reason in err. */
static int number(const char *opt, const char *s, long lo, long hi, long *v, char *err, size_t n)
{
	char *end;

	*v = strtol(s ? s : "", &end, 0);
	if (!s || !*s || *end || *v < lo || *v > hi) {
		snprintf(err, n, "%s needs a number from %ld to %ld", opt, lo, hi);
		return -1;
	}
	return 0;
}

static int level_of(const char *s)
{
	int i;

	for (i = 0; s && i < 4; i++)
		if (!strcmp(s, level_names[i]))
			return MPI_THREAD_SINGLE + i;
	return -1;
}

/* Which modes take an option: a mask of 1 << mode. */
static int option_modes(const char *a)
{
	static const struct {
		const char *name;
		int modes;
	} tab[] = {
		{ "-t", 1 << LATENCY | 1 << OVERLAP }, { "-x", 1 << LATENCY },
		{ "-s", 1 << LATENCY | 1 << RATE },    { "-i", 1 << LATENCY | 1 << RATE },
		{ "-T", 1 << RATE },                   { "-w", 1 << RATE },
		{ "-c", 1 << OVERLAP },                { "-a", 1 << OVERLAP },
		{ "-p", 1 << OVERLAP },                { "-b", 7 },
		{ "-L", 1 << LATENCY | 1 << RATE },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(a, tab[i].name))
			return tab[i].modes;
	return 0;
}

/* One option with its value; 0, or -1 with the reason in err. */
static int option(struct opts *o, const char *a, const char *v, char *err, size_t n)
{
	long x = 0;
	int rc = 0;

	if (!strcmp(a, "-t")) {
		if ((o->level = level_of(v)) < 0) {
			snprintf(err, n, "-t needs single, funneled, serialized or multiple");
			return -1;
		}
		return 0;
	}
	switch (a[1]) {
	case 'x': rc = number(a, v, 0, MAX_THREADS, &x, err, n); o->idle = (int)x; break;
	case 's': rc = number(a, v, 1, 1 << 24, &x, err, n); o->bytes = x; break;
	case 'i': rc = number(a, v, 1, 100000000, &x, err, n); o->iters = x; break;
	case 'T': rc = number(a, v, 1, MAX_THREADS, &x, err, n); o->threads = (int)x; break;
	case 'w': rc = number(a, v, 1, MAX_WINDOW, &x, err, n); o->window = (int)x; break;
	case 'c': rc = number(a, v, 1, 10000, &x, err, n); o->compute_ms = (double)x; break;
	case 'a': rc = number(a, v, 8, 1 << 28, &x, err, n); o->abytes = x; break;
	case 'p': rc = number(a, v, 1, 1 << 30, &x, err, n); o->pbytes = x; break;
	case 'b': rc = number(a, v, 1, 1000, &x, err, n); o->batches = (int)x; break;
	case 'L': rc = number(a, v, 1, 60000, &x, err, n); o->limit = x * 1e-3; break;
	}
	return rc;
}

/* 0, 1 for --help, or -1 with the reason in err. */
static int parse(int argc, char **argv, struct opts *o, char *err, size_t n)
{
	static const char *const modes[] = { "latency", "rate", "overlap" };
	int i, m;

	memset(o, 0, sizeof(*o));
	o->bytes = 8;
	o->threads = 1;
	o->window = 64;
	o->batches = 7;
	o->limit = 0.2;
	o->compute_ms = 10;
	o->abytes = 1 << 20;
	o->pbytes = 4 << 20;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return 1;
	for (m = 0; argc > 1 && m < 3; m++)
		if (!strcmp(argv[1], modes[m]))
			break;
	if (argc < 2 || m == 3) {
		snprintf(err, n, "the first argument must be latency, rate or overlap%s%s%s",
			 argc > 1 ? " (not '" : "", argc > 1 ? argv[1] : "", argc > 1 ? "')" : "");
		return -1;
	}
	o->mode = (enum mode)m;
	o->level = m == LATENCY ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE;
	o->iters = m == LATENCY ? 10000 : 200;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		int ok = option_modes(a);

		if (!strcmp(a, "--csv")) {
			o->csv = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			return 1;
		} else if (!ok) {
			snprintf(err, n, "unknown option '%s'", a);
			return -1;
		} else if (!(ok & 1 << m)) {
			snprintf(err, n, "%s is not an option of %s", a, modes[m]);
			return -1;
		} else if (option(o, a, i + 1 < argc ? argv[++i] : NULL, err, n)) {
			return -1;
		}
	}
	if (m == RATE && o->bytes < 8) {
		snprintf(err, n, "rate needs messages of at least 8 bytes (-s)");
		return -1;
	}
	if (m == OVERLAP && o->abytes % 8) {
		snprintf(err, n, "-a must be a multiple of 8 bytes (doubles)");
		return -1;
	}
	if (o->idle && o->level == MPI_THREAD_SINGLE) {
		snprintf(err, n, "-x needs a thread level above single (-t funneled or more)");
		return -1;
	}
	return 0;
}

/* ---- latency ---- */

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int idle_stop;

static void *idle_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&idle_lock);
	while (!idle_stop)
		pthread_cond_wait(&idle_cond, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	return NULL;
}

static unsigned char pattern(long bytes, long i)
{
	return (unsigned char)(i * 131 + bytes * 7 + 1);
}

static void check_bytes(const unsigned char *buf, long bytes, const char *what)
{
	long i;

	for (i = 0; i < bytes; i++)
		if (buf[i] != pattern(bytes, i))
			fail("%s of %ld bytes: byte %ld is 0x%02x, expected 0x%02x", what, bytes, i,
			     buf[i], pattern(bytes, i));
}

static void check_count(MPI_Status *st, MPI_Datatype type, long want, const char *what)
{
	int got;

	MPI_Get_count(st, type, &got);
	if (got != want)
		fail("%s: received %d elements, expected %ld", what, got, want);
}

/* One checked exchange: rank 1 checks the message, rank 0 the echo. */
static void latency_check(long bytes, unsigned char *sbuf, unsigned char *rbuf)
{
	MPI_Status st;
	int cnt = (int)bytes, peer = 1 - rank;
	long i;

	for (i = 0; i < bytes; i++)
		sbuf[i] = pattern(bytes, i);
	if (rank == 0)
		MPI_Send(sbuf, cnt, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
	MPI_Recv(rbuf, cnt, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, &st);
	check_count(&st, MPI_BYTE, bytes, rank == 0 ? "echo" : "message");
	check_bytes(rbuf, bytes, rank == 0 ? "echo" : "message");
	if (rank == 1)
		MPI_Send(rbuf, cnt, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
}

/* The iterations of a timed batch, after a warm-up of n that took t
 * seconds: ITERS, or fewer (at least 10) if a batch would take longer
 * than about LIMIT, as it does on a busy machine. */
static long fit(const struct opts *o, double t, long n)
{
	double per = t / n;
	long it = o->iters;

	if (per * it > o->limit)
		it = (long)(o->limit / per);
	if (it < 10)
		it = o->iters < 10 ? o->iters : 10;
	return it;
}

/* n round trips; seconds. */
static double pingpong(long n, int cnt, unsigned char *sbuf, unsigned char *rbuf)
{
	double t0 = now();
	long i;

	for (i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(sbuf, cnt, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
			MPI_Recv(rbuf, cnt, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, cnt, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(rbuf, cnt, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD);
		}
	}
	return now() - t0;
}

/* The median one-way time in microseconds; *iters, round trips per batch. */
static double latency_batches(const struct opts *o, unsigned char *sbuf, unsigned char *rbuf,
			      long *iters)
{
	double *samples = calloc((size_t)o->batches, sizeof(double));
	long probe = o->iters < 100 ? o->iters : 100, n;
	int cnt = (int)o->bytes, b;
	double t, med;

	if (!samples)
		fail("latency: out of memory");
	/* The warm-up; rank 0 then says how many round trips a batch has. */
	t = pingpong(probe, cnt, sbuf, rbuf);
	n = fit(o, t, probe);
	if (rank == 0)
		MPI_Send(&n, 1, MPI_LONG, 1, TAG_ACK, MPI_COMM_WORLD);
	else
		MPI_Recv(&n, 1, MPI_LONG, 0, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (n < 1 || n > o->iters)
		fail("latency: rank 0 said %ld round trips per batch", n);
	for (b = 0; b < o->batches; b++)
		samples[b] = pingpong(n, cnt, sbuf, rbuf) / (2.0 * n) * 1e6;
	med = median(samples, o->batches);
	free(samples);
	*iters = n;
	return med;
}

static void latency(const struct opts *o, int provided)
{
	pthread_t idle[MAX_THREADS];
	unsigned char *sbuf, *rbuf;
	double lat;
	long iters;
	int i;

	if (rank > 1)
		return;
	for (i = 0; i < o->idle; i++)
		if (pthread_create(&idle[i], NULL, idle_main, NULL))
			fail("latency: pthread_create failed");
	sbuf = alloc((size_t)o->bytes);
	rbuf = alloc((size_t)o->bytes);
	latency_check(o->bytes, sbuf, rbuf);
	lat = latency_batches(o, sbuf, rbuf, &iters);
	pthread_mutex_lock(&idle_lock);
	idle_stop = 1;
	pthread_cond_broadcast(&idle_cond);
	pthread_mutex_unlock(&idle_lock);
	for (i = 0; i < o->idle; i++)
		pthread_join(idle[i], NULL);
	free(sbuf);
	free(rbuf);
	if (rank != 0)
		return;
	if (o->csv) {
		printf("mode,level,provided,idle_threads,bytes,latency_us\n");
		printf("latency,%s,%s,%d,%ld,%.3f\n", level_names[o->level], level_names[provided],
		       o->idle, o->bytes, lat);
	} else {
		printf("# " PROG " latency: 2 processes, %s asked, %s provided, "
		       "%d idle thread(s), median of %d batches of %ld round trips\n",
		       level_macros[o->level], level_macros[provided], o->idle, o->batches, iters);
		printf("# %10s %14s\n", "bytes", "latency_us");
		printf("  %10ld %14.3f\n", o->bytes, lat);
	}
}

/* ---- rate ---- */

struct rate_thread {
	const struct opts *o;
	int index;
	MPI_Comm comm;
	pthread_t tid;
	unsigned char *buf; /* window x bytes: rank 0's to send, rank 1's to receive */
	MPI_Request *req;
	MPI_Status *st;
	double t_end;
};

static pthread_barrier_t rate_bar;
static MPI_Comm rate_pair; /* ranks 0 and 1 */
static double rate_t0;
static long rate_n; /* windows per batch and thread */
static double *rate_samples;
static struct rate_thread *rate_th;

/* Message k of thread i: its first two words say (i, k), the rest the pattern. */
static void rate_fill(unsigned char *m, long bytes, int i, int k)
{
	int w[2] = { i, k };
	long j;

	for (j = 8; j < bytes; j++)
		m[j] = pattern(bytes, j);
	memcpy(m, w, sizeof(w));
}

static void rate_check(const struct rate_thread *t)
{
	const struct opts *o = t->o;
	int k, w[2];

	for (k = 0; k < o->window; k++) {
		const unsigned char *m = t->buf + (size_t)k * o->bytes;
		long j;

		check_count(&t->st[k], MPI_BYTE, o->bytes, "rate message");
		memcpy(w, m, sizeof(w));
		if (w[0] != t->index || w[1] != k)
			fail("rate: thread %d: message %d of the first window says it is "
			     "message %d of thread %d", t->index, k, w[1], w[0]);
		for (j = 8; j < o->bytes; j++)
			if (m[j] != pattern(o->bytes, j))
				fail("rate: thread %d: byte %ld of message %d is 0x%02x, expected 0x%02x",
				     t->index, j, k, m[j], pattern(o->bytes, j));
	}
}

static void rate_post(struct rate_thread *t)
{
	const struct opts *o = t->o;
	int k;

	for (k = 0; k < o->window; k++)
		MPI_Irecv(t->buf + (size_t)k * o->bytes, (int)o->bytes, MPI_BYTE, 0, TAG_DATA,
			  t->comm, &t->req[k]);
}

/* Rank 0: a window, its completion and the acknowledgement. */
static void rate_send_window(struct rate_thread *t)
{
	const struct opts *o = t->o;
	int k, ack;

	for (k = 0; k < o->window; k++)
		MPI_Isend(t->buf + (size_t)k * o->bytes, (int)o->bytes, MPI_BYTE, 1, TAG_DATA,
			  t->comm, &t->req[k]);
	MPI_Waitall(o->window, t->req, t->st);
	MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, t->comm, MPI_STATUS_IGNORE);
}

/* Rank 1: the window in, the next one posted (unless last), then the ack. */
static void rate_recv_window(struct rate_thread *t, int last)
{
	int ack = 0;

	MPI_Waitall(t->o->window, t->req, t->st);
	if (!last)
		rate_post(t);
	MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, t->comm);
}

/* The processes, then the threads, start a batch together; rank 0 says
 * how many windows it has (rate_n, which the other threads read only
 * after the second barrier). */
static void rate_sync(struct rate_thread *t)
{
	pthread_barrier_wait(&rate_bar);
	if (t->index == 0) {
		MPI_Bcast(&rate_n, 1, MPI_LONG, 0, rate_pair);
		if (rate_n < 1 || rate_n > t->o->iters)
			fail("rate: rank 0 said %ld windows per batch", rate_n);
		MPI_Barrier(rate_pair);
		rate_t0 = now();
	}
	pthread_barrier_wait(&rate_bar);
}

/* Thread 0, once all are done: the batch's seconds, from the start to the
 * last thread's end. */
static double rate_elapsed(const struct opts *o)
{
	double end = 0;
	int i;

	for (i = 0; i < o->threads; i++)
		if (rate_th[i].t_end > end)
			end = rate_th[i].t_end;
	return end - rate_t0;
}

/* The warm-up batch (a few windows, which size the others), then the
 * timed batches. */
static void rate_batches(struct rate_thread *t)
{
	const struct opts *o = t->o;
	long r, probe = o->iters < 8 ? o->iters : 8;
	int b;

	if (t->index == 0)
		rate_n = probe;
	for (b = -1; b < o->batches; b++) {
		rate_sync(t);
		for (r = 0; r < rate_n; r++) {
			if (rank == 0)
				rate_send_window(t);
			else
				rate_recv_window(t, b == o->batches - 1 && r == rate_n - 1);
		}
		t->t_end = now();
		pthread_barrier_wait(&rate_bar);
		if (t->index == 0 && b < 0 && rank == 0)
			rate_n = fit(o, rate_elapsed(o), probe);
		else if (t->index == 0 && b >= 0)
			rate_samples[b] = (double)o->threads * rate_n * o->window / rate_elapsed(o);
	}
}

static void *rate_main(void *arg)
{
	struct rate_thread *t = arg;
	int k, ack = 0;

	/* The checked window; rank 1 posts first and says so. */
	if (rank == 0) {
		for (k = 0; k < t->o->window; k++)
			rate_fill(t->buf + (size_t)k * t->o->bytes, t->o->bytes, t->index, k);
		MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, t->comm, MPI_STATUS_IGNORE);
		rate_send_window(t);
	} else {
		rate_post(t);
		MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, t->comm);
		MPI_Waitall(t->o->window, t->req, t->st);
		rate_check(t);
		rate_post(t);
		MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, t->comm);
	}
	rate_batches(t);
	return NULL;
}

static void rate_setup(const struct opts *o)
{
	int i;

	rate_th = calloc((size_t)o->threads, sizeof(*rate_th));
	rate_samples = calloc((size_t)o->batches, sizeof(double));
	if (!rate_th || !rate_samples)
		fail("rate: out of memory");
	for (i = 0; i < o->threads; i++) {
		struct rate_thread *t = &rate_th[i];

		t->o = o;
		t->index = i;
		MPI_Comm_dup(rate_pair, &t->comm);
		t->buf = alloc((size_t)o->window * o->bytes);
		t->req = calloc((size_t)o->window, sizeof(*t->req));
		t->st = calloc((size_t)o->window, sizeof(*t->st));
		if (!t->req || !t->st)
			fail("rate: out of memory");
	}
	if (pthread_barrier_init(&rate_bar, NULL, (unsigned)o->threads))
		fail("rate: pthread_barrier_init failed");
}

static void rate_report(const struct opts *o)
{
	double mps = median(rate_samples, o->batches);

	if (o->csv) {
		printf("mode,threads,bytes,window,msgs_per_s\n");
		printf("rate,%d,%ld,%d,%.0f\n", o->threads, o->bytes, o->window, mps);
	} else {
		printf("# " PROG " rate: 2 processes, %d thread(s) each, window %d, "
		       "median of %d batches of %ld windows per thread\n",
		       o->threads, o->window, o->batches, rate_n);
		printf("# %10s %8s %16s\n", "bytes", "threads", "messages_per_s");
		printf("  %10ld %8d %16.0f\n", o->bytes, o->threads, mps);
	}
}

static void rate(const struct opts *o)
{
	int i;

	/* Ranks 0 and 1 only: their own communicator, then one per thread. */
	MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &rate_pair);
	if (rate_pair == MPI_COMM_NULL)
		return;
	rate_setup(o);
	for (i = 1; i < o->threads; i++)
		if (pthread_create(&rate_th[i].tid, NULL, rate_main, &rate_th[i]))
			fail("rate: pthread_create failed");
	rate_main(&rate_th[0]);
	for (i = 1; i < o->threads; i++)
		pthread_join(rate_th[i].tid, NULL);
	if (rank == 0)
		rate_report(o);
	for (i = 0; i < o->threads; i++) {
		MPI_Comm_free(&rate_th[i].comm);
		free(rate_th[i].buf);
		free(rate_th[i].req);
		free(rate_th[i].st);
	}
	pthread_barrier_destroy(&rate_bar);
	MPI_Comm_free(&rate_pair);
	free(rate_th);
	free(rate_samples);
}

/* ---- overlap ---- */

static volatile double busy_sink;

/* The computation: a chain of dependent floating-point operations that no
 * compiler may shorten, and no call. */
static void busy(long n)
{
	double x = 0;
	long i;

	for (i = 0; i < n; i++)
		x = x * 0.999999 + 1.0;
	busy_sink = x;
}

/* Iterations of busy() that take about ms milliseconds: the fastest of
 * five tries of a loop long enough to time, scaled. */
static long calibrate(double ms)
{
	long n = 10000;
	double t, best = 0;
	int i;

	do {
		n *= 2;
		t = now();
		busy(n);
		t = now() - t;
	} while (t < 2e-3 && n < (1L << 40));
	for (i = 0; i < 5; i++) {
		t = now();
		busy(n);
		t = now() - t;
		if (i == 0 || t < best)
			best = t;
	}
	return (long)(n * (ms * 1e-3) / best) + 1;
}

struct overlap_bufs {
	double *asend, *arecv;
	int acount;
	unsigned char *p;
	int pcount;
};

/* Post and wait an operation; with n > 0, compute n iterations between. */
static void overlap_op(int op, struct overlap_bufs *ob, long n)
{
	MPI_Request req = MPI_REQUEST_NULL;

	if (op == 0)
		MPI_Iallreduce(ob->asend, ob->arecv, ob->acount, MPI_DOUBLE, MPI_SUM,
			       MPI_COMM_WORLD, &req);
	else if (rank == 0)
		MPI_Isend(ob->p, ob->pcount, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req);
	else if (rank == 1)
		MPI_Irecv(ob->p, ob->pcount, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &req);
	else
		return; /* the point-to-point is between ranks 0 and 1 only */
	if (n > 0)
		busy(n);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* Each operation once, checked: the allreduce's every element, the long
 * message's every byte. */
static void overlap_check(struct overlap_bufs *ob)
{
	MPI_Request req;
	MPI_Status st;
	int i;

	for (i = 0; i < ob->acount; i++)
		ob->asend[i] = rank + i % 1000;
	MPI_Iallreduce(ob->asend, ob->arecv, ob->acount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
		       &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	for (i = 0; i < ob->acount; i++)
		if (ob->arecv[i] != (double)size * (size - 1) / 2 + (double)size * (i % 1000))
			fail("iallreduce: element %d of the sum is %g, expected %g", i, ob->arecv[i],
			     (double)size * (size - 1) / 2 + (double)size * (i % 1000));
	if (rank > 1)
		return;
	for (i = 0; i < ob->pcount; i++)
		ob->p[i] = rank == 0 ? pattern(ob->pcount, i) : 0;
	if (rank == 0) {
		MPI_Isend(ob->p, ob->pcount, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else {
		MPI_Irecv(ob->p, ob->pcount, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, &st);
		check_count(&st, MPI_BYTE, ob->pcount, "isend");
		check_bytes(ob->p, ob->pcount, "isend");
	}
}

/* A timed step from a barrier: the slowest rank's seconds, on rank 0. */
static double overlap_step(int op, struct overlap_bufs *ob, long n)
{
	double t, slowest = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	t = now();
	if (op < 0)
		busy(n);
	else
		overlap_op(op, ob, n);
	t = now() - t;
	MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	return slowest;
}

static void overlap_report(const struct opts *o, double *s[5])
{
	static const char *const name[2] = { "iallreduce", "isend" };
	double tc = median(s[0], o->batches);
	int op;

	if (o->csv)
		printf("mode,op,bytes,compute_us,pure_us,total_us,overlap_pct\n");
	else
		printf("# " PROG " overlap: %d processes, %.0f ms of computation, "
		       "median of %d batches, the slowest rank's times\n"
		       "# %-10s %10s %12s %12s %12s %9s\n",
		       size, o->compute_ms, o->batches, "op", "bytes", "compute_us", "pure_us",
		       "total_us", "overlap_%");
	for (op = 0; op < 2; op++) {
		double tp = median(s[1 + 2 * op], o->batches);
		double tt = median(s[2 + 2 * op], o->batches);
		double ov = 100 * (1 - (tt - tc) / tp);
		long bytes = op == 0 ? o->abytes : o->pbytes;

		if (ov < 0)
			ov = 0;
		printf(o->csv ? "overlap,%s,%ld,%.1f,%.1f,%.1f,%.1f\n" :
				"  %-10s %10ld %12.1f %12.1f %12.1f %9.1f\n",
		       name[op], bytes, tc * 1e6, tp * 1e6, tt * 1e6, ov);
	}
}

static void overlap(const struct opts *o)
{
	struct overlap_bufs ob;
	double *s[5];
	long n = 0;
	int b, op, i;

	ob.acount = (int)(o->abytes / 8);
	ob.asend = alloc((size_t)o->abytes);
	ob.arecv = alloc((size_t)o->abytes);
	ob.pcount = (int)o->pbytes;
	ob.p = rank < 2 ? alloc((size_t)o->pbytes) : NULL;
	for (i = 0; i < 5; i++)
		if (!(s[i] = calloc((size_t)o->batches, sizeof(double))))
			fail("overlap: out of memory");
	if (rank == 0)
		n = calibrate(o->compute_ms);
	MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	overlap_check(&ob);
	for (b = -1; b < o->batches; b++) {
		double v[5];

		v[0] = overlap_step(-1, &ob, n);
		for (op = 0; op < 2; op++) {
			v[1 + 2 * op] = overlap_step(op, &ob, 0);
			v[2 + 2 * op] = overlap_step(op, &ob, n);
		}
		for (i = 0; b >= 0 && i < 5; i++)
			s[i][b] = v[i];
	}
	if (rank == 0)
		overlap_report(o, s);
	for (i = 0; i < 5; i++)
		free(s[i]);
	free(ob.asend);
	free(ob.arecv);
	free(ob.p);
}

/* ---- main ---- */

/* A reason not to run, said by rank 0; every rank ends with status rc,
 * after rank 0 has said it (a launcher may stop the others as soon as
 * one ends with an error). */
static int refuse(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(int rc, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (rank == 0) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		fprintf(stderr, PROG ": %s\n", msg);
		if (rc == 2)
			usage(stderr);
		fflush(stderr);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[200] = "";
	int parsed = parse(argc, argv, &o, err, sizeof(err));
	int provided;

	MPI_Init_thread(&argc, &argv, parsed ? MPI_THREAD_SINGLE : o.level, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (parsed > 0) {
		if (rank == 0) {
			usage(stdout);
			fflush(stdout);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
		return 0;
	}
	if (parsed < 0)
		return refuse(2, "%s", err);
	if (size < 2)
		return refuse(2, "needs at least 2 processes, not %d", size);
	if (provided < MPI_THREAD_SINGLE || provided > MPI_THREAD_MULTIPLE)
		return refuse(1, "MPI_Init_thread provided %d, which is no thread level", provided);
	if (o.mode == RATE && o.threads > 1 && provided < MPI_THREAD_MULTIPLE)
		return refuse(1, "rate with %d threads per process needs MPI_THREAD_MULTIPLE; "
				 "the library provides %s", o.threads, level_macros[provided]);
	if (o.idle && provided < MPI_THREAD_FUNNELED)
		return refuse(1, "-x needs MPI_THREAD_FUNNELED at least; the library provides %s",
			      level_macros[provided]);
	if (o.mode == LATENCY)
		latency(&o, provided);
	else if (o.mode == RATE)
		rate(&o);
	else
		overlap(&o);
	MPI_Finalize();
	return 0;
}
