/* SPDX-License-Identifier: MIT */
/*
 * railcheck - a large transfer over several rails, checked word by word,
 * for the tests of paths that fail and come back.
 *
 *   railcheck [MIB [ROUNDS]]
 *
 * Node 0 sends node 1 ROUNDS messages of MIB MiB (default 64 MiB, 4
 * rounds), each a pattern of its round; node 1 checks every word and ends
 * with status 3 at the first wrong one.  Then the two exchange small
 * messages until each has seen a path fail back (a failed path used
 * again: the failbacks counter) and has every path in use again, for at
 * most 60 s (status 4 if not), so
 * that a test that takes a link down and brings it back sees both ends of
 * it whatever the speed of the machine.  Without a link taken down, pass
 * "-" as ROUNDS' successor (railcheck 64 4 -) to skip that wait.  Each node
 * prints its counters on one line:
 *
 *   node 1: 4 x 64 MiB: every word right; retransmits 3 rebinds 120
 *   failbacks 1 path 0: sent 2100 retired 0 restored 0 path 1: ...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bip.h"

static uint32_t word_of(long round, long k)
{
	uint64_t x = (uint64_t)round * 0x9e3779b97f4a7c15ull ^ (uint64_t)k * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 29;
	return (uint32_t)x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Ping-pong until both nodes have seen a fail-back and every path retired
 * is back in use: 0, or 4 after 60 s. */
static int until_failback(int me)
{
	double deadline = now_s() + 60.0;
	int msg[2], both = 0, p;
	long round;

	for (round = 0; !both; round++) {
		struct bip_counters c;
		int mine;

		bip_get_counters(&c);
		mine = c.failbacks > 0;
		for (p = 0; p < BIP_COUNTER_PATHS; p++)
			mine &= c.path[p].restored == c.path[p].retired;
		if (me == 0) {
			msg[0] = (int)round;
			msg[1] = mine;
			bip_send(1, msg, 2);
			bip_recv(msg, 2);
			both = msg[1];
		} else {
			bip_recv(msg, 2);
			both = msg[1] && mine;
			msg[1] = both;
			bip_send(0, msg, 2);
		}
		if (!both && now_s() > deadline) {
			fprintf(stderr, "node %d: no path failed back within 60 s (this node: %s)\n",
				me, mine ? "yes" : "no");
			return 4;
		}
		if (!both) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 64, rounds = argc > 2 ? atol(argv[2]) : 4, r, k;
	int wait_failback = !(argc > 3 && !strcmp(argv[3], "-")), me, rc = 0, p;
	long words;
	uint32_t *buf;
	struct bip_counters c;

	if (mib < 1 || mib > 1024 || rounds < 1 || argc > 4) {
		fprintf(stderr, "usage: railcheck [MIB [ROUNDS [-]]]\n");
		return 2;
	}
	words = mib << 18;
	buf = malloc((size_t)words * 4);
	if (!buf) {
		fprintf(stderr, "railcheck: no memory for %ld MiB\n", mib);
		return 1;
	}
	bip_init();
	me = bip_mynode;
	if (bip_numnodes != 2) {
		fprintf(stderr, "railcheck: needs two nodes\n");
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		if (me == 0) {
			for (k = 0; k < words; k++)
				buf[k] = word_of(r, k);
			bip_send(1, (int *)buf, (int)words);
		} else {
			int got = bip_recv((int *)buf, (int)words);

			if (got != words) {
				fprintf(stderr, "node 1: WRONG length: round %ld: %d words, "
					"expected %ld\n", r, got, words);
				return 3;
			}
			for (k = 0; k < words; k++)
				if (buf[k] != word_of(r, k)) {
					fprintf(stderr, "node 1: WRONG word %ld of round %ld: 0x%08x, "
						"expected 0x%08x\n", k, r, buf[k], word_of(r, k));
					return 3;
				}
		}
	}
	if (wait_failback)
		rc = until_failback(me);
	bip_get_counters(&c);
	printf("node %d: %ld x %ld MiB: every word right; retransmits %llu timeouts %llu "
	       "rebinds %llu failbacks %llu",
	       me, rounds, mib, (unsigned long long)c.retransmits,
	       (unsigned long long)c.timeouts, (unsigned long long)c.rebinds,
	       (unsigned long long)c.failbacks);
	for (p = 0; p < BIP_COUNTER_PATHS; p++)
		if (c.path[p].sent)
			printf(" path %d: sent %llu retired %llu restored %llu", p,
			       (unsigned long long)c.path[p].sent,
			       (unsigned long long)c.path[p].retired,
			       (unsigned long long)c.path[p].restored);
	printf("\n");
	fflush(stdout);
	bip_finalize();
	free(buf);
	return rc;
}
