/* SPDX-License-Identifier: MIT */
/*
 * proto.c - the short/long protocol and the driver entry points.
 *
 * Sending: a short message is handed to the peer's NIC at once (it copies
 * it), so the send completes before bip_tisend returns, unless the NIC has
 * no room; then it waits in the peer's queue, in order, and progress posts
 * it later.  A long message is announced to the receiver and the send
 * completes when the receiver's NIC has taken the data.
 *
 * Receiving: arrivals for a tag go straight into the posted receive's
 * buffer when one is waiting and nothing is queued before them; otherwise
 * they are queued in the tag's queue (a long message queues only its
 * announcement).
 *
 * Flow control is per (sender, receiver, tag) (nic.h).  An arrival that
 * finds its tag's queue full, or that its layer refuses, is kept by the
 * core in the sender's list of kept arrivals, and so is every later
 * arrival of that sender for that tag: the sender's arrivals for other
 * tags go on as before.  The tags a sender has kept arrivals for are its
 * hold_want bits; progress tells the sender whenever they change, with a
 * message on BIP_TAG_FLOW that carries the whole bitmap (so a lost race
 * between two such messages cannot leave a tag held: the last one wins).
 * A sender keeps its sends for a held tag in the peer's queue, lets the
 * later sends for other tags pass them, and posts them once the tag is
 * released.  Progress offers kept arrivals again, oldest first per tag,
 * as room appears.  What the sender posted before it learnt of the hold is
 * kept too, up to BIP_KEPT_MAX bytes per sender; past that (a sender that
 * never makes progress) the arrival is refused with -EAGAIN and the driver
 * holds that sender back whole: it waits, nothing is lost.
 *
 * Counting: a send is counted when its NIC has taken it (a short one) or
 * has completed it (a long one), in the process's counters
 * (bip_get_counters) and in its peer's sent_bytes and sent_msgs, which
 * bipload --monitor shows (monitor.h).  Two more additions to a line the
 * fast path already writes: the 8-byte ping-pong did not move.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "progress.h"
#include "proto.h"

/* --- send requests --- */

/* What bip_progress runs for the protocol (progress.h). */
static const struct bip_progress_work proto_work = {
	.layer_retry = bip_layer_retry,
	.flow = bip_flow_progress,
	.push_queued = bip_push_queued,
};

int bip_sreq_table_init(void)
{
	unsigned i;

	bip_progress_set_work(&proto_work);
	bip_state.sreqs = calloc(BIP_MAX_SENDS, sizeof(*bip_state.sreqs));
	if (!bip_state.sreqs)
		return -ENOMEM;
	bip_state.sfree = NULL;
	for (i = BIP_MAX_SENDS; i-- > 0;) {
		bip_state.sreqs[i].next = bip_state.sfree;
		bip_state.sfree = &bip_state.sreqs[i];
	}
	return 0;
}

void bip_sreq_table_free(void)
{
	unsigned i;

	/* Sends that never left (bip_finalize gave up on them) */
	for (i = 0; bip_state.sreqs && i < BIP_MAX_SENDS; i++)
		free(bip_state.sreqs[i].copy);
	free(bip_state.sreqs);
	bip_state.sreqs = NULL;
	bip_state.sfree = NULL;
}

static int sreq_id(const struct bip_sreq *r)
{
	return (int)((r->gen << BIP_SEND_INDEX_BITS) | (uint32_t)(r - bip_state.sreqs));
}

static struct bip_sreq *sreq_alloc(void)
{
	struct bip_sreq *r = bip_state.sfree;

	if (!r)
		return NULL;
	bip_state.sfree = r->next;
	r->gen = r->gen >= BIP_SEND_GEN_MAX ? 1 : r->gen + 1;
	r->next = NULL;
	r->layer = 0;
	r->force_long = 0;
	r->hdr = NULL;
	r->hlen = 0;
	bip_state.inflight_sends++;
	return r;
}

static void sreq_free(struct bip_sreq *r)
{
	free(r->copy);
	r->copy = NULL;
	r->state = BIP_SEND_FREE;
	r->next = bip_state.sfree;
	bip_state.sfree = r;
	bip_state.inflight_sends--;
}

/*
 * The request of a live send id; NULL for an id whose send has completed
 * (its slot was freed or reused).  Ids that were never issued are caught
 * by the caller's range check.
 */
struct bip_sreq *bip_sreq_lookup(int id)
{
	struct bip_sreq *r = &bip_state.sreqs[(uint32_t)id & (BIP_MAX_SENDS - 1)];

	if (r->state == BIP_SEND_FREE || r->gen != (uint32_t)id >> BIP_SEND_INDEX_BITS)
		return NULL;
	return r;
}

