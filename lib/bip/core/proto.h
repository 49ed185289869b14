/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the short/long protocol, requests, flow control and the
 * entry points of nic.h (proto.c).
 */
#ifndef BIP_PROTO_H
#define BIP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

int bip_send_post(int dst, uint32_t tag, const void *buf, size_t len);
/*
 * The same with a header sent before buf in one short message (hlen + len
 * at most BIP_SHORT_MAX), or none.  Flags: BIP_SEND_LAYER, a layer's send,
 * reports its completion to the layer of tag with cookie unless it
 * completes at once; BIP_SEND_FORCE_LONG sends buf (no header) as a long
 * message whatever its length.
 */
#define BIP_SEND_LAYER 1u
#define BIP_SEND_FORCE_LONG 2u
int bip_send_post_hdr(int dst, uint32_t tag, const void *hdr, size_t hlen, const void *buf,
		      size_t len, unsigned flags, uint64_t cookie);
/* Wait, letting other threads in, until two send slots are free: then
 * two posts in a row wait for nothing, and no other thread's send comes
 * between them.  0, or -EPIPE (bip_wait_step). */
int bip_send_reserve(void);
/* The send lane (state.h's locking): 0 when posted, -EAGAIN for the path
 * under the big lock, or a negative errno. */
int bip_send_lane(int dst, uint32_t tag, const void *buf, size_t len);
void bip_push_queued(void);
/* Tell every peer that this process leaves through bip_finalize (proto.c). */
void bip_flow_bye(void);
/* Move kept arrivals into their queues, and tell senders of held tags. */
void bip_flow_progress(void);
/* Free the kept arrivals (at the end). */
void bip_flow_free(void);

static inline int bip_tag_held(const struct bip_peer *p, uint32_t tag)
{
	return (int)((p->held_by_peer[tag / 64] >> (tag % 64)) & 1);
}
struct bip_sreq *bip_sreq_lookup(int id);
int bip_recv_post(uint32_t tag, void *buf, size_t maxlen);
/* Try to match the posted receive of t against its queue. */
void bip_recv_match(struct bip_tag *t, uint32_t tag);
int bip_sreq_table_init(void);
void bip_sreq_table_free(void);

/*
 * The largest short message of a layer (header and data) to a peer: what
 * its NIC takes when it gathers the two pieces itself, else BIP's short
 * size (the core then assembles them in a buffer of that size).
 */
static inline size_t bip_layer_short_limit(const struct bip_nic *nic)
{
	return nic->ops->post_short2 && nic->max_short > BIP_SHORT_MAX ? nic->max_short :
									BIP_SHORT_MAX;
}

/* Offer a layer's tag's queued entries to it, in order: 0, or what it
 * answered to the one it refused (which stays queued). */
int bip_layer_drain(uint32_t tag, const struct bip_layer_ops *ops);
/* Offer again the entries a layer refused when a NIC queued them. */
void bip_layer_retry(void);

static inline const struct bip_layer_ops *bip_layer_of(uint32_t tag)
{
	if (tag >= NTAGS && tag < BIP_TAG_FLOW)
		return bip_state.layer[tag - NTAGS];
	return tag == BIP_TAG_FWD ? bip_state.fwd_layer : NULL;
}

static inline int bip_recv_id(uint32_t tag, uint32_t gen)
{
	return (int)((gen << BIP_RECV_TAG_BITS) | tag);
}

#endif /* BIP_PROTO_H */
