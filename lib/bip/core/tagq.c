/* SPDX-License-Identifier: MIT */
/*
 * tagq.c - the per-tag circular queues of short messages (see tagq.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "tagq.h"

int bip_tagq_init(struct bip_tagq *q, uint32_t cap)
{
	memset(q, 0, sizeof(*q));
	if (cap < BIP_TAGQ_HEAD || cap % 4 || cap > (1u << 31))
		return -EINVAL;
	q->buf = malloc(cap);
	if (!q->buf)
		return -ENOMEM;
	q->cap = cap;
	return 0;
}

void bip_tagq_free(struct bip_tagq *q)
{
	if (!q->foreign)
		free(q->buf);
	memset(q, 0, sizeof(*q));
}

void bip_tagq_adopt(struct bip_tagq *q, void *buf)
{
	if (!q->foreign)
		free(q->buf);
	q->buf = buf;
	q->foreign = 1;
}

int bip_tagq_push(struct bip_tagq *q, enum bip_tagq_kind kind, int src, const void *data,
		  uint32_t len, uint32_t payload_len)
{
	uint32_t size = bip_tagq_entry_size(payload_len);
	struct bip_tagq_entry *e;
	int64_t at;
	int wrap;

	if (q->nic_fills)
		return -EPROTO; /* two producers would overwrite each other */
	at = bip_tagq_place(&q->prod, q->cap, bip_load_acquire(&q->freed), size, &wrap);
	if (at < 0)
		return -EAGAIN;
	if (wrap)
		((struct bip_tagq_entry *)(q->buf + q->prod.tail))->kind = BIP_TAGQ_WRAP;
	e = (struct bip_tagq_entry *)(q->buf + at);
	e->kind = kind;
	e->len = len;
	e->src = src;
	e->size = size;
	if (payload_len)
		memcpy(e + 1, data, payload_len);
	bip_tagq_advance(&q->prod, q->cap, wrap, size);
	bip_tagq_produced(q);
	return 0;
}

/* Free the entry at head, skipping a wrap mark first, and tell the producer. */
static void tagq_free_head(struct bip_tagq *q)
{
	struct bip_tagq_entry *e = (struct bip_tagq_entry *)(q->buf + q->head);
	uint32_t freed = q->freed;

	if (e->kind == BIP_TAGQ_WRAP) {
		freed += q->cap - q->head;
		q->head = 0;
		e = (struct bip_tagq_entry *)q->buf;
	}
	freed += e->size;
	q->head += e->size;
	if (q->head == q->cap)
		q->head = 0;
	/* Pairs with the producer's read of freed (an acquire, or the NIC's
	 * DMA read): the entry has been copied out before its room is given
	 * back. */
	bip_store_release(&q->freed, freed);
}

/* Step read past the entry bip_tagq_peek returned. */
static void tagq_advance_read(struct bip_tagq *q)
{
	struct bip_tagq_entry *e = bip_tagq_peek(q);

	q->read += e->size;
	if (q->read == q->cap)
		q->read = 0;
	q->nread++;
}

void bip_tagq_hold(struct bip_tagq *q)
{
	tagq_advance_read(q);
	q->nheld++;
}

void bip_tagq_release(struct bip_tagq *q)
{
	tagq_free_head(q);
	q->nheld--;
}

void bip_tagq_pop(struct bip_tagq *q)
{
	tagq_advance_read(q);
	tagq_free_head(q);
}