/* The send of r has completed: tell its layer, if it belongs to one. */
static void sreq_complete(struct bip_sreq *r, int status)
{
	const struct bip_layer_ops *ops = r->layer ? bip_layer_of(r->tag) : NULL;
	uint64_t cookie = r->cookie;

	sreq_free(r);
	if (ops)
		ops->send_done(cookie, status);
}

/*
 * Hand a short message (hdr then buf) to a NIC.  A NIC that cannot gather
 * the two pieces gets them assembled here.
 */
static int post_short_msg(struct bip_nic *nic, int dst, uint32_t tag, const void *hdr,
			  size_t hlen, const void *buf, size_t len)
{
	unsigned char msg[BIP_SHORT_MAX];

	if (bip_likely(!hlen))
		return nic->ops->post_short(nic, dst, tag, buf, len);
	if (nic->ops->post_short2)
		return nic->ops->post_short2(nic, dst, tag, hdr, hlen, buf, len);
	memcpy(msg, hdr, hlen);
	if (len)
		memcpy(msg + hlen, buf, len);
	return nic->ops->post_short(nic, dst, tag, msg, hlen + len);
}

static void count_sent(int dst, size_t len, int is_long)
{
	struct bip_peer *p = &bip_state.peers[dst];

	bip_count(&p->sent_msgs, 1);
	bip_count(&p->sent_bytes, len);
	if (is_long)
		bip_count(&bip_state.counters.long_sent, 1);
	else
		bip_count(&bip_state.counters.short_sent, 1);
	bip_count(&bip_state.counters.bytes_sent, len);
}

/* Hand r to its NIC.  0 when handed (short: complete), -EAGAIN, or -errno. */
static int sreq_post(struct bip_sreq *r)
{
	struct bip_nic *nic = bip_state.peers[r->dst].nic;
	int rc;

	if (!r->force_long && r->hlen + r->len <= (r->layer ? bip_layer_short_limit(nic) :
								   BIP_SHORT_MAX)) {
		rc = post_short_msg(nic, r->dst, r->tag, r->hdr, r->hlen, r->buf, r->len);
		if (rc == 0)
			count_sent(r->dst, r->hlen + r->len, 0);
		return rc;
	}
	rc = nic->ops->post_long(nic, r->dst, r->tag, r->buf, r->len, (uint64_t)sreq_id(r));
	if (rc == 0)
		r->state = BIP_SEND_LONG;
	if (rc != 1)
		return rc;
	/* The NIC took a copy: complete now, as a short message is. */
	count_sent(r->dst, r->len, 1);
	return 0;
}

static void peer_enqueue(struct bip_peer *p, struct bip_sreq *r)
{
	r->state = BIP_SEND_QUEUED;
	r->next = NULL;
	if (p->queued_tail)
		p->queued_tail->next = r;
	else
		p->queued_head = r;
	p->queued_tail = r;
	bip_state.queued_sends++;
}

static int bit_test(const uint64_t *bits, uint32_t tag)
{
	return (int)((bits[tag / 64] >> (tag % 64)) & 1);
}

static void bit_set(uint64_t *bits, uint32_t tag)
{
	bits[tag / 64] |= 1ull << (tag % 64);
}

/*
 * Post the queued sends of p while its NIC takes them: in order per tag,
 * the sends for a tag that p holds staying where they are while later ones
 * for other tags pass them.  Under p's send lock; the sends it completes
 * are reported after, since a layer's callback may send or wait.
 */
static void peer_push(struct bip_peer *p)
{
	struct bip_sreq **link = &p->queued_head, *r, *last = NULL;
	struct bip_sreq *done = NULL, **done_tail = &done;
	struct bip_peer *locked = bip_peer_lock(p);
	uint64_t skip[BIP_TAG_WORDS];
	int rc;

	memcpy(skip, p->held_by_peer, sizeof(skip));
	while ((r = *link)) {
		if (bit_test(skip, r->tag)) {
			last = r;
			link = &r->next;
			continue;
		}
		rc = sreq_post(r);
		if (rc == -EAGAIN)
			break; /* the NIC has no room for this peer now */
		*link = r->next;
		if (!r->next)
			p->queued_tail = last;
		bip_state.queued_sends--;
		if (rc < 0 || r->state != BIP_SEND_LONG) {
			r->status = rc;
			r->next = NULL;
			*done_tail = r;
			done_tail = &r->next;
		}
	}
	bip_peer_unlock(locked);
	while ((r = done)) {
		done = r->next;
		if (r->status < 0)
			bip_error("bip_tisend", "sending %zu bytes to node %d on tag %u failed: %s",
				  r->len, r->dst, r->tag, strerror(-r->status));
		sreq_complete(r, r->status);
	}
}

