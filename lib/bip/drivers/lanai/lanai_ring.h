/* SPDX-License-Identifier: MIT */
/*
 * lanai_ring.h - the rings of the board, for both sides: the send ring
 * (host produces, firmware consumes), the event queue (firmware produces,
 * host consumes) and the post ring of long receives (host produces).
 *
 * Every ring is an array of slots whose first word is the sequence number
 * (the producer's count after the slot).  The producer keeps its count and a
 * cached copy of the consumer's count, re-read only when the ring looks
 * full; the consumer publishes its count once per batch.
 */
#ifndef BIP_LANAI_RING_H
#define BIP_LANAI_RING_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"

struct bip_lanai_prod {
	uint32_t prod;	    /* slots written */
	uint32_t cons_seen; /* last value read from the consumer's register */
};

/* Slot idx of a ring of nslots slots of size bytes. */
static inline void *bip_lanai_slot(void *base, uint32_t nslots, size_t size, uint32_t idx)
{
	return (char *)base + (size_t)(idx & (nslots - 1)) * size;
}

/* 1 if the producer may write one more slot, else 0. */
static inline int bip_lanai_ring_room(struct bip_lanai_prod *p, const uint32_t *cons_reg,
				      uint32_t nslots)
{
	if (bip_unlikely(p->prod - p->cons_seen >= nslots)) {
		/* Looks full: re-read the consumer's count.  Pairs with the
		 * release in bip_lanai_ring_release; the slots before it are free. */
		p->cons_seen = bip_load_acquire(cons_reg);
		if (p->prod - p->cons_seen >= nslots)
			return 0;
	}
	return 1;
}

/* Publish the slot just written (its seq word is seqp). */
static inline void bip_lanai_ring_publish(struct bip_lanai_prod *p, uint32_t *seqp)
{
	p->prod++;
	/* Pairs with the acquire in bip_lanai_ring_ready: the slot's contents
	 * are visible before its sequence number. */
	bip_store_release(seqp, p->prod);
}

/* 1 if the slot the consumer expects next (number cons) is published. */
static inline int bip_lanai_ring_ready(const uint32_t *seqp, uint32_t cons)
{
	/* Pairs with the release in bip_lanai_ring_publish. */
	return bip_load_acquire(seqp) == cons + 1;
}

/* The consumer has copied out every slot before cons. */
static inline void bip_lanai_ring_release(uint32_t *cons_reg, uint32_t cons)
{
	/* Pairs with the acquire in bip_lanai_ring_room. */
	bip_store_release(cons_reg, cons);
}

#endif /* BIP_LANAI_RING_H */
