/* SPDX-License-Identifier: MIT */
/*
 * p2p.c - MPI matching and the eager and rendezvous protocols over BIP.
 *
 * Every message of the shim travels on one reserved BIP tag, whose
 * arrivals BIP hands to the callbacks below as they come out of the NIC
 * (bip_layer(3)); matching happens right there, in arrival order:
 *
 *  - eager: a message that fits one short BIP message with its envelope
 *    (context, tag, source rank, kind) goes as one: 240 bytes of data at
 *    least, 288 over shm (bip_layer_short_max), at most EAGER_CAP.
 *    An arrival that matches a posted receive is copied straight into the
 *    user's buffer; otherwise into an unexpected entry, until a receive
 *    takes it.
 *  - synchronous eager (MPI_Ssend of a small message): the envelope also
 *    carries the sender's cookie, and the receiver acknowledges it when a
 *    receive matches it.
 *  - rendezvous: a larger message goes as an envelope (with its length
 *    and the sender's cookie) immediately followed by the data as a BIP
 *    long message on the same tag.  The envelope is matched like an eager
 *    one; the long message's announcement, right behind it from the same
 *    node, carries the handle by which the receiver has BIP move the data
 *    straight into the user's buffer once a receive matches.  The sender's
 *    request completes when the receiver has the data, so a rendezvous
 *    send is also synchronous.
 *
 * Cancelling a send (MPI_Cancel), of any kind and even once it is
 * complete (an eager one is, as soon as BIP has taken it), as long as it
 * was not reported by Wait or Test: HDR_CANCEL names the message by its
 * number among the envelopes and control messages this process sent to
 * that peer (both sides count them: BIP keeps their order from one node,
 * so the numbers agree without travelling in every envelope), and the
 * request by its cookie.  The receiver answers HDR_CANCEL_YES if the
 * message is still unexpected (it removes it; the data of a rendezvous is
 * then received into a scratch buffer and dropped, since BIP has no way to
 * discard a long message and the sender's buffer is released only when it
 * is taken), HDR_CANCEL_NO if a receive matched it (or a matched probe took
 * it).  The request is not complete until the answer came.  A send to
 * oneself is cancelled on the spot if no receive took it.
 *
 * Per-sender order is BIP's, and receives are matched in the order they
 * were posted, so the non-overtaking rule holds.  Both queues are split by
 * source world rank, so that matching a message from (or a receive for) one
 * source looks only at that source's entries, whatever waits from the
 * others (a collective's root receiving from many leaves): unexpected
 * messages in one list per source, posted receives in one list per source
 * plus one for MPI_ANY_SOURCE.  Every entry carries a sequence number
 * (arrival, or posting), which orders the candidates of different lists:
 * an ANY_SOURCE receive takes the earliest-arrived match among the first
 * match of each source, an arrival the earliest-posted of the first match
 * in its source's list and the first in the ANY_SOURCE list.  Messages to oneself never
 * touch BIP.  Callbacks must not call BIP: what they cannot finish (start a
 * long receive, send an acknowledgement) waits in a deferred list, which
 * the protocol's progress hook runs after the poll (registered with the
 * engine at MPI_Init, armed by the callback that leaves work in it).
 * Requests, their pool and the progress engine are engine.c's; completing
 * one here releases what the protocol held for it, then the engine
 * completes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "p2p.h"

enum hdr_kind {
	HDR_EAGER,
	HDR_EAGER_SYNC, /* aux: the sender's cookie */
	HDR_RTS,        /* aux: bytes of the long message that follows;
			   cookie: the sender's */
	HDR_ACK,        /* aux: the cookie of the synchronous send */
	HDR_CANCEL,     /* aux: the number of the message to withdraw;
			   cookie: the sender's request */
	HDR_CANCEL_YES, /* aux: the cookie of the send, now cancelled */
	HDR_CANCEL_NO,  /* aux: the cookie of the send, already matched */
};

/* The envelope; eager messages send only the part before aux, control
 * messages and synchronous eager ones the part before cookie. */
struct hdr {
	uint32_t ctx;
	int32_t tag;
	int32_t src;  /* the sender's rank in the communicator */
	uint32_t kind;
	uint64_t aux;
	uint64_t cookie;
};

#define HDR_BASE offsetof(struct hdr, aux)
#define HDR_FULL offsetof(struct hdr, cookie)
#define HDR_RTS_LEN sizeof(struct hdr)
/* The most data an eager message carries, whatever the NIC. */
#define EAGER_CAP ((size_t)1024 - HDR_BASE)
/* Messages to oneself up to this size are copied (sent eagerly). */
#define SELF_EAGER ((size_t)BIPSMALLSIZE * 4 - HDR_BASE)

_Static_assert(HDR_BASE == 16 && HDR_FULL == 24 && HDR_RTS_LEN == 32, "envelope layout");
_Static_assert(sizeof(((struct mpi_shim_request *)0)->hdr) >= HDR_RTS_LEN, "envelope fits");

/*
 * What a cookie of bip_layer_send or bip_layer_recv_long names, in its low
 * bits (requests and the structures below are at least 8-byte aligned).
 */
#define COOKIE_REQ 0u   /* a request */
#define COOKIE_CTL 1u   /* a control message (struct ctl) */
#define COOKIE_DRAIN 2u /* the data of a cancelled rendezvous (struct drain) */
#define COOKIE_KIND 3u

enum unexp_kind {
	U_EAGER,
	U_EAGER_SYNC,
	U_RTS,       /* data still at the sender; ready once its handle came */
	U_SELF_COPY, /* a small message to oneself, copied */
	U_SELF_REF,  /* a message to oneself, still in the sender's buffer */
};

struct unexp {
	struct unexp *next, *prev;
	uint64_t seq;      /* arrival order, across every source */
	uint32_t ctx;
	int tag;
	int src;           /* rank in the communicator */
	int wsrc;          /* world rank */
	uint8_t kind;
	uint8_t ready;
	size_t len;
	uint64_t aux;      /* U_EAGER_SYNC, U_RTS: the sender's cookie */
	uint64_t msgno;    /* its number among what wsrc sent here (see Cancel) */
	uint64_t handle;
	struct mpi_shim_request *sender; /* U_SELF_REF */
	const void *sdata;
	unsigned char data[EAGER_CAP];
};

/* The envelope of a rendezvous waits here for the announcement behind it. */
struct pending_rts {
	struct mpi_shim_request *req; /* matched at arrival */
	struct unexp *u;              /* or not */
};

