/* SPDX-License-Identifier: MIT */
/*
 * closing.c - a process that ends while a long message's data is still
 * coming to it.  Node 1 starts a 64 MiB send to node 0 and then sends a
 * short message on another tag; node 0 posts the long receive, takes the
 * short one (so the long message's announcement has come, and its receive
 * is given to the driver) and calls bip_finalize at once, without waiting
 * for the long receive.  Over tcp;ofi_rxm the data is then being read from
 * node 1 while node 0 closes: close must let it finish (bip_ofi(7), NOTES),
 * so node 1's send completes and neither process crashes.
 *
 * Output: "node 0: closing", "node 1: send done"; any failure is a line
 * from BIP (bip_swait says a long send failed) or the exit status.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bip.h"

#define WORDS (16 << 20)

int main(void)
{
	int *buf = malloc((size_t)WORDS * sizeof(int));
	int one = 1, i, id;

	if (!buf) {
		fprintf(stderr, "closing: out of memory\n");
		return 1;
	}
	bip_init();
	if (bip_numnodes != 2) {
		fprintf(stderr, "closing: runs on 2 nodes\n");
		bip_finalize();
		return 2;
	}
	if (bip_mynode == 1) {
		for (i = 0; i < WORDS; i++)
			buf[i] = i;
		id = bip_tisend(0, 5, buf, WORDS);
		if (id < 0 || bip_tsend(0, 6, &one, 1) != 0) {
			printf("node 1: FAIL: a send was refused\n");
		} else {
			bip_swait(id);
			printf("node 1: send done\n");
		}
	} else {
		if (bip_tirecv(5, buf, WORDS) < 0 || bip_trecv(6, &one, 1) != 1)
			printf("node 0: FAIL: a receive was refused\n");
		else
			printf("node 0: closing\n");
	}
	fflush(stdout);
	bip_finalize();
	free(buf);
	return 0;
}
