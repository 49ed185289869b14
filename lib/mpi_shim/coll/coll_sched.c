// SPDX-License-Identifier: MIT
/*
 * coll_sched.c - building and running the schedules of the collectives
 * (see coll.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "coll.h"
#include "engine.h"

/*
 * Temporary buffers of finished collectives, kept for the next ones: a
 * long vector's buffer would otherwise be mapped, faulted in page by page
 * and unmapped again by every call.  A few buffers, up to a size.
 */
#define COLL_CACHE_SLOTS 4
#define COLL_CACHE_MAX (64u << 20)

static struct coll_buf coll_cache[COLL_CACHE_SLOTS];
static pthread_mutex_t coll_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* A buffer of at least bytes: the smallest cached one that fits, or a new one. */
static int coll_buf_get(struct coll_buf *b, size_t bytes)
{
	int i, best = -1;

	pthread_mutex_lock(&coll_cache_lock);
	for (i = 0; i < COLL_CACHE_SLOTS; i++)
		if (coll_cache[i].p && coll_cache[i].cap >= bytes &&
		    (best < 0 || coll_cache[i].cap < coll_cache[best].cap))
			best = i;
	if (best >= 0) {
		*b = coll_cache[best];
		coll_cache[best].p = NULL;
	}
	pthread_mutex_unlock(&coll_cache_lock);
	if (best >= 0)
		return 0;
	b->p = malloc(bytes ? bytes : 1);
	b->cap = bytes;
	return b->p ? 0 : MPI_ERR_NO_MEM;
}

/* Keep b for later in a free slot or in place of a smaller one, else free it. */
static void coll_buf_put(struct coll_buf *b)
{
	int i, victim = -1;

	if (b->cap <= COLL_CACHE_MAX) {
		pthread_mutex_lock(&coll_cache_lock);
		for (i = 0; i < COLL_CACHE_SLOTS; i++) {
			if (!coll_cache[i].p) {
				victim = i;
				break;
			}
			if (coll_cache[i].cap < b->cap &&
			    (victim < 0 || coll_cache[i].cap < coll_cache[victim].cap))
				victim = i;
		}
		if (victim >= 0) {
			struct coll_buf old = coll_cache[victim];

			coll_cache[victim] = *b;
			*b = old;
		}
		pthread_mutex_unlock(&coll_cache_lock);
	}
	free(b->p);
	b->p = NULL;
}

/* MPI_Finalize: the kept buffers are freed with the rest of the library's
 * memory (nothing of MPI's outlives it). */
void mpi_shim_coll_fini(void)
{
	int i;

	pthread_mutex_lock(&coll_cache_lock);
	for (i = 0; i < COLL_CACHE_SLOTS; i++) {
		free(coll_cache[i].p);
		coll_cache[i].p = NULL;
		coll_cache[i].cap = 0;
	}
	pthread_mutex_unlock(&coll_cache_lock);
}

/*
 * Room for one more element in an array that starts as the inline one:
 * the first growth moves it to the heap.  Returns the array, or NULL
 * (the old one unchanged) when there is no memory.
 */
static void *coll_grow(void *arr, const void *inline_arr, int *cap, size_t elem)
{
	void *n;

	if (arr == inline_arr) {
		n = malloc(2 * (size_t)*cap * elem);
		if (n)
			memcpy(n, arr, (size_t)*cap * elem);
	} else {
		n = realloc(arr, 2 * (size_t)*cap * elem);
	}
	if (n)
		*cap *= 2;
	return n;
}

int coll_sched_init(struct coll_sched *s, MPI_Comm comm, MPI_Op op)
{
	/* Every member starts the same collectives in the same order. */
	return coll_sched_init_tag(s, comm, op, coll_next_tag(comm));
}

int coll_next_tag(MPI_Comm comm)
{
	return (int)(comm->coll_seq++ & 0x3fffffff);
}

int coll_sched_init_tag(struct coll_sched *s, MPI_Comm comm, MPI_Op op, int tag)
{
	s->comm = comm;
	s->op = op;
	s->nsteps = s->next = s->nreqs = s->ntmp = s->nscratch = 0;
	s->err = s->run_err = 0;
	s->on_local = 0;
	s->steps = s->inline_steps;
	s->cap = COLL_INLINE_STEPS;
	s->reqs = s->inline_reqs;
	s->capreqs = COLL_INLINE_REQS;
	s->tmp = s->inline_tmp;
	s->captmp = COLL_INLINE_TMP;
	s->tag = tag;
	return 0;
}