/* A control message to send (an acknowledgement, a cancel or its
 * answer); kept until BIP has sent it. */
struct ctl {
	struct ctl *next;
	int dst;
	struct hdr hdr;
};

/* The data of a cancelled rendezvous, received only to be dropped. */
struct drain {
	struct drain *next;
	int src;
	uint64_t handle;
	size_t len;
	void *buf;
};

#define POOL_CHUNK 64

struct chunk {
	struct chunk *next;
};

struct unexp_list {
	struct unexp *head, *tail;
};

struct posted_list {
	struct mpi_shim_request *head, *tail;
};

static struct {
	struct posted_list *posted;    /* receives from one source, by world rank */
	struct posted_list posted_any; /* MPI_ANY_SOURCE receives */
	uint64_t posted_seq;           /* posting order of receives */
	struct unexp_list *unexp;      /* by source world rank */
	uint64_t unexp_seq;            /* arrival order of unexpected messages */
	int nunexp;                    /* unexpected messages queued */
	int unexp_hwm;                 /* the most queued since the last
					  mpi_shim_unexp_hwm_restart */
	struct unexp *unexp_free;
	struct pending_rts *rts;
	struct mpi_shim_request *deferred_head, *deferred_tail;
	struct ctl *ctls_head, *ctls_tail, *ctl_free;
	struct drain *drains_head, *drains_tail; /* to start */
	int ndrains;     /* drains not finished */
	int ncancelling; /* own sends waiting for the answer to a cancel */
	struct chunk *chunks;
	int registered;
	int hook;       /* the progress hook of the deferred work (engine.h) */
	size_t *eager;  /* the most eager data to each world rank */
	/* Envelopes and control messages sent to and taken from each world
	 * rank: the numbers by which a cancel names a message. */
	uint64_t *sent_msgs, *taken_msgs;
} p2p;

/* --- pools --- */

/* Memory handed out in chunks, released at MPI_Finalize. */
static void *chunk_alloc(size_t each, size_t n)
{
	struct chunk *c = calloc(1, sizeof(struct chunk) + 64 + each * n);

	if (!c)
		return NULL;
	c->next = p2p.chunks;
	p2p.chunks = c;
	return (char *)c + 64;
}

mpi_shim_cold static struct unexp *unexp_grow(void)
{
	struct unexp *us = chunk_alloc(sizeof(*us), POOL_CHUNK);
	int i;

	if (!us)
		return NULL;
	for (i = 0; i < POOL_CHUNK; i++) {
		us[i].next = p2p.unexp_free;
		p2p.unexp_free = &us[i];
	}
	return p2p.unexp_free;
}

static struct unexp *unexp_alloc(void)
{
	struct unexp *u = p2p.unexp_free;

	if (mpi_shim_unlikely(!u) && !(u = unexp_grow()))
		return NULL;
	p2p.unexp_free = u->next;
	u->ready = 0;
	u->sender = NULL;
	return u;
}

static void unexp_release(struct unexp *u)
{
	u->next = p2p.unexp_free;
	p2p.unexp_free = u;
}

/* --- queues --- */

/* A receive from one source waits in that source's list, keyed by the
 * world rank recv_start put in wpeer; one from any source in its own. */
static inline struct posted_list *posted_list_of(const struct mpi_shim_request *r)
{
	return r->peer == MPI_ANY_SOURCE ? &p2p.posted_any : &p2p.posted[r->wpeer];
}

static void posted_append(struct mpi_shim_request *r)
{
	struct posted_list *l = posted_list_of(r);

	r->seq = p2p.posted_seq++;
	r->next = NULL;
	r->prev = l->tail;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	r->flags |= MPI_SHIM_F_POSTED;
}

static void posted_remove(struct mpi_shim_request *r)
{
	struct posted_list *l = posted_list_of(r);

	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->flags &= ~MPI_SHIM_F_POSTED;
}

static void unexp_append(struct unexp *u)
{
	struct unexp_list *l = &p2p.unexp[u->wsrc];

	u->seq = p2p.unexp_seq++;
	u->next = NULL;
	u->prev = l->tail;
	if (l->tail)
		l->tail->next = u;
	else
		l->head = u;
	l->tail = u;
	p2p.nunexp++;
	if (p2p.nunexp > p2p.unexp_hwm)
		p2p.unexp_hwm = p2p.nunexp;
}

static void unexp_remove(struct unexp *u)
{
	struct unexp_list *l = &p2p.unexp[u->wsrc];

	if (u->prev)
		u->prev->next = u->next;
	else
		l->head = u->next;
	if (u->next)
		u->next->prev = u->prev;
	else
		l->tail = u->prev;
	p2p.nunexp--;
}

static inline int matches(const struct mpi_shim_request *r, uint32_t ctx, int src, int tag)
{
	return r->ctx == ctx && (r->peer == src || r->peer == MPI_ANY_SOURCE) &&
	       (r->tag == tag || r->tag == MPI_ANY_TAG);
}

static inline struct mpi_shim_request *posted_first(struct mpi_shim_request *r, uint32_t ctx,
						    int src, int tag)
{
	for (; r; r = r->next)
		if (matches(r, ctx, src, tag))
			return r;
	return NULL;
}

/* The earliest-posted receive that matches a message from src (rank in
 * the communicator of ctx), world rank wsrc; left in its queue. */
static inline struct mpi_shim_request *find_posted(uint32_t ctx, int src, int wsrc, int tag)
{
	struct mpi_shim_request *r = posted_first(p2p.posted[wsrc].head, ctx, src, tag);
	struct mpi_shim_request *a;

	if (mpi_shim_likely(!p2p.posted_any.head))
		return r;
	a = posted_first(p2p.posted_any.head, ctx, src, tag);
	return !r || (a && a->seq < r->seq) ? a : r;
}

/* The same, taken out of its queue. */
static inline struct mpi_shim_request *match_posted(uint32_t ctx, int src, int wsrc, int tag)
{
	struct mpi_shim_request *r = find_posted(ctx, src, wsrc, tag);

	if (r)
		posted_remove(r);
	return r;
}

static inline int unexp_matches(const struct unexp *u, uint32_t ctx, int src, int tag)
{
	return u->ctx == ctx && (src == MPI_ANY_SOURCE || u->src == src) &&
	       (tag == MPI_ANY_TAG || u->tag == tag);
}