/* Post the queued sends of every peer (peer_push). */
void bip_push_queued(void)
{
	int dst;

	for (dst = 0; dst < bip_state.numnodes && bip_state.queued_sends; dst++)
		if (bip_state.peers[dst].queued_head)
			peer_push(&bip_state.peers[dst]);
}

/*
 * A short message that must wait for room at the NIC is copied (header and
 * data joined), as the NIC would have copied it: the caller may reuse or
 * drop its buffers as soon as the send call returns, which the layers
 * above rely on for their headers.  This is the stall path, not the fast
 * one, so a malloc is affordable here.
 */
static int sreq_keep_short(struct bip_sreq *r)
{
	unsigned char *c = malloc(r->hlen + r->len ? r->hlen + r->len : 1);

	if (!c)
		return -ENOMEM;
	if (r->hlen)
		memcpy(c, r->hdr, r->hlen);
	bip_copy(c + r->hlen, r->buf, r->len);
	r->copy = c;
	r->buf = c;
	r->len += r->hlen;
	r->hdr = NULL;
	r->hlen = 0;
	return 0;
}

/*
 * Hand a short message to the peer's NIC now, if nothing of the peer waits
 * before it: 0 when sent (complete), -EAGAIN when it must wait in the
 * peer's queue, or a negative errno.  With threads, under the peer's send
 * lock, which is all the send lane holds.  The bitmap of held tags is read
 * only when the peer holds some.  A single thread takes the first branch
 * alone: one test of the lanes' locks and counters, not one per step.
 */
static inline __attribute__((always_inline)) int
send_short_now(struct bip_peer *p, int dst, uint32_t tag, const void *hdr,
			  size_t hlen, const void *buf, size_t len)
{
	struct bip_counters *c = &bip_state.counters;
	struct bip_peer *locked;
	int rc;

	if (bip_likely(__libc_single_threaded)) {
		if (bip_unlikely(p->queued_head) || bip_unlikely(p->holds && bip_tag_held(p, tag)))
			return -EAGAIN;
		rc = post_short_msg(p->nic, dst, tag, hdr, hlen, buf, len);
		if (bip_likely(rc == 0)) {
			c->short_sent++;
			c->bytes_sent += hlen + len;
			p->sent_msgs++;
			p->sent_bytes += hlen + len;
		} else if (rc == -EAGAIN) {
			c->send_stalls++;
		}
		return rc;
	}
	locked = bip_peer_lock(p);
	rc = -EAGAIN;
	if (!p->queued_head && (!p->holds || !bip_tag_held(p, tag))) {
		rc = post_short_msg(p->nic, dst, tag, hdr, hlen, buf, len);
		if (rc == -EAGAIN)
			bip_count(&c->send_stalls, 1);
	}
	bip_peer_unlock(locked);
	if (rc == 0)
		count_sent(dst, hlen + len, 0);
	return rc;
}

/*
 * Post a send.  Returns the send id (0 if already complete) or a negative
 * errno.  Arguments are checked by the caller.
 */
int bip_send_post(int dst, uint32_t tag, const void *buf, size_t len)
{
	return bip_send_post_hdr(dst, tag, NULL, 0, buf, len, 0, 0);
}

/* At least n (1 or 2) send slots are free. */
static int slots_free(unsigned n)
{
	return bip_state.sfree && (n == 1 || bip_state.sfree->next);
}

/* Wait until n send slots are free, letting other threads in between the
 * polls: 0, or -EPIPE (bip_wait_step). */
static int wait_slots(unsigned n)
{
	struct bip_wait w;
	unsigned depth;
	int rc;

	bip_wait_start(&w);
	for (;;) {
		bip_progress();
		if (slots_free(n))
			return 0;
		depth = bip_lock_drop();
		rc = bip_wait_step(&w);
		bip_lock_retake(depth);
		if (rc < 0)
			return -EPIPE;
	}
}

int bip_send_reserve(void)
{
	return slots_free(2) ? 0 : wait_slots(2);
}