/* A derived datatype that a step names stays while the schedule exists:
 * a program may free its handle as soon as a non-blocking collective has
 * started (the standard's reference counting). */
static void hold_type(MPI_Datatype t)
{
	if (t && !t->predefined)
		mpi_shim_datatype_retain(t);
}

static void drop_type(MPI_Datatype t)
{
	if (t && !t->predefined)
		mpi_shim_datatype_release(t);
}

void coll_sched_destroy(struct coll_sched *s)
{
	int i;

	for (i = 0; i < s->nsteps; i++) {
		drop_type(s->steps[i].type);
		drop_type(s->steps[i].dtype);
	}
	for (i = 0; i < s->ntmp; i++)
		coll_buf_put(&s->tmp[i]);
	if (s->tmp != s->inline_tmp)
		free(s->tmp);
	if (s->steps != s->inline_steps)
		free(s->steps);
	if (s->reqs != s->inline_reqs)
		free(s->reqs);
	s->tmp = NULL;
	s->steps = NULL;
	s->reqs = NULL;
	s->ntmp = s->nsteps = s->nreqs = 0;
}

static struct coll_step *coll_add(struct coll_sched *s, enum coll_step_kind kind)
{
	struct coll_step *st;

	if (s->err)
		return NULL;
	if (s->nsteps == s->cap) {
		struct coll_step *n = coll_grow(s->steps, s->inline_steps, &s->cap, sizeof(*n));

		if (!n) {
			s->err = MPI_ERR_NO_MEM;
			return NULL;
		}
		s->steps = n;
	}
	st = &s->steps[s->nsteps++];
	memset(st, 0, sizeof(*st));
	st->kind = kind;
	st->local = s->on_local;
	return st;
}

void coll_send(struct coll_sched *s, const void *buf, size_t count, MPI_Datatype type, int peer)
{
	struct coll_step *st = coll_add(s, STEP_SEND);

	if (st) {
		st->src = buf;
		st->count = count;
		st->type = type;
		st->peer = peer;
		hold_type(type);
	}
}

void coll_recv(struct coll_sched *s, void *buf, size_t count, MPI_Datatype type, int peer)
{
	struct coll_step *st = coll_add(s, STEP_RECV);

	if (st) {
		st->dst = buf;
		st->count = count;
		st->type = type;
		st->peer = peer;
		hold_type(type);
	}
}

void coll_copy(struct coll_sched *s, const void *src, size_t scount, MPI_Datatype stype,
	       void *dst, size_t dcount, MPI_Datatype dtype)
{
	struct coll_step *st;

	if (src == dst && scount == dcount && stype == dtype)
		return;
	st = coll_add(s, STEP_COPY);
	if (st) {
		st->src = src;
		st->count = scount;
		st->type = stype;
		st->dst = dst;
		st->dcount = dcount;
		st->dtype = dtype;
		hold_type(stype);
		hold_type(dtype);
	}
}

void coll_reduce(struct coll_sched *s, const void *in, void *inout, size_t count, MPI_Datatype type)
{
	struct coll_step *st = coll_add(s, STEP_REDUCE);

	if (st) {
		st->src = in;
		st->dst = inout;
		st->count = count;
		st->type = type;
		hold_type(type);
	}
}

void coll_fence(struct coll_sched *s)
{
	/* Two fences in a row, or one at the start, wait for nothing. */
	if (s->nsteps && s->steps[s->nsteps - 1].kind == STEP_FENCE)
		return;
	if (s->nsteps)
		coll_add(s, STEP_FENCE);
}

/*
 * A buffer for count elements of type, laid out as the user's buffers are
 * (the same extent), so that the same datatype describes it.  Returns the
 * address of element 0, true_lb bytes before the first byte touched.
 */
