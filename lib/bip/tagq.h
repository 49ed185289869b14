/* SPDX-License-Identifier: MIT */
/*
 * tagq.h - the receive queue of one tag: a circular buffer of messages.
 *
 * Each message takes a head of BIP_MSG_HEAD words (struct bip_tagq_entry)
 * and its payload, rounded up to a word, stored contiguously so that
 * bip_tgetmsg can return a pointer to it.  When a message does not fit
 * before the end of the buffer, a wrap mark is left there and the message
 * starts again at offset 0.
 *
 * Three positions walk around the buffer: tail (where the next message is
 * written), read (the next message not yet received) and head (the oldest
 * message still held, by bip_tgetmsg, until bip_tfreemsg).  Messages
 * between head and read are held; between read and tail, unread.
 */
#ifndef BIP_TAGQ_H
#define BIP_TAGQ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum bip_tagq_kind {
	BIP_TAGQ_WRAP = 1,   /* the rest of the buffer is unused: go on at 0 */
	BIP_TAGQ_SHORT = 2,  /* payload is the message */
	BIP_TAGQ_LONG = 3,   /* payload is the NIC's 8-byte handle of a long message */
};

struct bip_tagq_entry {
	uint32_t kind;
	uint32_t len;        /* message length in bytes */
	int32_t src;         /* source node */
	uint32_t size;       /* bytes this entry takes, head included */
};

struct bip_tagq {
	uint8_t *buf;
	uint32_t cap;        /* bytes */
	uint32_t head, read, tail;
	uint32_t used;       /* bytes taken, wrap marks included */
	uint32_t nunread;
	uint32_t nheld;
};

#define BIP_TAGQ_HEAD ((uint32_t)sizeof(struct bip_tagq_entry))

/* Allocate a queue of cap bytes (a multiple of 4).  Returns 0 or -ENOMEM. */
int bip_tagq_init(struct bip_tagq *q, uint32_t cap);
void bip_tagq_free(struct bip_tagq *q);

/* Append a message; returns 0, or -EAGAIN if it does not fit now. */
int bip_tagq_push(struct bip_tagq *q, enum bip_tagq_kind kind, int src, const void *data,
		  uint32_t len, uint32_t payload_len);

/* The oldest unread message, or NULL. */
static inline struct bip_tagq_entry *bip_tagq_peek(struct bip_tagq *q)
{
	struct bip_tagq_entry *e;

	if (!q->nunread)
		return NULL;
	e = (struct bip_tagq_entry *)(q->buf + q->read);
	if (e->kind == BIP_TAGQ_WRAP) {
		q->read = 0;
		e = (struct bip_tagq_entry *)q->buf;
	}
	return e;
}

static inline void *bip_tagq_payload(struct bip_tagq_entry *e)
{
	return e + 1;
}

/* Mark the oldest unread message as held (bip_tgetmsg). */
void bip_tagq_hold(struct bip_tagq *q);
/* Release the oldest held message (bip_tfreemsg). */
void bip_tagq_release(struct bip_tagq *q);
/* Remove the oldest unread message; there must be no held message. */
void bip_tagq_pop(struct bip_tagq *q);

#endif /* BIP_TAGQ_H */
