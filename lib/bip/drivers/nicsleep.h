/* SPDX-License-Identifier: MIT */
/*
 * nicsleep.h - the two halves of a NIC's sleep (nic.h) for the NICs whose
 * wakers ring a futex word: shm (the bell of this process's segment, rung
 * by its peers) and lanai (host_wake in the board, rung by the firmware),
 * and the wait on a descriptor of the others (ofi, udp).
 */
#ifndef BIP_NICSLEEP_H
#define BIP_NICSLEEP_H

#include <stdint.h>

#include "nic.h"

/*
 * sleep_arm's steps for a futex word: read word, raise the count of
 * sleepers, fence, then ask pending(arg) whether something was published
 * meanwhile.  0 (count taken back) if so, else 1 with s set to wait on
 * word while it holds what was read.
 */
int bip_nicsleep_arm(uint32_t *sleepers, uint32_t *word, int (*pending)(void *), void *arg,
		     struct bip_nic_sleep *s);

/* sleep_wait for what s says (a futex word or a descriptor), then the
 * count taken back; touches nothing else. */
void bip_nicsleep_wait(struct bip_nic *nic, struct bip_nic_sleep *s);

#endif /* BIP_NICSLEEP_H */