/* The earliest-arrived unexpected message that a receive (or probe) for
 * src (rank in the communicator of ctx, or MPI_ANY_SOURCE), world rank
 * wsrc, matches; left in its queue.  Within one source the first match is
 * the earliest; across sources the first matches are compared. */
static struct unexp *find_unexpected(uint32_t ctx, int src, int wsrc, int tag)
{
	struct unexp *u, *best = NULL;
	int w, nodes;

	if (src != MPI_ANY_SOURCE) {
		for (u = p2p.unexp[wsrc].head; u; u = u->next)
			if (unexp_matches(u, ctx, src, tag))
				return u;
		return NULL;
	}
	if (!p2p.nunexp)
		return NULL;
	/* Only nodes this process knows of have sent it anything: the job's
	 * room may be much larger (bip_grow(3)). */
	nodes = bip_jobnodes();
	for (w = 0; w < nodes && w < mpi_shim.nodes; w++) {
		for (u = p2p.unexp[w].head; u; u = u->next) {
			if (best && u->seq > best->seq)
				break; /* the rest of this source came later still */
			if (unexp_matches(u, ctx, src, tag)) {
				best = u;
				break;
			}
		}
	}
	return best;
}

/* --- completion --- */

/* r's operation is over: what it held for it goes, then the engine completes it. */
static void complete(struct mpi_shim_request *r, int err)
{
	if (mpi_shim_unlikely(!r->type->predefined))
		mpi_shim_datatype_release(r->type);
	if (r->kind == MPI_SHIM_REQ_SEND && r->packed) {
		free(r->packed);
		r->packed = NULL;
	}
	mpi_shim_req_complete(r, err);
}

/*
 * A send is complete once BIP has taken its data, a synchronous one once
 * the receiver acknowledged it too (or the send was cancelled), and never
 * while the answer to a cancel is still to come (it names the request).
 */
static void send_try_complete(struct mpi_shim_request *r)
{
	if (!(r->flags & MPI_SHIM_F_LOCAL_DONE) || (r->flags & MPI_SHIM_F_CANCELLING))
		return;
	if (!r->error && (r->flags & MPI_SHIM_F_SYNC) && !(r->flags & MPI_SHIM_F_ACKED) &&
	    !r->cancelled)
		return;
	complete(r, r->error);
}

static void send_local_done(struct mpi_shim_request *r, int err)
{
	r->flags |= MPI_SHIM_F_LOCAL_DONE;
	if (err)
		r->error = err;
	send_try_complete(r);
}

/* An eager message (or one to oneself) into the receive r. */
static void recv_deliver(struct mpi_shim_request *r, int src, int tag, const void *data,
			 size_t len)
{
	int err = MPI_SUCCESS;

	r->status.MPI_SOURCE = src;
	r->status.MPI_TAG = tag;
	r->len = len;
	if (mpi_shim_unlikely(len > r->bytes)) {
		len = r->bytes;
		err = MPI_ERR_TRUNCATE;
		r->flags |= MPI_SHIM_F_TRUNC;
	}
	if (len) {
		if (mpi_shim_likely(r->type->contiguous))
			memcpy(mpi_shim_datatype_start(r->buf, r->type), data, len);
		else
			mpi_shim_datatype_unpack(data, len, r->buf, r->count, r->type, 0);
	}
	r->status.mpi_shim_bytes = (MPI_Count)len;
	complete(r, err);
}

static void recv_long_finish(struct mpi_shim_request *r, int status)
{
	size_t n = r->len;
	int err = status < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;

	if (n > r->bytes) {
		n = r->bytes;
		r->flags |= MPI_SHIM_F_TRUNC;
		if (!err)
			err = MPI_ERR_TRUNCATE;
	}
	if (r->packed) {
		if (n) {
			if (r->type->contiguous)
				memcpy(mpi_shim_datatype_start(r->buf, r->type), r->packed, n);
			else
				mpi_shim_datatype_unpack(r->packed, n, r->buf, r->count, r->type,
							 0);
		}
		free(r->packed);
		r->packed = NULL;
	}
	r->status.mpi_shim_bytes = (MPI_Count)n;
	complete(r, err);
}

/* Have BIP move the long message of r (its handle known) into place.
 * Not from a callback. */
static void recv_long_start(struct mpi_shim_request *r)
{
	void *dst;
	int rc;

	if (r->type->contiguous && r->len <= r->bytes) {
		dst = mpi_shim_datatype_start(r->buf, r->type);
	} else {
		/* Truncated, or not contiguous: through a buffer of the full
		 * length, since BIP moves the whole message. */
		r->packed = malloc(r->len);
		if (!r->packed) {
			mpi_shim_err(r->comm, MPI_ERR_NO_MEM, "MPI_Recv",
				     "no memory for a %zu-byte receive buffer", r->len);
			return;
		}
		dst = r->packed;
	}
	rc = bip_layer_recv_long(r->wpeer, r->handle, dst, r->len, (uint64_t)(uintptr_t)r);
	if (rc == 1) {
		recv_long_finish(r, 0);
	} else if (rc < 0) {
		free(r->packed);
		r->packed = NULL;
		complete(r, MPI_ERR_OTHER);
	}
}

/* --- control messages: acknowledgements, cancels and their answers --- */

static struct ctl *ctl_new(int dst, enum hdr_kind kind, uint64_t cookie)
{
	struct ctl *a = p2p.ctl_free;

	if (a)
		p2p.ctl_free = a->next;
	else if (!(a = malloc(sizeof(*a))))
		return NULL;
	memset(&a->hdr, 0, sizeof(a->hdr));
	a->dst = dst;
	a->hdr.kind = kind;
	a->hdr.aux = cookie;
	a->next = NULL;
	return a;
}

static void ctl_release(struct ctl *a)
{
	a->next = p2p.ctl_free;
	p2p.ctl_free = a;
}

static const char *ctl_name(uint32_t kind)
{
	switch (kind) {
	case HDR_ACK:
		return "acknowledging a synchronous send";
	case HDR_CANCEL:
		return "asking to cancel a send";
	default:
		return "answering a cancel";
	}
}

