/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: what a peer writes into shared memory, as this process reads
 * it.  The first byte picks the part: a segment header (its node count and
 * node from the next bytes), or a ring slot, whose RTS payload goes on to
 * the receiver's bookkeeping of long messages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];

	if (size < 3)
		return 0;
	if (data[0] & 1) {
		/* A header, in a mapping of the bytes' length. */
		int numnodes = 1 + data[1] % 64, node = data[2] % 65;
		void *seg = malloc(size - 3 ? size - 3 : 1);

		if (!seg)
			return 0;
		memcpy(seg, data + 3, size - 3);
		bip_shm_header_check(seg, size - 3, numnodes, node, err, sizeof(err));
		free(seg);
	} else {
		struct bip_shm_slot slot;
		struct bip_shm_peer *peer = calloc(1, sizeof(*peer));
		uint32_t tag, len;

		if (!peer)
			return 0;
		memset(&slot, 0, sizeof(slot));
		memcpy(&slot, data + 1, size - 1 < sizeof(slot) ? size - 1 : sizeof(slot));
		if (bip_shm_slot_read(&slot, &tag, &len) == BIP_SHM_RTS) {
			struct bip_shm_rts rts;

			memcpy(&rts, slot.payload, sizeof(rts));
			/* Twice: a second announcement must not break the list. */
			bip_shm_rts_seen(peer, &rts, len);
			bip_shm_rts_seen(peer, &rts, len);
		}
		free(peer);
	}
	return 0;
}
