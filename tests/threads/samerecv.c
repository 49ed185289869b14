/* SPDX-License-Identifier: MIT */
/*
 * samerecv - the manual's rule that one receive at a time may be posted on
 * a tag, broken by several threads at once: a clear error, never a race.
 *
 *   bipload -sz 2 samerecv [-t THREADS] [-r ROUNDS]
 *
 * Node 1 runs THREADS threads (default 4) that meet at a barrier before each
 * step, so that their calls overlap; node 0 sends one message per round on
 * tag TAG once node 1 says it is ready (on tag READY_TAG).  Rounds alternate
 * between two misuses:
 *
 *   post  every thread calls bip_tirecv(TAG) at once: exactly one gets a
 *         receive id; every other gets -1 and a bip_error_string() that
 *         names the tag.  The one that got it waits for the round's message.
 *   wait  one thread posts the receive; every thread then calls bip_rwait
 *         on that id at once: exactly one gets the message; every other
 *         gets -1 and an error that names the tag (or, when the receive
 *         had already completed, the id as no longer posted).  None hangs.
 *
 * Each round's message (short, or long every third round) is checked
 * word by word, and at the end nothing is left on the tag: no message was
 * lost or delivered twice.  A failure prints "FAIL: node N thread T: what"
 * and exits 1.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "args.h"

#define TAG 5
#define READY_TAG 6
#define MAX_THREADS 32
#define MAXW 1000

static int nthreads = 4, nrounds = 60;
static pthread_barrier_t barrier;
static int shared_id;
static int winners;      /* threads that got the round's receive or message */
static int bufs[MAX_THREADS][MAXW];

#define FAIL(t, ...)                                                                         \
	do {                                                                                 \
		fprintf(stderr, "FAIL: node %d thread %d: ", bip_mynode, (t));               \
		fprintf(stderr, __VA_ARGS__);                                                \
		fputc('\n', stderr);                                                         \
		_exit(1);                                                                    \
	} while (0)

static int round_len(int round)
{
	return round % 3 == 2 ? MAXW : 8;
}

static int pattern(int round, int w)
{
	return (int)((uint32_t)round * 0x9e3779b1u ^ (uint32_t)w * 0x85ebca77u);
}

static void check_msg(int t, const int *buf, int got, int round)
{
	int w;

	if (got != round_len(round))
		FAIL(t, "round %d: %d words received, expected %d", round, got, round_len(round));
	for (w = 0; w < got; w++)
		if (buf[w] != pattern(round, w))
			FAIL(t, "round %d: word %d is %#x, expected %#x", round, w,
			     (unsigned)buf[w], (unsigned)pattern(round, w));
}

/* A refusal must say which tag (or, for a wait that came too late, which id). */
static void check_refusal(int t, const char *call, int round, int id)
{
	const char *e = bip_error_string();
	char tag[32], idtext[48];

	snprintf(tag, sizeof(tag), "tag %d", TAG);
	snprintf(idtext, sizeof(idtext), "invalid receive id %d", id);
	if (!strstr(e, tag) && !(id >= 0 && strstr(e, idtext)))
		FAIL(t, "round %d: %s refused, but its error does not name tag %d: \"%s\"", round,
		     call, TAG, e);
}

static void ready(int t)
{
	int v = 1;

	if (bip_tsend(0, READY_TAG, &v, 1) != 0)
		FAIL(t, "bip_tsend to node 0: %s", bip_error_string());
}

static void sync_threads(void)
{
	pthread_barrier_wait(&barrier);
}

