/* SPDX-License-Identifier: MIT */
/*
 * api.c - the public calls of the BIP 0.92 manual.
 *
 * Each call checks its arguments, reports misuse once with the call's name
 * and the values, and then runs the protocol (proto.c) under the core lock.
 * Lengths are words here and bytes below.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "progress.h"
#include "proto.h"
#include "state.h"

/* --- argument checks --- */

static int check_tag(const char *call, int tag)
{
	if (bip_likely(tag >= 0 && tag < NTAGS))
		return 1;
	bip_error(call, "tag %d out of range (0 .. %d)", tag, NTAGS - 1);
	return 0;
}

static int check_buffer(const char *call, const int *buf, int length, const char *what)
{
	if (bip_unlikely(length < 0)) {
		bip_error(call, "negative %s %d", what, length);
		return 0;
	}
	if (bip_unlikely(!buf && length > 0)) {
		bip_error(call, "NULL buffer with %s %d", what, length);
		return 0;
	}
	return 1;
}

/* BIP is initialised and dst is another node. */
static int check_dst(const char *call, int dst)
{
	if (!bip_check_init(call))
		return 0;
	if (bip_unlikely(dst == bip_state.mynode)) {
		bip_error(call, "destination node %d is this node: sending to yourself is an error",
			  dst);
		return 0;
	}
	if (bip_unlikely(dst < 0 || dst >= bip_state.napp || !bip_state.peers[dst].nic ||
			 bip_is_relay(dst))) {
		if (bip_is_relay(dst)) {
			bip_error(call, "destination node %d is a relay of the gateways (bipgw(1)): "
				  "it runs no program", dst);
			return 0;
		}
		/* A node that joined the job: reached on first use. */
		if (dst >= 0 && dst < bip_state.numnodes && bip_state.grow_nic)
			return bip_core_reach(dst, call) == 0;
		bip_error(call, "destination node %d out of range (0 .. %d)", dst,
			  bip_state.napp - 1);
		return 0;
	}
	return 1;
}

static int check_send(const char *call, int dst, int tag, const int *buf, int length)
{
	if (!check_dst(call, dst) || !check_tag(call, tag) ||
	    !check_buffer(call, buf, length, "length"))
		return 0;
	if (bip_unlikely((uint64_t)length * 4 > BIP_MAX_MESSAGE)) {
		bip_error(call, "length %d words exceeds the largest message (%u bytes)", length,
			  BIP_MAX_MESSAGE);
		return 0;
	}
	return 1;
}

/* The tag may take a new receive: none posted, no bip_tgetmsg message held. */
static int check_tag_free(const char *call, int tag)
{
	struct bip_tag *t = &bip_state.tags[tag];

	if (bip_unlikely(bip_recv_state(t) != BIP_RECV_IDLE)) {
		bip_error(call, "a receive is already posted on tag %d (id %d)%s", tag,
			  bip_recv_id((uint32_t)tag, t->gen),
			  t->waiters ? ", and a thread waits for it: one receive per tag at a "
				       "time" : "");
		return 0;
	}
	if (bip_unlikely(t->q.nheld)) {
		bip_error(call, "tag %d has %u message(s) from bip_tgetmsg not yet freed with "
			  "bip_tfreemsg", tag, t->q.nheld);
		return 0;
	}
	return 1;
}

/* The arguments of a receive; whether its tag is free is checked under the
 * lock (check_tag_free), since another thread may be taking it. */
static int check_recv(const char *call, int tag, const int *buf, int maxlength)
{
	return bip_check_init(call) && check_tag(call, tag) &&
	       check_buffer(call, buf, maxlength, "maxlength");
}

/*
 * The receive lane (state.h's locking): with threads, take the short
 * message at the head of tag's queue under the tag's lock only, when no
 * receive is posted on the tag.  A receive (buf, at most maxbytes) gets it
 * copied and freed; a get (msg) gets it held, as bip_tgetmsg does.  Returns
 * its length in bytes, or -1 when the caller must take the path under the
 * big lock: a single thread, nothing queued, a long message or one longer
 * than buf, a receive posted, or (for a receive) a message held.
 */
