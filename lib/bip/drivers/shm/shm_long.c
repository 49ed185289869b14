/* SPDX-License-Identifier: MIT */
/*
 * shm_long.c - long messages between processes of one host.
 *
 * The sender records the message (address, length) in an lsend entry of
 * its segment and announces it with an RTS on its ring.  When the receiver
 * has a buffer for it, it moves the data by one of two paths:
 *
 *  - single copy: process_vm_readv from the sender's buffer straight into
 *    the receiver's, for messages of BIP_SHM_CMA_MIN bytes and more, when
 *    the start-up probe showed that the kernel allows it;
 *  - pipelined copy through the sender's pipe in the receiver's segment:
 *    the receiver claims the send, the sender fills chunks, the receiver
 *    empties them while the next ones are filled.  This needs no system
 *    call, so it is faster for medium sizes, and it is the fallback where
 *    process_vm_readv is refused.
 *
 * Either way the receiver then stores the send's generation in its done
 * word, and the sender's poll completes the send.
 *
 * A message of at most BIP_SHM_PREPUSH_MAX bytes below BIP_SHM_CMA_MIN (or
 * with single copy off), sent while nothing else of the sender to that peer
 * is in flight, is pushed into the pipe with its announcement, before any
 * claim: the receiver then copies it out at once,
 * saving two hand-offs between cores.  If the receiver wants another message
 * first, it skips the prepushed chunks and claims that message later as
 * usual; the sender still has the data in the user's buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "atomics.h"
#include "shm.h"

void bip_shm_long_init(struct bip_shm *shm)
{
	int i;

	shm->nlfree = 0;
	for (i = BIP_SHM_LSENDS; i-- > 0;)
		shm->lfree[shm->nlfree++] = (uint16_t)i;
	shm->nlactive = 0;
}

void bip_shm_long_fini(struct bip_shm *shm)
{
	int i;

	for (i = 0; i < shm->numnodes; i++) {
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

/* Sender side: write a whole message into the pipe to p, publishing each chunk. */
static void prepush(struct bip_shm_peer *p, const uint8_t *buf, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += BIP_SHM_PIPE_CHUNK) {
		size_t chunk = len - off < BIP_SHM_PIPE_CHUNK ? len - off : BIP_SHM_PIPE_CHUNK;

		memcpy(p->pipe_out->chunk[p->pushed & (BIP_SHM_PIPE_CHUNKS - 1)], buf + off, chunk);
		p->pushed++;
		/* Pairs with the acquire of produced in pull_chunks. */
		bip_store_release(&p->pipe_out->produced, p->pushed);
	}
	bip_shm_wake(p);
}

int bip_shm_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie)
{
	struct bip_shm *shm = bip_shm_of(nic);
	struct bip_shm_peer *p = &shm->peers[dst];
	struct bip_shm_lsend_local *l;
	struct bip_shm_rts rts = { 0 };
	uint16_t slot;
	int rc;

	if (!shm->nlfree || !bip_shm_ring_room(shm, dst))
		return -EAGAIN;
	slot = shm->lfree[shm->nlfree - 1];
	l = &shm->lsl[slot];
	l->gen = l->gen + 1 ? l->gen + 1 : 1;
	l->cookie = cookie;
	l->buf = buf;
	l->len = len;
	l->dst = dst;
	/* Published to the receiver by the release of the RTS slot. */
	shm->lsend[slot].addr = (uint64_t)(uintptr_t)buf;
	shm->lsend[slot].len = len;
	shm->lsend[slot].gen = l->gen;
	rts.lslot = slot;
	rts.gen = l->gen;
	/* Prepush while the pipe holds only prepushed messages (no claim
	 * pending or served since the last idle moment) and has room, unless
	 * the receiver reads it by single copy (the same setting on both
	 * sides): the pushed copy would be wasted. */
	l->prepushed = 0;
	if (len <= BIP_SHM_PREPUSH_MAX && !(len >= shm->cma_min && p->cma) &&
	    !p->push_src && !p->prepush_blocked &&
	    p->long_out == p->prepushed_out &&
	    p->pushed + chunks_of(len) - bip_load_acquire(&p->pipe_out->consumed) <=
		    BIP_SHM_PIPE_CHUNKS) {
		rts.prepushed = 1;
		rts.start = p->pushed;
		prepush(p, buf, len);
		l->prepushed = 1;
		p->prepushed_out++;
	}
	/* Cannot fail: bip_shm_ring_room said there is a slot. */
	rc = bip_shm_ring_post(shm, dst, BIP_SHM_RTS, tag, &rts, len, sizeof(rts));
	if (rc < 0)
		return rc;
	p->long_out++;
	shm->nlfree--;
	shm->lactive[shm->nlactive++] = slot;
	return 0;
}

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

