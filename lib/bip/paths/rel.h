/* SPDX-License-Identifier: MIT */
/*
 * rel.h - the reliability layer (rel.c) and the datagram drivers below it.
 *
 * A driver that cannot deliver every message intact and in order by itself
 * (the simulated board, which loses, corrupts, duplicates and reorders
 * packets at will; libfabric datagram endpoints) declares itself
 * unreliable: its open returns a bip_nic with dgram set, and the core puts
 * the reliability layer between itself and that instance (bip_rel_open).
 * The core then sees the layer's bip_nic, reliable like any other; the
 * driver sees only datagrams.  Drivers that are reliable by themselves
 * (shm, libfabric's reliable endpoints, psm2) never meet the layer.
 *
 * The contract of a datagram driver:
 *
 *  - it reaches each served peer through npaths paths (rails: path p
 *    joins this host's NIC p to the peer's NIC p); any path may lose,
 *    corrupt, duplicate, delay or reorder datagrams;
 *  - send puts one datagram on a path: a header of hlen bytes (at most
 *    BIP_REL_HDR_MAX), copied before the call returns, then len bytes of
 *    data (at most mtu), which the NIC may read later; the layer keeps
 *    the data unchanged until the peer acknowledges it.  A NIC that reads
 *    the data after that (a retransmission still in its queue when the
 *    acknowledgement came) sends a packet the peer drops as a duplicate;
 *  - poll hands each datagram that arrived to bip_rel_arrived (the bytes
 *    valid during the call only), and each change of a path that the NIC
 *    sees (its link went down, or came back) to bip_rel_path_state;
 *  - alive, reach, sleep_arm and sleep_wait (optional), and close as in
 *    nic.h; with reach (a job that grows), the layer reaches the nodes
 *    that join through the driver, and a datagram may come from a node
 *    the driver was not told to serve at open: one that joined.
 *
 * Everything in a datagram is untrusted: the layer checks its header's
 * CRC32C and every field before it uses one.
 */
#ifndef BIP_REL_H
#define BIP_REL_H

#include <stddef.h>
#include <stdint.h>

#include "nic.h"

#define BIP_REL_HDR_MAX 128  /* bytes of a datagram's header, at most */
#define BIP_REL_MAXPATHS 4   /* paths per peer, at most */

struct bip_dgram_ops {
	/* 0, -EAGAIN (no room now: the layer sends it later), or -ENETDOWN
	 * (this path cannot reach dst now: the layer uses another). */
	int (*send)(struct bip_nic *nic, int path, int dst, const void *hdr, size_t hlen,
		    const void *data, size_t len);
	/* Number of events, or a negative errno on a fatal NIC error. */
	int (*poll)(struct bip_nic *nic);
	int (*alive)(struct bip_nic *nic, int node);
	/* As nic.h's reach; NULL if the NIC's peers cannot join later. */
	int (*reach)(struct bip_nic *nic, int node, char *err, size_t errlen);
	/* As nic.h's (woken by an arrival or any other event the NIC has for
	 * poll); NULL if the NIC cannot wake this process.  The layer caps
	 * s->timeout_ns by its own timers before it arms. */
	int (*sleep_arm)(struct bip_nic *nic, struct bip_nic_sleep *s);
	void (*sleep_wait)(struct bip_nic *nic, struct bip_nic_sleep *s);
	void (*close)(struct bip_nic *nic);
};

/* What a datagram driver sets in its bip_nic (nic->dgram points here). */
struct bip_dgram {
	const struct bip_dgram_ops *ops;
	int npaths;          /* 1 .. BIP_REL_MAXPATHS */
	size_t mtu;          /* bytes of data after the header, at most */
	unsigned window;     /* packets in flight per peer the NIC's receive
			      * side can hold (a power of two, at least 16;
			      * 0: no limit): the layer's window unless
			      * BIP_REL_WINDOW says otherwise */
	/* 1: the layer copies an eager message and completes its send at
	 * once, leaving its acknowledgement to ride on traffic, instead of
	 * sending from the user's buffer and completing on an acknowledgement
	 * asked for at once (the forwarding driver, where that acknowledgement
	 * crosses the relays as the data did). */
	int copy_eager;
	/* Bytes of a fragment unless BIP_REL_FRAG says otherwise, at most
	 * mtu; 0: the mtu, at most 64 KiB. */
	size_t frag;
	void *rel;           /* the layer above (set by bip_rel_open) */
};

/* Put the layer on top of lower, an instance whose dgram is set: *nic_p is
 * the layer's instance, which the core uses instead (closing it closes
 * lower).  0, or a negative errno with the reason in job->err. */
int bip_rel_open(const struct bip_nic_job *job, struct bip_nic *lower, struct bip_nic **nic_p);

/* 1 if nic is an instance of the layer (the core closes those first,
 * release_all in init.c). */
int bip_rel_is(const struct bip_nic *nic);

/* From a datagram driver's poll: a datagram from node src arrived on path. */
void bip_rel_arrived(struct bip_nic *lower, int path, int src, const void *pkt, size_t len);

/* From a datagram driver's poll: path to node peer went down (up 0) or came
 * back (up 1); why says what the NIC saw (may be NULL). */
void bip_rel_path_state(struct bip_nic *lower, int path, int peer, int up, const char *why);

#endif /* BIP_REL_H */
