/* SPDX-License-Identifier: MIT */
/*
 * engine.c - the request and progress engine (engine.h, where its
 * contract is): the request pool, the registered progress hooks, the
 * progress-driven requests, completion and release, and the waiting and
 * testing that the Wait and Test families (request.c) and the shim's own
 * waits are made of.
 *
 * The engine calls no chapter by name: it calls the callbacks of a
 * request's kind (r->ops), the hooks registered with it, and, for the last
 * reference on a communicator that a request held, the release handed to
 * mpi_shim_req_init.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "engine.h"

/* Requests are handed out from blocks, released at MPI_Finalize. */
#define REQ_BLOCK 64

struct req_block {
	struct req_block *next;
	struct mpi_shim_request reqs[REQ_BLOCK];
};

/* A registered progress hook (mpi_shim_progress_register). */
struct progress_hook {
	void (*run)(void); /* NULL: a free slot */
	unsigned flags;    /* MPI_SHIM_PROGRESS_ON_DEMAND or _ALWAYS */
};

static struct {
	struct mpi_shim_request *free;
	struct req_block *blocks;
	/* Progress-driven requests not yet complete. */
	struct mpi_shim_request *driven;
	int stepping; /* inside a progress callback: no nested steps */
	unsigned always; /* the hooks that run at every progress */
	struct progress_hook hooks[MPI_SHIM_PROGRESS_HOOKS];
	void (*comm_release)(struct mpi_shim_comm *c);
} req;

unsigned mpi_shim_progress_armed;

void mpi_shim_req_init(void (*comm_release)(struct mpi_shim_comm *c))
{
	req.comm_release = comm_release;
}

void mpi_shim_req_fini(void)
{
	while (req.blocks) {
		struct req_block *b = req.blocks;

		req.blocks = b->next;
		free(b);
	}
	req.free = NULL;
	req.driven = NULL;
	req.stepping = 0;
	req.always = 0;
	memset(req.hooks, 0, sizeof(req.hooks));
	mpi_shim_progress_armed = 0;
}

/* --- the pool --- */

/* The callbacks of a request that has none of its own. */
static const struct mpi_shim_req_ops no_ops;

mpi_shim_cold static int req_grow(void)
{
	struct req_block *b = calloc(1, sizeof(*b));
	int i;

	if (!b)
		return -1;
	b->next = req.blocks;
	req.blocks = b;
	for (i = 0; i < REQ_BLOCK; i++) {
		b->reqs[i].next = req.free;
		req.free = &b->reqs[i];
	}
	return 0;
}

struct mpi_shim_request *mpi_shim_req_alloc(void)
{
	struct mpi_shim_request *r = req.free;

	if (mpi_shim_unlikely(!r)) {
		if (req_grow() < 0)
			return NULL;
		r = req.free;
	}
	req.free = r->next;
	memset(r, 0, offsetof(struct mpi_shim_request, hdr));
	r->ops = &no_ops;
	r->flags = MPI_SHIM_F_POOL;
	return r;
}

/* The request's reference on its communicator goes.  Only the last one of
 * a communicator that is not predefined releases more than the count:
 * that goes to comm_object.c (mpi_shim_comm_release, handed to mpi_shim_req_init). */
static inline void drop_comm(struct mpi_shim_request *r)
{
	MPI_Comm c = r->comm;

	r->flags &= ~MPI_SHIM_F_COMM;
	if (mpi_shim_likely(c->refcount > 1 || c->predefined))
		c->refcount--;
	else
		req.comm_release(c);
}

void mpi_shim_req_free(struct mpi_shim_request *r)
{
	if (r->flags & MPI_SHIM_F_COMM)
		drop_comm(r);
	r->kind = MPI_SHIM_REQ_INVALID;
	r->next = req.free;
	req.free = r;
}

int mpi_shim_req_pending(MPI_Comm c)
{
	struct req_block *b;
	int i, n = 0;

	for (b = req.blocks; b; b = b->next) {
		for (i = 0; i < REQ_BLOCK; i++) {
			const struct mpi_shim_request *r = &b->reqs[i];

			/* A persistent request not started has nothing pending. */
			if ((r->flags & MPI_SHIM_F_COMM) && !r->done &&
			    (!r->persistent || r->active) &&
			    (r->comm == c || (c->local && r->comm == c->local)))
				n++;
		}
	}
	return n;
}

