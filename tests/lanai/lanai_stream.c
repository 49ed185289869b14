/* SPDX-License-Identifier: MIT */
/*
 * lanai_stream - a one-way stream for the tests of the simulated wire.
 *
 *   lanai_stream short|long|tail|hang [COUNT]
 *
 * Node 0 sends COUNT messages to node 1 (short: 4 words each, sent at
 * once; long: 20000 words each, one at a time), then waits for node 1's
 * answer.  Node 1 checks every word of every message and says so; a wrong
 * word ends it with "WRONG DATA" and status 3.  Faults of the wire must end
 * the job before any wrong data is seen.  Other nodes only take part in
 * bip_init.  tail: node 0 sends COUNT (default 1) short messages to node 1,
 * which checks them, and then both wait for a message nobody sends: only a
 * fault the boards report ends the job (or its time limit), so a lost last
 * message, a lost SYNC or a lost SYNC_ACK must be reported to end it.
 * hang: every node waits for a message nobody sends (until the
 * job is stopped, or the firmware is gone and the wait fails).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"

#define LONGW 20000

static void fill(int *w, int n, int i)
{
	int k;

	for (k = 0; k < n; k++)
		w[k] = i * 1000003 + k * 7 + 1;
}

static void verify(const int *w, int n, int i, int got)
{
	int k;

	if (got != n) {
		fprintf(stderr, "node 1: WRONG DATA: message %d has %d words, not %d\n", i, got, n);
		exit(3);
	}
	for (k = 0; k < n; k++) {
		if (w[k] != i * 1000003 + k * 7 + 1) {
			fprintf(stderr, "node 1: WRONG DATA: message %d, word %d: %d\n", i, k,
				w[k]);
			exit(3);
		}
	}
}

int main(int argc, char **argv)
{
	static int buf[LONGW];
	int count, i, n, words, is_long;

	if (argc < 2 || (strcmp(argv[1], "short") && strcmp(argv[1], "long") &&
			 strcmp(argv[1], "tail") && strcmp(argv[1], "hang"))) {
		fprintf(stderr, "usage: lanai_stream short|long|tail|hang [COUNT]\n");
		return 2;
	}
	if (!strcmp(argv[1], "hang")) {
		bip_init();
		printf("node %d: waiting\n", bip_mynode);
		fflush(stdout);
		n = bip_trecv(7, buf, 1);
		fprintf(stderr, "node %d: the wait ended: %d: %s\n", bip_mynode, n,
			bip_error_string());
		return 4;
	}
	is_long = !strcmp(argv[1], "long");
	words = is_long ? LONGW : 4;
	count = argc > 2 ? atoi(argv[2]) : (is_long ? 20 : !strcmp(argv[1], "tail") ? 1 : 200);
	bip_init();
	if (!strcmp(argv[1], "tail")) {
		if (bip_mynode == 0) {
			for (i = 0; i < count; i++) {
				fill(buf, words, i);
				if (bip_tsend(1, 5, buf, words) < 0)
					return 1;
			}
			printf("node 0: %d messages sent\n", count);
		} else if (bip_mynode == 1) {
			for (i = 0; i < count; i++) {
				memset(buf, 0, sizeof(int) * (size_t)words);
				n = bip_trecv(5, buf, words);
				verify(buf, words, i, n);
			}
			printf("node 1: %d messages, every word right\n", count);
		}
		fflush(stdout);
		n = bip_trecv(7, buf, 1);
		fprintf(stderr, "node %d: the wait ended: %d: %s\n", bip_mynode, n,
			bip_error_string());
		return 4;
	}
	if (bip_mynode == 0) {
		for (i = 0; i < count; i++) {
			fill(buf, words, i);
			if (bip_tsend(1, 5, buf, words) < 0)
				return 1;
		}
		if (bip_trecv(6, buf, 1) != 1 || buf[0] != count)
			return 1;
		printf("node 0: node 1 received %d messages\n", count);
	} else if (bip_mynode == 1) {
		for (i = 0; i < count; i++) {
			memset(buf, 0, sizeof(int) * (size_t)words);
			n = bip_trecv(5, buf, words);
			verify(buf, words, i, n);
		}
		printf("node 1: %d messages, every word right\n", count);
		buf[0] = count;
		bip_tsend(0, 6, buf, 1);
	}
	bip_finalize();
	return 0;
}