/* Receiver side: the index of lslot/gen among p's prepushed messages, or -1. */
static int find_prepushed(struct bip_shm_peer *p, uint32_t lslot, uint32_t gen)
{
	int i;

	for (i = 0; i < p->npre; i++)
		if (p->pre[i].lslot == lslot && p->pre[i].gen == gen)
			return i;
	return -1;
}

/* Receiver side: forget prepushed messages 0 .. n-1, their chunks passed over
 * up to pulled (the sender pushes a message again if it is claimed later). */
static void drop_prepushed(struct bip_shm_peer *p, int n, uint64_t pulled)
{
	memmove(p->pre, p->pre + n, (size_t)(p->npre - n) * sizeof(p->pre[0]));
	p->npre -= n;
	p->pulled = pulled;
	/* Pairs with the acquire of consumed on the sender side. */
	bip_store_release(&p->pipe_in->consumed, p->pulled);
	bip_shm_wake(p);
}

void bip_shm_rts_seen(struct bip_shm_peer *p, const struct bip_shm_rts *rts, size_t len)
{
	/* Seen before (the core refused it once), or passed over already. */
	if (!rts->prepushed || find_prepushed(p, rts->lslot, rts->gen) >= 0 ||
	    rts->start < p->pulled || p->npre == BIP_SHM_PIPE_CHUNKS)
		return;
	p->pre[p->npre++] = (struct bip_shm_prepushed){ .lslot = rts->lslot, .gen = rts->gen,
							 .start = rts->start,
							 .chunks = chunks_of(len) };
}

/* Receiver side: copy out prepushed message i, whose chunks are all there. */
static void take_prepushed(struct bip_shm_peer *p, int i, uint8_t *buf, size_t len)
{
	uint64_t c = p->pre[i].start;
	size_t off;

	for (off = 0; off < len; off += BIP_SHM_PIPE_CHUNK, c++) {
		size_t chunk = len - off < BIP_SHM_PIPE_CHUNK ? len - off : BIP_SHM_PIPE_CHUNK;

		memcpy(buf + off, p->pipe_in->chunk[c & (BIP_SHM_PIPE_CHUNKS - 1)], chunk);
	}
	drop_prepushed(p, i + 1, c);
}

/* Ask p's sender side to push the long send at the head of p's pulls. */
static void pull_claim(struct bip_shm_peer *p)
{
	struct bip_shm_pull *pl = p->pull_head;

	if (p->npre) /* the chunks of the claimed send come after theirs */
		drop_prepushed(p, p->npre,
			       p->pre[p->npre - 1].start + p->pre[p->npre - 1].chunks);

	p->pipe_in->claim_lslot = pl->lslot;
	p->pipe_in->claim_gen = pl->gen;
	/* Pairs with the acquire of claim_seq in serve_claim. */
	bip_store_release(&p->pipe_in->claim_seq, ++p->claim_seq);
	bip_shm_wake(p);
}