/* --- progress --- */

int mpi_shim_progress_register(void (*run)(void), unsigned flags)
{
	int i;

	for (i = 0; i < MPI_SHIM_PROGRESS_HOOKS; i++)
		if (!req.hooks[i].run)
			break;
	if (i == MPI_SHIM_PROGRESS_HOOKS)
		return -1;
	req.hooks[i].run = run;
	req.hooks[i].flags = flags;
	if (flags & MPI_SHIM_PROGRESS_ALWAYS) {
		req.always |= 1u << i;
		mpi_shim_progress_armed |= 1u << i;
	}
	return i;
}

void mpi_shim_progress_unregister(int hook)
{
	req.hooks[hook].run = NULL;
	req.always &= ~(1u << hook);
	mpi_shim_progress_armed &= ~(1u << hook);
}

/*
 * The armed hooks, in the order of their slots.  Each one's arm is taken
 * off before it runs: what it arms again (itself too) runs at the next
 * progress, not in this loop, so a hook that always finds work cannot keep
 * the others from running.  The hooks that run always are armed again.
 */
mpi_shim_cold static void run_hooks(void)
{
	unsigned armed = mpi_shim_progress_armed;
	int i;

	mpi_shim_progress_armed = req.always;
	while (armed) {
		i = __builtin_ctz(armed);
		armed &= armed - 1;
		if (req.hooks[i].run)
			req.hooks[i].run();
	}
}

