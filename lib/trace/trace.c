/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the tracer's state: its start at MPI_Init, the buffers of
 * events, and the writing of this rank's piece (trace_piece.h).
 *
 * libbip_trace is preloaded (LD_PRELOAD) into the processes of a job by
 * bipload --trace, or by hand (bip_trace(7)); its MPI_ functions take the
 * place of the shim's, which are weak aliases of the PMPI_ ones (the
 * profiling interface), and its bip_layer_send and bip_layer_register
 * take the place of libbip's (trace_bip.c).  Nothing happens unless
 * BIP_TRACE names the trace (FILE): MPI_Init then turns tracing on
 * (trace_on), and from there each wrapper records.
 *
 * The piece.  Each rank keeps its events in memory (trace.h) and writes
 * them once, to FILE/ranks/RANK, by plain write(2) calls so that the same
 * code serves from a signal handler:
 *   - at MPI_Finalize (the piece is complete);
 *   - on SIGTERM or SIGINT (what bipload sends to stop a job, --timeout
 *     included): the handlers, installed only when tracing, write the
 *     piece, with the call the main thread was inside as ending at the
 *     signal, then put back the previous disposition and raise the signal
 *     again;
 *   - at exit, for a program that ends without MPI_Finalize.
 * A process killed by SIGKILL (after bipload's grace) writes nothing.
 * bipload (or biptrace by hand) merges the pieces afterwards.
 *
 * The clocks.  Times are CLOCK_MONOTONIC nanoseconds in the pieces.  On
 * a processor whose time-stamp counter is invariant (CPUID 0x80000007,
 * EDX bit 8: the rate does not change with frequency or sleep states),
 * events are stamped with the counter (trace.h, trace_now), and the flush
 * turns the counter into CLOCK_MONOTONIC by the straight line through two
 * pairs of readings of both clocks, taken at MPI_Init and at the flush;
 * elsewhere, events read CLOCK_MONOTONIC directly.  At MPI_Init each
 * rank other than 0 measures the offset of its clock to rank 0's, in
 * TRACE_SYNC_ROUNDS ping-pongs through PMPI on a duplicate of
 * MPI_COMM_WORLD: for each, offset = t0 - (ta + tb) / 2 (ta, tb this
 * rank's times around the round, t0 rank 0's time in the middle); the
 * round with the shortest round trip wins.  Ranks of one host share the
 * clock and get an offset within a round trip of 0.  The messages of
 * these rounds are in the trace (BIP messages inside MPI_Init).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <mpi.h>
#include <bip.h>

#include "trace.h"
#include "trace_regions.h"

#define TRACE_SYNC_ROUNDS 8
#define TRACE_SYNC_TAG 1

int trace_on;
int trace_tsc;
__thread struct trace_tls trace_tls __attribute__((tls_model("initial-exec")));

static struct {
	pthread_mutex_t lock;          /* threads */
	struct trace_thread *threads;
	char path[PATH_MAX];           /* FILE/ranks/RANK */
	int rank, size;
	int64_t clock_offset;
	int written;                   /* the piece is written */
	int lost;                      /* events lost for want of memory */
	struct sigaction old_term, old_int;
	uint64_t tsc0, mono0;          /* a reading of both clocks at MPI_Init */
} tr = { .lock = PTHREAD_MUTEX_INITIALIZER, .rank = -1 };

/* Where events go once memory is short: overwritten, never written. */
static struct trace_chunk spill_chunk;
static struct trace_thread spill_thread = { .first = &spill_chunk, .last = &spill_chunk };

static void lose_events(void)
{
	if (!tr.lost++)
		fprintf(stderr, "bip_trace: out of memory: rank %d records no more events\n",
			tr.rank);
	spill_chunk.n = 0;
}

/*
 * A new chunk (trace.h): TRACE_CHUNK_BYTES aligned on their size (mapped
 * with room to spare, the spare unmapped), offered to the kernel as a huge
 * page, and filled now, not at the faults of the events; NULL if memory is
 * short.
 */
static struct trace_chunk *new_chunk(void)
{
	size_t len = TRACE_CHUNK_BYTES, i;
	char *m = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;
	struct trace_chunk *c;

	if (m == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)m + len - 1) & ~(uintptr_t)(len - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + len < m + 2 * len)
		munmap(a + len, (size_t)(m + 2 * len - (a + len)));
	madvise(a, len, MADV_HUGEPAGE); /* a hint: 4 KiB pages without it */
	for (i = 0; i < len; i += 4096)
		((volatile char *)a)[i] = 0;
	c = (struct trace_chunk *)a;
	c->next = NULL;
	c->n = 0;
	return c;
}

struct trace_event *trace_slot_slow(void)
{
	struct trace_thread *th = trace_tls.self;
	struct trace_chunk *c;