/* Not from a callback.  0 if sent or queued in BIP, -1 (reported). */
static int ctl_send(struct ctl *a)
{
	size_t hlen = a->hdr.kind == HDR_CANCEL ? HDR_RTS_LEN : HDR_FULL;
	int rc = bip_layer_send(a->dst, MPI_SHIM_BIP_TAG, &a->hdr, hlen, NULL, 0,
				(uint64_t)(uintptr_t)a | COOKIE_CTL);

	if (rc >= 0)
		p2p.sent_msgs[a->dst]++;
	if (rc < 0)
		fprintf(stderr, "mpi: rank %d: %s to rank %d failed: %s\n", mpi_shim.world_rank,
			ctl_name(a->hdr.kind), a->dst, bip_error_string());
	if (rc != 0)
		ctl_release(a);
	return rc < 0 ? -1 : 0;
}

/* From a callback: send it after the poll. */
static void ctl_queue(struct ctl *a)
{
	if (p2p.ctls_tail)
		p2p.ctls_tail->next = a;
	else
		p2p.ctls_head = a;
	p2p.ctls_tail = a;
	mpi_shim_progress_arm(p2p.hook);
}

static int ctl_defer(int dst, enum hdr_kind kind, uint64_t cookie)
{
	struct ctl *a = ctl_new(dst, kind, cookie);

	if (!a)
		return -1;
	ctl_queue(a);
	return 0;
}

/* --- the data of cancelled rendezvous sends --- */

static void drain_done(struct drain *d, int status)
{
	if (status < 0)
		fprintf(stderr, "mpi: rank %d: dropping the %zu bytes of a cancelled send from "
			"rank %d failed: %s\n", mpi_shim.world_rank, d->len, d->src,
			bip_error_string());
	free(d->buf);
	free(d);
	p2p.ndrains--;
}

/* Not from a callback. */
static void drain_start(struct drain *d)
{
	int rc = bip_layer_recv_long(d->src, d->handle, d->buf, d->len,
				     (uint64_t)(uintptr_t)d | COOKIE_DRAIN);

	if (rc != 0)
		drain_done(d, rc);
}

static void deferred_append(struct mpi_shim_request *r)
{
	r->next = NULL;
	if (p2p.deferred_tail)
		p2p.deferred_tail->next = r;
	else
		p2p.deferred_head = r;
	p2p.deferred_tail = r;
	mpi_shim_progress_arm(p2p.hook);
}

mpi_shim_cold static void run_deferred(void)
{
	while (p2p.ctls_head) {
		struct ctl *a = p2p.ctls_head;

		p2p.ctls_head = a->next;
		if (!p2p.ctls_head)
			p2p.ctls_tail = NULL;
		ctl_send(a);
	}
	while (p2p.drains_head) {
		struct drain *d = p2p.drains_head;

		p2p.drains_head = d->next;
		if (!p2p.drains_head)
			p2p.drains_tail = NULL;
		drain_start(d);
	}
	while (p2p.deferred_head) {
		struct mpi_shim_request *r = p2p.deferred_head;

		p2p.deferred_head = r->next;
		if (!p2p.deferred_head)
			p2p.deferred_tail = NULL;
		recv_long_start(r);
	}
}

/* --- the callbacks, called from BIP's progress --- */

/*
 * src asks to cancel its send of cookie.  Its envelope, and the
 * announcement of a rendezvous's data, came before this (BIP keeps the
 * order from one node), so the send is either still unexpected here or
 * was matched by a receive.
 */
static int on_cancel(int src, uint64_t msgno, uint64_t cookie)
{
	struct drain *d = NULL;
	struct unexp *u;
	struct ctl *a;

	for (u = p2p.unexp[src].head; u; u = u->next)
		if (u->msgno == msgno)
			break;
	a = ctl_new(src, u && (u->kind != U_RTS || u->ready) ? HDR_CANCEL_YES : HDR_CANCEL_NO,
		    cookie);
	if (!a)
		return -EAGAIN;
	if (a->hdr.kind == HDR_CANCEL_YES && u->kind == U_RTS) {
		d = malloc(sizeof(*d));
		if (d)
			d->buf = malloc(u->len);
		if (!d || !d->buf) {
			/* The data cannot be taken off the sender's hands: the
			 * message stays, and the send completes normally. */
			free(d);
			d = NULL;
			a->hdr.kind = HDR_CANCEL_NO;
		}
	}
	if (a->hdr.kind == HDR_CANCEL_YES) {
		if (d) {
			d->next = NULL;
			d->src = src;
			d->handle = u->handle;
			d->len = u->len;
			if (p2p.drains_tail)
				p2p.drains_tail->next = d;
			else
				p2p.drains_head = d;
			p2p.drains_tail = d;
			p2p.ndrains++;
			mpi_shim_progress_arm(p2p.hook);
		}
		unexp_remove(u);
		unexp_release(u);
	}
	ctl_queue(a);
	return 0;
}

/* The answer to a cancel of r. */
static void on_cancel_answer(struct mpi_shim_request *r, int yes)
{
	r->flags &= ~MPI_SHIM_F_CANCELLING;
	p2p.ncancelling--;
	if (yes) {
		r->cancelled = 1;
		r->status.mpi_shim_cancelled = 1;
	}
	if (r->flags & MPI_SHIM_F_REOPENED) {
		r->flags &= ~MPI_SHIM_F_REOPENED;
		r->done = 1;
		if (r->freed)
			mpi_shim_request_release(r);
		return;
	}
	send_try_complete(r);
}

