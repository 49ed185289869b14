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
	if (cap < BIP_TAGQ_HEAD || cap % 4)
		return -EINVAL;
	q->buf = malloc(cap);
	if (!q->buf)
		return -ENOMEM;
	q->cap = cap;
	return 0;
}

void bip_tagq_free(struct bip_tagq *q)
{
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

/* Find room for size contiguous bytes; returns the offset or -1. */
static int64_t tagq_reserve(struct bip_tagq *q, uint32_t size)
{
	uint32_t at_end;

	if (q->used == 0) {
		/* Empty: start again at 0, so that no space is lost to wrapping. */
		q->head = q->read = q->tail = 0;
	}
	if (q->used == q->cap)
		return -1;
	if (q->tail >= q->head) {
		at_end = q->cap - q->tail;
		if (size <= at_end)
			return q->tail;
		if (size > q->head)
			return -1;
		/* Leave a wrap mark (there is always a word for it: sizes are
		 * multiples of 4) and start at 0. */
		((struct bip_tagq_entry *)(q->buf + q->tail))->kind = BIP_TAGQ_WRAP;
		q->used += at_end;
		q->tail = 0;
		return 0;
	}
	if (size <= q->head - q->tail)
		return q->tail;
	return -1;
}

int bip_tagq_push(struct bip_tagq *q, enum bip_tagq_kind kind, int src, const void *data,
		  uint32_t len, uint32_t payload_len)
{
	uint32_t size = BIP_TAGQ_HEAD + ((payload_len + 3) & ~3u);
	struct bip_tagq_entry *e;
	int64_t at;

	at = tagq_reserve(q, size);
	if (at < 0)
		return -EAGAIN;
	e = (struct bip_tagq_entry *)(q->buf + at);
	e->kind = kind;
	e->len = len;
	e->src = src;
	e->size = size;
	memcpy(e + 1, data, payload_len);
	q->tail = (uint32_t)at + size;
	if (q->tail == q->cap)
		q->tail = 0;
	q->used += size;
	q->nunread++;
	return 0;
}

/* Free the entry at head, skipping a wrap mark first. */
static void tagq_free_head(struct bip_tagq *q)
{
	struct bip_tagq_entry *e = (struct bip_tagq_entry *)(q->buf + q->head);

	if (e->kind == BIP_TAGQ_WRAP) {
		q->used -= q->cap - q->head;
		q->head = 0;
		e = (struct bip_tagq_entry *)q->buf;
	}
	q->used -= e->size;
	q->head += e->size;
	if (q->head == q->cap)
		q->head = 0;
}

/* Step read past the entry bip_tagq_peek returned. */
static void tagq_advance_read(struct bip_tagq *q)
{
	struct bip_tagq_entry *e = bip_tagq_peek(q);

	q->read += e->size;
	if (q->read == q->cap)
		q->read = 0;
	q->nunread--;
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