int bip_send_post_hdr(int dst, uint32_t tag, const void *hdr, size_t hlen, const void *buf,
		      size_t len, unsigned flags, uint64_t cookie)
{
	static const int empty;
	struct bip_peer *p = &bip_state.peers[dst];
	size_t limit = (flags & BIP_SEND_LAYER) ? bip_layer_short_limit(p->nic) : BIP_SHORT_MAX;
	int is_short = hlen + len <= limit && !(flags & BIP_SEND_FORCE_LONG);
	struct bip_peer *locked;
	struct bip_sreq *r;
	int held, rc;

	/* An empty message may come with a NULL buffer: drivers always get
	 * a valid one, so that none of them needs a case of its own. */
	if (bip_unlikely(!buf))
		buf = &empty;

	if (bip_likely(is_short)) {
		rc = send_short_now(p, dst, tag, hdr, hlen, buf, len);
		if (bip_likely(rc != -EAGAIN))
			return rc;
	}

	/* Every send slot in flight: wait for one to complete. */
	if (bip_unlikely(!slots_free(1)) && (rc = wait_slots(1)) < 0)
		return rc;
	r = sreq_alloc();
	r->dst = dst;
	r->tag = tag;
	r->hdr = hdr;
	r->hlen = (uint32_t)hlen;
	r->buf = buf;
	r->len = len;
	r->layer = !!(flags & BIP_SEND_LAYER);
	r->force_long = !!(flags & BIP_SEND_FORCE_LONG);
	r->cookie = cookie;
	if (is_short) {
		rc = sreq_keep_short(r);
		if (rc < 0) {
			sreq_free(r);
			return rc;
		}
	}
	locked = bip_peer_lock(p);
	held = p->holds && bip_tag_held(p, tag);
	if (p->queued_head || is_short || held) {
		peer_enqueue(p, r);
		bip_peer_unlock(locked);
		return sreq_id(r);
	}
	rc = sreq_post(r);
	if (rc == -EAGAIN) {
		bip_count(&bip_state.counters.send_stalls, 1);
		peer_enqueue(p, r);
	}
	bip_peer_unlock(locked);
	if (rc < 0 && rc != -EAGAIN) {
		sreq_free(r);
		return rc;
	}
	if (rc == 0 && r->state != BIP_SEND_LONG) {
		/* Complete already (the NIC copied it). */
		sreq_complete(r, 0);
		return 0;
	}
	return sreq_id(r);
}

/*
 * The send lane (state.h): a short message for a peer whose NIC takes posts
 * to different peers at once, without the big lock.  0 when posted;
 * -EAGAIN when it must take the big lock's path (bip_send_post_hdr), which
 * then keeps it in order behind what waits; or a negative errno.
 */
int bip_send_lane(int dst, uint32_t tag, const void *buf, size_t len)
{
	struct bip_peer *p = &bip_state.peers[dst];
	int locked;

	if (!p->nic->ops->post_per_peer || len > BIP_SHORT_MAX)
		return -EAGAIN;
	if (bip_unlikely(!__atomic_load_n(&bip_state.send_lanes, __ATOMIC_ACQUIRE))) {
		/* The first lane: from now on the big lock's holders take the
		 * peers' locks too.  Set under the big lock, so that no holder
		 * that skipped them is still posting.  Two threads may both
		 * come here; the second finds it set. */
		locked = bip_lock();
		if (!bip_state.send_lanes)
			__atomic_store_n(&bip_state.send_lanes, 1, __ATOMIC_RELEASE);
		bip_unlock(locked);
	}
	return send_short_now(p, dst, tag, NULL, 0, buf, len);
}

void bip_core_send_done(uint64_t cookie, int status)
{
	struct bip_sreq *r;

	if (bip_unlikely(cookie & BIP_FWD_SEND)) {
		/* The forwarding layer's own posts (fwd.c), which sits above
		 * and registered itself on BIP_TAG_FWD. */
		if (bip_state.fwd_layer)
			bip_state.fwd_layer->send_done(cookie, status);
		return;
	}
	r = bip_sreq_lookup((int)cookie);

	if (!r || r->state != BIP_SEND_LONG) {
		bip_error("bip_progress", "NIC reported completion of unknown send %llu",
			  (unsigned long long)cookie);
		return;
	}
	if (status < 0)
		bip_error("bip_swait", "long send of %zu bytes to node %d on tag %u failed: %s",
			  r->len, r->dst, r->tag, strerror(-status));
	else
		count_sent(r->dst, r->len, 1);
	sreq_complete(r, status);
}

/* --- receives --- */

static void recv_fail(struct bip_tag *t, char *why)
{
	free(t->failure);
	t->failure = why;
	bip_recv_set(t, BIP_RECV_FAILED);
}

/* A message delivered: to a posted receive, or taken by its layer (a
 * layer's long message counts when the layer gives its buffer,
 * bip_layer_recv_long). */
static void count_received(size_t len, int is_long)
{
	if (is_long)
		bip_count(&bip_state.counters.long_received, 1);
	else
		bip_count(&bip_state.counters.short_received, 1);
	bip_count(&bip_state.counters.bytes_received, len);
}

static void recv_complete(struct bip_tag *t, int src, size_t len, int is_long)
{
	t->src = src;
	t->len = len;
	bip_recv_set(t, BIP_RECV_DONE);
	count_received(len, is_long);
}