static int on_envelope(int src, const unsigned char *p, size_t len)
{
	struct mpi_shim_request *r;
	struct unexp *u;
	struct hdr h;

	if (mpi_shim_unlikely(len < HDR_BASE))
		goto too_short;
	memcpy(&h, p, HDR_BASE);
	if (mpi_shim_likely(h.kind == HDR_EAGER)) {
		r = match_posted(h.ctx, h.src, src, h.tag);
		if (mpi_shim_likely(r != NULL)) {
			recv_deliver(r, h.src, h.tag, p + HDR_BASE, len - HDR_BASE);
			return 0;
		}
		if (mpi_shim_unlikely(len - HDR_BASE > EAGER_CAP))
			goto too_long;
		u = unexp_alloc();
		if (!u)
			return -EAGAIN;
		u->kind = U_EAGER;
		u->len = len - HDR_BASE;
		memcpy(u->data, p + HDR_BASE, u->len);
		goto queue;
	}
	if (mpi_shim_unlikely(len < (h.kind == HDR_RTS || h.kind == HDR_CANCEL ? HDR_RTS_LEN :
								   HDR_FULL)))
		goto too_short;
	memcpy(&h.aux, p + HDR_BASE, sizeof(h.aux));
	switch (h.kind) {
	case HDR_EAGER_SYNC:
		r = find_posted(h.ctx, h.src, src, h.tag);
		if (r) {
			if (ctl_defer(src, HDR_ACK, h.aux) < 0)
				return -EAGAIN; /* left where it was: try again later */
			posted_remove(r);
			recv_deliver(r, h.src, h.tag, p + HDR_FULL, len - HDR_FULL);
			return 0;
		}
		if (mpi_shim_unlikely(len - HDR_FULL > EAGER_CAP))
			goto too_long;
		u = unexp_alloc();
		if (!u)
			return -EAGAIN;
		u->kind = U_EAGER_SYNC;
		u->aux = h.aux;
		u->len = len - HDR_FULL;
		memcpy(u->data, p + HDR_FULL, u->len);
		goto queue;
	case HDR_RTS:
		memcpy(&h.cookie, p + HDR_FULL, sizeof(h.cookie));
		r = match_posted(h.ctx, h.src, src, h.tag);
		if (r) {
			r->status.MPI_SOURCE = h.src;
			r->status.MPI_TAG = h.tag;
			r->len = (size_t)h.aux;
			r->wpeer = src;
			p2p.rts[src].req = r;
			return 0;
		}
		u = unexp_alloc();
		if (!u)
			return -EAGAIN;
		u->kind = U_RTS;
		u->len = (size_t)h.aux;
		u->aux = h.cookie;
		p2p.rts[src].u = u;
		goto queue;
	case HDR_ACK:
		r = (struct mpi_shim_request *)(uintptr_t)h.aux;
		r->flags |= MPI_SHIM_F_ACKED;
		send_try_complete(r);
		return 0;
	case HDR_CANCEL:
		memcpy(&h.cookie, p + HDR_FULL, sizeof(h.cookie));
		return on_cancel(src, h.aux, h.cookie);
	case HDR_CANCEL_YES:
	case HDR_CANCEL_NO:
		on_cancel_answer((struct mpi_shim_request *)(uintptr_t)h.aux,
				 h.kind == HDR_CANCEL_YES);
		return 0;
	default:
		fprintf(stderr, "mpi: rank %d: message of unknown kind %u from rank %d dropped\n",
			mpi_shim.world_rank, h.kind, src);
		return 0;
	}
too_short:
	fprintf(stderr, "mpi: rank %d: message of %zu bytes from rank %d is shorter than its "
		"envelope: dropped\n", mpi_shim.world_rank, len, src);
	return 0;
too_long:
	/* Only a sender with a larger EAGER_CAP sends this. */
	fprintf(stderr, "mpi: rank %d: eager message of %zu bytes from rank %d is over %zu: "
		"dropped\n", mpi_shim.world_rank, len, src, EAGER_CAP);
	return 0;
queue:
	u->ctx = h.ctx;
	u->tag = h.tag;
	u->src = h.src;
	u->wsrc = src;
	u->msgno = p2p.taken_msgs[src];
	unexp_append(u);
	return 0;
}

static int on_short(int src, int tag, const void *data, size_t len)
{
	int rc = on_envelope(src, data, len);

	(void)tag;
	if (mpi_shim_likely(rc == 0))
		p2p.taken_msgs[src]++;
	return rc;
}

static int on_long(int src, int tag, size_t len, uint64_t handle)
{
	struct pending_rts *p = &p2p.rts[src];

	if (p->req) {
		struct mpi_shim_request *r = p->req;

		p->req = NULL;
		r->handle = handle;
		r->len = len;
		deferred_append(r);
	} else if (p->u) {
		p->u->handle = handle;
		p->u->len = len;
		p->u->ready = 1;
		p->u = NULL;
	} else {
		fprintf(stderr, "mpi: rank %d: long message of %zu bytes from rank %d without "
			"its envelope\n", mpi_shim.world_rank, len, src);
	}
	return 0;
}

static void on_send_done(uint64_t cookie, int status)
{
	if (cookie & COOKIE_CTL) {
		ctl_release((struct ctl *)(uintptr_t)(cookie & ~(uint64_t)COOKIE_KIND));
		return;
	}
	send_local_done((struct mpi_shim_request *)(uintptr_t)cookie,
			status < 0 ? MPI_ERR_OTHER : MPI_SUCCESS);
}

static void on_recv_done(uint64_t cookie, int status)
{
	if (cookie & COOKIE_DRAIN) {
		drain_done((struct drain *)(uintptr_t)(cookie & ~(uint64_t)COOKIE_KIND), status);
		return;
	}
	recv_long_finish((struct mpi_shim_request *)(uintptr_t)cookie, status);
}

static const struct bip_layer_ops p2p_layer_ops = {
	.short_arrived = on_short,
	.long_arrived = on_long,
	.send_done = on_send_done,
	.recv_done = on_recv_done,
};

/* --- starting sends and receives --- */

static int self_send(struct mpi_shim_request *r, const void *data, size_t bytes)
{
	const struct hdr *h = (const struct hdr *)r->hdr;
	struct mpi_shim_request *q = match_posted(h->ctx, h->src, mpi_shim.world_rank, h->tag);
	struct unexp *u;

	if (q) {
		recv_deliver(q, h->src, h->tag, data, bytes);
		send_local_done(r, MPI_SUCCESS);
		return MPI_SUCCESS;
	}
	u = unexp_alloc();
	if (!u)
		return MPI_ERR_NO_MEM;
	u->ctx = h->ctx;
	u->tag = h->tag;
	u->src = h->src;
	u->wsrc = mpi_shim.world_rank;
	u->len = bytes;
	u->msgno = r->msgno = p2p.sent_msgs[mpi_shim.world_rank]++;
	r->flags |= MPI_SHIM_F_NAMED;
	if (bytes <= SELF_EAGER && r->mode != MPI_SHIM_MODE_SYNC) {
		u->kind = U_SELF_COPY;
		if (bytes)
			memcpy(u->data, data, bytes);
		unexp_append(u);
		send_local_done(r, MPI_SUCCESS);
	} else {
		/* Completes when a receive takes it, like a rendezvous. */
		u->kind = U_SELF_REF;
		u->sender = r;
		u->sdata = data;
		unexp_append(u);
	}
	return MPI_SUCCESS;
}

/* A send that could not start: undo what send_start took. */
static int send_failed(struct mpi_shim_request *r, int rc)
{
	free(r->packed);
	r->packed = NULL;
	if (!r->type->predefined)
		mpi_shim_datatype_release(r->type);
	return rc;
}

