/* SPDX-License-Identifier: MIT */
/*
 * progress.h - polling the NICs, and waiting (progress.c).
 *
 * The engine of the core: bip_progress polls every NIC through its ops
 * (nic.h), then runs the work the layers above registered with it
 * (bip_progress_work), so that it names none of them.
 */
#ifndef BIP_PROGRESS_H
#define BIP_PROGRESS_H

#include <stddef.h>

#include "state.h"

struct bip_wait {
	unsigned spins;
	unsigned yields;
};

/* Poll every NIC once and push queued sends. */
int bip_progress(void);

static inline void bip_wait_start(struct bip_wait *w)
{
	w->spins = 0;
	w->yields = 0;
}

int bip_wait_yield(struct bip_wait *w);

/*
 * One step of waiting: spin briefly, then give the core to others.
 * Returns 0, or -EPIPE once every other node has ended (or one was lost,
 * bip_core_peer_lost): then nothing more can arrive, and the caller reports
 * bip_wait_failure() instead of waiting forever.
 */
static inline int bip_wait_step(struct bip_wait *w)
{
	if (w->spins < bip_state.spin_limit) {
		w->spins++;
		bip_cpu_relax();
		return 0;
	}
	return bip_wait_yield(w);
}

/* The message for -EPIPE from bip_wait_step. */
#define BIP_ALL_GONE "every other node has ended: nothing more can arrive"

/* Why bip_wait_step failed: BIP_ALL_GONE, or that a node was lost. */
const char *bip_wait_failure(void);

/* The reliability layer gave up on node (it said why): from now on every
 * wait fails (bip_wait_step), since what that node sent or would send is lost. */
void bip_core_peer_lost(int node);

/*
 * The work of the layers above that bip_progress runs after polling the
 * NICs, each only when bip_state says there is some (the flags named
 * below), so that the messaging path pays for none of it.  The protocol
 * registers its own when it sets up its send table (bip_sreq_table_init,
 * proto.c); the forwarding layer its own when it is set up on a relay
 * (bip_fwd_setup, fwd.c).  Both stay registered until the process ends.
 */
struct bip_progress_work {
	void (*layer_retry)(void);  /* bip_state.layer_pending */
	void (*flow)(void);         /* bip_state.kept_peers or flow_dirty */
	void (*push_queued)(void);  /* bip_state.queued_sends */
};

void bip_progress_set_work(const struct bip_progress_work *work);
/* relay: what a relay forwards (bip_state.relay); its count of events. */
void bip_progress_set_relay(int (*relay)(void));
/* push: post the one-sided requests waiting for room (bip_state.rma_queued,
 * rma.c); registered by bip_init. */
void bip_progress_set_rma(void (*push)(void));

/* Auto mode, the local processes outnumber the processors: spin only a
 * few rounds and sleep once a wait lasts (progress.c), unless BIP_SPIN or
 * BIP_WAIT says otherwise.  Called by bip_init, and by a driver whose NIC
 * needs a processor of its own (lanai's firmware). */
void bip_wait_oversubscribed(void);

/* 1 if a waiter of this process can sleep on its drivers (every one has
 * the sleep ops), whether on one or, through waitset.c, on several. */
int bip_wait_can_sleep(void);

/*
 * waitset.c: sleep on n armed sleeps at once (each a futex word or a
 * descriptor, nic.h), for at most timeout_ns: 0 when woken or timed out,
 * -1 if it cannot (the caller yields instead).  The arms' counts are the
 * caller's to take back.  bip_waitset_fini ends the threads that watch
 * the futex words, before the drivers close.
 */
int bip_waitset_wait(struct bip_nic_sleep *s, int n, long timeout_ns);
void bip_waitset_fini(void);

/* How this process waits, for bipinfo --job: "auto: 2 processes on 1
 * processor (affinity): yields, sleeps after 2000 us". */
void bip_wait_desc(char *buf, size_t len);

/*
 * Reach node, which joined the job after this process started (nic.h): a
 * node may be there before its process has opened its drivers, so a reach
 * that finds it not there yet tries again for BIP_REACH_TIMEOUT seconds
 * (10) with progress in between.  0, or -1 with the error set for call.
 * Takes the core's lock.
 */
int bip_core_reach(int node, const char *call);

#endif /* BIP_PROGRESS_H */
