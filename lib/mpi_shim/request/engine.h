/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the request and progress engine of the MPI shim (engine.c):
 * the contract between the engine and the chapters that plug into it.
 *
 * Every operation that may end later than the call that started it is a
 * request (struct mpi_shim_request), and every request completes, is
 * waited for, tested and released the same way, whatever its chapter.
 * The engine knows no chapter by name: a chapter hands it a table of
 * callbacks per kind of request (struct mpi_shim_req_ops) and, if it has
 * work of its own to advance, a progress hook (mpi_shim_progress_register).
 *
 * The object.  A request comes from the engine's pool
 * (mpi_shim_req_alloc: zeroed, no callbacks), carries its kind, the
 * chapter's callbacks and state (r->ops, r->state), the call's arguments,
 * and a reference on its communicator (mpi_shim_req_hold_comm) until it
 * goes.  The fields after "private to the point-to-point protocol" are
 * pt2pt's; a chapter with more to keep hangs it on r->state.
 *
 * The kinds, and who completes them:
 *   SEND, RECV  point-to-point (p2p.c, bsend.c): the protocol, from BIP's
 *               callbacks or its progress hook;
 *   PROGRESS    driven by the engine: a request made by
 *               mpi_shim_request_progress_new (or put on the list with
 *               mpi_shim_progress_track) gets steps of ops->progress until
 *               that answers 1 (done) or -MPI_ERR_x (done with that error):
 *               the collective schedules (nbc.c, coll_neighbor.c,
 *               coll_persist.c), MPI_Isendrecv, MPI_Comm_idup.  A chapter
 *               whose operation is a chain of steps (request-based RMA, a
 *               file operation split into pieces) is this kind;
 *   GREQ        generalized requests (greq.c): the program, through
 *               MPI_Grequest_complete.  A chapter whose operation ends by
 *               an event that its own hook sees (an RMA window's
 *               completion, an asynchronous file write) completes its
 *               requests the same way, from that hook.
 *
 * The states.  A request is active from its start until a call of the
 * Wait or Test families (or MPI_Request_get_status) has reported it; it is
 * done once its operation is over (r->done, status and error final).
 *
 *     alloc --start--> active --complete--> active+done --finish--> released
 *                        ^                                 |
 *                        +----- MPI_Start (persistent) ----+ inactive
 *
 * A persistent request becomes inactive instead of going and goes only
 * with MPI_Request_free.  A request the program frees while active
 * (r->freed) is released when it completes.  MPI_Cancel asks ops->cancel.
 *
 * Completion: one path for every kind, mpi_shim_req_complete(r, err),
 * called by whoever ends the operation (the protocol, a hook, a progress
 * step, MPI_Grequest_complete); it sets the error and done, and releases a
 * request already freed.  The call that then finds the request done asks
 * ops->query for its status, reports it and releases it
 * (mpi_shim_req_finish: ops->release, then back to the pool).
 *
 * Progress: one function, mpi_shim_progress, called by every public wait
 * and test, the shim's loops that wait outside a collective, and BIP's
 * progress thread (MPI_THREAD_MULTIPLE with BIP_PROGRESS_THREAD).  It
 *   1. polls BIP once: arrivals go to the chapters' BIP callbacks, which
 *      match them and complete requests on the spot;
 *   2. runs the registered hooks that are armed;
 *   3. gives one step to every progress-driven request not yet done,
 *      unless a step is already running (a step may test its own
 *      point-to-point requests, which polls again).
 * The waits that run inside a collective's schedule (its build, its
 * step, the rounds of a blocking collective) and MPI_Finalize call
 * mpi_shim_progress_poll, which is 1 and 2 only: a schedule must not be
 * stepped again from inside its own build or step.
 * Between two calls, a wait takes a waiting step (mpi_shim_progress_wait),
 * which spins first, then yields.  The fast path (nothing armed, nothing
 * driven) costs one poll and two loads.
 *
 * Registration.  At MPI_Init a chapter that has work of its own registers
 * a hook, mpi_shim_progress_register(run, flags): the index it gets back
 * names the hook in mpi_shim_progress_arm.  A hook registered with
 * MPI_SHIM_PROGRESS_ON_DEMAND runs once per arming, at the next progress
 * after the arming (its arm is taken off before it runs, so that what it
 * arms again runs at the following progress): this is how BIP's callbacks,
 * which must not call BIP, leave work for after the poll (pt2pt's
 * acknowledgements and long receives).  One registered with
 * MPI_SHIM_PROGRESS_ALWAYS runs at every progress until it is
 * unregistered: a chapter that must look at something BIP does not tell
 * it (an RMA window's passive target, the completion of asynchronous file
 * I/O) registers it while it has such work, and unregisters it after.
 * Hooks run in the order of registration; MPI_Finalize unregisters them
 * all (mpi_shim_req_fini).
 *
 * Threads.  The engine's state, like the rest of the shim's, is used under
 * BIP's lock (MPI_SHIM_ENTER; BIP's callbacks and its progress thread run
 * under it too), so hooks, callbacks and steps see one thread at a time.
 * mpi_shim_progress_wait lets go of the lock for its waiting step, so
 * another thread may run anything of the shim meanwhile, and complete
 * what the waiter waits for: a waiter rereads r->done after each step.
 * Hooks, steps and callbacks never wait (no waiting step inside them);
 * BIP's callbacks never call BIP, hooks and steps may.
 */