int mpi_shim_send_start(struct mpi_shim_request *r, const void *buf, size_t count, MPI_Datatype t,
			int dst, int tag, MPI_Comm comm, uint32_t ctx, int mode)
{
	struct hdr *h = (struct hdr *)r->hdr;
	const void *data;
	size_t bytes, hlen;
	int wdst, rc;

	r->kind = MPI_SHIM_REQ_SEND;
	r->ops = &mpi_shim_p2p_ops;
	r->mode = (uint8_t)mode;
	r->buf = (void *)buf;
	r->count = count;
	r->type = t;
	/* Released at completion (complete). */
	if (mpi_shim_unlikely(!t->predefined))
		mpi_shim_datatype_retain(t);
	r->peer = dst;
	r->tag = tag;
	r->comm = comm;
	r->ctx = ctx;
	r->done = 0;
	r->cancelled = 0;
	r->status.mpi_shim_cancelled = 0;
	r->error = MPI_SUCCESS;
	r->flags &= MPI_SHIM_F_KEEP;
	r->packed = NULL;
	mpi_shim_req_hold_comm(r);
	if (mpi_shim_unlikely(dst == MPI_PROC_NULL)) {
		complete(r, MPI_SUCCESS);
		return MPI_SUCCESS;
	}
	bytes = (size_t)count * t->size;
	r->bytes = bytes;
	if (mpi_shim_likely(t->contiguous || !bytes)) {
		data = mpi_shim_datatype_start(buf, t);
	} else {
		r->packed = malloc(bytes);
		if (!r->packed)
			return send_failed(r, MPI_ERR_NO_MEM);
		mpi_shim_datatype_pack(buf, count, t, 0, r->packed, bytes);
		data = r->packed;
	}
	r->wpeer = wdst = comm->peer_world[dst];
	h->ctx = ctx;
	h->tag = tag;
	h->src = comm->rank;
	if (mpi_shim_unlikely(wdst == mpi_shim.world_rank)) {
		rc = self_send(r, data, bytes);
		return rc ? send_failed(r, rc) : MPI_SUCCESS;
	}
	if (mpi_shim_likely(bytes <= p2p.eager[wdst] && mode != MPI_SHIM_MODE_SYNC)) {
		h->kind = HDR_EAGER;
		hlen = HDR_BASE;
	} else if (mode == MPI_SHIM_MODE_SYNC && bytes + sizeof(h->aux) <= p2p.eager[wdst]) {
		h->kind = HDR_EAGER_SYNC;
		h->aux = (uint64_t)(uintptr_t)r;
		hlen = HDR_FULL;
		r->flags |= MPI_SHIM_F_SYNC;
	} else {
		h->kind = HDR_RTS;
		h->aux = bytes;
		h->cookie = (uint64_t)(uintptr_t)r;
		hlen = HDR_RTS_LEN;
	}
	rc = bip_layer_send(wdst, MPI_SHIM_BIP_TAG, h, hlen, data, bytes, (uint64_t)(uintptr_t)r);
	if (mpi_shim_likely(rc >= 0)) {
		r->msgno = p2p.sent_msgs[wdst]++;
		r->flags |= MPI_SHIM_F_NAMED;
	}
	if (mpi_shim_likely(rc == 1)) {
		send_local_done(r, MPI_SUCCESS);
	} else if (rc < 0) {
		return send_failed(r, MPI_ERR_OTHER);
	}
	return MPI_SUCCESS;
}

/* A receive takes the unexpected message u. */
static void take_unexpected(struct mpi_shim_request *r, struct unexp *u)
{
	struct ctl *a;

	switch (u->kind) {
	case U_EAGER:
	case U_SELF_COPY:
		recv_deliver(r, u->src, u->tag, u->data, u->len);
		break;
	case U_EAGER_SYNC:
		recv_deliver(r, u->src, u->tag, u->data, u->len);
		a = ctl_new(u->wsrc, HDR_ACK, u->aux);
		if (a)
			ctl_send(a);
		else
			ctl_defer(u->wsrc, HDR_ACK, u->aux);
		break;
	case U_SELF_REF:
		recv_deliver(r, u->src, u->tag, u->sdata, u->len);
		send_local_done(u->sender, MPI_SUCCESS);
		break;
	case U_RTS:
		r->status.MPI_SOURCE = u->src;
		r->status.MPI_TAG = u->tag;
		r->len = u->len;
		r->wpeer = u->wsrc;
		if (u->ready) {
			r->handle = u->handle;
			recv_long_start(r);
		} else {
			/* Its announcement is still on the way. */
			p2p.rts[u->wsrc].u = NULL;
			p2p.rts[u->wsrc].req = r;
		}
		break;
	}
	unexp_release(u);
}

static void recv_setup(struct mpi_shim_request *r, void *buf, size_t count, MPI_Datatype t,
		       int src, int tag, MPI_Comm comm, uint32_t ctx)
{
	r->kind = MPI_SHIM_REQ_RECV;
	r->ops = &mpi_shim_p2p_ops;
	r->buf = buf;
	r->count = count;
	r->type = t;
	if (mpi_shim_unlikely(!t->predefined))
		mpi_shim_datatype_retain(t);
	r->peer = src;
	r->tag = tag;
	r->comm = comm;
	r->ctx = ctx;
	r->done = 0;
	r->cancelled = 0;
	r->error = MPI_SUCCESS;
	r->flags &= MPI_SHIM_F_KEEP;
	mpi_shim_req_hold_comm(r);
	r->packed = NULL;
	r->bytes = count * t->size;
	r->len = 0;
	r->status.mpi_shim_cancelled = 0;
}

int mpi_shim_recv_start(struct mpi_shim_request *r, void *buf, size_t count, MPI_Datatype t,
			int src, int tag, MPI_Comm comm, uint32_t ctx)
{
	struct unexp *u;

	recv_setup(r, buf, count, t, src, tag, comm, ctx);
	if (mpi_shim_unlikely(src == MPI_PROC_NULL)) {
		r->status.MPI_SOURCE = MPI_PROC_NULL;
		r->status.MPI_TAG = MPI_ANY_TAG;
		r->status.mpi_shim_bytes = 0;
		complete(r, MPI_SUCCESS);
		return MPI_SUCCESS;
	}
	if (src != MPI_ANY_SOURCE)
		r->wpeer = comm->peer_world[src];
	u = find_unexpected(ctx, src, r->wpeer, tag);
	if (u) {
		unexp_remove(u);
		take_unexpected(r, u);
		return MPI_SUCCESS;
	}
	posted_append(r);
	return MPI_SUCCESS;
}