	if (th == &spill_thread) {
		spill_chunk.n = 0;
		return &spill_chunk.ev[0];
	}
	c = new_chunk();
	if (!th) {
		th = calloc(1, sizeof(*th));
		if (!th || !c) {
			free(th);
			if (c)
				munmap(c, TRACE_CHUNK_BYTES);
			lose_events();
			trace_tls.self = &spill_thread;
			return &spill_chunk.ev[0];
		}
		th->first = th->last = c;
		pthread_mutex_lock(&tr.lock);
		th->next = tr.threads;
		tr.threads = th;
		pthread_mutex_unlock(&tr.lock);
		trace_tls.self = th;
		return &c->ev[0];
	}
	if (!c) {
		lose_events();
		trace_tls.self = &spill_thread;
		return &spill_chunk.ev[0];
	}
	th->last->next = c;
	th->last = c;
	return &c->ev[0];
}

/* Both clocks read as close together as this thread can: the counter
 * between two readings of CLOCK_MONOTONIC, the closest of three tries. */
static void read_both(uint64_t *tsc, uint64_t *mono)
{
#if defined(__x86_64__)
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t a = trace_mono(), t = __rdtsc(), b = trace_mono();

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*mono = a + (b - a) / 2;
		}
	}
#else
	*tsc = *mono = trace_mono();
#endif
}

void trace_clock_init(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	trace_tsc = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#endif
	read_both(&tr.tsc0, &tr.mono0);
}

/* A time of trace_now as CLOCK_MONOTONIC, by the line through (tsc0,
 * mono0) and (tsc1, mono1). */
static uint64_t to_mono(uint64_t t, uint64_t tsc1, uint64_t mono1)
{
	int64_t dt = (int64_t)(t - tr.tsc0);
	__int128 ns = (__int128)dt * (__int128)(mono1 - tr.mono0) / (__int128)(tsc1 - tr.tsc0);

	return tr.mono0 + (uint64_t)(int64_t)ns;
}

static int is_call(const struct trace_event *e)
{
	return e->kind >= TRACE_EV_CALL && e->kind <= TRACE_EV_CALL_COLL;
}

/*
 * The events stamped TRACE_T_LATER get the exit time of the call recorded
 * next on their thread (trace.h); those after the thread's last call, that
 * of the call a signal cut (open_call, on this thread) or the time of the
 * flush.  Before convert_times: in the clock of trace_now.
 */
static void fill_later(const struct trace_event *open_call)
{
	uint64_t now = trace_now();
	struct trace_thread *th;

	for (th = tr.threads; th; th = th->next) {
		struct trace_chunk *c, *from_c = NULL;
		unsigned i, from_i = 0;
		uint64_t last;

		for (c = th->first; c; c = c->next)
			for (i = 0; i < c->n; i++) {
				struct trace_event *e = &c->ev[i];

				if (!is_call(e)) {
					if (e->t0 == TRACE_T_LATER && !from_c) {
						from_c = c;
						from_i = i;
					}
					continue;
				}
				if (!from_c)
					continue;
				for (; from_c; from_c = from_c->next, from_i = 0) {
					unsigned end = from_c == c ? i : from_c->n;

					for (; from_i < end; from_i++)
						if (from_c->ev[from_i].t0 == TRACE_T_LATER)
							from_c->ev[from_i].t0 = e->t1;
					if (from_c == c)
						break;
				}
				from_c = NULL;
			}
		last = open_call && th == trace_tls.self ? open_call->t1 : now;
		for (; from_c; from_c = from_c->next, from_i = 0)
			for (; from_i < from_c->n; from_i++)
				if (from_c->ev[from_i].t0 == TRACE_T_LATER)
					from_c->ev[from_i].t0 = last;
	}
}

/* Every event's times as CLOCK_MONOTONIC, once, at the flush. */
static void convert_times(struct trace_event *open_call)
{
	struct trace_thread *th;
	struct trace_chunk *c;
	uint64_t tsc1, mono1;
	unsigned i;

	if (!trace_tsc)
		return;
	read_both(&tsc1, &mono1);
	if (tsc1 <= tr.tsc0 || mono1 <= tr.mono0)
		return;
	for (th = tr.threads; th; th = th->next)
		for (c = th->first; c; c = c->next)
			for (i = 0; i < c->n; i++) {
				c->ev[i].t0 = to_mono(c->ev[i].t0, tsc1, mono1);
				c->ev[i].t1 = to_mono(c->ev[i].t1, tsc1, mono1);
			}
	if (open_call) {
		open_call->t0 = to_mono(open_call->t0, tsc1, mono1);
		open_call->t1 = to_mono(open_call->t1, tsc1, mono1);
	}
}

/* write(2) all of buf: 0 or -1. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Write the piece.  Safe in a signal handler: no allocation, no stdio,
 * no lock (the list of threads is read as it is; a thread added at that
 * very moment is left out).
 */
