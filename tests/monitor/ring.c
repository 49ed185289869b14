/* SPDX-License-Identifier: MIT */
/*
 * ring.c - traffic for the tests of bipload --monitor: each node sends only
 * to its right neighbour (node + 1 mod N) and receives only from its left.
 *
 *   bipload --monitor -sz N ring STOPFILE [MAX_SECONDS]
 *
 * It runs until STOPFILE exists (the test creates it once it has seen what
 * it wanted), or MAX_SECONDS have passed (default 300), a limit against a
 * test that never stops it, not a part of what is tested.  Node 0 decides:
 * once it sees the file it picks a last round S, N + 1 rounds ahead, and
 * every message carries S, so each node has learnt S from its left
 * neighbour before round S; every node then ends after round S, having sent
 * and received the same rounds.  Each message is 64 words (a short one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"

#define WORDS 64
#define TAG 1

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int out[WORDS], in[WORDS];
	long round, last = -1;
	double start, limit;
	int right, id, got;

	if (argc < 2) {
		fprintf(stderr, "usage: ring STOPFILE [MAX_SECONDS]\n");
		return 2;
	}
	limit = argc > 2 ? atof(argv[2]) : 300;
	bip_init();
	if (bip_numnodes < 2) {
		fprintf(stderr, "ring: needs 2 nodes at least\n");
		return 2;
	}
	right = (bip_mynode + 1) % bip_numnodes;
	start = now();
	for (round = 0; last < 0 || round <= last; round++) {
		if (bip_mynode == 0 && last < 0 && (round & 63) == 0 &&
		    (access(argv[1], F_OK) == 0 || now() - start > limit))
			last = round + bip_numnodes + 1;
		memset(out, 0, sizeof(out));
		out[0] = (int)round;
		out[1] = (int)last;
		id = bip_tirecv(TAG, in, WORDS);
		if (id < 0 || bip_tsend(right, TAG, out, WORDS) < 0) {
			fprintf(stderr, "ring: node %d: %s\n", bip_mynode, bip_error_string());
			return 1;
		}
		got = bip_rwait(id);
		if (got != WORDS || in[0] != (int)round) {
			fprintf(stderr, "ring: node %d: round %ld: got %d words of round %d\n",
				bip_mynode, round, got, in[0]);
			return 1;
		}
		if (last < 0 && in[1] >= 0)
			last = in[1];
	}
	if (bip_mynode == 0)
		printf("ring: %ld rounds\n", round);
	return 0;
}
