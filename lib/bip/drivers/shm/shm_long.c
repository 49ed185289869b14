/* SPDX-License-Identifier: MIT */
/*
 * shm_long.c - long messages between processes of one host.
 *
 * The sender records the message (address, length) in an lsend entry of
 * its segment and announces it with an RTS.  When the receiver has a
 * buffer for it, it moves the data by one of two paths:
 *
 *  - single copy: process_vm_readv from the sender's buffer straight into
 *    the receiver's, for messages of BIP_SHM_CMA_MIN bytes and more, when
 *    the start-up probe showed that the kernel allows it;
 *  - pipelined copy through a pipe of the receiver's segment: the receiver
 *    claims the send, the sender fills chunks, the receiver empties them
 *    while the next ones are filled.  This needs no system call, so it is
 *    faster for medium sizes, and it is the fallback where
 *    process_vm_readv is refused.
 *
 * Either way the receiver then stores the send's generation in its done
 * word (in the sender's segment), and the sender's poll completes the send.
 *
 * Pipes are few (BIP_SHM_PIPES per process, whatever the number of peers),
 * so the receiver lends them: a pipe is lent to one sender at a time, by a
 * claim (the receiver writes the claim into the pipe and tells the sender
 * with a control message, BIP_SHM_CLAIM, naming the pipe and the lease's
 * epoch), and stays lent after the message so that the next ones of that
 * sender go the same way.  A receiver that needs a pipe for another sender
 * takes back one with no claim in it; one whose claim has not moved for
 * BIP_SHM_STALL_NS while others wait is taken back too, and its message
 * claimed again later from the bytes already copied, so that a sender that
 * computes without polling holds up only its own messages.  The lease word
 * says who may write the chunks: the lessee moves it from HELD to PUSH
 * before each burst and back after, the owner takes the pipe back only by
 * moving it from HELD to FREE; both by compare-and-swap, so a pipe is never
 * taken back under a writer, and a writer whose pipe was taken back finds
 * out at its next burst and stops.
 *
 * A message of at most BIP_SHM_PREPUSH_MAX bytes below BIP_SHM_CMA_MIN (or
 * with single copy off) is written into chunks of the sender's own stage
 * with its announcement (prepush), when they are free: the receiver then
 * copies it out as soon as its receive is posted, saving the claim's two
 * hand-offs between processes, which cost a scheduler's turn each when the
 * processes outnumber the processors.  A sender that needs its stage for
 * another message takes back the chunks of the oldest sends whose
 * receivers have not come yet; those receivers then claim them as usual
 * (the sender still has the data in the user's buffer).  The stage is the
 * sender's, not lent: a receiver with many senders makes no sender wait
 * for it (shm_layout.h, "stage", has the protocol of its chunks).
 *
 * Trust: the lsend entry a handle names is read once and checked against
 * the handle; a stage chunk is copied only once taken by compare-and-swap
 * from the state that names this very send; a claim is served only for a
 * send of this process to the claimer; counters a peer writes are used
 * only masked to the pipe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "atomics.h"
#include "core.h"
#include "shm.h"

/* A claim that has not moved for this long while others wait for a pipe
 * loses it (above). */
#define BIP_SHM_STALL_NS 2000000ull

void bip_shm_long_init(struct bip_shm *shm)
{
	int i;

	shm->nlfree = 0;
	for (i = BIP_SHM_LSENDS; i-- > 0;)
		shm->lfree[shm->nlfree++] = (uint16_t)i;
	shm->nlactive = 0;
	for (i = 0; i < BIP_SHM_PIPES; i++)
		shm->pipe_own[i].lessee = -1;
}

void bip_shm_long_fini(struct bip_shm *shm)
{
	int i;

	for (i = 0; shm->peers && i < shm->numnodes; i++) {
		struct bip_shm_pull *pl = shm->peers[i].pull_head, *next;

		for (; pl; pl = next) {
			next = pl->next;
			free(pl);
		}
		shm->peers[i].pull_head = shm->peers[i].pull_tail = NULL;
	}
	shm->npulls = 0;
}

static uint64_t chunks_of(size_t len)
{
	return (len + BIP_SHM_PIPE_CHUNK - 1) / BIP_SHM_PIPE_CHUNK;
}

