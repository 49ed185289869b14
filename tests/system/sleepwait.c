/* SPDX-License-Identifier: MIT */
/*
 * sleepwait - waiting that sleeps (BIP_WAIT=block), for tests/system/sleep.sh.
 *
 *   sleepwait WORDS
 *
 * Two nodes.  After a message of WORDS words each way (warm_up), node 0
 * sleeps 2 s without calling BIP, then sends WORDS
 * words (a short message, or a long one) on tag 1; node 1, blocked in
 * bip_trecv all that time, checks every word and answers on tag 2, which
 * node 0 waits for in bip_trecv.  Node 1 prints the processor time it used
 * while blocked (user and system, from getrusage) and the time it waited:
 *
 *   node 1: 4096 words right; blocked 2.01 s, cpu 0.002 s
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "bip.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* Node 1's side: wait, check, answer; 0 if every word is right. */
static int receive(int *buf, int words)
{
	double t0 = now_s(), c0 = cpu_s(), t1, c1;
	int got = bip_trecv(1, buf, words), wrong = 0, i;

	t1 = now_s();
	c1 = cpu_s();
	for (i = 0; i < words; i++)
		wrong += buf[i] != i * 7 + 1;
	printf("node 1: %d words %s; blocked %.2f s, cpu %.3f s\n", got,
	       got == words && !wrong ? "right" : "WRONG", t1 - t0, c1 - c0);
	bip_tsend(0, 2, &got, 1);
	return got == words && !wrong ? 0 : 3;
}

/*
 * A message of the same size each way first, unchecked: a network driver
 * may connect at a peer's first message, and a provider set up its pools
 * at the first long one, which is not what is measured.  Then a word from
 * node 1, sent once its long send has completed: over the reliability
 * layer a long send completes when the receiver acknowledges it, which
 * node 0 must not leave to its nap.
 */
static int warm_up(int *buf, int words)
{
	int one = 0;

	if (bip_mynode == 0) {
		bip_tsend(1, 3, buf, words);
		if (bip_trecv(3, buf, words) != words)
			return 3;
		return bip_trecv(4, &one, 1) == 1 ? 0 : 3;
	}
	if (bip_trecv(3, buf, words) != words)
		return 3;
	bip_tsend(0, 3, buf, words);
	bip_tsend(0, 4, &one, 1);
	return 0;
}

int main(int argc, char **argv)
{
	int words = argc > 1 ? atoi(argv[1]) : 8, i, ack = 0, rc = 0;
	int *buf = calloc(words > 0 ? (size_t)words : 1, sizeof(int));

	if (!buf || words < 1) {
		free(buf);
		return 2;
	}
	bip_init();
	if (bip_numnodes == 2)
		rc = warm_up(buf, words);
	if (bip_numnodes != 2) {
		rc = 2;
	} else if (rc) {
		/* the warm-up failed */
	} else if (bip_mynode == 0) {
		struct timespec two = { 2, 0 };

		for (i = 0; i < words; i++)
			buf[i] = i * 7 + 1;
		nanosleep(&two, NULL);
		bip_tsend(1, 1, buf, words);
		if (bip_trecv(2, &ack, 1) != 1 || ack != words)
			rc = 3;
	} else {
		rc = receive(buf, words);
	}
	free(buf);
	return rc;
}
