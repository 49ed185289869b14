/* SPDX-License-Identifier: MIT */
/*
 * shm_queue.c - short messages between processes of one host: the fifo,
 * the fast boxes, and the drivers' control messages.
 *
 * Every process has one fifo in its segment that all its local peers may
 * write (many producers, one consumer, as UCX's mm transport): a sender
 * claims the next slot by a compare-and-swap of the fifo's head, once the
 * owner's consumed index says the slot is free, fills it and publishes it
 * with its sequence number.  The owner reads the slots in order, so the
 * messages of one sender keep their order.  One fifo per process, whatever
 * the number of peers: the memory grows with the processes, not with their
 * pairs.
 *
 * Fast boxes (Open MPI's fast boxes): a peer that has sent box_after
 * (BIP_SHM_BOX_AFTER, 16) messages through the fifo is lent one of the
 * owner's BIP_SHM_BOXES boxes, a ring it alone writes, so that the pairs
 * that talk most pay no compare-and-swap and meet no other sender.  The
 * leases, by control messages (kind BIP_SHM_CTL), keep each sender's order
 * across the switch between fifo and box:
 *
 *   owner -> sender  BOX_GRANT(box, epoch, from): the box is yours, its
 *                    messages numbered from `from` on.
 *   sender, first slot of the box: BOX_START(epoch, count): `count` is how
 *                    many messages I put in your fifo before; the owner
 *                    reads nothing more of the box until it has handled
 *                    that many of mine from the fifo.
 *   owner -> sender  BOX_REVOKE(box, epoch): give it back (the owner lends
 *                    a box to a busier peer and has none free: it takes
 *                    back one whose lessee sent nothing since its last look).
 *   sender, in the fifo: BOX_END(box, epoch, count): the box holds `count`
 *                    messages of mine in all; the owner handles none of my
 *                    later fifo messages before it has read them all, then
 *                    the box is free.
 *
 * A sender's state for a peer's box changes only in the poll, under that
 * peer's send lock (nic.h, post_per_peer): the grant's START is written at
 * once, and the END as soon as the peer's fifo has room (until then
 * nothing else goes to that peer: its posts answer -EAGAIN).
 *
 * Flow control: the core takes or keeps every arrival (nic.h), except that
 * it answers -EAGAIN for a sender past its allowance; the driver then keeps
 * that fifo slot and every later one of the same sender, in order, in
 * memory of its own (at most BIP_SHM_HELD_MAX slots per sender), and goes
 * on with the other senders' slots.  Only a sender past both allowances
 * stops the fifo for everyone until it clears: the last resort against a
 * sender that never makes progress.  A box refused stops only that box.
 *
 * Waking (BIP_WAIT=block): a sender that finds the fifo full marks its
 * node in the owner's wanted bitmap; the owner, when it frees slots and
 * finds marks, wakes those senders.  A box's lessee is woken when its box
 * has room again.
 *
 * Trust: a slot's fields are read once and checked (kind, length, the
 * sender's node: one this process serves, and the box's lessee for a box);
 * a control message is checked against what this process lent; a bad slot
 * is dropped, with one message per sender.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "shm.h"

#define BIP_SHM_HELD_MAX BIP_SHM_FIFO_SLOTS


/* --- sending --- */

/* Say in the owner's wanted bitmap that this process waits for room in
 * its fifo (block mode only: a spinning sender looks again by itself). */
static bip_cold void fifo_want(struct bip_shm *shm, struct bip_shm_peer *p)
{
	uint64_t *map = p->wanted;

	__atomic_fetch_or(&map[shm->mynode / 64], 1ull << (shm->mynode % 64), __ATOMIC_SEQ_CST);
	__atomic_store_n(&p->fifo->wanted, 1, __ATOMIC_SEQ_CST);
}

