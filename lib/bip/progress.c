/* SPDX-License-Identifier: MIT */
/*
 * progress.c - polling the NICs, and waiting.
 *
 * Nothing happens behind the application's back: the NICs are polled when
 * a BIP call runs.  Blocking calls poll in a loop, spinning for
 * bip_state.spin_limit rounds and then yielding the core at each round, so
 * that more processes than cores still make progress.
 */
#include <sched.h>

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
	if (bip_unlikely(bip_state.queued_sends))
		bip_push_queued();
	return events;
}

void bip_wait_yield(void)
{
	sched_yield();
}