void trace_flush(int complete)
{
	struct trace_piece_header h = {
		.magic = TRACE_PIECE_MAGIC,
		.version = TRACE_PIECE_VERSION,
		.nregions = TRACE_NREGIONS,
		.rank = tr.rank,
		.size = tr.size,
		.node = bip_mynode,
		.complete = (uint32_t)complete,
		.clock_offset = tr.clock_offset,
	};
	struct trace_event open_call;
	struct trace_thread *th;
	struct trace_chunk *c;
	int fd, with_open = 0;

	if (tr.written || tr.rank < 0)
		return;
	tr.written = 1;
	trace_on = 0;
	if (!complete && trace_tls.cur_region) {
		memset(&open_call, 0, sizeof(open_call));
		open_call.kind = TRACE_EV_CALL;
		open_call.region = (uint16_t)(trace_tls.cur_region - 1);
		open_call.t0 = trace_tls.cur_t0;
		open_call.t1 = trace_now();
		with_open = 1;
	}
	fill_later(with_open ? &open_call : NULL);
	convert_times(with_open ? &open_call : NULL);
	for (th = tr.threads; th; th = th->next)
		for (c = th->first; c; c = c->next)
			h.nevents += c->n;
	h.nevents += (uint64_t)with_open;
	gethostname(h.host, sizeof(h.host) - 1);

	fd = open(tr.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (write_all(fd, &h, sizeof(h)) < 0)
		goto fail_close;
	for (th = tr.threads; th; th = th->next)
		for (c = th->first; c; c = c->next)
			if (write_all(fd, c->ev, c->n * sizeof(c->ev[0])) < 0)
				goto fail_close;
	if (with_open && write_all(fd, &open_call, sizeof(open_call)) < 0)
		goto fail_close;
	if (close(fd) < 0)
		goto fail;
	return;

fail_close:
	close(fd);
fail:
	{
		static const char msg[] = "bip_trace: cannot write this rank's piece of the trace\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			return;
	}
}

static void on_signal(int sig)
{
	int saved = errno;

	trace_flush(0);
	sigaction(SIGTERM, &tr.old_term, NULL);
	sigaction(SIGINT, &tr.old_int, NULL);
	errno = saved;
	raise(sig);
}

static void at_exit(void)
{
	trace_flush(0);
}

/* The offset of this rank's clock to rank 0's (see the header). */
static void measure_clock_offset(void)
{
	MPI_Comm comm;
	uint64_t t[2];
	int r, i;

	if (tr.size < 2 || PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
		return;
	if (tr.rank == 0) {
		for (r = 1; r < tr.size; r++)
			for (i = 0; i < TRACE_SYNC_ROUNDS; i++) {
				PMPI_Recv(t, 0, MPI_BYTE, r, TRACE_SYNC_TAG, comm, MPI_STATUS_IGNORE);
				t[0] = trace_mono();
				PMPI_Send(t, 1, MPI_UINT64_T, r, TRACE_SYNC_TAG, comm);
			}
	} else {
		uint64_t best = UINT64_MAX;

		for (i = 0; i < TRACE_SYNC_ROUNDS; i++) {
			uint64_t ta = trace_mono(), tb;

			PMPI_Send(t, 0, MPI_BYTE, 0, TRACE_SYNC_TAG, comm);
			PMPI_Recv(t, 1, MPI_UINT64_T, 0, TRACE_SYNC_TAG, comm, MPI_STATUS_IGNORE);
			tb = trace_mono();
			if (tb - ta < best) {
				best = tb - ta;
				tr.clock_offset = (int64_t)(t[0] - (ta + (tb - ta) / 2));
			}
		}
	}
	PMPI_Comm_free(&comm);
}

/*
 * Called by MPI_Init's wrappers once PMPI_Init has returned; tracing was
 * turned on before it (trace_mpi.c) so that the shim's registration with
 * BIP is seen.  Without a usable BIP_TRACE it turns tracing off again.
 */
void trace_start(void)
{
	const char *file = getenv("BIP_TRACE");
	struct sigaction sa;
	MPI_Comm parent;

	if (!file || !*file) {
		trace_on = 0;
		return;
	}
	/* A spawned job has ranks of its own, which would write over the
	 * pieces of its parents' ranks: it is not traced. */
	if (PMPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent != MPI_COMM_NULL) {
		trace_on = 0;
		return;
	}
	PMPI_Comm_rank(MPI_COMM_WORLD, &tr.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &tr.size);
	if ((size_t)snprintf(tr.path, sizeof(tr.path), "%s/ranks", file) >= sizeof(tr.path))
		goto refuse;
	/* bipload made the folders; by hand (srun), the ranks make them. */
	if ((mkdir(file, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(tr.path, 0755) < 0 && errno != EEXIST))
		goto refuse;
	if ((size_t)snprintf(tr.path, sizeof(tr.path), "%s/ranks/%d", file, tr.rank) >=
	    sizeof(tr.path))
		goto refuse;
	measure_clock_offset();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &tr.old_term);
	sigaction(SIGINT, &sa, &tr.old_int);
	atexit(at_exit);
	return;

refuse:
	if (tr.rank == 0)
		fprintf(stderr, "bip_trace: BIP_TRACE=%s: cannot make %s: %s; no trace\n", file,
			tr.path, strerror(errno));
	tr.rank = -1;
	trace_on = 0;
}