void *coll_tmp(struct coll_sched *s, size_t count, MPI_Datatype type)
{
	MPI_Aint extent = type->extent < 0 ? -type->extent : type->extent;
	size_t bytes = 0;
	char *p;

	if (s->err)
		return NULL;
	/* The operations read whole elements of the extent (MPI_LONG_DOUBLE_INT:
	 * a structure of 32 bytes whose data end at 20): room for the last
	 * one's padding too. */
	if (count > 0)
		bytes = (count - 1) * (size_t)extent + (size_t)type->true_extent +
			((size_t)extent > (size_t)type->true_extent ?
				 (size_t)extent - (size_t)type->true_extent : 0);
	if (bytes <= COLL_SCRATCH_BYTES && s->nscratch < 2) {
		p = s->scratch[s->nscratch++].bytes;
	} else {
		if (s->ntmp == s->captmp) {
			struct coll_buf *n = coll_grow(s->tmp, s->inline_tmp, &s->captmp,
						       sizeof(*n));

			if (!n) {
				s->err = MPI_ERR_NO_MEM;
				return NULL;
			}
			s->tmp = n;
		}
		if (coll_buf_get(&s->tmp[s->ntmp], bytes)) {
			s->err = MPI_ERR_NO_MEM;
			return NULL;
		}
		p = s->tmp[s->ntmp++].p;
	}
	/* A negative extent lays elements downwards from element 0. */
	if (type->extent < 0 && count > 1)
		p += (size_t)(count - 1) * (size_t)extent;
	/* Computed as an integer: the true_lb of a type built for MPI_BOTTOM
	 * is an address, and the origin it gives lies outside any object. */
	return (char *)((uintptr_t)p - (uintptr_t)type->true_lb);
}

/* Bytes moved at a time by a copy between non-contiguous layouts. */
#define COLL_COPY_CHUNK 65536

/* A local copy between two typed buffers of the same type signature. */
static int coll_do_copy(const struct coll_step *st)
{
	size_t sbytes = (size_t)st->count * st->type->size;
	size_t dbytes = (size_t)st->dcount * st->dtype->size;
	char bounce[4096], *chunk = bounce;
	size_t chunk_len = sizeof(bounce), off;

	if (sbytes > dbytes)
		return MPI_ERR_TRUNCATE;
	if (!sbytes)
		return 0;
	if (st->type->contiguous && st->dtype->contiguous) {
		memmove(mpi_shim_datatype_start(st->dst, st->dtype),
			mpi_shim_datatype_start(st->src, st->type), sbytes);
		return 0;
	}
	if (st->type->contiguous) {
		mpi_shim_datatype_unpack(mpi_shim_datatype_start(st->src, st->type), sbytes,
					 st->dst, st->dcount, st->dtype, 0);
		return 0;
	}
	if (st->dtype->contiguous) {
		mpi_shim_datatype_pack(st->src, st->count, st->type, 0,
				       mpi_shim_datatype_start(st->dst, st->dtype), sbytes);
		return 0;
	}
	if (sbytes > sizeof(bounce)) {
		chunk_len = COLL_COPY_CHUNK;
		chunk = malloc(chunk_len);
		if (!chunk)
			return MPI_ERR_NO_MEM;
	}
	for (off = 0; off < sbytes; off += chunk_len) {
		size_t len = sbytes - off < chunk_len ? sbytes - off : chunk_len;

		mpi_shim_datatype_pack(st->src, st->count, st->type, off, chunk, len);
		mpi_shim_datatype_unpack(chunk, len, st->dst, st->dcount, st->dtype, off);
	}
	if (chunk != bounce)
		free(chunk);
	return 0;
}

int coll_copy_now(const void *src, void *dst, size_t count, MPI_Datatype type)
{
	struct coll_step st = { .src = src, .dst = dst, .count = count, .type = type,
				.dcount = count, .dtype = type };

	return src == dst ? 0 : coll_do_copy(&st);
}

static int coll_add_req(struct coll_sched *s, MPI_Request r)
{
	if (s->nreqs == s->capreqs) {
		MPI_Request *n = coll_grow(s->reqs, s->inline_reqs, &s->capreqs, sizeof(*n));

		if (!n)
			return MPI_ERR_NO_MEM;
		s->reqs = n;
	}
	s->reqs[s->nreqs++] = r;
	return 0;
}