static char *too_long(uint32_t tag, int src, size_t len, size_t maxlen)
{
	return bip_format("message of %zu words from node %d on tag %u is longer than the "
			  "receive buffer (%zu words); it stays queued for a larger receive",
			  len / 4, src, tag, maxlen / 4);
}

/* Start moving a long message into the posted buffer of t. */
static void recv_start_long(struct bip_tag *t, uint32_t tag, int src, size_t len,
			    uint64_t handle)
{
	struct bip_nic *nic = bip_state.peers[src].nic;
	int rc;

	bip_recv_set(t, BIP_RECV_LONG);
	t->src = src;
	t->len = len;
	rc = nic->ops->post_long_recv(nic, handle, t->buf, len,
				      (uint64_t)bip_recv_id(tag, t->gen));
	if (rc == 1)
		recv_complete(t, src, len, 1);
	else if (rc < 0)
		recv_fail(t, bip_format("receiving a long message of %zu words from node %d on "
					"tag %u failed: %s",
					len / 4, src, tag, strerror(-rc)));
}

void bip_recv_match(struct bip_tag *t, uint32_t tag)
{
	struct bip_tagq_entry *e = bip_tagq_peek(&t->q);
	uint64_t handle;

	if (!e)
		return;
	if (e->len > t->maxlen) {
		recv_fail(t, too_long(tag, e->src, e->len, t->maxlen));
		return;
	}
	if (e->kind == BIP_TAGQ_SHORT) {
		bip_copy(t->buf, bip_tagq_payload(e), e->len);
		recv_complete(t, e->src, e->len, 0);
		bip_tagq_pop(&t->q);
		return;
	}
	memcpy(&handle, bip_tagq_payload(e), sizeof(handle));
	bip_tagq_pop(&t->q);
	recv_start_long(t, tag, e->src, e->len, handle);
}

/* Post the receive of tag (checked by the caller); returns its id. */
int bip_recv_post(uint32_t tag, void *buf, size_t maxlen)
{
	struct bip_tag *t = &bip_state.tags[tag];

	t->gen = t->gen >= BIP_RECV_GEN_MAX ? 1 : t->gen + 1;
	t->buf = buf;
	t->maxlen = maxlen;
	bip_recv_set(t, BIP_RECV_POSTED);
	bip_recv_match(t, tag);
	return bip_recv_id(tag, t->gen);
}

/* Offer a short arrival to its layer, its posted receive or its queue:
 * 0 when taken, -EAGAIN when there is no room now. */
static int offer_short(uint32_t tag, int src, const void *data, size_t len)
{
	const struct bip_layer_ops *ops = bip_layer_of(tag);
	struct bip_tag *t = &bip_state.tags[tag];

	if (ops) {
		int rc = ops->short_arrived(src, (int)tag, data, len);

		if (rc == 0)
			count_received(len, 0);
		return rc;
	}
	if (bip_recv_state(t) == BIP_RECV_POSTED && !bip_tagq_unread(&t->q)) {
		if (bip_likely(len <= t->maxlen)) {
			bip_copy(t->buf, data, len);
			recv_complete(t, src, len, 0);
			return 0;
		}
		recv_fail(t, too_long(tag, src, len, t->maxlen));
	}
	return bip_tagq_push(&t->q, BIP_TAGQ_SHORT, src, data, (uint32_t)len, (uint32_t)len);
}

static int offer_long(uint32_t tag, int src, size_t len, uint64_t handle)
{
	const struct bip_layer_ops *ops = bip_layer_of(tag);
	struct bip_tag *t = &bip_state.tags[tag];

	if (ops)
		return ops->long_arrived(src, (int)tag, len, handle);
	if (bip_recv_state(t) == BIP_RECV_POSTED && !bip_tagq_unread(&t->q)) {
		if (len <= t->maxlen) {
			recv_start_long(t, tag, src, len, handle);
			return 0;
		}
		recv_fail(t, too_long(tag, src, len, t->maxlen));
	}
	return bip_tagq_push(&t->q, BIP_TAGQ_LONG, src, &handle, (uint32_t)len, sizeof(handle));
}

/* Tell progress that what p should hold has changed. */
static void hold_changed(void)
{
	bip_state.flow_dirty = 1;
}

/*
 * Keep an arrival of src for tag that found no room, behind src's earlier
 * kept ones: 0, or -EAGAIN when src has run past BIP_KEPT_MAX (or memory
 * is short), and its driver must hold it back whole.
 */
