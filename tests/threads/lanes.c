/* SPDX-License-Identifier: MIT */
/*
 * lanes - a thread sends and receives while another holds the library's
 * lock: the fast lanes of the core's locking (bip(7), Threads).
 *
 *   bipload -sz 2 lanes [-r ROUNDS]
 *
 * Each round, node 1 sends node 0 one short message on tag IN_TAG.  Node 0
 * waits until bip_tprobe sees it queued, and then its main thread takes the
 * lock that every BIP call takes on its slow path (bip_layer_lock) and
 * holds it while a second thread:
 *
 *   - sends a short message to node 1 on tag OUT_TAG (bip_tsend): over
 *     shm it goes by the send lane, under node 1's send lock only;
 *   - receives the queued message with bip_tnrecv, and another queued
 *     on GET_TAG with bip_tngetmsg and bip_tfreemsg (the receive lane,
 *     under the tag's lock only).
 *
 * The main thread lets go of the lock only after the second thread says it
 * is done, or after 60 s: then the lanes waited for the lock, and the test
 * fails saying so (a failure, never a time that decides a pass).  Every
 * message's word is checked, node 1 receives each round's reply, and the
 * counters show every message.  Needs a NIC whose posts to different peers
 * may run at once (shm); meson runs it there.  The first send lane of a
 * process takes the lock once (bip(7)), so node 0 sends before the rounds:
 * two threads at once, released together, so that both may find the lanes
 * unused (round 0; a data race there is what ThreadSanitizer's build of
 * this test looks for).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bip.h"

#define IN_TAG 7
#define GET_TAG 8
#define OUT_TAG 3
#define FIRST_TAG 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, done, stop;
static const char *failed;
static int round_no;

static void fail(const char *what)
{
	printf("FAIL: node %d round %d: %s: %s\n", bip_mynode, round_no, what,
	       bip_error_string());
	fflush(stdout);
	_exit(1);
}

/* The second thread of node 0: one round's calls, each on a lane. */
static void lane_calls(void)
{
	int v = 1000 + round_no, got = 0, len = 0, node = -1, *msg;

	if (bip_tsend(1, OUT_TAG, &v, 1) != 0) {
		failed = "bip_tsend on the send lane";
		return;
	}
	if (bip_tnrecv(IN_TAG, &got, 1) != 1 || got != round_no) {
		failed = "bip_tnrecv of the queued message";
		return;
	}
	msg = bip_tngetmsg(GET_TAG, &len, &node);
	if (!msg || len != 1 || node != 1 || *msg != -round_no) {
		failed = "bip_tngetmsg of the queued message";
		return;
	}
	bip_tfreemsg(GET_TAG);
}

static void *second(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!go && !stop)
			pthread_cond_wait(&cv, &mu);
		if (stop)
			break;
		go = 0;
		pthread_mutex_unlock(&mu);
		lane_calls();
		pthread_mutex_lock(&mu);
		done = 1;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void wait_queued(int tag)
{
	while (bip_tprobe(tag) != 1)
		sched_yield();
}

static void node0_round(void)
{
	struct timespec until;
	int rc = 0, locked;

	wait_queued(IN_TAG);
	wait_queued(GET_TAG);
	locked = bip_layer_lock();
	if (!locked)
		fail("bip_layer_lock with two threads did not take the lock");
	pthread_mutex_lock(&mu);
	go = 1;
	done = 0;
	pthread_cond_broadcast(&cv);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	while (!done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&cv, &mu, &until);
	pthread_mutex_unlock(&mu);
	if (!done) {
		printf("FAIL: node 0 round %d: the second thread's sends and receives waited "
		       "for the library's lock (no fast lane)\n", round_no);
		fflush(stdout);
		_exit(1);
	}
	bip_layer_unlock(locked);
	if (failed)
		fail(failed);
}

static void node1_round(void)
{
	int v = round_no, w = -round_no, got = 0;

	if (bip_tsend(0, IN_TAG, &v, 1) != 0 || bip_tsend(0, GET_TAG, &w, 1) != 0)
		fail("bip_tsend");
	if (bip_trecv(OUT_TAG, &got, 1) != 1 || got != 1000 + round_no)
		fail("bip_trecv of the reply");
}

static pthread_barrier_t both;

/* Round 0's other sender: its first message, at the main thread's. */
static void *first_send(void *arg)
{
	static int v = -1;

	(void)arg;
	pthread_barrier_wait(&both);
	if (bip_tsend(1, FIRST_TAG, &v, 1) != 0)
		failed = "bip_tsend of round 0 from the second thread";
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: lanes [-r ROUNDS (1 .. 100000)]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct bip_counters c;
	int rounds = 200, opt;
	pthread_t th, th0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r')
			usage();
		rounds = arg_int_in(optarg, 1, 100000, usage);
	}
	if (optind != argc)
		usage();
	bip_init();
	if (bip_numnodes != 2) {
		fprintf(stderr, "lanes: needs 2 nodes\n");
		return 2;
	}
	if (bip_mynode == 0 && pthread_create(&th, NULL, second, NULL))
		fail("pthread_create");
	/* The first send lane of a process takes the lock once, to say that
	 * the lanes are in use (bip(7)): node 0's two threads send first, at
	 * once. */
	round_no = 0;
	if (bip_mynode == 0) {
		if (pthread_barrier_init(&both, NULL, 2) ||
		    pthread_create(&th0, NULL, first_send, NULL))
			fail("pthread_create");
		pthread_barrier_wait(&both);
		if (bip_tsend(1, OUT_TAG, &round_no, 1) != 0)
			fail("bip_tsend of round 0");
		pthread_join(th0, NULL);
		pthread_barrier_destroy(&both);
		if (failed)
			fail(failed);
	}
	if (bip_mynode == 1 && (bip_trecv(OUT_TAG, &opt, 1) != 1 || opt != 0 ||
				bip_trecv(FIRST_TAG, &opt, 1) != 1 || opt != -1))
		fail("bip_trecv of round 0");
	for (round_no = 1; round_no <= rounds; round_no++) {
		if (bip_mynode == 0)
			node0_round();
		else
			node1_round();
	}
	if (bip_mynode == 0) {
		pthread_mutex_lock(&mu);
		stop = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		pthread_join(th, NULL);
	}
	bip_get_counters(&c);
	if (c.short_sent != (uint64_t)rounds * (bip_mynode == 0 ? 1 : 2) + 2 * (bip_mynode == 0) ||
	    c.short_received != (uint64_t)rounds * (bip_mynode == 0 ? 2 : 1) + 2 * (bip_mynode == 1) ||
	    c.errors)
		fail("the counters");
	if (bip_finalize() != 0)
		fail("bip_finalize");
	return 0;
}