static long lane_take(int tag, void *buf, size_t maxbytes, int **msg, int *node)
{
	struct bip_tag *t = &bip_state.tags[tag];
	struct bip_tagq_entry *e;
	long len = -1;

	if (bip_likely(__libc_single_threaded))
		return -1;
	pthread_mutex_lock(&t->lock);
	if (bip_recv_state(t) != BIP_RECV_IDLE || (!msg && t->q.nheld))
		goto out;
	e = bip_tagq_peek(&t->q);
	if (!e || e->kind != BIP_TAGQ_SHORT || (!msg && e->len > maxbytes))
		goto out;
	len = e->len;
	if (node)
		*node = e->src;
	bip_count(&bip_state.counters.short_received, 1);
	bip_count(&bip_state.counters.bytes_received, e->len);
	if (msg) {
		*msg = bip_tagq_payload(e);
		bip_tagq_hold(&t->q);
	} else {
		bip_copy(buf, bip_tagq_payload(e), e->len);
		bip_tagq_pop(&t->q);
	}
out:
	pthread_mutex_unlock(&t->lock);
	return len;
}

/* The big lock, then the tag's (state.h's locking), for a call on tag. */
struct tag_hold {
	int locked;
	struct bip_tag *t;
};

static struct tag_hold tag_take(int tag)
{
	struct tag_hold h;

	h.locked = bip_lock();
	h.t = bip_tag_lock(&bip_state.tags[tag]);
	return h;
}

static void tag_give(struct tag_hold h)
{
	bip_tag_unlock(h.t);
	bip_unlock(h.locked);
}

/* --- sends --- */

static int send_checked(const char *call, int dst, int tag, int *buf, int length)
{
	int locked, id;

	if (!check_send(call, dst, tag, buf, length))
		return -1;
	id = -EAGAIN;
	if (bip_unlikely(!__libc_single_threaded))
		id = bip_send_lane(dst, (uint32_t)tag, buf, (size_t)length * 4);
	if (id == -EAGAIN) {
		locked = bip_lock();
		id = bip_send_post(dst, (uint32_t)tag, buf, (size_t)length * 4);
		bip_unlock(locked);
	}
	if (bip_unlikely(id < 0)) {
		bip_error(call, "sending %d words to node %d on tag %d failed: %s", length, dst, tag,
			  strerror(-id));
		return -1;
	}
	return id;
}

BIP_EXPORT int bip_tisend(int dst, int tag, int *buf, int length)
{
	return send_checked("bip_tisend", dst, tag, buf, length);
}

/* A send id that was issued: 0, or a generation its slot has reached. */
static int check_send_id(const char *call, int id)
{
	uint32_t gen = (uint32_t)id >> BIP_SEND_INDEX_BITS;

	if (bip_likely(id == 0 ||
		       (id > 0 && gen &&
			gen <= bip_state.sreqs[(uint32_t)id & (BIP_MAX_SENDS - 1)].gen)))
		return 1;
	bip_error(call, "invalid send id %d (not returned by a send)", id);
	return 0;
}

/* Wait for send id; 0, or -1 when nobody is left to take it. */
static int swait_checked(const char *call, int id)
{
	struct bip_wait w;
	unsigned depth;
	int locked, rc;

	if (id == 0)
		return 0;
	bip_wait_start(&w);
	for (;;) {
		locked = bip_lock();
		if (!bip_sreq_lookup(id)) {
			bip_unlock(locked);
			return 0;
		}
		bip_progress();
		bip_unlock(locked);
		depth = bip_lock_drop();
		rc = bip_wait_step(&w);
		bip_lock_retake(depth);
		if (rc < 0) {
			/* The step's last poll may have taken the completion
			 * that the peer sent before it ended. */
			locked = bip_lock();
			rc = bip_sreq_lookup(id) == NULL;
			bip_unlock(locked);
			if (rc)
				return 0;
			bip_error(call, "send %d will never complete: %s", id, bip_wait_failure());
			return -1;
		}
	}
}

/* check_send_id under the lock: other threads' sends move the generations. */
static int check_send_id_locked(const char *call, int id)
{
	int locked, ok;

	if (!bip_check_init(call))
		return 0;
	locked = bip_lock();
	ok = check_send_id(call, id);
	bip_unlock(locked);
	return ok;
}

