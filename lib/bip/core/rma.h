/* SPDX-License-Identifier: MIT */
/*
 * rma.h - the requests of one-sided operations, and their completion
 * (rma.c).
 */
#ifndef BIP_RMA_H
#define BIP_RMA_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* What a request asks of its NIC. */
enum bip_rma_what {
	BIP_RMA_WHAT_EXPOSE = 1, /* base, len */
	BIP_RMA_WHAT_WITHDRAW,	 /* key */
	BIP_RMA_WHAT_OP,	 /* op: a put, get or atomic */
	BIP_RMA_WHAT_NOTHING,	 /* complete at once (an operation of 0 bytes) */
};

struct bip_rma_args {
	enum bip_rma_what what;
	void *base;		/* EXPOSE */
	size_t len;		/* EXPOSE */
	uint64_t key;		/* WITHDRAW */
	struct bip_nic_rma op;	/* OP */
};

/* Start a request on nic: its id (>= 0), or a negative errno from the
 * NIC (a request it has no room for waits in the core, in order, and is
 * never refused for that).  Under the lock. */
int bip_rma_start(struct bip_nic *nic, const struct bip_rma_args *a);
/* 1 if id names a request not yet reported, else 0.  Under the lock. */
int bip_rma_known(int id);
/* If id is complete: its status (0 or -errno) and, for an exposure, its
 * key in *key_p; the request is released; returns 1.  Else 0.  Under the
 * lock; id known. */
int bip_rma_take(int id, int *status_p, uint64_t *key_p);
/* Post what waits for room at the NICs (bip_progress, when rma_queued). */
void bip_rma_push(void);
/* Drop every request (bip_finalize). */
void bip_rma_free(void);

#endif /* BIP_RMA_H */
