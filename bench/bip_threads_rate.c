/* SPDX-License-Identifier: MIT */
/*
 * bip_threads_rate.c - message rate of BIP's native calls with several
 * threads per process, each on its own tag: what the core's locking lets
 * threads do at once (bip(7), Threads).
 *
 *   bipload -sz 2 bip_threads_rate [-t THREADS] [-n MESSAGES] [-w WINDOW] [-b BATCHES]
 *
 * Thread i of node 0 sends MESSAGES 8-byte messages on tag 1 + i to node 1,
 * WINDOW at a time (bip_tsend: a short send completes at once, unless the
 * receiver's ring is full), and after
 * each window waits for node 1's one-word acknowledgement on tag 100 + i;
 * thread i of node 1 receives them with bip_trecv and acknowledges each
 * window.  A batch is the time from a barrier of all threads of both
 * nodes to the last thread's end; node 0 prints the median over BATCHES of
 * the messages per second of all threads together:
 *
 *   threads msgs_per_s
 *
 * With 1 thread it is the single-thread rate of the same path (the process
 * has a second thread, the barrier's, so the locks are taken as in the
 * others).  With -L WORDS, thread 0 instead sends long messages of WORDS
 * words on its tag, one at a time, for as long as the others run, and the
 * rate is that of the other threads' short messages: what a transfer in
 * the library's slow path costs the threads beside it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"

#define MAX_THREADS 16
#define MAX_BATCHES 51
#define ACK_TAG 100
#define SYNC_TAG 150

static int nthreads = 2, window = 64, batches = 7, long_words;
static int *long_buf;
static long messages = 200000;
static pthread_barrier_t start, stop, shorts;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bip_threads_rate: node %d: %s: %s\n", bip_mynode, what,
		bip_error_string());
	exit(1);
}

/* -L: thread 0 moves long messages while the others' short ones are timed. */
static int long_thread(int i)
{
	return long_words && i == 0;
}

static int long_stop;

static void long_sender(void)
{
	int ack;

	while (!__atomic_load_n(&long_stop, __ATOMIC_RELAXED)) {
		if (bip_tsend(1, 1, long_buf, long_words) != 0)
			die("bip_tsend of a long message");
		if (bip_trecv(ACK_TAG, &ack, 1) != 1)
			die("bip_trecv of an acknowledgement");
	}
	long_buf[0] = -1; /* the last one says so */
	if (bip_tsend(1, 1, long_buf, 1) != 0)
		die("bip_tsend of the end");
	long_buf[0] = 0;
}

static void long_receiver(void)
{
	int ack = 0;

	for (;;) {
		if (bip_trecv(1, long_buf, long_words) < 1)
			die("bip_trecv of a long message");
		if (long_buf[0] == -1)
			break;
		if (bip_tsend(0, ACK_TAG, &ack, 1) != 0)
			die("bip_tsend of an acknowledgement");
	}
	long_buf[0] = 0;
}

static void sender(int i)
{
	int msg[2] = { 0, 0 }, ack;
	long n, w;

	if (long_thread(i)) {
		long_sender();
		return;
	}
	for (n = 0; n < messages; n += window) {
		for (w = 0; w < window && n + w < messages; w++) {
			msg[0] = (int)(n + w);
			if (bip_tsend(1, 1 + i, msg, 2) != 0)
				die("bip_tsend");
		}
		if (bip_trecv(ACK_TAG + i, &ack, 1) != 1)
			die("bip_trecv of an acknowledgement");
	}
}

static void receiver(int i)
{
	int msg[2], ack = 0;
	long n;

	if (long_thread(i)) {
		long_receiver();
		return;
	}
	for (n = 0; n < messages; n++) {
		if (bip_trecv(1 + i, msg, 2) != 2 || msg[0] != (int)n)
			die("bip_trecv of a message, or out of order");
		if ((n + 1) % window == 0 || n + 1 == messages)
			if (bip_tsend(0, ACK_TAG + i, &ack, 1) != 0)
				die("bip_tsend of an acknowledgement");
	}
}

static void *worker(void *arg)
{
	int i = (int)(long)arg, b;

	for (b = 0; b < batches; b++) {
		pthread_barrier_wait(&start);
		if (bip_mynode == 0)
			sender(i);
		else
			receiver(i);
		if (long_words && !long_thread(i))
			pthread_barrier_wait(&shorts);
		pthread_barrier_wait(&stop);
	}
	return NULL;
}

/* Both nodes' main threads meet, so that a batch starts at once on both. */
static void node_sync(void)
{
	int v = 0;

	if (bip_mynode == 0) {
		if (bip_tsend(1, SYNC_TAG, &v, 1) != 0 || bip_trecv(SYNC_TAG, &v, 1) != 1)
			die("sync");
	} else {
		if (bip_trecv(SYNC_TAG, &v, 1) != 1 || bip_tsend(0, SYNC_TAG, &v, 1) != 0)
			die("sync");
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: bip_threads_rate [-t THREADS (1 .. %d)] [-n MESSAGES] "
		"[-w WINDOW (1 .. 4096)] [-b BATCHES (1 .. %d)] [-L WORDS]\n", MAX_THREADS,
		MAX_BATCHES);
	exit(2);
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	double rate[MAX_BATCHES], t0;
	int opt, i, b;

	while ((opt = getopt(argc, argv, "t:n:w:b:L:")) != -1) {
		switch (opt) {
		case 't': nthreads = atoi(optarg); break;
		case 'n': messages = atol(optarg); break;
		case 'w': window = atoi(optarg); break;
		case 'b': batches = atoi(optarg); break;
		case 'L': long_words = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc || nthreads < 1 || nthreads > MAX_THREADS || messages < 1 ||
	    window < 1 || window > 4096 || batches < 1 || batches > MAX_BATCHES ||
	    long_words < 0 || (long_words && nthreads < 2))
		usage();
	if (long_words && !(long_buf = calloc((size_t)long_words, 4)))
		die("calloc");
	bip_init();
	if (bip_numnodes != 2) {
		fprintf(stderr, "bip_threads_rate: needs 2 nodes\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&stop, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&shorts, NULL, (unsigned)nthreads);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i))
			die("pthread_create");
	for (b = 0; b < batches; b++) {
		node_sync();
		t0 = now();
		__atomic_store_n(&long_stop, 0, __ATOMIC_RELAXED);
		pthread_barrier_wait(&start);
		/* -L: the short threads' end is timed; then the long one stops */
		pthread_barrier_wait(long_words ? &shorts : &stop);
		rate[b] = (double)messages * (nthreads - !!long_words) / (now() - t0);
		__atomic_store_n(&long_stop, 1, __ATOMIC_RELAXED);
		if (long_words)
			pthread_barrier_wait(&stop);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	qsort(rate, (size_t)batches, sizeof(rate[0]), cmp);
	if (bip_mynode == 0)
		printf("%d %.0f\n", nthreads, rate[batches / 2]);
	bip_finalize();
	return 0;
}