BIP_EXPORT void bip_swait(int id)
{
	if (!check_send_id_locked("bip_swait", id))
		return;
	swait_checked("bip_swait", id);
}

BIP_EXPORT int bip_stest(int id)
{
	int locked, done;

	if (!bip_check_init("bip_stest"))
		return -1;
	if (id == 0)
		return 1;
	locked = bip_lock();
	if (!check_send_id("bip_stest", id)) {
		bip_unlock(locked);
		return -1;
	}
	bip_progress();
	done = bip_sreq_lookup(id) == NULL;
	bip_unlock(locked);
	return done;
}

BIP_EXPORT int bip_tsend(int dst, int tag, int *buf, int length)
{
	int id = send_checked("bip_tsend", dst, tag, buf, length);

	if (id < 0)
		return -1;
	return swait_checked("bip_tsend", id);
}

/* --- receives --- */

BIP_EXPORT int bip_tirecv(int tag, int *buf, int maxlength)
{
	struct tag_hold h;
	int id;

	if (!check_recv("bip_tirecv", tag, buf, maxlength))
		return -1;
	h = tag_take(tag);
	if (!check_tag_free("bip_tirecv", tag)) {
		tag_give(h);
		return -1;
	}
	bip_progress();
	id = bip_recv_post((uint32_t)tag, buf, (size_t)maxlength * 4);
	tag_give(h);
	return id;
}

/* The tag of a posted receive id on a tag below ntags, or NULL after logging a bad id. */
static struct bip_tag *recv_lookup(const char *call, int id, uint32_t ntags)
{
	uint32_t tag, gen;
	struct bip_tag *t;

	if (!bip_check_init(call))
		return NULL;
	tag = (uint32_t)id & ((1u << BIP_RECV_TAG_BITS) - 1);
	gen = (uint32_t)id >> BIP_RECV_TAG_BITS;
	if (id < 0 || tag >= ntags || gen == 0)
		goto bad;
	t = &bip_state.tags[tag];
	if (t->gen != gen || bip_recv_state(t) == BIP_RECV_IDLE)
		goto bad;
	if (bip_unlikely(t->waiters)) {
		bip_error(call, "receive id %d on tag %u is already waited for by another thread: "
			  "one thread waits for a receive", id, tag);
		return NULL;
	}
	return t;
bad:
	bip_error(call, "invalid receive id %d (not a receive posted and not yet waited for)",
		  id);
	return NULL;
}

/* Report a completed receive and free its tag: length in bytes, or -1. */
static long recv_finish(const char *call, struct bip_tag *t, int *node)
{
	if (bip_recv_state(t) == BIP_RECV_FAILED) {
		bip_recv_set(t, BIP_RECV_IDLE);
		bip_error_msg(call, t->failure ? t->failure : "receive failed");
		free(t->failure);
		t->failure = NULL;
		return -1;
	}
	bip_recv_set(t, BIP_RECV_IDLE);
	if (node)
		*node = t->src;
	return (long)t->len;
}

/* A length in bytes as the word calls return it. */
static int words(long bytes)
{
	return bytes < 0 ? -1 : (int)(bytes / 4);
}

static int recv_done(const struct bip_tag *t)
{
	return bip_recv_state(t) == BIP_RECV_DONE || bip_recv_state(t) == BIP_RECV_FAILED;
}

/* Wait for the receive of t to complete and report it in bytes (lock state as given). */
static long recv_wait(const char *call, struct bip_tag *t, int locked, int *node)
{
	struct bip_wait w;
	long rc;

	unsigned depth = 0;
	int have = 1; /* this thread holds the lock */

	bip_wait_start(&w);
	t->waiters++;
	for (;;) {
		/* Without the lock, the receive's state is all it looks at:
		 * whoever holds the lock polls for everyone (state.h). */
		if (have)
			bip_progress();
		if (recv_done(t))
			break;
		if (have) {
			depth = bip_lock_drop();
			have = 0;
		}
		rc = bip_wait_step(&w);
		have = bip_lock_try(depth);
		if (rc < 0 && !recv_done(t)) {
			if (!have)
				bip_lock_retake(depth);
			/* Withdraw the receive: nothing can complete it. */
			t->waiters--;
			bip_recv_set(t, BIP_RECV_IDLE);
			bip_unlock(locked);
			bip_error(call, "receive on tag %u: %s",
				  (unsigned)(t - bip_state.tags), bip_wait_failure());
			return -1;
		}
	}
	if (!have)
		bip_lock_retake(depth);
	t->waiters--;
	rc = recv_finish(call, t, node);
	bip_unlock(locked);
	return rc;
}