static int keep(int src, uint32_t tag, uint8_t kind, const void *data, size_t len,
		uint64_t handle)
{
	struct bip_peer *p = &bip_state.peers[src];
	size_t n = kind == BIP_TAGQ_SHORT ? len : 0;
	struct bip_kept *k;

	if (p->kept_bytes + sizeof(*k) + n > BIP_KEPT_MAX || !(k = malloc(sizeof(*k) + n))) {
		if (!p->kept_full) {
			p->kept_full = 1;
			bip_error("bip_progress", "node %d sent %zu bytes more to held tags than it "
				  "may (it makes no progress?): all its messages wait now",
				  src, p->kept_bytes);
		}
		return -EAGAIN;
	}
	k->next = NULL;
	k->tag = tag;
	k->kind = kind;
	k->len = (uint32_t)len;
	k->handle = handle;
	bip_copy(k->data, data, n);
	if (p->kept_tail)
		p->kept_tail->next = k;
	else
		p->kept_head = k;
	p->kept_tail = k;
	if (!p->kept_bytes)
		bip_state.kept_peers++;
	p->kept_bytes += sizeof(*k) + n;
	if (!bit_test(p->hold_want, tag)) {
		bit_set(p->hold_want, tag);
		hold_changed();
	}
	return 0;
}

static int arrival_checked(int src, uint32_t tag)
{
	if (bip_unlikely(src < 0 || src >= bip_state.numnodes)) {
		bip_error("bip_progress", "message for tag %u from node %d dropped: no such node",
			  tag, src);
		return 0;
	}
	if (bip_unlikely(tag >= BIP_ALL_TAGS)) {
		bip_error("bip_progress", "message from node %d for tag %u dropped: no such tag",
			  src, tag);
		return 0;
	}
	return 1;
}

static void flow_arrived(int src, const void *data, size_t len);

int bip_core_short_arrived(int src, uint32_t tag, const void *data, size_t len)
{
	int rc;

	if (bip_unlikely(!arrival_checked(src, tag)))
		return 0;
	if (bip_unlikely(tag == BIP_TAG_FLOW)) {
		flow_arrived(src, data, len);
		return 0;
	}
	/* A sender's hold_want bits are set only while the core keeps some of
	 * its arrivals (a NIC that fills the queues never calls this). */
	if (bip_likely(!bip_state.kept_peers) || !bit_test(bip_state.peers[src].hold_want, tag)) {
		rc = offer_short(tag, src, data, len);
		if (bip_likely(rc != -EAGAIN))
			return rc;
	}
	return keep(src, tag, BIP_TAGQ_SHORT, data, len, 0);
}

int bip_core_long_arrived(int src, uint32_t tag, size_t len, uint64_t handle)
{
	int rc;

	if (bip_unlikely(!arrival_checked(src, tag)))
		return 0;
	if (bip_unlikely(tag == BIP_TAG_FLOW)) {
		bip_error("bip_progress", "long message from node %d on the flow-control tag "
			  "dropped", src);
		return 0;
	}
	if (!bip_state.kept_peers || !bit_test(bip_state.peers[src].hold_want, tag)) {
		rc = offer_long(tag, src, len, handle);
		if (rc != -EAGAIN)
			return rc;
	}
	return keep(src, tag, BIP_TAGQ_LONG, NULL, len, handle);
}

/*
 * Offer the queued entries of a layer's tag to the layer, oldest first,
 * until it refuses one (-EAGAIN: it stays first in the queue) or none is
 * left.  Returns 0 or what the layer answered.
 */
int bip_layer_drain(uint32_t tag, const struct bip_layer_ops *ops)
{
	struct bip_tag *t = &bip_state.tags[tag];
	struct bip_tagq_entry *e;
	uint64_t handle;
	int rc;

	while ((e = bip_tagq_peek(&t->q))) {
		if (e->kind == BIP_TAGQ_SHORT) {
			rc = ops->short_arrived(e->src, (int)tag, bip_tagq_payload(e), e->len);
			if (rc == 0)
				count_received(e->len, 0);
		} else {
			memcpy(&handle, bip_tagq_payload(e), sizeof(handle));
			rc = ops->long_arrived(e->src, (int)tag, e->len, handle);
		}
		if (rc < 0)
			return rc;
		bip_tagq_pop(&t->q);
	}
	return 0;
}

/* Offer again what the layers refused (bip_core_queued). */
void bip_layer_retry(void)
{
	unsigned pending = bip_state.layer_pending;
	uint32_t i;

	bip_state.layer_pending = 0;
	for (i = 0; i < BIP_INTERNAL_TAGS; i++) {
		const struct bip_layer_ops *ops = bip_state.layer[i];

		if ((pending & (1u << i)) && ops && bip_layer_drain(NTAGS + i, ops) < 0)
			bip_state.layer_pending |= 1u << i;
	}
}