/* Remember the first error of the run; the schedule goes on regardless. */
static void coll_failed(struct coll_sched *s, int rc)
{
	if (rc && !s->run_err)
		s->run_err = rc;
}

/*
 * Start the steps of the next round: local steps run at once, sends and
 * receives are posted; stops after the fence that ends the round.
 */
static void coll_round_start(struct coll_sched *s)
{
	while (s->next < s->nsteps) {
		const struct coll_step *st = &s->steps[s->next++];
		MPI_Request r;
		int rc = 0;

		switch (st->kind) {
		case STEP_SEND:
			rc = mpi_shim_coll_isend(st->src, st->count, st->type, st->peer, s->tag,
						 st->local ? s->comm->local : s->comm, &r);
			break;
		case STEP_RECV:
			rc = mpi_shim_coll_irecv(st->dst, st->count, st->type, st->peer, s->tag,
						 st->local ? s->comm->local : s->comm, &r);
			break;
		case STEP_COPY:
			coll_failed(s, coll_do_copy(st));
			continue;
		case STEP_REDUCE:
			mpi_shim_op_apply(s->op, st->src, st->dst, st->count, st->type);
			continue;
		case STEP_FENCE:
			return;
		}
		if (!rc) {
			rc = coll_add_req(s, r);
			if (rc)
				mpi_shim_request_wait(&r, MPI_STATUS_IGNORE);
		}
		coll_failed(s, rc);
	}
}

/* Test the requests of the round, releasing those complete; 1 when none is left. */
static int coll_round_test(struct coll_sched *s)
{
	int i, n = 0;

	for (i = 0; i < s->nreqs; i++) {
		MPI_Request r = s->reqs[i];

		if (mpi_shim_request_test(r))
			coll_failed(s, mpi_shim_request_wait(&r, MPI_STATUS_IGNORE));
		else
			s->reqs[n++] = r;
	}
	s->nreqs = n;
	return n == 0;
}

/* Test the requests of the round without polling; 1 when none is left. */
static int coll_round_done(struct coll_sched *s)
{
	int i, n = 0;

	for (i = 0; i < s->nreqs; i++) {
		MPI_Request r = s->reqs[i];

		if (r->done)
			coll_failed(s, mpi_shim_request_wait(&r, MPI_STATUS_IGNORE));
		else
			s->reqs[n++] = r;
	}
	s->nreqs = n;
	return n == 0;
}

/*
 * Wait for every request of the round at once: one poll and one waiting
 * step per turn, whatever the number of requests, so that a round of
 * several messages spins no longer before it yields than a round of one.
 * Polling serves the sends and the receives alike (a send may complete
 * only once its peer has taken something, which the peer does while it
 * waits for its own receives).  When every other process has ended, the
 * requests are waited for one by one, which reports it.
 */
static void coll_round_wait(struct coll_sched *s)
{
	struct bip_layer_wait w = { 0, 0 };
	int i;

	while (!coll_round_done(s)) {
		mpi_shim_progress_poll();
		if (coll_round_done(s))
			break;
		if (mpi_shim_progress_wait(&w) < 0) {
			for (i = 0; i < s->nreqs; i++)
				coll_failed(s, mpi_shim_request_wait(&s->reqs[i],
								     MPI_STATUS_IGNORE));
			break;
		}
	}
	s->nreqs = 0;
}

/*
 * Advance as far as possible without waiting; *done when finished.  A
 * failed step (a message longer than its receive buffer, say) does not
 * stop the schedule: the other processes wait for its later messages, so
 * it runs to the end and then reports the first error.
 */
int coll_sched_progress(struct coll_sched *s, int *done)
{
	*done = 0;
	if (s->err) {
		*done = 1;
		return s->err;
	}
	while (coll_round_test(s)) {
		if (s->next == s->nsteps) {
			*done = 1;
			return s->run_err;
		}
		coll_round_start(s);
	}
	return 0;
}

/* Run the schedule to the end, waiting (spin, then yield) for each round. */
int coll_sched_run(struct coll_sched *s)
{
	if (s->err)
		return s->err;
	for (;;) {
		coll_round_wait(s);
		if (s->next == s->nsteps)
			return s->run_err;
		coll_round_start(s);
	}
}