#ifndef MPI_SHIM_ENGINE_H
#define MPI_SHIM_ENGINE_H

#include "shim.h"

enum mpi_shim_request_kind {
	MPI_SHIM_REQ_SEND,
	MPI_SHIM_REQ_RECV,
	/*
	 * Driven by its progress callback (non-blocking collectives): Wait,
	 * Test and their families call ops->progress(req) until it returns 1
	 * (complete; req->status may be set) or a negative MPI error class
	 * (-MPI_ERR_x: complete with that error).  0: not yet.
	 */
	MPI_SHIM_REQ_PROGRESS,
	/* A generalized request (greq.c): done when MPI_Grequest_complete is
	 * called. */
	MPI_SHIM_REQ_GREQ,
};

/* The kind of a released request: a stale handle shows as invalid. */
#define MPI_SHIM_REQ_INVALID 0xff

enum mpi_shim_send_mode {
	MPI_SHIM_MODE_STANDARD,
	MPI_SHIM_MODE_BUFFERED,
	MPI_SHIM_MODE_SYNC,
	MPI_SHIM_MODE_READY,
};

struct mpi_shim_request;

/*
 * What a kind of request does for itself; a NULL member does nothing (or
 * what the engine does by default, said below).  Calls that report errors do
 * so through mpi_shim_err and return the error class.
 */
struct mpi_shim_req_ops {
	/* One step of a progress-driven request (MPI_SHIM_REQ_PROGRESS). */
	int (*progress)(struct mpi_shim_request *r);
	/* MPI_Start of an inactive persistent request; reported errors. */
	int (*start)(struct mpi_shim_request *r, const char *call);
	/* MPI_Cancel of an active request; reported errors. */
	int (*cancel)(struct mpi_shim_request *r);
	/* Fill r's status and error, as each call that finds r complete
	 * reports it (release: the request goes right after). */
	void (*query)(struct mpi_shim_request *r, int release);
	/* MPI_Request_free; reported errors.  NULL: released now if it is
	 * complete or inactive, else when it completes. */
	int (*free)(struct mpi_shim_request *r);
	/* The request goes: release what the kind keeps in it (r->state). */
	void (*release)(struct mpi_shim_request *r);
};

struct mpi_shim_request {
	/* The common part, the engine's */
	uint8_t kind;        /* enum mpi_shim_request_kind */
	uint8_t mode;        /* enum mpi_shim_send_mode, for sends */
	uint8_t persistent;  /* made by *_init; Start re-activates it */
	uint8_t active;      /* started and not yet completed-and-reported */
	uint8_t done;        /* complete: status is final */
	uint8_t freed;       /* MPI_Request_free before completion */
	uint8_t internal;    /* on the collective context */
	uint8_t cancelled;
	MPI_Status status;
	int error;           /* MPI error class of the completion */
	const struct mpi_shim_req_ops *ops;
	void *state;         /* the kind's own */

	/* the arguments of the call */
	void *buf;
	size_t count;
	MPI_Datatype type;   /* held while a persistent request exists */
	int peer;            /* rank in comm, MPI_ANY_SOURCE or MPI_PROC_NULL */
	int tag;
	MPI_Comm comm;
	uint32_t ctx;