int mpi_shim_recv_cancel(struct mpi_shim_request *r)
{
	if (!(r->flags & MPI_SHIM_F_POSTED))
		return 0;
	posted_remove(r);
	r->status.mpi_shim_cancelled = 1;
	r->status.MPI_SOURCE = MPI_ANY_SOURCE;
	r->status.MPI_TAG = MPI_ANY_TAG;
	r->status.mpi_shim_bytes = 0;
	r->cancelled = 1;
	complete(r, MPI_SUCCESS);
	return 1;
}

int mpi_shim_send_cancel(struct mpi_shim_request *r)
{
	struct unexp *u;
	struct ctl *a;

	if (r->cancelled || (r->flags & MPI_SHIM_F_CANCELLING) || !(r->flags & MPI_SHIM_F_NAMED) ||
	    (r->done && r->error))
		return 0;
	if (r->wpeer == mpi_shim.world_rank) {
		/* To oneself: withdrawn if no receive took it. */
		for (u = p2p.unexp[mpi_shim.world_rank].head; u; u = u->next)
			if ((u->kind == U_SELF_REF || u->kind == U_SELF_COPY) &&
			    u->msgno == r->msgno)
				break;
		if (!u)
			return 0;
		unexp_remove(u);
		if (u->kind == U_SELF_REF) {
			/* Its sender is r, or the send of a buffered r. */
			u->sender->cancelled = 1;
			u->sender->status.mpi_shim_cancelled = 1;
			complete(u->sender, MPI_SUCCESS);
		}
		unexp_release(u);
		r->cancelled = 1;
		r->status.mpi_shim_cancelled = 1;
		return 1;
	}
	a = ctl_new(r->wpeer, HDR_CANCEL, r->msgno);
	if (!a)
		return 0;
	a->hdr.cookie = (uint64_t)(uintptr_t)r;
	if (ctl_send(a) < 0)
		return 0;
	r->flags |= MPI_SHIM_F_CANCELLING;
	if (r->done) {
		r->done = 0;
		r->flags |= MPI_SHIM_F_REOPENED;
	}
	p2p.ncancelling++;
	return 0;
}

/* MPI_Start of a persistent send or receive. */
static int p2p_start(struct mpi_shim_request *r, const char *call)
{
	int rc;

	r->freed = 0;
	if (r->kind == MPI_SHIM_REQ_RECV)
		rc = mpi_shim_recv_start(r, r->buf, r->count, r->type, r->peer, r->tag, r->comm,
					 r->ctx);
	else
		rc = mpi_shim_send_start(r, r->buf, r->count, r->type, r->peer, r->tag, r->comm,
					 r->ctx, r->mode);
	if (rc)
		return mpi_shim_err(r->comm, rc, call, "starting the request failed: %s",
				    bip_error_string());
	r->active = 1;
	return MPI_SUCCESS;
}

/* MPI_Cancel of an active send or receive: the answer, if any, comes later. */
static int p2p_cancel(struct mpi_shim_request *r)
{
	if (r->kind == MPI_SHIM_REQ_RECV)
		mpi_shim_recv_cancel(r);
	else
		mpi_shim_send_cancel(r);
	return MPI_SUCCESS;
}

const struct mpi_shim_req_ops mpi_shim_p2p_ops = {
	.start = p2p_start,
	.cancel = p2p_cancel,
};

static struct unexp *probe(MPI_Comm comm, int src, int tag, MPI_Status *status)
{
	struct unexp *u = find_unexpected(comm->ctx, src,
					  src == MPI_ANY_SOURCE ? -1 : comm->peer_world[src], tag);

	if (u && status != MPI_STATUS_IGNORE && status) {
		status->MPI_SOURCE = u->src;
		status->MPI_TAG = u->tag;
		status->mpi_shim_cancelled = 0;
		status->mpi_shim_bytes = (MPI_Count)u->len;
	}
	return u;
}

int mpi_shim_probe_unexpected(MPI_Comm comm, int src, int tag, MPI_Status *status)
{
	return probe(comm, src, tag, status) != NULL;
}

/*
 * Matched probe: the message leaves the unexpected queue, so that no
 * receive or probe sees it again and a cancel of its send is refused; the
 * receive that names it takes it as if it had just been found there.
 */
void *mpi_shim_message_claim(MPI_Comm comm, int src, int tag, MPI_Status *status)
{
	struct unexp *u = probe(comm, src, tag, status);

	if (u)
		unexp_remove(u);
	return u;
}

void mpi_shim_message_recv(struct mpi_shim_request *r, void *buf, size_t count, MPI_Datatype t,
			   MPI_Comm comm, void *message)
{
	struct unexp *u = message;

	recv_setup(r, buf, count, t, u->src, u->tag, comm, comm->ctx);
	r->wpeer = u->wsrc;
	take_unexpected(r, u);
}

/* --- set-up --- */

int mpi_shim_p2p_init(void)
{
	int rc = MPI_ERR_NO_MEM;
	int i, relays;

	p2p.rts = calloc((size_t)mpi_shim.nodes, sizeof(*p2p.rts));
	p2p.eager = calloc((size_t)mpi_shim.nodes, sizeof(*p2p.eager));
	p2p.posted = calloc((size_t)mpi_shim.nodes, sizeof(*p2p.posted));
	p2p.unexp = calloc((size_t)mpi_shim.nodes, sizeof(*p2p.unexp));
	p2p.sent_msgs = calloc((size_t)mpi_shim.nodes * 2, sizeof(*p2p.sent_msgs));
	if (!p2p.rts || !p2p.eager || !p2p.posted || !p2p.unexp || !p2p.sent_msgs)
		goto free_arrays;
	p2p.taken_msgs = p2p.sent_msgs + mpi_shim.nodes;
	relays = bip_layer_relays();
	for (i = 0; i < mpi_shim.nodes; i++) {
		/* Not this node, nor a relay of the gateways (bip_layer(3)). */
		size_t m = i == mpi_shim.world_rank || (i >= bip_numnodes && i < bip_numnodes + relays) ?
				   0 : bip_layer_short_max(i);

		p2p.eager[i] = m > HDR_BASE ? m - HDR_BASE : 0;
		if (p2p.eager[i] > EAGER_CAP)
			p2p.eager[i] = EAGER_CAP;
	}
	if (bip_layer_register(MPI_SHIM_BIP_TAG, &p2p_layer_ops) < 0) {
		rc = MPI_ERR_OTHER;
		goto free_arrays;
	}
	p2p.hook = mpi_shim_progress_register(run_deferred, MPI_SHIM_PROGRESS_ON_DEMAND);
	if (p2p.hook < 0) {
		rc = MPI_ERR_OTHER;
		goto unregister_layer;
	}
	p2p.registered = 1;
	return MPI_SUCCESS;

unregister_layer:
	bip_layer_register(MPI_SHIM_BIP_TAG, NULL);

free_arrays:
	free(p2p.rts);
	free(p2p.eager);
	free(p2p.posted);
	free(p2p.unexp);
	free(p2p.sent_msgs);
	p2p.sent_msgs = p2p.taken_msgs = NULL;
	p2p.rts = NULL;
	p2p.eager = NULL;
	p2p.posted = NULL;
	p2p.unexp = NULL;
	return rc;
}

