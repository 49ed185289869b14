/* SPDX-License-Identifier: MIT */
/*
 * sleepwait - waiting that sleeps, for tests/system/sleep.sh and
 * tests/system/sleepmore.sh.
 *
 *   sleepwait [-t|-s] WORDS
 *
 * Two nodes or more.  After a message of WORDS words each way between node
 * 0 and each other node (warm_up), node 0 sleeps 2 s without calling BIP,
 * then sends WORDS words (a short message, or a long one) on tag 1 to each
 * other node; each of them, blocked in bip_trecv all that time, checks
 * every word and answers on tag 2, which node 0 waits for in bip_trecv.
 * Each prints the processor time its process used while blocked (user and
 * system of all its threads, from getrusage) and the time it waited:
 *
 *   node 1: 4096 words right; blocked 2.01 s, cpu 0.002 s
 *
 * With -t (two nodes): node 1 waits in two threads at once, one on tag 1
 * and one on tag 5; node 0 sends on tag 5 first, then on tag 1, and waits
 * for both answers (tags 2 and 6).  Node 1 prints one line as above once
 * both threads are done, "right" only if both got every word.
 *
 * With -s (stall): node 0 posts its send with bip_tisend, lets it go on
 * for five polls 20 ms apart (a long message then stands halfway, its
 * pipe full or its claim unanswered), sleeps 2 s more without calling
 * BIP, then waits for the send: the receivers, whose transfer waits for
 * the sender all that time, must sleep too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One waiter: receive on tag, check every word, answer on tag + 1. */
struct waiter {
	int tag;
	int words;
	int *buf;
	int got;
	int wrong;
};

static void *wait_one(void *arg)
{
	struct waiter *w = arg;
	int i;

	w->got = bip_trecv(w->tag, w->buf, w->words);
	for (i = 0; i < w->words; i++)
		w->wrong += w->buf[i] != i * 7 + w->tag;
	bip_tsend(0, w->tag + 1, &w->got, 1);
	return NULL;
}

static int report(int got, int words, int wrong, double t0, double c0)
{
	double t1 = now_s(), c1 = cpu_s();
	int right = got == words && !wrong;

	printf("node %d: %d words %s; blocked %.2f s, cpu %.3f s\n", bip_mynode, got,
	       right ? "right" : "WRONG", t1 - t0, c1 - c0);
	return right ? 0 : 3;
}

/* A receiving node's side: wait, check, answer; 0 if every word is right. */
static int receive(int words, int threads)
{
	struct waiter w[2] = { { .tag = 1, .words = words }, { .tag = 5, .words = words } };
	double t0 = now_s(), c0 = cpu_s();
	pthread_t th;
	int rc;

	w[0].buf = calloc((size_t)words, sizeof(int));
	w[1].buf = calloc((size_t)words, sizeof(int));
	if (!w[0].buf || !w[1].buf) {
		rc = 2;
	} else if (!threads) {
		wait_one(&w[0]);
		rc = report(w[0].got, words, w[0].wrong, t0, c0);
	} else if (pthread_create(&th, NULL, wait_one, &w[1])) {
		fprintf(stderr, "sleepwait: pthread_create failed\n");
		rc = 2;
	} else {
		wait_one(&w[0]);
		pthread_join(th, NULL);
		rc = report(w[0].got == words ? w[1].got : w[0].got, words,
			    w[0].wrong + w[1].wrong, t0, c0);
	}
	free(w[0].buf);
	free(w[1].buf);
	return rc;
}

/*
 * A message of the same size each way first, unchecked: a network driver
 * may connect at a peer's first message, and a provider set up its pools
 * at the first long one, which is not what is measured.  Then a word from
 * the peer, sent once its long send has completed: over the reliability
 * layer a long send completes when the receiver acknowledges it, which
 * node 0 must not leave to its nap.
 */
static int warm_up(int *buf, int words)
{
	int one = 0, k;

	if (bip_mynode == 0) {
		for (k = 1; k < bip_numnodes; k++) {
			bip_tsend(k, 3, buf, words);
			if (bip_trecv(3, buf, words) != words)
				return 3;
			if (bip_trecv(4, &one, 1) != 1)
				return 3;
		}
		return 0;
	}
	if (bip_trecv(3, buf, words) != words)
		return 3;
	bip_tsend(0, 3, buf, words);
	bip_tsend(0, 4, &one, 1);
	return 0;
}

/* Node 0: nap 2 s, send to every other node (tag 5 then 1 with -t; with
 * -s, stalled halfway), and take their answers. */
static int send_all(int *buf, int words, int threads, int stall)
{
	struct timespec two = { 2, 0 };
	int ack, k, i, rc = 0;

	nanosleep(&two, NULL);
	for (k = 1; k < bip_numnodes; k++) {
		if (stall) {
			struct timespec nap = { 0, 20000000 };
			int id;

			for (i = 0; i < words; i++)
				buf[i] = i * 7 + 1;
			id = bip_tisend(k, 1, buf, words);
			for (i = 0; i < 5; i++) {
				bip_stest(id);
				nanosleep(&nap, NULL);
			}
			nanosleep(&two, NULL);
			bip_swait(id);
			continue;
		}
		if (threads) {
			for (i = 0; i < words; i++)
				buf[i] = i * 7 + 5;
			bip_tsend(k, 5, buf, words);
		}
		for (i = 0; i < words; i++)
			buf[i] = i * 7 + 1;
		bip_tsend(k, 1, buf, words);
	}
	for (k = 1; k < bip_numnodes; k++) {
		ack = 0;
		if (bip_trecv(2, &ack, 1) != 1 || ack != words)
			rc = 3;
		ack = 0;
		if (threads && (bip_trecv(6, &ack, 1) != 1 || ack != words))
			rc = 3;
	}
	return rc;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 && !strcmp(argv[1], "-t");
	int stall = argc > 1 && !strcmp(argv[1], "-s");
	int words = argc > 1 + threads + stall ? atoi(argv[1 + threads + stall]) : 8, rc = 0;
	int *buf = calloc(words > 0 ? (size_t)words : 1, sizeof(int));

	if (!buf || words < 1) {
		free(buf);
		return 2;
	}
	bip_init();
	if (bip_numnodes < 2 || (threads && bip_numnodes != 2))
		rc = 2;
	else
		rc = warm_up(buf, words);
	if (rc)
		; /* the warm-up failed, or the wrong number of nodes */
	else if (bip_mynode == 0)
		rc = send_all(buf, words, threads, stall);
	else
		rc = receive(words, threads);
	free(buf);
	return rc;
}