void bip_core_queued(uint32_t tag)
{
	const struct bip_layer_ops *ops;
	struct bip_tag *t;

	if (bip_unlikely(tag >= BIP_ALL_TAGS)) {
		bip_error("bip_progress", "the NIC reported a message queued for tag %u, "
			  "which does not exist", tag);
		return;
	}
	t = &bip_state.tags[tag];
	bip_tagq_produced(&t->q);
	if (bip_unlikely(tag == BIP_TAG_FLOW)) {
		struct bip_tagq_entry *e;

		while ((e = bip_tagq_peek(&t->q))) {
			if (e->kind == BIP_TAGQ_SHORT && arrival_checked(e->src, tag))
				flow_arrived(e->src, bip_tagq_payload(e), e->len);
			bip_tagq_pop(&t->q);
		}
		return;
	}
	ops = bip_layer_of(tag);
	if (ops) {
		/* Behind an entry the layer refused, nothing is offered: it
		 * goes first when bip_layer_retry offers it again. */
		if (!(bip_state.layer_pending & (1u << (tag - NTAGS))) &&
		    bip_layer_drain(tag, ops) < 0)
			bip_state.layer_pending |= 1u << (tag - NTAGS);
		return;
	}
	if (bip_recv_state(t) == BIP_RECV_POSTED)
		bip_recv_match(t, tag);
}

void bip_core_recv_done(uint64_t cookie, int status)
{
	uint32_t tag = (uint32_t)cookie & ((1u << BIP_RECV_TAG_BITS) - 1);
	uint32_t gen = (uint32_t)cookie >> BIP_RECV_TAG_BITS;
	struct bip_tag *t;

	if (cookie & BIP_LAYER_RECV) {
		uint32_t ltag = NTAGS + (uint32_t)((cookie & ~BIP_LAYER_RECV) >> BIP_LAYER_TAG_SHIFT);
		const struct bip_layer_ops *ops = bip_layer_of(ltag);

		if (ops)
			ops->recv_done(cookie & BIP_LAYER_COOKIE_MAX, status);
		else
			bip_error("bip_progress", "NIC reported completion of a receive for tag %u, "
				  "which no layer holds", ltag);
		return;
	}

	if (tag >= BIP_ALL_TAGS || bip_state.tags[tag].gen != gen ||
	    bip_recv_state(&bip_state.tags[tag]) != BIP_RECV_LONG) {
		bip_error("bip_progress", "NIC reported completion of unknown receive %llu",
			  (unsigned long long)cookie);
		return;
	}
	t = &bip_state.tags[tag];
	if (status < 0)
		recv_fail(t, bip_format("receiving a long message of %zu words from node %d on "
					"tag %u failed: %s",
					t->len / 4, t->src, tag, strerror(-status)));
	else
		recv_complete(t, t->src, t->len, 1);
}

/* --- flow control per tag (nic.h) --- */

/* The tags a peer may be told to hold: all but BIP_TAG_FLOW. */
static void flow_mask(uint64_t *bits)
{
	uint32_t tag;

	bits[BIP_TAG_FLOW / 64] &= ~(1ull << (BIP_TAG_FLOW % 64));
	for (tag = BIP_ALL_TAGS; tag < BIP_TAG_WORDS * 64; tag++)
		bits[tag / 64] &= ~(1ull << (tag % 64));
}

/* The goodbye of bip_flow_bye: shorter than any bitmap. */
static const char flow_bye_msg[8] = "BIP-BYE";

/* src tells which of our tags it holds: its whole bitmap, little-endian
 * 64-bit words; or that it leaves (flow_bye_msg). */
static void flow_arrived(int src, const void *data, size_t len)
{
	struct bip_peer *p = &bip_state.peers[src], *locked;
	uint64_t bits[BIP_TAG_WORDS];
	int i;

	if (len == sizeof(flow_bye_msg) && !memcmp(data, flow_bye_msg, len)) {
		p->said_bye = 1;
		return;
	}
	if (len != sizeof(bits)) {
		bip_error("bip_progress", "flow-control message of %zu bytes from node %d "
			  "dropped (expected %zu)", len, src, sizeof(bits));
		return;
	}
	memcpy(bits, data, sizeof(bits));
	for (i = 0; i < BIP_TAG_WORDS; i++)
		bits[i] = le64toh(bits[i]);
	flow_mask(bits);
	locked = bip_peer_lock(p);
	memcpy(p->held_by_peer, bits, sizeof(bits));
	p->holds = 0;
	for (i = 0; i < BIP_TAG_WORDS; i++)
		p->holds |= bits[i] != 0;
	bip_peer_unlock(locked);
}