	/* private to the point-to-point protocol (p2p.c, bsend.c) */
	void *packed;        /* packed copy, or a temporary receive buffer */
	size_t bytes;        /* send: bytes to send; receive: room in bytes */
	size_t len;          /* receive: bytes of the matched message */
	uint64_t handle;     /* receive: the BIP handle of a long message */
	int wpeer;           /* world rank of the matched source or destination;
				a receive from one source: that source's, from posting */
	uint64_t seq;        /* receive: posting order, while posted */
	uint64_t msgno;      /* send: its number among the messages to wpeer */
	unsigned flags;      /* MPI_SHIM_F_POOL, MPI_SHIM_F_COMM and the protocol's */
	/* the list the request is on (posted receives, deferred work, or
	 * the engine's progress-driven requests), and the pool's */
	struct mpi_shim_request *next, *prev;
	uint64_t hdr[4];     /* the envelope, kept while the send may be queued */
};

/* Request flags of the engine (the protocol's are in p2p.h). */
#define MPI_SHIM_F_POOL 32u      /* from the pool (not on a caller's stack) */
#define MPI_SHIM_F_COMM 64u      /* holds a reference on comm */

/* MPI_Init: comm_release drops a communicator's reference (comm_object.c's
 * mpi_shim_comm_release), which the engine calls for the last reference that a
 * request held.  MPI_Finalize: every request is gone with its memory. */
void mpi_shim_req_init(void (*comm_release)(struct mpi_shim_comm *c));
void mpi_shim_req_fini(void);

/* Requests: a pool without malloc per message; zeroed but for the
 * protocol's envelope, with ops that do nothing. */
struct mpi_shim_request *mpi_shim_req_alloc(void);
void mpi_shim_req_free(struct mpi_shim_request *r);

/* How many requests on c (or on the local group's communicator of the
 * inter-communicator c) have an operation not over yet: every request
 * that holds a reference on its communicator is looked at, so this is for
 * rare calls (MPI_Comm_disconnect). */
int mpi_shim_req_pending(MPI_Comm c);

/* A request keeps its communicator alive until the request is gone. */
static inline void mpi_shim_req_hold_comm(struct mpi_shim_request *r)
{
	if (!(r->flags & MPI_SHIM_F_COMM)) {
		r->comm->refcount++;
		r->flags |= MPI_SHIM_F_COMM;
	}
}

/* A request driven by ops->progress on comm, active, with state; the
 * refcount of comm taken.  Returns MPI_SUCCESS or MPI_ERR_NO_MEM (nothing
 * is reported through the error handler). */
int mpi_shim_request_progress_new(MPI_Comm comm, const struct mpi_shim_req_ops *ops, void *state,
				  MPI_Request *req_p);

/* Release a request that is complete (or free a persistent one). */
void mpi_shim_request_release(MPI_Request req);

/* Complete r with err: done, then released if the user freed it already.
 * The protocol releases what it holds for the operation first. */
static inline void mpi_shim_req_complete(struct mpi_shim_request *r, int err)
{
	r->error = err;
	r->status.MPI_ERROR = err;
	r->done = 1;
	if (r->freed)
		mpi_shim_request_release(r);
}

/* --- progress --- */

/* The progress function: poll BIP, run the armed hooks, step the
 * progress-driven requests (see the top of this file). */
void mpi_shim_progress(void);

/* The same without the steps, for the waits that run inside a collective's
 * schedule, its build or its step (coll_sched.c, the engine's own
 * mpi_shim_request_test and mpi_shim_request_wait, pt2pt's inner waits)
 * and for MPI_Finalize: stepping the schedules from there would enter a
 * schedule again while it is being built or stepped. */
void mpi_shim_progress_poll(void);

/* A waiting step of a loop that polls until something arrives: w (zeroed
 * before the loop) paces the steps, spinning first, then yielding; BIP's
 * lock is let go meanwhile.  Negative when every other process has ended:
 * nothing can arrive. */
struct bip_layer_wait;
int mpi_shim_progress_wait(struct bip_layer_wait *w);

/* The time spent in waiting steps, for the performance variable
 * mpi_shim_wait_time (tools/pvar.c): counted only while mpi_shim_wait_timed
 * (the started handles of that variable, changed under BIP's lock) is not
 * zero, so that a program that does not ask pays one load per waiting
 * step.  Nanoseconds, added and read with relaxed atomics: waiting steps
 * run without the lock. */
extern unsigned mpi_shim_wait_timed;
extern uint64_t mpi_shim_wait_ns;

/* How a registered hook runs: once per mpi_shim_progress_arm, or at every
 * progress while registered. */