static long rwait_checked(const char *call, int id, int *node, uint32_t ntags)
{
	int locked = bip_lock();
	struct bip_tag *t = recv_lookup(call, id, ntags);

	if (!t) {
		bip_unlock(locked);
		return -1;
	}
	return recv_wait(call, t, locked, node);
}

static long rtest_checked(const char *call, int id, int *node, uint32_t ntags)
{
	struct bip_tag *t;
	long rc = -1;
	int locked;

	locked = bip_lock();
	t = recv_lookup(call, id, ntags);
	if (t) {
		if (!recv_done(t))
			bip_progress();
		if (recv_done(t))
			rc = recv_finish(call, t, node);
	}
	bip_unlock(locked);
	return rc;
}

BIP_EXPORT int bip_rwait(int id)
{
	return words(rwait_checked("bip_rwait", id, NULL, NTAGS));
}

BIP_EXPORT int bip_rwaitx(int id, int *node)
{
	return words(rwait_checked("bip_rwaitx", id, node, NTAGS));
}

BIP_EXPORT int bip_rtest(int id)
{
	return words(rtest_checked("bip_rtest", id, NULL, NTAGS));
}

BIP_EXPORT int bip_rtestx(int id, int *node)
{
	return words(rtest_checked("bip_rtestx", id, node, NTAGS));
}

static int trecv_checked(const char *call, int tag, int *buf, int maxlength, int *node)
{
	struct tag_hold h;

	long len;

	if (!check_recv(call, tag, buf, maxlength))
		return -1;
	len = lane_take(tag, buf, (size_t)maxlength * 4, NULL, node);
	if (len >= 0)
		return words(len);
	h = tag_take(tag);
	if (!check_tag_free(call, tag)) {
		tag_give(h);
		return -1;
	}
	bip_progress();
	bip_recv_post((uint32_t)tag, buf, (size_t)maxlength * 4);
	/* The receive is posted: the lane stays out, and the wait lets go of
	 * the big lock between its polls. */
	bip_tag_unlock(h.t);
	return words(recv_wait(call, &bip_state.tags[tag], h.locked, node));
}

BIP_EXPORT int bip_trecv(int tag, int *buf, int maxlength)
{
	return trecv_checked("bip_trecv", tag, buf, maxlength, NULL);
}

BIP_EXPORT int bip_trecvx(int tag, int *buf, int maxlength, int *node)
{
	return trecv_checked("bip_trecvx", tag, buf, maxlength, node);
}

/* --- non-blocking looks at a tag's queue --- */

BIP_EXPORT int bip_tprobe(int tag)
{
	struct bip_tagq_entry *e;
	struct tag_hold h;
	int rc = -1;

	if (!bip_check_init("bip_tprobe") || !check_tag("bip_tprobe", tag))
		return -1;
	h = tag_take(tag);
	bip_progress();
	e = bip_tagq_peek(&bip_state.tags[tag].q);
	if (e && e->kind == BIP_TAGQ_SHORT)
		rc = (int)(e->len / 4);
	tag_give(h);
	return rc;
}