int bip_shm_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			   uint64_t cookie)
{
	struct bip_shm *shm = bip_shm_of(nic);
	int src = (int)(handle >> 48);
	uint32_t lslot = (uint32_t)(handle >> 32) & 0xffff;
	uint32_t gen = (uint32_t)handle;
	struct bip_shm_peer *p;
	struct bip_shm_lsend *e;
	struct bip_shm_pull *pl;
	int rc, pre;

	if (src >= shm->numnodes || !shm->peers[src].seg || lslot >= BIP_SHM_LSENDS)
		return -EPROTO;
	p = &shm->peers[src];
	e = &p->lsend[lslot];
	if (e->gen != gen || e->len != len)
		return -EPROTO;
	pre = find_prepushed(p, lslot, gen);
	if (pre >= 0 && !p->pull_head && len < shm->cma_min) {
		take_prepushed(p, pre, buf, len);
		/* All data is here; pairs with the acquire in complete_sends. */
		bip_store_release(&e->done, gen);
		bip_shm_wake(p);
		return 1;
	}
	if (len >= shm->cma_min && p->cma) {
		rc = cma_read(p, buf, e->addr, len);
		if (rc == 0) {
			if (pre >= 0)
				drop_prepushed(p, pre + 1, p->pre[pre].start + p->pre[pre].chunks);
			/* All data is here; pairs with the acquire in complete_sends. */
			bip_store_release(&e->done, gen);
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
	if (p->pull_tail) {
		p->pull_tail->next = pl;
		p->pull_tail = pl;
	} else {
		p->pull_head = p->pull_tail = pl;
		pull_claim(p);
	}
	shm->npulls++;
	return 0;
}

/* Sender side: complete the long sends whose receivers have the data. */
static int complete_sends(struct bip_shm *shm)
{
	int i, n = 0;

	for (i = 0; i < shm->nlactive;) {
		uint16_t slot = shm->lactive[i];
		struct bip_shm_lsend_local *l = &shm->lsl[slot];

		/* Pairs with the release of done by the receiver. */
		if (bip_load_acquire(&shm->lsend[slot].done) != l->gen) {
			i++;
			continue;
		}
		shm->lactive[i] = shm->lactive[--shm->nlactive];
		shm->lfree[shm->nlfree++] = slot;
		{
			struct bip_shm_peer *p = &shm->peers[l->dst];

			p->long_out--;
			p->prepushed_out -= l->prepushed;
			if (!p->long_out)
				p->prepush_blocked = 0;
		}
		bip_core_send_done(l->cookie, 0);
		n++;
	}
	return n;
}

/* Sender side: start pushing a send that p has claimed. */
static void serve_claim(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_pipe *pipe = p->pipe_out;
	uint32_t seq = bip_load_acquire(&pipe->claim_seq);
	struct bip_shm_lsend_local *l;
	uint32_t lslot;

	if (seq == p->claim_served)
		return;
	p->claim_served = seq;
	p->prepush_blocked = 1;
	pipe->push_start = p->pushed;
	/* Pairs with the acquire of push_seq in pull_chunks. */
	bip_store_release(&pipe->push_seq, seq);
	bip_shm_wake(p);
	lslot = pipe->claim_lslot;
	l = &shm->lsl[lslot < BIP_SHM_LSENDS ? lslot : 0];
	if (lslot >= BIP_SHM_LSENDS || l->gen != pipe->claim_gen || l->dst != p->node)
		return; /* not a send of ours to p: the receiver will wait, visibly */
	p->push_src = l->buf;
	p->push_len = l->len;
	p->push_off = 0;
	shm->npushes++;
}

/* Sender side: fill the chunks of p's pipe that are free. */
static int push_chunks(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_pipe *pipe = p->pipe_out;
	uint64_t consumed = bip_load_acquire(&pipe->consumed);
	int n = 0;

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
	if (n)
		bip_shm_wake(p);
	if (p->push_off == p->push_len) {
		p->push_src = NULL;
		shm->npushes--;
	}
	return n;
}

/* Receiver side: empty the chunks p has filled; complete the pull when all is here. */
static int pull_chunks(struct bip_shm *shm, struct bip_shm_peer *p)
{
	struct bip_shm_pipe *pipe = p->pipe_in;
	struct bip_shm_pull *pl = p->pull_head;
	uint64_t produced, start;

	if (!pl->started) {
		int i = 0;

		/* Pairs with the release of push_seq in serve_claim. */
		if (bip_load_acquire(&pipe->push_seq) != p->claim_seq)
			return 0;
		pl->started = 1;
		while (i < p->npre && p->pre[i].start < pipe->push_start)
			i++;
		drop_prepushed(p, i, pipe->push_start);
	}
	produced = bip_load_acquire(&pipe->produced);
	start = p->pulled;

	while (p->pulled < produced && pl->off < pl->len) {
		size_t chunk = pl->len - pl->off;

		if (chunk > BIP_SHM_PIPE_CHUNK)
			chunk = BIP_SHM_PIPE_CHUNK;
		memcpy(pl->buf + pl->off, pipe->chunk[p->pulled & (BIP_SHM_PIPE_CHUNKS - 1)], chunk);
		pl->off += chunk;
		p->pulled++;
		/* The chunk is copied out; pairs with the acquire in push_chunks. */
		bip_store_release(&pipe->consumed, p->pulled);
	}
	if (p->pulled != start)
		bip_shm_wake(p);
	if (pl->off < pl->len)
		return p->pulled != start;
	/* All data is here; pairs with the acquire in complete_sends. */
	bip_store_release(&p->lsend[pl->lslot].done, pl->gen);
	bip_shm_wake(p);
	p->pull_head = pl->next;
	if (!p->pull_head)
		p->pull_tail = NULL;
	shm->npulls--;
	bip_core_recv_done(pl->cookie, 0);
	free(pl);
	if (p->pull_head)
		pull_claim(p);
	return 1;
}

int bip_shm_poll_long(struct bip_shm *shm)
{
	int i, n = 0;

	for (i = 0; i < shm->nlocal; i++) {
		struct bip_shm_peer *p = &shm->peers[shm->local[i]];

		if (shm->nlactive) {
			if (!p->push_src)
				serve_claim(shm, p);
			if (p->push_src)
				n += push_chunks(shm, p);
		}
		if (p->pull_head)
			n += pull_chunks(shm, p);
	}
	if (shm->nlactive)
		n += complete_sends(shm);
	return n;
}