struct bip_shm_slot *bip_shm_fifo_reserve(struct bip_shm *shm, struct bip_shm_peer *p,
					  uint32_t *seq_p)
{
	struct bip_shm_fifo *f = p->fifo;
	uint32_t pos = bip_load_relaxed(&f->head);
	int wanted = 0;

	for (;;) {
		if (pos - p->fifo_seen >= BIP_SHM_FIFO_SLOTS) {
			/* Pairs with the release of consumed in drain_fifo:
			 * the owner has copied out the slots below it. */
			p->fifo_seen = bip_load_acquire(&f->consumed);
			if (pos - p->fifo_seen >= BIP_SHM_FIFO_SLOTS) {
				if (!bip_shm_bells || wanted)
					return NULL;
				/* Mark, then look once more: either the
				 * owner sees the mark or this sees its room
				 * (the fences on both sides). */
				fifo_want(shm, p);
				wanted = 1;
				pos = bip_load_relaxed(&f->head);
				continue;
			}
		}
		/* Claims slot pos for this process alone; the slot's content
		 * is published by the release of its seq. */
		if (__atomic_compare_exchange_n(&f->head, &pos, pos + 1, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	p->fifo_sent++;
	*seq_p = pos + 1;
	return &f->slots[pos & (BIP_SHM_FIFO_SLOTS - 1)];
}

/* Write BOX_END into p's fifo: 0, or -EAGAIN when it has no room yet. */
static int box_end(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_ctl c = { .op = BIP_SHM_BOX_END, .index = p->box_index,
				 .epoch = p->box_epoch, .count = p->box_prod };
	struct bip_shm_slot *slot;
	uint32_t seq;

	slot = bip_shm_fifo_reserve(shm, p, &seq);
	if (!slot)
		return -EAGAIN;
	memcpy(slot->payload, &c, sizeof(c));
	bip_shm_slot_publish(shm, p->node, slot, seq, BIP_SHM_CTL, 0, sizeof(c));
	p->box_state = BIP_SHM_BOX_NONE;
	return 0;
}

/* --- control messages --- */

/* Post c to dst now: 0 or -EAGAIN.  Under dst's send lock. */
static int ctl_post(struct bip_shm *shm, int dst, const struct bip_shm_ctl *c)
{
	return bip_shm_post(shm, dst, BIP_SHM_CTL, 0, c, sizeof(*c), NULL, 0);
}

void bip_shm_ctl_send(struct bip_shm *shm, int dst, const struct bip_shm_ctl *c)
{
	struct bip_peer *locked = bip_peer_lock(&bip_state.peers[dst]);
	struct bip_shm_ctl_out *o;

	if (!shm->ctl_head && ctl_post(shm, dst, c) == 0) {
		bip_peer_unlock(locked);
		return;
	}
	bip_peer_unlock(locked);
	o = malloc(sizeof(*o));
	if (!o) {
		/* Lost: a lease the peer never hears of stays unused, a
		 * claim waits; said once, where it is decided. */
		bip_error("bip_progress", "shm: out of memory for a control message to node %d",
			  dst);
		return;
	}
	o->next = NULL;
	o->dst = dst;
	o->ctl = *c;
	bip_shm_attend(shm);
	if (shm->ctl_tail)
		shm->ctl_tail->next = o;
	else
		shm->ctl_head = o;
	shm->ctl_tail = o;
}

/* Send the control messages that waited, in order, until one finds no room. */
static void ctl_flush(struct bip_shm *shm)
{
	struct bip_shm_ctl_out *o;

	while ((o = shm->ctl_head)) {
		struct bip_peer *locked = bip_peer_lock(&bip_state.peers[o->dst]);
		int rc = ctl_post(shm, o->dst, &o->ctl);

		bip_peer_unlock(locked);
		if (rc < 0)
			return;
		shm->ctl_head = o->next;
		if (!shm->ctl_head)
			shm->ctl_tail = NULL;
		free(o);
	}
}

/* The lender l grants this process its box c->index. */
static void box_granted(struct bip_shm *shm, struct bip_shm_peer *l, const struct bip_shm_ctl *c)
{
	struct bip_peer *locked = bip_peer_lock(&bip_state.peers[l->node]);
	struct bip_shm_ctl start = { .op = BIP_SHM_BOX_START, .epoch = c->epoch };
	struct bip_shm_slot *slot;
	uint32_t seq;

	if (c->index >= BIP_SHM_BOXES || l->box_state != BIP_SHM_BOX_NONE) {
		bip_peer_unlock(locked);
		bip_shm_bad_slot(shm, l->node, "a grant", BIP_SHM_CTL, c->index, c->epoch);
		return;
	}
	l->box_index = c->index;
	l->box_out = &l->boxes[c->index];
	l->box_epoch = c->epoch;
	l->box_prod = (uint32_t)c->count;
	l->box_seen = (uint32_t)c->count;
	start.index = c->index;
	start.count = l->fifo_sent;
	/* The box is new to this process: it has room. */
	slot = bip_shm_box_reserve(l, &seq);
	memcpy(slot->payload, &start, sizeof(start));
	bip_shm_slot_publish(shm, l->node, slot, seq, BIP_SHM_CTL, 0, sizeof(start));
	l->box_state = BIP_SHM_BOX_OPEN;
	bip_peer_unlock(locked);
}

/* The lender l takes its box back. */
static void box_revoked(struct bip_shm *shm, struct bip_shm_peer *l, const struct bip_shm_ctl *c)
{
	struct bip_peer *locked = bip_peer_lock(&bip_state.peers[l->node]);

	if (l->box_state == BIP_SHM_BOX_OPEN && c->index == l->box_index &&
	    c->epoch == l->box_epoch) {
		l->box_state = BIP_SHM_BOX_ENDING;
		if (box_end(shm, l) < 0) {
			shm->nending++; /* on a later poll */
			bip_shm_attend(shm);
		}
	}
	bip_peer_unlock(locked);
}

/* The ENDs that found no room in their fifo (rare: the scan is fine). */
static bip_cold void ends_flush(struct bip_shm *shm)
{
	int i;

	for (i = 0; i < shm->nlocal && shm->nending; i++) {
		struct bip_shm_peer *p = &shm->peers[shm->local[i]];
		struct bip_peer *locked;

		if (p->box_state != BIP_SHM_BOX_ENDING)
			continue;
		locked = bip_peer_lock(&bip_state.peers[p->node]);
		if (box_end(shm, p) == 0)
			shm->nending--;
		bip_peer_unlock(locked);
	}
}

/* --- lending boxes --- */

static void lent_add(struct bip_shm *shm, int b)
{
	shm->lent[shm->nlent++] = b;
	bip_shm_watch_update(shm);
}

static void lent_remove(struct bip_shm *shm, int b)
{
	int i;

	for (i = 0; i < shm->nlent; i++)
		if (shm->lent[i] == b) {
			shm->lent[i] = shm->lent[--shm->nlent];
			break;
		}
	bip_shm_watch_update(shm);
}

/* Take back, at its END, the box that p holds. */
static void box_release(struct bip_shm *shm, struct bip_shm_peer *p, int b)
{
	struct bip_shm_box_own *own = &shm->box_own[b];

	own->lessee = -1;
	own->revoked = 0;
	p->box_in = -1;
	lent_remove(shm, b);
	shm->stats.box_ends++;
}

/* Ask back one box whose lessee has sent nothing since the last look. */
static void box_reclaim(struct bip_shm *shm)
{
	int i, asked = 0;

	for (i = 0; i < BIP_SHM_BOXES; i++)
		if (shm->box_own[i].revoked)
			return; /* one at a time */
	for (i = 0; i < BIP_SHM_BOXES; i++) {
		struct bip_shm_box_own *own = &shm->box_own[i];

		if (!asked && own->lessee >= 0 && own->cons == own->mark) {
			struct bip_shm_ctl c = { .op = BIP_SHM_BOX_REVOKE, .index = (uint32_t)i,
						 .epoch = own->epoch };

			own->revoked = 1;
			asked = 1;
			shm->stats.box_revokes++;
			bip_shm_ctl_send(shm, own->lessee, &c);
		}
		own->mark = own->cons;
	}
}

/* p has sent box_after messages through the fifo: lend it a box. */
static void box_lend(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_ctl c = { .op = BIP_SHM_BOX_GRANT };
	int b;

	for (b = 0; b < BIP_SHM_BOXES; b++)
		if (shm->box_own[b].lessee < 0)
			break;
	if (b == BIP_SHM_BOXES) {
		box_reclaim(shm);
		return;
	}
	shm->box_own[b].lessee = p->node;
	shm->box_own[b].peer = p;
	shm->box_own[b].epoch++;
	shm->box_own[b].started = 0;
	shm->box_own[b].short_word = 0; /* none until its start is read */
	shm->box_own[b].revoked = 0;
	shm->box_own[b].mark = shm->box_own[b].cons;
	p->box_in = b;
	lent_add(shm, b);
	shm->stats.box_grants++;
	c.index = (uint32_t)b;
	c.epoch = shm->box_own[b].epoch;
	c.count = shm->box_own[b].cons;
	bip_shm_ctl_send(shm, p->node, &c);
}

/* --- receiving --- */

void bip_shm_bad_slot(struct bip_shm *shm, int src, const char *where, uint32_t kind, uint32_t tag,
		      uint32_t len)
{
	struct bip_shm_peer *p = src >= 0 && src < shm->numnodes ? &shm->peers[src] : NULL;

	if (p && p->bad_slots++)
		return;
	bip_error("bip_progress", "shm: node %d wrote a bad slot into %s (kind %u, tag %u, %u "
		  "bytes): dropped", src, where, kind, tag, len);
}

/* A control message from p: 0 when done with, -EAGAIN for an END that
 * must wait for its box. */
static int ctl_arrived(struct bip_shm *shm, struct bip_shm_peer *p, const void *payload,
		       uint32_t len, int from_fifo)
{
	struct bip_shm_ctl c;

	if (len != sizeof(c)) {
		bip_shm_bad_slot(shm, p->node, "a control message", BIP_SHM_CTL, 0, len);
		return 0;
	}
	memcpy(&c, payload, sizeof(c));
	switch (c.op) {
	case BIP_SHM_BOX_GRANT:
		box_granted(shm, p, &c);
		return 0;
	case BIP_SHM_BOX_REVOKE:
		box_revoked(shm, p, &c);
		return 0;
	case BIP_SHM_CLAIM:
		bip_shm_claim_arrived(shm, p, &c);
		return 0;
	case BIP_SHM_BOX_END:
		if (from_fifo && c.index < BIP_SHM_BOXES && p->box_in == (int)c.index &&
		    shm->box_own[c.index].epoch == c.epoch) {
			struct bip_shm_box_own *own = &shm->box_own[c.index];

			if ((uint32_t)c.count - own->cons > BIP_SHM_BOX_SLOTS) {
				bip_shm_bad_slot(shm, p->node, "a box's end", BIP_SHM_CTL,
						 c.index, (uint32_t)c.count);
				box_release(shm, p, (int)c.index);
				return 0;
			}
			if (own->cons != (uint32_t)c.count)
				return -EAGAIN; /* the box first */
			box_release(shm, p, (int)c.index);
			return 0;
		}
		break;
	}
	bip_shm_bad_slot(shm, p->node, "a control message", BIP_SHM_CTL, c.op, c.index);
	return 0;
}

/* Hand what p sent to the core (or to the driver, a control message).
 * 0 when taken, -EAGAIN when it must wait. */
static inline int deliver(struct bip_shm *shm, struct bip_shm_peer *p, uint32_t kind,
			  uint32_t tag, const void *payload, uint32_t len, int from_fifo)
{
	int rc;

	if (bip_likely(kind == BIP_SHM_SHORT)) {
		rc = bip_core_short_arrived(p->node, tag, payload, len);
	} else if (kind == BIP_SHM_RTS) {
		struct bip_shm_rts rts;
		uint64_t handle;

		memcpy(&rts, payload, sizeof(rts));
		handle = ((uint64_t)p->node << 48) | ((uint64_t)(rts.lslot & 0xffff) << 32) |
			 rts.gen;
		rc = bip_core_long_arrived(p->node, tag, len, handle);
	} else {
		rc = ctl_arrived(shm, p, payload, len, from_fifo);
	}
	if (from_fifo && rc != -EAGAIN) {
		p->fifo_got++;
		if (p->box_in < 0 && ++p->fifo_since >= (uint32_t)shm->box_after) {
			p->fifo_since = 0;
			box_lend(shm, p);
		}
	}
	return rc;
}

/* Keep a fifo slot of p, behind its others: 1, or 0 when p has too many. */
static int hold(struct bip_shm *shm, struct bip_shm_peer *p, uint32_t kind, uint32_t tag,
		const uint8_t *payload, uint32_t len)
{
	struct bip_shm_held *h;

	if (p->nheld >= BIP_SHM_HELD_MAX || !(h = malloc(sizeof(*h))))
		return 0;
	h->next = NULL;
	h->kind = kind;
	h->tag = tag;
	h->len = len;
	memcpy(h->payload, payload, kind == BIP_SHM_SHORT ? len : sizeof(h->payload));
	if (p->held_tail)
		p->held_tail->next = h;
	else
		p->held_head = h;
	p->held_tail = h;
	if (!p->nheld++)
		shm->holding[shm->nholding++] = p->node;
	bip_shm_attend(shm);
	shm->stats.held++;
	return 1;
}

/* Offer again, oldest first, what each holding sender's fifo slots kept. */
static int deliver_held(struct bip_shm *shm)
{
	int i, n = 0;

	for (i = 0; i < shm->nholding;) {
		struct bip_shm_peer *p = &shm->peers[shm->holding[i]];
		struct bip_shm_held *h;

		while ((h = p->held_head)) {
			if (deliver(shm, p, h->kind, h->tag, h->payload, h->len, 1) == -EAGAIN)
				break;
			p->held_head = h->next;
			if (!p->held_head)
				p->held_tail = NULL;
			p->nheld--;
			free(h);
			n++;
		}
		if (p->nheld)
			i++;
		else
			shm->holding[i] = shm->holding[--shm->nholding];
	}
	return n;
}

/* Wake the senders that marked themselves waiting for room in my fifo. */
static bip_cold void wake_wanted(struct bip_shm *shm)
{
	uint64_t *map = shm->me->wanted;
	int i, words = shm->numnodes / 64 + 1;

	__atomic_store_n(&shm->me->fifo->wanted, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < words; i++) {
		uint64_t w = __atomic_exchange_n(&map[i], 0, __ATOMIC_SEQ_CST);

		while (w) {
			int node = i * 64 + __builtin_ctzll(w);

			w &= w - 1;
			if (node < shm->numnodes && shm->peers[node].seg && node != shm->mynode)
				bip_shm_wake(&shm->peers[node]);
		}
	}
}

static int drain_fifo(struct bip_shm *shm)
{
	struct bip_shm_fifo *f = shm->me->fifo;
	int n = 0;

	for (;;) {
		struct bip_shm_slot *slot = &f->slots[shm->fifo_cons & (BIP_SHM_FIFO_SLOTS - 1)];
		struct bip_shm_peer *p;
		uint32_t kind, tag, len;
		int src, rc;

		/* Pairs with the release of seq by the slot's sender. */
		if (bip_load_acquire(&slot->seq) != shm->fifo_cons + 1)
			break;
		/* Read once: a peer's memory, checked before use. */
		kind = bip_shm_slot_read(slot, &src, &tag, &len);
		if (bip_unlikely(kind && src < shm->numnodes && src != shm->mynode &&
				 !shm->peers[src].seg && shm->segfd >= 0)) {
			/* A node that joined the job writes first (nic.h). */
			char why[320];

			rc = bip_shm_reach_node(shm, src, why, sizeof(why));
			if (rc == -EAGAIN)
				break; /* bipload has not heard it is up yet: later */
			if (rc == 0)
				bip_core_peer_joined(&shm->nic, src);
		}
		if (bip_unlikely(!kind || src >= shm->numnodes || !shm->peers[src].seg ||
				 src == shm->mynode)) {
			bip_shm_bad_slot(shm, src, "the fifo", slot->kind, tag, len);
			goto next;
		}
		p = &shm->peers[src];
		if (bip_unlikely(p->nheld)) {
			if (!hold(shm, p, kind, tag, slot->payload, len))
				break; /* the last resort: the fifo waits */
			goto next;
		}
		rc = deliver(shm, p, kind, tag, slot->payload, len, 1);
		if (bip_unlikely(rc == -EAGAIN) && !hold(shm, p, kind, tag, slot->payload, len))
			break;
next:
		shm->fifo_cons++;
		n++;
	}
	shm->watch[shm->nlent].seq = &f->slots[shm->fifo_cons & (BIP_SHM_FIFO_SLOTS - 1)].seq;
	shm->watch[shm->nlent].expect = shm->fifo_cons + 1;
	if (shm->fifo_cons != shm->fifo_cons_published) {
		shm->fifo_cons_published = shm->fifo_cons;
		/* The slots below are copied out; pairs with the acquire of
		 * consumed in fifo_reserve. */
		bip_store_release(&f->consumed, shm->fifo_cons);
		if (bip_unlikely(bip_shm_bells)) {
			/* Orders the release before the read of wanted (fifo_reserve). */
			bip_fence();
			if (bip_load_relaxed(&f->wanted))
				wake_wanted(shm);
		}
	}
	return n;
}

/* A box slot other than a short message of its open lease: the lessee's
 * BOX_START first (read once its fifo messages before it are), an
 * announcement or a control message, or a bad slot (dropped).  1 when
 * the slot is done with, 0 when it must wait. */
static bip_cold int box_slot_other(struct bip_shm *shm, struct bip_shm_box_own *own,
				   const struct bip_shm_slot *slot)
{
	struct bip_shm_peer *p = own->peer;
	struct bip_shm_ctl c;
	uint32_t kind, tag, len;
	int src;

	/* Read once: a peer's memory, checked before use. */
	kind = bip_shm_slot_read(slot, &src, &tag, &len);
	if (!kind || src != p->node) {
		bip_shm_bad_slot(shm, src, "a box", kind, tag, len);
		return 1;
	}
	if (own->started)
		return deliver(shm, p, kind, tag, slot->payload, len, 0) != -EAGAIN;
	memcpy(&c, slot->payload, sizeof(c));
	if (kind != BIP_SHM_CTL || len != sizeof(c) || c.op != BIP_SHM_BOX_START ||
	    c.epoch != own->epoch) {
		bip_shm_bad_slot(shm, src, "a box before its start", kind, tag, len);
		return 1;
	}
	if (p->fifo_got < c.count)
		return 0; /* its fifo messages first */
	own->started = 1;
	own->short_word = bip_shm_kind_word(BIP_SHM_SHORT, p->node);
	return 1;
}

/* Deliver what the box lent[i] holds: its short messages here, the rest
 * through box_slot_other. */
static int drain_box(struct bip_shm *shm, int i)
{
	struct bip_shm_box_own *own = &shm->box_own[shm->lent[i]];
	struct bip_shm_box *box = own->box;
	uint32_t cons = own->cons;
	struct bip_shm_slot *slot;

	for (;;) {
		uint32_t len;

		slot = &box->slots[cons & (BIP_SHM_BOX_SLOTS - 1)];
		/* Pairs with the release of seq by the lessee. */
		if (bip_load_acquire(&slot->seq) != cons + 1)
			break;
		/* Read once: a peer's memory, checked before use (the kind
		 * word names the kind and the sender at once). */
		len = bip_load_relaxed(&slot->len);
		if (bip_likely(bip_load_relaxed(&slot->kind) == own->short_word &&
			       len <= sizeof(slot->payload))) {
			if (bip_unlikely(bip_core_short_arrived(own->lessee,
								bip_load_relaxed(&slot->tag),
								slot->payload, len) == -EAGAIN))
				break;
		} else if (!box_slot_other(shm, own, slot)) {
			break;
		}
		own->cons = ++cons;
	}
	shm->watch[i].seq = &slot->seq;
	shm->watch[i].expect = cons + 1;
	if (cons == own->cons_published)
		return 0;
	own->cons_published = cons;
	/* The slots below are copied out; pairs with the acquire of consumed
	 * in box_reserve. */
	bip_store_release(&box->consumed, cons);
	bip_shm_wake(own->peer);
	return 1;
}

int bip_shm_poll_queues(struct bip_shm *shm)
{
	int i, n = 0;

	if (bip_unlikely(shm->nholding))
		n += deliver_held(shm);
	/* The boxes before the fifo: a lessee's END in the fifo then finds
	 * what it wrote into its box before read, as a rule (lent and
	 * released only by fifo messages, the list does not change here). */
	for (i = 0; i < shm->nlent; i++)
		n += drain_box(shm, i);
	n += drain_fifo(shm);
	if (bip_unlikely(shm->nending))
		ends_flush(shm);
	if (bip_unlikely(shm->ctl_head))
		ctl_flush(shm);
	return n;
}

void bip_shm_watch_update(struct bip_shm *shm)
{
	int i;

	for (i = 0; i < shm->nlent; i++) {
		const struct bip_shm_box_own *own = &shm->box_own[shm->lent[i]];
		const struct bip_shm_box *box = &shm->me->boxes[shm->lent[i]];

		shm->watch[i].seq = &box->slots[own->cons & (BIP_SHM_BOX_SLOTS - 1)].seq;
		shm->watch[i].expect = own->cons + 1;
	}
	shm->watch[i].seq = &shm->me->fifo->slots[shm->fifo_cons & (BIP_SHM_FIFO_SLOTS - 1)].seq;
	shm->watch[i].expect = shm->fifo_cons + 1;
	shm->nwatch = shm->nlent + 1;
}

void bip_shm_attention_update(struct bip_shm *shm)
{
	shm->attention = shm->nholding || shm->nending || shm->ctl_head ||
			 bip_shm_long_busy(shm) || shm->npipe_wait;
}

static __attribute__((noinline)) int poll_slow(struct bip_shm *shm)
{
	int events = bip_shm_poll_queues(shm);

	if (bip_shm_long_busy(shm))
		events += bip_shm_poll_long(shm);
	bip_shm_attention_update(shm);
	return events;
}

/*
 * Most polls find nothing, and most that find something find it in a box
 * or the fifo: the poll looks only at the slot that comes next in each
 * lent box and in the fifo (watch[]), drains the ones published, and at
 * one word saying whether there is other work (attention).  Relaxed
 * loads: the drains read what they take with acquire.
 */
/* watch[i] has seen a slot published: drain that box or the fifo, and
 * the ones after it that have something (those before it had nothing at
 * this poll), so that a busy box cannot starve the fifo or the boxes
 * after it.  One that cannot move (its slot waits: a box's start for the
 * fifo, a full queue) must not hide the others: then all of them, as the
 * slow path does. */
static __attribute__((noinline)) int poll_found(struct bip_shm *shm, int i)
{
	int n = 0, got;

	for (; i < shm->nwatch; i++) {
		if (bip_load_relaxed(shm->watch[i].seq) != shm->watch[i].expect)
			continue;
		got = i < shm->nlent ? drain_box(shm, i) : drain_fifo(shm);
		if (!got)
			return n + poll_slow(shm);
		n += got;
	}
	return n;
}

/* No call but the tail calls, so that a poll that finds nothing saves no
 * registers. */
int bip_shm_poll(struct bip_nic *nic)
{
	struct bip_shm *shm = bip_shm_of(nic);
	int i;

	if (bip_unlikely(shm->attention))
		return poll_slow(shm);
	for (i = 0; i < shm->nwatch; i++)
		if (bip_load_relaxed(shm->watch[i].seq) == shm->watch[i].expect)
			return poll_found(shm, i);
	return 0;
}

int bip_shm_queues_pending(struct bip_shm *shm)
{
	struct bip_shm_slot *slot;
	int i;

	if (shm->nholding || shm->ctl_head || shm->nending)
		return 1;
	slot = &shm->me->fifo->slots[shm->fifo_cons & (BIP_SHM_FIFO_SLOTS - 1)];
	if (bip_load_acquire(&slot->seq) == shm->fifo_cons + 1)
		return 1;
	for (i = 0; i < shm->nlent; i++) {
		struct bip_shm_box_own *own = &shm->box_own[shm->lent[i]];
		struct bip_shm_box *box = &shm->me->boxes[shm->lent[i]];

		if (bip_load_acquire(&box->slots[own->cons & (BIP_SHM_BOX_SLOTS - 1)].seq) ==
		    own->cons + 1)
			return 1;
	}
	return 0;
}

void bip_shm_queues_fini(struct bip_shm *shm)
{
	struct bip_shm_ctl_out *o, *on;
	int i;

	for (o = shm->ctl_head; o; o = on) {
		on = o->next;
		free(o);
	}
	shm->ctl_head = shm->ctl_tail = NULL;
	for (i = 0; shm->peers && i < shm->numnodes; i++) {
		struct bip_shm_held *h, *hn;

		for (h = shm->peers[i].held_head; h; h = hn) {
			hn = h->next;
			free(h);
		}
		shm->peers[i].held_head = shm->peers[i].held_tail = NULL;
		shm->peers[i].nheld = 0;
	}
	shm->nholding = 0;
}