static int tnrecv_checked(const char *call, int tag, int *buf, int maxlength, int *node)
{
	struct bip_tagq_entry *e;
	struct tag_hold h;
	struct bip_tag *t;
	int rc = -1;
	long len;

	if (!check_recv(call, tag, buf, maxlength))
		return -1;
	len = lane_take(tag, buf, (size_t)maxlength * 4, NULL, node);
	if (len >= 0)
		return words(len);
	t = &bip_state.tags[tag];
	h = tag_take(tag);
	if (!check_tag_free(call, tag)) {
		tag_give(h);
		return -1;
	}
	bip_progress();
	e = bip_tagq_peek(&t->q);
	if (e && e->kind == BIP_TAGQ_SHORT) {
		if (e->len > (size_t)maxlength * 4) {
			char *why = bip_format("message of %u words from node %d on tag %d is longer "
					       "than the receive buffer (%d words); it stays "
					       "queued for a larger receive",
					       e->len / 4, e->src, tag, maxlength);
			bip_error_msg(call, why ? why : "message longer than the buffer");
			free(why);
		} else {
			bip_copy(buf, bip_tagq_payload(e), e->len);
			rc = (int)(e->len / 4);
			if (node)
				*node = e->src;
			bip_count(&bip_state.counters.short_received, 1);
			bip_count(&bip_state.counters.bytes_received, e->len);
			bip_tagq_pop(&t->q);
		}
	}
	tag_give(h);
	return rc;
}

BIP_EXPORT int bip_tnrecv(int tag, int *buf, int maxlength)
{
	return tnrecv_checked("bip_tnrecv", tag, buf, maxlength, NULL);
}

BIP_EXPORT int bip_tnrecvx(int tag, int *buf, int maxlength, int *node)
{
	return tnrecv_checked("bip_tnrecvx", tag, buf, maxlength, node);
}

/* --- messages left in the library's buffer: getmsg / freemsg --- */

/*
 * Take the next short message of tag in place.  Returns 1 with *msg set,
 * 0 when nothing is there, -1 when a long message is at the head.
 */
static int getmsg_once(struct bip_tag *t, int **msg, int *length, int *node)
{
	struct bip_tagq_entry *e;

	bip_progress();
	e = bip_tagq_peek(&t->q);
	if (!e)
		return 0;
	if (e->kind != BIP_TAGQ_SHORT)
		return -1;
	*msg = bip_tagq_payload(e);
	if (length)
		*length = (int)(e->len / 4);
	if (node)
		*node = e->src;
	bip_count(&bip_state.counters.short_received, 1);
	bip_count(&bip_state.counters.bytes_received, e->len);
	bip_tagq_hold(&t->q);
	return 1;
}

/* Under the lock: no receive posted on tag. */
static int check_getmsg(const char *call, int tag)
{
	struct bip_tag *t = &bip_state.tags[tag];

	if (bip_recv_state(t) != BIP_RECV_IDLE) {
		bip_error(call, "a receive is posted on tag %d (id %d)", tag,
			  bip_recv_id((uint32_t)tag, t->gen));
		return 0;
	}
	return 1;
}

static void long_at_head(const char *call, int tag)
{
	bip_error(call, "a long message is at the head of tag %d: receive it with bip_trecv "
		  "or bip_tirecv", tag);
}

static int *tngetmsg_checked(const char *call, int tag, int *length, int *node)
{
	struct tag_hold h;
	int *msg = NULL;
	long len;

	if (!bip_check_init(call) || !check_tag(call, tag))
		return NULL;
	len = lane_take(tag, NULL, 0, &msg, node);
	if (len >= 0) {
		if (length)
			*length = (int)(len / 4);
		return msg;
	}
	h = tag_take(tag);
	if (check_getmsg(call, tag))
		getmsg_once(&bip_state.tags[tag], &msg, length, node);
	tag_give(h);
	return msg;
}

static int *tgetmsg_checked(const char *call, int tag, int *length, int *node)
{
	struct tag_hold h;
	struct bip_tag *t;
	struct bip_wait w;
	unsigned depth;
	int *msg = NULL;
	long len;
	int rc;

	if (!bip_check_init(call) || !check_tag(call, tag))
		return NULL;
	t = &bip_state.tags[tag];
	bip_wait_start(&w);
	for (;;) {
		len = lane_take(tag, NULL, 0, &msg, node);
		if (len >= 0) {
			if (length)
				*length = (int)(len / 4);
			return msg;
		}
		h = tag_take(tag);
		if (!check_getmsg(call, tag)) {
			tag_give(h);
			return NULL;
		}
		rc = getmsg_once(t, &msg, length, node);
		tag_give(h);
		if (rc)
			break;
		depth = bip_lock_drop();
		rc = bip_wait_step(&w);
		bip_lock_retake(depth);
		if (rc < 0 && !(msg = tngetmsg_checked(call, tag, length, node))) {
			/* Nothing came before the others ended (the step took
			 * what they sent). */
			bip_error(call, "tag %d: %s", tag, bip_wait_failure());
			return NULL;
		}
		if (msg)
			return msg;
	}
	if (rc < 0) {
		long_at_head(call, tag);
		return NULL;
	}
	return msg;
}

