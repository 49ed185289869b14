/* SPDX-License-Identifier: MIT */
/*
 * relay.c - the relay's process (bipgw(1)): bip_init as a relay node, then
 * bip_progress until told to stop.  It stands above the core as a program
 * does; the forwarding itself is the forwarding layer's (fwd.c), which
 * bip_progress runs on a relay.
 */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bip.h"
#include "fwd.h"
#include "progress.h"
#include "state.h"

static volatile sig_atomic_t relay_stop;

static void relay_on_signal(int sig)
{
	(void)sig;
	relay_stop = 1;
}

/*
 * A relay whose drivers cannot wake it (one without the sleep ops) would
 * yield for ever, and on a host with fewer processors than processes a
 * yield may not give the processor to the process that needs it (the
 * scheduler keeps a yielding process that has run less).  After
 * RELAY_NAP_AFTER rounds without anything, it naps RELAY_NAP_NS at a
 * time: a packet then waits that long at most, well below the reliability
 * layer's first time-out (BIP_REL_RTO, 2 ms).  A relay over shm and a
 * network driver sleeps on both at once (progress.c, waitset.c).
 */
#define RELAY_NAP_AFTER 256
#define RELAY_NAP_NS 50000L
#define RELAY_SPIN 16

/*
 * Forward until told to stop, or until every other node has ended.  Idle,
 * a relay waits as the job's processes do (BIP_WAIT): it spins, yields,
 * and sleeps where its drivers can wake it; where they cannot, it naps.
 */
int bip_relay_run(void)
{
	struct sigaction sa = { .sa_handler = relay_on_signal };
	struct bip_wait w;
	unsigned idle = 0;
	int nap;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	bip_relay_wanted = 1;
	bip_init();
	/* Only where a process would sleep (BIP_WAIT=block, or auto with more
	 * processes than processors): BIP_WAIT=spin and yield keep theirs. */
	nap = bip_state.wait_mode == BIP_WAIT_BLOCK && !bip_wait_can_sleep();
	/* Asked to block, a relay does not spin long before it sleeps: each
	 * of its rounds polls every driver (a system call for ofi), and on
	 * processors it shares with the ranks its spinning is their loss. */
	{
		const char *spin = getenv("BIP_SPIN");

		if (bip_state.wait_mode == BIP_WAIT_BLOCK && !(spin && *spin) &&
		    bip_state.spin_limit > RELAY_SPIN)
			bip_state.spin_limit = RELAY_SPIN;
	}
	bip_wait_start(&w);
	while (!relay_stop) {
		int locked = bip_lock(), n = bip_progress();

		bip_unlock(locked);
		if (n < 0) {
			fprintf(stderr, "bipgw: node %d: a driver failed: %s\n", bip_state.mynode,
				strerror(-n));
			return 1;
		}
		if (n > 0) {
			bip_wait_start(&w);
			idle = 0;
			continue;
		}
		/* Packets held that wait for a peer (a long message on its way
		 * to a node that does not poll now) are no reason to spin: the
		 * wait spins, then sleeps unless the forwarding driver has work
		 * of its own (fwd.c's sleep_arm). */
		if (nap && !bip_fwd_holding() && ++idle > RELAY_NAP_AFTER) {
			nanosleep(&(struct timespec){ .tv_nsec = RELAY_NAP_NS }, NULL);
			continue;
		}
		if (bip_wait_step(&w) < 0)
			break; /* nobody left to forward for */
	}
	if (bip_fwd_dropped())
		fprintf(stderr, "bipgw: node %d: %llu packet(s) dropped\n", bip_state.mynode,
			bip_fwd_dropped());
	bip_finalize();
	return 0;
}
