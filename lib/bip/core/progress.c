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
 * when its one NIC can be woken by its peers (nic.h's sleep_arm and
 * sleep_wait: shm, lanai in either mode, ofi and udp where the provider
 * has a completion queue with a file descriptor to wait on) and nothing
 * of its own is queued; it then uses no processor until a peer publishes
 * something for it, or BIP_SLEEP_MAX passes (10 ms by default), when it
 * looks at everything again.  A process whose NICs cannot wake it yields
 * as in the other modes; one with two of them (shm and a network) sleeps
 * on both at once (wait_sleep_many, waitset.c).
 *
 * Auto mode is spin, then yield, as long as every local process has a
 * processor.  When they outnumber the processors (bip_wait_oversubscribed)
 * a waiter spins a few rounds, yields, and once one wait has lasted
 * BIP_SLEEP_AFTER (2 ms by default) sleeps as in block mode: a short wait,
 * as in an all-to-all where a wake-up would cost a system call on both
 * sides at nearly every message, stays on yields, and a long one uses no
 * processor.  Peers then wake it, since they compute the same (init.c).
 *
 * A thread sleeps as a single-threaded process does: it takes the lock to
 * arm the NIC's sleep (its last look at what peers published), and waits
 * without it (wait_sleep), so that several threads may sleep at once.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boot.h"
#include "error.h"
#include "monitor.h"
#include "progress.h"

static const struct bip_progress_work *work;
static int (*relay_work)(void);
static void (*rma_push)(void);

void bip_progress_set_work(const struct bip_progress_work *w)
{
	work = w;
}

void bip_progress_set_relay(int (*relay)(void))
{
	relay_work = relay;
}

void bip_progress_set_rma(void (*push)(void))
{
	rma_push = push;
}

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
	if (bip_unlikely(bip_state.relay) && relay_work)
		events += relay_work();
	/* The flags are set by the protocol only, which registered its work
	 * before it could set one (bip_sreq_table_init). */
	if (bip_unlikely(bip_state.layer_pending))
		work->layer_retry();
	if (bip_unlikely(bip_state.kept_peers || bip_state.flow_dirty))
		work->flow();
	if (bip_unlikely(bip_state.queued_sends))
		work->push_queued();
	if (bip_unlikely(bip_state.rma_queued) && rma_push)
		rma_push();
	if (bip_unlikely(bip_state.monitor))
		bip_monitor_tick();
	/* A waiter sleeps only after a round that found nothing: what this one
	 * found may be what it waits for, checked before its next step.  Only
	 * in block mode: a store at every round slowed the 8-byte ping-pong
	 * of the other modes from about 0.28 to 0.36 us here. */
	if (bip_unlikely(bip_state.wait_mode == BIP_WAIT_BLOCK))
		bip_state.progress_idle = events == 0;
	return events;
}

/* 1 if no other node of the program runs any more (the relays, which
 * end after the program, do not count). */
static int others_gone(void)
{
	int i;

	for (i = 0; i < bip_state.napp; i++) {
		struct bip_nic *nic = bip_state.peers[i].nic;

		/* A node that joined and was not reached yet may still send. */
		if (i != bip_state.mynode && !bip_is_relay(i) && (!nic || nic->ops->alive(nic, i)))
			return 0;
	}
	return bip_state.napp > 1 || (bip_state.relay && bip_state.napp > 0);
}

void bip_core_peer_joined(struct bip_nic *nic, int node)
{
	struct bip_peer *p = &bip_state.peers[node];

	p->nic = nic;
	p->by_shm = nic->ops == &bip_shm_ops;
	if (node >= bip_state.napp)
		__atomic_store_n(&bip_state.napp, node + 1, __ATOMIC_RELEASE);
}

