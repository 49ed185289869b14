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
 * The queue has one producer and one consumer, which may be two processes:
 *
 *  - The producer writes entries at tail.  It is the core (arrivals a
 *    driver hands it, bip_tagq_push) or a NIC that writes the queue itself
 *    (the lanai firmware's DMA, bip_tagq_place): then the core learns of
 *    each entry from the NIC's event and counts it with bip_tagq_produced.
 *  - The consumer, always the core, walks two positions behind it: read
 *    (the next message not yet received) and head (the oldest message still
 *    held, by bip_tgetmsg, until bip_tfreemsg).  Messages between head and
 *    read are held; between read and tail, unread.
 *
 * Room is accounted with two free-running 32-bit byte counts, wrap marks
 * included: produced (the producer's, kept by it alone) and freed (the
 * consumer's, published with release so that a producer in another process
 * may read it).  produced - freed is what the queue holds; the producer
 * needs nothing else of the consumer, and the consumer never moves the
 * producer's tail, so neither side writes what the other owns.  Capacities
 * stay below 2 GiB, so the counts' wrapping at 2^32 is harmless.
 *
 * The layout of an entry and the placement rule (bip_tagq_place) are part
 * of the contract with a NIC that writes queues: keep them in step with
 * bip_lanai(7).
 */
#ifndef BIP_TAGQ_H
#define BIP_TAGQ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "atomics.h"

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

/* The producer's state: the only part of the queue it writes besides entries. */
struct bip_tagq_prod {
	uint32_t tail;       /* offset of the next entry */
	uint32_t produced;   /* bytes written, wrap marks included */
};

struct bip_tagq {
	uint8_t *buf;
	uint32_t cap;        /* bytes */
	int nic_fills;       /* a NIC is the producer: bip_tagq_push is refused */
	int foreign;         /* buf belongs to a NIC (bip_tagq_adopt), not to the queue */
	struct bip_tagq_prod prod;
	/* the consumer */
	uint32_t head, read; /* offsets */
	uint32_t freed;      /* bytes freed, wrap marks included (release) */
	uint32_t nread;      /* entries read */
	uint32_t nheld;
	/* entries produced: the producer's count, stored with release after
	 * the entry, so that a consumer in another thread sees the entry
	 * whole (unread is nprod - nread; neither side writes the other's) */
	uint32_t nprod;
};

#define BIP_TAGQ_HEAD ((uint32_t)sizeof(struct bip_tagq_entry))

/* Bytes an entry with payload_len bytes of payload takes. */
static inline uint32_t bip_tagq_entry_size(uint32_t payload_len)
{
	return BIP_TAGQ_HEAD + ((payload_len + 3) & ~3u);
}

/*
 * Where the producer puts an entry of size bytes, given the consumer's
 * freed count: its offset, with *wrap = 1 if a wrap mark must first go at
 * the current tail; or -1 when there is no room now.  An empty queue takes
 * any entry of at most cap / 2 bytes, wherever its tail is.
 */
static inline int64_t bip_tagq_place(const struct bip_tagq_prod *p, uint32_t cap,
				     uint32_t freed, uint32_t size, int *wrap)
{
	uint32_t used = p->produced - freed;
	uint32_t at_end = cap - p->tail;

	if (size <= at_end) {
		if (used + size > cap)
			return -1;
		*wrap = 0;
		return p->tail;
	}
	/* The rest of the buffer is skipped: it counts as used until the
	 * consumer passes the wrap mark. */
	if ((uint64_t)used + at_end + size > cap)
		return -1;
	*wrap = 1;
	return 0;
}

/* Account for the entry of size bytes just written where bip_tagq_place said. */
static inline void bip_tagq_advance(struct bip_tagq_prod *p, uint32_t cap, int wrap,
				    uint32_t size)
{
	if (wrap) {
		p->produced += cap - p->tail;
		p->tail = 0;
	}
	p->tail += size;
	p->produced += size;
	if (p->tail == cap)
		p->tail = 0;
}

/* Allocate a queue of cap bytes (a multiple of 4).  Returns 0 or -ENOMEM. */
int bip_tagq_init(struct bip_tagq *q, uint32_t cap);
void bip_tagq_free(struct bip_tagq *q);

/* Use buf, cap bytes that a NIC provides until it closes, instead of the
 * queue's own memory; the queue must be empty and unused. */
void bip_tagq_adopt(struct bip_tagq *q, void *buf);

/* The core as producer: append a message; returns 0, or -EAGAIN if it does
 * not fit now. */
int bip_tagq_push(struct bip_tagq *q, enum bip_tagq_kind kind, int src, const void *data,
		  uint32_t len, uint32_t payload_len);

/* A NIC as producer has written one more entry (its event says so). */
static inline void bip_tagq_produced(struct bip_tagq *q)
{
	bip_store_release(&q->nprod, q->nprod + 1);
}

/* Messages produced and not yet read (the consumer's view). */
static inline uint32_t bip_tagq_unread(const struct bip_tagq *q)
{
	return bip_load_acquire(&q->nprod) - q->nread;
}

/* The oldest unread message, or NULL. */
static inline struct bip_tagq_entry *bip_tagq_peek(struct bip_tagq *q)
{
	struct bip_tagq_entry *e;

	if (!bip_tagq_unread(q))
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