static void round_post(int t, int round)
{
	int id, got;

	sync_threads();
	id = bip_tirecv(TAG, bufs[t], MAXW);
	if (id >= 0)
		__atomic_fetch_add(&winners, 1, __ATOMIC_RELAXED);
	else
		check_refusal(t, "bip_tirecv", round, -1);
	sync_threads();
	if (__atomic_load_n(&winners, __ATOMIC_RELAXED) != 1)
		FAIL(t, "round %d: %d threads posted a receive on tag %d at once, expected 1",
		     round, __atomic_load_n(&winners, __ATOMIC_RELAXED), TAG);
	if (t == 0)
		ready(t);
	if (id >= 0) {
		got = bip_rwait(id);
		if (got < 0)
			FAIL(t, "round %d: bip_rwait(%d): %s", round, id, bip_error_string());
		check_msg(t, bufs[t], got, round);
	}
	sync_threads();
	if (t == 0)
		__atomic_store_n(&winners, 0, __ATOMIC_RELAXED);
}

static void round_wait(int t, int round)
{
	int got;

	if (t == 0) {
		shared_id = bip_tirecv(TAG, bufs[0], MAXW);
		if (shared_id < 0)
			FAIL(t, "round %d: bip_tirecv on tag %d: %s", round, TAG,
			     bip_error_string());
		ready(t);
	}
	sync_threads();
	got = bip_rwait(shared_id);
	if (got >= 0) {
		__atomic_fetch_add(&winners, 1, __ATOMIC_RELAXED);
		check_msg(t, bufs[0], got, round);
	} else {
		check_refusal(t, "bip_rwait", round, shared_id);
	}
	sync_threads();
	if (__atomic_load_n(&winners, __ATOMIC_RELAXED) != 1)
		FAIL(t, "round %d: %d threads got the message of receive %d, expected 1", round,
		     __atomic_load_n(&winners, __ATOMIC_RELAXED), shared_id);
	sync_threads();
	if (t == 0)
		__atomic_store_n(&winners, 0, __ATOMIC_RELAXED);
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg, round;

	for (round = 0; round < nrounds; round++) {
		if (round % 2 == 0)
			round_post(t, round);
		else
			round_wait(t, round);
	}
	return NULL;
}

static void node0(void)
{
	static int buf[MAXW];
	int round, v, w;

	for (round = 0; round < nrounds; round++) {
		if (bip_trecv(READY_TAG, &v, 1) != 1)
			FAIL(0, "round %d: waiting for node 1: %s", round, bip_error_string());
		for (w = 0; w < round_len(round); w++)
			buf[w] = pattern(round, w);
		if (bip_tsend(1, TAG, buf, round_len(round)) != 0)
			FAIL(0, "round %d: bip_tsend: %s", round, bip_error_string());
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: samerecv [-t THREADS (2 .. %d)] [-r ROUNDS (1 .. 100000)]\n",
		MAX_THREADS);
	exit(2);
}

static int arg_int(const char *s, int lo, int hi)
{
	return arg_int_in(s, lo, hi, usage);
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	int opt, i, rc;

	while ((opt = getopt(argc, argv, "t:r:")) != -1) {
		if (opt == 't')
			nthreads = arg_int(optarg, 2, MAX_THREADS);
		else if (opt == 'r')
			nrounds = arg_int(optarg, 1, 100000);
		else
			usage();
	}
	if (optind != argc)
		usage();
	bip_init();
	if (bip_numnodes != 2) {
		fprintf(stderr, "FAIL: node %d: samerecv runs on 2 nodes, not %d\n", bip_mynode,
			bip_numnodes);
		return 1;
	}
	if (bip_mynode == 0) {
		node0();
	} else {
		pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
		for (i = 0; i < nthreads; i++) {
			rc = pthread_create(&tid[i], NULL, thread_main, (void *)(intptr_t)i);
			if (rc)
				FAIL(i, "pthread_create: %s", strerror(rc));
		}
		for (i = 0; i < nthreads; i++)
			pthread_join(tid[i], NULL);
		pthread_barrier_destroy(&barrier);
		/* Every message was sent and taken: nothing may be left. */
		if (bip_tnrecv(TAG, bufs[0], MAXW) >= 0)
			FAIL(0, "a message is left on tag %d after the last round", TAG);
		printf("samerecv: node 1: %d threads, %d rounds: one receive per tag each time\n",
		       nthreads, nrounds);
	}
	return bip_finalize() == 0 ? 0 : 1;
}
