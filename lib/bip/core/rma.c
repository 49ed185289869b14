/* SPDX-License-Identifier: MIT */
/*
 * rma.c - the requests of one-sided operations (bip_rma(3)): a table of
 * them, ids for the API, the queue of those the NIC had no room for, and
 * bip_core_rma_done, where the NIC reports their completion (nic.h).
 *
 * An id is (generation << 16) | index: the index into the table, which
 * grows by doubling up to 2^16 requests, and a generation that tells a
 * stale id from the request now in that slot.  The NIC's cookie is the
 * id.  A request the NIC refuses with -EAGAIN waits in one queue, in
 * order, and so does every later one (operations to one node must reach
 * it in the order started); progress posts them as the NIC frees room
 * (bip_state.rma_queued), and a waiter does not sleep while any wait,
 * since the NIC's room coming back wakes nobody.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "rma.h"

#define RMA_INDEX_BITS 16
#define RMA_MAX (1u << RMA_INDEX_BITS)
#define RMA_GEN_MAX ((1u << (31 - RMA_INDEX_BITS)) - 1)

enum rma_state { RMA_FREE, RMA_QUEUED, RMA_POSTED, RMA_DONE };

struct rma_req {
	uint8_t state;
	uint32_t gen;
	int next; /* the queue or the free list: an index, or -1 */
	int status;
	uint64_t key;
	struct bip_nic *nic;
	struct bip_rma_args a;
};

static struct rma_req *reqs;
static unsigned cap;
static int free_head = -1, queue_head = -1, queue_tail = -1;

static int req_id(unsigned i)
{
	return (int)(reqs[i].gen << RMA_INDEX_BITS | i);
}

/* A free request's index, or -ENOMEM (the table is full or cannot grow). */
static int req_alloc(void)
{
	unsigned i, ncap;
	struct rma_req *n;

	if (free_head < 0) {
		ncap = cap ? 2 * cap : 64;
		if (ncap > RMA_MAX)
			return -ENOMEM;
		n = realloc(reqs, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		reqs = n;
		memset(reqs + cap, 0, (ncap - cap) * sizeof(*n));
		for (i = ncap; i-- > cap;) {
			reqs[i].next = free_head;
			free_head = (int)i;
		}
		cap = ncap;
	}
	i = (unsigned)free_head;
	free_head = reqs[i].next;
	reqs[i].gen = reqs[i].gen == RMA_GEN_MAX ? 0 : reqs[i].gen + 1;
	reqs[i].next = -1;
	reqs[i].status = 0;
	reqs[i].key = 0;
	return (int)i;
}

static void req_free(unsigned i)
{
	reqs[i].state = RMA_FREE;
	reqs[i].next = free_head;
	free_head = (int)i;
}

/* Hand request i to its NIC: 0, -EAGAIN, or the NIC's error. */
static int req_post(unsigned i)
{
	struct rma_req *r = &reqs[i];
	uint64_t cookie = (uint64_t)req_id(i);

	switch (r->a.what) {
	case BIP_RMA_WHAT_EXPOSE:
		return r->nic->ops->rma_expose(r->nic, r->a.base, r->a.len, cookie);
	case BIP_RMA_WHAT_WITHDRAW:
		return r->nic->ops->rma_withdraw(r->nic, r->a.key, cookie);
	case BIP_RMA_WHAT_OP:
		return r->nic->ops->rma_post(r->nic, &r->a.op, cookie);
	default:
		r->state = RMA_DONE;
		return 0;
	}
}

static void enqueue(unsigned i)
{
	reqs[i].state = RMA_QUEUED;
	reqs[i].next = -1;
	if (queue_tail >= 0)
		reqs[queue_tail].next = (int)i;
	else
		queue_head = (int)i;
	queue_tail = (int)i;
	bip_state.rma_queued++;
}

int bip_rma_start(struct bip_nic *nic, const struct bip_rma_args *a)
{
	int i = req_alloc(), rc;

	if (i < 0)
		return i;
	reqs[i].nic = nic;
	reqs[i].a = *a;
	reqs[i].state = RMA_POSTED;
	if (queue_head >= 0) {
		enqueue((unsigned)i);
		return req_id((unsigned)i);
	}
	rc = req_post((unsigned)i);
	if (rc == -EAGAIN) {
		enqueue((unsigned)i);
	} else if (rc < 0) {
		req_free((unsigned)i);
		return rc;
	}
	return req_id((unsigned)i);
}

void bip_rma_push(void)
{
	while (queue_head >= 0) {
		unsigned i = (unsigned)queue_head;
		int rc = req_post(i);

		if (rc == -EAGAIN)
			return;
		queue_head = reqs[i].next;
		if (queue_head < 0)
			queue_tail = -1;
		bip_state.rma_queued--;
		if (rc < 0) {
			reqs[i].state = RMA_DONE;
			reqs[i].status = rc;
		} else if (reqs[i].state == RMA_QUEUED) {
			reqs[i].state = RMA_POSTED;
		}
	}
}

/* The request of id, or NULL if id is not one being served. */
static struct rma_req *lookup(int id)
{
	unsigned i = (unsigned)id & (RMA_MAX - 1);

	if (id < 0 || i >= cap || reqs[i].state == RMA_FREE ||
	    reqs[i].gen != (unsigned)id >> RMA_INDEX_BITS)
		return NULL;
	return &reqs[i];
}

int bip_rma_known(int id)
{
	return lookup(id) != NULL;
}

int bip_rma_take(int id, int *status_p, uint64_t *key_p)
{
	struct rma_req *r = lookup(id);

	if (!r || r->state != RMA_DONE)
		return 0;
	*status_p = r->status;
	*key_p = r->key;
	req_free((unsigned)id & (RMA_MAX - 1));
	return 1;
}

void bip_core_rma_done(uint64_t cookie, int status, uint64_t key)
{
	struct rma_req *r = cookie > INT32_MAX ? NULL : lookup((int)cookie);

	/* Only a posted request completes: a NIC's word is checked. */
	if (!r || r->state != RMA_POSTED)
		return;
	r->state = RMA_DONE;
	r->status = status > 0 || status < -4095 ? -EPROTO : status;
	r->key = r->a.what == BIP_RMA_WHAT_EXPOSE ? key : 0;
}

void bip_rma_free(void)
{
	free(reqs);
	reqs = NULL;
	cap = 0;
	free_head = queue_head = queue_tail = -1;
	bip_state.rma_queued = 0;
}
