/* SPDX-License-Identifier: MIT */
/*
 * netproto.h - the message protocol of the network drivers (ofi, psm2).
 *
 * A control message lands in a pre-posted buffer of the receiver's pool:
 * struct bip_netproto_hdr, then the payload of a short message.  Short
 * messages and long announcements (RTS) carry a per-peer sequence number
 * and use a credit, so a sender has at most as many messages in flight to
 * a peer as the peer has pool buffers for it; the receiver hands them to
 * the core in sequence order and returns the credits as the core takes
 * them, on any message back or in a credit message.  A long message's data
 * goes straight into the user's buffer once the receiver has posted it and
 * sent a clear-to-send (CTS); how the data travels is the driver's.
 *
 * The drivers keep their own buffers and transports: these helpers only
 * build headers and keep the sequence and credit books (netproto.c: their
 * set-up, and the kernel identity the drivers exchange at start-up).
 */
#ifndef BIP_NETPROTO_H
#define BIP_NETPROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "nic.h"

enum bip_netproto_kind {
	BIP_NETPROTO_SHORT = 1, /* a short message (credited, sequenced) */
	BIP_NETPROTO_RTS,       /* a long message is ready (credited, sequenced) */
	BIP_NETPROTO_CTS,       /* the receiver has posted the buffer of long send id */
	BIP_NETPROTO_CREDIT,    /* credits only */
};

struct bip_netproto_hdr {
	uint8_t kind;
	uint8_t rsv;
	uint16_t credits;                 /* credits returned to the receiver of this */
	uint32_t src;
	uint32_t tag;
	uint32_t len;                     /* payload bytes, or the long message's length */
	uint32_t seq;                     /* SHORT, RTS */
	uint32_t id;                      /* RTS, CTS: the sender's long send id */
};
_Static_assert(sizeof(struct bip_netproto_hdr) == 24, "netproto header layout");
_Static_assert(offsetof(struct bip_netproto_hdr, credits) == 2, "netproto header layout");
_Static_assert(offsetof(struct bip_netproto_hdr, id) == 20, "netproto header layout");

/* One peer's books; ncredits (a power of two) is the same for every peer. */
struct bip_netproto_peer {
	/* sending to the peer */
	uint32_t seq_out;
	uint32_t credits;                 /* messages we may still send */
	/* receiving from the peer */
	uint32_t expect;                  /* next sequence number to deliver */
	uint32_t owed;                    /* credits to return */
	void **held;                      /* arrived, not yet taken: [seq & (ncredits - 1)] */
	int nheld;
};

/* A served peer's books: all credits, no arrival held.  0 or -ENOMEM. */
int bip_netproto_peer_init(struct bip_netproto_peer *p, uint32_t ncredits);
void bip_netproto_peer_fini(struct bip_netproto_peer *p);

/*
 * This kernel's boot id (a string of at most len - 1 characters) and pid
 * namespace: peers with the same two are processes this node can see.
 */
void bip_netproto_kernel_id(char *boot_id, size_t len, uint64_t *pidns_p);

/* The credits to return with the next message (at most what the field holds). */
static inline uint16_t bip_netproto_take_owed(struct bip_netproto_peer *p)
{
	uint16_t c = p->owed > 0xffff ? 0xffff : (uint16_t)p->owed;

	p->owed -= c;
	return c;
}

/* A control message without a sequence number (CTS, CREDIT) returning credits. */
static inline struct bip_netproto_hdr bip_netproto_ctl_hdr(struct bip_netproto_peer *p,
							   int mynode, uint8_t kind, uint32_t id)
{
	return (struct bip_netproto_hdr){
		.kind = kind, .credits = bip_netproto_take_owed(p), .src = (uint32_t)mynode,
		.id = id,
	};
}

/*
 * A credited, sequenced message (SHORT, RTS): 0 with its header in *h_p,
 * or -EAGAIN when the receiver has not taken what we sent.  The driver then
 * transmits it and reports with bip_netproto_msg_sent.
 */
static inline int bip_netproto_msg_hdr(struct bip_netproto_peer *p, int mynode, uint8_t kind,
				       uint32_t tag, uint32_t len, uint32_t id,
				       struct bip_netproto_hdr *h_p)
{
	if (!p->credits)
		return -EAGAIN;
	*h_p = (struct bip_netproto_hdr){
		.kind = kind, .credits = bip_netproto_take_owed(p), .src = (uint32_t)mynode,
		.tag = tag, .len = len, .seq = p->seq_out, .id = id,
	};
	return 0;
}

/* A message not sent keeps the credits it carried for the next one. */
static inline void bip_netproto_unsent(struct bip_netproto_peer *p,
				       const struct bip_netproto_hdr *h)
{
	p->owed += h->credits;
}

/* rc is the transmission's: a sequenced message that went used a credit and its number. */
static inline void bip_netproto_msg_sent(struct bip_netproto_peer *p,
					 const struct bip_netproto_hdr *h, int rc)
{
	if (rc < 0) {
		bip_netproto_unsent(p, h);
		return;
	}
	p->seq_out++;
	p->credits--;
}

/*
 * A sequenced arrival (SHORT, RTS), kept until the core takes it in order:
 * 0, or -EPROTO when its number is outside the window or already held.
 */
static inline int bip_netproto_hold(struct bip_netproto_peer *p, uint32_t ncredits,
				    const struct bip_netproto_hdr *h, void *slot)
{
	if (h->seq - p->expect >= ncredits || p->held[h->seq & (ncredits - 1)])
		return -EPROTO;
	p->held[h->seq & (ncredits - 1)] = slot;
	p->nheld++;
	return 0;
}

/* The held arrival next in sequence, or NULL. */
static inline void *bip_netproto_next(const struct bip_netproto_peer *p, uint32_t ncredits)
{
	return p->held[p->expect & (ncredits - 1)];
}

/*
 * Offer the arrival in buf (header first) to the core: its answer, -EAGAIN
 * when the tag's queue is full (keep it and what follows).  A long message
 * is known to the core by (source << 32 | the sender's long send id).
 */
static inline int bip_netproto_offer(int src, const uint8_t *buf)
{
	const struct bip_netproto_hdr *h = (const struct bip_netproto_hdr *)buf;

	if (h->kind == BIP_NETPROTO_SHORT)
		return bip_core_short_arrived(src, h->tag, buf + sizeof(*h), h->len);
	return bip_core_long_arrived(src, h->tag, h->len, ((uint64_t)src << 32) | h->id);
}

/* The core took the next arrival: its buffer is free again and its credit owed. */
static inline void bip_netproto_taken(struct bip_netproto_peer *p, uint32_t ncredits)
{
	p->held[p->expect & (ncredits - 1)] = NULL;
	p->nheld--;
	p->expect++;
	p->owed++;
}

#endif /* BIP_NETPROTO_H */