unsigned mpi_shim_wait_timed;
uint64_t mpi_shim_wait_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A waiting step while a tool times them (engine.h). */
mpi_shim_cold static int timed_wait(struct bip_layer_wait *w)
{
	uint64_t t0 = now_ns();
	int rc = bip_layer_wait(w);

	__atomic_fetch_add(&mpi_shim_wait_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return rc;
}

int mpi_shim_progress_wait(struct bip_layer_wait *w)
{
	if (mpi_shim_unlikely(__atomic_load_n(&mpi_shim_wait_timed, __ATOMIC_RELAXED)))
		return timed_wait(w);
	return bip_layer_wait(w);
}

static void driven_remove(struct mpi_shim_request *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		req.driven = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
}

void mpi_shim_progress_track(struct mpi_shim_request *r)
{
	r->prev = NULL;
	r->next = req.driven;
	if (req.driven)
		req.driven->prev = r;
	req.driven = r;
}

/* A progress-driven request completes: it leaves the list. */
static void driven_complete(struct mpi_shim_request *r, int err)
{
	driven_remove(r);
	mpi_shim_req_complete(r, err);
}

void mpi_shim_progress_step(struct mpi_shim_request *r)
{
	int rc;

	if (req.stepping || r->done)
		return;
	req.stepping = 1;
	rc = r->ops->progress(r);
	req.stepping = 0;
	if (rc == 1)
		driven_complete(r, MPI_SUCCESS);
	else if (rc < 0)
		driven_complete(r, -rc);
}

mpi_shim_cold static void step_driven(void)
{
	struct mpi_shim_request *r, *next;

	for (r = req.driven; r && !req.stepping; r = next) {
		next = r->next; /* r leaves the list if it completes */
		mpi_shim_progress_step(r);
	}
}

/* The progress of the waits inside a collective's schedule (engine.h). */
void mpi_shim_progress_poll(void)
{
	bip_layer_poll();
	if (mpi_shim_unlikely(mpi_shim_progress_armed != 0))
		run_hooks();
}

/* The progress of every public wait and test and of the progress thread. */
void mpi_shim_progress(void)
{
	mpi_shim_progress_poll();
	if (mpi_shim_unlikely(req.driven != NULL))
		step_driven();
}

/* --- the life of a request --- */

void mpi_shim_request_release(MPI_Request r)
{
	if (r->ops->release) {
		r->ops->release(r);
		r->ops = &no_ops;
	}
	if (r->persistent && r->type && !r->type->predefined)
		mpi_shim_datatype_release(r->type);
	if (r->flags & MPI_SHIM_F_POOL)
		mpi_shim_req_free(r);
}

int mpi_shim_request_progress_new(MPI_Comm comm, const struct mpi_shim_req_ops *ops, void *state,
				  MPI_Request *req_p)
{
	struct mpi_shim_request *r = mpi_shim_req_alloc();

	if (!r)
		return MPI_ERR_NO_MEM;
	r->kind = MPI_SHIM_REQ_PROGRESS;
	r->comm = comm;
	r->ops = ops;
	r->state = state;
	r->active = 1;
	r->internal = 1;
	mpi_shim_status_empty(&r->status);
	mpi_shim_req_hold_comm(r);
	mpi_shim_progress_track(r);
	*req_p = r;
	return MPI_SUCCESS;
}

int mpi_shim_req_finish(MPI_Request *rp, MPI_Status *st)
{
	MPI_Request r = *rp;
	int err = r->error;

	if (st && st != MPI_STATUS_IGNORE)
		mpi_shim_status_report(st, &r->status);
	if (r->persistent) {
		r->active = 0;
	} else {
		*rp = MPI_REQUEST_NULL;
		mpi_shim_request_release(r);
	}
	return err;
}

/* --- waiting and testing --- */

void mpi_shim_req_step(MPI_Request r)
{
	if (r->kind == MPI_SHIM_REQ_PROGRESS)
		mpi_shim_progress_step(r);
}

int mpi_shim_request_test(MPI_Request r)
{
	if (r->done)
		return 1;
	mpi_shim_progress_poll();
	if (r->kind == MPI_SHIM_REQ_PROGRESS && !r->done)
		mpi_shim_progress_step(r);
	return r->done;
}

int mpi_shim_wait_done(struct mpi_shim_request *r, const char *call, int steps)
{
	struct bip_layer_wait w = { 0, 0 };

	while (!r->done) {
		if (steps)
			mpi_shim_progress();
		else
			mpi_shim_progress_poll();
		if (r->kind == MPI_SHIM_REQ_PROGRESS && !r->done)
			mpi_shim_progress_step(r);
		if (r->done)
			break;
		if (mpi_shim_progress_wait(&w) < 0) {
			mpi_shim_progress_poll();
			if (r->done)
				break;
			return mpi_shim_err(r->comm, MPI_ERR_OTHER, call,
					    "every other process has ended: this %s cannot complete",
					    r->kind == MPI_SHIM_REQ_RECV ? "receive" : "request");
		}
	}
	return MPI_SUCCESS;
}

int mpi_shim_request_wait(MPI_Request *req, MPI_Status *status)
{
	int rc;

	if (!mpi_shim_req_active(*req)) {
		if (status && status != MPI_STATUS_IGNORE)
			mpi_shim_status_empty(status);
		return MPI_SUCCESS;
	}
	rc = mpi_shim_wait_done(*req, "MPI_Wait", 0);
	if (rc)
		return rc;
	return mpi_shim_req_finish(req, status);
}

int mpi_shim_req_find_done(int count, MPI_Request reqs[])
{
	int i, nactive = 0;

	for (i = 0; i < count; i++) {
		if (!mpi_shim_req_active(reqs[i]))
			continue;
		nactive++;
		mpi_shim_req_step(reqs[i]);
		if (reqs[i]->done)
			return i;
	}
	return nactive ? -1 : MPI_UNDEFINED;
}

int mpi_shim_req_wait_any(int count, MPI_Request reqs[], int *index, const char *call)
{
	struct bip_layer_wait w = { 0, 0 };

	for (;;) {
		*index = mpi_shim_req_find_done(count, reqs);
		if (*index != -1)
			return MPI_SUCCESS;
		mpi_shim_progress();
		*index = mpi_shim_req_find_done(count, reqs);
		if (*index != -1)
			return MPI_SUCCESS;
		if (mpi_shim_progress_wait(&w) < 0)
			return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_OTHER, call,
					    "every other process has ended: no request can complete");
	}
}

/* --- what the calls ask of a request's kind --- */

int mpi_shim_req_cancel(MPI_Request r)
{
	if (!r->ops->cancel || !mpi_shim_req_active(r))
		return MPI_SUCCESS;
	return r->ops->cancel(r);
}

int mpi_shim_req_user_free(MPI_Request r)
{
	if (r->ops->free)
		return r->ops->free(r);
	if (r->done || (r->persistent && !r->active))
		mpi_shim_request_release(r);
	else
		r->freed = 1; /* released when it completes */
	return MPI_SUCCESS;
}

int mpi_shim_start(MPI_Request r, const char *call)
{
	return r->ops->start(r, call);
}
