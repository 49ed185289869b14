/* SPDX-License-Identifier: MIT */
/*
 * state.c - the state of the BIP core (state.h): one instance per process,
 * set up by bip_init (init.c) and read by every module of the core and by
 * the drivers.
 */
#include "state.h"

__thread unsigned bip_lock_depth;

struct bip_state bip_state = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.spin_limit = 1000,
	.lost_peer = -1,
};

int bip_relay_wanted;