int bip_core_reach(int node, const char *call)
{
	struct bip_nic *nic = bip_state.grow_nic;
	struct timespec start, now, nap = { 0, 1000000 };
	const char *s = getenv("BIP_REACH_TIMEOUT");
	double limit = s && atof(s) > 0 ? atof(s) : 10.0;
	char err[320] = "";
	int locked, rc;

	if (bip_is_relay(node)) {
		bip_error(call, "node %d is a relay of the gateways (bipgw(1)): it runs no program",
			  node);
		return -1;
	}
	if (node < 0 || node >= bip_state.numnodes || node == bip_state.mynode || !nic) {
		bip_error(call, "node %d out of range (0 .. %d)%s", node, bip_state.napp - 1,
			  node == bip_state.mynode ? ": it is this node" : "");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	locked = bip_lock();
	for (;;) {
		if (bip_state.peers[node].nic) {
			rc = 0;
			break;
		}
		/* shm beside a network driver: the node's host decides, as at
		 * start-up (init.c), and the node picks the same driver back
		 * (its entry, and those of the nodes it opened with, name
		 * their hosts). */
		if (bip_state.grow_local && bip_state.nrelays) {
			/* Clusters: this node's cluster directly, the others
			 * through the relays (fwd.c), as at start-up. */
			bip_nic_learn_host(node);
			nic = bip_conf_direct(bip_state.conf, bip_state.mynode, node) ?
				      bip_state.grow_local : bip_state.grow_nic;
		} else if (bip_state.grow_local) {
			bip_nic_learn_host(node);
			nic = bip_nic_same_host(bip_state.conf, bip_state.mynode, node) ?
				      bip_state.grow_local : bip_state.grow_nic;
		}
		rc = nic->ops->reach(nic, node, err, sizeof(err));
		/* A node of this host without shm (alone on it at start):
		 * over the network driver, as it reaches this one. */
		if (rc == -ENOTSUP && nic == bip_state.grow_local) {
			nic = bip_state.grow_nic;
			rc = nic->ops->reach(nic, node, err, sizeof(err));
		}
		if (rc == 0) {
			bip_core_peer_joined(nic, node);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (rc != -EAGAIN || now.tv_sec - start.tv_sec +
					     (now.tv_nsec - start.tv_nsec) * 1e-9 > limit)
			break;
		bip_progress();
		nanosleep(&nap, NULL);
	}
	bip_unlock(locked);
	if (rc < 0) {
		if (rc == -EAGAIN)
			bip_error(call, "node %d has joined the job but did not start BIP within "
				  "%.0f s", node, limit);
		else if (rc == -ESRCH)
			bip_error(call, "destination node %d out of range (0 .. %d): %s", node,
				  bip_state.napp - 1, err);
		else
			bip_error(call, "node %d cannot be reached: %s", node, err);
		return -1;
	}
	return 0;
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
 * shm: there the goodbye is in the peer's queue before its process ends,
 * and whether the process runs is exact.  A goodbye over a network can be
 * lost when its sender closes the endpoint; a peer on another host is
 * watched by the processes of its own host.  Seen dead at two checks, with
 * the waiter's own polls in between (a goodbye in the queue is taken by
 * them), before the job is ended.
 */
static void watch_peers(void)
{
	char msg[BIP_CONF_HOSTLEN + 160];
	int i;

	for (i = 0; i < bip_state.numnodes; i++) {
		struct bip_peer *p = &bip_state.peers[i];

		if (i == bip_state.mynode || i >= bip_state.napp || bip_is_relay(i) || p->said_bye ||
		    !p->by_shm ||
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

/* The start of this thread's wait, for BIP_SLEEP_AFTER: taken at its
 * first yield (a layer's wait keeps only its counts between steps). */
static __thread uint64_t wait_since_ns;

/* 1 once this wait has lasted bip_state.sleep_after_ns (always in block
 * mode, where it is 0). */
static int wait_long_enough(const struct bip_wait *w)
{
	if (!bip_state.sleep_after_ns)
		return 1;
	if (!w->yields) {
		wait_since_ns = bip_now_ns();
		return 0;
	}
	return bip_now_ns() - wait_since_ns >= (uint64_t)bip_state.sleep_after_ns;
}

/* With the lock: the last poll found nothing and nothing of this process
 * waits (queued sends, a layer's deferred work, holds not yet told, one-sided
 * requests).  Arrivals kept for want of room are no reason to stay awake:
 * every round offers them again (flow), and room comes back only with an
 * event that wakes this process (a receive the program posts before it
 * waits, or a relay's packet leaving when its next hop takes it, which that
 * driver's completion or credits announce). */
static int nothing_waits(void)
{
	return bip_state.progress_idle && !bip_state.queued_sends && !bip_state.layer_pending &&
	    !bip_state.flow_dirty && !bip_state.rma_queued;
}

/* After a sleep that started at t0 and could last timeout_ns: count it,
 * and whether it was woken before its time-out (bip_counters).  A sleep
 * is worth many yields: on to the next multiple of 64, so that the checks
 * of bip_wait_yield still come about every 0.6 s of sleeping (they look
 * for the count going past their marks, which a sleep may jump over). */
static void slept(struct bip_wait *w, uint64_t t0, long timeout_ns)
{
	bip_count(&bip_state.counters.sleeps, 1);
	if (bip_now_ns() - t0 < (uint64_t)timeout_ns)
		bip_count(&bip_state.counters.wakeups, 1);
	w->yields |= 63;
}

/*
 * With the lock: arm the NIC's sleep if the last poll found nothing (what
 * it found may need another round of the waiter's, such as a layer's
 * deferred work) and nothing waits here.  The next sleep again waits for
 * a poll that finds nothing.
 */
static int sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	int locked = bip_lock(), armed = 0, i;

	if (nothing_waits()) {
		s->timeout_ns = bip_state.sleep_max_ns;
		/* The passive instances first: they may lower the time-out. */
		for (armed = 1, i = 0; armed && i < bip_state.nnics; i++)
			if (bip_state.nics[i] != nic)
				armed = bip_state.nics[i]->ops->sleep_arm(bip_state.nics[i], s);
		if (armed)
			armed = nic->ops->sleep_arm(nic, s);
		bip_state.progress_idle = 0;
	}
	bip_unlock(locked);
	return armed;
}

/* The instance a sleeping thread waits on: the only one, or the only one
 * besides passive ones (nic.h) that all can arm; NULL if there is none or
 * several (wait_sleep_many). */
static struct bip_nic *sleep_nic(void)
{
	struct bip_nic *nic = NULL;
	int i;

	for (i = 0; i < bip_state.nnics; i++) {
		struct bip_nic *n = bip_state.nics[i];

		if (!n->ops->sleep_arm)
			return NULL;
		if (n->passive)
			continue;
		if (nic)
			return NULL;
		nic = n;
	}
	return nic;
}

#define SLEEP_MANY 4

int bip_wait_can_sleep(void)
{
	int i, active = 0;

	for (i = 0; i < bip_state.nnics; i++) {
		if (!bip_state.nics[i]->ops->sleep_arm)
			return 0;
		active += !bip_state.nics[i]->passive;
	}
	return active >= 1 && active <= SLEEP_MANY;
}

/* Take back the count of a sleep that was armed (nic.h: sleep_wait takes
 * it back after its wait, here of no time). */
static void sleep_disarm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	s->timeout_ns = 0;
	nic->ops->sleep_wait(nic, s);
}

/*
 * Several instances that can each be woken (shm beside ofi): arm them all
 * with the lock held, as sleep_arm does one, each into its own sleep, the
 * passive ones first, then wait on all at once without the lock
 * (waitset.c) and take every count back.  1 if it slept, 0 if not (the
 * waiter yields).
 */
static int wait_sleep_many(struct bip_wait *w)
{
	struct bip_nic_sleep s[SLEEP_MANY];
	struct bip_nic *armed[SLEEP_MANY];
	long timeout = bip_state.sleep_max_ns;
	int locked, i, n = 0, ok = 0, rc;
	uint64_t t0;

	if (!bip_wait_can_sleep() || !wait_long_enough(w))
		return 0;
	locked = bip_lock();
	if (nothing_waits()) {
		ok = 1;
		for (i = 0; ok && i < bip_state.nnics; i++) {
			struct bip_nic *nic = bip_state.nics[i];
			struct bip_nic_sleep p = { .timeout_ns = timeout, .fd = -1 };

			if (!nic->passive)
				continue;
			ok = nic->ops->sleep_arm(nic, &p);
			if (ok && p.timeout_ns < timeout)
				timeout = p.timeout_ns;
		}
		for (i = 0; ok && i < bip_state.nnics; i++) {
			struct bip_nic *nic = bip_state.nics[i];

			if (nic->passive)
				continue;
			s[n] = (struct bip_nic_sleep){ .timeout_ns = timeout, .fd = -1 };
			ok = nic->ops->sleep_arm(nic, &s[n]);
			if (ok) {
				if (s[n].timeout_ns < timeout)
					timeout = s[n].timeout_ns;
				armed[n++] = nic;
			}
		}
		bip_state.progress_idle = 0;
	}
	bip_unlock(locked);
	if (!ok) {
		for (i = 0; i < n; i++)
			sleep_disarm(armed[i], &s[i]);
		return 0;
	}
	t0 = bip_now_ns();
	rc = bip_waitset_wait(s, n, timeout);
	for (i = 0; i < n; i++)
		sleep_disarm(armed[i], &s[i]);
	if (rc < 0)
		return 0;
	slept(w, t0, timeout);
	return 1;
}

/*
 * Sleep if this process's NIC can be woken and nothing waits here: arm
 * with the lock held, wait without it (nic.h), so that a thread sleeps
 * while the others go on, and several may sleep at once.
 *
 * Anything published after the arming wakes every sleeping thread,
 * whichever thread then takes it.  One race is left to the time-out:
 * another thread's poll that takes, between this thread's last look and
 * its arming, what this thread waits for (its message, a completion),
 * then polls again and finds nothing (else progress_idle keeps this one
 * awake), leaves it asleep until its NIC is woken again or BIP_SLEEP_MAX
 * passes.  Closing it would need the waiter's own condition here.
 */
static int wait_sleep(struct bip_wait *w)
{
	struct bip_nic *nic = sleep_nic();
	struct bip_nic_sleep s;
	uint64_t t0;

	if (!nic)
		return wait_sleep_many(w);
	if (!wait_long_enough(w) || !sleep_arm(nic, &s))
		return 0;
	t0 = bip_now_ns();
	nic->ops->sleep_wait(nic, &s);
	slept(w, t0, s.timeout_ns);
	return 1;
}

void bip_wait_oversubscribed(void)
{
	const char *spin = getenv("BIP_SPIN");

	if (bip_state.wait_mode != BIP_WAIT_AUTO)
		return;
	if (!(spin && *spin) && bip_state.spin_limit > BIP_SPIN_SHARED_CPU)
		bip_state.spin_limit = BIP_SPIN_SHARED_CPU;
	/* From now on this process waits as block mode does (bip_progress
	 * then tells whether its last round found anything), but sleeps
	 * only once a wait has lasted. */
	bip_state.wait_mode = BIP_WAIT_BLOCK;
	bip_state.sleep_after_ns = bip_state.sleep_after_auto_ns;
	bip_state.oversubscribed = 1;
}

void bip_wait_desc(char *buf, size_t len)
{
	int n = bip_state.host_procs, m = bip_state.host_cpus;
	const char *how;

	switch (bip_state.wait_mode) {
	case BIP_WAIT_SPIN:
		snprintf(buf, len, "spin");
		return;
	case BIP_WAIT_YIELD:
		snprintf(buf, len, "yield");
		return;
	case BIP_WAIT_BLOCK:
		if (!bip_state.oversubscribed) {
			snprintf(buf, len, "block: spins %u rounds, then sleeps",
				 bip_state.spin_limit);
			return;
		}
		how = "yields, then sleeps once a wait lasts";
		break;
	default:
		how = "then yields";
		break;
	}
	snprintf(buf, len, "auto: %d process%s on %d processor%s (%s): spins %u rounds, %s",
		 n, n == 1 ? "" : "es", m, m == 1 ? "" : "s",
		 bip_state.host_cpus_why ? bip_state.host_cpus_why : "?", bip_state.spin_limit,
		 how);
}

/* Called without the lock (a waiter lets go of it for its step); the
 * rare looks at the peers take it, since they ask the drivers. */
/* The count of a wait's steps went past at + k * 4096 for some k (a sleep
 * moves it on by up to 64 at once, so it may skip the value itself). */
static int passed(unsigned before, unsigned after, unsigned at)
{
	return (before - at) / 4096 != (after - at) / 4096;
}

int bip_wait_yield(struct bip_wait *w)
{
	unsigned before = w->yields;
	int locked, gone = 0;

	if (bip_unlikely(bip_state.lost_peer >= 0))
		return -EPIPE;
	if (!bip_may_sleep() || !wait_sleep(w))
		sched_yield();
	w->yields++;
	if (bip_state.watch_peers && passed(before, w->yields, 2049)) {
		locked = bip_lock();
		watch_peers();
		bip_unlock(locked);
	}
	/* Now and then (a system call per peer), see whether anyone is left. */
	if (passed(before, w->yields, 0)) {
		locked = bip_lock();
		gone = others_gone();
		/* Take what they sent before they ended. */
		if (gone)
			bip_progress();
		bip_unlock(locked);
	}
	return gone ? -EPIPE : 0;
}
