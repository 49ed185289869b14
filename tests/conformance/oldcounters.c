/* SPDX-License-Identifier: MIT */
/*
 * oldcounters - a program built against BIP 0.92, whose struct bip_counters
 * had eight fields, keeps the 0.92 symbol of bip_get_counters: it writes
 * those eight and nothing after them.  The current symbol fills the whole
 * struct, the reliability layer's counters included.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bip.h"

struct counters_092 {
	uint64_t f[8];
	uint64_t guard[4]; /* what lies after a 0.92 program's struct */
};

void bip_get_counters_old(struct counters_092 *c);
__asm__(".symver bip_get_counters_old, bip_get_counters@BIP_0.92");

int main(void)
{
	struct counters_092 old;
	struct bip_counters now;
	int i;

	memset(&old, 0xa5, sizeof(old));
	bip_get_counters_old(&old);
	for (i = 0; i < 8; i++)
		if (old.f[i] != 0) {
			fprintf(stderr, "FAIL: field %d of the 0.92 struct is %llu, not 0\n", i,
				(unsigned long long)old.f[i]);
			return 1;
		}
	for (i = 0; i < 4; i++)
		if (old.guard[i] != 0xa5a5a5a5a5a5a5a5ull) {
			fprintf(stderr, "FAIL: the 0.92 symbol wrote past the 0.92 struct\n");
			return 1;
		}
	memset(&now, 0xa5, sizeof(now));
	bip_get_counters(&now);
	if (now.retransmits != 0 || now.path[BIP_COUNTER_PATHS - 1].restored != 0) {
		fprintf(stderr, "FAIL: the current symbol left the layer's counters unset\n");
		return 1;
	}
	printf("0.92 symbol: 8 fields written, nothing after; current symbol: the whole struct\n");
	return 0;
}