#define MPI_SHIM_PROGRESS_ON_DEMAND 0u
#define MPI_SHIM_PROGRESS_ALWAYS 1u

/* At most this many hooks at once (one bit each in the armed mask). */
#define MPI_SHIM_PROGRESS_HOOKS 16

/* Register run as a progress hook: its index (for mpi_shim_progress_arm
 * and mpi_shim_progress_unregister), or -1 when every slot is taken. */
int mpi_shim_progress_register(void (*run)(void), unsigned flags);
void mpi_shim_progress_unregister(int hook);

/* The hooks to run at the next progress, one bit per hook; the engine's,
 * read here only so that arming is a single store. */
extern unsigned mpi_shim_progress_armed;

/* Ask for hook to run at the next progress (from anywhere, BIP's
 * callbacks too). */
static inline void mpi_shim_progress_arm(int hook)
{
	mpi_shim_progress_armed |= 1u << hook;
}

/* Progress-driven requests: advanced by every mpi_shim_progress until
 * complete; one step now (not from inside another step). */
void mpi_shim_progress_track(struct mpi_shim_request *r);
void mpi_shim_progress_step(struct mpi_shim_request *r);

/* --- waiting and testing --- */

/* 1 if req is complete (after one mpi_shim_progress_poll if it was not). */
int mpi_shim_request_test(MPI_Request req);

/* Wait until r is done (progress, then waiting steps).  MPI_SUCCESS, or
 * MPI_ERR_OTHER when nothing can complete it any more (reported).  steps:
 * a public call's wait (mpi_shim_progress), else mpi_shim_progress_poll. */
int mpi_shim_wait_done(struct mpi_shim_request *r, const char *call, int steps);

/* Wait for req and release it; returns its error class.  status may be
 * MPI_STATUS_IGNORE.  The same as PMPI_Wait without the error handler. */
int mpi_shim_request_wait(MPI_Request *req, MPI_Status *status);

/* 1 if r is a request with an operation to complete or report. */
static inline int mpi_shim_req_active(MPI_Request r)
{
	return r != MPI_REQUEST_NULL && (!r->persistent || r->active);
}

/* One step of r if it is progress-driven. */
void mpi_shim_req_step(MPI_Request r);

/* Ask the complete r for its status (ops->query), as a call reporting it
 * does; release: the request goes right after. */
static inline void mpi_shim_req_query(MPI_Request r, int release)
{
	if (mpi_shim_unlikely(r->ops->query != NULL))
		r->ops->query(r, release);
}

/* Report the complete request *rp in st and release it (persistent: make
 * it inactive).  Returns its error class, not yet reported. */
int mpi_shim_req_finish(MPI_Request *rp, MPI_Status *st);

/* The index of a done request of reqs[] (each one stepped), -1 if none,
 * MPI_UNDEFINED if none is active. */
int mpi_shim_req_find_done(int count, MPI_Request reqs[]);

/* Wait until a request of reqs[] is done or none is active: *index is
 * that request's, or MPI_UNDEFINED.  MPI_SUCCESS, or MPI_ERR_OTHER when
 * nothing can complete one any more (reported). */
int mpi_shim_req_wait_any(int count, MPI_Request reqs[], int *index, const char *call);

/* --- what the calls ask of a request's kind --- */

/* MPI_Start of an inactive persistent request (reported errors). */
int mpi_shim_start(MPI_Request r, const char *call);

/* MPI_Cancel (reported errors). */
int mpi_shim_req_cancel(MPI_Request r);

/* MPI_Request_free, the handle already set to MPI_REQUEST_NULL (reported
 * errors). */
int mpi_shim_req_user_free(MPI_Request r);

/* Report in out what a call returning one status reports: every field of
 * in but MPI_ERROR, which only the calls returning several statuses set
 * (MPI-3.1 3.2.5: other calls leave the program's value there). */
static inline void mpi_shim_status_report(MPI_Status *out, const MPI_Status *in)
{
	int err = out->MPI_ERROR;

	*out = *in;
	out->MPI_ERROR = err;
}

/* Fill an empty status (a null or inactive request, MPI_PROC_NULL). */
static inline void mpi_shim_status_empty(MPI_Status *st)
{
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	st->MPI_ERROR = MPI_SUCCESS;
	st->mpi_shim_cancelled = 0;
	st->mpi_shim_bytes = 0;
}

#endif /* MPI_SHIM_ENGINE_H */