int mpi_shim_unexp_level(void)
{
	return p2p.nunexp;
}

int mpi_shim_unexp_hwm(void)
{
	return p2p.unexp_hwm;
}

void mpi_shim_unexp_hwm_restart(void)
{
	p2p.unexp_hwm = p2p.nunexp;
}

/* After the last MPI call: the protocol's memory goes (the engine's
 * requests next, mpi_shim_req_fini). */
void mpi_shim_p2p_fini(void)
{
	struct bip_layer_wait w = { 0, 0 };
	struct ctl *a;

	/* Acknowledgements and answers still owed are sent before leaving,
	 * the data of cancelled sends taken (their senders wait for it), and
	 * the answers to this process's own cancels awaited, unless every
	 * other process has ended. */
	if (p2p.ctls_head || p2p.deferred_head || p2p.drains_head)
		run_deferred();
	while (p2p.registered && (p2p.ndrains || p2p.ncancelling)) {
		mpi_shim_progress_poll();
		if ((p2p.ndrains || p2p.ncancelling) && mpi_shim_progress_wait(&w) < 0)
			break;
	}
	if (p2p.registered) {
		bip_layer_register(MPI_SHIM_BIP_TAG, NULL);
		mpi_shim_progress_unregister(p2p.hook);
	}
	p2p.registered = 0;
	free(p2p.rts);
	free(p2p.eager);
	free(p2p.posted);
	free(p2p.unexp);
	free(p2p.sent_msgs);
	p2p.rts = NULL;
	while ((a = p2p.ctl_free)) {
		p2p.ctl_free = a->next;
		free(a);
	}
	while (p2p.chunks) {
		struct chunk *c = p2p.chunks;

		p2p.chunks = c->next;
		free(c);
	}
	memset(&p2p, 0, sizeof(p2p));
}

/* --- point-to-point on the collective context --- */

int mpi_shim_coll_isend(const void *buf, size_t count, MPI_Datatype t, int dst, int tag,
			MPI_Comm comm, MPI_Request *req)
{
	struct mpi_shim_request *r = mpi_shim_req_alloc();
	int rc;

	if (!r)
		return MPI_ERR_NO_MEM;
	r->internal = 1;
	rc = mpi_shim_send_start(r, buf, count, t, dst, tag, comm, comm->coll_ctx,
				 MPI_SHIM_MODE_STANDARD);
	if (rc) {
		mpi_shim_req_free(r);
		return rc;
	}
	r->active = 1;
	*req = r;
	return MPI_SUCCESS;
}

int mpi_shim_coll_irecv(void *buf, size_t count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
			MPI_Request *req)
{
	struct mpi_shim_request *r = mpi_shim_req_alloc();

	if (!r)
		return MPI_ERR_NO_MEM;
	r->internal = 1;
	mpi_shim_recv_start(r, buf, count, t, src, tag, comm, comm->coll_ctx);
	r->active = 1;
	*req = r;
	return MPI_SUCCESS;
}

/* The blocking forms, as MPI_Send and MPI_Recv: the request never leaves
 * the call, so a message already there (a receive that finds it among the
 * unexpected, a short send) completes without the waiting machinery. */
int mpi_shim_coll_send(const void *buf, size_t count, MPI_Datatype t, int dst, int tag,
		       MPI_Comm comm)
{
	struct mpi_shim_request *r = mpi_shim_req_alloc();
	int rc;

	if (mpi_shim_unlikely(!r))
		return MPI_ERR_NO_MEM;
	r->internal = 1;
	rc = mpi_shim_send_start(r, buf, count, t, dst, tag, comm, comm->coll_ctx,
				 MPI_SHIM_MODE_STANDARD);
	if (mpi_shim_unlikely(rc)) {
		mpi_shim_req_free(r);
		return rc;
	}
	if (!r->done && (rc = mpi_shim_wait_done(r, "MPI_Wait", 0)))
		return rc;
	rc = r->error;
	mpi_shim_req_free(r);
	return rc;
}

int mpi_shim_coll_recv(void *buf, size_t count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
		       MPI_Status *status)
{
	struct mpi_shim_request *r = mpi_shim_req_alloc();
	int rc;

	if (mpi_shim_unlikely(!r))
		return MPI_ERR_NO_MEM;
	r->internal = 1;
	mpi_shim_recv_start(r, buf, count, t, src, tag, comm, comm->coll_ctx);
	if (!r->done && (rc = mpi_shim_wait_done(r, "MPI_Wait", 0)))
		return rc;
	if (status && status != MPI_STATUS_IGNORE)
		mpi_shim_status_report(status, &r->status);
	rc = r->error;
	mpi_shim_req_free(r);
	return rc;
}

int mpi_shim_coll_sendrecv(const void *sbuf, size_t scount, MPI_Datatype stype, int dst,
			   int stag, void *rbuf, size_t rcount, MPI_Datatype rtype, int src,
			   int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Request rr, sr;
	int rc, rc2;

	rc = mpi_shim_coll_irecv(rbuf, rcount, rtype, src, rtag, comm, &rr);
	if (rc)
		return rc;
	rc = mpi_shim_coll_isend(sbuf, scount, stype, dst, stag, comm, &sr);
	if (rc) {
		if (mpi_shim_recv_cancel(rr))
			mpi_shim_request_release(rr);
		return rc;
	}
	rc = mpi_shim_request_wait(&sr, MPI_STATUS_IGNORE);
	rc2 = mpi_shim_request_wait(&rr, status);
	return rc ? rc : rc2;
}