BIP_EXPORT int *bip_tgetmsg(int tag, int *length, int *node)
{
	return tgetmsg_checked("bip_tgetmsg", tag, length, node);
}

BIP_EXPORT int *bip_tngetmsg(int tag, int *length, int *node)
{
	return tngetmsg_checked("bip_tngetmsg", tag, length, node);
}

static void tfreemsg_checked(const char *call, int tag)
{
	struct bip_tag *t, *locked;

	if (!bip_check_init(call) || !check_tag(call, tag))
		return;
	/* The receive lane: while messages are held no receive can be
	 * posted on the tag, so its consumer is this call alone. */
	t = &bip_state.tags[tag];
	locked = bip_tag_lock(t);
	if (!t->q.nheld) {
		bip_tag_unlock(locked);
		bip_error(call, "no message taken with bip_tgetmsg on tag %d to free", tag);
		return;
	}
	bip_tagq_release(&t->q);
	bip_tag_unlock(locked);
}

BIP_EXPORT void bip_tfreemsg(int tag)
{
	tfreemsg_checked("bip_tfreemsg", tag);
}

/* --- the untagged calls: tag 0 --- */

BIP_EXPORT int bip_isend(int dst, int *buf, int length)
{
	return send_checked("bip_isend", dst, 0, buf, length);
}

BIP_EXPORT int bip_send(int dst, int *buf, int length)
{
	int id = send_checked("bip_send", dst, 0, buf, length);

	if (id < 0)
		return -1;
	return swait_checked("bip_send", id);
}

BIP_EXPORT int bip_irecv(int *buf, int maxlength)
{
	int locked, id;

	if (!check_recv("bip_irecv", 0, buf, maxlength))
		return -1;
	locked = bip_lock();
	if (!check_tag_free("bip_irecv", 0)) {
		bip_unlock(locked);
		return -1;
	}
	bip_progress();
	id = bip_recv_post(0, buf, (size_t)maxlength * 4);
	bip_unlock(locked);
	return id;
}

BIP_EXPORT int bip_recv(int *buf, int maxlength)
{
	return trecv_checked("bip_recv", 0, buf, maxlength, NULL);
}

BIP_EXPORT int bip_recvx(int *buf, int maxlength, int *node)
{
	return trecv_checked("bip_recvx", 0, buf, maxlength, node);
}

BIP_EXPORT int bip_nrecv(int *buf, int maxlength)
{
	return tnrecv_checked("bip_nrecv", 0, buf, maxlength, NULL);
}

BIP_EXPORT int bip_nrecvx(int *buf, int maxlength, int *node)
{
	return tnrecv_checked("bip_nrecvx", 0, buf, maxlength, node);
}

BIP_EXPORT int *bip_getmsg(int *length, int *node)
{
	return tgetmsg_checked("bip_getmsg", 0, length, node);
}

BIP_EXPORT int *bip_ngetmsg(int *length, int *node)
{
	return tngetmsg_checked("bip_ngetmsg", 0, length, node);
}

BIP_EXPORT void bip_freemsg(void)
{
	tfreemsg_checked("bip_freemsg", 0);
}

BIP_EXPORT int bip_probe(void)
{
	int rc;

	if (!bip_check_init("bip_probe"))
		return -1;
	rc = bip_tprobe(0);
	return rc;
}

/*
 * Three versions of bip_get_counters: BIP_0.95's struct counts the
 * sleeps of waiters too, BIP_0.93's carries the reliability layer's
 * counters; a program linked against an older BIP gets its symbol, which
 * writes only the fields its struct has.
 */
struct bip_counters_092 {
	uint64_t f[8];
};

/* The counters, word by word: the fast lanes add to some of them without
 * the lock (bip_count). */
