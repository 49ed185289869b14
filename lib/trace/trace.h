/* SPDX-License-Identifier: MIT */
/*
 * trace.h - recording events in the tracer (libbip_trace, bip_trace(7)).
 *
 * Every thread appends to its own chunks of events (struct trace_thread):
 * no lock and no atomic on the way, one clock read per time.  A slot is
 * filled first and counted after (trace_commit), so that a flush from a
 * signal handler, which writes what is counted, never writes half an
 * event.  trace_on is set once, at MPI_Init, when BIP_TRACE names a file;
 * while it is 0 a wrapper does nothing but call its PMPI_ function.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "trace_piece.h"

/*
 * A chunk is one huge page of events where the kernel gives one (2 MiB,
 * transparent huge pages), mapped and filled at once: a page fault per 64
 * events would cost as much as their clock readings, and so would, in a
 * virtual machine, the page walk of a TLB miss every 64 events (measured:
 * 8-byte latency +55 ns on 4 KiB pages, +35 ns on huge ones).
 */
#define TRACE_CHUNK_BYTES (2u << 20)
#define TRACE_CHUNK_EVENTS ((TRACE_CHUNK_BYTES - 64) / sizeof(struct trace_event))

struct trace_chunk {
	struct trace_chunk *next;
	unsigned n; /* events counted */
	struct trace_event ev[TRACE_CHUNK_EVENTS];
};

_Static_assert(sizeof(struct trace_chunk) <= TRACE_CHUNK_BYTES, "a chunk in its huge page");

struct trace_thread {
	struct trace_thread *next; /* every thread that recorded, newest first */
	struct trace_chunk *first, *last;
};

extern int trace_on;
extern int trace_tsc;
/*
 * This thread's: its events, and the call it is inside (region + 1, 0:
 * none) with its entry time, which a flush on a signal records as ending
 * then.  Initial-exec: the library is loaded with the program
 * (LD_PRELOAD), so its thread-local data sits at a fixed offset from the
 * thread pointer instead of behind a call of __tls_get_addr.
 */
struct trace_tls {
	struct trace_thread *self;
	unsigned cur_region;
	uint64_t cur_t0;
};
extern __thread struct trace_tls trace_tls __attribute__((tls_model("initial-exec")));

struct trace_event *trace_slot_slow(void);

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t trace_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The time of an event: where the processor's time-stamp counter is
 * invariant (trace_tsc), the counter itself, which trace_flush turns into
 * CLOCK_MONOTONIC nanoseconds by the two pairs of readings it has of both
 * (at MPI_Init and at the flush); otherwise CLOCK_MONOTONIC.  The counter
 * costs about half as much to read as the vDSO's clock_gettime.
 */
static inline uint64_t trace_now(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(trace_tsc, 1))
		return __rdtsc();
#endif
	return trace_mono();
}

/* A free slot of this thread's chunk, zeroed fields not guaranteed. */
static inline struct trace_event *trace_slot(void)
{
	struct trace_thread *th = trace_tls.self;

	if (__builtin_expect(!th || th->last->n == TRACE_CHUNK_EVENTS, 0))
		return trace_slot_slow();
	return &th->last->ev[th->last->n];
}

/* Count the slot trace_slot gave: it is complete.  The signal fence keeps
 * the compiler from moving the stores of the slot after the count, which
 * a signal handler on this thread reads. */
static inline void trace_commit(void)
{
	__atomic_signal_fence(__ATOMIC_RELEASE);
	trace_tls.self->last->n++;
}

/*
 * The time of an event inside a call that is not worth a clock reading of
 * its own: a message's arrival, a request's completion.  The flush gives
 * it the exit time of the call recorded next on its thread, which is the
 * call it happened in (a call is recorded at its exit, after the events
 * inside it).  A message sent inside a call takes the call's entry time
 * instead (trace_tls.cur_t0).  Outside any call (a progress thread) an
 * event reads the clock.  Each reading of the counter costs about 10 ns,
 * as much as 10 % of a ping-pong's 8-byte latency: one message's path now
 * reads it three times, the entry and exit of the send and the exit of
 * the receive, where it read it five times.
 */
#define TRACE_T_LATER 0

static inline uint64_t trace_time_inside(void)
{
	return trace_tls.cur_region ? TRACE_T_LATER : trace_now();
}

static inline uint64_t trace_enter(unsigned region)
{
	uint64_t t0 = trace_now();

	trace_tls.cur_t0 = t0;
	trace_tls.cur_region = region + 1;
	return t0;
}

/* A call that ends now, without more. */
static inline void trace_call(unsigned region, uint64_t t0)
{
	struct trace_event *e = trace_slot();

	e->t0 = t0;
	e->t1 = trace_now();
	e->kind = TRACE_EV_CALL;
	e->region = (uint16_t)region;
	trace_commit();
	trace_tls.cur_region = 0;
}

/* trace.c: choose the clock at MPI_Init (before PMPI_Init), start (after
 * it returned), and write this rank's piece (complete: 1 at MPI_Finalize). */
void trace_clock_init(void);
void trace_start(void);
void trace_flush(int complete);

#endif