static void list_remove(int *list, int *n, int node)
{
	int i;

	for (i = 0; i < *n; i++)
		if (list[i] == node) {
			list[i] = list[--*n];
			return;
		}
}

/* --- sender side --- */

static uint64_t lease_word(uint32_t epoch, int node, uint32_t phase)
{
	return bip_shm_lease(epoch, node, phase);
}

/* Begin a burst: HELD to PUSH.  1, or 0 when the owner took the pipe back. */
static int lease_push(struct bip_shm *shm, struct bip_shm_peer *p)
{
	uint64_t expect = lease_word(p->lease_epoch, shm->mynode, BIP_SHM_PIPE_HELD);

	/* Acquire: after the owner's last reads of the chunks (its release of
	 * the lease or of consumed); release is not needed (nothing written
	 * yet). */
	if (__atomic_compare_exchange_n(&p->pipes[p->lease].lease, &expect,
					lease_word(p->lease_epoch, shm->mynode, BIP_SHM_PIPE_PUSH),
					0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 1;
	p->lease = -1;
	return 0;
}

/* End a burst: PUSH to HELD.  Only the lessee leaves PUSH. */
static void lease_held(struct bip_shm *shm, struct bip_shm_peer *p)
{
	/* Release: the chunks written before it are the owner's to read once
	 * it takes the pipe back (it then passes over them). */
	bip_store_release(&p->pipes[p->lease].lease,
			  lease_word(p->lease_epoch, shm->mynode, BIP_SHM_PIPE_HELD));
}

/* Sender side: the chunks of send ls in my stage go back to free, unless
 * its receiver is taking them: 1 when done. */
static int stage_reclaim(struct bip_shm *shm, uint16_t ls)
{
	struct bip_shm_lsend_local *l = &shm->lsl[ls];
	struct bip_shm_stage *st = shm->me->stage;
	int c;

	for (c = 0; c < BIP_SHM_STAGE_CHUNKS; c++) {
		uint64_t expect = bip_shm_stage_word(ls, l->gen, BIP_SHM_STAGE_FULL);

		if (!(l->stage & 1u << c))
			continue;
		/* Fails while the receiver takes it, or once it has freed it. */
		if (!__atomic_compare_exchange_n(&st->state[c], &expect,
						 bip_shm_stage_word(ls, l->gen, BIP_SHM_STAGE_FREE),
						 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) &&
		    (expect & 0xff) == BIP_SHM_STAGE_TAKEN)
			return 0; /* being copied: it will be free soon */
	}
	l->stage = 0;
	shm->stats.stage_reclaimed++;
	return 1;
}

/* The bitmap of the free chunks of my stage, and their count. */
static uint32_t stage_free(struct bip_shm *shm, int *n_p)
{
	struct bip_shm_stage *st = shm->me->stage;
	uint32_t bits = 0;
	int c, n = 0;

	for (c = 0; c < BIP_SHM_STAGE_CHUNKS; c++)
		/* Pairs with the release of FREE by the receiver: its copy of
		 * the chunk is over. */
		if ((bip_load_acquire(&st->state[c]) & 0xff) == BIP_SHM_STAGE_FREE) {
			bits |= 1u << c;
			n++;
		}
	*n_p = n;
	return bits;
}

/* Sender side: n chunks of my stage, free (taking back those of the oldest
 * sends whose receivers have not come): their bitmap, or 0. */
static uint32_t stage_alloc(struct bip_shm *shm, int n)
{
	uint32_t bits;
	int i, nfree;

	bits = stage_free(shm, &nfree);
	for (i = 0; nfree < n && i < shm->nlactive; i++) {
		uint16_t ls = shm->lactive[i];

		if (shm->lsl[ls].stage && stage_reclaim(shm, ls))
			bits = stage_free(shm, &nfree);
	}
	if (nfree < n)
		return 0;
	for (; nfree > n; nfree--) /* keep the lowest n */
		bits &= ~(1u << (31 - __builtin_clz(bits)));
	return bits;
}

/* Sender side: write send ls's data into the chunks of bits, in order. */
static void stage_fill(struct bip_shm *shm, uint16_t ls, uint32_t bits, const uint8_t *buf,
		       size_t len)
{
	struct bip_shm_lsend_local *l = &shm->lsl[ls];
	struct bip_shm_stage *st = shm->me->stage;
	size_t off = 0;
	int c;

	for (c = 0; c < BIP_SHM_STAGE_CHUNKS && off < len; c++) {
		size_t chunk = len - off < BIP_SHM_PIPE_CHUNK ? len - off : BIP_SHM_PIPE_CHUNK;

		if (!(bits & 1u << c))
			continue;
		memcpy(st->chunk[c], buf + off, chunk);
		off += chunk;
		/* FREE before, so nobody else writes it; published to the
		 * receiver by the release of the RTS slot. */
		bip_store_relaxed(&st->state[c], bip_shm_stage_word(ls, l->gen, BIP_SHM_STAGE_FULL));
	}
	l->stage = bits;
	shm->me->lsend[ls].stage = bits;
	shm->stats.prepushed++;
}

int bip_shm_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie)
{
	struct bip_shm *shm = bip_shm_of(nic);
	struct bip_shm_peer *p = &shm->peers[dst];
	struct bip_shm_lsend_local *l;
	struct bip_shm_rts rts;
	struct bip_shm_slot *slot;
	uint32_t seq, bits;
	uint16_t ls;

	if (!shm->nlfree)
		return -EAGAIN;
	slot = bip_shm_slot_reserve(shm, dst, &seq);
	if (!slot)
		return -EAGAIN;
	ls = shm->lfree[--shm->nlfree];
	l = &shm->lsl[ls];
	l->gen = l->gen + 1 ? l->gen + 1 : 1;
	l->cookie = cookie;
	l->buf = buf;
	l->len = len;
	l->dst = dst;
	l->stage = 0;
	/* Published to the receiver by the release of the RTS slot. */
	shm->me->lsend[ls].addr = (uint64_t)(uintptr_t)buf;
	shm->me->lsend[ls].len = len;
	shm->me->lsend[ls].gen = l->gen;
	shm->me->lsend[ls].stage = 0;
	/* Prepush, unless the receiver reads it by single copy (the same
	 * setting on both sides): the staged copy would be wasted. */
	if (len <= BIP_SHM_PREPUSH_MAX && !(len >= shm->cma_min && p->cma)) {
		bits = stage_alloc(shm, (int)chunks_of(len));
		if (bits)
			stage_fill(shm, ls, bits, buf, len);
	}
	rts.lslot = ls;
	rts.gen = l->gen;
	memcpy(slot->payload, &rts, sizeof(rts));
	bip_shm_slot_publish(shm, dst, slot, seq, BIP_SHM_RTS, tag, (uint32_t)len);
	shm->lactive[shm->nlactive++] = ls;
	bip_shm_attend(shm);
	return 0;
}

static void push_stop(struct bip_shm *shm, struct bip_shm_peer *p)
{
	p->push_src = NULL;
	if (p->pushing) {
		p->pushing = 0;
		list_remove(shm->pushing, &shm->npushing, p->node);
	}
}

/* Sender side: fill the chunks of the pipe p lent this process that are
 * free, in one burst. */
static int push_chunks(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_pipe *pipe;
	uint64_t consumed;
	int n = 0;

	if (p->lease < 0) {
		push_stop(shm, p); /* taken back: the owner claims again */
		return 0;
	}
	pipe = &p->pipes[p->lease];
	/* Pairs with the release of consumed in pull_chunks. */
	consumed = bip_load_acquire(&pipe->consumed);
	if (p->pushed - consumed >= BIP_SHM_PIPE_CHUNKS)
		return 0;
	if (!lease_push(shm, p)) {
		push_stop(shm, p);
		return 0;
	}
	while (p->push_off < p->push_len && p->pushed - consumed < BIP_SHM_PIPE_CHUNKS) {
		size_t chunk = p->push_len - p->push_off;

		if (chunk > BIP_SHM_PIPE_CHUNK)
			chunk = BIP_SHM_PIPE_CHUNK;
		memcpy(pipe->chunk[p->pushed & (BIP_SHM_PIPE_CHUNKS - 1)],
		       p->push_src + p->push_off, chunk);
		p->push_off += chunk;
		p->pushed++;
		/* Pairs with the acquire of produced in pull_chunks. */
		bip_store_release(&pipe->produced, p->pushed);
		n++;
	}
	lease_held(shm, p);
	if (n)
		bip_shm_wake(p);
	if (p->push_off == p->push_len)
		push_stop(shm, p);
	return n;
}

void bip_shm_claim_arrived(struct bip_shm *shm, struct bip_shm_peer *p,
			   const struct bip_shm_ctl *c)
{
	struct bip_shm_pipe *pipe;
	struct bip_shm_lsend_local *l;
	uint32_t seq, lslot, gen;
	uint64_t off, lease;

	if (c->index >= BIP_SHM_PIPES) {
		bip_shm_bad_slot(shm, p->node, "a claim", BIP_SHM_CTL, c->index, c->epoch);
		return;
	}
	pipe = &p->pipes[c->index];
	/* Pairs with the release of the lease by the owner (pipe_lend). */
	lease = bip_load_acquire(&pipe->lease);
	if (lease != lease_word(c->epoch, shm->mynode, BIP_SHM_PIPE_HELD))
		return; /* taken back since: the owner claims again */
	if (p->lease != (int)c->index || p->lease_epoch != c->epoch) {
		/* A new lease: the pipe's chunks go on from where it is. */
		push_stop(shm, p);
		p->lease = (int)c->index;
		p->lease_epoch = c->epoch;
		p->pushed = bip_load_acquire(&pipe->produced);
	}
	/* Pairs with the release of claim_seq in pull_start; read once. */
	seq = bip_load_acquire(&pipe->claim_seq);
	if (seq != (uint32_t)c->count)
		return; /* an older claim's message: the newer one follows */
	lslot = pipe->claim_lslot;
	gen = pipe->claim_gen;
	off = pipe->claim_off;
	push_stop(shm, p);
	if (!lease_push(shm, p))
		return;
	pipe->push_start = p->pushed;
	/* Pairs with the acquire of push_seq in pull_chunks. */
	bip_store_release(&pipe->push_seq, seq);
	lease_held(shm, p);
	bip_shm_wake(p);
	l = &shm->lsl[lslot < BIP_SHM_LSENDS ? lslot : 0];
	if (lslot >= BIP_SHM_LSENDS || l->gen != gen || l->dst != p->node || off > l->len ||
	    !l->buf) {
		bip_shm_bad_slot(shm, p->node, "a claim", BIP_SHM_CTL, lslot, gen);
		return; /* not a send of ours to p: the receiver will wait, visibly */
	}
	p->push_src = l->buf;
	p->push_len = l->len;
	p->push_off = (size_t)off;
	p->pushing = 1;
	shm->pushing[shm->npushing++] = p->node;
	bip_shm_attend(shm);
	push_chunks(shm, p);
}

/* Sender side: complete the long sends whose receivers have the data. */
static int complete_sends(struct bip_shm *shm)
{
	int i, n = 0;

	for (i = 0; i < shm->nlactive;) {
		uint16_t slot = shm->lactive[i];
		struct bip_shm_lsend_local *l = &shm->lsl[slot];

		/* Pairs with the release of done by the receiver. */
		if (bip_load_acquire(&shm->me->ldone[slot]) != l->gen) {
			i++;
			continue;
		}
		shm->lactive[i] = shm->lactive[--shm->nlactive];
		shm->lfree[shm->nlfree++] = slot;
		if (l->stage)
			stage_reclaim(shm, slot); /* claimed, though staged */
		l->buf = NULL;
		bip_core_send_done(l->cookie, 0);
		n++;
	}
	return n;
}

/* --- receiver side --- */

/* Copy len bytes from the peer's address into buf; 0 or -errno. */
static int cma_read(struct bip_shm_peer *p, void *buf, uint64_t addr, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local = { (char *)buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

void bip_shm_probe_cma(struct bip_shm *shm)
{
	int i;

	for (i = 0; i < shm->nlocal; i++) {
		struct bip_shm_peer *p = &shm->peers[shm->local[i]];
		uint64_t v = 0;

		p->cma = cma_read(p, &v, p->seg->probe_addr, sizeof(v)) == 0 &&
			 v == p->seg->probe_value;
	}
}

/* Receiver side: copy out send lslot of p (its entry e) from p's stage,
 * taking its chunks first: 1, or 0 when p took some back (claim it then). */
static int stage_take(struct bip_shm_peer *p, const struct bip_shm_lsend *e, uint32_t lslot,
		      uint8_t *buf, size_t len)
{
	struct bip_shm_stage *st = p->stage;
	uint32_t taken = 0;
	size_t off = 0;
	int c, ok = 0;

	for (c = 0; c < BIP_SHM_STAGE_CHUNKS; c++) {
		uint64_t expect = bip_shm_stage_word(lslot, e->gen, BIP_SHM_STAGE_FULL);

		if (!(e->stage & 1u << c))
			continue;
		/* Acquire: the sender's writes of the chunk come before its
		 * release of the announcement, read before this. */
		if (!__atomic_compare_exchange_n(&st->state[c], &expect,
						 bip_shm_stage_word(lslot, e->gen,
								    BIP_SHM_STAGE_TAKEN),
						 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			goto give_back;
		taken |= 1u << c;
	}
	for (c = 0; c < BIP_SHM_STAGE_CHUNKS && off < len; c++) {
		size_t chunk = len - off < BIP_SHM_PIPE_CHUNK ? len - off : BIP_SHM_PIPE_CHUNK;

		if (!(taken & 1u << c))
			continue;
		memcpy(buf + off, st->chunk[c], chunk);
		off += chunk;
	}
	ok = off == len; /* else fewer chunks than the length needs: claim it */
give_back:
	for (c = 0; c < BIP_SHM_STAGE_CHUNKS; c++)
		if (taken & 1u << c)
			/* Copied out (or given back); pairs with the acquire
			 * in stage_free. */
			bip_store_release(&st->state[c],
					  bip_shm_stage_word(lslot, e->gen, BIP_SHM_STAGE_FREE));
	return ok;
}

/* Lend pipe k to p. */
static void pipe_lend(struct bip_shm *shm, int k, struct bip_shm_peer *p)
{
	struct bip_shm_pipe_own *own = &shm->pipe_own[k];

	own->lessee = p->node;
	own->epoch++;
	shm->stats.pipe_lends++;
	own->pull = NULL;
	p->pipe_in = k;
	/* Pairs with the acquire of the lease in bip_shm_claim_arrived: the
	 * lessee then reads produced, which nobody writes while it is free. */
	bip_store_release(&shm->me->pipes[k].lease, lease_word(own->epoch, p->node, BIP_SHM_PIPE_HELD));
}

/* Take pipe k back from its lessee, unless it is writing: 1 when done.
 * What it holds is passed over. */
static int pipe_take_back(struct bip_shm *shm, int k)
{
	struct bip_shm_pipe_own *own = &shm->pipe_own[k];
	struct bip_shm_pipe *pipe = &shm->me->pipes[k];
	uint64_t expect = lease_word(own->epoch, own->lessee, BIP_SHM_PIPE_HELD);

	/* Acquire: the lessee's chunks and produced, written before its
	 * release of HELD, are all in (it writes nothing more). */
	if (!__atomic_compare_exchange_n(&pipe->lease, &expect,
					 lease_word(own->epoch, -1, BIP_SHM_PIPE_FREE), 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	shm->peers[own->lessee].pipe_in = -1;
	own->lessee = -1;
	shm->stats.pipe_takebacks++;
	own->pulled = bip_load_acquire(&pipe->produced);
	bip_store_release(&pipe->consumed, own->pulled);
	return 1;
}

/* A pipe for p's claims: 0, or -EAGAIN when every pipe is busy. */
static int pipe_find(struct bip_shm *shm, struct bip_shm_peer *p)
{
	int k;

	if (p->pipe_in >= 0)
		return 0;
	for (k = 0; k < BIP_SHM_PIPES; k++)
		if (shm->pipe_own[k].lessee < 0) {
			pipe_lend(shm, k, p);
			return 0;
		}
	for (k = 0; k < BIP_SHM_PIPES; k++)
		if (!shm->pipe_own[k].pull && pipe_take_back(shm, k)) {
			pipe_lend(shm, k, p);
			return 0;
		}
	return -EAGAIN;
}

/* Claim the long send at the head of p's pulls, in p's pipe. */
static void pull_start(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_pull *pl = p->pull_head;
	struct bip_shm_pipe_own *own;
	struct bip_shm_pipe *pipe;
	struct bip_shm_ctl c = { .op = BIP_SHM_CLAIM };

	if (pipe_find(shm, p) < 0) {
		if (!p->pipe_waiting) {
			p->pipe_waiting = 1;
			shm->pipe_wait[shm->npipe_wait++] = p->node;
		}
		return;
	}
	own = &shm->pipe_own[p->pipe_in];
	pipe = &shm->me->pipes[p->pipe_in];
	own->pull = pl;
	own->moves = 0;
	own->moves_seen = ~0u;
	pl->started = 0;
	pipe->claim_lslot = pl->lslot;
	pipe->claim_gen = pl->gen;
	pipe->claim_off = pl->off;
	/* Pairs with the acquire of claim_seq in bip_shm_claim_arrived. */
	bip_store_release(&pipe->claim_seq, ++own->claim_seq);
	c.index = (uint32_t)p->pipe_in;
	c.epoch = own->epoch;
	c.count = own->claim_seq;
	bip_shm_ctl_send(shm, p->node, &c);
}

int bip_shm_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			   uint64_t cookie)
{
	struct bip_shm *shm = bip_shm_of(nic);
	int src = (int)(handle >> 48);
	uint32_t lslot = (uint32_t)(handle >> 32) & 0xffff;
	uint32_t gen = (uint32_t)handle;
	struct bip_shm_peer *p;
	struct bip_shm_lsend e;
	struct bip_shm_pull *pl;
	int rc;

	if (src >= shm->numnodes || src == shm->mynode || !shm->peers[src].seg ||
	    lslot >= BIP_SHM_LSENDS)
		return -EPROTO;
	p = &shm->peers[src];
	/* Read once: the peer's memory. */
	memcpy(&e, &p->lsend[lslot], sizeof(e));
	if (e.gen != gen || e.len != len)
		return -EPROTO;
	if (e.stage && len < shm->cma_min && stage_take(p, &e, lslot, buf, len)) {
		shm->stats.stage_taken++;
		/* All data is here; pairs with the acquire in complete_sends. */
		bip_store_release(&p->ldone[lslot], gen);
		bip_shm_wake(p);
		return 1;
	}
	if (len >= shm->cma_min && p->cma) {
		rc = cma_read(p, buf, e.addr, len);
		if (rc == 0) {
			/* All data is here; pairs with the acquire in complete_sends. */
			bip_store_release(&p->ldone[lslot], gen);
			bip_shm_wake(p);
			return 1;
		}
		if (rc != -EPERM && rc != -ENOSYS)
			return rc;
		p->cma = 0; /* refused after all: use the pipe from now on */
	}
	pl = malloc(sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	*pl = (struct bip_shm_pull){ .cookie = cookie, .buf = buf, .len = len,
				     .lslot = lslot, .gen = gen };
	shm->npulls++;
	bip_shm_attend(shm);
	if (p->pull_tail) {
		p->pull_tail->next = pl;
		p->pull_tail = pl;
	} else {
		p->pull_head = p->pull_tail = pl;
		pull_start(shm, p);
	}
	return 0;
}

/* Empty the chunks that pipe k's lessee has filled; complete its pull
 * when all is here. */
static int pull_chunks(struct bip_shm *shm, int k)
{
	struct bip_shm_pipe_own *own = &shm->pipe_own[k];
	struct bip_shm_pipe *pipe = &shm->me->pipes[k];
	struct bip_shm_peer *p = &shm->peers[own->lessee];
	struct bip_shm_pull *pl = own->pull;
	uint64_t produced, start;

	if (!pl->started) {
		/* Pairs with the release of push_seq in bip_shm_claim_arrived. */
		if (bip_load_acquire(&pipe->push_seq) != own->claim_seq)
			return 0;
		pl->started = 1;
		/* Where the lessee starts; what it wrote under an earlier
		 * claim and this process did not read is passed over. */
		own->pulled = pipe->push_start;
		bip_store_release(&pipe->consumed, own->pulled);
	}
	produced = bip_load_acquire(&pipe->produced);
	start = own->pulled;

	while (own->pulled < produced && pl->off < pl->len) {
		size_t chunk = pl->len - pl->off;

		if (chunk > BIP_SHM_PIPE_CHUNK)
			chunk = BIP_SHM_PIPE_CHUNK;
		memcpy(pl->buf + pl->off, pipe->chunk[own->pulled & (BIP_SHM_PIPE_CHUNKS - 1)],
		       chunk);
		pl->off += chunk;
		own->pulled++;
		/* The chunk is copied out; pairs with the acquire in push_chunks. */
		bip_store_release(&pipe->consumed, own->pulled);
	}
	if (own->pulled != start) {
		own->moves++;
		bip_shm_wake(p);
	}
	if (pl->off < pl->len)
		return own->pulled != start;
	/* All data is here; pairs with the acquire in complete_sends. */
	bip_store_release(&p->ldone[pl->lslot], pl->gen);
	bip_shm_wake(p);
	p->pull_head = pl->next;
	if (!p->pull_head)
		p->pull_tail = NULL;
	own->pull = NULL;
	shm->npulls--;
	bip_core_recv_done(pl->cookie, 0);
	free(pl);
	if (p->pull_head)
		pull_start(shm, p);
	return 1;
}

/* Claims that wait for a pipe: take back pipes whose claims do not move. */
static bip_cold void pipes_for_waiters(struct bip_shm *shm)
{
	uint64_t now = bip_now_ns();
	int k;

	for (k = 0; k < BIP_SHM_PIPES; k++) {
		struct bip_shm_pipe_own *own = &shm->pipe_own[k];
		struct bip_shm_peer *q;

		if (!own->pull)
			continue;
		if (own->moves != own->moves_seen) {
			own->moves_seen = own->moves;
			own->still_since = now;
			continue;
		}
		if (now - own->still_since < BIP_SHM_STALL_NS)
			continue;
		q = &shm->peers[own->lessee];
		if (!pipe_take_back(shm, k))
			continue;
		/* Its message is claimed again, from the bytes it has, once a
		 * pipe is free for it. */
		own->pull->started = 0;
		own->pull = NULL;
		shm->stats.pipe_stalls++;
		if (!q->pipe_waiting) {
			q->pipe_waiting = 1;
			shm->pipe_wait[shm->npipe_wait++] = q->node;
		}
	}
	while (shm->npipe_wait) {
		struct bip_shm_peer *w = &shm->peers[shm->pipe_wait[0]];

		if (pipe_find(shm, w) < 0)
			return;
		w->pipe_waiting = 0;
		memmove(shm->pipe_wait, shm->pipe_wait + 1,
			(size_t)--shm->npipe_wait * sizeof(*shm->pipe_wait));
		pull_start(shm, w);
	}
}

/*
 * Chunks to move now, for the sleep's last look (shm.c): a pipe with room
 * and a claimed send to fill it, a pull whose sender has filled chunks or
 * answered its claim, a claim that waits for a pipe (pipes_for_waiters
 * takes one back on time only in a poll).  A push whose pipe is full and
 * a pull whose sender has not moved wait for the other side, which rings
 * this process's bell when it moves (push_chunks, pull_chunks,
 * bip_shm_claim_arrived): a relay or a sender whose peer computes without
 * polling sleeps.
 */
int bip_shm_long_pending(struct bip_shm *shm)
{
	int i;

	if (shm->npipe_wait)
		return 1;
	for (i = 0; i < shm->npushing; i++) {
		const struct bip_shm_peer *p = &shm->peers[shm->pushing[i]];

		/* Pairs with the release of consumed in pull_chunks. */
		if (p->lease < 0 || p->pushed - bip_load_acquire(&p->pipes[p->lease].consumed) <
		    BIP_SHM_PIPE_CHUNKS)
			return 1;
	}
	for (i = 0; i < BIP_SHM_PIPES; i++) {
		const struct bip_shm_pipe_own *own = &shm->pipe_own[i];
		struct bip_shm_pipe *pipe = &shm->me->pipes[i];

		if (!own->pull)
			continue;
		/* Pair with the releases of push_seq and produced by the lessee. */
		if (!own->pull->started ? bip_load_acquire(&pipe->push_seq) == own->claim_seq
					: bip_load_acquire(&pipe->produced) != own->pulled)
			return 1;
	}
	return 0;
}

int bip_shm_poll_long(struct bip_shm *shm)
{
	int i, n = 0;

	for (i = shm->npushing; i-- > 0;)
		if (i < shm->npushing)
			n += push_chunks(shm, &shm->peers[shm->pushing[i]]);
	for (i = 0; i < BIP_SHM_PIPES; i++)
		if (shm->pipe_own[i].pull)
			n += pull_chunks(shm, i);
	if (bip_unlikely(shm->npipe_wait))
		pipes_for_waiters(shm);
	if (shm->nlactive)
		n += complete_sends(shm);
	return n;
}