static void counters_copy(uint64_t *dst, size_t bytes)
{
	const uint64_t *src = (const uint64_t *)&bip_state.counters;
	size_t i;
	int locked = bip_lock();

	for (i = 0; i < bytes / sizeof(*dst); i++)
		dst[i] = bip_load_relaxed(&src[i]);
	bip_unlock(locked);
}

BIP_EXPORT void bip_get_counters_095(struct bip_counters *counters)
{
	if (counters)
		counters_copy((uint64_t *)counters, sizeof(*counters));
}

BIP_EXPORT void bip_get_counters_093(struct bip_counters *counters)
{
	if (counters)
		counters_copy((uint64_t *)counters, offsetof(struct bip_counters, sleeps));
}

BIP_EXPORT void bip_get_counters_092(struct bip_counters_092 *counters)
{
	if (counters)
		counters_copy(counters->f, sizeof(*counters));
}

#ifdef BIP_SYMVER
__asm__(".symver bip_get_counters_095, bip_get_counters@@BIP_0.95");
__asm__(".symver bip_get_counters_093, bip_get_counters@BIP_0.93");
__asm__(".symver bip_get_counters_092, bip_get_counters@BIP_0.92");
#else
/* The static archive of the unit tests: one symbol, the current one. */
void bip_get_counters(struct bip_counters *counters)
{
	bip_get_counters_095(counters);
}
#endif

/* --- byte-length forms, for layers above the API --- */

static int check_tag_bytes(const char *call, int tag)
{
	if (bip_likely(tag >= 0 && tag < BIP_TAG_FLOW))
		return 1;
	bip_error(call, "tag %d out of range (0 .. %d)", tag, BIP_TAG_FLOW - 1);
	return 0;
}

static int check_buffer_bytes(const char *call, const void *buf, size_t len, const char *what)
{
	if (bip_unlikely(!buf && len)) {
		bip_error(call, "NULL buffer with %s %zu", what, len);
		return 0;
	}
	if (bip_unlikely(len > BIP_MAX_MESSAGE)) {
		bip_error(call, "%s %zu bytes exceeds the largest message (%u bytes)", what, len,
			  BIP_MAX_MESSAGE);
		return 0;
	}
	return 1;
}

BIP_EXPORT int bip_tisend_bytes(int dst, int tag, const void *buf, size_t len)
{
	const char *call = "bip_tisend_bytes";
	int locked, id;

	if (!check_dst(call, dst) || !check_tag_bytes(call, tag) ||
	    !check_buffer_bytes(call, buf, len, "length"))
		return -1;
	id = -EAGAIN;
	if (bip_unlikely(!__libc_single_threaded))
		id = bip_send_lane(dst, (uint32_t)tag, buf, len);
	if (id == -EAGAIN) {
		locked = bip_lock();
		id = bip_send_post(dst, (uint32_t)tag, buf, len);
		bip_unlock(locked);
	}
	if (bip_unlikely(id < 0)) {
		bip_error(call, "sending %zu bytes to node %d on tag %d failed: %s", len, dst, tag,
			  strerror(-id));
		return -1;
	}
	return id;
}

BIP_EXPORT int bip_tirecv_bytes(int tag, void *buf, size_t maxlen)
{
	const char *call = "bip_tirecv_bytes";
	struct tag_hold h;
	int id;

	if (!bip_check_init(call) || !check_tag_bytes(call, tag) ||
	    !check_buffer_bytes(call, buf, maxlen, "maxlen"))
		return -1;
	if (bip_layer_of((uint32_t)tag)) {
		bip_error(call, "tag %d belongs to a layer (bip_layer_register)", tag);
		return -1;
	}
	h = tag_take(tag);
	if (!check_tag_free(call, tag)) {
		tag_give(h);
		return -1;
	}
	bip_progress();
	id = bip_recv_post((uint32_t)tag, buf, maxlen);
	tag_give(h);
	return id;
}

BIP_EXPORT long bip_rwait_bytes(int id, int *node)
{
	return rwait_checked("bip_rwait_bytes", id, node, BIP_TAG_FLOW);
}

BIP_EXPORT long bip_rtest_bytes(int id, int *node)
{
	return rtest_checked("bip_rtest_bytes", id, node, BIP_TAG_FLOW);
}
