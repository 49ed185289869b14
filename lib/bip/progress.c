/* SPDX-License-Identifier: MIT */
/*
 * progress.c - polling the NICs, and waiting.
 *
 * Nothing happens behind the application's back: the NICs are polled when
 * a BIP call runs.  Blocking calls poll in a loop, spinning for
 * bip_state.spin_limit rounds and then yielding the core at each round, so
 * that more processes than cores still make progress.
 *
 * With BIP_WAIT=block, a waiter past its spins sleeps instead of yielding,
 * when its one NIC can be woken by its peers (nic.h's sleep: shm, lanai
 * in either mode, ofi and udp where the provider has a completion queue
 * with a file descriptor to wait on) and nothing of its own is queued; it
 * then uses no processor until a peer publishes something for it, or
 * BIP_SLEEP_MAX passes (10 ms by default), when it looks at everything
 * again.  A process whose NICs cannot wake it, or that has two of them
 * (shm and a network), yields as in the other modes.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "boot.h"
#include "core.h"

int bip_progress(void)
{
	int events = 0, i, rc;

	for (i = 0; i < bip_state.nnics; i++) {
		struct bip_nic *nic = bip_state.nics[i];

		rc = nic->ops->poll(nic);
		if (bip_unlikely(rc < 0))
			return rc;
		events += rc;
	}
	if (bip_unlikely(bip_state.layer_pending))
		bip_layer_retry();
	if (bip_unlikely(bip_state.kept_peers || bip_state.flow_dirty))
		bip_flow_progress();
	if (bip_unlikely(bip_state.queued_sends))
		bip_push_queued();
	/* A waiter sleeps only after a round that found nothing: what this one
	 * found may be what it waits for, checked before its next step.  Only
	 * in block mode: a store at every round slowed the 8-byte ping-pong
	 * of the other modes from about 0.28 to 0.36 us here. */
	if (bip_unlikely(bip_state.wait_mode == BIP_WAIT_BLOCK))
		bip_state.progress_idle = events == 0;
	return events;
}

/* 1 if no other node's process runs any more. */
static int others_gone(void)
{
	int i;

	for (i = 0; i < bip_state.numnodes; i++) {
		struct bip_nic *nic = bip_state.peers[i].nic;

		if (i != bip_state.mynode && nic->ops->alive(nic, i))
			return 0;
	}
	return bip_state.numnodes > 1;
}

void bip_core_peer_lost(int node)
{
	if (bip_state.lost_peer < 0)
		bip_state.lost_peer = node;
}

const char *bip_wait_failure(void)
{
	static char msg[96];

	if (bip_state.lost_peer < 0)
		return BIP_ALL_GONE;
	snprintf(msg, sizeof(msg), "node %d cannot be reached (said above): what it sent is lost",
		 bip_state.lost_peer);
	return msg;
}

/*
 * Under a launcher that can end the job (srun): a peer whose process has
 * ended without the goodbye of bip_finalize died, and the job ends
 * through the launcher, as MPI programs expect, instead of every other
 * process waiting for ever.  Only peers on this host are watched, through
 * shm: there the goodbye is in the peer's ring before its process ends,
 * and whether the process runs is exact.  A goodbye over a network can be
 * lost when its sender closes the endpoint; a peer on another host is
 * watched by the processes of its own host.  Seen dead at two checks, with
 * the waiter's own polls in between (a goodbye in the ring is taken by
 * them), before the job is ended.
 */
static void watch_peers(void)
{
	char msg[BIP_CONF_HOSTLEN + 160];
	int i;

	for (i = 0; i < bip_state.numnodes; i++) {
		struct bip_peer *p = &bip_state.peers[i];

		if (i == bip_state.mynode || p->said_bye || p->nic->ops != &bip_shm_ops ||
		    p->nic->ops->alive(p->nic, i))
			continue;
		if (!p->seen_dead) {
			p->seen_dead = 1;
			continue;
		}
		snprintf(msg, sizeof(msg), "node %d (host %s) ended without bip_finalize",
			 i, bip_state.conf->nodes[i].host);
		fprintf(stderr, "bip: node %d: %s: ending the job\n", bip_state.mynode, msg);
		bip_boot_abort(1, msg);
	}
}

/* Block mode: sleep if the NIC can be woken and nothing waits here. */
static int wait_sleep(struct bip_wait *w)
{
	struct bip_nic *nic = bip_state.nics[0];

	/* A process with threads yields: a NIC's sleep reads its driver's
	 * state (and the layer's timers) without the lock, which only a
	 * single thread may do. */
	if (!__libc_single_threaded)
		return 0;
	if (bip_state.nnics != 1 || !nic->ops->sleep || !bip_state.progress_idle ||
	    bip_state.queued_sends ||
	    bip_state.layer_pending || bip_state.kept_peers || bip_state.flow_dirty)
		return 0;
	nic->ops->sleep(nic, bip_state.sleep_max_ns);
	bip_state.progress_idle = 0;
	/* A sleep is worth many yields: on to the next multiple of 64, so that
	 * the checks below still come, about every 0.6 s of sleeping. */
	w->yields |= 63;
	return 1;
}

/* Called without the lock (a waiter lets go of it for its step); the
 * rare looks at the peers take it, since they ask the drivers. */
int bip_wait_yield(struct bip_wait *w)
{
	int locked, gone = 0;

	if (bip_unlikely(bip_state.lost_peer >= 0))
		return -EPIPE;
	if (bip_state.wait_mode != BIP_WAIT_BLOCK || !wait_sleep(w))
		sched_yield();
	if (bip_state.watch_peers && w->yields % 4096 == 2048) {
		locked = bip_lock();
		watch_peers();
		bip_unlock(locked);
	}
	/* Now and then (a system call per peer), see whether anyone is left. */
	if (++w->yields % 4096 == 0) {
		locked = bip_lock();
		gone = others_gone();
		/* Take what they sent before they ended. */
		if (gone)
			bip_progress();
		bip_unlock(locked);
	}
	return gone ? -EPIPE : 0;
}