void bip_core_tag_held(int src, uint32_t tag, int held)
{
	struct bip_peer *p;

	if (bip_unlikely(src < 0 || src >= bip_state.numnodes || src == bip_state.mynode ||
			 tag == BIP_TAG_FLOW || tag >= BIP_ALL_TAGS)) {
		bip_error("bip_progress", "the NIC reported holding node %d's tag %u, which does "
			  "not exist", src, tag);
		return;
	}
	p = &bip_state.peers[src];
	if (bit_test(p->hold_want, tag) == !!held)
		return;
	p->hold_want[tag / 64] ^= 1ull << (tag % 64);
	hold_changed();
}

/*
 * Offer p's kept arrivals again, oldest first; after one of a tag finds no
 * room, the later ones of that tag stay too.  The tags left are what p
 * must hold.
 */
static void peer_offer_kept(struct bip_peer *p, int src)
{
	struct bip_kept **link = &p->kept_head, *k, *last = NULL;
	uint64_t stuck[BIP_TAG_WORDS] = { 0 };
	int rc;

	while ((k = *link)) {
		if (!bit_test(stuck, k->tag)) {
			if (k->kind == BIP_TAGQ_SHORT)
				rc = offer_short(k->tag, src, k->data, k->len);
			else
				rc = offer_long(k->tag, src, k->len, k->handle);
			if (rc != -EAGAIN) {
				*link = k->next;
				p->kept_bytes -= sizeof(*k) + (k->kind == BIP_TAGQ_SHORT ? k->len : 0);
				free(k);
				continue;
			}
			bit_set(stuck, k->tag);
		}
		last = k;
		link = &k->next;
	}
	p->kept_tail = last;
	if (!p->kept_head) {
		bip_state.kept_peers--;
		p->kept_bytes = 0;
		p->kept_full = 0;
	}
	if (memcmp(stuck, p->hold_want, sizeof(stuck))) {
		memcpy(p->hold_want, stuck, sizeof(stuck));
		hold_changed();
	}
}

/* Send each peer whose hold_want changed the whole bitmap (flow_arrived). */
static void flow_tell(void)
{
	int i, w, dirty = 0;

	for (i = 0; i < bip_state.numnodes; i++) {
		struct bip_peer *p = &bip_state.peers[i], *locked;
		uint64_t msg[BIP_TAG_WORDS];
		int rc;

		if (i == bip_state.mynode || !memcmp(p->hold_want, p->hold_told, sizeof(msg)))
			continue;
		for (w = 0; w < BIP_TAG_WORDS; w++)
			msg[w] = htole64(p->hold_want[w]);
		locked = bip_peer_lock(p);
		rc = p->nic->ops->post_short(p->nic, i, BIP_TAG_FLOW, msg, sizeof(msg));
		bip_peer_unlock(locked);
		if (rc == -EAGAIN) {
			dirty = 1;
			continue;
		}
		/* Sent, or the peer cannot be reached any more: nothing to tell. */
		memcpy(p->hold_told, p->hold_want, sizeof(msg));
	}
	bip_state.flow_dirty = dirty;
}

/*
 * Goodbye to every peer on this host (shm): a peer that sees this process
 * end without one knows it died (progress.c).  A full ring is retried a
 * while; a peer that cannot be told is not waited for.
 */
void bip_flow_bye(void)
{
	int i, tries;

	for (i = 0; i < bip_state.numnodes; i++) {
		struct bip_nic *nic = bip_state.peers[i].nic;

		if (i == bip_state.mynode || !nic || !bip_state.peers[i].by_shm ||
		    !nic->ops->alive(nic, i))
			continue;
		for (tries = 0; tries < 10000; tries++) {
			struct bip_peer *locked = bip_peer_lock(&bip_state.peers[i]);
			int rc = nic->ops->post_short(nic, i, BIP_TAG_FLOW, flow_bye_msg,
						      sizeof(flow_bye_msg));

			bip_peer_unlock(locked);
			if (rc != -EAGAIN)
				break;
			bip_progress();
		}
	}
}

void bip_flow_progress(void)
{
	int i;

	for (i = 0; i < bip_state.numnodes && bip_state.kept_peers; i++)
		if (bip_state.peers[i].kept_head)
			peer_offer_kept(&bip_state.peers[i], i);
	if (bip_state.flow_dirty)
		flow_tell();
}

void bip_flow_free(void)
{
	int i;

	for (i = 0; bip_state.peers && i < bip_state.numnodes; i++) {
		struct bip_peer *p = &bip_state.peers[i];
		struct bip_kept *k;

		while ((k = p->kept_head)) {
			p->kept_head = k->next;
			free(k);
		}
		p->kept_tail = NULL;
		p->kept_bytes = 0;
	}
	bip_state.kept_peers = 0;
	bip_state.flow_dirty = 0;
}
